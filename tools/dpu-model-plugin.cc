// SPDX-License-Identifier: MIT
/*
 * dpu-model-plugin.cc - the GCC plugin dpusim-cc loads to count a DPU
 * program's instructions (issue 33, the modeled hardware time).
 *
 * Every basic block of the program gets, at its start, an add of its
 * estimated DPU instruction count to the global counter
 * __dpusim_icount; the runtime (lib/dpurt/perfcounter.c) takes the count
 * at each DMA, wait and counter read and feeds the pipeline model.  The
 * costs are lib/dpurt/model_table.h's: a DPU has 32-bit registers and
 * pointers, native 32- and 64-bit add and subtract, and no multiplier,
 * divider or floating point (those run as software sequences).
 *
 * The pass runs on the optimized GIMPLE, just before it becomes RTL, so
 * that it counts the code the optimizer kept (unrolled, hoisted).
 * dpusim-cc compiles with -fno-tree-vectorize when it loads the plugin:
 * the DPU has no vector unit, so the count is of scalar code.
 *
 * The host is LP64 and the DPU ILP32: a 64-bit value counts as 64-bit only
 * when it is one on the DPU too, i.e. when it comes from an int64_t-like
 * or long long variable, memory or function (value_wide()); pointers,
 * size_t, long and the compiler's own induction variables are 32-bit
 * there.
 *
 * The DPU compiler (clang) honours `#pragma unroll [N]` before a loop,
 * which PrIM and other DPU programs put on their inner loops; GCC knows
 * only `#pragma GCC unroll N`.  So that the count is of the unrolled code
 * the DPU runs (no induction variable, no compare and branch per
 * iteration), the plugin takes the pragma and marks the loop that follows
 * it as GCC's own pragma would (unroll_pass).  A whole unroll (no factor,
 * or one at least the trip count) happens in GIMPLE, before the count; a
 * partial one only in RTL, after it, so such a loop counts as written.
 */
#include "gcc-plugin.h"
#include "plugin-version.h"
#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "stringpool.h"
#include "ssa.h"
#include "varasm.h"
#include "cgraph.h"
#include "attribs.h"
#include "tree-into-ssa.h"
#include "gimplify.h"
#include "cfgloop.h"
#include "tree-cfg.h"
#include "c-family/c-pragma.h"

#include "../lib/dpurt/model_table.h"

int plugin_is_GPL_compatible;


/* Does @type say it is 64-bit on the DPU: long long, or an int64_t-like
 * typedef (see the head of the file)? */
static bool type_wide(tree type)
{
	tree mv, name;

	if (!INTEGRAL_TYPE_P(type) || TYPE_PRECISION(type) <= 32)
		return false;
	if (TYPE_PRECISION(type) > 64)
		return true;
	mv = TYPE_MAIN_VARIANT(type);
	if (mv == long_long_integer_type_node || mv == long_long_unsigned_type_node)
		return true;
	for (name = TYPE_NAME(type); name && TREE_CODE(name) == TYPE_DECL;
	     name = TYPE_NAME(DECL_ORIGINAL_TYPE(name))) {
		const char *s = IDENTIFIER_POINTER(DECL_NAME(name));

		if (strstr(s, "int64") || strstr(s, "int_fast64") || strstr(s, "int_least64") ||
		    !strcmp(s, "intmax_t") || !strcmp(s, "uintmax_t"))
			return true;
		if (!DECL_ORIGINAL_TYPE(name))
			break;
	}
	return false;
}

/* A memory reference of a 64-bit DPU integer (its type, or the pointer it
 * was read through, says so)? */
static bool mem_wide(tree ref)
{
	if (type_wide(TREE_TYPE(ref)))
		return true;
	if (TREE_CODE(ref) == MEM_REF || TREE_CODE(ref) == TARGET_MEM_REF) {
		tree ptr = TREE_TYPE(TREE_OPERAND(ref, 1));

		return POINTER_TYPE_P(ptr) && type_wide(TREE_TYPE(ptr));
	}
	if (TREE_CODE(ref) == COMPONENT_REF)
		return type_wide(TREE_TYPE(TREE_OPERAND(ref, 1)));
	if (TREE_CODE(ref) == ARRAY_REF)
		return mem_wide(TREE_OPERAND(ref, 0)) ||
		       type_wide(TREE_TYPE(TREE_TYPE(TREE_OPERAND(ref, 0))));
	return false;
}

/*
 * Is the value @v a 64-bit integer on the DPU?  The optimized code's types
 * no longer say (int64_t and size_t are both long there), so follow where
 * the value came from: a variable's declared type, the memory it was read
 * from, the operands it was computed from.  The compiler's own induction
 * variables and offsets come from pointers and 32-bit values: 32-bit.
 */
static bool value_wide(tree v, int depth)
{
	tree type = TREE_TYPE(v);
	gimple *def;

	if (!INTEGRAL_TYPE_P(type) || TYPE_PRECISION(type) <= 32)
		return false;
	if (type_wide(type))
		return true;
	if (TREE_CODE(v) != SSA_NAME)
		return DECL_P(v) || REFERENCE_CLASS_P(v) ? mem_wide(v) : false;
	if (SSA_NAME_VAR(v) && !DECL_ARTIFICIAL(SSA_NAME_VAR(v)))
		return type_wide(TREE_TYPE(SSA_NAME_VAR(v)));
	if (depth > 6 || SSA_NAME_IS_DEFAULT_DEF(v))
		return false;
	def = SSA_NAME_DEF_STMT(v);
	if (gimple_code(def) == GIMPLE_PHI) {
		for (unsigned int k = 0; k < gimple_phi_num_args(def); k++)
			if (value_wide(gimple_phi_arg_def(def, k), depth + 1))
				return true;
		return false;
	}
	if (is_gimple_call(def))
		return gimple_call_fndecl(def) &&
		       type_wide(TREE_TYPE(TREE_TYPE(gimple_call_fndecl(def))));
	if (!is_gimple_assign(def))
		return false;
	if (gimple_assign_load_p(def))
		return mem_wide(gimple_assign_rhs1(def));
	if (CONVERT_EXPR_CODE_P(gimple_assign_rhs_code(def)))
		return false;	/* a widening whose type does not say 64-bit */
	for (unsigned int k = 1; k < gimple_num_ops(def); k++) {
		tree op = gimple_op(def, k);

		if (op && TREE_CODE(op) == SSA_NAME && value_wide(op, depth + 1))
			return true;
	}
	return false;
}

static bool dpu_wide(tree v)
{
	return value_wide(v, 0);
}

/*
 * The bits an integer operand really has: its type's, or those of the
 * type it was widened from (C multiplies two uint8_t as int).
 */
static unsigned int narrow_bits(tree op)
{
	unsigned int bits = TYPE_PRECISION(TREE_TYPE(op));

	if (TREE_CODE(op) == SSA_NAME && !SSA_NAME_IS_DEFAULT_DEF(op)) {
		gimple *def = SSA_NAME_DEF_STMT(op);

		if (is_gimple_assign(def) && CONVERT_EXPR_CODE_P(gimple_assign_rhs_code(def))) {
			tree from = TREE_TYPE(gimple_assign_rhs1(def));

			if (INTEGRAL_TYPE_P(from) && TYPE_PRECISION(from) < bits)
				bits = TYPE_PRECISION(from);
		}
	}
	return bits;
}

/* the cost of an operation whose result (or operand) is @v */
static unsigned int arith(tree v, unsigned int op32, unsigned int op64, unsigned int f32,
			  unsigned int f64)
{
	tree type = TREE_TYPE(v);

	if (FLOAT_TYPE_P(type))
		return TYPE_PRECISION(type) > 32 ? f64 : f32;
	return dpu_wide(v) ? op64 : op32;
}

/*
 * A 32-bit multiply of two variables: the DPU's mul_step loop runs once per
 * significant bit of the smaller operand, which only the running program
 * knows, so the plugin counts those steps at run time (add_mul_steps()).
 */
static bool dynamic_mul(gimple *g)
{
	tree lhs = gimple_assign_lhs(g);

	return gimple_assign_rhs_code(g) == MULT_EXPR && INTEGRAL_TYPE_P(TREE_TYPE(lhs)) &&
	       TYPE_PRECISION(TREE_TYPE(lhs)) <= 32 && !dpu_wide(lhs) &&
	       TREE_CODE(gimple_assign_rhs1(g)) == SSA_NAME &&
	       TREE_CODE(gimple_assign_rhs2(g)) == SSA_NAME &&
	       narrow_bits(gimple_assign_rhs1(g)) > 16 && narrow_bits(gimple_assign_rhs2(g)) > 16;
}

static unsigned int assign_cost(gimple *g)
{
	tree lhs = gimple_assign_lhs(g);
	tree type = TREE_TYPE(lhs);
	tree rhs1 = gimple_assign_rhs1(g);
	enum tree_code code = gimple_assign_rhs_code(g);
	unsigned int mem = (gimple_assign_load_p(g) ? DPU_COST_OP32 : 0) +
			   (gimple_store_p(g) ? DPU_COST_OP32 : 0);

	switch (code) {
	case MULT_EXPR:
	case WIDEN_MULT_EXPR:
	case MULT_HIGHPART_EXPR:
		if (!FLOAT_TYPE_P(type) && TREE_CODE(gimple_assign_rhs2(g)) == INTEGER_CST)
			/* by a constant: shifts, and adds for each further bit */
			return mem + arith(lhs, DPU_COST_OP32, DPU_COST_OP64, 0, 0) *
				     (integer_pow2p(gimple_assign_rhs2(g)) ? 1 : 3);
		if (!FLOAT_TYPE_P(type)) {
			unsigned int w = narrow_bits(rhs1);
			unsigned int w2 = narrow_bits(gimple_assign_rhs2(g));

			if (w2 > w)
				w = w2;
			if (w <= 8)
				return mem + DPU_COST_MUL8;
			if (w <= 16)
				return mem + DPU_COST_MUL16;
			if (dynamic_mul(g))
				/* and a step per bit, counted as it runs */
				return mem + DPU_COST_MUL32_BASE;
		}
		return mem + arith(lhs, DPU_COST_MUL32, DPU_COST_MUL64, DPU_COST_FMUL32,
				   DPU_COST_FMUL64);
	case TRUNC_DIV_EXPR:
	case TRUNC_MOD_EXPR:
	case CEIL_DIV_EXPR:
	case CEIL_MOD_EXPR:
	case FLOOR_DIV_EXPR:
	case FLOOR_MOD_EXPR:
	case ROUND_DIV_EXPR:
	case ROUND_MOD_EXPR:
	case EXACT_DIV_EXPR:
		if (!FLOAT_TYPE_P(type) && integer_pow2p(gimple_assign_rhs2(g)))
			/* by a power of two: a shift, and the sign's correction */
			return mem + 2 * arith(lhs, DPU_COST_OP32, DPU_COST_OP64, 0, 0);
		/* fall through */
	case RDIV_EXPR:
		return mem + arith(lhs, DPU_COST_DIV32, DPU_COST_DIV64, DPU_COST_FDIV32,
				   DPU_COST_FDIV64);
	case LSHIFT_EXPR:
	case RSHIFT_EXPR:
	case LROTATE_EXPR:
	case RROTATE_EXPR:
		if (dpu_wide(lhs) && TREE_CODE(gimple_assign_rhs2(g)) != INTEGER_CST)
			return mem + DPU_COST_SHIFT64;
		return mem + arith(lhs, DPU_COST_OP32, DPU_COST_OP64, 0, 0);
	case FLOAT_EXPR:	/* integer to floating point */
		return mem + arith(lhs, 0, 0, DPU_COST_FADD32, DPU_COST_FADD64);
	case FIX_TRUNC_EXPR:	/* floating point to integer */
		return mem + arith(rhs1, 0, 0, DPU_COST_FADD32, DPU_COST_FADD64);
	case LT_EXPR:
	case LE_EXPR:
	case GT_EXPR:
	case GE_EXPR:
	case EQ_EXPR:
	case NE_EXPR:
	case UNORDERED_EXPR:
	case ORDERED_EXPR:
	case UNLT_EXPR:
	case UNLE_EXPR:
	case UNGT_EXPR:
	case UNGE_EXPR:
	case UNEQ_EXPR:
	case LTGT_EXPR:
		return mem + arith(rhs1, DPU_COST_OP32, DPU_COST_OP64,
				   DPU_COST_FADD32, DPU_COST_FADD64);
	case SSA_NAME:
	case VAR_DECL:
	case PARM_DECL:
	case INTEGER_CST:
	case REAL_CST:
	case ADDR_EXPR:
	case MEM_REF:
	case ARRAY_REF:
	case COMPONENT_REF:
	case BIT_FIELD_REF:
		/* a copy: free in registers, else the load or store */
		return mem;
	CASE_CONVERT:
		if (FLOAT_TYPE_P(type) || FLOAT_TYPE_P(TREE_TYPE(rhs1)))
			return mem + DPU_COST_FADD64;
		/* widening to a DPU 64-bit integer sets the high word */
		if (dpu_wide(lhs) && !dpu_wide(rhs1))
			return mem + DPU_COST_OP32;
		return mem;
	default:
		return mem + arith(lhs, DPU_COST_OP32, DPU_COST_OP64, DPU_COST_FADD32,
				   DPU_COST_FADD64);
	}
}

/*
 * The calls into the runtime that read the modeled time (a DMA, a lock, a
 * barrier, a handshake, a semaphore, the counter): the statements after
 * one in its basic block are counted after it, not at the block's start,
 * so that a lock's hold has the instructions written inside it and a
 * barrier is reached with those before it only.  Some the runtime counts
 * itself: mutex_lock and mutex_unlock are one inline instruction on the
 * DPU, not a call (DPU_COST_MUTEX).
 */
struct runtime_call {
	const char *name;
	bool counted;	/* by the runtime: the call costs nothing here */
};

static const struct runtime_call *runtime_call(gimple *g)
{
	static const struct runtime_call calls[] = {
		{ "__dpurt_key_lock", true }, { "__dpurt_key_unlock", true },
		{ "__dpurt_key_trylock", true }, { "mram_read", false },
		{ "mram_write", false }, { "barrier_wait", false },
		{ "handshake_notify", false }, { "handshake_wait_for", false },
		{ "sem_take", false }, { "sem_give", false }, { "seqread_get", false },
		{ "seqread_seek", false }, { "seqread_init", false },
		{ "perfcounter_get", false }, { "perfcounter_config", false },
	};
	tree fn;
	const char *name;

	if (!is_gimple_call(g) || gimple_call_internal_p(g))
		return NULL;
	fn = gimple_call_fndecl(g);
	if (!fn || !DECL_NAME(fn))
		return NULL;
	name = IDENTIFIER_POINTER(DECL_NAME(fn));
	for (const struct runtime_call &c : calls)
		if (!strcmp(name, c.name))
			return &c;
	return NULL;
}

static unsigned int cost_of(gimple *g)
{
	switch (gimple_code(g)) {
	case GIMPLE_ASSIGN:
		return assign_cost(g);
	case GIMPLE_COND: {
		tree l = gimple_cond_lhs(g), r = gimple_cond_rhs(g);

		/* compare-and-jump is one DPU instruction for 32-bit operands */
		if (FLOAT_TYPE_P(TREE_TYPE(l)))
			return arith(l, 0, 0, DPU_COST_FADD32, DPU_COST_FADD64);
		return dpu_wide(l) || dpu_wide(r) ? DPU_COST_OP64 : DPU_COST_BRANCH;
	}
	case GIMPLE_SWITCH:
		return 2 * DPU_COST_BRANCH;
	case GIMPLE_CALL: {
		const struct runtime_call *rc = runtime_call(g);

		if (gimple_call_internal_p(g))
			return DPU_COST_OP32;
		return rc && rc->counted ? 0 : DPU_COST_CALL;
	}
	case GIMPLE_RETURN:
	case GIMPLE_GOTO:
		return DPU_COST_BRANCH;
	case GIMPLE_ASM:
		return DPU_COST_OP32;
	default:
		return 0;
	}
}

static tree counter;

static void add_to_counter(gimple_stmt_iterator *gsi, tree n)
{
	tree old = make_ssa_name(long_long_unsigned_type_node);
	tree sum = make_ssa_name(long_long_unsigned_type_node);

	gsi_insert_before(gsi, gimple_build_assign(old, counter), GSI_SAME_STMT);
	gsi_insert_before(gsi, gimple_build_assign(sum, PLUS_EXPR, old, n), GSI_SAME_STMT);
	gsi_insert_before(gsi, gimple_build_assign(unshare_expr(counter), sum), GSI_SAME_STMT);
}

/* Before the multiply at @gsi: counter += 32 - clz(min(a, b) | 1). */
static void add_mul_steps(gimple_stmt_iterator *gsi)
{
	gimple *g = gsi_stmt(*gsi);
	tree ut = unsigned_type_node, it = integer_type_node;
	tree a = make_ssa_name(ut), b = make_ssa_name(ut), m = make_ssa_name(ut);
	tree m1 = make_ssa_name(ut), z = make_ssa_name(it), bits = make_ssa_name(it);
	tree n = make_ssa_name(long_long_unsigned_type_node);
	gcall *clz = gimple_build_call(builtin_decl_explicit(BUILT_IN_CLZ), 1, m1);

	gimple_call_set_lhs(clz, z);
	gsi_insert_before(gsi, gimple_build_assign(a, NOP_EXPR, gimple_assign_rhs1(g)),
			  GSI_SAME_STMT);
	gsi_insert_before(gsi, gimple_build_assign(b, NOP_EXPR, gimple_assign_rhs2(g)),
			  GSI_SAME_STMT);
	gsi_insert_before(gsi, gimple_build_assign(m, MIN_EXPR, a, b), GSI_SAME_STMT);
	gsi_insert_before(gsi, gimple_build_assign(m1, BIT_IOR_EXPR, m, build_int_cst(ut, 1)),
			  GSI_SAME_STMT);
	gsi_insert_before(gsi, clz, GSI_SAME_STMT);
	gsi_insert_before(gsi, gimple_build_assign(bits, MINUS_EXPR, build_int_cst(it, 32), z),
			  GSI_SAME_STMT);
	gsi_insert_before(gsi, gimple_build_assign(n, NOP_EXPR, bits), GSI_SAME_STMT);
	add_to_counter(gsi, n);
}

/* ---- #pragma unroll ------------------------------------------------- */

struct unroll_mark {
	const char *file;	/* the location's file name, GCC's own string */
	int line;
	unsigned short factor;	/* USHRT_MAX: as far as the trip count allows */
};

static vec<unroll_mark> unroll_marks;

/*
 * `#pragma unroll`, `#pragma unroll N` or `#pragma unroll(N)`, clang's
 * forms.  A factor that is not a plain number is taken as no factor.
 */
static void handle_unroll(cpp_reader *)
{
	unroll_mark mk = { NULL, 0, USHRT_MAX };
	location_t loc = UNKNOWN_LOCATION;
	enum cpp_ttype tt;
	tree v;

	while ((tt = pragma_lex(&v, &loc)) != CPP_EOF && tt != CPP_PRAGMA_EOL) {
		if (tt == CPP_NUMBER && TREE_CODE(v) == INTEGER_CST && tree_fits_uhwi_p(v)) {
			unsigned HOST_WIDE_INT n = tree_to_uhwi(v);

			if (n >= 1 && n < USHRT_MAX)
				mk.factor = (unsigned short)n;
		}
	}
	if (loc == UNKNOWN_LOCATION)
		return;
	mk.file = LOCATION_FILE(loc);
	mk.line = LOCATION_LINE(loc);
	unroll_marks.safe_push(mk);
}

static void register_pragmas(void *, void *)
{
	c_register_pragma(NULL, "unroll", handle_unroll);
}

/* The pragma whose line is just above @loc's (at most 2 lines between). */
static const unroll_mark *unroll_mark_for(location_t loc)
{
	const char *file;
	int line;

	if (loc == UNKNOWN_LOCATION || unroll_marks.is_empty())
		return NULL;
	file = LOCATION_FILE(loc);
	line = LOCATION_LINE(loc);
	for (const unroll_mark &mk : unroll_marks)
		if (file && mk.file && !strcmp(file, mk.file) && mk.line < line &&
		    line - mk.line <= 3)
			return &mk;
	return NULL;
}

/*
 * Count @n instructions at the start of a part of @bb: its start, or just
 * after the call @after.  (A call's own cost goes with the part after it:
 * nothing is read between the two.)
 */
static void add_segment(basic_block bb, gimple *after, unsigned long n)
{
	gimple_stmt_iterator gsi;

	if (!n)
		return;
	if (!after) {
		gsi = gsi_after_labels(bb);
	} else {
		gsi = gsi_for_stmt(after);
		gsi_next(&gsi);
		if (gsi_end_p(gsi))	/* the call ends the block: count before it */
			gsi = gsi_for_stmt(after);
	}
	add_to_counter(&gsi, build_int_cst(long_long_unsigned_type_node, n));
}

namespace {
const pass_data unroll_data = {
	GIMPLE_PASS, "dpu_unroll", OPTGROUP_NONE, TV_NONE, PROP_cfg, 0, 0, 0, 0,
};

/*
 * Right after the CFG is built (where GCC turns its own pragma's
 * annotation into loop->unroll): a loop whose condition sits just below a
 * `#pragma unroll` gets the pragma's factor, and the complete unrolling
 * passes then unroll it whatever its size, as they do for `#pragma GCC
 * unroll`.
 */
struct unroll_pass : gimple_opt_pass {
	unroll_pass(gcc::context *c) : gimple_opt_pass(unroll_data, c) {}

	bool gate(function *) override
	{
		return !unroll_marks.is_empty();
	}

	unsigned int execute(function *fun) override
	{
		if (!loops_for_fn(fun))
			return 0;
		for (auto loop : loops_list(fun, 0)) {
			const unroll_mark *mk = NULL;
			basic_block bbs[2] = { loop->header, loop->latch };

			if (loop->unroll)	/* GCC's own pragma said */
				continue;
			for (basic_block bb : bbs) {
				gimple *last = bb ? last_stmt(bb) : NULL;

				if (last && gimple_code(last) == GIMPLE_COND)
					mk = unroll_mark_for(gimple_location(last));
				if (mk)
					break;
			}
			if (!mk)
				continue;
			loop->unroll = mk->factor;
			fun->has_unroll = 1;
		}
		return 0;
	}
};

const pass_data count_data = {
	GIMPLE_PASS, "dpu_model", OPTGROUP_NONE, TV_NONE, PROP_ssa, 0, 0, 0, TODO_update_ssa,
};

struct count_pass : gimple_opt_pass {
	count_pass(gcc::context *c) : gimple_opt_pass(count_data, c) {}

	unsigned int execute(function *fun) override
	{
		basic_block bb;

		if (!counter) {
			counter = build_decl(UNKNOWN_LOCATION, VAR_DECL,
					     get_identifier("__dpusim_icount"),
					     long_long_unsigned_type_node);
			/* a plain global: a DPU's tasklets take turns on one
			 * thread (lib/dpurt/run.c), and one add to it is one
			 * host instruction */
			TREE_PUBLIC(counter) = 1;
			TREE_STATIC(counter) = 1;
			DECL_EXTERNAL(counter) = 1;
			varpool_node::get_create(counter);
		}
		FOR_EACH_BB_FN(bb, fun) {
			unsigned long n = 0;
			gimple_stmt_iterator gsi;
			gimple *split = NULL;	/* the last call that takes time */

			for (gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
				gimple *g = gsi_stmt(gsi);

				if (runtime_call(g)) {
					/* the part before it, counted where it begins */
					add_segment(bb, split, n);
					n = cost_of(g);
					split = g;
					continue;
				}
				n += cost_of(g);
				if (is_gimple_assign(g) && dynamic_mul(g))
					add_mul_steps(&gsi);
			}
			add_segment(bb, split, n);
		}
		mark_virtual_operands_for_renaming(fun);
		return 0;
	}
};
} // namespace

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *ver)
{
	struct register_pass_info p, u;

	if (!plugin_default_version_check(ver, &gcc_version))
		return 1;
	p.pass = new count_pass(g);
	p.reference_pass_name = "optimized";
	p.ref_pass_instance_number = 1;
	p.pos_op = PASS_POS_INSERT_BEFORE;
	register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &p);
	u.pass = new unroll_pass(g);
	u.reference_pass_name = "cfg";
	u.ref_pass_instance_number = 1;
	u.pos_op = PASS_POS_INSERT_AFTER;
	register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &u);
	register_callback(info->base_name, PLUGIN_PRAGMAS, register_pragmas, NULL);
	return 0;
}

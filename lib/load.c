// SPDX-License-Identifier: MIT
/*
 * libdpusim: dpu_load and dpu_get_symbol.
 *
 * dpusim keeps one program per allocated set (props->program): dpu_load on
 * the set, one of its ranks or one of its DPUs loads it for the whole set
 * and frees the program loaded before (its dpu_program_t pointer becomes
 * invalid, as UPMEM's once no DPU uses it). The program is freed by
 * dpu_free. Symbols are looked up under props->lock, so a transfer running
 * in another thread sees either the old or the new program.
 */
#include <errno.h>
#include <stdio.h>

#include "internal.h"
#include "program.h"

static dpu_error_t load_error(int err)
{
	switch (err) {
	case -ENOENT:
	case -ENOTDIR:
	case -EACCES:
	case -EPERM:
	case -ELOOP:
	case -ENAMETOOLONG:
	case -EISDIR:
		return DPU_ERR_ELF_NO_SUCH_FILE;
	case -ENOMEM:
		return DPU_ERR_SYSTEM;
	default:	/* -ENOEXEC, -ERANGE, -EEXIST, -EINVAL, ... */
		return DPU_ERR_ELF_INVALID_FILE;
	}
}

static void release_program(struct dpu_program_t *program)
{
	dpusim_program_free(program);
}

DPUSIM_API dpu_error_t dpu_load(struct dpu_set_t dpu_set,
				const char *binary_path,
				struct dpu_program_t **program)
{
	struct dpusim_set_props *props = dpusim_set_props(dpu_set, "dpu_load");
	struct dpu_program_t *prog = NULL, *old;
	char err[512];
	int r;

	if (!props)
		return DPU_ERR_INVALID_DPU_SET;
	if (!binary_path) {
		dpusim_log("dpu_load: binary_path is NULL");
		return DPU_ERR_ELF_NO_SUCH_FILE;
	}
	r = dpusim_program_load(binary_path, props->ranks[0]->mram_size, &prog,
				err, sizeof(err));
	if (r < 0) {
		dpusim_log("dpu_load: %s", err);
		return load_error(r);
	}

	pthread_mutex_lock(&props->lock);
	old = props->program;
	props->program = prog;
	props->program_release = release_program;
	pthread_mutex_unlock(&props->lock);
	dpusim_program_free(old);

	if (program)
		*program = prog;
	return DPU_OK;
}

DPUSIM_API dpu_error_t dpu_get_symbol(struct dpu_program_t *program,
				      const char *symbol_name,
				      struct dpu_symbol_t *symbol)
{
	const struct dpusim_symbol *sym;
	uint64_t address;

	if (!program) {
		dpusim_log("dpu_get_symbol: program is NULL");
		return DPU_ERR_NO_PROGRAM_LOADED;
	}
	if (!symbol) {
		dpusim_log("dpu_get_symbol: symbol is NULL");
		return DPU_ERR_INTERNAL;
	}
	sym = dpusim_program_find(program, symbol_name);
	if (!sym) {
		dpusim_log("dpu_get_symbol: unknown symbol '%s' in %s",
			   symbol_name ? symbol_name : "(null)",
			   program->path ? program->path : "the program");
		return DPU_ERR_UNKNOWN_SYMBOL;
	}
	/* As UPMEM: MRAM symbols at the DPU address of MRAM + offset. */
	address = DPUSIM_DPU_MRAM_BASE + sym->mram_offset;
	if (address > UINT32_MAX || sym->size > UINT32_MAX) {
		dpusim_log("dpu_get_symbol: symbol '%s' (offset %llu, size %llu) does not fit UPMEM's 32-bit addresses",
			   symbol_name, (unsigned long long)sym->mram_offset,
			   (unsigned long long)sym->size);
		return DPU_ERR_INVALID_SYMBOL_ACCESS;
	}
	symbol->address = (dpu_mem_max_addr_t)address;
	symbol->size = (dpu_mem_max_size_t)sym->size;
	return DPU_OK;
}

// SPDX-License-Identifier: MIT
/*
 * Unit tests of lib/program.c (ELF MRAM symbols), run on the host from the
 * repository root:
 *   - a host object and a host executable compiled at run time with `cc`
 *     from tests/unit/fixtures/mram_symbols.c into a temporary directory
 *     ($TMPDIR or /tmp), whose layout is computed by hand in the fixture;
 *   - UPMEM-DPU-style and host-style ELF files written with libelf's
 *     ELF_C_WRITE API (ELF32/ELF64, little/big endian);
 *   - malformed and missing files.
 * Output through unit.h: one line per case ("ok - name" / "not ok - name:
 * why"), then "N passed, N failed"; exit status 1 if any case failed.
 */
#include "program.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIXTURE_DIR "tests/unit/fixtures/"
#define FIXTURE_SRC FIXTURE_DIR "mram_symbols.c"
#define MIB (1024ULL * 1024ULL)
#define MRAM_64M (64 * MIB)
#define MAX_TMP_FILES 64

/* ---------------------------------------------------------------- harness */

struct ctx {
	char tmpdir[512];
	char files[MAX_TMP_FILES][600];
	size_t nr_files;
	bool rel_built, exe_built;
	char rel_path[600], exe_path[600];
	char why[512]; /* reason of the current case's failure */
};

__attribute__((format(printf, 2, 3))) static bool set_why(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return false;
}

/* In a case function (returning bool, with a struct ctx *c): fail the case. */
#define EXPECT(cond, ...)                                   \
	do {                                                \
		if (!(cond))                                \
			return set_why(c, __VA_ARGS__);     \
	} while (0)

static void run_case(struct ctx *c, const char *name, bool (*fn)(struct ctx *))
{
	c->why[0] = '\0';
	if (fn(c))
		unit_pass(name);
	else
		unit_fail(name, "%s", c->why[0] ? c->why : "(no reason given)");
}

static const char *tmp_file(struct ctx *c, const char *name)
{
	char buf[sizeof(c->files[0])];
	char *p;

	if (c->nr_files == MAX_TMP_FILES) {
		fprintf(stderr, "test_program: too many temporary files\n");
		exit(2);
	}
	snprintf(buf, sizeof(buf), "%s/%s", c->tmpdir, name);
	p = c->files[c->nr_files++];
	memcpy(p, buf, sizeof(buf));
	return p;
}

static bool write_bytes(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, buf, len) == (ssize_t)len;
	return close(fd) == 0 && ok;
}

/* Runs argv (no shell); true if it exited with status 0. */
static bool run_cmd(char *const argv[])
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---------------------------------------------------------------- helpers */

static struct dpu_program_t *load_ok(struct ctx *c, const char *path, uint64_t mram_size)
{
	struct dpu_program_t *prog = NULL;
	char err[512];
	int ret = dpusim_program_load(path, mram_size, &prog, err, sizeof(err));

	if (ret != 0 || !prog) {
		set_why(c, "load failed (%d): %s", ret, err);
		return NULL;
	}
	return prog;
}

/* Checks that name exists with this offset and size. */
static bool has_sym(struct ctx *c, const struct dpu_program_t *prog, const char *name,
		    uint64_t offset, uint64_t size)
{
	const struct dpusim_symbol *s = dpusim_program_find(prog, name);

	if (!s)
		return set_why(c, "symbol '%s' not found", name);
	if (strcmp(s->name, name) != 0)
		return set_why(c, "find('%s') returned '%s'", name, s->name);
	if (s->offset != offset || s->size != size)
		return set_why(c, "symbol '%s': offset %" PRIu64 " size %" PRIu64
			       ", expected offset %" PRIu64 " size %" PRIu64,
			       name, s->offset, s->size, offset, size);
	return true;
}

static bool sorted_unique(struct ctx *c, const struct dpu_program_t *prog)
{
	for (size_t i = 1; i < prog->nr_symbols; i++)
		if (strcmp(prog->symbols[i - 1].name, prog->symbols[i].name) >= 0)
			return set_why(c, "symbols not sorted/unique at %zu: '%s' then '%s'", i,
				       prog->symbols[i - 1].name, prog->symbols[i].name);
	return true;
}

/* Loading must fail with want_ret, leave *out alone, and mention each of needles. */
static bool load_fails(struct ctx *c, const char *path, uint64_t mram_size, int want_ret,
		       const char *needle1, const char *needle2)
{
	struct dpu_program_t *prog = (struct dpu_program_t *)&prog; /* sentinel */
	struct dpu_program_t *const sentinel = prog;
	char err[512] = "unchanged";
	int ret = dpusim_program_load(path, mram_size, &prog, err, sizeof(err));

	if (ret == 0) {
		if (prog != sentinel)
			dpusim_program_free(prog);
		return set_why(c, "load of %s succeeded, expected %d", path, want_ret);
	}
	EXPECT(prog == sentinel, "*out modified on failure");
	EXPECT(want_ret == 0 ? ret < 0 : ret == want_ret, "returned %d (%s), expected %d", ret,
	       strerror(-ret), want_ret);
	EXPECT(err[0] && strcmp(err, "unchanged") != 0, "no error message");
	EXPECT(strstr(err, path) != NULL, "message does not name the file: %s", err);
	EXPECT(!needle1 || strstr(err, needle1), "message lacks '%s': %s", needle1, err);
	EXPECT(!needle2 || strstr(err, needle2), "message lacks '%s': %s", needle2, err);
	return true;
}

/* ---------------------------------------------------------------- crafted ELF */

enum {
	SEC_TEXT = 1,
	SEC_DATA,
	SEC_MRAM,
	SEC_MRAM_NOINIT,
	SEC_SYMTAB,
	SEC_STRTAB,
	SEC_SHSTRTAB,
	SEC_ABS = -1,
	SEC_UNDEF = 0,
};

struct csym {
	const char *name;
	unsigned char type, bind;
	int sec;
	uint64_t value, size;
};

struct craft {
	int cls, data;
	uint16_t type, machine;
	uint64_t text_addr, data_addr, mram_addr, noinit_addr;
	const struct csym *syms;
	size_t nr_syms;
	bool no_symtab;
};

#define DPU_CRAFT(syms_)                                                                \
	{ .cls = ELFCLASS32, .data = ELFDATA2LSB, .type = ET_EXEC, .machine = DPUSIM_EM_DPU, \
	  .text_addr = 0x80000000, .data_addr = 0, .mram_addr = DPUSIM_DPU_MRAM_BASE,       \
	  .noinit_addr = DPUSIM_DPU_MRAM_BASE + 0x100000, .syms = (syms_),                 \
	  .nr_syms = sizeof(syms_) / sizeof((syms_)[0]) }

static bool add_section(Elf *e, const char *what, GElf_Word type, GElf_Xword flags,
			GElf_Addr addr, GElf_Word name, void *buf, size_t size, Elf_Type dtype,
			GElf_Xword align, struct ctx *c)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d;
	GElf_Shdr sh;

	if (!scn || !(d = elf_newdata(scn)) || !gelf_getshdr(scn, &sh))
		return set_why(c, "libelf: cannot add %s: %s", what, elf_errmsg(-1));
	d->d_buf = buf;
	d->d_size = size;
	d->d_type = dtype;
	d->d_align = align;
	d->d_off = 0;
	d->d_version = EV_CURRENT;
	sh.sh_name = name;
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addr = addr;
	sh.sh_addralign = align;
	sh.sh_size = size;
	if (!gelf_update_shdr(scn, &sh))
		return set_why(c, "libelf: cannot update %s: %s", what, elf_errmsg(-1));
	return true;
}

/* Writes an ELF file at path as described by cr (sections per SEC_*). */
static bool craft_elf(struct ctx *c, const char *path, const struct craft *cr)
{
	static const char shstr[] =
		"\0.text\0.data\0.mram\0.mram.noinit\0.symtab\0.strtab\0.shstrtab";
	/* Offsets of the names in shstr. */
	enum { N_TEXT = 1, N_DATA = 7, N_MRAM = 13, N_NOINIT = 19, N_SYMTAB = 32,
	       N_STRTAB = 40, N_SHSTRTAB = 48 };
	static unsigned char text[16], data[64];
	size_t nsyms = cr->nr_syms + 3; /* null, file, section */
	size_t symsz = cr->cls == ELFCLASS32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym);
	size_t strsz = 1 + sizeof("crafted.c"), strpos, si = 0, nlocal;
	char *strtab = NULL;
	void *symbuf = NULL;
	bool ok = false;
	Elf *e = NULL;
	GElf_Ehdr eh;
	int fd;

	for (size_t i = 0; i < cr->nr_syms; i++)
		strsz += strlen(cr->syms[i].name) + 1;
	strtab = calloc(1, strsz);
	symbuf = calloc(nsyms, symsz);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!strtab || !symbuf || fd < 0) {
		set_why(c, "cannot set up %s: %s", path, strerror(errno));
		goto out;
	}
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e || !gelf_newehdr(e, cr->cls) || !gelf_getehdr(e, &eh)) {
		set_why(c, "libelf: cannot start %s: %s", path, elf_errmsg(-1));
		goto out;
	}
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = (unsigned char)cr->cls;
	eh.e_ident[EI_DATA] = (unsigned char)cr->data;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = cr->type;
	eh.e_machine = cr->machine;
	eh.e_version = EV_CURRENT;
	eh.e_shstrndx = cr->no_symtab ? SEC_SYMTAB : SEC_SHSTRTAB;
	if (!gelf_update_ehdr(e, &eh)) {
		set_why(c, "libelf: ehdr: %s", elf_errmsg(-1));
		goto out;
	}

	if (!add_section(e, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, cr->text_addr,
			 N_TEXT, text, sizeof(text), ELF_T_BYTE, 8, c) ||
	    !add_section(e, ".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, cr->data_addr, N_DATA,
			 data, sizeof(data), ELF_T_BYTE, 8, c) ||
	    !add_section(e, ".mram", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, cr->mram_addr, N_MRAM,
			 NULL, 0x2000, ELF_T_BYTE, 8, c) ||
	    !add_section(e, ".mram.noinit", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, cr->noinit_addr,
			 N_NOINIT, NULL, 0x1000, ELF_T_BYTE, 8, c))
		goto out;

	if (cr->no_symtab) {
		/* Section index SEC_SYMTAB is then the name table. */
		if (!add_section(e, ".shstrtab", SHT_STRTAB, 0, 0, N_SHSTRTAB, (void *)shstr,
				 sizeof(shstr), ELF_T_BYTE, 1, c))
			goto out;
	} else {
		Elf_Scn *symscn;
		Elf_Data *symdata;
		GElf_Shdr sh;
		GElf_Sym s;

		if (!add_section(e, ".symtab", SHT_SYMTAB, 0, 0, N_SYMTAB, symbuf, nsyms * symsz,
				 ELF_T_SYM, 8, c) ||
		    !add_section(e, ".strtab", SHT_STRTAB, 0, 0, N_STRTAB, strtab, strsz,
				 ELF_T_BYTE, 1, c) ||
		    !add_section(e, ".shstrtab", SHT_STRTAB, 0, 0, N_SHSTRTAB, (void *)shstr,
				 sizeof(shstr), ELF_T_BYTE, 1, c))
			goto out;
		symscn = elf_getscn(e, SEC_SYMTAB);
		symdata = symscn ? elf_getdata(symscn, NULL) : NULL;
		if (!symdata || !gelf_getshdr(symscn, &sh)) {
			set_why(c, "libelf: symtab: %s", elf_errmsg(-1));
			goto out;
		}

		/* Locals first (null, file, section, user locals), then the rest. */
		memset(&s, 0, sizeof(s));
		gelf_update_sym(symdata, (int)si++, &s);
		strpos = 1;
		memcpy(strtab + strpos, "crafted.c", sizeof("crafted.c"));
		s.st_name = (GElf_Word)strpos;
		s.st_info = GELF_ST_INFO(STB_LOCAL, STT_FILE);
		s.st_shndx = SHN_ABS;
		gelf_update_sym(symdata, (int)si++, &s);
		strpos += sizeof("crafted.c");
		memset(&s, 0, sizeof(s));
		s.st_info = GELF_ST_INFO(STB_LOCAL, STT_SECTION);
		s.st_shndx = SEC_MRAM;
		s.st_value = cr->mram_addr;
		gelf_update_sym(symdata, (int)si++, &s);
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < cr->nr_syms; i++) {
				const struct csym *u = &cr->syms[i];

				if ((u->bind == STB_LOCAL) != (pass == 0))
					continue;
				memset(&s, 0, sizeof(s));
				strcpy(strtab + strpos, u->name);
				s.st_name = (GElf_Word)strpos;
				strpos += strlen(u->name) + 1;
				s.st_info = GELF_ST_INFO(u->bind, u->type);
				s.st_shndx = u->sec == SEC_ABS ? SHN_ABS : (GElf_Section)u->sec;
				s.st_value = u->value;
				s.st_size = u->size;
				if (!gelf_update_sym(symdata, (int)si++, &s)) {
					set_why(c, "libelf: sym %s: %s", u->name, elf_errmsg(-1));
					goto out;
				}
			}
			if (pass == 0)
				nlocal = si;
		}
		sh.sh_link = SEC_STRTAB;
		sh.sh_info = (GElf_Word)nlocal;
		sh.sh_entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
		if (!gelf_update_shdr(symscn, &sh)) {
			set_why(c, "libelf: symtab shdr: %s", elf_errmsg(-1));
			goto out;
		}
	}
	if (elf_update(e, ELF_C_WRITE) < 0) {
		set_why(c, "libelf: cannot write %s: %s", path, elf_errmsg(-1));
		goto out;
	}
	ok = true;
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	free(symbuf);
	free(strtab);
	return ok;
}

/* ---------------------------------------------------------------- gcc fixture */

static const char *const fixture_flags[] = { "-O0", "-fno-common", "-fno-toplevel-reorder",
					     "-fno-data-sections", "-w" };

static bool case_rel_build(struct ctx *c)
{
	char *argv[16];
	size_t n = 0;

	snprintf(c->rel_path, sizeof(c->rel_path), "%s", tmp_file(c, "mram_symbols.o"));
	EXPECT(access(FIXTURE_SRC, R_OK) == 0,
	       "%s not readable (run from the repository root): %s", FIXTURE_SRC,
	       strerror(errno));
	argv[n++] = "cc";
	argv[n++] = "-c";
	for (size_t i = 0; i < sizeof(fixture_flags) / sizeof(fixture_flags[0]); i++)
		argv[n++] = (char *)fixture_flags[i];
	argv[n++] = FIXTURE_SRC;
	argv[n++] = "-o";
	argv[n++] = c->rel_path;
	argv[n] = NULL;
	EXPECT(run_cmd(argv), "cc -c %s failed", FIXTURE_SRC);
	c->rel_built = true;
	return true;
}

static bool case_exe_build(struct ctx *c)
{
	char *argv[16];
	size_t n = 0;

	snprintf(c->exe_path, sizeof(c->exe_path), "%s", tmp_file(c, "mram_symbols.exe"));
	argv[n++] = "cc";
	argv[n++] = "-DWITH_MAIN";
	for (size_t i = 0; i < sizeof(fixture_flags) / sizeof(fixture_flags[0]); i++)
		argv[n++] = (char *)fixture_flags[i];
	argv[n++] = FIXTURE_SRC;
	argv[n++] = "-o";
	argv[n++] = c->exe_path;
	argv[n] = NULL;
	EXPECT(run_cmd(argv), "cc %s (host executable) failed", FIXTURE_SRC);
	c->exe_built = true;
	return true;
}

static bool case_rel_offsets(struct ctx *c)
{
	struct dpu_program_t *prog;
	bool ok;

	EXPECT(c->rel_built, "fixture object not built");
	prog = load_ok(c, c->rel_path, MRAM_64M);
	if (!prog)
		return false;
	/* Expected layout: see the comment in tests/unit/fixtures/mram_symbols.c. */
	ok = has_sym(c, prog, "mram_buf", 0, 8192) &&
	     has_sym(c, prog, "mram_counter", 8192, 4) &&
	     has_sym(c, prog, "mram_tail", 8196, 3) &&
	     has_sym(c, prog, "mram_scratch", 8256, 100) &&
	     has_sym(c, prog, "mram_local", 8356, 10) && sorted_unique(c, prog);
	if (ok && prog->nr_symbols != 6)
		ok = set_why(c, "%zu symbols, expected 6 (5 MRAM + heap pointer)",
			     prog->nr_symbols);
	if (ok && strcmp(prog->path, c->rel_path) != 0)
		ok = set_why(c, "path '%s'", prog->path);
	dpusim_program_free(prog);
	return ok;
}

static bool case_rel_non_mram_absent(struct ctx *c)
{
	static const char *const absent[] = { "host_bss", "host_data", "host_func",
					      "data_mram_like", "mram_symbols.c", ".mram",
					      ".mram.noinit", ".text", "" };
	struct dpu_program_t *prog;
	bool ok = true;

	EXPECT(c->rel_built, "fixture object not built");
	prog = load_ok(c, c->rel_path, MRAM_64M);
	if (!prog)
		return false;
	for (size_t i = 0; ok && i < sizeof(absent) / sizeof(absent[0]); i++)
		if (dpusim_program_find(prog, absent[i]))
			ok = set_why(c, "'%s' should not be an MRAM symbol", absent[i]);
	dpusim_program_free(prog);
	return ok;
}

static bool case_rel_heap_pointer(struct ctx *c)
{
	struct dpu_program_t *prog;
	bool ok;

	EXPECT(c->rel_built, "fixture object not built");
	prog = load_ok(c, c->rel_path, 8 * MIB);
	if (!prog)
		return false;
	ok = has_sym(c, prog, DPUSIM_HEAP_POINTER_NAME, 0, 8 * MIB);
	dpusim_program_free(prog);
	return ok;
}

static bool case_rel_exact_fit(struct ctx *c)
{
	struct dpu_program_t *prog;
	bool ok;

	EXPECT(c->rel_built, "fixture object not built");
	/* mram_local ends at 8356 + 10 = 8366, the highest end. */
	prog = load_ok(c, c->rel_path, 8366);
	if (!prog)
		return false;
	ok = has_sym(c, prog, "mram_local", 8356, 10) &&
	     has_sym(c, prog, DPUSIM_HEAP_POINTER_NAME, 0, 8366);
	dpusim_program_free(prog);
	return ok;
}

static bool case_rel_symbol_over_mram(struct ctx *c)
{
	EXPECT(c->rel_built, "fixture object not built");
	/* One byte short: mram_local (first in the symbol table) does not fit. */
	return load_fails(c, c->rel_path, 8365, -ERANGE, "'mram_local'", ".mram.noinit");
}

static bool case_exe_offsets(struct ctx *c)
{
	const struct dpusim_symbol *scratch, *local;
	struct dpu_program_t *prog;
	bool ok;

	EXPECT(c->exe_built, "fixture executable not built");
	prog = load_ok(c, c->exe_path, MRAM_64M);
	if (!prog)
		return false;
	/* .mram is the lowest MRAM section; .mram.noinit follows it, 64-aligned
	 * in the address space (so its offset depends on where .mram landed). */
	ok = has_sym(c, prog, "mram_buf", 0, 8192) &&
	     has_sym(c, prog, "mram_counter", 8192, 4) &&
	     has_sym(c, prog, "mram_tail", 8196, 3) &&
	     has_sym(c, prog, DPUSIM_HEAP_POINTER_NAME, 0, MRAM_64M) && sorted_unique(c, prog);
	scratch = dpusim_program_find(prog, "mram_scratch");
	local = dpusim_program_find(prog, "mram_local");
	if (ok && (!scratch || !local))
		ok = set_why(c, "mram_scratch or mram_local missing");
	if (ok && (scratch->size != 100 || scratch->offset < 8199 ||
		   scratch->offset >= 8199 + 64))
		ok = set_why(c, "mram_scratch at %" PRIu64 " size %" PRIu64
			     ", expected size 100 within [8199, 8263)",
			     scratch->offset, scratch->size);
	if (ok && (local->offset != scratch->offset + 100 || local->size != 10))
		ok = set_why(c, "mram_local at %" PRIu64 " size %" PRIu64 ", expected %" PRIu64
			     " size 10", local->offset, local->size,
			     scratch->offset + 100);
	if (ok && (dpusim_program_find(prog, "host_bss") || dpusim_program_find(prog, "main") ||
		   dpusim_program_find(prog, "data_mram_like")))
		ok = set_why(c, "non-MRAM symbol present");
	if (ok && prog->nr_symbols != 6)
		ok = set_why(c, "%zu symbols, expected 6; first is '%s'", prog->nr_symbols,
			     prog->symbols[0].name);
	dpusim_program_free(prog);
	return ok;
}

/* ---------------------------------------------------------------- crafted cases */

#define M(x) (DPUSIM_DPU_MRAM_BASE + (x))
#define N(x) (DPUSIM_DPU_MRAM_BASE + 0x100000 + (x))

static const struct csym dpu_syms[] = {
	{ "mram_a", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0), 0x1000 },
	{ "mram_b", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0x1000), 0x800 },
	{ "mram_notype", STT_NOTYPE, STB_GLOBAL, SEC_MRAM_NOINIT, N(0), 64 },
	{ "mram_static", STT_OBJECT, STB_LOCAL, SEC_MRAM_NOINIT, N(0x40), 24 },
	/* ignored */
	{ "mram_zero", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0x1800), 0 },
	{ "mram_label", STT_NOTYPE, STB_GLOBAL, SEC_MRAM, M(0x1900), 0 },
	{ "mram_func", STT_FUNC, STB_GLOBAL, SEC_MRAM, M(0x1a00), 8 },
	{ "mram_tls", STT_TLS, STB_GLOBAL, SEC_MRAM, M(0x1b00), 8 },
	{ "wram_var", STT_OBJECT, STB_GLOBAL, SEC_DATA, 0x10, 8 },
	{ "dpu_func", STT_FUNC, STB_GLOBAL, SEC_TEXT, 0x80000000, 16 },
	{ "abs_sym", STT_OBJECT, STB_GLOBAL, SEC_ABS, M(0x10), 8 },
	{ "undef_sym", STT_OBJECT, STB_GLOBAL, SEC_UNDEF, 0, 8 },
	/* the heap pointer as UPMEM's linker defines it: overridden */
	{ DPUSIM_HEAP_POINTER_NAME, STT_NOTYPE, STB_GLOBAL, SEC_MRAM, M(0x2000), 0 },
	/* duplicates: higher binding wins */
	{ "dup_lg", STT_OBJECT, STB_LOCAL, SEC_MRAM, M(0x100), 8 },
	{ "dup_lg", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0x200), 16 },
	{ "dup_lw", STT_OBJECT, STB_LOCAL, SEC_MRAM, M(0x300), 8 },
	{ "dup_lw", STT_OBJECT, STB_WEAK, SEC_MRAM, M(0x400), 8 },
	{ "dup_wg", STT_OBJECT, STB_WEAK, SEC_MRAM, M(0x500), 8 },
	{ "dup_wg", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0x600), 32 },
	{ "dup_same", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0x700), 8 },
	{ "dup_same", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0x700), 8 },
};

static bool check_dpu_syms(struct ctx *c, const struct dpu_program_t *prog, uint64_t mram)
{
	static const char *const absent[] = { "mram_zero", "mram_label", "mram_func",
					      "mram_tls",  "wram_var",   "dpu_func",
					      "abs_sym",   "undef_sym",  "crafted.c",
					      ".mram" };

	if (!(has_sym(c, prog, "mram_a", 0, 0x1000) && has_sym(c, prog, "mram_b", 0x1000, 0x800) &&
	      has_sym(c, prog, "mram_notype", 0x100000, 64) &&
	      has_sym(c, prog, "mram_static", 0x100040, 24) &&
	      has_sym(c, prog, DPUSIM_HEAP_POINTER_NAME, 0, mram) &&
	      has_sym(c, prog, "dup_lg", 0x200, 16) && has_sym(c, prog, "dup_lw", 0x400, 8) &&
	      has_sym(c, prog, "dup_wg", 0x600, 32) && has_sym(c, prog, "dup_same", 0x700, 8) &&
	      sorted_unique(c, prog)))
		return false;
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
		if (dpusim_program_find(prog, absent[i]))
			return set_why(c, "'%s' should not be an MRAM symbol", absent[i]);
	if (prog->nr_symbols != 9)
		return set_why(c, "%zu symbols, expected 9", prog->nr_symbols);
	return true;
}

static bool load_crafted(struct ctx *c, const char *file, const struct craft *cr,
			 uint64_t mram)
{
	const char *path = tmp_file(c, file);
	struct dpu_program_t *prog;
	bool ok;

	if (!craft_elf(c, path, cr))
		return false;
	prog = load_ok(c, path, mram);
	if (!prog)
		return false;
	ok = check_dpu_syms(c, prog, mram);
	dpusim_program_free(prog);
	return ok;
}

static bool case_dpu_elf32_le(struct ctx *c)
{
	struct craft cr = DPU_CRAFT(dpu_syms);

	return load_crafted(c, "dpu32le.elf", &cr, MRAM_64M);
}

static bool case_dpu_elf64_be(struct ctx *c)
{
	struct craft cr = DPU_CRAFT(dpu_syms);

	cr.cls = ELFCLASS64;
	cr.data = ELFDATA2MSB;
	return load_crafted(c, "dpu64be.elf", &cr, 2 * MIB);
}

static bool case_host_exec_lowest_base(struct ctx *c)
{
	/* Host-style executable: .mram.noinit below .mram, offsets from it. */
	static const struct csym syms[] = {
		{ "in_mram", STT_OBJECT, STB_GLOBAL, SEC_MRAM, 0x404010, 16 },
		{ "in_noinit", STT_OBJECT, STB_GLOBAL, SEC_MRAM_NOINIT, 0x403000, 8 },
		{ "in_data", STT_OBJECT, STB_GLOBAL, SEC_DATA, 0x402000, 8 },
	};
	struct craft cr = DPU_CRAFT(syms);
	const char *path = tmp_file(c, "host.exe");
	struct dpu_program_t *prog;
	bool ok;

	cr.cls = ELFCLASS64;
	cr.machine = EM_X86_64;
	cr.text_addr = 0x401000;
	cr.data_addr = 0x402000;
	cr.noinit_addr = 0x403000;
	cr.mram_addr = 0x404000;
	if (!craft_elf(c, path, &cr) || !(prog = load_ok(c, path, MRAM_64M)))
		return false;
	ok = has_sym(c, prog, "in_mram", 0x1010, 16) && has_sym(c, prog, "in_noinit", 0, 8);
	if (ok && dpusim_program_find(prog, "in_data"))
		ok = set_why(c, "in_data should not be an MRAM symbol");
	dpusim_program_free(prog);
	return ok;
}

static bool case_no_symtab(struct ctx *c)
{
	static const struct csym none[1];
	struct craft cr = DPU_CRAFT(none);
	const char *path = tmp_file(c, "stripped.elf");
	struct dpu_program_t *prog;
	bool ok;

	cr.nr_syms = 0;
	cr.no_symtab = true;
	if (!craft_elf(c, path, &cr) || !(prog = load_ok(c, path, MRAM_64M)))
		return false;
	ok = has_sym(c, prog, DPUSIM_HEAP_POINTER_NAME, 0, MRAM_64M);
	if (ok && prog->nr_symbols != 1)
		ok = set_why(c, "%zu symbols, expected only the heap pointer", prog->nr_symbols);
	dpusim_program_free(prog);
	return ok;
}

/* Crafts syms into file and expects loading to fail with err, naming n1 and n2. */
static bool crafted_fails(struct ctx *c, const char *file, struct craft *cr, uint64_t mram,
			  int err, const char *n1, const char *n2)
{
	const char *path = tmp_file(c, file);

	if (!craft_elf(c, path, cr))
		return false;
	return load_fails(c, path, mram, err, n1, n2);
}

static bool case_dpu_symbol_over_mram(struct ctx *c)
{
	static const struct csym syms[] = {
		{ "fits", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0), 0xff8 },
		{ "too_big", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0xff8), 16 },
	};
	struct craft cr = DPU_CRAFT(syms);

	return crafted_fails(c, "over.elf", &cr, 0x1000, -ERANGE, "'too_big'", "does not fit");
}

static bool case_dpu_symbol_exact_fit(struct ctx *c)
{
	static const struct csym syms[] = {
		{ "last", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0xff8), 8 },
	};
	struct craft cr = DPU_CRAFT(syms);
	const char *path = tmp_file(c, "fit.elf");
	struct dpu_program_t *prog;
	bool ok;

	if (!craft_elf(c, path, &cr) || !(prog = load_ok(c, path, 0x1000)))
		return false;
	ok = has_sym(c, prog, "last", 0xff8, 8);
	dpusim_program_free(prog);
	return ok;
}

static bool case_dpu_size_overflow(struct ctx *c)
{
	static const struct csym syms[] = {
		{ "huge", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(8), UINT64_MAX },
	};
	struct craft cr = DPU_CRAFT(syms);

	cr.cls = ELFCLASS64;
	return crafted_fails(c, "overflow.elf", &cr, MRAM_64M, -ERANGE, "'huge'", NULL);
}

static bool case_dpu_below_base(struct ctx *c)
{
	static const struct csym syms[] = {
		{ "low", STT_OBJECT, STB_GLOBAL, SEC_MRAM, 0x100, 8 },
	};
	struct craft cr = DPU_CRAFT(syms);

	return crafted_fails(c, "below.elf", &cr, MRAM_64M, -ERANGE, "'low'", "below");
}

static bool case_dup_two_globals(struct ctx *c)
{
	static const struct csym syms[] = {
		{ "twice", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(0), 8 },
		{ "twice", STT_OBJECT, STB_GLOBAL, SEC_MRAM_NOINIT, N(0), 8 },
	};
	struct craft cr = DPU_CRAFT(syms);

	return crafted_fails(c, "dupg.elf", &cr, MRAM_64M, -EEXIST, "global symbol 'twice'",
			     ".mram.noinit");
}

/*
 * Two file-static variables of one name (legal C) load; the name reaches
 * neither, and the other symbols stay.
 */
static bool case_dup_two_locals(struct ctx *c)
{
	static const struct csym syms[] = {
		{ "twice", STT_OBJECT, STB_LOCAL, SEC_MRAM, M(0), 8 },
		{ "twice", STT_OBJECT, STB_LOCAL, SEC_MRAM, M(8), 8 },
		{ "other", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(16), 8 },
	};
	struct craft cr = DPU_CRAFT(syms);
	const char *path = tmp_file(c, "dupl.elf");
	struct dpu_program_t *prog;
	bool ok;

	if (!craft_elf(c, path, &cr) || !(prog = load_ok(c, path, MRAM_64M)))
		return false;
	ok = has_sym(c, prog, "other", 16, 8);
	if (ok && dpusim_program_find(prog, "twice"))
		ok = set_why(c, "'twice' (two different locals) is reachable by name");
	dpusim_program_free(prog);
	return ok;
}

/* A global beats two different statics of its name. */
static bool case_dup_two_locals_one_global(struct ctx *c)
{
	static const struct csym syms[] = {
		{ "twice", STT_OBJECT, STB_LOCAL, SEC_MRAM, M(0), 8 },
		{ "twice", STT_OBJECT, STB_LOCAL, SEC_MRAM, M(8), 8 },
		{ "twice", STT_OBJECT, STB_GLOBAL, SEC_MRAM, M(16), 8 },
	};
	struct craft cr = DPU_CRAFT(syms);
	const char *path = tmp_file(c, "duplg.elf");
	struct dpu_program_t *prog;
	bool ok;

	if (!craft_elf(c, path, &cr) || !(prog = load_ok(c, path, MRAM_64M)))
		return false;
	ok = has_sym(c, prog, "twice", 16, 8);
	dpusim_program_free(prog);
	return ok;
}

static bool case_unsupported_type(struct ctx *c)
{
	static const struct csym none[1];
	struct craft cr = DPU_CRAFT(none);

	cr.nr_syms = 0;
	cr.type = ET_CORE;
	return crafted_fails(c, "core.elf", &cr, MRAM_64M, -ENOEXEC, "unsupported ELF type",
			     NULL);
}

/* ---------------------------------------------------------------- bad files */

static bool case_missing_file(struct ctx *c)
{
	return load_fails(c, tmp_file(c, "does-not-exist.elf"), MRAM_64M, -ENOENT,
			  "cannot open", NULL);
}

static bool case_not_elf(struct ctx *c)
{
	const char *path = tmp_file(c, "not-elf.txt");
	static const char text[] = "#!/bin/sh\necho this is not an ELF file\n";

	EXPECT(write_bytes(path, text, sizeof(text) - 1), "cannot write %s", path);
	return load_fails(c, path, MRAM_64M, -ENOEXEC, "not an ELF file", NULL);
}

static bool case_empty_file(struct ctx *c)
{
	const char *path = tmp_file(c, "empty");

	EXPECT(write_bytes(path, "", 0), "cannot write %s", path);
	return load_fails(c, path, MRAM_64M, -ENOEXEC, "not an ELF file", NULL);
}

static bool case_bad_class(struct ctx *c)
{
	const char *path = tmp_file(c, "badclass.elf");
	unsigned char hdr[64] = { 0x7f, 'E', 'L', 'F', 3, ELFDATA2LSB, EV_CURRENT };

	EXPECT(write_bytes(path, hdr, sizeof(hdr)), "cannot write %s", path);
	return load_fails(c, path, MRAM_64M, -ENOEXEC, "unsupported ELF class 3", NULL);
}

static bool case_bad_endianness(struct ctx *c)
{
	const char *path = tmp_file(c, "baddata.elf");
	unsigned char hdr[64] = { 0x7f, 'E', 'L', 'F', ELFCLASS64, 7, EV_CURRENT };

	EXPECT(write_bytes(path, hdr, sizeof(hdr)), "cannot write %s", path);
	return load_fails(c, path, MRAM_64M, -ENOEXEC, "unsupported ELF data encoding 7", NULL);
}

static bool case_truncated_elf(struct ctx *c)
{
	const char *full = tmp_file(c, "full.elf"), *cut = tmp_file(c, "truncated.elf");
	struct craft cr = DPU_CRAFT(dpu_syms);
	unsigned char buf[200];
	ssize_t n;
	int fd;

	if (!craft_elf(c, full, &cr))
		return false;
	fd = open(full, O_RDONLY | O_CLOEXEC);
	EXPECT(fd >= 0, "cannot open %s", full);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	EXPECT(n == (ssize_t)sizeof(buf), "short read of %s", full);
	EXPECT(write_bytes(cut, buf, sizeof(buf)), "cannot write %s", cut);
	/* Header intact, section headers beyond the end of the file. */
	return load_fails(c, cut, MRAM_64M, -ENOEXEC, "truncated", NULL);
}

static bool read_file(const char *path, unsigned char **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = false;

	*buf = NULL;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && st.st_size > 0 && (*buf = malloc((size_t)st.st_size))) {
		*len = (size_t)st.st_size;
		ok = read(fd, *buf, *len) == (ssize_t)*len;
	}
	close(fd);
	return ok;
}

static bool case_every_prefix_rejected(struct ctx *c)
{
	const char *cut = tmp_file(c, "prefix.o");
	unsigned char *buf;
	size_t len, n;
	bool ok = true;

	EXPECT(c->rel_built, "fixture object not built");
	EXPECT(read_file(c->rel_path, &buf, &len), "cannot read %s", c->rel_path);
	/* Lengths 0, 61, 122, ... and finally len - 1. */
	for (n = 0; ok && n < len; n = (n == len - 1 || n + 61 < len) ? n + 61 : len - 1) {
		struct dpu_program_t *prog = NULL;
		char err[256];
		int ret;

		if (!write_bytes(cut, buf, n)) {
			ok = set_why(c, "cannot write %s", cut);
			break;
		}
		ret = dpusim_program_load(cut, MRAM_64M, &prog, err, sizeof(err));
		if (ret == 0) {
			dpusim_program_free(prog);
			ok = set_why(c, "the first %zu of %zu bytes loaded", n, len);
		} else if (prog || !err[0]) {
			ok = set_why(c, "prefix %zu: failure without message or with output", n);
		}
	}
	free(buf);
	return ok;
}

/* Corrupts each byte of a crafted DPU ELF in turn: loads or fails, never crashes. */
static bool case_corrupted_bytes_survive(struct ctx *c)
{
	const char *good = tmp_file(c, "mutate-src.elf"), *bad = tmp_file(c, "mutated.elf");
	struct craft cr = DPU_CRAFT(dpu_syms);
	unsigned char *buf;
	size_t len, loaded = 0, failed_loads = 0;

	if (!craft_elf(c, good, &cr))
		return false;
	EXPECT(read_file(good, &buf, &len), "cannot read %s", good);
	for (size_t i = 0; i < len; i++) {
		struct dpu_program_t *prog = NULL;
		char err[256];
		int ret;

		buf[i] ^= 0xff;
		if (!write_bytes(bad, buf, len)) {
			free(buf);
			return set_why(c, "cannot write %s", bad);
		}
		buf[i] ^= 0xff;
		ret = dpusim_program_load(bad, MRAM_64M, &prog, err, sizeof(err));
		if (ret == 0) {
			/* Whatever loaded must satisfy the invariants. */
			const struct dpusim_symbol *h;

			h = dpusim_program_find(prog, DPUSIM_HEAP_POINTER_NAME);
			for (size_t k = 0; k < prog->nr_symbols; k++) {
				const struct dpusim_symbol *s = &prog->symbols[k];

				if (s->size > MRAM_64M || s->offset > MRAM_64M - s->size) {
					dpusim_program_free(prog);
					free(buf);
					return set_why(c, "byte %zu: '%s' outside MRAM", i, s->name);
				}
			}
			if (!h || h->size != MRAM_64M || !sorted_unique(c, prog)) {
				dpusim_program_free(prog);
				free(buf);
				return set_why(c, "byte %zu: bad heap pointer or order", i);
			}
			dpusim_program_free(prog);
			loaded++;
		} else {
			if (ret > 0 || !err[0] || prog) {
				free(buf);
				return set_why(c, "byte %zu: ret %d without message", i, ret);
			}
			failed_loads++;
		}
	}
	free(buf);
	EXPECT(loaded + failed_loads == len, "counted %zu + %zu of %zu", loaded, failed_loads,
	       len);
	return true;
}

static bool case_directory(struct ctx *c)
{
	return load_fails(c, c->tmpdir, MRAM_64M, -EISDIR, "directory", NULL);
}

/* ---------------------------------------------------------------- API edges */

static bool case_find_unknown(struct ctx *c)
{
	struct craft cr = DPU_CRAFT(dpu_syms);
	const char *path = tmp_file(c, "find.elf");
	struct dpu_program_t *prog;
	bool ok = true;

	if (!craft_elf(c, path, &cr) || !(prog = load_ok(c, path, MRAM_64M)))
		return false;
	if (dpusim_program_find(prog, "no_such_symbol") || dpusim_program_find(prog, "mram") ||
	    dpusim_program_find(prog, "mram_a_") || dpusim_program_find(prog, "") ||
	    dpusim_program_find(prog, NULL) || dpusim_program_find(NULL, "mram_a"))
		ok = set_why(c, "lookup of an unknown name did not return NULL");
	dpusim_program_free(prog);
	dpusim_program_free(NULL);
	return ok;
}

static bool case_error_buffer_edges(struct ctx *c)
{
	const char *path = tmp_file(c, "missing-again");
	struct dpu_program_t *prog = NULL;
	char small[8];
	int ret;

	ret = dpusim_program_load(path, MRAM_64M, &prog, NULL, 0);
	EXPECT(ret == -ENOENT && !prog, "NULL errbuf: ret %d", ret);
	memset(small, 'x', sizeof(small));
	ret = dpusim_program_load(path, MRAM_64M, &prog, small, sizeof(small));
	EXPECT(ret == -ENOENT && !prog, "small errbuf: ret %d", ret);
	EXPECT(memchr(small, '\0', sizeof(small)) != NULL, "small errbuf not NUL-terminated");
	ret = dpusim_program_load(NULL, MRAM_64M, &prog, small, sizeof(small));
	EXPECT(ret == -EINVAL && !prog, "NULL path: ret %d", ret);
	ret = dpusim_program_load(path, MRAM_64M, NULL, NULL, 0);
	EXPECT(ret == -EINVAL, "NULL out: ret %d", ret);
	return true;
}

struct thread_arg {
	const char *path;
	int result;
};

static void *load_thread(void *p)
{
	struct thread_arg *a = p;

	for (int i = 0; i < 20 && a->result == 0; i++) {
		struct dpu_program_t *prog = NULL;
		char err[256];
		const struct dpusim_symbol *s;

		a->result = dpusim_program_load(a->path, MRAM_64M, &prog, err, sizeof(err));
		if (a->result)
			break;
		s = dpusim_program_find(prog, "mram_b");
		if (!s || s->offset != 0x1000)
			a->result = -1;
		dpusim_program_free(prog);
	}
	return NULL;
}

static bool case_concurrent_loads(struct ctx *c)
{
	struct craft cr = DPU_CRAFT(dpu_syms);
	const char *path = tmp_file(c, "threads.elf");
	struct thread_arg args[4];
	pthread_t th[4];

	if (!craft_elf(c, path, &cr))
		return false;
	for (int i = 0; i < 4; i++) {
		args[i].path = path;
		args[i].result = 0;
		EXPECT(pthread_create(&th[i], NULL, load_thread, &args[i]) == 0,
		       "pthread_create failed");
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		EXPECT(args[i].result == 0, "thread %d: result %d", i, args[i].result);
	return true;
}

/* ---------------------------------------------------------------- main */

int main(void)
{
	static struct ctx ctx;
	const char *tmp = getenv("TMPDIR");
	struct ctx *c = &ctx;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(c->tmpdir, sizeof(c->tmpdir), "%s/dpusim-test-program.XXXXXX", tmp);
	if (!mkdtemp(c->tmpdir)) {
		unit_fail("setup", "mkdtemp in %s: %s", tmp, strerror(errno));
		return unit_done();
	}
	/* For the crafting code; the library initialises libelf on its own. */
	if (elf_version(EV_CURRENT) == EV_NONE) {
		unit_fail("setup", "elf_version: %s", elf_errmsg(-1));
		rmdir(c->tmpdir);
		return unit_done();
	}

	/* Threads first, so they are the ones racing to initialise libelf. */
	run_case(c, "concurrent loads from 4 threads", case_concurrent_loads);

	run_case(c, "gcc fixture: cc -c builds", case_rel_build);
	run_case(c, "gcc object: MRAM symbols at hand-computed offsets", case_rel_offsets);
	run_case(c, "gcc object: non-MRAM symbols absent", case_rel_non_mram_absent);
	run_case(c, "gcc object: heap pointer is the whole MRAM", case_rel_heap_pointer);
	run_case(c, "gcc object: symbol ending exactly at MRAM end accepted", case_rel_exact_fit);
	run_case(c, "gcc object: symbol over mram_size rejected", case_rel_symbol_over_mram);
	run_case(c, "gcc fixture: host executable builds", case_exe_build);
	run_case(c, "host executable: offsets from lowest .mram* address", case_exe_offsets);

	run_case(c, "DPU ELF32 LE: symbols, ignored ones, heap override, duplicates",
		 case_dpu_elf32_le);
	run_case(c, "DPU ELF64 BE: same symbols", case_dpu_elf64_be);
	run_case(c, "crafted host ET_EXEC: lowest .mram* section is the base",
		 case_host_exec_lowest_base);
	run_case(c, "no symbol table: only the heap pointer", case_no_symtab);
	run_case(c, "DPU: symbol over mram_size rejected", case_dpu_symbol_over_mram);
	run_case(c, "DPU: symbol ending exactly at MRAM end accepted", case_dpu_symbol_exact_fit);
	run_case(c, "DPU: offset + size overflow rejected", case_dpu_size_overflow);
	run_case(c, "DPU: symbol below MRAM base rejected", case_dpu_below_base);
	run_case(c, "duplicate: two different globals rejected", case_dup_two_globals);
	run_case(c, "duplicate: two different locals load, neither reachable",
		 case_dup_two_locals);
	run_case(c, "duplicate: a global beats two different locals",
		 case_dup_two_locals_one_global);
	run_case(c, "unsupported ELF type (ET_CORE) rejected", case_unsupported_type);

	run_case(c, "missing file rejected", case_missing_file);
	run_case(c, "not-an-ELF file rejected", case_not_elf);
	run_case(c, "empty file rejected", case_empty_file);
	run_case(c, "unsupported ELF class rejected", case_bad_class);
	run_case(c, "unsupported ELF endianness rejected", case_bad_endianness);
	run_case(c, "truncated ELF rejected", case_truncated_elf);
	run_case(c, "directory rejected", case_directory);
	run_case(c, "gcc object: every truncated prefix rejected", case_every_prefix_rejected);
	run_case(c, "crafted DPU ELF: each corrupted byte loads or fails cleanly",
		 case_corrupted_bytes_survive);

	run_case(c, "lookup of unknown name returns NULL", case_find_unknown);
	run_case(c, "error buffer NULL/small, NULL arguments", case_error_buffer_edges);

	for (size_t i = 0; i < c->nr_files; i++)
		unlink(c->files[i]);
	if (rmdir(c->tmpdir) != 0)
		fprintf(stderr, "test_program: cannot remove %s: %s\n", c->tmpdir,
			strerror(errno));

	return unit_done();
}

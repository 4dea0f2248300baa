// SPDX-License-Identifier: MIT
/*
 * program.c - read the MRAM symbols of a DPU program with libelf.
 * The rules are documented in program.h.
 */
#include "program.h"

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
#include <unistd.h>

/* ---------------------------------------------------------------- libelf */

static pthread_once_t elf_init_once = PTHREAD_ONCE_INIT;
/* Written once, under pthread_once, read-only afterwards. */
static bool elf_init_ok;

static void elf_init(void)
{
	elf_init_ok = elf_version(EV_CURRENT) != EV_NONE;
}

/* ---------------------------------------------------------------- loader */

enum layout {
	LAYOUT_DPU,  /* UPMEM DPU executable: value - DPUSIM_DPU_MRAM_BASE */
	LAYOUT_REL,  /* relocatable object: section base + value */
	LAYOUT_HOST, /* other executable: value - lowest MRAM section address */
	LAYOUT_DPUSIM, /* dpusim-cc program: MRAM and WRAM at fixed bases */
};

struct section_info {
	const char *name; /* in libelf's memory, valid until elf_end */
	bool mram;
	bool wram; /* LAYOUT_DPUSIM only */
	uint64_t rel_base; /* LAYOUT_REL: offset of the section in MRAM */
	GElf_Shdr sh;
};

/* A kept symbol before duplicates are resolved. */
struct candidate {
	char *name; /* owned */
	uint64_t offset;
	uint64_t size;
	int rank; /* 0 local, 1 weak, 2 global, 3 the heap pointer */
	const char *section; /* for messages */
	enum dpusim_mem_kind mem;
};

struct loader {
	const char *path;
	uint64_t mram_size;
	char *errbuf;
	size_t errlen;

	int fd;
	uint64_t file_size;
	Elf *elf;
	GElf_Ehdr ehdr;
	enum layout layout;
	uint64_t host_base;

	size_t shnum;
	size_t shstrndx;
	struct section_info *secs;

	struct candidate *cands;
	size_t nr_cands;
	size_t cap_cands;

	/* LAYOUT_DPUSIM */
	struct dpusim_program_desc desc;
	uint64_t heap_offset;	/* __sys_used_mram_end - MRAM base */
};

__attribute__((format(printf, 3, 4))) static int fail(struct loader *ld, int err,
							 const char *fmt, ...)
{
	if (ld->errbuf && ld->errlen) {
		int n = snprintf(ld->errbuf, ld->errlen, "%s: ", ld->path);
		va_list ap;

		if (n < 0)
			n = 0;
		if ((size_t)n < ld->errlen) {
			va_start(ap, fmt);
			vsnprintf(ld->errbuf + n, ld->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return err;
}

static const char *elf_msg(void)
{
	const char *m = elf_errmsg(-1);

	return m ? m : "unknown libelf error";
}

static int add_candidate(struct loader *ld, const char *name, uint64_t offset,
			 uint64_t size, int rank, const char *section,
			 enum dpusim_mem_kind mem)
{
	struct candidate *c;
	char *copy;

	if (ld->nr_cands == ld->cap_cands) {
		size_t cap = ld->cap_cands ? ld->cap_cands * 2 : 16;
		struct candidate *n;

		if (cap < ld->cap_cands || cap > SIZE_MAX / sizeof(*n))
			return fail(ld, -ENOMEM, "too many symbols");
		n = realloc(ld->cands, cap * sizeof(*n));
		if (!n)
			return fail(ld, -ENOMEM, "out of memory reading symbols");
		ld->cands = n;
		ld->cap_cands = cap;
	}
	copy = strdup(name);
	if (!copy)
		return fail(ld, -ENOMEM, "out of memory reading symbols");
	c = &ld->cands[ld->nr_cands++];
	c->name = copy;
	c->offset = offset;
	c->size = size;
	c->rank = rank;
	c->section = section;
	c->mem = mem;
	return 0;
}

/* Reads e_ident by hand so the messages can say what is wrong. */
static int check_ident(struct loader *ld)
{
	unsigned char id[EI_NIDENT];
	ssize_t n;

	n = pread(ld->fd, id, sizeof(id), 0);
	if (n < 0)
		return fail(ld, -errno, "cannot read: %s", strerror(errno));
	if (n < SELFMAG || memcmp(id, ELFMAG, SELFMAG) != 0)
		return fail(ld, -ENOEXEC, "not an ELF file (bad magic)");
	if (n < EI_NIDENT)
		return fail(ld, -ENOEXEC, "truncated ELF identification");
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
		return fail(ld, -ENOEXEC, "unsupported ELF class %u (not ELFCLASS32 or ELFCLASS64)",
			    id[EI_CLASS]);
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)
		return fail(ld, -ENOEXEC,
			    "unsupported ELF data encoding %u (not little or big endian)",
			    id[EI_DATA]);
	if (id[EI_VERSION] != EV_CURRENT)
		return fail(ld, -ENOEXEC, "unsupported ELF version %u", id[EI_VERSION]);
	return 0;
}

static int open_elf(struct loader *ld)
{
	struct stat st;
	int ret;

	ld->fd = open(ld->path, O_RDONLY | O_CLOEXEC);
	if (ld->fd < 0)
		return fail(ld, -errno, "cannot open: %s", strerror(errno));
	if (fstat(ld->fd, &st) < 0)
		return fail(ld, -errno, "cannot stat: %s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail(ld, -EISDIR, "is a directory, not an ELF file");
	if (!S_ISREG(st.st_mode))
		return fail(ld, -EINVAL, "not a regular file");
	ld->file_size = (uint64_t)st.st_size;
	ret = check_ident(ld);
	if (ret)
		return ret;
	ld->elf = elf_begin(ld->fd, ELF_C_READ, NULL);
	if (!ld->elf)
		return fail(ld, -ENOEXEC, "cannot read ELF: %s", elf_msg());
	if (elf_kind(ld->elf) != ELF_K_ELF)
		return fail(ld, -ENOEXEC, "not a valid ELF file");
	if (!gelf_getehdr(ld->elf, &ld->ehdr))
		return fail(ld, -ENOEXEC, "cannot read ELF header: %s", elf_msg());

	switch (ld->ehdr.e_type) {
	case ET_REL:
		ld->layout = LAYOUT_REL;
		break;
	case ET_EXEC:
	case ET_DYN:
		ld->layout = ld->ehdr.e_machine == DPUSIM_EM_DPU ? LAYOUT_DPU : LAYOUT_HOST;
		break;
	default:
		return fail(ld, -ENOEXEC,
			    "unsupported ELF type %u (not a relocatable object, an executable or a shared object)",
			    (unsigned int)ld->ehdr.e_type);
	}
	return 0;
}

static bool is_wram_section(const GElf_Shdr *sh, const char *name)
{
	if (sh->sh_type != SHT_PROGBITS && sh->sh_type != SHT_NOBITS)
		return false;
	return strncmp(name, DPUSIM_WRAM_SECTION_PREFIX,
		       sizeof(DPUSIM_WRAM_SECTION_PREFIX) - 1) == 0;
}

/* Largest WRAM a dpusim program may ask for (the module's upper bound). */
#define DPUSIM_MAX_WRAM_BYTES (1ULL << 20)

/*
 * LAYOUT_DPUSIM: a section of a memory must lie in [base, base + limit);
 * -ENOEXEC with a message otherwise.
 */
static int check_base(struct loader *ld, const struct section_info *si,
		      uint64_t base, uint64_t limit)
{
	const GElf_Shdr *sh = &si->sh;

	if (sh->sh_addr < base || sh->sh_addr - base > limit ||
	    sh->sh_size > limit - (sh->sh_addr - base))
		return fail(ld, -ENOEXEC,
			    "section '%s' at 0x%" PRIx64 " (%" PRIu64
			    " bytes) is outside the DPU memory at 0x%" PRIx64 " (%" PRIu64
			    " bytes)",
			    si->name, (uint64_t)sh->sh_addr, (uint64_t)sh->sh_size, base, limit);
	return 0;
}

/* The DPUSIM_PROGRAM_SECTION of a dpusim-cc program: switch to LAYOUT_DPUSIM. */
static int read_desc(struct loader *ld, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data;

	if (ld->ehdr.e_machine == DPUSIM_EM_DPU)
		return 0;
	if (ld->ehdr.e_type != ET_EXEC || ld->ehdr.e_machine != EM_X86_64)
		return fail(ld, -ENOEXEC,
			    "has a %s section but is not an x86-64 executable (rebuild it with dpusim-cc)",
			    DPUSIM_PROGRAM_SECTION);
	data = elf_getdata(scn, NULL);
	if (sh->sh_type != SHT_PROGBITS || !data || !data->d_buf ||
	    data->d_size < sizeof(ld->desc))
		return fail(ld, -ENOEXEC, "malformed %s section", DPUSIM_PROGRAM_SECTION);
	memcpy(&ld->desc, data->d_buf, sizeof(ld->desc));
	if (ld->desc.magic != DPUSIM_PROGRAM_MAGIC ||
	    ld->desc.version != DPUSIM_PROGRAM_VERSION)
		return fail(ld, -ENOEXEC,
			    "%s section: magic 0x%x version %u, this libdpusim reads version %u (rebuild the program with this dpusim's dpusim-cc)",
			    DPUSIM_PROGRAM_SECTION, ld->desc.magic, ld->desc.version,
			    DPUSIM_PROGRAM_VERSION);
	if (ld->desc.nr_tasklets < 1 || ld->desc.nr_tasklets > DPUSIM_MAX_TASKLETS)
		return fail(ld, -ENOEXEC, "NR_TASKLETS %u is not in 1..%u",
			    ld->desc.nr_tasklets, DPUSIM_MAX_TASKLETS);
	ld->layout = LAYOUT_DPUSIM;
	return 0;
}

static bool is_mram_section(const GElf_Shdr *sh, const char *name)
{
	if (sh->sh_type != SHT_PROGBITS && sh->sh_type != SHT_NOBITS)
		return false;
	return strncmp(name, DPUSIM_MRAM_SECTION_PREFIX,
		       sizeof(DPUSIM_MRAM_SECTION_PREFIX) - 1) == 0;
}

/* Names the sections, finds the MRAM ones and places them (program.h). */
static int scan_sections(struct loader *ld)
{
	uint64_t cursor = 0;
	bool have_mram = false;
	size_t i;

	size_t shentsize = gelf_fsize(ld->elf, ELF_T_SHDR, 1, EV_CURRENT);

	/*
	 * libelf reports 0 sections when the section header table lies past
	 * the end of the file; a truncated file must not load as "no symbols".
	 */
	if (ld->ehdr.e_shoff == 0) {
		if (ld->ehdr.e_shnum != 0)
			return fail(ld, -ENOEXEC, "%u section headers but no section header table",
				    (unsigned int)ld->ehdr.e_shnum);
		return 0;
	}
	if (shentsize == 0 || ld->ehdr.e_shentsize != shentsize)
		return fail(ld, -ENOEXEC, "bad section header size %u",
			    (unsigned int)ld->ehdr.e_shentsize);
	if (ld->ehdr.e_shoff > ld->file_size ||
	    (ld->file_size - ld->ehdr.e_shoff) / shentsize < 1 ||
	    (ld->file_size - ld->ehdr.e_shoff) / shentsize < ld->ehdr.e_shnum)
		return fail(ld, -ENOEXEC,
			    "truncated: section header table at 0x%" PRIx64
			    " lies beyond the end of the file (%" PRIu64 " bytes)",
			    (uint64_t)ld->ehdr.e_shoff, ld->file_size);
	if (elf_getshdrnum(ld->elf, &ld->shnum) != 0)
		return fail(ld, -ENOEXEC, "cannot read section headers: %s", elf_msg());
	if (ld->shnum > (ld->file_size - ld->ehdr.e_shoff) / shentsize)
		return fail(ld, -ENOEXEC, "truncated: %zu section headers do not fit in the file",
			    ld->shnum);
	if (ld->shnum == 0)
		return 0;
	if (elf_getshdrstrndx(ld->elf, &ld->shstrndx) != 0)
		return fail(ld, -ENOEXEC, "cannot find section name table: %s", elf_msg());
	ld->secs = calloc(ld->shnum, sizeof(*ld->secs));
	if (!ld->secs)
		return fail(ld, -ENOMEM, "out of memory for %zu sections", ld->shnum);

	for (i = 1; i < ld->shnum; i++) {
		struct section_info *si = &ld->secs[i];
		Elf_Scn *scn = elf_getscn(ld->elf, i);

		if (!scn || !gelf_getshdr(scn, &si->sh))
			return fail(ld, -ENOEXEC, "cannot read section header %zu: %s", i,
				    elf_msg());
		si->name = elf_strptr(ld->elf, ld->shstrndx, si->sh.sh_name);
		if (!si->name)
			return fail(ld, -ENOEXEC, "section %zu has an invalid name: %s", i,
				    elf_msg());
		if (strcmp(si->name, DPUSIM_PROGRAM_SECTION) == 0) {
			int ret = read_desc(ld, scn, &si->sh);

			if (ret)
				return ret;
		}
	}

	for (i = 1; i < ld->shnum; i++) {
		struct section_info *si = &ld->secs[i];
		const GElf_Shdr sh = si->sh;

		si->mram = is_mram_section(&sh, si->name);
		if (ld->layout == LAYOUT_DPUSIM) {
			int ret = 0;

			si->wram = !si->mram && is_wram_section(&sh, si->name);
			if (si->wram)
				ret = check_base(ld, si, DPUSIM_DPU_WRAM_BASE,
						 DPUSIM_MAX_WRAM_BYTES);
			else if (si->mram)
				ret = check_base(ld, si, DPUSIM_DPU_MRAM_BASE, ld->mram_size);
			if (ret)
				return ret;
		}
		if (!si->mram)
			continue;

		if (ld->layout == LAYOUT_REL) {
			uint64_t align = sh.sh_addralign > 8 ? sh.sh_addralign : 8;
			uint64_t rem = cursor % align;

			if (rem && cursor > UINT64_MAX - (align - rem))
				return fail(ld, -ERANGE, "section '%s' does not fit in MRAM",
					    si->name);
			if (rem)
				cursor += align - rem;
			si->rel_base = cursor;
			if (sh.sh_size > UINT64_MAX - cursor)
				return fail(ld, -ERANGE, "section '%s' does not fit in MRAM",
					    si->name);
			cursor += sh.sh_size;
		} else if (ld->layout == LAYOUT_HOST) {
			if (!have_mram || sh.sh_addr < ld->host_base)
				ld->host_base = sh.sh_addr;
		}
		have_mram = true;
	}
	return 0;
}

static int symbol_rank(unsigned char bind)
{
	switch (bind) {
	case STB_LOCAL:
		return 0;
	case STB_WEAK:
		return 1;
	case STB_GLOBAL:
		return 2;
	default:
		return -1;
	}
}

/* The MRAM offset of sym (in MRAM section si), range-checked. */
static int symbol_offset(struct loader *ld, const char *name, const struct section_info *si,
			 const GElf_Sym *sym, uint64_t *offset)
{
	uint64_t off;

	switch (ld->layout) {
	case LAYOUT_DPUSIM:
		if (si->wram) {
			/* within the section: checked by check_base */
			if (sym->st_value < DPUSIM_DPU_WRAM_BASE ||
			    sym->st_value - DPUSIM_DPU_WRAM_BASE > DPUSIM_MAX_WRAM_BYTES ||
			    sym->st_size > DPUSIM_MAX_WRAM_BYTES -
					   (sym->st_value - DPUSIM_DPU_WRAM_BASE))
				return fail(ld, -ERANGE,
					    "symbol '%s' in section '%s' (address 0x%" PRIx64
					    ", size %" PRIu64 ") is outside WRAM",
					    name, si->name, (uint64_t)sym->st_value,
					    (uint64_t)sym->st_size);
			*offset = sym->st_value - DPUSIM_DPU_WRAM_BASE;
			return 0;
		}
		/* MRAM: as in a UPMEM executable */
		__attribute__((fallthrough));
	case LAYOUT_DPU:
		if (sym->st_value < DPUSIM_DPU_MRAM_BASE)
			return fail(ld, -ERANGE,
				    "symbol '%s' in section '%s' has address 0x%" PRIx64
				    ", below the DPU MRAM base 0x%llx",
				    name, si->name, (uint64_t)sym->st_value, DPUSIM_DPU_MRAM_BASE);
		off = sym->st_value - DPUSIM_DPU_MRAM_BASE;
		break;
	case LAYOUT_REL:
		if (sym->st_value > UINT64_MAX - si->rel_base)
			return fail(ld, -ERANGE,
				    "symbol '%s' in section '%s': offset overflows", name,
				    si->name);
		off = si->rel_base + sym->st_value;
		break;
	case LAYOUT_HOST:
	default:
		if (sym->st_value < ld->host_base)
			return fail(ld, -ERANGE,
				    "symbol '%s' in section '%s' has address 0x%" PRIx64
				    ", below the lowest MRAM section address 0x%" PRIx64,
				    name, si->name, (uint64_t)sym->st_value, ld->host_base);
		off = sym->st_value - ld->host_base;
		break;
	}
	if (sym->st_size > ld->mram_size || off > ld->mram_size - sym->st_size)
		return fail(ld, -ERANGE,
			    "symbol '%s' in section '%s' (offset 0x%" PRIx64 ", size %" PRIu64
			    ") does not fit in MRAM of %" PRIu64 " bytes",
			    name, si->name, off, (uint64_t)sym->st_size, ld->mram_size);
	*offset = off;
	return 0;
}

static Elf_Scn *find_section(struct loader *ld, GElf_Word type, size_t link, bool match_link)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(ld->elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == type && (!match_link || sh.sh_link == link))
			return scn;
	}
	return NULL;
}

static int read_symbols(struct loader *ld)
{
	size_t symndx, nsyms, fsize, i;
	Elf_Data *data, *xdata = NULL;
	Elf_Scn *scn, *xscn;
	GElf_Shdr sh;

	if (ld->shnum == 0)
		return 0;
	scn = find_section(ld, SHT_SYMTAB, 0, false);
	if (!scn)
		scn = find_section(ld, SHT_DYNSYM, 0, false);
	if (!scn)
		return 0; /* stripped: only the heap pointer */
	symndx = elf_ndxscn(scn);
	if (!gelf_getshdr(scn, &sh))
		return fail(ld, -ENOEXEC, "cannot read symbol table header: %s", elf_msg());
	if (sh.sh_link == 0 || sh.sh_link >= ld->shnum)
		return fail(ld, -ENOEXEC, "symbol table '%s' has no valid string table",
			    ld->secs[symndx].name);
	fsize = gelf_fsize(ld->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (fsize == 0)
		return fail(ld, -ENOEXEC, "cannot size symbols: %s", elf_msg());
	if (sh.sh_size == 0)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return fail(ld, -ENOEXEC, "cannot read symbol table '%s': %s",
			    ld->secs[symndx].name, elf_msg());
	nsyms = sh.sh_size / fsize;

	xscn = find_section(ld, SHT_SYMTAB_SHNDX, symndx, true);
	if (xscn) {
		xdata = elf_getdata(xscn, NULL);
		if (!xdata)
			return fail(ld, -ENOEXEC, "cannot read extended section indexes: %s",
				    elf_msg());
	}

	for (i = 1; i < nsyms; i++) {
		const struct section_info *si;
		unsigned char type, bind;
		uint64_t offset = 0;
		const char *name;
		size_t shndx;
		GElf_Sym sym;
		int rank, ret;

		if (!gelf_getsym(data, (int)i, &sym))
			return fail(ld, -ENOEXEC, "cannot read symbol %zu of '%s': %s", i,
				    ld->secs[symndx].name, elf_msg());
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if (ld->layout == LAYOUT_DPUSIM && sym.st_name &&
		    sym.st_shndx != SHN_UNDEF) {
			name = elf_strptr(ld->elf, sh.sh_link, sym.st_name);
			if (name && strcmp(name, DPUSIM_HEAP_POINTER_NAME) == 0) {
				if (sym.st_value < DPUSIM_DPU_MRAM_BASE ||
				    sym.st_value - DPUSIM_DPU_MRAM_BASE > ld->mram_size)
					return fail(ld, -ERANGE,
						    "%s at 0x%" PRIx64 " is outside MRAM",
						    name, (uint64_t)sym.st_value);
				ld->heap_offset = sym.st_value - DPUSIM_DPU_MRAM_BASE;
				continue;
			}
		}
		if ((type != STT_OBJECT && type != STT_NOTYPE) || sym.st_size == 0)
			continue;
		rank = symbol_rank(bind);
		if (rank < 0 || sym.st_name == 0)
			continue;

		shndx = sym.st_shndx;
		if (sym.st_shndx == SHN_XINDEX) {
			if (!xdata || xdata->d_buf == NULL ||
			    (i + 1) * sizeof(Elf32_Word) > xdata->d_size)
				return fail(ld, -ENOEXEC,
					    "symbol %zu uses SHN_XINDEX without a valid SHT_SYMTAB_SHNDX section",
					    i);
			shndx = ((const Elf32_Word *)xdata->d_buf)[i];
		} else if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE) {
			continue;
		}
		if (shndx >= ld->shnum || !(ld->secs[shndx].mram || ld->secs[shndx].wram))
			continue;
		si = &ld->secs[shndx];

		name = elf_strptr(ld->elf, sh.sh_link, sym.st_name);
		if (!name)
			return fail(ld, -ENOEXEC, "symbol %zu in section '%s' has an invalid name: %s",
				    i, si->name, elf_msg());
		if (name[0] == '\0' || strcmp(name, DPUSIM_HEAP_POINTER_NAME) == 0)
			continue;

		ret = symbol_offset(ld, name, si, &sym, &offset);
		if (ret)
			return ret;
		ret = add_candidate(ld, name, offset, sym.st_size, rank, si->name,
				    si->wram ? DPUSIM_SYM_WRAM : DPUSIM_SYM_MRAM);
		if (ret)
			return ret;
	}
	return 0;
}

static int cmp_candidate(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1; /* highest rank first */
	if (x->mem != y->mem)
		return x->mem < y->mem ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return 0;
}

static const char *rank_name(int rank)
{
	static const char *const names[] = { "local", "weak", "global", "built-in" };

	return rank >= 0 && rank <= 3 ? names[rank] : "?";
}

/*
 * Sorts the candidates and keeps one per name (program.h, "Duplicate
 * names"); the dropped ones have their name freed and set to NULL.
 */
static int resolve_duplicates(struct loader *ld, size_t *nr_kept)
{
	size_t i = 0, kept = 0;

	if (ld->nr_cands > 1)
		qsort(ld->cands, ld->nr_cands, sizeof(*ld->cands), cmp_candidate);
	while (i < ld->nr_cands) {
		struct candidate *top = &ld->cands[i];
		size_t j = i + 1;

		bool ambiguous = false;

		for (; j < ld->nr_cands && strcmp(ld->cands[j].name, top->name) == 0; j++) {
			struct candidate *c = &ld->cands[j];

			if (c->rank != top->rank ||
			    (c->offset == top->offset && c->size == top->size && c->mem == top->mem))
				continue;
			/*
			 * Two file-static variables of one name in two files
			 * are legal C: the program loads, and the name reaches
			 * neither (which one the host meant is unknowable).
			 */
			if (top->rank == 0)
				ambiguous = true;
			else
				return fail(ld, -EEXIST,
					    "conflicting definitions of %s symbol '%s': offset 0x%" PRIx64
					    " size %" PRIu64 " in section '%s' and offset 0x%" PRIx64
					    " size %" PRIu64 " in section '%s'",
					    rank_name(top->rank), top->name, top->offset, top->size,
					    top->section, c->offset, c->size, c->section);
		}
		for (size_t k = ambiguous ? i : i + 1; k < j; k++) {
			free(ld->cands[k].name);
			ld->cands[k].name = NULL;
		}
		if (!ambiguous)
			kept++;
		i = j;
	}
	*nr_kept = kept;
	return 0;
}

static void loader_release(struct loader *ld)
{
	for (size_t i = 0; i < ld->nr_cands; i++)
		free(ld->cands[i].name);
	free(ld->cands);
	free(ld->secs);
	if (ld->elf)
		elf_end(ld->elf);
	if (ld->fd >= 0)
		close(ld->fd);
}

/* Copies the bytes of a PROGBITS section into dst (sh_size bytes). */
static int copy_section(struct loader *ld, const struct section_info *si, size_t idx,
			uint8_t *dst)
{
	Elf_Scn *scn = elf_getscn(ld->elf, idx);
	Elf_Data *data = NULL;

	if (!scn)
		return fail(ld, -ENOEXEC, "cannot read section '%s': %s", si->name, elf_msg());
	while ((data = elf_getdata(scn, data)) != NULL) {
		if (!data->d_buf || !data->d_size)
			continue;
		if (data->d_off < 0 || (uint64_t)data->d_off > si->sh.sh_size ||
		    data->d_size > si->sh.sh_size - (uint64_t)data->d_off)
			return fail(ld, -ENOEXEC, "section '%s': malformed data", si->name);
		memcpy(dst + data->d_off, data->d_buf, data->d_size);
	}
	return 0;
}

/* LAYOUT_DPUSIM: the initial WRAM image and the MRAM contents. */
static int read_images(struct loader *ld, struct dpu_program_t *prog)
{
	uint64_t wram_end = 0;
	size_t i, nsegs = 0;
	int ret;

	for (i = 1; i < ld->shnum; i++) {
		const struct section_info *si = &ld->secs[i];
		uint64_t end;

		if (si->wram) {
			end = si->sh.sh_addr + si->sh.sh_size - DPUSIM_DPU_WRAM_BASE;
			if (end > wram_end)
				wram_end = end;
		} else if (si->mram && si->sh.sh_type == SHT_PROGBITS && si->sh.sh_size &&
			   strncmp(si->name, ".mram.noinit", 12) != 0) {
			nsegs++;
		}
	}
	prog->runnable = true;
	prog->nr_tasklets = ld->desc.nr_tasklets;
	prog->wram_used = (wram_end + 7) & ~7ULL;
	prog->wram_image = calloc(1, prog->wram_used ? prog->wram_used : 1);
	prog->mram_segs = calloc(nsegs ? nsegs : 1, sizeof(*prog->mram_segs));
	if (!prog->wram_image || !prog->mram_segs)
		return fail(ld, -ENOMEM, "out of memory");
	for (i = 1; i < ld->shnum; i++) {
		const struct section_info *si = &ld->secs[i];
		struct dpusim_segment *seg;

		if (si->sh.sh_type != SHT_PROGBITS || !si->sh.sh_size)
			continue;
		if (si->wram) {
			ret = copy_section(ld, si, i, prog->wram_image +
					   (si->sh.sh_addr - DPUSIM_DPU_WRAM_BASE));
			if (ret)
				return ret;
			continue;
		}
		if (!si->mram || strncmp(si->name, ".mram.noinit", 12) == 0)
			continue;
		seg = &prog->mram_segs[prog->nr_mram_segs];
		seg->offset = si->sh.sh_addr - DPUSIM_DPU_MRAM_BASE;
		seg->size = si->sh.sh_size;
		seg->data = calloc(1, seg->size);
		if (!seg->data)
			return fail(ld, -ENOMEM, "out of memory");
		prog->nr_mram_segs++;
		ret = copy_section(ld, si, i, seg->data);
		if (ret)
			return ret;
	}
	return 0;
}

int dpusim_program_load(const char *path, uint64_t mram_size, struct dpu_program_t **out,
			char *errbuf, size_t errlen)
{
	struct loader ld = {
		.path = path ? path : "(null)",
		.mram_size = mram_size,
		.errbuf = errbuf,
		.errlen = errlen,
		.fd = -1,
	};
	struct dpu_program_t *prog = NULL;
	size_t nr_kept = 0, k = 0;
	int ret;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!path || !out) {
		ret = fail(&ld, -EINVAL, "invalid argument (NULL path or output)");
		goto out;
	}
	pthread_once(&elf_init_once, elf_init);
	if (!elf_init_ok) {
		ret = fail(&ld, -ENOSYS, "libelf does not support EV_CURRENT: %s", elf_msg());
		goto out;
	}

	ret = open_elf(&ld);
	if (ret)
		goto out;
	ret = scan_sections(&ld);
	if (ret)
		goto out;
	ret = read_symbols(&ld);
	if (ret)
		goto out;
	ret = add_candidate(&ld, DPUSIM_HEAP_POINTER_NAME, ld.heap_offset,
			    mram_size - ld.heap_offset, 3, "(built-in)", DPUSIM_SYM_MRAM);
	if (ret)
		goto out;
	ret = resolve_duplicates(&ld, &nr_kept);
	if (ret)
		goto out;

	prog = calloc(1, sizeof(*prog));
	if (!prog) {
		ret = fail(&ld, -ENOMEM, "out of memory");
		goto out;
	}
	prog->exec_fd = -1;
	prog->machine = ld.ehdr.e_machine;
	prog->path = strdup(path);
	prog->symbols = calloc(nr_kept, sizeof(*prog->symbols));
	if (!prog->path || !prog->symbols) {
		ret = fail(&ld, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ld.nr_cands; i++) {
		struct candidate *c = &ld.cands[i];

		if (!c->name)
			continue;
		prog->symbols[k].name = c->name;
		prog->symbols[k].offset = c->offset;
		prog->symbols[k].size = c->size;
		prog->symbols[k].mem = c->mem;
		c->name = NULL; /* now owned by prog */
		k++;
	}
	prog->nr_symbols = k;
	if (ld.layout == LAYOUT_DPUSIM) {
		ret = read_images(&ld, prog);
		if (ret)
			goto out;
	}
	*out = prog;
	prog = NULL;
	ret = 0;
out:
	dpusim_program_free(prog);
	loader_release(&ld);
	return ret;
}

static int cmp_key_symbol(const void *key, const void *elem)
{
	const struct dpusim_symbol *s = elem;

	return strcmp(key, s->name);
}

const struct dpusim_symbol *dpusim_program_find(const struct dpu_program_t *prog,
						const char *name)
{
	if (!prog || !name || !prog->symbols)
		return NULL;
	return bsearch(name, prog->symbols, prog->nr_symbols, sizeof(*prog->symbols),
		       cmp_key_symbol);
}

void dpusim_program_free(struct dpu_program_t *prog)
{
	if (!prog)
		return;
	if (prog->symbols) {
		for (size_t i = 0; i < prog->nr_symbols; i++)
			free(prog->symbols[i].name);
		free(prog->symbols);
	}
	for (size_t i = 0; i < prog->nr_mram_segs; i++)
		free(prog->mram_segs[i].data);
	free(prog->mram_segs);
	free(prog->wram_image);
	if (prog->exec_fd >= 0)
		close(prog->exec_fd);
	free(prog->path);
	free(prog);
}

/* SPDX-License-Identifier: MIT */
/*
 * program.h - MRAM symbol table of a DPU program (what dpu_load reads).
 *
 * Internal to libdpusim. dpusim_program_load() reads an ELF file with libelf
 * and keeps only its MRAM symbols: name, byte offset in a DPU's MRAM, size.
 *
 * Which symbols are MRAM symbols
 *   A symbol-table entry (SHT_SYMTAB; SHT_DYNSYM if the file has no
 *   SHT_SYMTAB) is kept when all of these hold:
 *   - it has a non-empty name;
 *   - its type is STT_OBJECT or STT_NOTYPE, and its size is not 0 (sizeless
 *     symbols are labels or linker markers such as crtend's __TMC_END__,
 *     nothing host code can transfer to); STT_FUNC, STT_SECTION, STT_FILE,
 *     STT_TLS, ... are ignored;
 *   - its binding is STB_LOCAL, STB_GLOBAL or STB_WEAK;
 *   - it is defined in an "MRAM section": a section of type SHT_PROGBITS or
 *     SHT_NOBITS whose name starts with ".mram" (".mram", ".mram.noinit",
 *     ".mram.keep", ...). SHN_UNDEF, SHN_ABS, SHN_COMMON and other reserved
 *     indexes are never MRAM sections; SHN_XINDEX is resolved through
 *     SHT_SYMTAB_SHNDX.
 *   Everything else is ignored. A file without a symbol table loads and
 *   has only the heap pointer symbol below.
 *
 * MRAM offset of a kept symbol, by kind of file
 *   - UPMEM DPU executable (e_machine == EM_DPU (245), ET_EXEC or ET_DYN):
 *     the DPU linker maps MRAM at address 0x08000000, so
 *     offset = st_value - 0x08000000 (a value below that base is an error).
 *   - Relocatable object (ET_REL, any machine, e.g. `gcc -c` of a file with
 *     __attribute__((section(".mram"))) variables): every section address is
 *     0, so the MRAM sections are laid out one after another in section-index
 *     order, each starting at the next multiple of max(8, sh_addralign),
 *     from offset 0; offset = that section's base + st_value.
 *   - Any other ET_EXEC / ET_DYN (a host-linked executable or shared object):
 *     offset = st_value - (lowest sh_addr among its MRAM sections).
 *   Other ELF types (ET_CORE, ...) are rejected.
 *
 * The heap pointer
 *   DPUSIM_HEAP_POINTER_NAME ("__sys_used_mram_end", UPMEM's
 *   DPU_MRAM_HEAP_POINTER_NAME) always exists and names the whole MRAM:
 *   offset 0, size mram_size. Any symbol of that name in the file is ignored.
 *
 * Errors (return value, errbuf gets "<path>: <what>" naming the section /
 * symbol concerned)
 *   -ENOENT, -EACCES, ...  the file cannot be opened (errno of open/fstat)
 *   -EISDIR / -EINVAL      the path is a directory / not a regular file
 *   -ENOEXEC               not an ELF file (or an ar archive), unsupported
 *                          ELF class, data encoding or version, unsupported
 *                          e_type, or a malformed ELF (truncated file or
 *                          headers, bad section or symbol table)
 *   -ERANGE                a kept symbol's offset + size exceeds mram_size,
 *                          overflows, or lies below the DPU MRAM base
 *   -EEXIST                conflicting definitions of one name (see below)
 *   -ENOMEM                out of memory
 *   -EINVAL                NULL path or out
 *
 * Duplicate names
 *   Bindings rank LOCAL < WEAK < GLOBAL; the definitions of the highest rank
 *   win and the lower ones are dropped (a global beats a static of the same
 *   name, as the linker would). If several definitions share the highest
 *   rank they must be identical (same offset and size; they are merged),
 *   otherwise the load fails with -EEXIST naming the symbol and both
 *   locations: host code could not tell which one it addresses.  Locals
 *   are the exception: two file-static variables of one name in two files
 *   of a program are legal C, so the program loads and that name is in no
 *   symbol table entry (the host reaches neither; UPMEM's SDK keeps every
 *   definition and its lookup returns whichever comes first in the ELF).
 *
 * Thread safety: no global mutable state; elf_version() is called once via
 * pthread_once. A loaded program is immutable and may be shared by threads.
 */
#ifndef DPUSIM_PROGRAM_H
#define DPUSIM_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* UPMEM's ELF machine number for DPU code (llvm EM_DPU). */
#define DPUSIM_EM_DPU 245
/* Address at which the DPU linker maps MRAM (lld's MRAM_SECTION_OFFSET). */
#define DPUSIM_DPU_MRAM_BASE 0x08000000ULL
/* Same string as UPMEM's DPU_MRAM_HEAP_POINTER_NAME. */
#define DPUSIM_HEAP_POINTER_NAME "__sys_used_mram_end"
/* Prefix of the names of MRAM sections. */
#define DPUSIM_MRAM_SECTION_PREFIX ".mram"

/*
 * dpusim DPU programs (built by tools/dpusim-cc, run by dpu_launch): an
 * x86-64 executable with a section DPUSIM_PROGRAM_SECTION holding struct
 * dpusim_program_desc. Their layout (see /include/dpurt and lib/dpurt):
 *   - WRAM: sections named ".dpu_wram*" at DPUSIM_DPU_WRAM_BASE and up; a
 *     symbol there is a WRAM symbol, offset = address - the base. The
 *     initial image (PROGBITS contents, NOBITS zeros) is wram_image.
 *   - MRAM: sections ".mram*" at DPUSIM_DPU_MRAM_BASE and up; PROGBITS
 *     ones other than ".mram.noinit*" are written at load (mram_segs).
 *   - DPUSIM_HEAP_POINTER_NAME is the linker's symbol: the end of the MRAM
 *     sections, size = mram_size - offset.
 * Any other file keeps the rules above (MRAM symbols only) and cannot run.
 */
#define DPUSIM_PROGRAM_SECTION ".dpusim.program"
#define DPUSIM_PROGRAM_MAGIC 0x53555044u /* "DPUS" */
#define DPUSIM_PROGRAM_VERSION 1u
#define DPUSIM_DPU_WRAM_BASE 0x06000000ULL
#define DPUSIM_WRAM_SECTION_PREFIX ".dpu_wram"
#define DPUSIM_MAX_TASKLETS 24u

struct dpusim_program_desc {
	uint32_t magic;
	uint32_t version;
	uint32_t nr_tasklets;
	uint32_t reserved;
};

enum dpusim_mem_kind {
	DPUSIM_SYM_MRAM,
	DPUSIM_SYM_WRAM,
};

struct dpusim_symbol {
	char *name;
	uint64_t offset;	/* in the memory below */
	uint64_t size;
	enum dpusim_mem_kind mem;
};

/* Initial contents of part of MRAM. */
struct dpusim_segment {
	uint64_t offset;
	uint64_t size;
	uint8_t *data;		/* size bytes */
};

struct dpu_program_t {
	size_t nr_symbols;
	struct dpusim_symbol *symbols; /* sorted by strcmp(name), unique names */
	char *path;                    /* copy of the path given to load */
	uint16_t machine;              /* e_machine */

	/* dpusim DPU programs only */
	bool runnable;
	uint32_t nr_tasklets;
	uint64_t wram_used;            /* bytes of WRAM the globals take */
	uint8_t *wram_image;           /* wram_used bytes */
	size_t nr_mram_segs;
	struct dpusim_segment *mram_segs;
	int exec_fd;                   /* dpu_load_from_memory's memfd, or -1 */
};

/*
 * Load the MRAM symbols of the ELF file at path for a DPU of mram_size bytes
 * of MRAM. Returns 0 and sets *out (free with dpusim_program_free), or a
 * negative errno-like value (see above), leaves *out untouched and, when
 * errbuf is not NULL and errlen > 0, writes a NUL-terminated message.
 */
int dpusim_program_load(const char *path, uint64_t mram_size,
			struct dpu_program_t **out, char *errbuf, size_t errlen);

/* The symbol called name, or NULL (also for a NULL prog or name). */
const struct dpusim_symbol *dpusim_program_find(const struct dpu_program_t *prog,
						const char *name);

/* Frees prog and everything it owns; NULL is a no-op. */
void dpusim_program_free(struct dpu_program_t *prog);

#endif /* DPUSIM_PROGRAM_H */

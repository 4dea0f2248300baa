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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "program.h"
#include "xfer.h"

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

void dpusim_load_teardown(struct dpusim_set_props *props)
{
	dpusim_program_free(props->program);
	props->program = NULL;
}

/* The SDK's figures of a v1B DPU (the profile's dpusimDpuModel=v1B) */
#define V1B_TASKLETS	16u
#define V1B_WRAM	63488u
#define V1B_HZ		400000000u

/*
 * A dpusim-cc program: check that its globals fit in WRAM (and that a v1B
 * DPU could run it), then write its initial WRAM image and MRAM contents
 * to every enabled DPU of the set, as the SDK's loader does on hardware.
 */
static dpu_error_t load_images(struct dpusim_set_props *props,
			       struct dpu_program_t *prog, const char *fn)
{
	struct dpu_set_t all = dpusim_props_set(props);
	uint32_t wram_size = props->ranks[0]->wram_size;
	dpu_error_t ret = DPU_OK;
	size_t i;

	if (prog->wram_used > wram_size) {
		dpusim_log("%s: %s: its WRAM globals take %llu bytes, a DPU has %u bytes of WRAM",
			   fn, prog->path, (unsigned long long)prog->wram_used,
			   (unsigned int)wram_size);
		return DPU_ERR_ELF_INVALID_FILE;
	}
	if (props->profile.dpu_v1b && prog->nr_tasklets > V1B_TASKLETS) {
		dpusim_log("%s: %s: NR_TASKLETS=%u, a v1B DPU (dpusimDpuModel=v1B) runs at most %u",
			   fn, prog->path, prog->nr_tasklets, V1B_TASKLETS);
		return DPU_ERR_ELF_INVALID_FILE;
	}
	if (props->profile.dpu_v1b && prog->wram_used > V1B_WRAM) {
		dpusim_log("%s: %s: its WRAM globals take %llu bytes, a v1B DPU (dpusimDpuModel=v1B) has %u",
			   fn, prog->path, (unsigned long long)prog->wram_used, V1B_WRAM);
		return DPU_ERR_ELF_INVALID_FILE;
	}
	if (prog->wram_used)
		ret = dpusim_xfer_raw(all, fn, true, DPU_XFER_TO_DPU, 0,
				      prog->wram_image, prog->wram_used);
	for (i = 0; ret == DPU_OK && i < prog->nr_mram_segs; i++) {
		struct dpusim_segment *seg = &prog->mram_segs[i];
		uint64_t start = seg->offset & ~7ULL;
		uint64_t end = (seg->offset + seg->size + 7) & ~7ULL;
		uint8_t *buf;

		if (start == seg->offset && end == seg->offset + seg->size) {
			ret = dpusim_xfer_raw(all, fn, false, DPU_XFER_TO_DPU,
					      start, seg->data, seg->size);
			continue;
		}
		/* unaligned edges: the bytes around the section are zeros */
		buf = calloc(1, end - start);
		if (!buf) {
			dpusim_log("%s: out of memory", fn);
			return DPU_ERR_SYSTEM;
		}
		memcpy(buf + (seg->offset - start), seg->data, seg->size);
		ret = dpusim_xfer_raw(all, fn, false, DPU_XFER_TO_DPU, start,
				      buf, end - start);
		free(buf);
	}
	if (ret == DPU_OK && props->profile.dpu_v1b) {
		/* the runtime's CLOCKS_PER_SEC, 350 MHz in the image */
		const struct dpusim_symbol *hz = dpusim_program_find(prog, "CLOCKS_PER_SEC");
		uint32_t v = V1B_HZ;

		if (hz && hz->mem == DPUSIM_SYM_WRAM && hz->size == sizeof(v))
			ret = dpusim_xfer_raw(all, fn, true, DPU_XFER_TO_DPU, hz->offset,
					      &v, sizeof(v));
	}
	return ret;
}

static dpu_error_t install(struct dpusim_set_props *props,
			   struct dpu_program_t *prog,
			   struct dpu_program_t **program, const char *fn)
{
	struct dpu_program_t *old;
	dpu_error_t ret = DPU_OK;
	uint32_t i;

	pthread_mutex_lock(&props->lock);
	ret = dpusim_set_running(props, fn);
	if (ret == DPU_OK && prog->runnable)
		ret = load_images(props, prog, fn);
	if (ret != DPU_OK) {
		pthread_mutex_unlock(&props->lock);
		dpusim_program_free(prog);
		return ret;
	}
	old = props->program;
	props->program = prog;
	dpusim_set_hook_add(props, DPUSIM_SET_HOOK_PROGRAM, dpusim_load_teardown);
	/* the workers run the old program: the next launch starts new ones */
	for (i = 0; i < props->nr_ranks; i++)
		dpusim_workers_stop(props->ranks[i]);
	pthread_mutex_unlock(&props->lock);
	dpusim_program_free(old);

	if (program)
		*program = prog;
	return DPU_OK;
}

DPUSIM_API dpu_error_t dpu_load(struct dpu_set_t dpu_set,
				const char *binary_path,
				struct dpu_program_t **program)
{
	struct dpusim_set_props *props = dpusim_set_props(dpu_set, "dpu_load");
	struct dpu_program_t *prog = NULL;
	char err[512];
	char *abs;
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
	/* workers exec the file: keep a path that does not depend on the cwd */
	abs = realpath(binary_path, NULL);
	if (abs) {
		free(prog->path);
		prog->path = abs;
	}
	return install(props, prog, program, "dpu_load");
}

DPUSIM_API dpu_error_t dpu_load_from_memory(struct dpu_set_t dpu_set,
					    uint8_t *buffer,
					    size_t buffer_size,
					    struct dpu_program_t **program)
{
	struct dpusim_set_props *props =
		dpusim_set_props(dpu_set, "dpu_load_from_memory");
	struct dpu_program_t *prog = NULL;
	char err[512], path[64], eb[128];
	size_t done = 0;
	int fd, r;

	if (!props)
		return DPU_ERR_INVALID_DPU_SET;
	if (!buffer || !buffer_size) {
		dpusim_log("dpu_load_from_memory: empty buffer");
		return DPU_ERR_ELF_INVALID_FILE;
	}
	fd = memfd_create("dpusim-dpu-program", MFD_CLOEXEC);
	if (fd < 0) {
		dpusim_log("dpu_load_from_memory: memfd_create: %s",
			   dpusim_strerror(errno, eb, sizeof(eb)));
		return DPU_ERR_SYSTEM;
	}
	while (done < buffer_size) {
		ssize_t n = write(fd, buffer + done, buffer_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			dpusim_log("dpu_load_from_memory: write: %s",
				   dpusim_strerror(errno, eb, sizeof(eb)));
			close(fd);
			return DPU_ERR_SYSTEM;
		}
		done += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = dpusim_program_load(path, props->ranks[0]->mram_size, &prog, err,
				sizeof(err));
	if (r < 0) {
		close(fd);
		dpusim_log("dpu_load_from_memory: %s", err);
		return load_error(r);
	}
	prog->exec_fd = fd;
	return install(props, prog, program, "dpu_load_from_memory");
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
	/*
	 * As UPMEM: MRAM symbols at the DPU address of MRAM + offset, WRAM
	 * symbols at their WRAM address.
	 */
	address = sym->offset;
	if (sym->mem == DPUSIM_SYM_MRAM)
		address += DPUSIM_DPU_MRAM_BASE;
	if (address > UINT32_MAX || sym->size > UINT32_MAX) {
		dpusim_log("dpu_get_symbol: symbol '%s' (offset %llu, size %llu) does not fit UPMEM's 32-bit addresses",
			   symbol_name, (unsigned long long)sym->offset,
			   (unsigned long long)sym->size);
		return DPU_ERR_INVALID_SYMBOL_ACCESS;
	}
	symbol->address = (dpu_mem_max_addr_t)address;
	symbol->size = (dpu_mem_max_size_t)sym->size;
	return DPU_OK;
}

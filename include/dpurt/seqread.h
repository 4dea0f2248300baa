/* SPDX-License-Identifier: MIT */
/*
 * seqread.h - sequential reading of MRAM through a WRAM cache (UPMEM SDK
 * 2023.2 names).  SEQREAD_CACHE_SIZE (32..1024, default 256) may be defined
 * before including this file; seqread_alloc takes 2 * SEQREAD_CACHE_SIZE
 * bytes from the WRAM heap (mem_alloc).
 */
#ifndef DPUSYSCORE_SEQREAD_H
#define DPUSYSCORE_SEQREAD_H

#include <stdint.h>
#include <mram.h>
#include <macro_utils.h>

#ifndef SEQREAD_CACHE_SIZE
#define SEQREAD_CACHE_SIZE 256
#endif

_Static_assert(SEQREAD_CACHE_SIZE == 32 || SEQREAD_CACHE_SIZE == 64 || SEQREAD_CACHE_SIZE == 128 ||
		       SEQREAD_CACHE_SIZE == 256 || SEQREAD_CACHE_SIZE == 512 ||
		       SEQREAD_CACHE_SIZE == 1024,
	       "seqread error: invalid cache size defined");

#ifdef __cplusplus
extern "C" {
#endif

typedef uintptr_t seqreader_buffer_t;

typedef struct {
	seqreader_buffer_t wram_cache;
	uintptr_t mram_addr;
} seqreader_t;

seqreader_buffer_t __dpurt_seqread_alloc(unsigned int cache_size);
void *__dpurt_seqread_init(unsigned int cache_size, seqreader_buffer_t cache,
			   __mram_ptr void *mram_addr, seqreader_t *reader);
void *__dpurt_seqread_get(unsigned int cache_size, void *ptr, uint32_t inc, seqreader_t *reader);
void *__dpurt_seqread_seek(unsigned int cache_size, __mram_ptr void *mram_addr, seqreader_t *reader);
__mram_ptr void *__dpurt_seqread_tell(void *ptr, seqreader_t *reader);

#define __SEQREAD_FCT(suffix) __DPURT_CAT(__DPURT_CAT(seqread, SEQREAD_CACHE_SIZE), suffix)
#define __SEQREAD_ALLOC __SEQREAD_FCT(_alloc)
#define __SEQREAD_INIT __SEQREAD_FCT(_init)
#define __SEQREAD_GET __SEQREAD_FCT(_get)
#define __SEQREAD_TELL __SEQREAD_FCT(_tell)
#define __SEQREAD_SEEK __SEQREAD_FCT(_seek)

static inline seqreader_buffer_t __SEQREAD_ALLOC(void)
{
	return __dpurt_seqread_alloc(SEQREAD_CACHE_SIZE);
}

static inline void *__SEQREAD_INIT(seqreader_buffer_t cache, __mram_ptr void *mram_addr,
				   seqreader_t *reader)
{
	return __dpurt_seqread_init(SEQREAD_CACHE_SIZE, cache, mram_addr, reader);
}

static inline void *__SEQREAD_GET(void *ptr, uint32_t inc, seqreader_t *reader)
{
	if ((uintptr_t)ptr + inc < reader->wram_cache + SEQREAD_CACHE_SIZE)
		return (char *)ptr + inc;
	return __dpurt_seqread_get(SEQREAD_CACHE_SIZE, ptr, inc, reader);
}

static inline void *__SEQREAD_SEEK(__mram_ptr void *mram_addr, seqreader_t *reader)
{
	return __dpurt_seqread_seek(SEQREAD_CACHE_SIZE, mram_addr, reader);
}

static inline __mram_ptr void *__SEQREAD_TELL(void *ptr, seqreader_t *reader)
{
	return __dpurt_seqread_tell(ptr, reader);
}

#define seqread_alloc __SEQREAD_ALLOC
#define seqread_init __SEQREAD_INIT
#define seqread_get __SEQREAD_GET
#define seqread_seek __SEQREAD_SEEK
#define seqread_tell __SEQREAD_TELL

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_SEQREAD_H */

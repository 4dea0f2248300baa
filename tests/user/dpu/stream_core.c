// SPDX-License-Identifier: MIT
/*
 * stream_core - a DPU program as an EBSP core (<ebsp.h>, DPU side), one
 * scenario per launch, chosen by the host in @mode with @arg; results in
 * @out[0 .. @nout).  tests/user/ebsp.c checks them.
 *
 *  WALK    stream arg[0], preload arg[1]: every token's size and the sum
 *          of its bytes, then two more move_down (0: the end is sticky)
 *  SEEK    stream arg[0], preload arg[1]: the first word of the token
 *          move_down returns after each seek of a fixed script
 *  UP      stream arg[0]: arg[1] tokens of 64 bytes, double-buffered as in
 *          the seed, waiting only if arg[2]; word i of token k is
 *          0xd0 << 32 | k << 8 | i; out: what move_up returned
 *  CAP     stream arg[0]: move_up of arg[1] bytes, then of 8 bytes
 *  ERRORS  close twice, open(-1), open(999), move_down when closed
 *  CYCLES  arg[1] open / move_down / close cycles of stream arg[0]
 *  HOLD    open stream arg[0] into @held (kept open past the launch)
 *  RELEASE close @held
 *  NEXT    move_down of @held (a stream kept open across launches)
 */
#include <defs.h>
#include <ebsp.h>
#include <limits.h>
#include <stdint.h>
#include <alloc.h>

enum { WALK, SEEK, UP, CAP, ERRORS, CYCLES, HOLD, RELEASE, NEXT };

__host uint32_t mode;
__host int32_t arg[4];
__host int64_t out[160];
__host uint32_t nout;
bsp_stream held;

static void rec(int64_t v)
{
	if (nout < sizeof(out) / sizeof(out[0]))
		out[nout++] = v;
}

static int64_t first_word(const void *buf, int size)
{
	return size ? *(const int32_t *)buf : -1;
}

static void walk(void)
{
	bsp_stream s;
	void *buf;
	int size, i;

	rec(bsp_stream_open(&s, arg[0]));
	while ((size = bsp_stream_move_down(&s, &buf, arg[1])) > 0) {
		int64_t sum = 0;

		for (i = 0; i < size; i++)
			sum += ((const uint8_t *)buf)[i];
		rec(size);
		rec(sum);
	}
	rec(size);
	rec(bsp_stream_move_down(&s, &buf, arg[1]));
	rec(bsp_stream_move_down(&s, &buf, 0));
	bsp_stream_close(&s);
}

static void seek(void)
{
	static const int script[] = { 2, -2, INT_MIN, INT_MAX, -1, -1000, 1000, 0 };
	bsp_stream s;
	void *buf;
	unsigned int i;
	int size;

	rec(bsp_stream_open(&s, arg[0]));
	size = bsp_stream_move_down(&s, &buf, arg[1]);
	rec(first_word(buf, size));
	for (i = 0; i < sizeof(script) / sizeof(script[0]); i++) {
		bsp_stream_seek(&s, script[i]);
		size = bsp_stream_move_down(&s, &buf, arg[1]);
		rec(first_word(buf, size));
	}
	bsp_stream_close(&s);
}

static void up(void)
{
	uint64_t *b[2] = { mem_alloc(64), mem_alloc(64) };
	bsp_stream s;
	int k, i;

	rec(bsp_stream_open(&s, arg[0]));
	for (k = 0; k < arg[1]; k++) {
		uint64_t *p = b[k % 2];

		for (i = 0; i < 8; i++)
			p[i] = (uint64_t)0xd0 << 32 | (uint64_t)k << 8 | i;
		rec(bsp_stream_move_up(&s, p, 64, arg[2]));
	}
	bsp_stream_close(&s);
}

static void cap(void)
{
	uint64_t *p = mem_alloc(arg[1]);
	bsp_stream s;
	int i;

	for (i = 0; i < arg[1] / 8; i++)
		p[i] = 0x1111111111111111ULL * (i % 15 + 1);
	rec(bsp_stream_open(&s, arg[0]));
	rec(bsp_stream_move_up(&s, p, arg[1], 1));
	rec(bsp_stream_move_up(&s, p, 8, 1));
	bsp_stream_close(&s);
}

static void errors(void)
{
	bsp_stream s;
	void *buf;

	rec(bsp_stream_open(&s, 0));
	bsp_stream_close(&s);
	bsp_stream_close(&s);			/* an error, nothing else */
	rec(bsp_stream_move_down(&s, &buf, 0));	/* closed: 0 */
	rec(bsp_stream_open(&s, -1));
	rec(bsp_stream_open(&s, 999));
	rec(bsp_stream_open(&s, 0));		/* still openable */
	bsp_stream_close(&s);
}

static void cycles(void)
{
	int64_t ok = 0;
	bsp_stream s;
	void *buf;
	int i;

	for (i = 0; i < arg[1]; i++) {
		if (!bsp_stream_open(&s, arg[0]))
			break;
		ok += bsp_stream_move_down(&s, &buf, i & 1) > 0;
		bsp_stream_close(&s);
	}
	rec(ok);
}

int main(void)
{
	void *buf;
	int size;

	nout = 0;
	switch (mode) {
	case WALK: walk(); break;
	case SEEK: seek(); break;
	case UP: up(); break;
	case CAP: cap(); break;
	case ERRORS: errors(); break;
	case CYCLES: cycles(); break;
	case HOLD: rec(bsp_stream_open(&held, arg[0])); break;
	case RELEASE: bsp_stream_close(&held); break;
	case NEXT:
		size = bsp_stream_move_down(&held, &buf, arg[1]);
		rec(size);
		rec(first_word(buf, size));
		break;
	}
	return 0;
}

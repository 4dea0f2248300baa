// SPDX-License-Identifier: MIT
/*
 * trace_fmt.c - trace_pipe lines of dpusim's tracepoints to Chrome
 * trace-event JSON, and the numbers of the summary (see trace_fmt.h).
 *
 * The events and their fields are the contract of kernel/trace.h
 * (notes: trace-contract.md).  In the JSON, one process "dpusim" holds a
 * track (a tid, named by "M" events) per rank ("rank N": its transfers),
 * per rank's asynchronous queue ("rank N async": each job from queued to
 * done), per DPU that ran ("rank N dpu M": its launches and faults) and
 * per tag-matching object ("tm srq N", "tm qp N", "tm cq N": instants).
 *
 *   dpusim_xfer                 X [ts - duration_ns, ts] on "rank N"
 *                               (its modeled_ns, the time on real
 *                               hardware, an arg beside duration_ns)
 *   dpusim_async_queue/_done    X [queue ts, done ts] on "rank N async"
 *                               (without its queue event: from
 *                               done - wait_ns - duration_ns)
 *   dpusim_launch_start/_end    X [start, end] on "rank N dpu M" (an end
 *                               without a start: from end - duration_ns)
 *   dpusim_fault, dpusim_tm_*   instants ("ph":"i", "s":"t")
 *
 * Every field is an arg: decimal numbers as JSON numbers, anything else
 * (dir=to_dpu, tag=0x..., a 64-bit tag would not survive as a double) as
 * a string.  Slices never overlap on one track: Chrome and Perfetto want
 * them nested.  An overlap of up to TRACE_SLACK_NS (the timestamps of
 * trace_pipe are in microseconds) is taken off the start of the later
 * slice; a larger one opens a second track ("rank N #2", a lane).
 * Unknown events and fields are ignored (fields become args all the same).
 */
#include "trace_fmt.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_SLACK_NS 2000ULL
#define TRACE_PID 1

/* ------------------------------------------------------------ parsing */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* "12345.678901:" or "12345:" (n includes the colon) */
static bool is_ts_token(const char *s, size_t n)
{
	size_t i = 0, d = 0;

	if (n < 2 || s[n - 1] != ':')
		return false;
	while (i < n - 1 && is_digit(s[i]))
		i++, d++;
	if (!d)
		return false;
	if (i < n - 1 && s[i] == '.') {
		i++;
		d = 0;
		while (i < n - 1 && is_digit(s[i]))
			i++, d++;
		if (!d)
			return false;
	}
	return i == n - 1;
}

/* sec[.frac] -> ns; the fraction has 6 digits on trace_pipe (any up to 9) */
static uint64_t parse_ts(const char *s)
{
	uint64_t sec = 0, frac = 0;
	unsigned int digits = 0;

	while (is_digit(*s))
		sec = sec * 10 + (uint64_t)(*s++ - '0');
	if (*s == '.') {
		s++;
		while (is_digit(*s)) {
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				digits++;
			}
			s++;
		}
	}
	while (digits++ < 9)
		frac *= 10;
	return sec * 1000000000ULL + frac;
}

/* "[003]" at s, followed by a blank or the end: its length, else 0 */
static size_t cpu_field(const char *s, int *cpu)
{
	size_t i = 1;
	int v = 0;

	if (s[0] != '[' || !is_digit(s[1]))
		return 0;
	while (is_digit(s[i])) {
		if (v < 100000000)
			v = v * 10 + (s[i] - '0');
		i++;
	}
	if (s[i] != ']' || (s[i + 1] && !is_space(s[i + 1])))
		return 0;
	*cpu = v;
	return i + 1;
}

/* "task-pid" or "task-pid (tgid)", blanks around: task and pid */
static void parse_task(char *s, char *end, struct trace_record *rec)
{
	char *dash, *p;

	while (end > s && is_space(end[-1]))
		end--;
	if (end > s && end[-1] == ')') {	/* record-tgid: "( 1234)" */
		p = end - 1;
		while (p > s && *p != '(')
			p--;
		if (*p == '(') {
			end = p;
			while (end > s && is_space(end[-1]))
				end--;
		}
	}
	*end = '\0';
	for (dash = end; dash > s && dash[-1] != '-'; dash--)
		if (!is_digit(dash[-1]))
			break;
	if (dash > s && dash[-1] == '-' && dash < end) {
		rec->pid = atoi(dash);
		dash[-1] = '\0';
	}
	rec->task = s;
}

enum trace_line_kind trace_parse_line(char *line, struct trace_record *rec)
{
	char *p = line, *q, *after_cpu = NULL, *name;
	size_t n;

	memset(rec, 0, sizeof(*rec));
	rec->task = "";
	rec->pid = -1;
	rec->cpu = -1;

	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	while (is_space(*p))
		p++;
	if (!*p || *p == '#')
		return TRACE_LINE_OTHER;
	if (!strncmp(p, "CPU:", 4) && (q = strstr(p, "[LOST "))) {
		q += 6;
		if (!is_digit(*q))
			return TRACE_LINE_OTHER;
		rec->lost = strtoull(q, NULL, 10);
		return TRACE_LINE_LOST;
	}

	/* the CPU field: the first "[digits]" that stands alone */
	for (q = p; *q; q++) {
		if (*q == '[' && (q == p || is_space(q[-1]))) {
			size_t len = cpu_field(q, &rec->cpu);

			if (len) {
				after_cpu = q + len;
				parse_task(p, q, rec);
				break;
			}
		}
	}
	q = after_cpu ? after_cpu : p;

	/* the timestamp: the first "digits.digits:" token, then "name:" */
	for (;;) {
		char *tok;

		while (is_space(*q))
			q++;
		if (!*q)
			return TRACE_LINE_OTHER;
		tok = q;
		while (*q && !is_space(*q))
			q++;
		if (is_ts_token(tok, (size_t)(q - tok))) {
			rec->ts_ns = parse_ts(tok);
			break;
		}
	}
	while (is_space(*q))
		q++;
	name = q;
	while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
	       is_digit(*q) || *q == '_')
		q++;
	if (q == name || *q != ':')
		return TRACE_LINE_OTHER;
	*q++ = '\0';
	rec->event = name;

	/* key=value, blank-separated; tokens without '=' are skipped */
	while (*q) {
		char *tok, *eq;

		while (is_space(*q))
			q++;
		if (!*q)
			break;
		tok = q;
		while (*q && !is_space(*q))
			q++;
		if (*q)
			*q++ = '\0';
		eq = strchr(tok, '=');
		if (!eq || eq == tok || rec->nr_fields >= TRACE_MAX_FIELDS)
			continue;
		*eq = '\0';
		rec->key[rec->nr_fields] = tok;
		rec->val[rec->nr_fields] = eq + 1;
		rec->nr_fields++;
	}
	return TRACE_LINE_EVENT;
}

const char *trace_field(const struct trace_record *rec, const char *key)
{
	unsigned int i;

	for (i = 0; i < rec->nr_fields; i++)
		if (!strcmp(rec->key[i], key))
			return rec->val[i];
	return NULL;
}

/* A field as an unsigned number (decimal or 0x hex); @def if absent or bad. */
static uint64_t field_u64(const struct trace_record *rec, const char *key,
			  uint64_t def)
{
	const char *v = trace_field(rec, key);
	char *end;
	uint64_t x;

	if (!v || !*v || *v == '-')
		return def;
	x = strtoull(v, &end, 0);
	return *end ? def : x;
}

static int64_t field_s64(const struct trace_record *rec, const char *key,
			 int64_t def)
{
	const char *v = trace_field(rec, key);
	char *end;
	long long x;

	if (!v || !*v)
		return def;
	x = strtoll(v, &end, 10);
	return *end ? def : x;
}

/* ------------------------------------------------------------ buffers */

struct strbuf {
	char *s;
	size_t len, cap;
	bool err;
};

static void sb_putn(struct strbuf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->s, cap);
		if (!p) {
			b->err = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_puts(struct strbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static void sb_printf(struct strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = true;
		return;
	}
	if ((size_t)n < sizeof(tmp)) {
		sb_putn(b, tmp, (size_t)n);
		return;
	}
	/* longer than tmp: not with the formats used here, but be correct */
	{
		char *big = malloc((size_t)n + 1);

		if (!big) {
			b->err = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		sb_putn(b, big, (size_t)n);
		free(big);
	}
}

/* The length of the valid UTF-8 sequence at s (not ASCII), else 0. */
static size_t utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void sb_json_string(struct strbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	sb_putn(b, "\"", 1);
	while (*s) {
		unsigned char c = (unsigned char)*s;
		char esc[7];
		size_t n;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			sb_putn(b, esc, 2);
		} else if (c == '\n') {
			sb_putn(b, "\\n", 2);
		} else if (c == '\t') {
			sb_putn(b, "\\t", 2);
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			sb_putn(b, esc, 6);
		} else if (c < 0x80) {
			sb_putn(b, s, 1);
		} else if ((n = utf8_len((const unsigned char *)s))) {
			sb_putn(b, s, n);
			s += n;
			continue;
		} else {
			sb_putn(b, "\\ufffd", 6);
		}
		s++;
	}
	sb_putn(b, "\"", 1);
}

void trace_json_string(FILE *f, const char *s)
{
	struct strbuf b = { 0 };

	sb_json_string(&b, s);
	if (!b.err)
		fputs(b.s, f);
	free(b.s);
}

/* A JSON integer: -?(0|[1-9][0-9]*), at most 20 digits */
static bool is_json_int(const char *v)
{
	size_t n = 0;

	if (*v == '-')
		v++;
	if (!is_digit(*v) || (*v == '0' && v[1]))
		return false;
	while (is_digit(v[n]))
		n++;
	return !v[n] && n <= 20;
}

/* "ts" and "dur" are microseconds: ns / 1000 with three decimals */
static void sb_us(struct strbuf *b, uint64_t ns)
{
	sb_printf(b, "%" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
}

/* ------------------------------------------------------------ fields */

/* The fields of an event kept until its other half comes. */
struct kv_copy {
	char *buf;
	unsigned int n;
	const char *key[TRACE_MAX_FIELDS];
	const char *val[TRACE_MAX_FIELDS];
};

static int kv_save(struct kv_copy *kv, const struct trace_record *rec)
{
	size_t len = 1, off = 0;
	unsigned int i;

	for (i = 0; i < rec->nr_fields; i++)
		len += strlen(rec->key[i]) + strlen(rec->val[i]) + 2;
	kv->buf = malloc(len);
	if (!kv->buf)
		return -1;
	kv->n = rec->nr_fields;
	for (i = 0; i < rec->nr_fields; i++) {
		size_t k = strlen(rec->key[i]) + 1, v = strlen(rec->val[i]) + 1;

		memcpy(kv->buf + off, rec->key[i], k);
		kv->key[i] = kv->buf + off;
		off += k;
		memcpy(kv->buf + off, rec->val[i], v);
		kv->val[i] = kv->buf + off;
		off += v;
	}
	return 0;
}

static void kv_free(struct kv_copy *kv)
{
	free(kv->buf);
	kv->buf = NULL;
	kv->n = 0;
}

static bool has_key(const char *const *keys, unsigned int n, const char *k)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(keys[i], k))
			return true;
	return false;
}

/*
 * The args' members from @n pairs, each key once (the first wins, and
 * keys in @skip are left out); *first says whether a comma is due.
 */
static void sb_args(struct strbuf *b, bool *first, const char *const *key,
		    const char *const *val, unsigned int n,
		    const char *const *skip, unsigned int nr_skip)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (has_key(key, i, key[i]) || has_key(skip, nr_skip, key[i]))
			continue;
		if (!*first)
			sb_putn(b, ",", 1);
		*first = false;
		sb_json_string(b, key[i]);
		sb_putn(b, ":", 1);
		if (is_json_int(val[i]))
			sb_puts(b, val[i]);
		else
			sb_json_string(b, val[i]);
	}
}

/* ------------------------------------------------------------ the converter */

enum track_kind { TK_RANK, TK_ASYNC, TK_DPU, TK_SRQ, TK_QP, TK_CQ };

struct track {
	enum track_kind kind;
	uint64_t a, b;		/* rank [, dpu], or the TM object's number */
	unsigned int lane;
	int tid;
	uint64_t last_end;	/* of its slices, for the lanes */
	/* rank tracks, lane 0: the rank's modeled transfer time by direction */
	uint64_t modeled_ns[2];
	/* DPU tracks, lane 0: a launch started, not ended yet */
	bool started;
	uint64_t start_ns;
	struct kv_copy start;
};

struct pending_job {
	uint64_t rank, job, ts;
	struct kv_copy kv;
};

struct interval {
	uint64_t s, e;
};

struct intervals {
	struct interval *v;
	size_t n, cap;
};

enum { BUSY_TO, BUSY_FROM, BUSY_ASYNC, BUSY_LAUNCH, NR_BUSY };

struct trace_conv {
	FILE *out;
	bool started, finished, err;
	struct trace_stats st;
	struct track *tracks;
	size_t nr_tracks, cap_tracks;
	uint32_t *hash;		/* index + 1 into tracks, 0: empty */
	size_t hash_size;	/* a power of two, > 2 * nr_tracks */
	struct pending_job *jobs;
	size_t nr_jobs, cap_jobs;
	struct intervals busy[NR_BUSY];
	struct strbuf ev, args;	/* the event being written */
	struct strbuf partial;	/* trace_conv_feed: a line not ended yet */
	uint64_t running;	/* DPU runs started and not ended */
	uint64_t group_max;	/* the launch group's slowest modeled run */
};

struct trace_conv *trace_conv_new(FILE *out)
{
	struct trace_conv *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->out = out;
	return c;
}

const struct trace_stats *trace_conv_stats(const struct trace_conv *c)
{
	return &c->st;
}

void trace_conv_free(struct trace_conv *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr_tracks; i++)
		kv_free(&c->tracks[i].start);
	for (i = 0; i < c->nr_jobs; i++)
		kv_free(&c->jobs[i].kv);
	for (i = 0; i < NR_BUSY; i++)
		free(c->busy[i].v);
	free(c->tracks);
	free(c->hash);
	free(c->jobs);
	free(c->ev.s);
	free(c->args.s);
	free(c->partial.s);
	free(c);
}

static uint64_t track_hash(enum track_kind k, uint64_t a, uint64_t b,
			   unsigned int lane)
{
	uint64_t h = ((uint64_t)k << 56) ^ ((uint64_t)lane << 40);

	h ^= a * 0x9e3779b97f4a7c15ULL;
	h ^= (b + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

static int hash_grow(struct trace_conv *c)
{
	size_t size = c->hash_size ? c->hash_size * 2 : 64, i, j;
	uint32_t *h = calloc(size, sizeof(*h));

	if (!h)
		return -1;
	for (i = 0; i < c->nr_tracks; i++) {
		const struct track *t = &c->tracks[i];

		j = track_hash(t->kind, t->a, t->b, t->lane) & (size - 1);
		while (h[j])
			j = (j + 1) & (size - 1);
		h[j] = (uint32_t)(i + 1);
	}
	free(c->hash);
	c->hash = h;
	c->hash_size = size;
	return 0;
}

/* The track, created (with the next tid) if new; NULL out of memory. */
static struct track *track_get(struct trace_conv *c, enum track_kind k,
			       uint64_t a, uint64_t b, unsigned int lane)
{
	size_t j;
	struct track *t;

	/* at most half full, so that a free slot is always found */
	if ((c->nr_tracks + 1) * 2 > c->hash_size && hash_grow(c))
		return NULL;
	j = track_hash(k, a, b, lane) & (c->hash_size - 1);
	while (c->hash[j]) {
		t = &c->tracks[c->hash[j] - 1];
		if (t->kind == k && t->a == a && t->b == b && t->lane == lane)
			return t;
		j = (j + 1) & (c->hash_size - 1);
	}
	if (c->nr_tracks == c->cap_tracks) {
		size_t cap = c->cap_tracks ? c->cap_tracks * 2 : 16;
		struct track *p = realloc(c->tracks, cap * sizeof(*p));

		if (!p)
			return NULL;
		c->tracks = p;
		c->cap_tracks = cap;
	}
	if (c->nr_tracks + 1 > UINT32_MAX - 1)
		return NULL;
	t = &c->tracks[c->nr_tracks];
	memset(t, 0, sizeof(*t));
	t->kind = k;
	t->a = a;
	t->b = b;
	t->lane = lane;
	t->tid = (int)c->nr_tracks + 1;
	c->hash[j] = (uint32_t)(c->nr_tracks + 1);
	c->nr_tracks++;
	return &c->tracks[c->nr_tracks - 1];
}

/*
 * The tid of the first lane of (k, a, b) where [*start, end] fits after
 * the slices already there (see TRACE_SLACK_NS); -1 out of memory.
 */
static int slice_tid(struct trace_conv *c, enum track_kind k, uint64_t a,
		     uint64_t b, uint64_t *start, uint64_t end)
{
	unsigned int lane;
	struct track *t;

	for (lane = 0;; lane++) {
		t = track_get(c, k, a, b, lane);
		if (!t)
			return -1;
		if (*start >= t->last_end)
			break;
		if (end >= t->last_end && t->last_end - *start <= TRACE_SLACK_NS) {
			*start = t->last_end;
			break;
		}
	}
	if (end > t->last_end)
		t->last_end = end;
	return t->tid;
}

static void busy_add(struct trace_conv *c, int which, uint64_t s, uint64_t e)
{
	struct intervals *iv = &c->busy[which];

	if (e <= s)
		return;
	if (iv->n == iv->cap) {
		size_t cap = iv->cap ? iv->cap * 2 : 64;
		struct interval *p = realloc(iv->v, cap * sizeof(*p));

		if (!p) {
			c->err = true;
			return;
		}
		iv->v = p;
		iv->cap = cap;
	}
	iv->v[iv->n].s = s;
	iv->v[iv->n].e = e;
	iv->n++;
}

static int cmp_interval(const void *x, const void *y)
{
	const struct interval *a = x, *b = y;

	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return (a->e > b->e) - (a->e < b->e);
}

/* The length of the union of the intervals (sorts them). */
static uint64_t busy_union(struct intervals *iv)
{
	uint64_t sum = 0, s = 0, e = 0;
	size_t i;

	if (!iv->n)
		return 0;
	qsort(iv->v, iv->n, sizeof(*iv->v), cmp_interval);
	for (i = 0; i < iv->n; i++) {
		if (i == 0 || iv->v[i].s > e) {
			sum += e - s;
			s = iv->v[i].s;
			e = iv->v[i].e;
		} else if (iv->v[i].e > e) {
			e = iv->v[i].e;
		}
	}
	return sum + (e - s);
}

static void write_start(struct trace_conv *c)
{
	if (c->started)
		return;
	c->started = true;
	if (c->out)
		fputs("{\"traceEvents\":[", c->out);
}

/* Writes c->ev as the next element of traceEvents. */
static void ev_flush(struct trace_conv *c)
{
	if (c->ev.err || c->args.err) {
		c->err = true;
		return;
	}
	write_start(c);
	if (c->out) {
		fputs(c->st.json_events ? ",\n" : "\n", c->out);
		fputs(c->ev.s, c->out);
	}
	c->st.json_events++;
}

/* {"name":..,"cat":..,"ph":..,"pid":1,"tid":..,"ts":.. — the rest is the caller's */
static void ev_begin(struct trace_conv *c, const char *name, const char *cat,
		     const char *ph, int tid, uint64_t ts)
{
	c->ev.len = 0;
	c->ev.err = false;
	sb_puts(&c->ev, "{\"name\":");
	sb_json_string(&c->ev, name);
	sb_puts(&c->ev, ",\"cat\":");
	sb_json_string(&c->ev, cat);
	sb_printf(&c->ev, ",\"ph\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":", ph,
		  TRACE_PID, tid);
	sb_us(&c->ev, ts);
}

/* c->args holds the members of "args" (without braces) */
static void ev_end_args(struct trace_conv *c)
{
	sb_puts(&c->ev, ",\"args\":{");
	if (c->args.len)
		sb_putn(&c->ev, c->args.s, c->args.len);
	sb_puts(&c->ev, "}}");
	ev_flush(c);
}

static void args_reset(struct trace_conv *c)
{
	c->args.len = 0;
	c->args.err = false;
	if (c->args.s)
		c->args.s[0] = '\0';
}

static void args_rec(struct trace_conv *c, bool *first,
		     const struct trace_record *rec)
{
	sb_args(&c->args, first, rec->key, rec->val, rec->nr_fields, NULL, 0);
}

static void args_flag(struct trace_conv *c, bool *first, const char *key)
{
	if (!*first)
		sb_putn(&c->args, ",", 1);
	*first = false;
	sb_json_string(&c->args, key);
	sb_puts(&c->args, ":1");
}

static void emit_slice(struct trace_conv *c, const char *name, const char *cat,
		       int tid, uint64_t start, uint64_t end)
{
	ev_begin(c, name, cat, "X", tid, start);
	sb_puts(&c->ev, ",\"dur\":");
	sb_us(&c->ev, end - start);
	ev_end_args(c);
}

static void emit_instant(struct trace_conv *c, const char *name,
			 const char *cat, int tid, uint64_t ts)
{
	ev_begin(c, name, cat, "i", tid, ts);
	sb_puts(&c->ev, ",\"s\":\"t\"");
	ev_end_args(c);
}

static uint64_t sub_clamp(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static void on_xfer(struct trace_conv *c, const struct trace_record *rec)
{
	const char *dir = trace_field(rec, "dir");
	uint64_t rank = field_u64(rec, "rank", UINT64_MAX);
	uint64_t bytes = field_u64(rec, "bytes", 0);
	uint64_t end = rec->ts_ns, start = sub_clamp(end, field_u64(rec, "duration_ns", 0));
	bool async = field_u64(rec, "async", 0) != 0, first = true;
	int d, tid;

	if (!dir || rank == UINT64_MAX) {
		c->st.ignored++;
		return;
	}
	if (!strcmp(dir, "to_dpu"))
		d = 0;
	else if (!strcmp(dir, "from_dpu"))
		d = 1;
	else {
		c->st.ignored++;
		return;
	}
	c->st.xfers[d]++;
	c->st.xfer_bytes[d] += bytes;
	c->st.xfer_sum_ns[d] += end - start;
	c->st.async_xfers += async;
	if (trace_field(rec, "modeled_ns")) {
		struct track *t = track_get(c, TK_RANK, rank, 0, 0);

		if (!t) {
			c->err = true;
			return;
		}
		t->modeled_ns[d] += field_u64(rec, "modeled_ns", 0);
		if (t->modeled_ns[d] > c->st.xfer_modeled_ns[d])
			c->st.xfer_modeled_ns[d] = t->modeled_ns[d];
		c->st.xfers_modeled++;
	}
	busy_add(c, d ? BUSY_FROM : BUSY_TO, start, end);
	tid = slice_tid(c, TK_RANK, rank, 0, &start, end);
	if (tid < 0) {
		c->err = true;
		return;
	}
	args_reset(c);
	args_rec(c, &first, rec);
	emit_slice(c, d ? (async ? "async xfer from DPUs" : "xfer from DPUs") :
			  (async ? "async xfer to DPUs" : "xfer to DPUs"),
		   "xfer", tid, start, end);
}

static struct pending_job *job_find(struct trace_conv *c, uint64_t rank,
				    uint64_t job)
{
	size_t i;

	for (i = 0; i < c->nr_jobs; i++)
		if (c->jobs[i].rank == rank && c->jobs[i].job == job)
			return &c->jobs[i];
	return NULL;
}

static void job_drop(struct trace_conv *c, struct pending_job *j)
{
	kv_free(&j->kv);
	*j = c->jobs[--c->nr_jobs];
}

static void on_async_queue(struct trace_conv *c, const struct trace_record *rec)
{
	uint64_t rank = field_u64(rec, "rank", UINT64_MAX);
	uint64_t job = field_u64(rec, "job", UINT64_MAX);
	struct pending_job *j;

	if (rank == UINT64_MAX || job == UINT64_MAX) {
		c->st.ignored++;
		return;
	}
	j = job_find(c, rank, job);
	if (j) {
		kv_free(&j->kv);
	} else {
		if (c->nr_jobs == c->cap_jobs) {
			size_t cap = c->cap_jobs ? c->cap_jobs * 2 : 16;
			struct pending_job *p = realloc(c->jobs, cap * sizeof(*p));

			if (!p) {
				c->err = true;
				return;
			}
			c->jobs = p;
			c->cap_jobs = cap;
		}
		j = &c->jobs[c->nr_jobs++];
	}
	j->rank = rank;
	j->job = job;
	j->ts = rec->ts_ns;
	if (kv_save(&j->kv, rec)) {
		c->nr_jobs--;
		c->err = true;
	}
}

/* An async job's slice: queued (with the queue's fields) -> end. */
static void job_slice(struct trace_conv *c, uint64_t rank, uint64_t start,
		      uint64_t end, const struct kv_copy *queued,
		      const struct trace_record *done)
{
	bool first = true;
	int tid;

	busy_add(c, BUSY_ASYNC, start, end);
	tid = slice_tid(c, TK_ASYNC, rank, 0, &start, end);
	if (tid < 0) {
		c->err = true;
		return;
	}
	args_reset(c);
	if (queued)
		sb_args(&c->args, &first, queued->key, queued->val, queued->n,
			NULL, 0);
	if (done)
		sb_args(&c->args, &first, done->key, done->val, done->nr_fields,
			queued ? queued->key : NULL, queued ? queued->n : 0);
	else
		args_flag(c, &first, "unfinished");
	emit_slice(c, "async job", "async", tid, start, end);
}

static void on_async_done(struct trace_conv *c, const struct trace_record *rec)
{
	uint64_t rank = field_u64(rec, "rank", UINT64_MAX);
	uint64_t job = field_u64(rec, "job", UINT64_MAX);
	uint64_t start, end = rec->ts_ns;
	struct pending_job *j;

	if (rank == UINT64_MAX || job == UINT64_MAX) {
		c->st.ignored++;
		return;
	}
	c->st.async_jobs++;
	if (field_s64(rec, "err", 0) != 0)
		c->st.async_errors++;
	j = job_find(c, rank, job);
	if (j && j->ts <= end) {
		job_slice(c, rank, j->ts, end, &j->kv, rec);
	} else {
		start = sub_clamp(end, field_u64(rec, "wait_ns", 0) +
				       field_u64(rec, "duration_ns", 0));
		job_slice(c, rank, start, end, NULL, rec);
	}
	if (j)
		job_drop(c, j);
}

static void on_launch_start(struct trace_conv *c, const struct trace_record *rec)
{
	uint64_t rank = field_u64(rec, "rank", UINT64_MAX);
	uint64_t dpu = field_u64(rec, "dpu", UINT64_MAX);
	struct track *t;

	if (rank == UINT64_MAX || dpu == UINT64_MAX) {
		c->st.ignored++;
		return;
	}
	t = track_get(c, TK_DPU, rank, dpu, 0);
	if (!t) {
		c->err = true;
		return;
	}
	kv_free(&t->start);	/* a start whose end was lost */
	if (!t->started) {
		if (!c->running++) {
			c->st.launch_groups++;
			c->group_max = 0;
		}
	}
	t->started = true;
	t->start_ns = rec->ts_ns;
	if (kv_save(&t->start, rec))
		c->err = true;
}

static void on_launch_end(struct trace_conv *c, const struct trace_record *rec)
{
	uint64_t rank = field_u64(rec, "rank", UINT64_MAX);
	uint64_t dpu = field_u64(rec, "dpu", UINT64_MAX);
	uint64_t start, end = rec->ts_ns;
	const char *state = trace_field(rec, "state");
	bool first = true;
	struct track *t;
	int tid;

	if (rank == UINT64_MAX || dpu == UINT64_MAX) {
		c->st.ignored++;
		return;
	}
	t = track_get(c, TK_DPU, rank, dpu, 0);
	if (!t) {
		c->err = true;
		return;
	}
	if (t->started && t->start_ns <= end)
		start = t->start_ns;
	else
		start = sub_clamp(end, field_u64(rec, "duration_ns", 0));
	if (field_u64(rec, "modeled_cycles", 0)) {
		c->st.runs_modeled++;
		if (field_u64(rec, "modeled_cycles", 0) > c->group_max)
			c->group_max = field_u64(rec, "modeled_cycles", 0);
	}
	if (t->started && c->running && !--c->running) {
		c->st.launch_modeled_cycles += c->group_max;
		c->group_max = 0;
	}
	t->started = false;
	kv_free(&t->start);
	c->st.launches++;
	c->st.launch_sum_ns += end - start;
	busy_add(c, BUSY_LAUNCH, start, end);
	tid = slice_tid(c, TK_DPU, rank, dpu, &start, end);
	if (tid < 0) {
		c->err = true;
		return;
	}
	args_reset(c);
	args_rec(c, &first, rec);
	emit_slice(c, state && !strcmp(state, "fault") ? "launch (fault)" : "launch",
		   "launch", tid, start, end);
}

/* An instant on the track (k, a) named by the event; the fields as args. */
static void instant_on(struct trace_conv *c, const struct trace_record *rec,
		       enum track_kind k, const char *key, uint64_t b,
		       const char *name, const char *cat)
{
	uint64_t a = field_u64(rec, key, UINT64_MAX);
	bool first = true;
	struct track *t;

	if (a == UINT64_MAX) {
		c->st.ignored++;
		return;
	}
	t = track_get(c, k, a, b, 0);
	if (!t) {
		c->err = true;
		return;
	}
	args_reset(c);
	args_rec(c, &first, rec);
	emit_instant(c, name, cat, t->tid, rec->ts_ns);
}

static void on_event(struct trace_conv *c, const struct trace_record *rec)
{
	const char *e = rec->event;
	char name[48];

	if (strncmp(e, "dpusim_", 7)) {
		c->st.ignored++;
		return;
	}
	e += 7;
	c->st.events++;
	if (!c->st.first_ns || rec->ts_ns < c->st.first_ns)
		c->st.first_ns = rec->ts_ns;
	if (rec->ts_ns > c->st.last_ns)
		c->st.last_ns = rec->ts_ns;

	if (!strcmp(e, "xfer")) {
		on_xfer(c, rec);
	} else if (!strcmp(e, "async_queue")) {
		on_async_queue(c, rec);
	} else if (!strcmp(e, "async_done")) {
		on_async_done(c, rec);
	} else if (!strcmp(e, "launch_start")) {
		on_launch_start(c, rec);
	} else if (!strcmp(e, "launch_end")) {
		on_launch_end(c, rec);
	} else if (!strcmp(e, "fault")) {
		uint64_t dpu = field_u64(rec, "dpu", UINT64_MAX);

		if (dpu == UINT64_MAX) {
			c->st.ignored++;
			return;
		}
		c->st.faults++;
		instant_on(c, rec, TK_DPU, "rank", dpu, "fault", "launch");
	} else if (!strcmp(e, "tm_post")) {
		const char *op = trace_field(rec, "op");

		c->st.tm_posts++;
		snprintf(name, sizeof(name), "post %s", op ? op : "?");
		instant_on(c, rec, TK_SRQ, "srq", 0, name, "tm");
	} else if (!strcmp(e, "tm_match")) {
		bool rndv = field_u64(rec, "rndv", 0) != 0;

		c->st.tm_matches++;
		c->st.tm_rndv_matches += rndv;
		instant_on(c, rec, TK_SRQ, "srq", 0,
			   rndv ? "match (rendezvous)" : "match", "tm");
	} else if (!strcmp(e, "tm_unexpected")) {
		c->st.tm_unexpected++;
		instant_on(c, rec, TK_SRQ, "srq", 0, "unexpected", "tm");
	} else if (!strcmp(e, "tm_sync")) {
		c->st.tm_syncs++;
		instant_on(c, rec, TK_SRQ, "srq", 0, "sync", "tm");
	} else if (!strcmp(e, "tm_rndv_read")) {
		c->st.tm_rndv_reads++;
		c->st.tm_rndv_read_bytes += field_u64(rec, "bytes", 0);
		instant_on(c, rec, TK_QP, "qp", 0, "rendezvous read", "tm");
	} else if (!strcmp(e, "tm_fin")) {
		c->st.tm_fins++;
		instant_on(c, rec, TK_QP, "qp", 0, "fin", "tm");
	} else if (!strcmp(e, "tm_completion")) {
		c->st.tm_completions++;
		if (field_u64(rec, "status", 0) != 0)
			c->st.tm_completion_errors++;
		instant_on(c, rec, TK_CQ, "cq", 0, "completion", "tm");
	} else if (!strcmp(e, "tm_overrun")) {
		c->st.tm_overruns++;
		instant_on(c, rec, TK_CQ, "cq", 0, "overrun", "tm");
	} else {
		c->st.events--;
		c->st.ignored++;
	}
}

int trace_conv_line(struct trace_conv *c, char *line)
{
	struct trace_record rec;

	c->st.lines++;
	switch (trace_parse_line(line, &rec)) {
	case TRACE_LINE_EVENT:
		on_event(c, &rec);
		break;
	case TRACE_LINE_LOST:
		c->st.lost += rec.lost;
		break;
	default:
		if (*line && *line != '#')
			c->st.ignored++;
		break;
	}
	return c->err ? -1 : 0;
}

int trace_conv_feed(struct trace_conv *c, const char *buf, size_t len)
{
	const char *nl;

	while (len && (nl = memchr(buf, '\n', len))) {
		size_t n = (size_t)(nl - buf);

		sb_putn(&c->partial, buf, n);
		if (c->partial.err) {
			c->err = true;
			return -1;
		}
		if (c->partial.s) {
			if (trace_conv_line(c, c->partial.s))
				return -1;
			c->partial.len = 0;
			c->partial.s[0] = '\0';
		} else {
			c->st.lines++;	/* an empty line, nothing allocated */
		}
		buf = nl + 1;
		len -= n + 1;
	}
	if (len) {
		sb_putn(&c->partial, buf, len);
		if (c->partial.err) {
			c->err = true;
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ the end */

static void track_name(char *buf, size_t len, const struct track *t)
{
	int n = 0;

	switch (t->kind) {
	case TK_RANK:
		n = snprintf(buf, len, "rank %" PRIu64, t->a);
		break;
	case TK_ASYNC:
		n = snprintf(buf, len, "rank %" PRIu64 " async", t->a);
		break;
	case TK_DPU:
		n = snprintf(buf, len, "rank %" PRIu64 " dpu %" PRIu64, t->a, t->b);
		break;
	case TK_SRQ:
		n = snprintf(buf, len, "tm srq %" PRIu64, t->a);
		break;
	case TK_QP:
		n = snprintf(buf, len, "tm qp %" PRIu64, t->a);
		break;
	case TK_CQ:
		n = snprintf(buf, len, "tm cq %" PRIu64, t->a);
		break;
	}
	if (t->lane && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " #%u", t->lane + 1);
}

/*
 * Track order: each rank's transfers, async queue and DPUs (by number),
 * rank after rank; then the SRQs, QPs and CQs.
 */
static int cmp_track(const void *x, const void *y)
{
	const struct track *a = *(const struct track *const *)x;
	const struct track *b = *(const struct track *const *)y;
	bool ra = a->kind <= TK_DPU, rb = b->kind <= TK_DPU;

	if (ra != rb)
		return ra ? -1 : 1;
	if (ra) {
		if (a->a != b->a)
			return a->a < b->a ? -1 : 1;
		if (a->kind != b->kind)
			return a->kind < b->kind ? -1 : 1;
	} else {
		if (a->kind != b->kind)
			return a->kind < b->kind ? -1 : 1;
		if (a->a != b->a)
			return a->a < b->a ? -1 : 1;
	}
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	return (a->lane > b->lane) - (a->lane < b->lane);
}

static void emit_meta(struct trace_conv *c, const char *what, int tid,
		      const char *key, const char *str, long long num)
{
	c->ev.len = 0;
	c->ev.err = false;
	sb_printf(&c->ev, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"%s\":",
		  what, TRACE_PID, tid, key);
	if (str)
		sb_json_string(&c->ev, str);
	else
		sb_printf(&c->ev, "%lld", num);
	sb_puts(&c->ev, "}}");
	ev_flush(c);
}

static void finish_pending(struct trace_conv *c)
{
	uint64_t end = c->st.last_ns;
	size_t i;

	/* launches still running: up to the last event */
	for (i = 0; i < c->nr_tracks; i++) {
		struct track *t = &c->tracks[i];
		uint64_t rank = t->a, dpu = t->b, start = t->start_ns, e;
		struct kv_copy kv;
		bool first = true;
		int tid;

		if (t->kind != TK_DPU || !t->started)
			continue;
		kv = t->start;
		t->start.buf = NULL;
		t->started = false;
		e = end > start ? end : start;
		c->st.launches++;
		c->st.launches_unfinished++;
		c->st.launch_sum_ns += e - start;
		busy_add(c, BUSY_LAUNCH, start, e);
		tid = slice_tid(c, TK_DPU, rank, dpu, &start, e);	/* may move tracks */
		if (tid < 0) {
			free(kv.buf);
			c->err = true;
			return;
		}
		args_reset(c);
		sb_args(&c->args, &first, kv.key, kv.val, kv.n, NULL, 0);
		args_flag(c, &first, "unfinished");
		emit_slice(c, "launch", "launch", tid, start, e);
		free(kv.buf);
	}
	/* async jobs queued, not done */
	while (c->nr_jobs) {
		struct pending_job *j = &c->jobs[0];

		job_slice(c, j->rank, j->ts, end > j->ts ? end : j->ts, &j->kv, NULL);
		job_drop(c, j);
	}
}

int trace_conv_finish(struct trace_conv *c, const struct trace_run_info *info)
{
	const struct track **order;
	char name[96];
	size_t i;

	if (c->finished)
		return c->err ? -1 : 0;
	c->finished = true;
	if (c->partial.len) {
		c->partial.len = 0;
		trace_conv_line(c, c->partial.s);
	}
	finish_pending(c);
	c->st.xfer_busy_ns[0] = busy_union(&c->busy[BUSY_TO]);
	c->st.xfer_busy_ns[1] = busy_union(&c->busy[BUSY_FROM]);
	c->st.async_busy_ns = busy_union(&c->busy[BUSY_ASYNC]);
	c->st.launch_busy_ns = busy_union(&c->busy[BUSY_LAUNCH]);

	emit_meta(c, "process_name", 0, "name", "dpusim", 0);
	order = malloc((c->nr_tracks ? c->nr_tracks : 1) * sizeof(*order));
	if (!order)
		return -1;
	for (i = 0; i < c->nr_tracks; i++)
		order[i] = &c->tracks[i];
	qsort(order, c->nr_tracks, sizeof(*order), cmp_track);
	for (i = 0; i < c->nr_tracks; i++) {
		track_name(name, sizeof(name), order[i]);
		emit_meta(c, "thread_name", order[i]->tid, "name", name, 0);
		emit_meta(c, "thread_sort_index", order[i]->tid, "sort_index", NULL,
			  (long long)i);
	}
	free(order);

	write_start(c);
	if (c->out) {
		struct strbuf b = { 0 };

		sb_puts(&b, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"tool\":\"dpusim trace\"");
		if (info && info->command) {
			sb_puts(&b, ",\"command\":");
			sb_json_string(&b, info->command);
		}
		if (info && info->status) {
			sb_puts(&b, ",\"status\":");
			sb_json_string(&b, info->status);
		}
		if (info) {
			sb_printf(&b, ",\"exit_status\":%d,\"wall_ns\":%" PRIu64,
				  info->exit_status, info->wall_ns);
			if (info->clock) {
				sb_puts(&b, ",\"clock\":");
				sb_json_string(&b, info->clock);
			}
		}
		sb_printf(&b, ",\"events\":%" PRIu64 ",\"lost_events\":%" PRIu64 "}}\n",
			  c->st.events, c->st.lost);
		if (b.err)
			c->err = true;
		else
			fputs(b.s, c->out);
		free(b.s);
		if (fflush(c->out) || ferror(c->out))
			c->err = true;
	}
	return c->err ? -1 : 0;
}

/* ------------------------------------------------------------ summary */

void trace_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double d = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return;
	}
	while (d >= 1024 && u < 3) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", d, units[u]);
}

void trace_fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void trace_summary(FILE *f, const struct trace_stats *s,
		   const struct trace_run_info *info)
{
	char b0[32], t0[32], b1[32], t1[32], t2[32], t3[32];

	fprintf(f, "dpusim trace: %s %s after ",
		info && info->command ? info->command : "the command",
		info && info->status ? info->status : "ended");
	trace_fmt_ns(t0, sizeof(t0), info ? info->wall_ns : 0);
	fprintf(f, "%s\n", t0);

	trace_fmt_bytes(b0, sizeof(b0), s->xfer_bytes[0]);
	trace_fmt_bytes(b1, sizeof(b1), s->xfer_bytes[1]);
	trace_fmt_ns(t0, sizeof(t0), s->xfer_busy_ns[0]);
	trace_fmt_ns(t1, sizeof(t1), s->xfer_busy_ns[1]);
	fprintf(f, "  transfers: %" PRIu64 " (%s to DPUs in %s, %" PRIu64 " %s; %s from DPUs in %s, %" PRIu64 " %s)",
		s->xfers[0] + s->xfers[1], b0, t0, s->xfers[0],
		plural(s->xfers[0], "transfer", "transfers"), b1, t1, s->xfers[1],
		plural(s->xfers[1], "transfer", "transfers"));
	if (s->xfers_modeled) {
		trace_fmt_ns(t2, sizeof(t2), s->xfer_modeled_ns[0]);
		trace_fmt_ns(t3, sizeof(t3), s->xfer_modeled_ns[1]);
		fprintf(f, "; modeled on UPMEM hardware: %s to, %s from the DPUs (the busiest rank)",
			t2, t3);
	}
	if (s->async_jobs || s->async_xfers) {
		trace_fmt_ns(t2, sizeof(t2), s->async_busy_ns);
		fprintf(f, "; async: %" PRIu64 " %s (%s queued or copying)",
			s->async_jobs, plural(s->async_jobs, "job", "jobs"), t2);
		if (s->async_errors)
			fprintf(f, ", %" PRIu64 " failed", s->async_errors);
	}
	fputc('\n', f);

	trace_fmt_ns(t2, sizeof(t2), s->launch_busy_ns);
	trace_fmt_ns(t3, sizeof(t3), s->launch_sum_ns);
	fprintf(f, "  launches: %" PRIu64 " DPU %s (%s busy, %s of DPU time)",
		s->launches, plural(s->launches, "run", "runs"), t2, t3);
	if (s->launches_unfinished)
		fprintf(f, ", %" PRIu64 " still running at the end", s->launches_unfinished);
	fprintf(f, ", %" PRIu64 " %s\n", s->faults, plural(s->faults, "fault", "faults"));
	if (s->runs_modeled || s->xfers_modeled) {
		/* PrIM's split of a program's time; cycles of a v1A DPU */
		trace_fmt_ns(t0, sizeof(t0), s->xfer_modeled_ns[0]);
		trace_fmt_ns(t1, sizeof(t1), s->launch_modeled_cycles * 20 / 7);
		trace_fmt_ns(t2, sizeof(t2), s->xfer_modeled_ns[1]);
		fprintf(f, "  modeled on UPMEM hardware: CPU-DPU %s, DPU kernel %s (%" PRIu64 " %s at 350 MHz), DPU-CPU %s\n",
			t0, t1, s->launch_groups, plural(s->launch_groups, "launch", "launches"), t2);
	}

	if (s->tm_posts || s->tm_matches || s->tm_unexpected || s->tm_syncs ||
	    s->tm_rndv_reads || s->tm_fins || s->tm_completions || s->tm_overruns) {
		fprintf(f, "  tm: %" PRIu64 " %s (%" PRIu64 " rendezvous), %" PRIu64 " unexpected, %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64 " rendezvous %s, %" PRIu64 " %s, %" PRIu64 " %s",
			s->tm_matches, plural(s->tm_matches, "match", "matches"),
			s->tm_rndv_matches, s->tm_unexpected, s->tm_posts,
			plural(s->tm_posts, "post", "posts"), s->tm_syncs,
			plural(s->tm_syncs, "sync", "syncs"), s->tm_rndv_reads,
			plural(s->tm_rndv_reads, "read", "reads"), s->tm_fins,
			plural(s->tm_fins, "fin", "fins"), s->tm_completions,
			plural(s->tm_completions, "completion", "completions"));
		if (s->tm_completion_errors)
			fprintf(f, " (%" PRIu64 " not successful)", s->tm_completion_errors);
		fprintf(f, ", %" PRIu64 " %s\n", s->tm_overruns,
			plural(s->tm_overruns, "overrun", "overruns"));
	}
	if (s->lost)
		fprintf(f, "  warning: %" PRIu64 " events lost (the trace buffer overflowed)\n",
			s->lost);
	if (info && info->output)
		fprintf(f, "  trace: %s (%" PRIu64 " dpusim %s, %" PRIu64 " trace events)\n",
			info->output, s->events, plural(s->events, "event", "events"),
			s->json_events);
	else
		fprintf(f, "  %" PRIu64 " dpusim %s\n", s->events,
			plural(s->events, "event", "events"));
}

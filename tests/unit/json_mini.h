/* SPDX-License-Identifier: MIT */
/*
 * json_mini.h - a strict little JSON parser for the tests (RFC 8259:
 * no trailing commas, no leading zeros, escapes checked, \u with
 * surrogate pairs, strings in valid UTF-8, nothing after the value but
 * blanks).  The tree is
 * malloc'd; json_free() frees it.  Header-only: include it once.
 *
 *   struct jnode *root = json_parse(text, err, sizeof(err));
 *   const struct jnode *ev = json_get(root, "traceEvents");
 *   for (i = 0; i < ev->n; i++) ... ev->kids[i] ...
 */
#ifndef DPUSIM_TESTS_JSON_MINI_H
#define DPUSIM_TESTS_JSON_MINI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jnode {
	enum jtype t;
	bool b;
	double num;
	char *str;		/* J_STR: decoded, NUL-terminated */
	size_t n;		/* J_ARR, J_OBJ: members */
	struct jnode *kids;	/* [n] */
	char **keys;		/* J_OBJ: [n] */
};

struct jparser {
	const char *p;
	char *err;
	size_t errlen;
	unsigned int depth;
};

static bool jfail(struct jparser *j, const char *what)
{
	if (j->err && !j->err[0])
		snprintf(j->err, j->errlen, "%s at \"%.20s\"", what, j->p);
	return false;
}

static void jskip(struct jparser *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static void jnode_clear(struct jnode *n)
{
	size_t i;

	if (n->t == J_ARR || n->t == J_OBJ) {
		for (i = 0; i < n->n; i++) {
			jnode_clear(&n->kids[i]);
			if (n->keys)
				free(n->keys[i]);
		}
		free(n->kids);
		free(n->keys);
	}
	free(n->str);
	memset(n, 0, sizeof(*n));
}

static int jhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool jhex4(struct jparser *j, unsigned int *v)
{
	int i, h;

	*v = 0;
	for (i = 0; i < 4; i++) {
		h = jhex(j->p[i]);
		if (h < 0)
			return jfail(j, "bad \\u escape");
		*v = *v * 16 + (unsigned int)h;
	}
	j->p += 4;
	return true;
}

/* a string at j->p (the opening quote), decoded into *out */
static bool jstring(struct jparser *j, char **out)
{
	size_t cap = 16, len = 0;
	char *s = malloc(cap);

	if (!s)
		return jfail(j, "out of memory");
	j->p++;
	for (;;) {
		unsigned char c = (unsigned char)*j->p;
		char u[4];
		size_t ulen = 1;

		if (c == '"') {
			j->p++;
			break;
		}
		if (c < 0x20) {
			free(s);
			return jfail(j, c ? "control character in a string" :
					    "unterminated string");
		}
		if (c >= 0x80) {	/* one UTF-8 sequence, checked */
			const unsigned char *q = (const unsigned char *)j->p;
			unsigned int cp, k;

			if (c >= 0xc2 && c <= 0xdf)
				ulen = 2, cp = c & 0x1f;
			else if (c >= 0xe0 && c <= 0xef)
				ulen = 3, cp = c & 0x0f;
			else if (c >= 0xf0 && c <= 0xf4)
				ulen = 4, cp = c & 0x07;
			else
				ulen = 0, cp = 0;
			for (k = 1; k < ulen; k++) {
				if ((q[k] & 0xc0) != 0x80)
					ulen = 0;
				else
					cp = (cp << 6) | (q[k] & 0x3f);
			}
			if (!ulen || (ulen == 3 && cp < 0x800) ||
			    (ulen == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
			    (cp >= 0xd800 && cp <= 0xdfff)) {
				free(s);
				return jfail(j, "bad UTF-8");
			}
			memcpy(u, q, ulen);
			j->p += ulen;
		} else {
			u[0] = (char)c;
			j->p++;
		}
		if (c == '\\') {
			unsigned int cp, lo;

			c = (unsigned char)*j->p++;
			switch (c) {
			case '"': case '\\': case '/': u[0] = (char)c; break;
			case 'b': u[0] = '\b'; break;
			case 'f': u[0] = '\f'; break;
			case 'n': u[0] = '\n'; break;
			case 'r': u[0] = '\r'; break;
			case 't': u[0] = '\t'; break;
			case 'u':
				if (!jhex4(j, &cp)) {
					free(s);
					return false;
				}
				if (cp >= 0xd800 && cp < 0xdc00) {
					if (j->p[0] != '\\' || j->p[1] != 'u') {
						free(s);
						return jfail(j, "lone surrogate");
					}
					j->p += 2;
					if (!jhex4(j, &lo) || lo < 0xdc00 || lo > 0xdfff) {
						free(s);
						return jfail(j, "bad surrogate pair");
					}
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				} else if (cp >= 0xdc00 && cp < 0xe000) {
					free(s);
					return jfail(j, "lone surrogate");
				}
				if (cp < 0x80) {
					u[0] = (char)cp;
				} else if (cp < 0x800) {
					u[0] = (char)(0xc0 | (cp >> 6));
					u[1] = (char)(0x80 | (cp & 0x3f));
					ulen = 2;
				} else if (cp < 0x10000) {
					u[0] = (char)(0xe0 | (cp >> 12));
					u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
					u[2] = (char)(0x80 | (cp & 0x3f));
					ulen = 3;
				} else {
					u[0] = (char)(0xf0 | (cp >> 18));
					u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
					u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
					u[3] = (char)(0x80 | (cp & 0x3f));
					ulen = 4;
				}
				break;
			default:
				free(s);
				j->p--;
				return jfail(j, "bad escape");
			}
		}
		if (len + ulen + 1 > cap) {
			char *p;

			cap = cap * 2 + ulen;
			p = realloc(s, cap);
			if (!p) {
				free(s);
				return jfail(j, "out of memory");
			}
			s = p;
		}
		memcpy(s + len, u, ulen);
		len += ulen;
	}
	s[len] = '\0';
	*out = s;
	return true;
}

static bool jnumber(struct jparser *j, double *out)
{
	const char *s = j->p;
	char *end;

	if (*j->p == '-')
		j->p++;
	if (*j->p == '0')
		j->p++;
	else if (*j->p >= '1' && *j->p <= '9')
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
	else
		return jfail(j, "bad number");
	if (*j->p == '.') {
		j->p++;
		if (!(*j->p >= '0' && *j->p <= '9'))
			return jfail(j, "bad fraction");
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	if (*j->p == 'e' || *j->p == 'E') {
		j->p++;
		if (*j->p == '+' || *j->p == '-')
			j->p++;
		if (!(*j->p >= '0' && *j->p <= '9'))
			return jfail(j, "bad exponent");
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	*out = strtod(s, &end);
	if (end != j->p)
		return jfail(j, "bad number");
	return true;
}

static bool jvalue(struct jparser *j, struct jnode *n);

static bool jpush(struct jparser *j, struct jnode *n, size_t *cap, char *key)
{
	if (n->n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct jnode *k = realloc(n->kids, c * sizeof(*k));
		char **keys;

		if (!k)
			return jfail(j, "out of memory");
		n->kids = k;
		if (n->t == J_OBJ) {
			keys = realloc(n->keys, c * sizeof(*keys));
			if (!keys)
				return jfail(j, "out of memory");
			n->keys = keys;
		}
		*cap = c;
	}
	memset(&n->kids[n->n], 0, sizeof(n->kids[0]));
	if (n->t == J_OBJ)
		n->keys[n->n] = key;
	n->n++;
	return true;
}

static bool jcontainer(struct jparser *j, struct jnode *n, char close)
{
	size_t cap = 0;

	if (++j->depth > 64)
		return jfail(j, "too deep");
	j->p++;
	jskip(j);
	if (*j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		char *key = NULL;

		jskip(j);
		if (n->t == J_OBJ) {
			if (*j->p != '"')
				return jfail(j, "expected a key");
			if (!jstring(j, &key))
				return false;
			jskip(j);
			if (*j->p != ':') {
				free(key);
				return jfail(j, "expected ':'");
			}
			j->p++;
		}
		if (!jpush(j, n, &cap, key)) {
			free(key);
			return false;
		}
		if (!jvalue(j, &n->kids[n->n - 1]))
			return false;
		jskip(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == close) {
			j->p++;
			j->depth--;
			return true;
		}
		return jfail(j, "expected ',' or a closing bracket");
	}
}

static bool jvalue(struct jparser *j, struct jnode *n)
{
	jskip(j);
	switch (*j->p) {
	case '{':
		n->t = J_OBJ;
		return jcontainer(j, n, '}');
	case '[':
		n->t = J_ARR;
		return jcontainer(j, n, ']');
	case '"':
		n->t = J_STR;
		return jstring(j, &n->str);
	case 't':
		if (strncmp(j->p, "true", 4))
			return jfail(j, "bad literal");
		j->p += 4;
		n->t = J_BOOL;
		n->b = true;
		return true;
	case 'f':
		if (strncmp(j->p, "false", 5))
			return jfail(j, "bad literal");
		j->p += 5;
		n->t = J_BOOL;
		return true;
	case 'n':
		if (strncmp(j->p, "null", 4))
			return jfail(j, "bad literal");
		j->p += 4;
		n->t = J_NULL;
		return true;
	default:
		n->t = J_NUM;
		return jnumber(j, &n->num);
	}
}

static inline void json_free(struct jnode *n)
{
	if (!n)
		return;
	jnode_clear(n);
	free(n);
}

/* The tree of @text, or NULL with a message in @err. */
static inline struct jnode *json_parse(const char *text, char *err, size_t errlen)
{
	struct jparser j = { .p = text, .err = err, .errlen = errlen };
	struct jnode *n = calloc(1, sizeof(*n));

	if (err && errlen)
		err[0] = '\0';
	if (!n) {
		if (err)
			snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!jvalue(&j, n)) {
		json_free(n);
		return NULL;
	}
	jskip(&j);
	if (*j.p) {
		jfail(&j, "text after the value");
		json_free(n);
		return NULL;
	}
	return n;
}

/* The member @key of object @o (the first if repeated), or NULL. */
static inline const struct jnode *json_get(const struct jnode *o, const char *key)
{
	size_t i;

	if (!o || o->t != J_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->kids[i];
	return NULL;
}

/* How many times @key is a member of @o (duplicates: more than 1). */
static inline size_t json_count_key(const struct jnode *o, const char *key)
{
	size_t i, c = 0;

	if (!o || o->t != J_OBJ)
		return 0;
	for (i = 0; i < o->n; i++)
		c += !strcmp(o->keys[i], key);
	return c;
}

/* @o[key] as a string, or NULL */
static inline const char *json_str(const struct jnode *o, const char *key)
{
	const struct jnode *v = json_get(o, key);

	return v && v->t == J_STR ? v->str : NULL;
}

/* @o[key] as a number; @def if absent or not a number */
static inline double json_num(const struct jnode *o, const char *key, double def)
{
	const struct jnode *v = json_get(o, key);

	return v && v->t == J_NUM ? v->num : def;
}

#endif /* DPUSIM_TESTS_JSON_MINI_H */

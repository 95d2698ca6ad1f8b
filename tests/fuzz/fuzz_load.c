/*
 * libFuzzer harness for the saved-profile readers (src/input/load.h): pprof
 * (plain or gzip'd) and collapsed text, detected from the content. A profile
 * that loads is then written in every output format, and each output is
 * checked for what a hostile name must never break:
 *   - collapsed: one "STACK COUNT" per line, UTF-8, no control characters;
 *     loading it again keeps every sample, and from the second round on
 *     writing and loading is a fixed point;
 *   - text: UTF-8, no control characters but '\n' (no terminal escapes, no
 *     bidirectional formatting controls);
 *   - speedscope and gecko: valid JSON (strict, UTF-8);
 *   - HTML (flame graph, and the differential one against the profile as
 *     pprof gives it back): the data block is valid JSON that nothing
 *     inside can close; the diff table is terminal-safe;
 *   - pprof: loads again.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/load.h"
#include "output/diff.h"
#include "output/output.h"
#include "profile/profile.h"
#include "util/strbuf.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_load: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#include "oracle.h"

/* ---- output checks -------------------------------------------------------- */

/*
 * The checkers are not the code under test: keep them out of the coverage
 * feedback (and their comparisons out of the fuzzer's hot path).
 */
#define CHECKER __attribute__((no_sanitize("coverage")))

/* UTF-8 with no C0/C1 control character and no DEL, except '\n'. */
CHECKER static void check_terminal_safe(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t l = oracle_utf8_seq(u + i, n - i);

		CHECK(l);
		if (l == 1)
			CHECK(u[i] == '\n' || (u[i] >= 0x20 && u[i] != 0x7f));
		if (l == 2)
			CHECK(!(u[i] == 0xc2 && u[i + 1] < 0xa0) &&
			      !(u[i] == 0xd8 && u[i + 1] == 0x9c));
		/* no bidirectional formatting control (U+200E-F, U+202A-E, U+2066-9) */
		if (l == 3 && u[i] == 0xe2)
			CHECK(!(u[i + 1] == 0x80 && (u[i + 2] == 0x8e || u[i + 2] == 0x8f ||
						     (u[i + 2] >= 0xaa && u[i + 2] <= 0xae))) &&
			      !(u[i + 1] == 0x81 && u[i + 2] >= 0xa6 && u[i + 2] <= 0xa9));
		i += l;
	}
}

CHECKER static void check_collapsed(const char *s, size_t n)
{
	size_t start = 0;

	check_terminal_safe(s, n);
	CHECK(n == 0 || s[n - 1] == '\n');
	while (start < n) {
		const char *nl = memchr(s + start, '\n', n - start);
		size_t end = (size_t)(nl - s), i = end;

		/* "... COUNT": digits after the last space */
		while (i > start && s[i - 1] >= '0' && s[i - 1] <= '9')
			i--;
		CHECK(i < end && i > start + 1 && s[i - 1] == ' ');
		start = end + 1;
	}
}

/* A strict JSON syntax check (RFC 8259), strings UTF-8 without controls. */
struct jp {
	const unsigned char *s;
	size_t n, i;
	int depth;
};

CHECKER static void jp_ws(struct jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\n' ||
			       p->s[p->i] == '\r' || p->s[p->i] == '\t'))
		p->i++;
}

CHECKER static int jp_value(struct jp *p);

CHECKER static int jp_lit(struct jp *p, const char *lit)
{
	size_t l = strlen(lit);

	if (p->n - p->i < l || memcmp(p->s + p->i, lit, l))
		return 0;
	p->i += l;
	return 1;
}

CHECKER static int jp_string(struct jp *p)
{
	if (p->i >= p->n || p->s[p->i] != '"')
		return 0;
	p->i++;
	while (p->i < p->n) {
		unsigned char c = p->s[p->i];
		size_t l;

		if (c == '"') {
			p->i++;
			return 1;
		}
		if (c < 0x20)
			return 0;
		if (c == '\\') {
			if (++p->i >= p->n)
				return 0;
			c = p->s[p->i];
			if (c == 'u') {
				for (int k = 1; k <= 4; k++) {
					unsigned char h = p->i + k < p->n ? p->s[p->i + k] : 0;
					if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') ||
					      (h >= 'A' && h <= 'F')))
						return 0;
				}
				p->i += 5;
			} else if (strchr("\"\\/bfnrt", c) && c) {
				p->i++;
			} else {
				return 0;
			}
			continue;
		}
		l = oracle_utf8_seq(p->s + p->i, p->n - p->i);
		if (!l)
			return 0;
		p->i += l;
	}
	return 0;
}

CHECKER static int jp_number(struct jp *p)
{
	size_t start = p->i;

	if (p->i < p->n && p->s[p->i] == '-')
		p->i++;
	if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
		return 0;
	if (p->s[p->i] == '0')
		p->i++;
	else
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
	if (p->i < p->n && p->s[p->i] == '.') {
		p->i++;
		if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
			return 0;
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
			return 0;
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
	}
	return p->i > start;
}

CHECKER static int jp_container(struct jp *p, char open, char close)
{
	int first = 1;

	if (++p->depth > 512)
		return 0;
	p->i++;                         /* open */
	(void)open;
	for (;;) {
		jp_ws(p);
		if (p->i < p->n && p->s[p->i] == close && first) {
			p->i++;
			break;
		}
		if (close == '}') {
			if (!jp_string(p))
				return 0;
			jp_ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return 0;
			p->i++;
		}
		if (!jp_value(p))
			return 0;
		jp_ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			first = 0;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == close) {
			p->i++;
			break;
		}
		return 0;
	}
	p->depth--;
	return 1;
}

CHECKER static int jp_value(struct jp *p)
{
	jp_ws(p);
	if (p->i >= p->n)
		return 0;
	switch (p->s[p->i]) {
	case '{':
		return jp_container(p, '{', '}');
	case '[':
		return jp_container(p, '[', ']');
	case '"':
		return jp_string(p);
	case 't':
		return jp_lit(p, "true");
	case 'f':
		return jp_lit(p, "false");
	case 'n':
		return jp_lit(p, "null");
	default:
		return jp_number(p);
	}
}

CHECKER static void check_json(const char *s, size_t n)
{
	struct jp p = { (const unsigned char *)s, n, 0, 0 };

	CHECK(jp_value(&p));
	jp_ws(&p);
	CHECK(p.i == n);
}

#define DATA_OPEN "<script type=\"application/json\" id=\"fw-data\">"

/* The page's data block, up to the first "</script": valid JSON, no "<!--". */
CHECKER static void check_html(const char *s, size_t n)
{
	const char *open = memmem(s, n, DATA_OPEN, strlen(DATA_OPEN)), *data, *close;

	CHECK(open);
	data = open + strlen(DATA_OPEN);
	close = memmem(data, n - (size_t)(data - s), "</script", 8);
	CHECK(close);
	CHECK(!memmem(data, (size_t)(close - data), "<!--", 4));
	check_json(data, (size_t)(close - data));
}

/* ---- the harness ---------------------------------------------------------- */

typedef int (*diff_writer)(const struct profile *, const char *, const struct profile *,
			   const char *, FILE *, const struct output_opts *);

static char *render_diff(diff_writer w, const struct profile *a, const struct profile *b,
			 size_t *len)
{
	struct output_opts o;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	CHECK(f);
	output_opts_default(&o);
	CHECK(w(a, "before", b, "after", f, &o) == 0);
	CHECK(fclose(f) == 0);
	return buf;
}

static char *render(const struct profile *p, const char *format, size_t *len)
{
	struct output_opts o;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	CHECK(f);
	output_opts_default(&o);
	CHECK(outfmt_write(outfmt_find(format, OUTFMT_PROFILE), p, f, &o) == 0);
	CHECK(fclose(f) == 0);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	struct profile p, again;
	char *coll, *coll2, *out;
	size_t coll_len, coll2_len, len;

	if (profile_load_buffer(data, size, "fuzz", &p, &err)) {
		CHECK(err.len > 0);
		strbuf_release(&err);
		profile_release(&p);
		return 0;
	}
	strbuf_release(&err);

	coll = render(&p, "collapsed", &coll_len);
	check_collapsed(coll, coll_len);
	out = render(&p, "text", &len);
	check_terminal_safe(out, len);
	free(out);
	out = render(&p, "speedscope", &len);
	check_json(out, len);
	free(out);
	out = render(&p, "gecko", &len);
	check_json(out, len);
	free(out);

	/* pprof loads again */
	out = render(&p, "html", &len);
	check_html(out, len);
	free(out);

	out = render(&p, "pprof", &len);
	CHECK(profile_load_buffer(out, len, "pprof", &again, &err) == 0);
	free(out);
	out = render_diff(output_html_diff, &p, &again, &len);
	check_html(out, len);
	free(out);
	out = render_diff(output_diff_text, &again, &p, &len);
	check_terminal_safe(out, len);
	profile_release(&again);
	strbuf_release(&err);
	free(out);

	/*
	 * collapsed -> load -> collapsed keeps every sample, and is a fixed
	 * point from the second round on (the first may merge stacks whose
	 * names differed only in bytes the escaping replaced).
	 */
	if (coll_len) {
		struct profile third;
		char *coll3;
		size_t coll3_len;

		CHECK(profile_load_buffer(coll, coll_len, "collapsed", &again, &err) == 0);
		CHECK(profile_total(&again) == profile_total(&p));
		coll2 = render(&again, "collapsed", &coll2_len);
		CHECK(profile_load_buffer(coll2, coll2_len, "collapsed", &third, &err) == 0);
		coll3 = render(&third, "collapsed", &coll3_len);
		CHECK(coll3_len == coll2_len && !memcmp(coll2, coll3, coll2_len));
		free(coll3);
		free(coll2);
		profile_release(&third);
		profile_release(&again);
		strbuf_release(&err);
	}
	free(coll);
	profile_release(&p);
	return 0;
}

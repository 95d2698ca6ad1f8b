/*
 * Reader of collapsed stacks, as output/collapsed.c writes them and as
 * flamegraph.pl, py-spy and inferno exchange them: one "STACK COUNT" per
 * line, STACK being ';'-separated frames, outermost first. Our own files
 * start each stack with the thread, "name (tid)" (with " [pid N]" when the
 * profile holds several processes); a first element of that shape is read as
 * the thread, otherwise the line belongs to a thread "all" with tid 0. Frames "name (file:line)" and "name (file)" are split back into
 * their parts, so writing the profile again gives the same text.
 */
#include <errno.h>

#include "input/load.h"
#include "input/readers.h"
#include "util/util.h"

struct span {
	const char *s;
	size_t n;
};

static int all_digits(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* Parse up to 19 digits; 0 or -ERANGE. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* A thread named "NAME (exec N)" runs after its process's Nth exec (sampler/threads.c). */
static unsigned exec_generation(struct span name)
{
	static const char tag[] = " (exec ";
	size_t i = name.n;
	uint64_t n;

	if (!i || name.s[i - 1] != ')')
		return 0;
	i--;
	while (i > 0 && name.s[i - 1] >= '0' && name.s[i - 1] <= '9')
		i--;
	if (i < sizeof(tag) - 1 || memcmp(name.s + i - (sizeof(tag) - 1), tag, sizeof(tag) - 1) ||
	    name.n - 1 - i == 0 || name.n - 1 - i > 6 || parse_u64(name.s + i, name.n - 1 - i, &n))
		return 0;
	return (unsigned)n;
}

/*
 * Split "name (inner)" at the " (" that opens the final parenthesised group,
 * matching parentheses from the end so a path like "/a (copy)/b.py" stays
 * whole. Returns 0 when the element has no such group.
 */
static int split_paren(struct span e, struct span *name, struct span *inner)
{
	int depth = 0;

	if (e.n < 4 || e.s[e.n - 1] != ')')
		return 0;
	for (size_t i = e.n; i-- > 0;) {
		if (e.s[i] == ')') {
			depth++;
		} else if (e.s[i] == '(') {
			if (--depth == 0) {
				if (i == 0 || e.s[i - 1] != ' ')
					return 0;   /* the name may be empty: " (tid)" */
				name->s = e.s;
				name->n = i - 1;
				inner->s = e.s + i + 1;
				inner->n = e.n - i - 2;
				return 1;
			}
		}
	}
	return 0;
}

static int file_is_python(struct span f)
{
	static const char *const exts[] = { ".py", ".pyw", ".pyx" };

	if (f.n && f.s[0] == '<')
		return 1;   /* <frozen ...>, <string>, <stdin> */
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++) {
		size_t k = strlen(exts[i]);
		if (f.n >= k && !memcmp(f.s + f.n - k, exts[i], k))
			return 1;
	}
	return 0;
}

static uint32_t parse_frame(struct profile *p, struct span e)
{
	struct span name = e, inner = { NULL, 0 }, file = { NULL, 0 };
	int64_t line = 0;
	enum frame_kind kind;

	if (split_paren(e, &name, &inner)) {
		const char *colon = NULL;

		for (size_t i = inner.n; i-- > 0;)
			if (inner.s[i] == ':') {
				colon = inner.s + i;
				break;
			}
		file = inner;
		if (colon) {
			size_t dn = inner.n - (size_t)(colon - inner.s) - 1;
			uint64_t v;

			if (dn <= 9 && all_digits(colon + 1, dn) && !parse_u64(colon + 1, dn, &v) &&
			    v <= INT32_MAX) {
				line = (int64_t)v;
				file.n = (size_t)(colon - inner.s);
			}
		}
	}
	if (file.n)
		kind = file_is_python(file) ? FRAME_PYTHON : FRAME_NATIVE;
	else if (name.n >= 2 && name.s[0] == '<' && name.s[name.n - 1] == '>')
		kind = FRAME_OTHER;
	else
		kind = FRAME_NATIVE;
	return profile_frame(p, kind, profile_string(p, name.s, name.n),
			     file.n ? profile_string(p, file.s, file.n) : 0, (int32_t)line);
}

/*
 * "name (tid)", or "name (tid) [pid N]" when the profile holds several
 * processes -> thread; returns 0 when e does not have that shape.
 */
static int parse_thread(struct profile *p, struct span e, uint32_t *thread, struct strbuf *tmp)
{
	static const char pid_tag[] = " [pid ";
	const size_t tag = sizeof(pid_tag) - 1;
	struct span name, inner;
	uint64_t tid, pid = 0;

	if (e.n > tag + 1 && e.s[e.n - 1] == ']') {
		size_t i = e.n - 1;

		while (i > 0 && e.s[i - 1] >= '0' && e.s[i - 1] <= '9')
			i--;
		if (i < tag || memcmp(e.s + i - tag, pid_tag, tag) || e.n - 1 - i > 9 ||
		    parse_u64(e.s + i, e.n - 1 - i, &pid) || !all_digits(e.s + i, e.n - 1 - i) ||
		    pid > INT32_MAX)
			return 0;
		e.n = i - tag;
	}
	if (!split_paren(e, &name, &inner) || inner.n > 9 || !all_digits(inner.s, inner.n))
		return 0;
	if (parse_u64(inner.s, inner.n, &tid) || tid > INT32_MAX)
		return 0;
	strbuf_reset(tmp);
	strbuf_add(tmp, name.s, name.n);
	*thread = profile_thread_gen(p, (pid_t)pid, (pid_t)tid, exec_generation(name), strbuf_str(tmp));
	return 1;
}

static int line_error(struct strbuf *err, size_t lineno, int first, const char *what)
{
	if (first)
		strbuf_addf(err, "not a recognised profile (neither pprof nor collapsed stacks): "
			    "line %zu: %s", lineno, what);
	else
		strbuf_addf(err, "line %zu: %s", lineno, what);
	return -EINVAL;
}

int read_collapsed(const unsigned char *bytes, size_t len, int compressed, struct profile *p,
		   struct strbuf *err)
{
	const char *data = (const char *)bytes;
	uint32_t *frames = xmalloc(sizeof(*frames) * LOAD_MAX_DEPTH);
	struct strbuf tmp = STRBUF_INIT;
	size_t lineno = 0, pos = 0, nlines = 0;
	uint64_t total = 0;
	int ret = 0;

	(void)compressed;   /* a gzip'd text file reads like a plain one */
	while (pos < len) {
		const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		size_t sp, depth = 0, start;
		uint64_t count;
		uint32_t thread = 0;
		int have_thread = 0;

		pos += n + (nl ? 1 : 0);
		lineno++;
		if (n && line[n - 1] == '\r')
			n--;
		if (!n || line[0] == '#')
			continue;
		if (memchr(line, '\0', n)) {
			ret = line_error(err, lineno, !nlines, "binary data");
			break;
		}
		/* the count is the last space-separated field */
		sp = n;
		while (sp > 0 && line[sp - 1] != ' ' && line[sp - 1] != '\t')
			sp--;
		if (sp == 0 || !all_digits(line + sp, n - sp)) {
			ret = line_error(err, lineno, !nlines,
					 "expected 'STACK COUNT' (';'-separated frames, a space, a count)");
			break;
		}
		if (parse_u64(line + sp, n - sp, &count)) {
			ret = line_error(err, lineno, !nlines, "sample count out of range");
			break;
		}
		n = sp - 1;
		while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
			n--;
		if (!n) {
			ret = line_error(err, lineno, !nlines, "empty stack");
			break;
		}
		nlines++;
		start = 0;
		for (size_t i = 0; i <= n; i++) {
			struct span e;

			if (i < n && line[i] != ';')
				continue;
			e.s = line + start;
			e.n = i - start;
			start = i + 1;
			if (e.s == line && parse_thread(p, e, &thread, &tmp)) {
				have_thread = 1;
				continue;
			}
			if (depth == LOAD_MAX_DEPTH) {
				ret = -EFBIG;
				strbuf_addf(err, "line %zu: more than %d frames in one stack", lineno,
					    LOAD_MAX_DEPTH);
				goto out;
			}
			frames[depth++] = parse_frame(p, e);
		}
		if (!count)
			continue;
		if (!have_thread)
			thread = profile_thread(p, 0, 0, "all");
		/* counts are written back as int64 (pprof values) */
		if (count > (uint64_t)INT64_MAX - total) {
			ret = line_error(err, lineno, 0, "sample counts add up past 2^63");
			break;
		}
		total += count;
		profile_add(p, thread, profile_stack(p, frames, depth), count);
	}
	if (!ret && !nlines) {
		strbuf_addstr(err, "no stacks in the file (empty, or only comments)");
		ret = -EINVAL;
	}
out:
	if (!ret) {
		p->meta.samples = total;
		p->meta.ticks_taken = 0;
	}
	strbuf_release(&tmp);
	free(frames);
	return ret;
}

/*
 * Implementation of util.h: the one place allocation failure is handled, and
 * the message formats every command uses.
 */
#include <errno.h>
#include <time.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/util.h"

static void die_oom(size_t n)
{
	fprintf(stderr, "framewalk: error: out of memory allocating %zu bytes\n", n);
	exit(FW_EXIT_FAILURE);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		die_oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void *xgrow(void *arr, size_t elem, size_t need, size_t *alloc)
{
	size_t n;

	if (need <= *alloc)
		return arr;
	n = *alloc ? *alloc : 16;
	while (n < need)
		n = n + n / 2 + 16;
	if (n > SIZE_MAX / elem)
		die_oom(SIZE_MAX);
	*alloc = n;
	return xrealloc(arr, n * elem);
}

void strv_add(char ***arr, size_t *n, const char *s)
{
	*arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
	(*arr)[(*n)++] = xstrdup(s);
}

void strv_free(char **arr, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(arr[i]);
	free(arr);
}

/* One line on stderr: lead, then the message made safe for a terminal. */
static void vreport(const char *lead, const char *fmt, va_list ap)
{
	struct strbuf msg = STRBUF_INIT, safe = STRBUF_INIT;

	strbuf_vaddf(&msg, fmt, ap);
	escape_append(&safe, strbuf_str(&msg), ESCAPE_TERMINAL);
	fprintf(stderr, "%s%s\n", lead, strbuf_str(&safe));
	strbuf_release(&msg);
	strbuf_release(&safe);
}

void fw_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("framewalk: error: ", fmt, ap);
	va_end(ap);
}

void fw_verror(const char *fmt, va_list ap)
{
	vreport("framewalk: error: ", fmt, ap);
}

void fw_warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("framewalk: warning: ", fmt, ap);
	va_end(ap);
}

void fw_vnote(const char *fmt, va_list ap)
{
	vreport("framewalk: ", fmt, ap);
}

void fw_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("framewalk: ", fmt, ap);
	va_end(ap);
}

void fw_hint(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("  hint: ", fmt, ap);
	va_end(ap);
}

uint64_t fw_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t fw_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int xsnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return -1;
	return n;
}

const char *path_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

void path_dir(const char *path, char *out, size_t size)
{
	const char *s = strrchr(path, '/');

	if (!s || s == path)
		xsnprintf(out, size, "/");
	else
		xsnprintf(out, size, "%.*s", (int)(s - path), path);
}

int parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t sort_unique_u64(uint64_t *v, size_t n)
{
	size_t kept = 0;

	sort_array(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!kept || v[i] != v[kept - 1])
			v[kept++] = v[i];
	return kept;
}

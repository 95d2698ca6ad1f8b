/*
 * Implementation of sysconfig.h: a tokenizer for the subset of Python that
 * pprint writes for _sysconfigdata (string literals with escapes, adjacent
 * literals inside parentheses, integers), and the frame-pointer reading of
 * CFLAGS.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "audit/sysconfig.h"
#include "target/safe_open.h"
#include "util/file.h"
#include "util/util.h"

#define SYSCONFIG_MAX_BYTES (4u << 20)
#define SYSCONFIG_MAX_NAMES 32

struct cursor {
	const char *p, *end;
};

static void skip_space(struct cursor *c)
{
	while (c->p < c->end) {
		if (isspace((unsigned char)*c->p)) {
			c->p++;
		} else if (*c->p == '#') {
			while (c->p < c->end && *c->p != '\n')
				c->p++;
		} else {
			break;
		}
	}
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = (char)tolower((unsigned char)ch);
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* One string literal ('...' or "...", optional r/b/u prefix) appended to sb. */
static int parse_literal(struct cursor *c, struct strbuf *sb)
{
	char quote;
	int raw = 0;

	while (c->p < c->end && *c->p && strchr("rRbBuU", *c->p) && c->p + 1 < c->end &&
	       (isalpha((unsigned char)c->p[1]) || c->p[1] == '\'' || c->p[1] == '"')) {
		if (*c->p == 'r' || *c->p == 'R')
			raw = 1;
		c->p++;
	}
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return -EINVAL;
	quote = *c->p++;
	while (c->p < c->end && *c->p != quote) {
		char ch = *c->p++;

		if (ch == '\n')
			return -EINVAL;
		if (ch != '\\' || raw) {
			strbuf_addch(sb, ch);
			continue;
		}
		if (c->p >= c->end)
			return -EINVAL;
		ch = *c->p++;
		switch (ch) {
		case 'n': strbuf_addch(sb, '\n'); break;
		case 't': strbuf_addch(sb, '\t'); break;
		case 'r': strbuf_addch(sb, '\r'); break;
		case '\n': break;
		case 'x':
			if (c->end - c->p >= 2 && hexval(c->p[0]) >= 0 && hexval(c->p[1]) >= 0) {
				strbuf_addch(sb, (char)(hexval(c->p[0]) * 16 + hexval(c->p[1])));
				c->p += 2;
				break;
			}
			strbuf_addstr(sb, "\\x");
			break;
		case '\\': case '\'': case '"':
			strbuf_addch(sb, ch);
			break;
		default:
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, ch);
			break;
		}
	}
	if (c->p >= c->end)
		return -EINVAL;
	c->p++;
	return 0;
}

static int starts_literal(const struct cursor *c)
{
	const char *p = c->p;

	while (p < c->end && *p && strchr("rRbBuU", *p))
		p++;
	return p < c->end && (*p == '\'' || *p == '"') && p - c->p <= 2;
}

/* Skip a value that is neither a string nor an integer (nested brackets allowed). */
static int skip_value(struct cursor *c)
{
	int depth = 0;

	while (c->p < c->end) {
		char ch = *c->p;

		if (starts_literal(c)) {
			struct strbuf tmp = STRBUF_INIT;
			int ret = parse_literal(c, &tmp);

			strbuf_release(&tmp);
			if (ret)
				return ret;
			continue;
		}
		if (ch == '(' || ch == '[' || ch == '{') {
			depth++;
		} else if (ch == ')' || ch == ']' || ch == '}') {
			if (!depth)
				return 0;
			depth--;
		} else if (ch == ',' && !depth) {
			return 0;
		}
		c->p++;
	}
	return -EINVAL;
}

int sysconfig_parse(const char *text, size_t len,
		    void (*fn)(const char *key, const char *str, long num, void *arg), void *arg)
{
	struct cursor c = { text, text + len };
	struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
	const char *start = NULL;
	int n = 0, ret = -EINVAL;

	/* The dict follows "build_time_vars = {". */
	for (const char *p = text; p && p < c.end; p++) {
		p = memmem(p, (size_t)(c.end - p), "build_time_vars", 15);
		if (!p)
			break;
		c.p = p + 15;
		skip_space(&c);
		if (c.p < c.end && *c.p == '=') {
			c.p++;
			skip_space(&c);
			if (c.p < c.end && *c.p == '{') {
				start = ++c.p;
				break;
			}
		}
	}
	if (!start)
		return -EINVAL;
	for (;;) {
		skip_space(&c);
		if (c.p >= c.end)
			goto out;
		if (*c.p == '}') {
			ret = n;
			goto out;
		}
		strbuf_reset(&key);
		strbuf_reset(&val);
		if (parse_literal(&c, &key))
			goto out;
		skip_space(&c);
		if (c.p >= c.end || *c.p != ':')
			goto out;
		c.p++;
		skip_space(&c);
		if (c.p < c.end && (*c.p == '(' || starts_literal(&c))) {
			const char *save = c.p;
			int paren = *c.p == '(', ok = 1;

			if (paren) {
				c.p++;
				skip_space(&c);
			}
			if (!starts_literal(&c)) {
				/* a tuple or a parenthesised expression: not a string */
				c.p = save;
				if (skip_value(&c))
					goto out;
				ok = 0;
			}
			while (ok && starts_literal(&c)) {
				if (parse_literal(&c, &val))
					goto out;
				skip_space(&c);
			}
			if (ok && paren) {
				if (c.p < c.end && *c.p == ')') {
					c.p++;
				} else {
					/* a tuple of strings: not one string */
					c.p = save;
					if (skip_value(&c))
						goto out;
					ok = 0;
				}
			}
			if (ok) {
				fn(strbuf_str(&key), strbuf_str(&val), 0, arg);
				n++;
			}
		} else if (c.p < c.end && (*c.p == '-' || isdigit((unsigned char)*c.p))) {
			char num[64], *e;
			size_t k;
			long v;

			/* strtol on a copy: the text need not be terminated at len */
			for (k = 0; k < sizeof(num) - 1 && c.p + k < c.end; k++)
				num[k] = c.p[k];
			num[k] = '\0';
			errno = 0;
			v = strtol(num, &e, 0);
			if (e == num)
				goto out;
			c.p += e - num;
			if (!errno) {
				fn(strbuf_str(&key), NULL, v, arg);
				n++;
			}
			if (skip_value(&c))
				goto out;
		} else if (skip_value(&c)) {
			goto out;
		}
		skip_space(&c);
		if (c.p < c.end && *c.p == ',')
			c.p++;
	}
out:
	strbuf_release(&key);
	strbuf_release(&val);
	return ret;
}

static void take(const char *key, const char *str, long num, void *arg)
{
	struct py_sysconfig *sc = arg;
	char **field = NULL;
	int *flag = NULL;

	if (!strcmp(key, "CFLAGS"))
		field = &sc->cflags;
	else if (!strcmp(key, "PY_CFLAGS") && !sc->cflags)
		field = &sc->cflags;
	else if (!strcmp(key, "ABIFLAGS"))
		field = &sc->abiflags;
	else if (!strcmp(key, "VERSION"))
		field = &sc->version;
	else if (!strcmp(key, "CONFIG_ARGS"))
		field = &sc->config_args;
	else if (!strcmp(key, "Py_DEBUG"))
		flag = &sc->py_debug;
	else if (!strcmp(key, "Py_GIL_DISABLED"))
		flag = &sc->gil_disabled;
	else if (!strcmp(key, "Py_ENABLE_SHARED"))
		flag = &sc->enable_shared;
	if (field && str) {
		free(*field);
		*field = xstrdup(str);
	} else if (flag && !str) {
		*flag = num != 0;
	}
}

int sysconfig_load(const char *path, struct py_sysconfig *out)
{
	struct strbuf buf = STRBUF_INIT;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	out->py_debug = out->gil_disabled = out->enable_shared = -1;
	if (xsnprintf(out->path, sizeof(out->path), "%s", path) < 0)
		return -ENAMETOOLONG;
	fd = safe_open_path(path);
	if (fd < 0)
		return fd;
	/* Past the cap, or after a read error, what was read is parsed. */
	read_fd_bounded(fd, SYSCONFIG_MAX_BYTES, &buf);
	close(fd);
	ret = sysconfig_parse(strbuf_str(&buf), buf.len, take, out);
	strbuf_release(&buf);
	return ret < 0 ? ret : 0;
}

void sysconfig_release(struct py_sysconfig *sc)
{
	free(sc->cflags);
	free(sc->abiflags);
	free(sc->version);
	free(sc->config_args);
	sc->cflags = sc->abiflags = sc->version = sc->config_args = NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sysconfig_find(const char *stdlib_dir, const char *abiflags, char *out, size_t size)
{
	char *names[SYSCONFIG_MAX_NAMES], want[64];
	struct dirent *de;
	size_t n = 0;
	int ret = -ENOENT;
	DIR *d = opendir(stdlib_dir);

	if (!d)
		return -ENOENT;
	while ((de = readdir(d)) && n < SYSCONFIG_MAX_NAMES) {
		size_t len = strlen(de->d_name);

		if (!strncmp(de->d_name, "_sysconfigdata_", 15) && len > 18 &&
		    !strcmp(de->d_name + len - 3, ".py"))
			names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	sort_array(names, n, sizeof(*names), cmp_str);
	/* "_sysconfigdata_" + ABIFLAGS + "_" + platform: the flags end at the next '_'. */
	if (abiflags)
		xsnprintf(want, sizeof(want), "_sysconfigdata_%s_", abiflags);
	for (size_t i = 0; i < n && ret; i++)
		if (!abiflags || !strncmp(names[i], want, strlen(want)))
			ret = xsnprintf(out, size, "%s/%s", stdlib_dir, names[i]) < 0 ? -ENAMETOOLONG : 0;
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	return ret;
}

enum sysconfig_fp sysconfig_frame_pointers(const char *cflags, struct strbuf *why)
{
	const char *p = cflags, *fp_flag = NULL, *opt = NULL;
	size_t fp_len = 0, opt_len = 0;

	if (!cflags)
		return SYSCONFIG_FP_UNKNOWN;
	while (*p) {
		const char *s;
		size_t n;

		while (*p && isspace((unsigned char)*p))
			p++;
		s = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		n = (size_t)(p - s);
		if ((n == 20 && !strncmp(s, "-fomit-frame-pointer", n)) ||
		    (n == 23 && !strncmp(s, "-fno-omit-frame-pointer", n))) {
			fp_flag = s;
			fp_len = n;
		} else if (n >= 2 && s[0] == '-' && s[1] == 'O') {
			opt = s;
			opt_len = n;
		}
	}
	if (fp_flag) {
		strbuf_add(why, fp_flag, fp_len);
		return fp_len == 23 ? SYSCONFIG_FP_WITH : SYSCONFIG_FP_WITHOUT;
	}
	if (!opt || (opt_len == 3 && opt[2] == '0')) {
		strbuf_addf(why, "%.*s, no -fno-omit-frame-pointer", opt ? (int)opt_len : 3,
			    opt ? opt : "-O0");
		return SYSCONFIG_FP_WITH;
	}
	strbuf_addf(why, "%.*s, no -fno-omit-frame-pointer", (int)opt_len, opt);
	return SYSCONFIG_FP_WITHOUT;
}

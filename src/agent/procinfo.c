/*
 * Implementation of procinfo.h: the /proc files of a process the agent
 * looks at (environ, cmdline, cgroup, exe; its start time is target/proc.h's
 * proc_start_time), each read whole into a
 * bounded buffer and then parsed.
 */
#include <errno.h>
#include <unistd.h>

#include "agent/procinfo.h"
#include "elf/elfread.h"
#include "target/proc.h"
#include "util/file.h"
#include "util/utf8.h"
#include "util/util.h"

#define ENVIRON_MAX (256u << 10)
#define CMDLINE_MAX (64u << 10)
#define CGROUP_MAX (64u << 10)

const char *procinfo_env_lookup(const char *env, size_t len, const char *name, size_t *vlen)
{
	size_t nlen = strlen(name), i = 0;

	while (i < len) {
		const char *e = env + i;
		const char *nul = memchr(e, '\0', len - i);
		size_t elen = nul ? (size_t)(nul - e) : len - i;

		if (elen > nlen && e[nlen] == '=' && !memcmp(e, name, nlen)) {
			*vlen = elen - nlen - 1;
			return e + nlen + 1;
		}
		i += elen + 1;
	}
	return NULL;
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

void procinfo_container_id(const char *cgroup, size_t len, char *out, size_t size)
{
	const char *found = NULL;
	size_t run = 0;

	if (size)
		out[0] = '\0';
	for (size_t i = 0; i <= len; i++) {
		if (i < len && is_hex(cgroup[i])) {
			run++;
			continue;
		}
		if (run == PROCINFO_CONTAINER_LEN)
			found = cgroup + i - run;
		run = 0;
	}
	if (found && size > PROCINFO_CONTAINER_LEN) {
		memcpy(out, found, PROCINFO_CONTAINER_LEN);
		out[PROCINFO_CONTAINER_LEN] = '\0';
	}
}

void procinfo_cgroup_path(const char *cgroup, size_t len, char *out, size_t size)
{
	const char *line = cgroup, *end = cgroup + len, *first = NULL, *pick = NULL;
	size_t first_len = 0, pick_len = 0;

	if (size)
		out[0] = '\0';
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *lend = nl ? nl : end;
		/* "hierarchy-id:controllers:path" */
		const char *c1 = memchr(line, ':', (size_t)(lend - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(lend - c1 - 1)) : NULL;

		if (c2) {
			if (!first) {
				first = c2 + 1;
				first_len = (size_t)(lend - first);
			}
			if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
				pick = c2 + 1;
				pick_len = (size_t)(lend - pick);
			}
		}
		line = lend + 1;
	}
	if (!pick) {
		pick = first;
		pick_len = first_len;
	}
	if (pick && size)
		xsnprintf(out, size, "%.*s", (int)(pick_len < size ? pick_len : size - 1), pick);
}

/* The next argument of a NUL-separated argv at *i, or NULL at its end. */
static const char *next_arg(const char *argv, size_t len, size_t *i, size_t *alen)
{
	const char *a, *nul;

	if (*i >= len)
		return NULL;
	a = argv + *i;
	nul = memchr(a, '\0', len - *i);
	*alen = nul ? (size_t)(nul - a) : len - *i;
	*i += *alen + 1;
	return a;
}

/* Options of the interpreter that take a value as the next argument. */
static int takes_value(const char *a, size_t alen)
{
	return alen == 2 && a[0] == '-' && (a[1] == 'W' || a[1] == 'X' || a[1] == 'Q');
}

static void put(char *out, size_t size, const char *s, size_t len)
{
	/* no room: a precision of (int)(size - 1) would be -1, "all of s" */
	if (size)
		xsnprintf(out, size, "%.*s", (int)(len < size ? len : size - 1), s);
}

void procinfo_service_from_argv(const char *argv, size_t len, char *out, size_t size)
{
	size_t i = 0, alen, elen;
	const char *exe = next_arg(argv, len, &i, &elen), *a;

	if (size)
		out[0] = '\0';
	if (!exe)
		return;
	{
		/* an executable that is not python (uwsgi, an embedding program) names itself */
		const char *base = exe + elen;

		while (base > exe && base[-1] != '/')
			base--;
		if (exe + elen - base < 6 || memcmp(base, "python", 6))
			i = len;
	}
	while ((a = next_arg(argv, len, &i, &alen))) {
		if (alen >= 2 && a[0] == '-' && a[1] != '-') {
			/* -m module / -mmodule, -c, or a bundle of flags */
			const char *m = memchr(a, 'm', alen), *c = memchr(a, 'c', alen);

			if (c && (!m || c < m)) {
				put(out, size, "python-c", 8);
				return;
			}
			if (m) {
				if (m + 1 < a + alen) {
					put(out, size, m + 1, (size_t)(a + alen - m - 1));
					return;
				}
				if ((a = next_arg(argv, len, &i, &alen)))
					put(out, size, a, alen);
				return;
			}
			if (takes_value(a, alen))
				next_arg(argv, len, &i, &alen);
			continue;
		}
		if (alen >= 2 && a[0] == '-' && a[1] == '-' && alen > 2)
			continue;       /* --version and friends */
		if (alen == 1 && a[0] == '-')
			break;          /* a script on stdin */
		{
			/* the script: its file name, without ".py" */
			const char *base = a + alen;
			size_t blen;

			while (base > a && base[-1] != '/')
				base--;
			blen = (size_t)(a + alen - base);
			if (blen == 11 && !memcmp(base, "__main__.py", 11) && base > a + 1) {
				const char *dir_end = base - 1, *dir = dir_end;

				while (dir > a && dir[-1] != '/')
					dir--;
				put(out, size, dir, (size_t)(dir_end - dir));
				return;
			}
			if (blen > 3 && !memcmp(base + blen - 3, ".py", 3))
				blen -= 3;
			if (blen) {
				put(out, size, base, blen);
				return;
			}
		}
	}
	{
		const char *base = exe + elen;

		while (base > exe && base[-1] != '/')
			base--;
		put(out, size, base, (size_t)(exe + elen - base));
	}
}

void procinfo_clean(struct strbuf *out, const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t start = out->len, i = 0;

	while (i < len) {
		size_t n = utf8_seq(p + i, len - i);

		if (!n) {
			i++;
			continue;
		}
		if (utf8_is_control(p + i, n)) {
			i += n;       /* C0, DEL, C1, bidirectional formatting */
			continue;
		}
		if (out->len - start + n > max)
			break;
		strbuf_add(out, p + i, n);
		i += n;
	}
	/* trim spaces at either end */
	while (out->len > start && out->buf[out->len - 1] == ' ')
		out->buf[--out->len] = '\0';
	{
		size_t lead = 0;

		while (start + lead < out->len && out->buf[start + lead] == ' ')
			lead++;
		if (lead) {
			memmove(out->buf + start, out->buf + start + lead, out->len - start - lead + 1);
			out->len -= lead;
		}
	}
}

static int read_proc(pid_t pid, const char *name, size_t max, struct strbuf *sb)
{
	char path[64];
	int ret;

	xsnprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	ret = read_file_bounded(path, max, sb);
	if (ret == -EFBIG)
		ret = 0;
	return ret == -ENOENT ? -ESRCH : ret;
}

int procinfo_read_match(pid_t pid, char *exe, size_t exe_size, char *cmdline, size_t cmd_size,
			char *cgroup, size_t cg_size, char *container, size_t ct_size)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	exe[0] = cmdline[0] = cgroup[0] = container[0] = '\0';
	ret = proc_exe(pid, exe, exe_size);
	if (ret == -ESRCH || ret == -ENOENT)
		return -ESRCH;
	ret = proc_cmdline(pid, cmdline, cmd_size);
	if (ret == -ESRCH)
		return ret;
	if (!read_proc(pid, "cgroup", CGROUP_MAX, &sb)) {
		procinfo_cgroup_path(sb.buf ? sb.buf : "", sb.len, cgroup, cg_size);
		procinfo_container_id(sb.buf ? sb.buf : "", sb.len, container, ct_size);
	}
	strbuf_release(&sb);
	return 0;
}

static void exe_build_id(pid_t pid, char *out, size_t size)
{
	char path[64];
	struct elf_file *ef;

	out[0] = '\0';
	xsnprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ef = elf_file_open(path);
	if (!ef)
		return;
	if (elf_file_build_id(ef, out, size, 0))
		out[0] = '\0';
	elf_file_close(ef);
}

int procinfo_read(pid_t pid, struct procinfo *out)
{
	static const char *const service_vars[] = { "OTEL_SERVICE_NAME", "PYROSCOPE_APPLICATION_NAME" };
	struct strbuf env = STRBUF_INIT, argv = STRBUF_INIT, name = STRBUF_INIT;
	int ret;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	ret = proc_start_time(pid, &out->start_time);
	if (ret)
		return ret == -ESRCH ? ret : -ESRCH;
	ret = procinfo_read_match(pid, out->exe, sizeof(out->exe), out->cmdline, sizeof(out->cmdline),
				  out->cgroup, sizeof(out->cgroup), out->container, sizeof(out->container));
	if (ret)
		return ret;
	if (!read_proc(pid, "environ", ENVIRON_MAX, &env)) {
		for (size_t i = 0; i < ARRAY_SIZE(service_vars) && !name.len; i++) {
			size_t vlen;
			const char *v = procinfo_env_lookup(env.buf ? env.buf : "", env.len,
							    service_vars[i], &vlen);

			if (v)
				procinfo_clean(&name, v, vlen, PROCINFO_SERVICE_MAX);
		}
	}
	if (!name.len && !read_proc(pid, "cmdline", CMDLINE_MAX, &argv)) {
		char guess[PROCINFO_SERVICE_MAX + 1];

		procinfo_service_from_argv(argv.buf ? argv.buf : "", argv.len, guess, sizeof(guess));
		procinfo_clean(&name, guess, strlen(guess), PROCINFO_SERVICE_MAX);
	}
	if (!name.len)
		strbuf_addstr(&name, "python");
	xsnprintf(out->service, sizeof(out->service), "%s", strbuf_str(&name));
	exe_build_id(pid, out->build_id, sizeof(out->build_id));
	strbuf_release(&env);
	strbuf_release(&argv);
	strbuf_release(&name);
	return 0;
}

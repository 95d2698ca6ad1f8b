/* Implementation of select.h. */
#include <errno.h>
#include <fnmatch.h>

#include "agent/select.h"
#include "util/util.h"

void select_add_pid(struct select_set *s, pid_t pid)
{
	if (select_listed(s, pid))
		return;
	s->pids = xrealloc(s->pids, (s->npids + 1) * sizeof(*s->pids));
	s->pids[s->npids++] = pid;
}

void select_add_exe(struct select_set *s, const char *glob)
{
	strv_add(&s->exes, &s->nexes, glob);
}

int select_add_cmdline(struct select_set *s, const char *regex, struct strbuf *err)
{
	regex_t re;
	int ret = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB);

	if (ret) {
		char msg[256];

		regerror(ret, &re, msg, sizeof(msg));
		strbuf_addf(err, "bad command-line pattern '%s': %s", regex, msg);
		return -EINVAL;
	}
	s->cmds = xrealloc(s->cmds, (s->ncmds + 1) * sizeof(*s->cmds));
	s->cmds[s->ncmds++] = re;
	return 0;
}

void select_add_container(struct select_set *s, const char *prefix)
{
	strv_add(&s->containers, &s->ncontainers, prefix);
}

void select_add_cgroup(struct select_set *s, const char *glob)
{
	strv_add(&s->cgroups, &s->ncgroups, glob);
}

void select_release(struct select_set *s)
{
	free(s->pids);
	strv_free(s->exes, s->nexes);
	for (size_t i = 0; i < s->ncmds; i++)
		regfree(&s->cmds[i]);
	free(s->cmds);
	strv_free(s->containers, s->ncontainers);
	strv_free(s->cgroups, s->ncgroups);
	memset(s, 0, sizeof(*s));
}

int select_scans(const struct select_set *s)
{
	return s->all || s->nexes || s->ncmds || s->ncontainers || s->ncgroups;
}

int select_listed(const struct select_set *s, pid_t pid)
{
	for (size_t i = 0; i < s->npids; i++)
		if (s->pids[i] == pid)
			return 1;
	return 0;
}

static int any_glob(char *const *globs, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!fnmatch(globs[i], s, 0))
			return 1;
	return 0;
}

int select_match(const struct select_set *s, pid_t pid, const char *exe, const char *cmdline,
		 const char *container, const char *cgroup)
{
	int ok;

	if (select_listed(s, pid))
		return 1;
	if (!select_scans(s))
		return 0;
	if (s->nexes && !any_glob(s->exes, s->nexes, exe))
		return 0;
	if (s->ncgroups && !any_glob(s->cgroups, s->ncgroups, cgroup))
		return 0;
	if (s->ncontainers) {
		ok = 0;
		for (size_t i = 0; i < s->ncontainers && !ok; i++)
			ok = *container && !strncmp(container, s->containers[i], strlen(s->containers[i]));
		if (!ok)
			return 0;
	}
	if (s->ncmds) {
		ok = 0;
		for (size_t i = 0; i < s->ncmds && !ok; i++)
			ok = !regexec(&s->cmds[i], cmdline, 0, NULL, 0);
		if (!ok)
			return 0;
	}
	return 1;
}

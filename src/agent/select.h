/*
 * Which processes the agent profiles: the selectors of its configuration,
 * compiled once. A process is chosen when it is listed by pid, or, when
 * the agent scans the host (--all-python or any filter), when it passes
 * every kind of filter given (any pattern of a kind may match): its
 * executable (a glob), its command line (an extended regular expression),
 * its container id (a prefix) and its cgroup path (a glob). Whether it runs
 * Python is checked afterwards, by discovery, only for the processes
 * chosen.
 */
#ifndef FRAMEWALK_AGENT_SELECT_H
#define FRAMEWALK_AGENT_SELECT_H

#include <regex.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/strbuf.h"

struct select_set {
	pid_t *pids;
	size_t npids;
	int all;                    /* --all-python */
	char **exes;                /* globs on the executable path */
	size_t nexes;
	regex_t *cmds;              /* regular expressions on the command line */
	size_t ncmds;
	char **containers;          /* container id prefixes */
	size_t ncontainers;
	char **cgroups;             /* globs on the cgroup path */
	size_t ncgroups;
};

/* A zeroed struct select_set is empty (chooses nothing). */
void select_add_pid(struct select_set *s, pid_t pid);
void select_add_exe(struct select_set *s, const char *glob);
/* 0, or -EINVAL with the regcomp message in err. */
int select_add_cmdline(struct select_set *s, const char *regex, struct strbuf *err);
void select_add_container(struct select_set *s, const char *prefix);
void select_add_cgroup(struct select_set *s, const char *glob);
void select_release(struct select_set *s);

/* Does the agent look at every process of the host (not only listed pids)? */
int select_scans(const struct select_set *s);
/* Is pid listed? */
int select_listed(const struct select_set *s, pid_t pid);
/* Does a process with these properties pass (listed, or every filter kind)? */
int select_match(const struct select_set *s, pid_t pid, const char *exe, const char *cmdline,
		 const char *container, const char *cgroup);

#endif

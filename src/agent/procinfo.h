/*
 * What the agent needs to know about a process besides its interpreter:
 * its identity over time (a pid with its start time: pids are reused), the
 * labels its profiles carry (service name, container id, executable
 * build-id, ...) and the text its selectors match (command line, cgroup).
 * Everything here is read from /proc files the process controls (its
 * environment, its command line) or its container runtime names (its
 * cgroup): reads are bounded and what becomes a label is cleaned
 * (procinfo_clean) before it leaves the agent.
 */
#ifndef FRAMEWALK_AGENT_PROCINFO_H
#define FRAMEWALK_AGENT_PROCINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/strbuf.h"

#define PROCINFO_SERVICE_MAX 128
#define PROCINFO_CONTAINER_LEN 64      /* hex digits of a container id */

/*
 * The value of variable name in an environment block (NUL-separated
 * "NAME=value" entries, as /proc/PID/environ holds them), or NULL; its
 * length in *vlen. The block need not end in a NUL.
 */
const char *procinfo_env_lookup(const char *env, size_t len, const char *name, size_t *vlen);

/*
 * The container id in the text of /proc/PID/cgroup: the last run of
 * exactly 64 hex digits in a path (docker-<id>.scope, /docker/<id>,
 * cri-containerd-<id>.scope, crio-<id>, libpod-<id>), into out (at least
 * PROCINFO_CONTAINER_LEN + 1 bytes); "" when none.
 */
void procinfo_container_id(const char *cgroup, size_t len, char *out, size_t size);

/* The cgroup path of the unified (v2, "0::") line, else of the first line; "" when none. */
void procinfo_cgroup_path(const char *cgroup, size_t len, char *out, size_t size);

/*
 * The service name a Python command line implies (NUL-separated argv): the
 * module of "-m module", the script's file name without ".py" (its
 * directory's name for __main__.py), "python-c" for "-c", else the
 * executable's file name (always, when it does not start with "python":
 * uwsgi, a program embedding Python).
 */
void procinfo_service_from_argv(const char *argv, size_t len, char *out, size_t size);

/*
 * A label value from the target: control characters, invalid UTF-8 and
 * anything past max bytes (cut on a character boundary) left out, spaces
 * at either end trimmed.
 */
void procinfo_clean(struct strbuf *out, const char *s, size_t len, size_t max);

/* What the agent reads of one process when it starts profiling it. */
struct procinfo {
	pid_t pid;
	uint64_t start_time;
	char service[PROCINFO_SERVICE_MAX + 1];  /* cleaned */
	char container[PROCINFO_CONTAINER_LEN + 1];
	char build_id[81];                       /* of the executable, lower-case hex */
	char exe[4096];                          /* as the process names it */
	char cmdline[1024];                      /* NULs as spaces, cut */
	char cgroup[512];                        /* its cgroup path */
};

/*
 * Read pid's information: the service from OTEL_SERVICE_NAME, else
 * PYROSCOPE_APPLICATION_NAME in its environment, else its command line.
 * 0, or -ESRCH when it is gone; a part that cannot be read is left empty.
 */
int procinfo_read(pid_t pid, struct procinfo *out);

/*
 * The parts the selectors match, read cheaply before an interpreter is
 * looked for: executable, command line (NULs as spaces), cgroup path and
 * container id. 0 or -ESRCH.
 */
int procinfo_read_match(pid_t pid, char *exe, size_t exe_size, char *cmdline, size_t cmd_size,
			char *cgroup, size_t cg_size, char *container, size_t ct_size);

#endif

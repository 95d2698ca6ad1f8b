/*
 * The subcommands (one file each, like git's builtin/) and the helpers they
 * share: attaching to a target with one clear message per failure, and the
 * exit code for each. To add a command: write cmd/NAME.c with cmd_NAME(),
 * declare it here, add it to the table in main.c, document it in
 * docs/framewalk.1 and README.md, and give it a --help test.
 */
#ifndef FRAMEWALK_CMD_CMD_H
#define FRAMEWALK_CMD_CMD_H

#include <sys/types.h>

#include "output/output.h"
#include "python/discover.h"
#include "sampler/sampler.h"
#include "target/memory.h"

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_check(int argc, char **argv);

/*
 * Discover the Python runtime of pid, printing the error and its fix on
 * failure. Returns FW_EXIT_OK or the exit code to use.
 */
int cmd_attach(pid_t pid, struct py_target *t);

/* Print the permission-denied hints for pid (capability, ptrace_scope, user). */
void cmd_permission_hints(pid_t pid);

/* "auto", "vm", "ptrace" -> backend (0 = auto). 0 or -EINVAL. */
int cmd_parse_backend(const char *name, enum backend *out);
/* Resolve auto and check the combination (--native needs ptrace). 0 or -EINVAL. */
int cmd_choose_backend(struct sampler_opts *so);
const char *cmd_backend_description(const struct sampler_opts *so);

/*
 * "framewalk: error: <fmt with arg>" and a hint to see `framewalk CMD --help`.
 * Returns FW_EXIT_USAGE.
 */
int cmd_usage_error(const char *cmd, const char *fmt, const char *arg);

/*
 * The report filters every rendering command takes: 'L' --limit, 'M'
 * --min-percent, 'T' --thread. Returns 0 when c was one of them and its
 * value is good, 1 when c is not one of them, or FW_EXIT_USAGE (message
 * printed) for a bad value.
 */
int cmd_output_filter_option(const char *cmd, int c, const char *arg, struct output_opts *out);

/* The exit code and message for an unusable output path. */
int cmd_output_error(const char *path, int err);

/*
 * Before a capture (cmd/limits.c): raise the soft open-file limit to the
 * hard one, fail with one line naming the limit and the fix when the chosen
 * backend cannot run under it, warn when per-thread files of the targets
 * (pids, may be none yet) will be reopened per reading. Returns FW_EXIT_OK
 * or the exit code, the message printed.
 */
int cmd_fd_limits(const struct sampler_opts *so, const pid_t *pids, int npids);
/* Descriptors a capture with these options needs: open_now plus its own. */
size_t cmd_fd_need(const struct sampler_opts *so, size_t open_now, int ncpus);

#endif

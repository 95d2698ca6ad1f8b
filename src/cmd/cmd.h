/*
 * The subcommands (one file each, like git's builtin/) and the helpers they
 * share: attaching to a target with one clear message per failure, and the
 * exit code for each. To add a command: write cmd/NAME.c with cmd_NAME(),
 * declare it here, add it to the table in main.c, document it in
 * docs/framewalk.1 and README.md, and give it a --help test.
 */
#ifndef FRAMEWALK_CMD_CMD_H
#define FRAMEWALK_CMD_CMD_H

#include <signal.h>
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

/* Set by SIGINT/SIGTERM/SIGHUP once cmd_install_signals ran: end the capture. */
extern volatile sig_atomic_t cmd_stop_requested;
/* Install those handlers (no SA_RESTART, so sleeps end at once); ignore SIGPIPE. */
void cmd_install_signals(void);

/*
 * backend_choose with the messages: the announcement on stderr when
 * so->announce, or the error. Returns FW_EXIT_OK, FW_EXIT_USAGE for a
 * combination that cannot work, FW_EXIT_PERMISSION when the backend asked
 * for cannot run here.
 */
int cmd_choose_backend(const char *cmd, struct sampler_opts *so, pid_t probe_pid);

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
 * hard one, fail with one line naming the limit and the fix when the
 * backend (0, not chosen yet: the least any capture needs) cannot run under
 * it, warn when per-thread files of the targets (may be none yet) will be
 * reopened per reading. Returns FW_EXIT_OK or the exit code, message printed.
 */
int cmd_fd_limits(const struct sampler_opts *so, const struct py_target *targets, size_t n);
/* Descriptors a capture with these options needs: open_now plus its own. */
size_t cmd_fd_need(const struct sampler_opts *so, size_t open_now, int ncpus);

#endif

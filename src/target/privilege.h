/*
 * Privilege framewalk must not lend: a setcap or setuid copy holds
 * capabilities its real user lacks, and must not become a way for that user
 * to read other users' processes or to parse files with rights it was not
 * given. One rule, used by every path that turns a pid into a target
 * (cmd_attach, py_discover: -p, --all-python, --subprocesses, the agent's
 * scan, check): when elevated, profile only what the real user could ptrace
 * without the capabilities. And one place that says how to grant them safely.
 */
#ifndef FRAMEWALK_TARGET_PRIVILEGE_H
#define FRAMEWALK_TARGET_PRIVILEGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/strbuf.h"

/*
 * The capabilities framewalk knows, by number (linux/capability.h), and
 * privilege_caps[]: each one's name and what framewalk uses it for. The
 * drop below, the setcap lines every message prints and check's report
 * and advice are all made from them.
 */
enum fw_cap {
	FW_CAP_SYS_PTRACE = 19,
	FW_CAP_SYS_ADMIN = 21,
	FW_CAP_SYSLOG = 34,
	FW_CAP_PERFMON = 38,
	FW_CAP_BPF = 39,
	FW_CAP_CHECKPOINT_RESTORE = 40,
};
#define FW_CAP_BIT(c) (1ull << (c))
/* ptrace and vm: other users' processes, and /proc/PID/map_files */
#define FW_CAPS_ATTACH (FW_CAP_BIT(FW_CAP_SYS_PTRACE) | FW_CAP_BIT(FW_CAP_CHECKPOINT_RESTORE))
/* the bpf backend on kernels 5.8 and later (before: CAP_SYS_ADMIN) */
#define FW_CAPS_BPF (FW_CAP_BIT(FW_CAP_BPF) | FW_CAP_BIT(FW_CAP_PERFMON))
/* kernel frames' names (/proc/kallsyms under kernel.kptr_restrict=1) */
#define FW_CAPS_KERNEL_NAMES FW_CAP_BIT(FW_CAP_SYSLOG)
/* what an elevated framewalk keeps (privilege_drop_unneeded); never CAP_SYS_ADMIN */
#define FW_CAPS_USED (FW_CAPS_ATTACH | FW_CAPS_BPF | FW_CAPS_KERNEL_NAMES)

struct fw_cap_info {
	enum fw_cap cap;
	const char *name;           /* "CAP_SYS_PTRACE" */
	const char *use;            /* what framewalk does with it */
};
extern const struct fw_cap_info privilege_caps[];
extern const size_t privilege_ncaps;
/* "CAP_SYS_PTRACE" for FW_CAP_SYS_PTRACE; "CAP_?" for one not in the table. */
const char *privilege_cap_name(int cap);
/*
 * The names of caps (FW_CAP_BIT()s), in the table's order, each after
 * prefix and separated by between; short_names: without "CAP_". So
 * "CAP_BPF and CAP_PERFMON", or docker's "--cap-add BPF --cap-add PERFMON".
 */
void privilege_cap_names(struct strbuf *out, uint64_t caps, const char *prefix,
			 const char *between, int short_names);

/*
 * Does this process hold rights its real user does not have: a set-user-ID
 * or set-group-ID executable, or file capabilities (AT_SECURE, or ids that
 * differ, or a non-root real user with permitted capabilities beyond its
 * ambient set, which whoever started it granted)? Computed once. A real
 * root user, or capabilities given to a service's user (systemd's
 * AmbientCapabilities), are the user's own: not elevated.
 */
int privilege_elevated(void);

/*
 * When elevated: keep only the capabilities profiling uses (FW_CAPS_USED,
 * those of them held), none inheritable; a set-user/group-ID process becomes its real user
 * and group first, keeping those. Call before anything reads a file or a
 * process. 0 (also when not elevated) or -errno.
 */
int privilege_drop_unneeded(void);

/*
 * May framewalk profile pid? 0 when not elevated, or when the real user could
 * ptrace it without capabilities: its real, effective and saved uids are our
 * real uid, its gids our real gid (the kernel's ptrace_may_access for a
 * caller without CAP_SYS_PTRACE), and it is dumpable. Else -EPERM with the
 * reason in why ("process N belongs to another user (uid U)" ...); -ESRCH
 * when it is gone.
 */
int privilege_may_profile(pid_t pid, struct strbuf *why);

/* What to do after a refusal by privilege_may_profile (one line, no prefix). */
const char *privilege_refusal_hint(void);

/*
 * The one way framewalk recommends to give it capabilities (perf's model,
 * docs/CHECK.md): a copy of exe only the members of group framewalk may run,
 * the capabilities on that copy alone. caps: FW_CAP_BIT()s, e.g.
 * FW_CAPS_BPF. Appends one command line to out.
 */
void privilege_grant_fix(struct strbuf *out, uint64_t caps, const char *exe);

#endif

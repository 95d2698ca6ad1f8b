/*
 * Permissions and environment for `framewalk check`: who framewalk runs as
 * and with which capabilities, the sysctls and security modules that decide
 * whether one process may read another, whether this process or a target
 * runs in a container, and real probes (a read of a child's memory, a
 * PTRACE_SEIZE, a BPF perf_event program loaded and attached) rather than
 * guesses, and the BPF backend's own program loaded through the verifier.
 * From these facts audit_backends() says which backend is usable and, for
 * each one that is not, the narrowest fix.
 *
 * Probes never stop or change a target: the ptrace probe seizes it from a
 * short-lived child process (the kernel detaches when that child exits), the
 * BPF program is attached to a disabled event and closed at once.
 */
#ifndef FRAMEWALK_AUDIT_ENV_H
#define FRAMEWALK_AUDIT_ENV_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/sampler.h"
#include "target/privilege.h"
#include "util/strbuf.h"

#define AUDIT_UNSET LONG_MIN            /* a sysctl that does not exist here */

enum audit_ns { NS_PID, NS_MNT, NS_USER, NS_NET, NS_CGROUP, NS_IPC, NS_UTS, NS_COUNT };
extern const char *const audit_ns_names[NS_COUNT];

struct audit_env {
	uid_t uid, euid;
	gid_t gid;
	char user[64];
	uint64_t cap_eff, cap_bnd;
	long cap_last;                  /* kernel.cap_last_cap */
	long perf_event_paranoid, kptr_restrict, ptrace_scope, unprivileged_bpf_disabled;
	int seccomp;                    /* 0 off, 1 strict, 2 filter, -1 unknown */
	int no_new_privs;
	int in_container;
	char container_why[256];        /* the evidence, or why not */
	char cgroup[256];               /* own cgroup path (v2, or the first v1 line) */
	char self_exe[PATH_MAX];
	char kernel[128];
	int btf;                        /* /sys/kernel/btf/vmlinux readable */
	int sysfs;                      /* /sys/kernel exists: sysfs is mounted here */
	int kallsyms;                   /* 1 addresses visible, 0 hidden, -1 unknown */
	int vm_err;                     /* process_vm_readv of our own child: 0 or -errno */
	int ptrace_err;                 /* PTRACE_SEIZE of our own child */
	int bpf_load_err;               /* BPF_PROG_LOAD of a perf_event program */
	int perf_open_err;              /* perf_event_open cpu-clock, all processes, cpu 0 */
	int bpf_attach_err;             /* PERF_EVENT_IOC_SET_BPF */
	int bpf_built;                  /* this framewalk has the BPF backend */
	int bpf_backend_err;            /* loading framewalk's own BPF program: 0 or -errno */
	char bpf_backend_why[256];      /* its failure, from the backend */
};

struct audit_target {
	pid_t pid;
	int uid_known;
	uid_t uid;
	char user[64];
	int seccomp;
	int kthread;                    /* a kernel thread: no user space to read */
	pid_t tracer;                   /* TracerPid, 0 none */
	char tracer_comm[64];
	char root[PATH_MAX];            /* readlink /proc/PID/root, "" unknown */
	int chroot;                     /* same mount namespace, another root */
	int ns_same[NS_COUNT];          /* 1 same as framewalk, 0 different, -1 unknown */
	int in_container;
	char container_why[256];
	int maps_err;                   /* reading /proc/PID/maps: 0 or -errno */
	int vm_err;                     /* process_vm_readv: 0 or -errno */
	int ptrace_err;                 /* PTRACE_SEIZE from a child: 0 or -errno */
};

/*
 * The facts and probes of this machine. The BPF backend's own program is
 * not loaded here (audit/ sits below the sampler): the caller loads it when
 * audit_env_wants_bpf_backend() says the trivial program got through, and
 * fills bpf_built, bpf_backend_err and bpf_backend_why.
 */
void audit_env_probe(struct audit_env *e);
int audit_env_wants_bpf_backend(const struct audit_env *e);
/* Facts and probes for pid. 0, or -ESRCH when there is no such process. */
int audit_target_probe(const struct audit_env *e, pid_t pid, struct audit_target *t);

int audit_has_cap(const struct audit_env *e, int cap);

enum audit_status { AUDIT_USABLE, AUDIT_LIMITED, AUDIT_UNUSABLE };
enum audit_failure {
	AUDIT_OK,
	AUDIT_NO_PERMISSION,          /* a privilege, sysctl or security policy */
	AUDIT_NO_FEATURE,             /* the kernel lacks something */
	AUDIT_GONE,                   /* the target exited */
};

#define AUDIT_MAX_FIXES 4

/*
 * The verdict on one backend, indexed by enum backend (sampler/sampler.h;
 * BACKEND_AUTO's entry stays empty); their names and descriptions are the
 * sampler's (backend_info), which the caller reads.
 */
struct audit_backend {
	enum audit_status status;
	enum audit_failure failure;
	struct strbuf reason;           /* what limits it, one line */
	struct strbuf note;             /* an aside that does not block it */
	char *fixes[AUDIT_MAX_FIXES];   /* exact commands, narrowest first */
	size_t nfixes;
};

/* Evaluate every backend, for target t (NULL: this machine in general). */
void audit_backends(const struct audit_env *e, const struct audit_target *t,
		    struct audit_backend out[BACKEND_COUNT]);
void audit_backends_release(struct audit_backend out[BACKEND_COUNT]);
const char *audit_backend_status_name(enum audit_status s);

#endif

/*
 * Implementation of env.h. Facts come from /proc and /sys; the verdict on
 * each backend from a real probe, explained with those facts. The BPF probe
 * uses the raw bpf(2) and perf_event_open(2) system calls (no libbpf): the
 * two-instruction program "r0 = 0; exit" is enough to learn whether the
 * kernel lets this process load and attach a perf_event program.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/env.h"
#include "audit/username.h"
#include "target/privilege.h"
#include "target/proc.h"
#include "util/file.h"
#include "util/util.h"

const char *const audit_ns_names[NS_COUNT] = {
	"pid", "mnt", "user", "net", "cgroup", "ipc", "uts",
};

/* Inode numbers of the initial namespaces (include/linux/proc_ns.h). */
#define PROC_USER_INIT_INO 0xEFFFFFFDu
#define PROC_PID_INIT_INO 0xEFFFFFFCu
#define PROC_CGROUP_INIT_INO 0xEFFFFFFBu

static const char *const container_cgroup_markers[] = {
	"docker", "kubepods", "containerd", "libpod", "lxc", "crio", "podman", "garden",
};

static long read_sysctl(const char *path)
{
	char buf[64];
	long v;

	if (read_file_into(path, buf, sizeof(buf)))
		return AUDIT_UNSET;
	buf[strcspn(buf, "\n")] = '\0';
	return parse_long(buf, &v) ? AUDIT_UNSET : v;
}

/* The value after "Key:" in a /proc status text, or NULL. */
static const char *status_field(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ':') {
			p += n + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
	return NULL;
}

int audit_has_cap(const struct audit_env *e, int cap)
{
	return cap >= 0 && cap < 64 && (e->cap_eff >> cap) & 1;
}

static int in_bounding_set(const struct audit_env *e, int cap)
{
	return cap >= 0 && cap < 64 && (e->cap_bnd >> cap) & 1;
}

const char *audit_backend_status_name(enum audit_status s)
{
	switch (s) {
	case AUDIT_USABLE: return "usable";
	case AUDIT_LIMITED: return "limited";
	case AUDIT_UNUSABLE:
	default: return "unusable";
	}
}

static unsigned long long ns_inode(pid_t pid, const char *ns, int *err)
{
	char path[64], link[64];
	ssize_t n;
	const char *lb;

	if (pid)
		xsnprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	else
		xsnprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		*err = -errno;
		return 0;
	}
	link[n] = '\0';
	lb = strchr(link, '[');
	*err = 0;
	return lb ? strtoull(lb + 1, NULL, 10) : 0;
}

/*
 * The cgroup of a process: the v2 ("0::") path, else the first v1 line's;
 * but a line naming a container runtime wins, on whichever controller.
 */
static void read_cgroup(pid_t pid, char *out, size_t size)
{
	char path[64], buf[4096];
	const char *pick = NULL;

	out[0] = '\0';
	if (pid)
		xsnprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	else
		xsnprintf(path, sizeof(path), "/proc/self/cgroup");
	if (read_file_into(path, buf, sizeof(buf)))
		return;
	for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *p = strchr(line, ':');
		size_t len;

		if (!p || !(p = strchr(p + 1, ':')))
			continue;
		p++;
		len = strcspn(p, "\n");
		for (size_t i = 0; i < ARRAY_SIZE(container_cgroup_markers); i++)
			if (memmem(p, len, container_cgroup_markers[i],
				   strlen(container_cgroup_markers[i]))) {
				xsnprintf(out, size, "%.*s", (int)len, p);
				return;
			}
		if (!pick || !strncmp(line, "0::", 3))
			pick = p;
	}
	if (pick)
		xsnprintf(out, size, "%.*s", (int)strcspn(pick, "\n"), pick);
}

static void detect_container(pid_t pid, const char *cgroup, int *in, char *why, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned long long ino;
	int err;

	*in = 0;
	ino = ns_inode(pid, "pid", &err);
	if (!err && ino != PROC_PID_INIT_INO) {
		*in = 1;
		strbuf_addstr(&sb, "own pid namespace");
	}
	ino = ns_inode(pid, "user", &err);
	if (!err && ino != PROC_USER_INIT_INO) {
		*in = 1;
		strbuf_addf(&sb, "%sown user namespace", sb.len ? ", " : "");
	}
	for (size_t i = 0; i < ARRAY_SIZE(container_cgroup_markers); i++)
		if (strstr(cgroup, container_cgroup_markers[i])) {
			*in = 1;
			strbuf_addf(&sb, "%scgroup %s", sb.len ? ", " : "", cgroup);
			break;
		}
	if (!pid) {
		if (!access("/.dockerenv", F_OK))
			strbuf_addf(&sb, "%s/.dockerenv", sb.len ? ", " : "");
		if (!access("/run/.containerenv", F_OK))
			strbuf_addf(&sb, "%s/run/.containerenv", sb.len ? ", " : "");
	}
	if (!*in) {
		ino = ns_inode(pid, "pid", &err);
		if (err)
			xsnprintf(why, size, "unknown (namespaces unreadable)%s%s",
				  sb.len ? ", " : "", strbuf_str(&sb));
		else
			xsnprintf(why, size, "initial namespaces%s%s%s", sb.len ? "; " : "",
				  strbuf_str(&sb), sb.len ? " present, but the namespaces are the host's" : "");
	} else {
		xsnprintf(why, size, "%s", strbuf_str(&sb));
	}
	strbuf_release(&sb);
}

/* ------------------------------------------------------------------ */
/* Probes                                                              */

static volatile uint64_t probe_word = 0x66776b6c61776d66ull;

/* Read a word of our own stopped-in-pause child, and seize it. */
static void probe_own_child(struct audit_env *e)
{
	uint64_t got = 0;
	struct iovec local = { &got, sizeof(got) };
	struct iovec remote = { (void *)&probe_word, sizeof(got) };
	int status;
	pid_t child = fork();

	if (child < 0) {
		e->vm_err = e->ptrace_err = -errno;
		return;
	}
	if (!child) {
		for (;;)
			pause();
	}
	if (process_vm_readv(child, &local, 1, &remote, 1, 0) == (ssize_t)sizeof(got))
		e->vm_err = got == probe_word ? 0 : -EIO;
	else
		e->vm_err = -errno;
	e->ptrace_err = ptrace(PTRACE_SEIZE, child, NULL, NULL) ? -errno : 0;
	kill(child, SIGKILL);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static void probe_bpf(struct audit_env *e)
{
	struct bpf_insn insns[2];
	struct perf_event_attr pa;
	union bpf_attr attr;
	int prog = -1, ev = -1;

	e->perf_open_err = e->bpf_attach_err = -ECANCELED;
	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;   /* r0 = 0 */
	insns[1].code = BPF_JMP | BPF_EXIT;            /* exit */
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	prog = sys_bpf(BPF_PROG_LOAD, &attr);
	e->bpf_load_err = prog < 0 ? -errno : 0;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_SOFTWARE;
	pa.config = PERF_COUNT_SW_CPU_CLOCK;
	pa.sample_period = 10000000;
	pa.disabled = 1;                /* never fires: only the permission matters */
	ev = (int)syscall(__NR_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	e->perf_open_err = ev < 0 ? -errno : 0;
	if (prog >= 0 && ev >= 0)
		e->bpf_attach_err = ioctl(ev, PERF_EVENT_IOC_SET_BPF, prog) ? -errno : 0;
	if (ev >= 0)
		close(ev);
	if (prog >= 0)
		close(prog);
}

static int probe_kallsyms(void)
{
	char buf[256];
	unsigned long long addr;

	if (read_file_into("/proc/kallsyms", buf, sizeof(buf)))
		return -1;
	addr = strtoull(buf, NULL, 16);
	return addr != 0;
}

void audit_env_probe(struct audit_env *e)
{
	char status[8192];
	const char *v;
	struct utsname u;
	ssize_t n;

	memset(e, 0, sizeof(*e));
	e->uid = getuid();
	e->euid = geteuid();
	e->gid = getgid();
	audit_user_name(e->euid, e->user, sizeof(e->user));
	e->seccomp = -1;
	if (!read_file_into("/proc/self/status", status, sizeof(status))) {
		if ((v = status_field(status, "CapEff")))
			e->cap_eff = strtoull(v, NULL, 16);
		if ((v = status_field(status, "CapBnd")))
			e->cap_bnd = strtoull(v, NULL, 16);
		if ((v = status_field(status, "Seccomp")))
			e->seccomp = (int)strtol(v, NULL, 10);
		if ((v = status_field(status, "NoNewPrivs")))
			e->no_new_privs = (int)strtol(v, NULL, 10);
	}
	e->cap_last = read_sysctl("/proc/sys/kernel/cap_last_cap");
	e->perf_event_paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid");
	e->kptr_restrict = read_sysctl("/proc/sys/kernel/kptr_restrict");
	e->ptrace_scope = read_sysctl("/proc/sys/kernel/yama/ptrace_scope");
	e->unprivileged_bpf_disabled = read_sysctl("/proc/sys/kernel/unprivileged_bpf_disabled");
	read_cgroup(0, e->cgroup, sizeof(e->cgroup));
	detect_container(0, e->cgroup, &e->in_container, e->container_why, sizeof(e->container_why));
	n = readlink("/proc/self/exe", e->self_exe, sizeof(e->self_exe) - 1);
	e->self_exe[n > 0 ? n : 0] = '\0';
	if (!uname(&u))
		xsnprintf(e->kernel, sizeof(e->kernel), "%s", u.release);
	e->btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	e->sysfs = !access("/sys/kernel", F_OK);
	e->kallsyms = probe_kallsyms();
	probe_own_child(e);
	probe_bpf(e);
	e->bpf_built = 0;
	e->bpf_backend_err = -ECANCELED;
}

int audit_env_wants_bpf_backend(const struct audit_env *e)
{
	/* The real program only when the trivial one loads: the verifier's time is not free. */
	return !e->bpf_load_err && !e->perf_open_err && !e->bpf_attach_err;
}

/* PF_KTHREAD in the flags of /proc/PID/stat (field 9: the 7th after the comm). */
static int is_kthread(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags;

	xsnprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_file_into(path, buf, sizeof(buf)) || !(p = strrchr(buf, ')')))
		return 0;
	for (int field = 0; field < 7 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	flags = strtoul(p + 1, NULL, 10);
	return (flags & 0x00200000ul) != 0;
}

int audit_target_probe(const struct audit_env *e, pid_t pid, struct audit_target *t)
{
	char path[64], status[8192], cgroup[256], byte;
	struct iovec local = { &byte, 1 }, remote;
	uint64_t probe_addr = 0x10000;   /* unmapped: EFAULT still means "allowed" */
	struct strbuf refused = STRBUF_INIT;
	const char *v;
	ssize_t n;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->seccomp = -1;
	xsnprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file_into(path, status, sizeof(status)))
		return -ESRCH;
	if ((v = status_field(status, "Uid"))) {
		t->uid = (uid_t)strtoul(v, NULL, 10);
		t->uid_known = 1;
		audit_user_name(t->uid, t->user, sizeof(t->user));
	}
	if ((v = status_field(status, "Seccomp")))
		t->seccomp = (int)strtol(v, NULL, 10);
	if ((v = status_field(status, "TracerPid")))
		t->tracer = (pid_t)strtol(v, NULL, 10);
	if (t->tracer > 0) {
		char cp[64];

		xsnprintf(cp, sizeof(cp), "/proc/%d/comm", (int)t->tracer);
		if (!read_file_into(cp, t->tracer_comm, sizeof(t->tracer_comm)))
			t->tracer_comm[strcspn(t->tracer_comm, "\n")] = '\0';
	}
	t->kthread = is_kthread(pid);
	/* an elevated framewalk looks no further into another user's process */
	if (privilege_may_profile(pid, &refused) == -EPERM) {
		strbuf_release(&refused);
		t->vm_err = t->ptrace_err = -EPERM;
		return 0;
	}
	for (int i = 0; i < NS_COUNT; i++) {
		int e1, e2;
		unsigned long long a = ns_inode(pid, audit_ns_names[i], &e1);
		unsigned long long b = ns_inode(0, audit_ns_names[i], &e2);

		t->ns_same[i] = e1 || e2 ? -1 : a == b;
	}
	xsnprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	n = readlink(path, t->root, sizeof(t->root) - 1);
	t->root[n > 0 ? n : 0] = '\0';
	t->chroot = n > 0 && strcmp(t->root, "/") && t->ns_same[NS_MNT] == 1;
	read_cgroup(pid, cgroup, sizeof(cgroup));
	detect_container(pid, cgroup, &t->in_container, t->container_why, sizeof(t->container_why));

	xsnprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	{
		char line[128];

		t->maps_err = read_file_into(path, line, sizeof(line));
		if (!t->maps_err && line[0])
			probe_addr = strtoull(line, NULL, 16);
	}
	remote.iov_base = (void *)(uintptr_t)probe_addr;
	remote.iov_len = 1;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == 1 || errno == EFAULT)
		t->vm_err = 0;
	else
		t->vm_err = -errno;
	t->ptrace_err = proc_ptrace_probe(pid);
	(void)e;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Backends and fixes                                                  */

static void add_fix(struct audit_backend *r, const char *fmt, ...) PRINTF_LIKE(2, 3);

static void add_fix(struct audit_backend *r, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (r->nfixes >= AUDIT_MAX_FIXES)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	r->fixes[r->nfixes++] = xstrdup(buf);
}

static const char *exe_or_default(const struct audit_env *e)
{
	return e->self_exe[0] ? e->self_exe : "$(command -v framewalk)";
}

/* "docker run --cap-add X ... after": caps (FW_CAP_BIT()s) in the table's order. */
static void docker_fix(struct audit_backend *r, uint64_t caps, const char *after)
{
	struct strbuf flags = STRBUF_INIT;

	privilege_cap_names(&flags, caps, " --cap-add ", "", 1);
	add_fix(r, "docker run%s ... %s", strbuf_str(&flags), after);
	strbuf_release(&flags);
}

/*
 * The narrowest way to get caps (names without CAP_, lower-case for setcap):
 * inside a container whose bounding set lacks one, only the container's
 * configuration can add it; otherwise a file capability on framewalk itself.
 */
static void cap_fixes(const struct audit_env *e, struct audit_backend *r, const int *caps,
		      size_t n, const char *kube_profile)
{
	struct strbuf kube = STRBUF_INIT;
	uint64_t setcap = 0;
	int bounded = 0;

	for (size_t i = 0; i < n; i++) {
		if (!in_bounding_set(e, caps[i]))
			bounded = 1;
		setcap |= FW_CAP_BIT(caps[i]);
	}
	/* every form in the table's order (setcap's too) */
	privilege_cap_names(&kube, setcap, "\"", "\",", 1);
	strbuf_addch(&kube, '"');
	if (e->in_container || bounded) {
		docker_fix(r, setcap, "(podman: the same flags)");
		if (kube_profile)
			add_fix(r, "kubectl debug -it POD --image=IMAGE --target=CONTAINER --profile=%s",
				kube_profile);
		else
			add_fix(r, "kubectl debug -it POD --image=IMAGE --target=CONTAINER "
				"--custom=caps.json, caps.json: {\"securityContext\":{\"capabilities\":"
				"{\"add\":[%s]}}}", strbuf_str(&kube));
	}
	if (!bounded) {
		struct strbuf grant = STRBUF_INIT;

		privilege_grant_fix(&grant, setcap, exe_or_default(e));
		add_fix(r, "%s", strbuf_str(&grant));
		strbuf_release(&grant);
	}
	strbuf_release(&kube);
}

/* Docker's default seccomp profile lets ptrace and process_vm_readv through with the capability. */
static void seccomp_trace_fix(struct audit_backend *r)
{
	docker_fix(r, FW_CAP_BIT(FW_CAP_SYS_PTRACE), "(Docker's default seccomp profile allows "
		   "ptrace and process_vm_readv with it)");
}

/*
 * Reading the target's memory (ACCESS_READ_MEMORY) or tracing it
 * (ACCESS_TRACE) takes the same permission; err is the probe's result.
 */
static void eval_attach(const struct audit_env *e, const struct audit_target *t,
			struct audit_backend *r, int err, int is_ptrace)
{
	static const int ptrace_cap[] = { FW_CAP_SYS_PTRACE };
	const char *call = is_ptrace ? "PTRACE_SEIZE" : "process_vm_readv";
	int cap = audit_has_cap(e, FW_CAP_SYS_PTRACE);
	long scope = e->ptrace_scope;

	if (!t) {
		if (err) {
			r->status = AUDIT_UNUSABLE;
			r->failure = AUDIT_NO_PERMISSION;
			if (scope == 2 && !cap) {
				strbuf_addstr(&r->reason, "kernel.yama.ptrace_scope is 2: only CAP_SYS_PTRACE "
					      "may attach, even to framewalk's own children");
				cap_fixes(e, r, ptrace_cap, 1, "general");
				add_fix(r, "sudo sysctl -w kernel.yama.ptrace_scope=1");
			} else if (scope == 3) {
				strbuf_addstr(&r->reason, "kernel.yama.ptrace_scope is 3: no process may "
					      "attach to another until reboot");
				add_fix(r, "boot with kernel.yama.ptrace_scope=0 or 1 (3 cannot be lowered "
					"at run time)");
			} else if (e->seccomp == 2) {
				strbuf_addf(&r->reason, "a seccomp filter refuses %s (%s)", call,
					    strerror(-err));
				seccomp_trace_fix(r);
				add_fix(r, "docker run --security-opt seccomp=PROFILE.json with a "
					"profile that allows %s", call);
			} else {
				strbuf_addf(&r->reason, "%s of framewalk's own child failed: %s", call,
					    strerror(-err));
			}
			return;
		}
		if (cap) {
			r->status = AUDIT_USABLE;
			strbuf_addstr(&r->reason, "any process (CAP_SYS_PTRACE)");
			return;
		}
		r->status = AUDIT_LIMITED;
		strbuf_addf(&r->reason, "only processes of uid %u (%s)%s; other users' processes "
			    "need CAP_SYS_PTRACE", (unsigned)e->euid, e->user,
			    scope == 1 ? " that framewalk starts itself (kernel.yama.ptrace_scope=1)" : "");
		if (scope == 1)
			add_fix(r, "sudo sysctl -w kernel.yama.ptrace_scope=0 (lets you read your "
				"own running processes)");
		cap_fixes(e, r, ptrace_cap, 1, "general");
		return;
	}

	if (!err) {
		r->status = AUDIT_USABLE;
		strbuf_addf(&r->reason, "%s on process %d works", call, (int)t->pid);
		return;
	}
	r->status = AUDIT_UNUSABLE;
	r->failure = AUDIT_NO_PERMISSION;
	if (t->kthread) {
		r->failure = AUDIT_GONE;
		strbuf_addf(&r->reason, "process %d is a kernel thread: it has no user space",
			    (int)t->pid);
		return;
	}
	if (err == -ESRCH) {
		r->failure = AUDIT_GONE;
		strbuf_addf(&r->reason, "process %d exited", (int)t->pid);
		return;
	}
	if (is_ptrace && t->tracer > 0) {
		strbuf_addf(&r->reason, "process %d is already traced by process %d (%s)",
			    (int)t->pid, (int)t->tracer, t->tracer_comm[0] ? t->tracer_comm : "?");
		add_fix(r, "detach the other tracer (gdb, strace, another profiler) first");
		return;
	}
	if (scope == 3) {
		strbuf_addstr(&r->reason, "kernel.yama.ptrace_scope is 3: no process may attach to "
			      "another until reboot");
		add_fix(r, "boot with kernel.yama.ptrace_scope=0 or 1 (3 cannot be lowered at run time)");
		return;
	}
	if (t->uid_known && t->uid != e->euid && !cap) {
		strbuf_addf(&r->reason, "process %d runs as uid %u (%s) and framewalk as uid %u (%s), "
			    "without CAP_SYS_PTRACE", (int)t->pid, (unsigned)t->uid, t->user,
			    (unsigned)e->euid, e->user);
		if (t->uid != 0)
			add_fix(r, "run as the process's own user: sudo -u %s framewalk ...", t->user);
		cap_fixes(e, r, ptrace_cap, 1, "general");
		return;
	}
	if (!cap && scope >= 1 && scope != AUDIT_UNSET) {
		strbuf_addf(&r->reason, "kernel.yama.ptrace_scope is %ld: %s without CAP_SYS_PTRACE",
			    scope, scope == 1 ? "only a parent may attach to its descendants" :
			    "only CAP_SYS_PTRACE may attach");
		if (scope == 1)
			add_fix(r, "start the program under framewalk: framewalk record -- COMMAND");
		cap_fixes(e, r, ptrace_cap, 1, "general");
		add_fix(r, "sudo sysctl -w kernel.yama.ptrace_scope=%d", scope == 1 ? 0 : 1);
		return;
	}
	if (!cap) {
		strbuf_addf(&r->reason, "process %d is not dumpable or holds capabilities framewalk "
			    "lacks (setuid, file capabilities or prctl(PR_SET_DUMPABLE, 0))", (int)t->pid);
		cap_fixes(e, r, ptrace_cap, 1, "general");
		return;
	}
	if (e->seccomp == 2) {
		strbuf_addf(&r->reason, "a seccomp filter refuses %s (%s)", call, strerror(-err));
		seccomp_trace_fix(r);
		return;
	}
	if (t->ns_same[NS_USER] == 0) {
		strbuf_addf(&r->reason, "process %d is in another user namespace, where framewalk's "
			    "CAP_SYS_PTRACE does not count (%s)", (int)t->pid, strerror(-err));
		add_fix(r, "run framewalk in the target's user namespace or an ancestor of it "
			"(e.g. on the host, or with nsenter --user --target %d)", (int)t->pid);
		return;
	}
	strbuf_addf(&r->reason, "%s on process %d: %s, although framewalk has CAP_SYS_PTRACE "
		    "(the kernel or a security module refuses this process)", call, (int)t->pid,
		    strerror(-err));
}

static void eval_bpf(const struct audit_env *e, const struct audit_target *t,
		     struct audit_backend *r)
{
	int missing[3];
	size_t nmissing = 0;
	int modern = e->cap_last == AUDIT_UNSET || e->cap_last >= FW_CAP_BPF;
	int admin = audit_has_cap(e, FW_CAP_SYS_ADMIN);
	int maps_denied = t && (t->maps_err == -EACCES || t->maps_err == -EPERM);

	if (modern && !admin) {
		if (!audit_has_cap(e, FW_CAP_BPF))
			missing[nmissing++] = FW_CAP_BPF;
		if (!audit_has_cap(e, FW_CAP_PERFMON))
			missing[nmissing++] = FW_CAP_PERFMON;
	} else if (!admin) {
		missing[nmissing++] = FW_CAP_SYS_ADMIN;
	}
	if (maps_denied && !audit_has_cap(e, FW_CAP_SYS_PTRACE))
		missing[nmissing++] = FW_CAP_SYS_PTRACE;

	if (!e->bpf_built) {
		r->status = AUDIT_UNUSABLE;
		r->failure = AUDIT_NO_FEATURE;
		strbuf_addstr(&r->reason, "this framewalk was built without the BPF backend");
		add_fix(r, "rebuild with clang, bpftool and libbpf-dev installed (make deps)");
		return;
	}
	if (!e->bpf_load_err && !e->perf_open_err && !e->bpf_attach_err && e->btf && !maps_denied &&
	    !e->bpf_backend_err) {
		r->status = AUDIT_USABLE;
		strbuf_addstr(&r->reason, "framewalk's BPF program loads, a perf_event program "
			      "attaches; kernel BTF present");
		if (e->kallsyms == 0)
			strbuf_addf(&r->note, "kernel frames will show no names: /proc/kallsyms hides "
				    "addresses (kernel.kptr_restrict=%ld); fix: sudo sysctl -w "
				    "kernel.kptr_restrict=0, or CAP_SYSLOG", e->kptr_restrict);
		return;
	}
	r->status = AUDIT_UNUSABLE;
	r->failure = AUDIT_NO_PERMISSION;
	if (nmissing) {
		strbuf_addstr(&r->reason, "missing ");
		for (size_t i = 0; i < nmissing; i++)
			strbuf_addf(&r->reason, "%s%s", i ? ", " : "", privilege_cap_name(missing[i]));
		if (e->bpf_load_err)
			strbuf_addf(&r->reason, " (BPF_PROG_LOAD: %s)", strerror(-e->bpf_load_err));
		if (maps_denied && !audit_has_cap(e, FW_CAP_SYS_PTRACE))
			strbuf_addf(&r->reason, "; CAP_SYS_PTRACE because /proc/%d/maps is refused",
				    (int)t->pid);
		if (maps_denied && t->uid_known && t->uid != 0 && t->uid != e->euid)
			strbuf_addf(&r->note, "or run as uid %u (%s) to read the target's maps "
				    "without CAP_SYS_PTRACE", (unsigned)t->uid, t->user);
		cap_fixes(e, r, missing, nmissing, NULL);
		if (!e->btf)
			strbuf_addstr(&r->note, e->sysfs ?
				      "the kernel has no BTF (/sys/kernel/btf/vmlinux) either" :
				      "and sysfs is not mounted on /sys, which it needs too");
		return;
	}
	if (e->bpf_load_err) {
		if (e->seccomp == 2) {
			strbuf_addf(&r->reason, "a seccomp filter refuses bpf() (%s)",
				    strerror(-e->bpf_load_err));
			docker_fix(r, FW_CAPS_BPF, "(Docker 20.10+ allows bpf() and perf_event_open() "
				   "with them), or --security-opt seccomp=PROFILE.json allowing bpf "
				   "and perf_event_open");
		} else {
			r->failure = e->bpf_load_err == -ENOSYS || e->bpf_load_err == -EINVAL ?
				     AUDIT_NO_FEATURE : AUDIT_NO_PERMISSION;
			strbuf_addf(&r->reason, "BPF_PROG_LOAD of a perf_event program failed: %s",
				    strerror(-e->bpf_load_err));
			if (r->failure == AUDIT_NO_FEATURE)
				add_fix(r, "a kernel built with CONFIG_BPF_SYSCALL=y and "
					"CONFIG_BPF_EVENTS=y");
		}
		return;
	}
	if (e->perf_open_err) {
		r->failure = e->perf_open_err == -ENOENT || e->perf_open_err == -ENOSYS ||
			     e->perf_open_err == -EOPNOTSUPP ? AUDIT_NO_FEATURE : AUDIT_NO_PERMISSION;
		strbuf_addf(&r->reason, "perf_event_open of a cpu-clock event failed: %s "
			    "(kernel.perf_event_paranoid=%ld)", strerror(-e->perf_open_err),
			    e->perf_event_paranoid);
		if (r->failure == AUDIT_NO_PERMISSION && e->seccomp == 2)
			docker_fix(r, FW_CAP_BIT(FW_CAP_PERFMON), "or a seccomp profile allowing "
				   "perf_event_open");
		else if (r->failure == AUDIT_NO_PERMISSION)
			add_fix(r, "sudo sysctl -w kernel.perf_event_paranoid=-1");
		return;
	}
	if (e->bpf_backend_err && e->btf) {
		r->failure = e->bpf_backend_err == -EPERM || e->bpf_backend_err == -EACCES ?
			     AUDIT_NO_PERMISSION : AUDIT_NO_FEATURE;
		strbuf_addf(&r->reason, "a trivial perf_event program loads, but framewalk's own "
			    "BPF program does not: %s", e->bpf_backend_why[0] ? e->bpf_backend_why :
			    strerror(-e->bpf_backend_err));
		return;
	}
	if (e->bpf_attach_err) {
		r->failure = AUDIT_NO_FEATURE;
		strbuf_addf(&r->reason, "attaching the program to a perf event failed: %s",
			    strerror(-e->bpf_attach_err));
		return;
	}
	if (!e->sysfs) {
		r->failure = AUDIT_NO_FEATURE;
		strbuf_addstr(&r->reason, "sysfs is not mounted on /sys here, so the kernel's BTF "
			      "(/sys/kernel/btf/vmlinux) and the CPU list cannot be read");
		add_fix(r, "mount -t sysfs sysfs /sys (container runtimes mount it by default; "
			"a bare chroot does not)");
		return;
	}
	if (!e->btf) {
		r->failure = AUDIT_NO_FEATURE;
		strbuf_addstr(&r->reason, "the kernel has no BTF (/sys/kernel/btf/vmlinux), which "
			      "the BPF backend needs to read kernel structures");
		add_fix(r, "a kernel built with CONFIG_DEBUG_INFO_BTF=y (most distribution kernels "
			"since 5.4; on Debian: the stock linux-image packages)");
		return;
	}
	/* maps_denied with CAP_SYS_PTRACE: the kernel refuses this process to everyone. */
	strbuf_addf(&r->reason, "/proc/%d/maps is refused (%s) although framewalk has "
		    "CAP_SYS_PTRACE, so the target's modules cannot be found", (int)t->pid,
		    strerror(-t->maps_err));
}

void audit_backends(const struct audit_env *e, const struct audit_target *t,
		    struct audit_backend out[BACKEND_COUNT])
{
	memset(out, 0, sizeof(*out) * BACKEND_COUNT);
	for (int b = BACKEND_AUTO + 1; b < BACKEND_COUNT; b++) {
		switch (backend_info((enum backend)b)->access) {
		case ACCESS_READ_MEMORY:
			eval_attach(e, t, &out[b], t ? t->vm_err : e->vm_err, 0);
			break;
		case ACCESS_TRACE:
			eval_attach(e, t, &out[b], t ? t->ptrace_err : e->ptrace_err, 1);
			break;
		case ACCESS_BPF:
			eval_bpf(e, t, &out[b]);
			break;
		}
	}
}

void audit_backends_release(struct audit_backend out[BACKEND_COUNT])
{
	for (int i = 0; i < BACKEND_COUNT; i++) {
		strbuf_release(&out[i].reason);
		strbuf_release(&out[i].note);
		for (size_t k = 0; k < out[i].nfixes; k++)
			free(out[i].fixes[k]);
		out[i].nfixes = 0;
	}
}

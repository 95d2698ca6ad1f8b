/* Implementation of taskstat.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/resource.h>
#include <unistd.h>

#include "arch/arch.h"
#include "target/proc.h"
#include "target/taskstat.h"
#include "util/util.h"

#define PRUNE_AFTER_TICKS 64

size_t taskstat_fd_budget(uint64_t nofile)
{
	/* Half of what is left: several targets (record -p A -p B) each have one. */
	return nofile > TASKSTAT_FD_RESERVE ? (size_t)((nofile - TASKSTAT_FD_RESERVE) / 2) : 0;
}

void taskstat_init(struct taskstat *ts, pid_t pid)
{
	struct rlimit rl;

	memset(ts, 0, sizeof(*ts));
	ts->pid = pid;
	ts->max_open = SIZE_MAX;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		ts->max_open = taskstat_fd_budget(rl.rlim_cur);
}

static void close_fd(struct taskstat *ts, int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		ts->nopen--;
	}
	*fd = -2;
}

static void task_close(struct taskstat *ts, struct task_files *t)
{
	close_fd(ts, &t->stat_fd);
	close_fd(ts, &t->syscall_fd);
	close_fd(ts, &t->schedstat_fd);
}

void taskstat_release(struct taskstat *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		task_close(ts, &ts->tasks[i]);
	free(ts->tasks);
	hidx_release(&ts->index);
	memset(ts, 0, sizeof(*ts));
}

static uint64_t tid_hash(pid_t tid)
{
	return hash_mix64((uint64_t)(uint32_t)tid);
}

static uint64_t task_hash(const void *owner, uint32_t id)
{
	return tid_hash(((const struct taskstat *)owner)->tasks[id].tid);
}

void taskstat_prune(struct taskstat *ts)
{
	size_t keep = 0;

	ts->tick++;
	for (size_t i = 0; i < ts->n; i++) {
		if (ts->tick - ts->tasks[i].used_tick > PRUNE_AFTER_TICKS)
			task_close(ts, &ts->tasks[i]);
		else
			ts->tasks[keep++] = ts->tasks[i];
	}
	if (keep != ts->n) {
		ts->n = keep;
		hidx_clear(&ts->index);
		for (size_t i = 0; i < ts->n; i++)
			hidx_insert(&ts->index, tid_hash(ts->tasks[i].tid), (uint32_t)i, task_hash, ts);
	}
}

/* A thread's entry, found by tid through the index (5000 threads cost what 5 do). */
static struct task_files *task(struct taskstat *ts, pid_t tid)
{
	size_t pos = hidx_start(&ts->index, tid_hash(tid));
	struct task_files *t;

	for (uint32_t id; (id = hidx_next(&ts->index, &pos)) != HIDX_NONE;) {
		if (ts->tasks[id].tid == tid) {
			ts->tasks[id].used_tick = ts->tick;
			return &ts->tasks[id];
		}
	}
	ts->tasks = xgrow(ts->tasks, sizeof(*ts->tasks), ts->n + 1, &ts->alloc);
	t = &ts->tasks[ts->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->stat_fd = t->syscall_fd = t->schedstat_fd = -2;   /* -2: not opened yet */
	t->used_tick = ts->tick;
	t->last_nr = -1;
	hidx_insert(&ts->index, tid_hash(tid), (uint32_t)(ts->n - 1), task_hash, ts);
	return t;
}

/* The limit was met: give back every file this taskstat keeps, and keep fewer from now on. */
static void shed_files(struct taskstat *ts)
{
	ts->max_open = ts->nopen / 2;
	for (size_t i = 0; i < ts->n; i++)
		task_close(ts, &ts->tasks[i]);
}

static int open_task_file(struct taskstat *ts, pid_t tid, const char *name)
{
	char path[96];
	int fd;

	xsnprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)ts->pid, (int)tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && ts->nopen) {
		shed_files(ts);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

/*
 * Read one of a thread's files: through the descriptor kept for it, or, past
 * the budget, through one opened for this reading only. -1 in *fd marks a
 * file that does not exist for this thread (kept so it is not asked again).
 */
static ssize_t read_task_file(struct taskstat *ts, pid_t tid, const char *name, int *fd,
			      char *buf, size_t size)
{
	int use = *fd, ret;
	ssize_t n;

	if (use == -1)
		return -ENOENT;
	if (use == -2) {
		ret = open_task_file(ts, tid, name);
		if (ret == -ENOENT || ret == -ESRCH || ret == -EACCES) {
			*fd = -1;
			return ret;
		}
		if (ret < 0)
			return ret;     /* the open-file limit: try again next time */
		use = ret;
		if (ts->nopen < ts->max_open) {
			*fd = use;
			ts->nopen++;
		} else {
			ts->transient++;
		}
	}
	n = pread(use, buf, size - 1, 0);
	ret = n < 0 ? -errno : 0;
	if (use != *fd)
		close(use);
	if (ret)
		return ret;
	buf[n] = '\0';
	return n;
}

int taskstat_state(struct taskstat *ts, pid_t tid, char *state)
{
	struct task_files *t = task(ts, tid);
	char buf[512];
	ssize_t n;

	if (t->held) {
		*state = t->held;
		return 0;
	}
	n = read_task_file(ts, tid, "stat", &t->stat_fd, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return proc_stat_parse_state(buf, (size_t)n, state);
}

void taskstat_hold(struct taskstat *ts, pid_t tid, char state)
{
	task(ts, tid)->held = state;
}

int taskstat_held(struct taskstat *ts, pid_t tid)
{
	return task(ts, tid)->held != 0;
}

int taskstat_state_cpu(struct taskstat *ts, pid_t tid, char *state, int *cpu)
{
	struct task_files *t = task(ts, tid);
	char buf[512];
	ssize_t n = read_task_file(ts, tid, "stat", &t->stat_fd, buf, sizeof(buf));
	int ret;

	if (n < 0)
		return (int)n;
	ret = proc_stat_parse_state(buf, (size_t)n, state);
	return ret ? ret : proc_stat_parse_cpu(buf, (size_t)n, cpu);
}

/* "socket", "pipe", "file", ... from what /proc/PID/fd/N points at. */
static const char *fd_kind(pid_t pid, long fd)
{
	char path[64], link[256];
	ssize_t n;

	xsnprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return NULL;
	link[n] = '\0';
	if (!strncmp(link, "socket:", 7))
		return "socket";
	if (!strncmp(link, "pipe:", 5))
		return "pipe";
	if (!strncmp(link, "anon_inode:", 11))
		return "anon";
	if (link[0] == '/')
		return !strncmp(link, "/dev/", 5) ? "device" : "file";
	return "other";
}

int taskstat_wait_label(const struct taskstat *ts, long nr, uint64_t arg0, char *buf, size_t size)
{
	const char *name, *kind;
	long fd;

	if (nr < 0)
		return -ENOENT;     /* blocked outside a system call */
	name = arch_syscall_name(nr);
	if (!name) {
		xsnprintf(buf, size, "syscall %ld", nr);
		return 0;
	}
	if (arch_syscall_fd_arg(nr)) {
		fd = (long)arg0;
		kind = fd >= 0 && fd < (1 << 24) ? fd_kind(ts->pid, fd) : NULL;
		if (kind) {
			xsnprintf(buf, size, "%s fd=%ld (%s)", name, fd, kind);
			return 0;
		}
	}
	xsnprintf(buf, size, "%s", name);
	return 0;
}

int taskstat_parse_syscall(const char *text, long *nr, uint64_t *arg0)
{
	char *end;

	*nr = strtol(text, &end, 10);
	if (end == text || *nr < 0)
		return -ENOENT;     /* "running", or blocked outside a system call */
	*arg0 = strtoull(end, NULL, 16);
	return 0;
}

int taskstat_syscall(struct taskstat *ts, pid_t tid, long *nr, uint64_t *arg0)
{
	struct task_files *t = task(ts, tid);
	char text[256];
	ssize_t n = read_task_file(ts, tid, "syscall", &t->syscall_fd, text, sizeof(text));

	int ret;

	if (n < 0)
		return (int)n;
	ret = taskstat_parse_syscall(text, nr, arg0);
	if (ret)
		return ret;
	/*
	 * A wait interrupted (a signal, a ptrace stop) and restarted: the call
	 * it was seen waiting in this tick or the one before (a call seen
	 * earlier may have ended since), else restart_syscall as it is.
	 */
	if (arch_syscall_is_restart(*nr)) {
		if (t->last_nr >= 0 && ts->tick - t->last_tick <= 1) {
			*nr = t->last_nr;
			*arg0 = t->last_arg0;
			t->last_tick = ts->tick;
		}
	} else {
		t->last_nr = *nr;
		t->last_arg0 = *arg0;
		t->last_tick = ts->tick;
	}
	return 0;
}

int taskstat_wait(struct taskstat *ts, pid_t tid, char *buf, size_t size)
{
	uint64_t arg0;
	long nr;
	int ret = taskstat_syscall(ts, tid, &nr, &arg0);

	return ret ? ret : taskstat_wait_label(ts, nr, arg0, buf, size);
}

uint64_t taskstat_parse_runtime(const char *schedstat)
{
	return strtoull(schedstat, NULL, 10);
}

int taskstat_parse_switches(const char *schedstat, uint64_t *n)
{
	const char *p = schedstat;

	/* "runtime waittime timeslices": the third counts switches onto a CPU. */
	for (int field = 0; field < 2; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
	}
	*n = strtoull(p, NULL, 10);
	return 0;
}

/* A thread's schedstat line ("runtime waittime timeslices") into buf: its length or -errno. */
static ssize_t read_schedstat(struct taskstat *ts, pid_t tid, char *buf, size_t size)
{
	struct task_files *t = task(ts, tid);

	return read_task_file(ts, tid, "schedstat", &t->schedstat_fd, buf, size);
}

int taskstat_cpu_ns(struct taskstat *ts, pid_t tid, uint64_t *ns)
{
	char buf[128];
	ssize_t n = read_schedstat(ts, tid, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	*ns = taskstat_parse_runtime(buf);
	return 0;
}

int taskstat_switches(struct taskstat *ts, pid_t tid, uint64_t *n)
{
	char buf[128];
	ssize_t len = read_schedstat(ts, tid, buf, sizeof(buf));

	if (len < 0)
		return (int)len;
	return taskstat_parse_switches(buf, n);
}

int taskstat_state_recent(struct taskstat *ts, pid_t tid, uint64_t now, uint64_t max_age_ns,
			  char *state, char *wait, size_t size)
{
	struct task_files *t = task(ts, tid);
	int ret;

	if (t->state && now - t->state_ns < max_age_ns) {
		*state = t->state;
		if (wait) {
			if (!t->wait_ok)
				return -ENOENT;
			xsnprintf(wait, size, "%s", t->wait);
		}
		return 0;
	}
	ret = taskstat_state(ts, tid, state);
	if (ret)
		return ret;
	t = task(ts, tid);
	t->state = *state;
	t->state_ns = now;
	t->wait_ok = 0;
	if (*state != 'R' && !taskstat_wait(ts, tid, t->wait, sizeof(t->wait)))
		t->wait_ok = 1;
	if (wait) {
		if (!t->wait_ok)
			return -ENOENT;
		xsnprintf(wait, size, "%s", t->wait);
	}
	return 0;
}

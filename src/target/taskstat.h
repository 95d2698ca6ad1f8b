/*
 * Per-thread kernel accounting of a target, read cheaply every tick: the
 * scheduler state (is it on a CPU?), the system call a blocked thread waits
 * in and on which file descriptor, and its CPU time. /proc files stay open
 * per thread and are re-read with pread, one system call each, as long as
 * the open-file limit leaves room: a taskstat keeps at most a share of
 * RLIMIT_NOFILE open (TASKSTAT_FD_RESERVE is left for everything else),
 * and past it, or when an open meets the limit, files are opened, read and
 * closed for each reading (two more system calls, the same answers).
 */
#ifndef FRAMEWALK_TARGET_TASKSTAT_H
#define FRAMEWALK_TARGET_TASKSTAT_H

#include <stdint.h>
#include <sys/types.h>

#include "util/hashidx.h"

struct task_files {
	pid_t tid;
	int stat_fd, syscall_fd, schedstat_fd;
	uint64_t used_tick;
	char state;               /* last state read, and when */
	uint64_t state_ns;
	char wait[96];            /* last wait label read with it */
	int wait_ok;
	/* the last system call it was seen waiting in (-1: none), for a wait
	 * that a signal or a ptrace stop turned into restart_syscall */
	long last_nr;
	uint64_t last_arg0;
	uint64_t last_tick;       /* the tick it was read at */
	char held;                /* the state it had when the caller stopped it (taskstat_hold), 0 none */
};

/* Descriptors left to the rest of framewalk before taskstats keep any open. */
#define TASKSTAT_FD_RESERVE 96

struct taskstat {
	pid_t pid;
	struct task_files *tasks;
	size_t n, alloc;
	struct hidx index;        /* tasks by tid */
	uint64_t tick;
	size_t max_open, nopen;   /* files kept open: at most, now */
	uint64_t transient;       /* readings that opened and closed their file */
};

/* Files a taskstat may keep open under an open-file limit of nofile. */
size_t taskstat_fd_budget(uint64_t nofile);

void taskstat_init(struct taskstat *ts, pid_t pid);
void taskstat_release(struct taskstat *ts);
/* Close the files of threads not asked about for a while (exited threads). */
void taskstat_prune(struct taskstat *ts);

/* Scheduler state letter (R running/runnable, S, D, ...). 0 or -errno. */
int taskstat_state(struct taskstat *ts, pid_t tid, char *state);

/*
 * The caller stopped thread tid (a ptrace stop, 't' in /proc), which was in
 * state: its state reads as that until held again with 0.
 */
void taskstat_hold(struct taskstat *ts, pid_t tid, char state);
/* Is tid held (taskstat_hold)? */
int taskstat_held(struct taskstat *ts, pid_t tid);

/* The state and the CPU the thread last ran on (fresh). 0 or -errno. */
int taskstat_state_cpu(struct taskstat *ts, pid_t tid, char *state, int *cpu);

/*
 * The same, reusing a reading younger than max_age_ns (and the wait label
 * read with it, when wait is given), so that at high rates a thread's state
 * costs one system call per max_age_ns instead of one per tick.
 */
int taskstat_state_recent(struct taskstat *ts, pid_t tid, uint64_t now, uint64_t max_age_ns,
			  char *state, char *wait, size_t size);

/*
 * What a blocked thread waits in: a label such as "recvfrom fd=5 (socket)",
 * "futex", "clock_nanosleep" into buf. 0, or -errno when unknown (running,
 * not in a system call, or not allowed).
 */
int taskstat_wait(struct taskstat *ts, pid_t tid, char *buf, size_t size);

/* The system call a blocked thread waits in and its first argument. 0 or -errno. */
int taskstat_syscall(struct taskstat *ts, pid_t tid, long *nr, uint64_t *arg0);

/*
 * The same label for system call nr whose first argument is arg0 (as the
 * BPF iterator reads them from a waiting thread's registers).
 */
int taskstat_wait_label(const struct taskstat *ts, long nr, uint64_t arg0, char *buf, size_t size);

/* CPU time the thread has used, in ns (schedstat, else utime+stime). */
int taskstat_cpu_ns(struct taskstat *ts, pid_t tid, uint64_t *ns);

/*
 * How many times the thread has been switched onto a CPU (schedstat). A
 * thread off a CPU whose count did not move across a read was not running
 * during it. 0 or -errno.
 */
int taskstat_switches(struct taskstat *ts, pid_t tid, uint64_t *n);

/*
 * The parsers of what the functions above read, each given the file's text
 * NUL-terminated (the state and CPU come from proc_stat_parse_state and
 * proc_stat_parse_cpu, target/proc.h). A syscall file: "NR ARG0 ..." (NR
 * decimal, then hex words); 0 with *nr >= 0, or -ENOENT ("running", "-1
 * ..." blocked outside a system call, not a number).
 */
int taskstat_parse_syscall(const char *text, long *nr, uint64_t *arg0);
/* A schedstat file, "RUNTIME WAITTIME TIMESLICES": the ns run (0 when not a number). */
uint64_t taskstat_parse_runtime(const char *schedstat);
/* ... and the switches onto a CPU, its third field. 0 or -EINVAL. */
int taskstat_parse_switches(const char *schedstat, uint64_t *n);

#endif

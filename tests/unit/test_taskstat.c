/*
 * Unit tests of src/target/taskstat.c on a real child: a wait that a ptrace
 * stop interrupted goes on in restart_syscall, and its [wait] label stays
 * the call it waits in when that was seen before (else "restart_syscall",
 * never a bare number); and thousands of threads' entries are found by tid.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "target/taskstat.h"

static pid_t sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		struct timespec ts = { 100, 0 };

		for (;;)
			clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	}
	return pid;
}

/* /proc/PID/syscall's number (-1: not in a call), waiting for it to be want. */
static long raw_syscall(pid_t pid, long want)
{
	char path[64], text[128];
	long nr = -1;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (int i = 0; i < 200 && nr != want; i++) {
		FILE *f = fopen(path, "r");

		assert_non_null(f);
		nr = fgets(text, sizeof(text), f) ? strtol(text, NULL, 10) : -1;
		fclose(f);
		if (nr != want)
			usleep(5000);
	}
	return nr;
}

/* Stop the child with PTRACE_SEIZE + PTRACE_INTERRUPT and let it go. */
static void interrupt(pid_t pid)
{
	int status;

	assert_int_equal(ptrace(PTRACE_SEIZE, pid, 0, 0), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
	assert_int_equal(waitpid(pid, &status, __WALL), pid);
	assert_int_equal(ptrace(PTRACE_DETACH, pid, 0, 0), 0);
}

static void test_restarted_wait_keeps_its_call(void **state)
{
	struct taskstat seen, fresh;
	char label[96];
	pid_t pid = sleeper();

	(void)state;
	taskstat_init(&seen, pid);
	taskstat_init(&fresh, pid);
	assert_int_equal(raw_syscall(pid, 230), 230);       /* clock_nanosleep */
	assert_int_equal(taskstat_wait(&seen, pid, label, sizeof(label)), 0);
	assert_string_equal(label, "clock_nanosleep");
	interrupt(pid);
	assert_int_equal(raw_syscall(pid, 219), 219);       /* restart_syscall */
	assert_int_equal(taskstat_wait(&seen, pid, label, sizeof(label)), 0);
	assert_string_equal(label, "clock_nanosleep");
	/* first seen restarted: the restart is named, not a number */
	assert_int_equal(taskstat_wait(&fresh, pid, label, sizeof(label)), 0);
	assert_string_equal(label, "restart_syscall");
	taskstat_release(&seen);
	taskstat_release(&fresh);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Entries of 5000 tids (fake ones: their reads fail) are kept apart and pruned. */
static void test_many_tids(void **state)
{
	struct taskstat ts;
	char st;

	(void)state;
	taskstat_init(&ts, getpid());
	for (int round = 0; round < 2; round++)
		for (pid_t tid = 1000000; tid < 1005000; tid++)
			assert_true(taskstat_state(&ts, tid, &st) < 0);
	assert_int_equal(ts.n, 5000);
	assert_int_equal(taskstat_state(&ts, getpid(), &st), 0);
	assert_int_equal(ts.n, 5001);
	for (int i = 0; i < 100; i++)
		taskstat_prune(&ts);
	assert_int_equal(ts.n, 0);
	assert_int_equal(taskstat_state(&ts, getpid(), &st), 0);
	assert_int_equal(ts.n, 1);
	taskstat_release(&ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restarted_wait_keeps_its_call),
		cmocka_unit_test(test_many_tids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

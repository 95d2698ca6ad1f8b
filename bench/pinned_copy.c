/*
 * The floor of reading a target from the CPU it runs on (vm's --vm-cpu
 * target), for bench/windows.py's "pinned-copy": at RATE Hz, for SECONDS,
 * this process looks up the CPU the target's main thread last ran on
 * (/proc/PID/stat, as vm does each tick), moves itself there when it
 * changed, and copies BYTES of the target's heap with one process_vm_readv;
 * nothing else: no walk, no profile. What the target loses to it is what
 * any reader running on its CPU at that rate costs it on this machine.
 *
 *   pinned_copy PID RATE SECONDS [BYTES]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

/* The CPU pid last ran on (field 39 of /proc/PID/stat), or -1. */
static int target_cpu(int pid)
{
	char path[64], buf[4096], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 39; field++)
		p = strchr(p + 1, ' ');
	return p ? atoi(p + 1) : -1;
}

static uint64_t heap_start(int pid)
{
	char path[64], line[512];
	unsigned long lo = 0, hi;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	fclose(f);
	return lo;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	uint64_t t, end, interval, heap;
	unsigned long copies = 0, failed = 0;
	size_t len;
	char *buf;
	int pid, pinned = -1;

	if (argc < 4) {
		fprintf(stderr, "usage: pinned_copy PID RATE SECONDS [BYTES]\n");
		return 2;
	}
	pid = atoi(argv[1]);
	interval = (uint64_t)(1e9 / atof(argv[2]));
	len = argc > 4 ? (size_t)atol(argv[4]) : 4096;
	heap = heap_start(pid);
	buf = malloc(len);
	if (!heap || !buf || !interval) {
		fprintf(stderr, "pinned_copy: no heap in process %d\n", pid);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	end = t + (uint64_t)(atof(argv[3]) * 1e9);
	while (t < end) {
		struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)heap, len };
		int cpu = target_cpu(pid);

		if (cpu >= 0 && cpu != pinned) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			if (!sched_setaffinity(0, sizeof(set), &set))
				pinned = cpu;
		}
		failed += process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len;
		copies++;
		t += interval;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	fprintf(stderr, "pinned_copy: %lu copies, %lu failed\n", copies, failed);
	free(buf);
	return failed == copies;
}

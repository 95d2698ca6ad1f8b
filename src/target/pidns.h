/*
 * Thread ids of a target in another PID namespace (a container): the target
 * names its threads by the numbers of its own namespace (CPython's
 * native_thread_id, glibc's struct pthread), while /proc, ptrace and the
 * kernel's perf events use ours. The pairs come from each thread's NSpid
 * line and are read again, at most every PIDNS_REREAD_NS, when a tid is
 * asked for that the map does not have. For a target in our own namespace
 * every id maps to itself and nothing is read.
 */
#ifndef FRAMEWALK_TARGET_PIDNS_H
#define FRAMEWALK_TARGET_PIDNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PIDNS_REREAD_NS 100000000ull

struct pidns_pair {
	pid_t ns, host;
};

struct pidns_tids {
	pid_t pid;
	int foreign;                /* the target's PID namespace is not ours */
	struct pidns_pair *v;
	size_t n, alloc;
	uint64_t read_ns;           /* when the pairs were last read, 0 never */
};

void pidns_tids_init(struct pidns_tids *m, pid_t pid);
void pidns_tids_release(struct pidns_tids *m);

/* Our tid for a tid as the target numbers it; 0 when there is no such thread. */
pid_t pidns_host_tid(struct pidns_tids *m, pid_t ns_tid);

/* The target's threads as it numbers them (sorted, malloc'd). 0 or -errno. */
int pidns_target_tids(struct pidns_tids *m, pid_t **tids, size_t *n);

#endif

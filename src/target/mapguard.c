/*
 * Implementation of mapguard.h: a registry of guarded images and the SIGBUS
 * handler that answers a fault inside one with a page of zeros.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "target/mapguard.h"

/*
 * The images mapped now, for the SIGBUS handler: a slot's bounds are
 * written by the thread that maps and unmaps (hi cleared first, set last),
 * read by the handler, which runs on the thread that faulted. More images
 * than slots are mapped unguarded (a fault in one ends the process, as
 * before the guard): the agent keeps every target's files open, shared
 * between the processes that map them.
 */
#define GUARDED_MAX 4096
static struct { _Atomic uintptr_t lo, hi; } guarded[GUARDED_MAX];
static atomic_ulong truncated_pages;
static struct sigaction sigbus_before;
static uintptr_t guard_page;        /* the page size, set before the handler is */

unsigned long map_guard_cut_pages(void)
{
	return atomic_load(&truncated_pages);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t at = (uintptr_t)si->si_addr, page = guard_page;

	(void)uc;
	/* BUS_ADRERR: no page there (a file cut short; an I/O error reads the same) */
	if (si->si_code == BUS_ADRERR && page) {
		for (size_t i = 0; i < GUARDED_MAX; i++) {
			uintptr_t lo = atomic_load(&guarded[i].lo), hi = atomic_load(&guarded[i].hi);

			if (at < lo || at >= hi)
				continue;
			/* the missing page (a file's end cut under its mapping): zeros instead */
			if (mmap((void *)(at & ~(page - 1)), (size_t)page,
				 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				 -1, 0) == MAP_FAILED)
				break;
			atomic_fetch_add(&truncated_pages, 1);
			return;         /* the read is made again, of the zeros */
		}
	}
	/* not ours: the handler before; a fault comes again at once, a sent signal is sent again */
	sigaction(sig, &sigbus_before, NULL);
	if (si->si_code <= 0)
		raise(sig);
}

void map_guard(const void *image, size_t size)
{
	struct sigaction now, ours;
	long page = sysconf(_SC_PAGESIZE);

	if (page <= 0)
		return;
	guard_page = (uintptr_t)page;
	if (!sigaction(SIGBUS, NULL, &now) && now.sa_sigaction != on_sigbus) {
		memset(&ours, 0, sizeof(ours));
		ours.sa_sigaction = on_sigbus;
		ours.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&ours.sa_mask);
		sigaction(SIGBUS, &ours, &sigbus_before);
	}
	for (size_t i = 0; i < GUARDED_MAX; i++) {
		uintptr_t free_slot = 0;

		/* claimed (hi 1: [0, 1), a page nothing maps), then filled */
		if (!atomic_compare_exchange_strong(&guarded[i].hi, &free_slot, 1))
			continue;
		atomic_store(&guarded[i].lo, (uintptr_t)image);
		atomic_store(&guarded[i].hi, (uintptr_t)image + size);
		return;
	}
}

void map_unguard(const void *image)
{
	for (size_t i = 0; i < GUARDED_MAX; i++)
		if (atomic_load(&guarded[i].lo) == (uintptr_t)image && atomic_load(&guarded[i].hi)) {
			atomic_store(&guarded[i].hi, 0);
			atomic_store(&guarded[i].lo, 0);
			return;
		}
}

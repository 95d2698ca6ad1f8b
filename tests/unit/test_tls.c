/*
 * Where glibc's thread descriptor lies against the thread pointer, as the
 * architecture layer says (arch_pthread_below_tp) and as the BPF program
 * relies on to tell a thread's Python state (cfg.pthread_below_tp): read
 * in this process. On x86-64 pthread_self() is the fs base; on aarch64 it
 * is TPIDR_EL0 less glibc's sizeof(struct pthread), which discovery reads
 * from the C library's _thread_db_sizeof_pthread (py_glibc_sizeof_pthread).
 * `make unit-aarch64` runs this under qemu-aarch64 with the arm64 glibc.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "arch/arch.h"
#include "python/discover.h"
#include "target/proc.h"

static uint64_t thread_pointer(void)
{
	uint64_t tp;

#if defined(__x86_64__)
	/* the TCB's first word is its own address: the fs base */
	__asm__("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
#error "a port adds its thread pointer here"
#endif
	return tp;
}

static void *other_thread(void *arg)
{
	uint64_t *out = arg;

	out[0] = thread_pointer();
	out[1] = (uint64_t)(uintptr_t)pthread_self();
	return NULL;
}

static void descriptor_against_thread_pointer(void **state)
{
	struct proc_maps maps;
	uint64_t size, seen[2];
	pthread_t t;

	(void)state;
	assert_int_equal(proc_maps_read(getpid(), &maps), 0);
	size = py_glibc_sizeof_pthread(getpid(), &maps, NULL);
	proc_maps_release(&maps);
	/* glibc publishes it on both architectures; a descriptor is some hundreds of bytes */
	assert_in_range(size, 256, 16384);
	/* the main thread and another one */
	assert_int_equal(pthread_create(&t, NULL, other_thread, seen), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (arch_pthread_below_tp) {
		assert_int_equal(thread_pointer() - size, (uint64_t)(uintptr_t)pthread_self());
		assert_int_equal(seen[0] - size, seen[1]);
	} else {
		assert_int_equal(thread_pointer(), (uint64_t)(uintptr_t)pthread_self());
		assert_int_equal(seen[0], seen[1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor_against_thread_pointer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

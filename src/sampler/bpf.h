/*
 * The eBPF backend: a perf_event BPF program on every CPU's cpu-clock reads
 * the kernel stack, the user registers and stack, and the Python frames of
 * the target's running threads at the instant of the sample, without
 * stopping anything; user space finishes the native walk with the same
 * unwinder as the ptrace backend and merges with the same code.
 */
#ifndef FRAMEWALK_SAMPLER_BPF_H
#define FRAMEWALK_SAMPLER_BPF_H

#include "util/strbuf.h"

struct session;

/* Is the BPF backend built in? */
int bpf_backend_built(void);

/*
 * Can it run here (privileges, kernel)? Loads the program to find out.
 * 0 yes; otherwise -errno with the reason and the fix in why.
 */
int bpf_backend_probe(struct strbuf *why);

/* Run a capture of every target of sess until the duration, a stop request or their exit. */
int bpf_backend_run(struct session *sess, struct strbuf *why);

#endif

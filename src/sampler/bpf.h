/*
 * The eBPF backend (its ops are backend_bpf_ops in backend.h): a perf_event
 * BPF program on every CPU's cpu-clock reads the kernel stack, the user
 * registers and stack, and the Python frames of the target's running threads
 * at the instant of the sample, without stopping anything; user space
 * finishes the native walk with the same unwinder as the ptrace backend and
 * merges with the same code. Here: whether it is built, and whether it can
 * run on this machine.
 */
#ifndef FRAMEWALK_SAMPLER_BPF_H
#define FRAMEWALK_SAMPLER_BPF_H

#include "util/strbuf.h"

/* Is the BPF backend built in? */
int bpf_backend_built(void);

/*
 * Can it run here (privileges, kernel)? Loads the program to find out.
 * 0 yes; otherwise -errno with the reason and the fix in why.
 */
int bpf_backend_probe(struct strbuf *why);

/* libbpf's warnings on stderr (FRAMEWALK_DEBUG_BPF, read by cmd/environ.c). */
void bpf_backend_set_debug(int on);

#endif

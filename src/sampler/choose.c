/*
 * Which backend a capture gets: the one rule (sampler.h). A profile is right
 * when each sample is the thread's stack at one instant, so the default
 * reads running threads at one instant: bpf when its program loads here
 * (nothing is stopped), else ptrace (a running thread is stopped while it is
 * read). The reader that never stops the target (vm) copies a stack over
 * microseconds while short calls change it, which biases call-heavy code
 * (docs/BENCHMARKS.md, "Accuracy"): it runs when asked for, or when neither
 * of the others may run.
 */
#include <errno.h>

#include "sampler/bpf.h"
#include "sampler/sampler.h"
#include "target/proc.h"
#include "util/util.h"

int backend_parse(const char *name, enum backend *out)
{
	if (!strcmp(name, "auto"))
		*out = BACKEND_AUTO;
	else if (!strcmp(name, "vm"))
		*out = BACKEND_VM;
	else if (!strcmp(name, "ptrace"))
		*out = BACKEND_PTRACE;
	else if (!strcmp(name, "bpf"))
		*out = BACKEND_BPF;
	else
		return -EINVAL;
	return 0;
}

static int ptrace_allowed(pid_t pid)
{
	int err;

	if (pid <= 0)
		return 0;          /* a command framewalk starts: its own child */
	err = proc_ptrace_probe(pid);
	/* No such process: attaching will say so; nothing to decide here. */
	return err == -ESRCH ? 0 : err;
}

int backend_choose(struct sampler_opts *so, pid_t probe_pid, struct strbuf *why,
		   struct strbuf *announce)
{
	struct strbuf bpf_why = STRBUF_INIT;
	int err;

	if (so->kernel)
		so->native = 1;
	if (so->backend == BACKEND_VM && so->native) {
		strbuf_addstr(why, "--native and --kernel need a backend that sees native stacks: "
			      "--backend ptrace or bpf (or leave --backend out)");
		return -EINVAL;
	}
	if (so->backend == BACKEND_BPF) {
		if (bpf_backend_probe(why))
			return -EPERM;
		return 0;
	}
	if (so->backend != BACKEND_AUTO)
		return 0;
	if (!bpf_backend_probe(&bpf_why)) {
		so->backend = BACKEND_BPF;
		strbuf_addstr(announce, so->native ?
			      "backend bpf: whole stacks at each sample's instant, nothing stopped" :
			      "backend bpf: each sample read at its instant, nothing stopped");
	} else if (!(err = ptrace_allowed(probe_pid))) {
		so->backend = BACKEND_PTRACE;
		strbuf_addf(announce, "backend ptrace: a running thread is stopped while it is "
			    "read; bpf is not available: %s", strbuf_str(&bpf_why));
	} else if (!so->native) {
		so->backend = BACKEND_VM;
		strbuf_addf(announce, "backend vm: reading without stopping the target (ptrace "
			    "refused: %s; bpf: %s); short functions on call-heavy code may be "
			    "under-counted (docs/BENCHMARKS.md)", strerror(-err), strbuf_str(&bpf_why));
	} else {
		strbuf_addf(why, "whole stacks need bpf or ptrace, and neither may run here: "
			    "ptrace: %s; bpf: %s", strerror(-err), strbuf_str(&bpf_why));
		strbuf_release(&bpf_why);
		return -EPERM;
	}
	strbuf_release(&bpf_why);
	return 0;
}

const char *backend_description(const struct sampler_opts *so)
{
	switch (so->backend) {
	case BACKEND_BPF:
		if (!so->native)
			return "bpf (perf_event + BPF: Python frames at each sample's instant; never stops the target)";
		return so->kernel ? "bpf (perf_event + BPF: Python + native + kernel; never stops the target)" :
			"bpf (perf_event + BPF: Python + native; never stops the target)";
	case BACKEND_PTRACE:
		if (!so->native)
			return "ptrace (Python frames; stops a running thread while reading it)";
		return so->kernel ? "ptrace (Python + native + kernel; stops a running thread while reading it)" :
			"ptrace (Python + native; stops a running thread while reading it)";
	default:
		return "vm (process_vm_readv; Python frames; never stops the target)";
	}
}

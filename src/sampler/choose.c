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

static const char *const mode_names[] = {
	[MODE_CPU] = "cpu", [MODE_WALL] = "wall", [MODE_GIL] = "gil",
	[MODE_EXCEPTION] = "exception",
};

int sample_mode_parse(const char *name, enum sample_mode *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++) {
		if (!strcmp(name, mode_names[i])) {
			*out = (enum sample_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *sample_mode_name(enum sample_mode mode)
{
	return (size_t)mode < ARRAY_SIZE(mode_names) ? mode_names[mode] : "cpu";
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

const char *backend_name(enum backend b)
{
	switch (b) {
	case BACKEND_VM:
		return "vm";
	case BACKEND_PTRACE:
		return "ptrace";
	case BACKEND_BPF:
		return "bpf";
	default:
		return "auto";
	}
}

/*
 * Whole stacks unless asked otherwise, where they cost no extra stop: bpf
 * reads them in the kernel at the interrupt; ptrace in cpu mode stops the
 * running thread to read it anyway, and the native copy adds little to that
 * stop (docs/BENCHMARKS.md, "Whole stacks by default"). In ptrace's other
 * modes (wall, gil, exception) a waiting thread's Python frames are read
 * without a stop, its native frames only with one: Python frames there
 * unless --native.
 */
int backend_whole_stacks_default(enum backend b, enum sample_mode mode)
{
	switch (b) {
	case BACKEND_BPF:
		return 1;
	case BACKEND_PTRACE:
		return mode == MODE_CPU;
	default:
		return 0;
	}
}

enum backend backend_auto_pick(int bpf_loads, int ptrace_allowed)
{
	return bpf_loads ? BACKEND_BPF : ptrace_allowed ? BACKEND_PTRACE : BACKEND_VM;
}

static void decide_stacks(struct sampler_opts *so, int asked_native)
{
	so->stacks_asked = asked_native || so->python_only;
	if (!so->stacks_asked)
		so->native = backend_whole_stacks_default(so->backend, so->mode);
}

int backend_choose(struct sampler_opts *so, pid_t probe_pid, struct strbuf *why,
		   struct strbuf *announce)
{
	struct strbuf bpf_why = STRBUF_INIT;
	int asked_native, bpf_ok, err;

	if (so->kernel)
		so->native = 1;
	if (so->python_only && (so->native || so->native_all)) {
		strbuf_addstr(why, "--python-only cannot be given with --native, --kernel or "
			      "--native-all: choose one view");
		return -EINVAL;
	}
	asked_native = so->native;
	if (so->backend == BACKEND_VM && so->native) {
		strbuf_addstr(why, "--native and --kernel need a backend that sees native stacks: "
			      "--backend ptrace or bpf (or leave --backend out)");
		return -EINVAL;
	}
	/* The bpf program does not read the exception state at its instant. */
	if (so->mode == MODE_EXCEPTION && so->backend == BACKEND_BPF) {
		strbuf_addstr(why, "--mode exception needs a backend that reads each thread's "
			      "exception state as it reads its stack: --backend ptrace or vm "
			      "(or leave --backend out)");
		return -EINVAL;
	}
	/* Nor a thread's context (--label): sampler/labels.h. */
	if (so->labels.n && so->backend == BACKEND_BPF) {
		strbuf_addstr(why, "--label needs a backend that reads each thread's context as it "
			      "reads its stack; the bpf program does not yet: --backend ptrace or vm "
			      "(or leave --backend out)");
		return -EINVAL;
	}
	if (so->backend == BACKEND_BPF) {
		if (bpf_backend_probe(why))
			return -EPERM;
		decide_stacks(so, asked_native);
		return 0;
	}
	if (so->backend != BACKEND_AUTO) {
		decide_stacks(so, asked_native);
		return 0;
	}
	if (so->mode == MODE_EXCEPTION) {
		bpf_ok = 0;
		strbuf_addstr(&bpf_why, "it does not read exception state (--mode exception)");
	} else if (so->labels.n) {
		bpf_ok = 0;
		strbuf_addstr(&bpf_why, "it does not read context variables (--label)");
	} else {
		bpf_ok = !bpf_backend_probe(&bpf_why);
	}
	err = bpf_ok ? 0 : ptrace_allowed(probe_pid);
	so->backend = backend_auto_pick(bpf_ok, !err);
	so->backend_auto = 1;
	if (so->backend == BACKEND_BPF) {
		decide_stacks(so, asked_native);
		strbuf_addstr(announce, so->native ?
			      "backend bpf: whole stacks at each sample's instant, nothing stopped" :
			      "backend bpf: Python frames at each sample's instant, nothing stopped");
	} else if (so->backend == BACKEND_PTRACE) {
		decide_stacks(so, asked_native);
		strbuf_addf(announce, "backend ptrace: a running thread is stopped while it is "
			    "read%s; bpf is not available: %s",
			    so->native ? "" : so->python_only ? ", Python frames" :
			    ", Python frames (--native adds native frames, stopping waiting threads too)",
			    strbuf_str(&bpf_why));
	} else if (!so->native) {
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

int backend_fall_back(struct sampler_opts *so, pid_t probe_pid, const char *why,
		      struct strbuf *announce)
{
	enum backend from = so->backend;
	int err;

	if (!so->backend_auto || from != BACKEND_BPF)
		return -ENOENT;
	err = ptrace_allowed(probe_pid);
	so->backend = backend_auto_pick(0, !err);
	if (so->backend == BACKEND_VM && so->native && so->stacks_asked) {
		so->backend = from;
		return -ENOENT;        /* whole stacks asked for, and nothing else reads them */
	}
	if (!so->stacks_asked)
		so->native = backend_whole_stacks_default(so->backend, so->mode);
	strbuf_addf(announce, "the %s backend could not start (%s): going on with %s, %s",
		    backend_name(from), why, backend_name(so->backend),
		    so->backend == BACKEND_PTRACE ?
		    "a running thread is stopped while it is read" :
		    "reading without stopping the target (Python frames)");
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

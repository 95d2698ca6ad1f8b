/*
 * Which backend a capture gets: the one rule (sampler.h). A profile is right
 * when each sample is the thread's stack at one instant, so the default
 * reads running threads at one instant: bpf when its program loads here
 * (nothing is stopped), else ptrace (a running thread is stopped while it is
 * read). The reader that never stops the target (vm) copies a stack over
 * microseconds while short calls change it, which biases call-heavy code
 * (docs/BENCHMARKS.md, "Accuracy"): it runs when asked for, or when neither
 * of the others may run.
 *
 * Also the one table of what each backend is (struct backend_info): its
 * name, how it reads and what it needs, in the words every command prints.
 */
#include <errno.h>
#include <stddef.h>

#include "sampler/backend.h"
#include "sampler/bpf.h"
#include "sampler/sampler.h"
#include "target/privilege.h"
#include "target/proc.h"
#include "util/util.h"

/* The backends, by enum backend (sampler.h says what each field is for). */
static const struct backend_info backends[BACKEND_COUNT] = {
	[BACKEND_VM] = {
		.id = BACKEND_VM,
		.name = "vm",
		.ops = &backend_vm_ops,
		.access = ACCESS_READ_MEMORY,
		.help = "never stops the target; Python frames only; under-counts short calls "
			"on call-heavy code",
		.reads = "reading without stopping the target",
		.caveat = "short functions on call-heavy code may be under-counted "
			  "(docs/BENCHMARKS.md, \"Accuracy\")",
		.header = { "vm (process_vm_readv; Python frames; never stops the target)" },
		.by_default = "Python frames, read without stopping the target",
		.changing_hint = "(stacks that kept changing while read without stopping the "
				 "target:\n"
				 "            threads making calls faster than a copy takes; "
				 "--backend bpf or\n"
				 "            --backend ptrace --native read them at one instant)",
		.labels = 1,
		.labels_trace = 1,
	},
	[BACKEND_PTRACE] = {
		.id = BACKEND_PTRACE,
		.name = "ptrace",
		.ops = &backend_ptrace_ops,
		.access = ACCESS_TRACE,
		.reads = "a running thread is stopped while it is read",
		.header = {
			"ptrace (Python frames; stops a running thread while reading it)",
			"ptrace (Python + native; stops a running thread while reading it)",
			"ptrace (Python + native + kernel; stops a running thread while reading it)",
		},
		.by_default = "whole stacks in cpu mode (Python frames in wall and gil modes unless "
			      "--native), a running thread stopped while it is read",
		.native = 1,
		.labels = 1,
		.labels_trace = 1,
		/*
		 * It stops a running thread to read it anyway, and the native copy
		 * adds little to that stop (docs/BENCHMARKS.md, "Whole stacks by
		 * default"); in the other modes a waiting thread's Python frames are
		 * read without a stop, its native frames only with one.
		 */
		.whole_stacks = 1u << MODE_CPU,
	},
	[BACKEND_BPF] = {
		.id = BACKEND_BPF,
		.name = "bpf",
		.ops = &backend_bpf_ops,
		.access = ACCESS_BPF,
		.help = "each running thread read at the sample's instant, nothing stopped",
		.needs = FW_CAPS_BPF,
		.reads = "at each sample's instant, nothing stopped",
		.header = {
			"bpf (perf_event + BPF: Python frames at each sample's instant; never stops "
			"the target)",
			"bpf (perf_event + BPF: Python + native; never stops the target)",
			"bpf (perf_event + BPF: Python + native + kernel; never stops the target)",
		},
		.by_default = "whole stacks, each read at its sample's instant, nothing stopped",
		.native = 1,
		/* context variables, read by the program; not OpenTelemetry's span */
		.labels = 1,
		.whole_stacks = EVERY_MODE,     /* read in the kernel at the interrupt */
		.fds_fixed = 12,                /* maps, program, BTF, statistics, ring buffer, epoll */
		.fds_per_cpu = 2,               /* perf event + link */
	},
};

/* The one order auto follows: bpf when its program loads, else ptrace, else vm. */
static const enum backend auto_order[] = { BACKEND_BPF, BACKEND_PTRACE, BACKEND_VM };

const char backend_auto_rule[] = "bpf where its program loads, else ptrace, else vm for "
				 "Python frames";

const struct backend_info *backend_info(enum backend b)
{
	return b > BACKEND_AUTO && b < BACKEND_COUNT ? &backends[b] : NULL;
}

const struct backend_info *backend_info_described(const char *description)
{
	size_t n = strcspn(description, " ");

	for (int b = BACKEND_AUTO + 1; b < BACKEND_COUNT; b++)
		if (strlen(backends[b].name) == n && !strncmp(description, backends[b].name, n))
			return &backends[b];
	return NULL;
}

enum backend backend_preferred(size_t i)
{
	return i < ARRAY_SIZE(auto_order) ? auto_order[i] : BACKEND_AUTO;
}

enum backend backend_fewer_descriptors(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(auto_order); i++) {
		const struct backend_info *bi = &backends[auto_order[i]];

		if (!bi->fds_per_cpu && bi->native)
			return bi->id;
	}
	return BACKEND_AUTO;
}

int backend_parse(const char *name, enum backend *out)
{
	if (!strcmp(name, "auto")) {
		*out = BACKEND_AUTO;
		return 0;
	}
	for (int b = BACKEND_AUTO + 1; b < BACKEND_COUNT; b++) {
		if (!strcmp(name, backends[b].name)) {
			*out = (enum backend)b;
			return 0;
		}
	}
	return -EINVAL;
}

#define EVERY_BACKEND (((1u << BACKEND_COUNT) - 1u) & ~(1u << BACKEND_AUTO))

/* The modes, by enum sample_mode (struct mode_info). */
static const struct mode_info modes[MODE_COUNT] = {
	[MODE_CPU] = {
		.id = MODE_CPU, .name = "cpu", .samples = "threads on a CPU",
		.backends = EVERY_BACKEND,
	},
	[MODE_WALL] = {
		.id = MODE_WALL, .name = "wall",
		.samples = "every thread; a waiting one ends in a [wait] frame naming its system call",
		.backends = EVERY_BACKEND,
		.waits = 1,
	},
	[MODE_GIL] = {
		.id = MODE_GIL, .name = "gil",
		.samples = "the thread holding the GIL; threads waiting for it or running without it "
			   "end in <waiting for GIL> or <running without GIL>",
		.backends = EVERY_BACKEND,
	},
	[MODE_EXCEPTION] = {
		.id = MODE_EXCEPTION, .name = "exception",
		.samples = "as wall, only threads raising or handling an exception, ending in "
			   "<exception TYPE>",
		/* the bpf program does not read the exception state at its instant */
		.backends = 1u << BACKEND_VM | 1u << BACKEND_PTRACE,
		.why_not = "does not read exception state",
		.waits = 1,
	},
};

int sample_mode_waits(enum sample_mode mode)
{
	return sample_mode_info(mode)->waits;
}

const struct mode_info *sample_mode_info(enum sample_mode mode)
{
	return (size_t)mode < ARRAY_SIZE(modes) ? &modes[mode] : &modes[MODE_CPU];
}

int sample_mode_parse(const char *name, enum sample_mode *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		if (!strcmp(name, modes[i].name)) {
			*out = (enum sample_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *sample_mode_name(enum sample_mode mode)
{
	return sample_mode_info(mode)->name;
}

/* Does the mode's row let backend b take it? */
static int mode_takes(enum sample_mode mode, enum backend b)
{
	return (sample_mode_info(mode)->backends >> b) & 1;
}

/*
 * "--backend ptrace or bpf": the backends in mask (1 << enum backend), in
 * the table's order or in the order auto prefers them.
 */
static void add_backends(struct strbuf *sb, unsigned mask, int auto_order)
{
	size_t n = 0, k = 0;

	for (int b = BACKEND_AUTO + 1; b < BACKEND_COUNT; b++)
		n += (mask >> b) & 1;
	strbuf_addstr(sb, "--backend ");
	for (int i = 0; i < BACKEND_COUNT - 1; i++) {
		enum backend b = auto_order ? backend_preferred((size_t)i) : (enum backend)(i + 1);

		if (!((mask >> b) & 1))
			continue;
		strbuf_addf(sb, "%s%s", k == 0 ? "" : k + 1 == n ? " or " : ", ", backends[b].name);
		k++;
	}
}

/* The backends whose row sets the int at offset off (a mask for add_backends). */
static unsigned backends_with(size_t off)
{
	unsigned mask = 0;

	for (int b = BACKEND_AUTO + 1; b < BACKEND_COUNT; b++)
		if (*(const int *)((const char *)&backends[b] + off))
			mask |= 1u << b;
	return mask;
}

#define BACKENDS_WITH(field) backends_with(offsetof(struct backend_info, field))

/* Is one of the --label options "trace"? */
static int labels_want_trace(const struct sampler_opts *so)
{
	for (size_t i = 0; i < so->labels.n; i++)
		if (so->labels.l[i].kind == LABEL_TRACE)
			return 1;
	return 0;
}

/* Does backend b read the labels asked? */
static int backend_reads_labels(const struct sampler_opts *so, enum backend b)
{
	const struct backend_info *bi = backend_info(b);

	return labels_want_trace(so) ? bi->labels_trace : bi->labels;
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
	const struct backend_info *bi = backend_info(b);

	return bi ? bi->name : "auto";
}

/*
 * Whole stacks unless asked otherwise, where they cost no extra stop (the
 * row's whole_stacks: bpf in every mode, ptrace in cpu mode).
 */
int backend_whole_stacks_default(enum backend b, enum sample_mode mode)
{
	const struct backend_info *bi = backend_info(b);

	return bi && (bi->whole_stacks >> mode & 1u);
}

enum backend backend_auto_pick(unsigned usable)
{
	for (size_t i = 0; i < ARRAY_SIZE(auto_order); i++)
		if (usable >> auto_order[i] & 1u)
			return auto_order[i];
	return auto_order[ARRAY_SIZE(auto_order) - 1];
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
	const struct backend_info *bi;
	int asked_native, bpf_ok, err;

	if (so->kernel)
		so->native = 1;
	if (so->python_only && (so->native || so->native_all)) {
		strbuf_addstr(why, "--python-only cannot be given with --native, --kernel or "
			      "--native-all: choose one view");
		return -EINVAL;
	}
	if (so->vm_cpu != VM_CPU_UNSET && so->backend != BACKEND_VM) {
		strbuf_addstr(why, "--vm-cpu says where the vm backend reads from: give it with "
			      "--backend vm (or --nonblocking)");
		return -EINVAL;
	}
	asked_native = so->native;
	if (so->backend != BACKEND_AUTO && !backend_info(so->backend)->native && so->native) {
		strbuf_addstr(why, "--native and --kernel need a backend that sees native stacks: ");
		add_backends(why, BACKENDS_WITH(native), 0);
		strbuf_addstr(why, " (or leave --backend out)");
		return -EINVAL;
	}
	if (so->backend != BACKEND_AUTO && !mode_takes(so->mode, so->backend)) {
		strbuf_addf(why, "--mode %s cannot be sampled with --backend %s (it %s): ",
			    sample_mode_name(so->mode), backend_name(so->backend),
			    sample_mode_info(so->mode)->why_not);
		add_backends(why, sample_mode_info(so->mode)->backends, 1);
		strbuf_addstr(why, " (or leave --backend out)");
		return -EINVAL;
	}
	/* --label: sampler/labels.h; --label trace reads three objects past the variable */
	if (so->labels.n && so->backend != BACKEND_AUTO && !backend_reads_labels(so, so->backend)) {
		if (labels_want_trace(so)) {
			strbuf_addf(why, "--label trace (OpenTelemetry's current span) needs a backend "
				    "that reads the span's objects at the sample's instant, which %s "
				    "does not: ", backend_name(so->backend));
			add_backends(why, BACKENDS_WITH(labels_trace), 1);
		} else {
			strbuf_addf(why, "labels from context variables (--label; the agent's "
				    "--context-label) need a backend that reads each thread's context "
				    "as it reads its stack, which %s does not: ",
				    backend_name(so->backend));
			add_backends(why, BACKENDS_WITH(labels), 1);
		}
		strbuf_addstr(why, " (or leave --backend out)");
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
	if (!mode_takes(so->mode, BACKEND_BPF)) {
		bpf_ok = 0;
		strbuf_addf(&bpf_why, "it %s (--mode %s)", sample_mode_info(so->mode)->why_not,
			    sample_mode_name(so->mode));
	} else if (so->labels.n && !backend_reads_labels(so, BACKEND_BPF)) {
		bpf_ok = 0;
		strbuf_addstr(&bpf_why, "it does not read OpenTelemetry's span (--label trace)");
	} else {
		bpf_ok = !bpf_backend_probe(&bpf_why);
	}
	err = bpf_ok ? 0 : ptrace_allowed(probe_pid);
	so->backend = backend_auto_pick(BACKEND_USABLE(BPF, bpf_ok) | BACKEND_USABLE(PTRACE, !err) |
					BACKEND_USABLE(VM, 1));
	so->backend_auto = 1;
	bi = backend_info(so->backend);
	if (so->backend == BACKEND_BPF) {
		decide_stacks(so, asked_native);
		strbuf_addf(announce, "backend %s: %s %s", bi->name,
			    so->native ? "whole stacks" : "Python frames", bi->reads);
	} else if (so->backend == BACKEND_PTRACE) {
		decide_stacks(so, asked_native);
		strbuf_addf(announce, "backend %s: %s%s; bpf is not available: %s", bi->name,
			    bi->reads, so->native ? "" : so->python_only ? ", Python frames" :
			    ", Python frames (--native adds native frames, stopping waiting threads too)",
			    strbuf_str(&bpf_why));
	} else if (!so->native) {
		strbuf_addf(announce, "backend %s: %s (ptrace refused: %s; bpf: %s); %s", bi->name,
			    bi->reads, strerror(-err), strbuf_str(&bpf_why), bi->caveat);
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
	const struct backend_info *bi;
	int err;

	if (!so->backend_auto || from != BACKEND_BPF)
		return -ENOENT;
	err = ptrace_allowed(probe_pid);
	so->backend = backend_auto_pick(BACKEND_USABLE(PTRACE, !err) | BACKEND_USABLE(VM, 1));
	if (so->backend == BACKEND_VM && so->native && so->stacks_asked) {
		so->backend = from;
		return -ENOENT;        /* whole stacks asked for, and nothing else reads them */
	}
	if (!so->stacks_asked)
		so->native = backend_whole_stacks_default(so->backend, so->mode);
	bi = backend_info(so->backend);
	strbuf_addf(announce, "the %s backend could not start (%s): going on with %s, %s%s",
		    backend_name(from), why, bi->name, bi->reads,
		    bi->native ? "" : " (Python frames)");
	return 0;
}

const char *backend_description(const struct sampler_opts *so)
{
	const struct backend_info *bi = backend_info(so->backend);

	int i = !so->native ? 0 : !so->kernel ? 1 : 2;

	if (!bi)
		bi = backend_info(BACKEND_VM);
	while (i > 0 && !bi->header[i])
		i--;            /* no native frames (vm): its one line */
	return bi->header[i];
}

/*
 * The bpf backend (backend.h) with libbpf and the skeleton bpftool generates
 * from fwprof.bpf.c (open -> size and configure -> load -> attach -> drain
 * -> destroy). The program reads each running thread of a target at the
 * instant of a cpu-clock sample; user space keeps its tid -> thread state map
 * current (every refresh, from the non-stopping reader), so the program needs
 * no knowledge of the interpreter's thread-local storage, replays the Python
 * walk over the copied frames, finishes native walks with the same unwinder
 * as ptrace and merges with the same code. In wall and gil modes the threads
 * that are off a CPU are read from user space at each tick, without stopping
 * them (sampler_record_waiting).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bpf/fwprof.h"
#include "fwprof.skel.h"
#include "sampler/backend.h"
#include "sampler/bpf.h"
#include "sampler/bpfrec.h"
#include "python/contextvars.h"
#include "sampler/labels.h"
#include "elf/elffile.h"
#include "symbols/kallsyms.h"
#include "target/privilege.h"
#include "target/proc.h"
#include "unwind/stackcopy.h"
#include "util/file.h"
#include "util/util.h"

#define THREAD_MAP_ENTRIES 16384
/*
 * The processes one program samples (an agent's --all-python on a large
 * host; the table held 64, and the 65th was profiled with no sample):
 * preallocated, ~1.4 MB of kernel memory.
 */
#define TARGET_MAP_ENTRIES 4096
/* label sets waiting for their samples: more than records of other CPUs between the two */
#define PENDING_LABELS 64
/* The ring buffer holds about this long of samples between two drains. */
#define RING_SECONDS 0.1
#define RING_MIN (256u << 10)
#define RING_MAX (64u << 20)
/* ... or, where records wait for a batch (batch_s), that long, up to this */
#define RING_BATCH_MAX (512u << 10)

static struct sampler *target_of(struct session *sess, pid_t pid);

/* A cpu-clock event on one thread of a target (a targeted capture). */
struct task_event {
	int fd;
	struct bpf_link *link;
};

/*
 * A thread that appeared while a target's events were being opened: covered
 * if the thread that created it had its event by then (inherited), else not.
 * Watched until a sample of it arrives, or its CPU time says it is missed.
 */
struct task_watch {
	pid_t pid, tid;
	uint64_t cpu0;
	int seen;
};

struct bpf_run {
	struct fwprof *skel;
	struct ring_buffer *rb;
	int wake_fd;              /* readable when the program woke us (ring_wake_open) */
	struct bpf_link **links;
	int *pfds;
	int ncpus;
	/* per_task: the targets' threads carry the events (inherited by the
	 * threads and processes they start), not every CPU */
	int per_task;
	double rate;
	long rate_max;                      /* kernel.perf_event_max_sample_rate */
	struct task_event *tev;
	size_t ntev, tev_alloc;
	pid_t *tasked;                      /* targets whose threads have events */
	size_t ntasked, tasked_alloc;
	struct task_watch *watch;
	size_t nwatch, watch_alloc;
	int stats_fd;
	int iterator;                       /* the waiting-thread iterator loaded */
	int iterator_err;                   /* ... or why the kernel refused it (-errno; 0: not asked) */
	int started;                        /* bpf_start succeeded: shortfalls may be said */
	struct session *sess;
	struct kallsyms ksyms;
	struct stack_ends ends;             /* what the program is told in stack_ends */
	struct bpf_link *life[2];           /* fwprof_exec, fwprof_exit: execs and exits reported */
	uint64_t life_lost;                 /* counters[2] when last looked at */
};

/* Per target: what the program has been told. */
struct bpf_target {
	int configured;                     /* in the program's table of targets */
	int config_said;                    /* the table refused it, and that was said */
	int interp_known;                   /* the GIL/collector addresses are in the config */
	int labels_primed;                  /* each thread's context walked once (node types) */
	struct fw_target_cfg cfg;
	struct bpf_link *waiting;           /* the iterator over its threads (wall, gil) */
	int waiting_err;                    /* its attach failed (errno; 0: it did not) ... */
	int waiting_said;                   /* ... and the session was told */
	/*
	 * Label sets from labels records, each for the sample of its thread and
	 * time that follows it in the ring buffer (other CPUs' records may come
	 * between the two).
	 */
	struct fw_label_rec pending[PENDING_LABELS];
	size_t npending;
	/* the interpreter's thread list, read again after tstates_every (refresh_tstates) */
	uint64_t tstates_ns, tstates_every, tstates_digest;
};

_Static_assert(FW_LABELS_MAX == LABELS_MAX, "the program reads fewer labels than --label takes");
_Static_assert(FW_LABEL_HEAD == PY_CTXVALUE_READ, "the program copies another value head");
_Static_assert(FW_HAMT_LEVELS == PY_HAMT_DEPTH_MAX, "the program walks another depth");

int bpf_backend_built(void)
{
	return 1;
}

/* FRAMEWALK_DEBUG_BPF (cmd/environ.c), for libbpf's print callback, which has no context */
static int debug_bpf;

void bpf_backend_set_debug(int on)
{
	debug_bpf = on;
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && debug_bpf)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK (later ones to the memory cgroup). */
static int memlock_charged(void)
{
	struct utsname u;
	int major, minor;

	return !uname(&u) && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	       (major < 5 || (major == 5 && minor < 11));
}

static void explain_failure(int err, struct strbuf *why)
{
	struct rlimit rl;

	/* libbpf raises the locked-memory limit itself when it may; root under a hard limit cannot. */
	if (err == -EPERM && !geteuid() && memlock_charged() && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur != RLIM_INFINITY)
		strbuf_addf(why, "not allowed to create the BPF maps: the locked-memory limit is "
			    "%llu KiB (ulimit -l) and this kernel charges BPF maps to it: raise it "
			    "(ulimit -l unlimited)", (unsigned long long)rl.rlim_cur / 1024);
	else if (err == -EMFILE || err == -ENFILE) {
		nofile_reached(why);
		strbuf_addstr(why, " (the bpf backend needs a perf event and a link per thread of "
			      "its targets, or per CPU, besides its maps)");
		if (backend_fewer_descriptors() != BACKEND_AUTO)
			strbuf_addf(why, ", or use --backend %s",
				    backend_name(backend_fewer_descriptors()));
	}
	/* EACCES from loading is the verifier's refusal, not a missing privilege. */
	else if (err == -EACCES && geteuid() == 0)
		strbuf_addf(why, "the kernel's verifier refused framewalk's BPF program (see its log "
			    "with FRAMEWALK_DEBUG_BPF=1; please report it with the kernel version)");
	else if (err == -EPERM || err == -EACCES) {
		/* the same advice as check's (audit/env.c): perf's group-only copy */
		strbuf_addstr(why, "not allowed to load BPF programs or open perf events: needs ");
		privilege_cap_names(why, FW_CAPS_BPF, "", " and ", 0);
		strbuf_addstr(why, " (or root): ");
		privilege_grant_fix(why, FW_CAPS_BPF, "$(command -v framewalk)");
		strbuf_addstr(why, "; in a container: docker run ");
		privilege_cap_names(why, FW_CAPS_BPF, "--cap-add ", " ", 1);
	}
	else if (err == -ENOENT || err == -ESRCH)
		strbuf_addf(why, "the kernel lacks BTF (/sys/kernel/btf/vmlinux) or a needed helper");
	else
		strbuf_addf(why, "loading the BPF program failed: %s", strerror(-err));
}

/* Map sizes that cost nothing to probe with; the cpu-clock program only. */
static void size_small(struct fwprof *skel)
{
	bpf_map__set_max_entries(skel->maps.samples, 4096);
	bpf_map__set_max_entries(skel->maps.scratch, 1);
	bpf_program__set_autoload(skel->progs.fwprof_waiting, false);
}

/* The number of possible CPUs, one perf event each; libbpf reads it from
 * /sys/devices/system/cpu/possible, absent where sysfs is not mounted (a
 * chroot, a container started without /sys). */
static int possible_cpus(struct strbuf *why)
{
	int n = libbpf_num_possible_cpus();

	if (n <= 0)
		strbuf_addf(why, "cannot count the CPUs: /sys/devices/system/cpu/possible is "
			    "unreadable (%s); mount sysfs on /sys (container runtimes do by default)",
			    strerror(n < 0 ? -n : EINVAL));
	return n > 0 ? n : n < 0 ? n : -EINVAL;
}

int bpf_backend_probe(struct strbuf *why)
{
	struct fwprof *skel;
	int err;

	libbpf_set_print(silent_print);
	err = possible_cpus(why);
	if (err < 0)
		return err;
	skel = fwprof__open();
	if (!skel) {
		explain_failure(-errno, why);
		return -errno;
	}
	size_small(skel);
	err = fwprof__load(skel);
	fwprof__destroy(skel);
	if (err) {
		explain_failure(err, why);
		return err;
	}
	return 0;
}

/*
 * A cpu-clock event at rate: on one CPU (tid -1), or on one thread (cpu -1)
 * inherited by the threads and processes it starts from now on. A thread's
 * interrupts only its own CPU time, where an event per CPU interrupts every
 * CPU at the rate whether the target runs there or not (perf record -p
 * opens its events the thread's way too).
 */
static int open_cpu_clock(pid_t tid, int cpu, double rate)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = (uint64_t)(1e9 / rate);   /* cpu-clock counts nanoseconds */
	if (!attr.sample_period)
		attr.sample_period = 1;
	attr.inherit = tid > 0;
	return (int)syscall(__NR_perf_event_open, &attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* An event on thread tid. 0, -ESRCH (it exited), or -errno. */
static int task_event_add(struct bpf_run *br, pid_t tid)
{
	struct task_event *e;
	int fd = open_cpu_clock(tid, -1, br->rate), err;

	if (fd < 0)
		return -errno;
	br->tev = xgrow(br->tev, sizeof(*br->tev), br->ntev + 1, &br->tev_alloc);
	e = &br->tev[br->ntev];
	e->fd = fd;
	e->link = bpf_program__attach_perf_event(br->skel->progs.fwprof_sample, fd);
	if (!e->link) {
		err = -errno;
		close(fd);
		return err;
	}
	br->ntev++;
	return 0;
}

static int pid_in(const pid_t *set, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == pid)
			return 1;
	return 0;
}

/*
 * Events on every thread of target pid, once per process (an exec keeps
 * them). Threads that appear while they are opened are watched
 * (task_watch). 0 or -errno (not -ESRCH: a thread that exited needs none).
 */
static int task_events_open(struct bpf_run *br, struct sampler *s)
{
	pid_t pid = s->target.pid, *first = NULL, *again = NULL;
	size_t nfirst = 0, nagain = 0;
	int err = 0;

	if (pid_in(br->tasked, br->ntasked, pid))
		return 0;
	if (proc_tasks(pid, &first, &nfirst))
		return 0;            /* gone: nothing to sample */
	for (size_t i = 0; i < nfirst && !err; i++) {
		err = task_event_add(br, first[i]);
		if (err == -ESRCH)
			err = 0;
	}
	if (!err && !proc_tasks(pid, &again, &nagain)) {
		for (size_t i = 0; i < nagain; i++) {
			struct task_watch *w;

			if (pid_in(first, nfirst, again[i]))
				continue;
			br->watch = xgrow(br->watch, sizeof(*br->watch), br->nwatch + 1,
					  &br->watch_alloc);
			w = &br->watch[br->nwatch++];
			memset(w, 0, sizeof(*w));
			w->pid = pid;
			w->tid = again[i];
			if (taskstat_cpu_ns(&s->tasks, w->tid, &w->cpu0))
				w->cpu0 = 0;
		}
	}
	free(first);
	free(again);
	if (!err) {
		br->tasked = xgrow(br->tasked, sizeof(*br->tasked), br->ntasked + 1, &br->tasked_alloc);
		br->tasked[br->ntasked++] = pid;
	}
	return err;
}

/*
 * The watched threads: one a sample showed is covered; one that used 20
 * periods of CPU time without a sample is not (its creator had no event
 * yet): it gets its own. One that exited is dropped.
 */
static void task_watch_check(struct bpf_run *br)
{
	uint64_t period = (uint64_t)(1e9 / br->rate);
	size_t kept = 0;

	for (size_t i = 0; i < br->nwatch; i++) {
		struct task_watch *w = &br->watch[i];
		struct sampler *s = target_of(br->sess, w->pid);
		uint64_t cpu;

		if (w->seen || !s || taskstat_cpu_ns(&s->tasks, w->tid, &cpu))
			continue;
		if (cpu - w->cpu0 > 20 * period) {
			task_event_add(br, w->tid);
			continue;
		}
		br->watch[kept++] = *w;
	}
	br->nwatch = kept;
}

static void task_events_close(struct bpf_run *br)
{
	for (size_t i = 0; i < br->ntev; i++) {
		bpf_link__destroy(br->tev[i].link);
		close(br->tev[i].fd);
	}
	free(br->tev);
	br->tev = NULL;
	br->ntev = br->tev_alloc = 0;
	free(br->tasked);
	br->tasked = NULL;
	br->ntasked = br->tasked_alloc = 0;
	free(br->watch);
	br->watch = NULL;
	br->nwatch = br->watch_alloc = 0;
}

/*
 * Targeted captures (the targets fixed at the start: record, top without
 * --subprocesses): events on the targets' threads. Where they cannot be
 * opened, or would take more than a quarter of the open-file limit
 * (thousands of threads: taskstat keeps files per thread too), or for captures
 * whose targets come and go (agent, --subprocesses, whose children would be
 * sampled twice through inherited events), one event per CPU. cpu mode
 * only: in wall and gil modes the events stay per CPU, restarted at spread
 * moments (bpf_rephase), so that a target paced by the clock is not read in
 * step there (test_modes.py's phase_locked.py, 35-65% in wall mode before);
 * events on a thread count its CPU time in fixed periods, which cpu mode
 * accepts as perf does (sampler/pacing.h).
 */
static size_t count_threads(const struct session *sess);

static int attach_task_events(struct bpf_run *br)
{
	struct rlimit rl;

	/* two descriptors a thread (event, link): at most a quarter of the limit */
	if (getrlimit(RLIMIT_NOFILE, &rl) ||
	    2 * count_threads(br->sess) + 64 > (size_t)(rl.rlim_cur / 4))
		return -EMFILE;
	for (size_t i = 0; i < br->sess->n; i++) {
		int err = br->sess->exited[i] ? 0 : task_events_open(br, br->sess->targets[i]);

		if (err)
			return err;
	}
	return 0;
}

static int attach_events(struct bpf_run *br, double rate, struct strbuf *why)
{
	br->rate = rate;
	if (br->per_task) {
		if (!attach_task_events(br))
			return 0;
		task_events_close(br);
		br->per_task = 0;     /* the header says "per CPU" */
	}
	br->pfds = xcalloc((size_t)br->ncpus, sizeof(*br->pfds));
	br->links = xcalloc((size_t)br->ncpus, sizeof(*br->links));
	for (int cpu = 0; cpu < br->ncpus; cpu++) {
		br->pfds[cpu] = open_cpu_clock(-1, cpu, rate);
		if (br->pfds[cpu] < 0) {
			if (errno == ENODEV)      /* possible but offline CPU */
				continue;
			explain_failure(-errno, why);
			return -errno;
		}
		br->links[cpu] = bpf_program__attach_perf_event(br->skel->progs.fwprof_sample,
								br->pfds[cpu]);
		if (!br->links[cpu]) {
			int err = -errno;
			explain_failure(err, why);
			return err;
		}
	}
	return 0;
}

/* Does any executable module lack frame pointers (so the stack must be copied)? */
static int needs_stack_copy(struct module_map *mm)
{
	for (size_t i = 0; i < mm->n; i++)
		if (module_fp_verdict(&mm->mods[i]) != FPA_YES)
			return 1;
	return 0;
}

/*
 * The bytes from the lowest of n words (at[i], size[i] bytes each) to the
 * end of the highest, for the program to read them at once: 0 and *start,
 * *len when that is at most max bytes, else -1.
 */
static int words_span(const uint64_t *at, const uint64_t *size, size_t n, uint64_t max,
		      uint64_t *start, uint32_t *len)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < n; i++) {
		lo = at[i] < lo ? at[i] : lo;
		hi = at[i] + size[i] > hi ? at[i] + size[i] : hi;
	}
	if (!n || hi - lo > max)
		return -1;
	*start = lo;
	*len = (uint32_t)(hi - lo);
	return 0;
}

/*
 * The span of a thread state holding every word the program reads of it
 * (its thread id, frame, data stack chunk and top), when one
 * FW_TSTATE_SPAN read holds them.
 */
static void tstate_span(const struct py_offsets *o, struct fw_target_cfg *cfg)
{
	const uint64_t size[] = { 8, 8, 8, 8 };
	uint64_t at[4], start;
	uint32_t len;
	size_t n = 0;

	cfg->tstate_span_start = 0;
	cfg->tstate_span_len = 0;
	if (o->tstate_thread_id < 0 || o->tstate_frame < 0)
		return;
	at[n++] = (uint64_t)o->tstate_thread_id;
	at[n++] = (uint64_t)o->tstate_frame;
	if (cfg->tstate_datastack >= 0) {
		at[n++] = (uint64_t)cfg->tstate_datastack;
		at[n++] = (uint64_t)cfg->tstate_datastack + 8;
	}
	if (words_span(at, size, n, FW_TSTATE_SPAN, &start, &len))
		return;
	cfg->tstate_span_start = (int32_t)start;
	cfg->tstate_span_len = len;
}

static void target_config(struct sampler *s, struct fw_target_cfg *cfg)
{
	const struct py_offsets *o = &s->target.offsets;

	memset(cfg, 0, sizeof(*cfg));
	cfg->frame_model = o->frame_model == PY_FRAMES_OBJECTS ? FW_FRAMES_OBJECTS :
			   o->frame_model == PY_FRAMES_INTERP_311 || o->cframe_current_frame != PYOFF_NONE ?
			   FW_FRAMES_311 : FW_FRAMES_312;
	cfg->tstate_frame = o->tstate_frame;
	cfg->cframe_current_frame = o->cframe_current_frame;
	cfg->frame_previous = o->frame_previous;
	cfg->frame_size = (uint32_t)o->frame_size;
	{
		int32_t start;
		size_t len;

		py_code_id_span(o, &start, &len);
		if (start >= 0 && len < FW_CODE_ID_COPY && o->frame_code >= 0) {
			cfg->frame_code = o->frame_code;
			cfg->code_id_start = start;
			cfg->code_id_len = (uint32_t)len;
			cfg->frame_code_mask = o->frame_code_tagged != PYOFF_NONE ?
				~(uint64_t)o->frame_code_tagged : ~0ull;
		}
	}
	/* 3.11+ frames sit in a data stack: read the window below the current one at once */
	cfg->py_window = cfg->frame_model != FW_FRAMES_OBJECTS && o->tstate_datastack_chunk >= 0;
	cfg->tstate_datastack = cfg->py_window ? o->tstate_datastack_chunk : -1;
	tstate_span(o, cfg);
	cfg->native = (uint32_t)s->opts.native;
	cfg->kernel = (uint32_t)s->opts.kernel;
	cfg->copy_stack = s->opts.native && needs_stack_copy(&s->native.mm);
	cfg->tstate_next = o->tstate_next;
	cfg->tstate_thread_id = o->tstate_thread_id;
	cfg->pthread_below_tp = s->target.pthread_below_tp;
}

/*
 * The labels' part of a target's configuration (fwprof.h, struct
 * fw_label_cfg): the layout, the variables as last looked up, the node
 * types learnt. 1 when it changed.
 */
static int label_config(struct sampler *s, struct fw_label_cfg *lc)
{
	struct py_contextvars *cv = labels_vars(s);
	struct fw_label_cfg was = *lc;
	const struct py_objects_layout *lo;
	int32_t co[3], lo_off = INT32_MAX;
	uint64_t types[3];

	memset(lc, 0, sizeof(*lc));
	if (!cv)
		return memcmp(&was, lc, sizeof(*lc)) != 0;
	lo = cv->lo;
	lc->nvars = (uint32_t)(cv->nvars < FW_LABELS_MAX ? cv->nvars : FW_LABELS_MAX);
	lc->tstate_context = lo->tstate_context;
	lc->tstate_context_ver = lo->tstate_context_ver;
	lc->tstate_id = lo->tstate_id;
	/* a variable's cache, where its three words lie within 32 bytes */
	co[0] = lo->contextvar_cached;
	co[1] = lo->contextvar_cached_tsid;
	co[2] = lo->contextvar_cached_tsver;
	lc->cache = lo->tstate_context_ver >= 0 && lo->tstate_id >= 0;
	for (int i = 0; i < 3; i++) {
		if (co[i] < 0 || (co[i] & 7))
			lc->cache = 0;
		else if (co[i] < lo_off)
			lo_off = co[i];
	}
	for (int i = 0; lc->cache && i < 3; i++)
		if (co[i] - lo_off > 24)
			lc->cache = 0;
	if (lc->cache) {
		lc->cache_start = lo_off;
		lc->cache_value = (uint32_t)(co[0] - lo_off) / 8;
		lc->cache_tsid = (uint32_t)(co[1] - lo_off) / 8;
		lc->cache_tsver = (uint32_t)(co[2] - lo_off) / 8;
	}
	lc->object_type = cv->ob->r->off->object_type;
	lc->context_vars = lo->context_vars;
	lc->hamt_root = lo->hamt_root;
	lc->hamt_count = lo->hamt_count;
	lc->bitmap_bitmap = lo->hamt_bitmap_bitmap;
	lc->bitmap_array = lo->hamt_bitmap_array;
	lc->array_array = lo->hamt_array_array;
	lc->collision_size = lo->hamt_collision_size;
	lc->collision_array = lo->hamt_collision_array;
	py_contextvars_node_types(cv, types);
	lc->type_bitmap = types[0];
	lc->type_array = types[1];
	lc->type_collision = types[2];
	for (uint32_t i = 0; i < lc->nvars; i++) {
		uint64_t var;
		int32_t hash;

		py_contextvars_var(cv, i, &var, &hash);
		lc->var[i] = var;
		lc->hash[i] = (uint32_t)hash;
	}
	return memcmp(&was, lc, sizeof(*lc)) != 0;
}

/*
 * Before the first labels: each thread's context walked once from here, so
 * the HAMT node types are known to the program from its first sample (a
 * node of a type it does not know yet gives that sample <unreadable>).
 */
static void labels_prime(struct sampler *s)
{
	struct py_contextvars *cv = labels_vars(s);
	struct py_ctxvalue v[LABELS_MAX];

	for (size_t i = 0; cv && i < s->threads.npy; i++)
		if (s->threads.py[i].tstate)
			py_context_values(cv, s->threads.py[i].tstate, v, cv->nvars < LABELS_MAX ?
					  cv->nvars : LABELS_MAX);
}

/*
 * The span holding the GIL's and the collector's words (fw_target_cfg), when
 * one FW_INTERP_SPAN read holds them.
 */
static void interp_span(struct fw_target_cfg *cfg)
{
	const uint64_t words[] = { cfg->gil_holder_addr, cfg->gil_locked_addr, cfg->gc_collecting_addr };
	const uint64_t sizes[] = { 8, 4, 4 };

	cfg->interp_span_addr = 0;
	cfg->interp_span_len = 0;
	/* all three, else the GIL's two (the collector's word read alone) */
	for (size_t n = ARRAY_SIZE(words); n >= 2; n--) {
		uint64_t at[ARRAY_SIZE(words)], size[ARRAY_SIZE(words)], start;
		uint32_t len;
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (words[i]) {
				at[k] = words[i];
				size[k++] = sizes[i];
			}
		if (!words_span(at, size, k, FW_INTERP_SPAN, &start, &len)) {
			cfg->interp_span_addr = start;
			cfg->interp_span_len = len;
			return;
		}
	}
}

/*
 * Tell the program about a target, and about its interpreter's GIL and
 * collector once the interpreter exists (a command framewalk started may
 * not have one yet at the first look).
 */
static void configure_target(struct bpf_run *br, struct sampler *s)
{
	struct bpf_target *bt = s->state;
	uint32_t key = (uint32_t)s->target.pid;
	uint64_t holder, locked, gc, head;
	int changed = 0;

	if (!bt->configured) {
		target_config(s, &bt->cfg);
		bt->configured = changed = 1;
	}
	if (!bt->interp_known && !py_reader_state_addrs(&s->reader, &holder, &locked, &gc, &head)) {
		bt->cfg.gil_holder_addr = holder;
		bt->cfg.gil_locked_addr = locked;
		bt->cfg.gc_collecting_addr = gc;
		bt->cfg.threads_head_addr = head;
		interp_span(&bt->cfg);
		bt->interp_known = changed = 1;
	}
	if (label_config(s, &bt->cfg.lab))
		changed = 1;
	if (changed && bpf_map_update_elem(bpf_map__fd(br->skel->maps.targets), &key, &bt->cfg,
					   BPF_ANY)) {
		/* not in the program's table: no sample of it; asked again at the next refresh */
		int err = errno;

		bt->configured = bt->interp_known = 0;
		if (!bt->config_said)
			session_fallback_note(br->sess, "process %d is not sampled: the BPF program's "
					      "table of targets refused it (%s; it holds %d)",
					      (int)s->target.pid, strerror(err), TARGET_MAP_ENTRIES);
		bt->config_said = 1;
	}
}

/*
 * Mirror the interpreter's threads into the tid -> thread state map, and
 * keep them as the target's thread list (sampler_py_thread): in cpu mode
 * no tick lists them, and the task view reads 3.14+'s running task through
 * the thread's state.
 *
 * The program finds a thread's state itself when the map has none for it
 * (and looks again a second after finding none: FW_NOT_PYTHON), so the
 * list is read at every pass only while it changes; while it reads the
 * same, each read doubles the wait, up to TSTATES_STABLE_NS. A sample
 * whose thread state the list lacks (a thread started since) brings the
 * next read to the next pass (tstates_seen). An agent read each of its
 * processes' lists every second, a third of its reads of them (issue 25).
 */
#define TSTATES_STABLE_NS 8000000000ull
#define TSTATES_FIRST_WAIT_NS 100000000ull

static void refresh_tstates(struct bpf_run *br, struct sampler *s, uint64_t now)
{
	struct bpf_target *bt = s->state;
	int fd = bpf_map__fd(br->skel->maps.tstates);
	uint64_t digest = 0;

	if (bt->tstates_ns && now - bt->tstates_ns < bt->tstates_every)
		return;
	bt->tstates_ns = now;
	if (sampler_read_py_threads(s)) {
		bt->tstates_every = 0;
		return;
	}
	for (size_t i = 0; i < s->threads.npy; i++) {
		uint32_t tid = (uint32_t)s->threads.py[i].tid;
		uint64_t ts = s->threads.py[i].tstate;

		digest = hash_mix64(digest ^ hash_mix64(((uint64_t)tid << 32) ^ ts));
		if (tid)
			bpf_map_update_elem(fd, &tid, &ts, BPF_ANY);
	}
	bt->tstates_every = look_again_after(bt->tstates_every, digest == bt->tstates_digest,
					     TSTATES_FIRST_WAIT_NS, TSTATES_STABLE_NS);
	bt->tstates_digest = digest;
}

/*
 * A sample's thread state: one the list lacks, or none for a thread the
 * list has (the program took it for a native thread: its walk of the
 * interpreter's list stops at FW_MAX_THREAD_WALK states), is read and
 * written to the map at the next pass.
 */
static void tstates_seen(struct sampler *s, pid_t tid, uint64_t tstate)
{
	struct py_thread_info *pt = sampler_py_thread(s, tid);

	if (tstate ? !pt || pt->tstate != tstate : pt && pt->tstate)
		((struct bpf_target *)s->state)->tstates_every = 0;
}

/* The program's copies start where the unwinder's other copies do. */
_Static_assert(FW_BELOW_SP == STACK_COPY_BELOW_SP, "stack copy margins differ");

/*
 * Teach the program where this thread's stack ends, so later samples copy
 * only [sp - FW_BELOW_SP, end); forget it when an unwind ran past the copy.
 * The map is written only when the end changes.
 */
static void learn_stack_end(struct bpf_run *br, uint32_t tid, const struct stack_copy *sc,
			    const struct unwind_result *uw)
{
	int fd = bpf_map__fd(br->skel->maps.stack_ends);
	uint64_t end;

	switch (stack_ends_learn(&br->ends, (pid_t)tid, sc, uw, &end)) {
	case -1:
		bpf_map_delete_elem(fd, &tid);
		break;
	case 1:
		bpf_map_update_elem(fd, &tid, &end, BPF_ANY);
		break;
	}
}

/* How many bytes of each frame's code object the program copies. */
static uint32_t copied_code_id_len(struct sampler *s)
{
	struct bpf_target *bt = s->state;

	return bt->cfg.code_id_len;
}

static void kernel_from_record(struct bpf_run *br, struct sampler *s, const struct bpf_record *rec)
{
	struct native_sample *ns = &s->native.ns;

	for (size_t i = 0; s->opts.kernel && i < rec->nkernel && ns->nkernel < KERNEL_MAX_FRAMES; i++) {
		if (!br->ksyms.loaded)
			kallsyms_load(&br->ksyms);
		ns->kernel[ns->nkernel++] = xstrdup(kallsyms_lookup(&br->ksyms,
								    bpf_record_kernel_pc(rec, i)));
	}
}

static void native_from_record(struct bpf_run *br, struct sampler *s, const struct bpf_record *rec,
			       uint64_t now)
{
	const struct fw_sample_hdr *h = rec->h;
	const uint8_t *stack = rec->stack;
	struct native_sample *ns = &s->native.ns;
	struct arch_regs regs;
	struct stack_copy sc;

	if (h->kind != FW_REC_FULL) {
		bpf_record_fp_walk(rec, &ns->uw);
		ns->unwound = 1;
		return;
	}
	memset(&regs, 0, sizeof(regs));   /* pac_mask 0: the architecture's default */
	for (int i = 0; i < FW_NREGS && i < ARCH_NREGS; i++)
		arch_reg_set(&regs, i, h->regs[i]);
	stack_copy_init(&sc, stack, h->stack_base, h->stack_bytes, FW_STACK_COPY);
	unwind_stack(&s->native.mm, &regs, stack_copy_read, &sc, &ns->uw);
	/* A library loaded since the modules were read: once more with it. */
	if (ns->uw.end == UNWIND_END_NO_MODULE && sampler_refresh_modules(s, now)) {
		stack_copy_init(&sc, stack, h->stack_base, h->stack_bytes, FW_STACK_COPY);
		unwind_stack(&s->native.mm, &regs, stack_copy_read, &sc, &ns->uw);
	}
	ns->unwound = 1;
	learn_stack_end(br, h->tid, &sc, &ns->uw);
}

/* The [wait] leaf of a waiting thread, from the registers it entered the kernel with. */
static void wait_label(struct sampler *s, const struct fw_sample_hdr *h)
{
	char label[160];

	if (!taskstat_wait_label(&s->tasks, h->syscall_nr, h->syscall_arg0, label, sizeof(label)))
		xsnprintf(s->tick.wait, sizeof(s->tick.wait), "[wait] %s", label);
	else
		xsnprintf(s->tick.wait, sizeof(s->tick.wait), "[wait] %s", "off-cpu");
}

static struct sampler *target_of(struct session *sess, pid_t pid)
{
	for (size_t i = 0; i < sess->n; i++)
		if (sess->targets[i]->target.pid == pid && !sess->exited[i])
			return sess->targets[i];
	return NULL;
}

/*
 * A labels record (fwprof.h): kept for the sample of the same thread and
 * time that follows it in the ring buffer (other CPUs' records may come
 * between the two).
 */
static void handle_labels(struct bpf_run *br, const struct fw_label_rec *rec)
{
	struct sampler *s = target_of(br->sess, (pid_t)rec->pid);
	struct bpf_target *bt;

	if (!s || !s->labels)
		return;
	bt = s->state;
	bt->pending[bt->npending++ % PENDING_LABELS] = *rec;
}

/*
 * The node types of a labels record: a node of a type the program did
 * not know (FW_LAB_TYPE) is learnt, the type it took for the bitmap node's
 * checked (the value stands only if it was: 0, else -EFAULT), and the
 * program told what was learnt.
 */
static int check_node_type(struct bpf_run *br, struct sampler *s, const struct fw_label_val *v)
{
	struct bpf_target *bt = s->state;
	int kind, ret = 0;

	if (!v->node_type)
		return 0;
	kind = py_contextvars_node_kind(labels_vars(s), v->node_type);
	if (v->status != FW_LAB_TYPE && kind != PY_CTX_TYPE_BITMAP)
		ret = -EFAULT;
	if (kind >= 0 && label_config(s, &bt->cfg.lab)) {
		uint32_t key = (uint32_t)s->target.pid;

		bpf_map_update_elem(bpf_map__fd(br->skel->maps.targets), &key, &bt->cfg, BPF_ANY);
	}
	return ret;
}

/*
 * The label set of the sample of thread tid at time (labels_take gives
 * it), from the labels record the program sent with it. A thread with no
 * Python state has none: every variable unreadable but the ones not found
 * (as ptrace and vm give it).
 */
static void labels_of_sample(struct bpf_run *br, struct sampler *s, uint32_t tid, uint64_t time)
{
	struct bpf_target *bt = s->state;
	struct py_ctx_found found[FW_LABELS_MAX];
	const struct fw_label_rec *rec = NULL;

	for (size_t i = 0; i < PENDING_LABELS && !rec; i++)
		if (bt->pending[i].tid == tid && bt->pending[i].time_ns == time)
			rec = &bt->pending[i];
	memset(found, 0, sizeof(found));
	for (uint32_t i = 0; i < FW_LABELS_MAX; i++) {
		const struct fw_label_val *v = rec ? &rec->v[i] : NULL;
		struct py_ctx_found *f = &found[i];

		f->status = -EFAULT;       /* a read failed, a node type not learnt then */
		if (!v || i >= rec->nvals || check_node_type(br, s, v))
			continue;
		if (v->status == FW_LAB_VALUE) {
			f->status = 0;
			f->cached = (int)v->cached;
			f->value = v->value;
			f->head = v->head_ok ? v->head : NULL;
		} else if (v->status == FW_LAB_UNSET) {
			f->status = -ENOENT;
		} else if (v->status == FW_LAB_NOVAR) {
			f->status = -ESRCH;
		}
	}
	labels_found(s, (pid_t)tid, rec ? rec->ctx_type : 0, rec ? rec->hamt_type : 0, found);
	if (rec)
		bt->pending[rec - bt->pending].tid = 0;
}

/*
 * gil mode (and cpu mode's records, all on a CPU): one sample of a thread per
 * tick's interval, from one of the two sources: the kernel's clock samples
 * the threads on a CPU, the tick reads the ones off a CPU (wall mode counts
 * by sampler_ticks_counted). A thread the clock sampled within the last interval is not
 * read off a CPU again: else one whose CPU the tick itself took for a
 * moment (framewalk's own thread preempting it) counted twice, once by
 * each (a busy thread of a 10 s wall capture at 100 Hz: 1,065 samples,
 * 1,232 with a second core busy, for 1,000 ticks; a stopped read counts
 * it 1,000). A thread waiting for a CPU longer than that is still read: the
 * clock does not see it. 1: count this record, 0: not.
 */
static int counted_once(struct sampler *s, const struct fw_sample_hdr *h, uint64_t now)
{
	struct thread_name_cache *c = sampler_thread_entry(s, (pid_t)h->tid, now);
	uint64_t interval = s->clock ? s->clock->interval : 0;     /* the loop's tick */

	if (!c)
		return 1;
	if (!h->off_cpu) {
		c->oncpu_ns = h->time_ns;
		return 1;
	}
	return !(c->oncpu_ns && h->time_ns >= c->oncpu_ns && h->time_ns - c->oncpu_ns < interval);
}

static int handle_record(void *ctx, void *data, size_t size)
{
	struct bpf_run *br = ctx;
	const struct fw_sample_hdr *h;
	struct bpf_record rec;
	uint64_t now = fw_now_ns();
	struct sampler *s;
	size_t depth = 0;
	struct thread_instant in = { 0 };
	int holds, py_ret = -ENOENT;
	uint64_t weight = 0;

	if (size == sizeof(struct fw_label_rec) && *(const uint32_t *)data == FW_REC_LABELS) {
		handle_labels(br, data);
		return 0;
	}
	if (size == sizeof(struct fw_life_rec) && *(const uint32_t *)data == FW_REC_LIFE) {
		const struct fw_life_rec *l = data;

		if ((s = target_of(br->sess, (pid_t)l->pid)))
			sampler_life_reported(s, now);
		return 0;
	}
	if (bpf_record_decode(data, size, &rec))
		return 0;
	h = rec.h;
	s = target_of(br->sess, (pid_t)h->pid);
	if (!s)
		return 0;
	/*
	 * The capture is the loop's span: the events run from the backend's
	 * start, before the loop, until bpf_stop, after it (a late stop drew
	 * 27 samples more than a 10 s wall capture's 1,000 ticks of a busy
	 * thread); what they took outside that span is not in the capture.
	 */
	if (h->time_ns < br->sess->start_ns || (br->sess->end_ns && h->time_ns > br->sess->end_ns))
		return 0;
	/* A waiting thread that ran while it was copied: the cpu-clock saw it run. */
	if (h->off_cpu == FW_OFFCPU_MOVED)
		return 0;
	if (s->opts.mode == MODE_WALL) {
		if (!(weight = sampler_ticks_counted(s, (pid_t)h->tid, h->time_ns, now)))
			return 0;
	} else {
		if (!counted_once(s, h, now))
			return 0;
		/* the threads on a CPU are the clock's: a late tick's waiting ones stand for more */
		if (h->off_cpu)
			weight = sampler_still_weight(s, (pid_t)h->tid, h->switches,
						      br->sess->tick_seq,
						      br->sess->clock.tick_moments, now);
	}
	for (size_t i = 0; !h->off_cpu && i < br->nwatch; i++)
		if (br->watch[i].tid == (pid_t)h->tid)
			br->watch[i].seen = 1;
	/* cpu mode has no ticks of its own: each cpu-clock sample is one. */
	if (!h->off_cpu && s->opts.mode == MODE_CPU)
		s->prof->meta.ticks_taken++;
	tstates_seen(s, (pid_t)h->tid, h->tstate);
	in.tstate = h->tstate;
	in.on_cpu = !h->off_cpu;
	in.gil_locked = h->gil_locked;
	in.gil_holder = h->gil_holder;
	in.syscall_nr = h->off_cpu ? h->syscall_nr : -1;
	in.syscall_arg0 = h->syscall_arg0;
	s->tick.marker[0] = '\0';
	if (!sampler_instant_keep(s, &in, &holds))
		return 0;
	if (h->npy)
		py_ret = bpf_record_python(&s->reader, &s->mem, &rec,
					   (uint32_t)s->target.offsets.frame_size,
					   copied_code_id_len(s), s->frames, PY_MAX_DEPTH, &depth);
	if (!s->opts.native && (!h->tstate || !h->npy))
		return 0;      /* Python frames only, and no Python code runs in this thread */
	/* a thread off a CPU in a mode that samples waiting ones: the call it waits in */
	s->tick.wait[0] = '\0';
	if (h->off_cpu && sample_mode_waits(s->opts.mode))
		wait_label(s, h);
	if (s->labels)
		labels_of_sample(br, s, h->tid, h->time_ns);
	s->tick.weight = weight;
	if (!s->opts.native) {
		if (py_ret || !depth)
			sampler_record_dropped(s, (pid_t)h->tid, now);
		else
			sampler_record_python(s, (pid_t)h->tid, s->frames, depth,
					      h->gc_collecting && holds, s->tick.wait, now);
		return 0;
	}
	native_sample_clear(&s->native.ns);
	s->native.ns.npy = depth;
	s->native.ns.py_ok = py_ret == 0;
	s->native.ns.gc = h->gc_collecting && holds;
	kernel_from_record(br, s, &rec);
	native_from_record(br, s, &rec, now);
	sampler_record_native(s, (pid_t)h->tid, now);
	native_sample_clear(&s->native.ns);
	return 0;
}

/* Tell the session, once, that target s's iterator was refused (once the backend runs). */
static void say_waiting_refused(struct bpf_run *br, struct sampler *s)
{
	struct bpf_target *bt = s->state;

	if (!br->started || !bt->waiting_err || bt->waiting_said)
		return;
	session_fallback_note(br->sess, "process %d: the kernel refused bpf's task iterator (%s): "
			      "its threads off a CPU are read from user space, Python frames only",
			      (int)s->target.pid, strerror(bt->waiting_err));
	bt->waiting_said = 1;
}

/*
 * The task iterator over target s's threads. Where the kernel refuses it
 * (before 6.1 it has no pid filter, and the attach fails), the loop reads
 * that target's waiting threads from user space (the attach retried at
 * each refresh), and the session is told once.
 */
static void attach_waiting(struct bpf_run *br, struct sampler *s)
{
	struct bpf_target *bt = s->state;
	union bpf_iter_link_info linfo;
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);

	memset(&linfo, 0, sizeof(linfo));
	linfo.task.pid = (uint32_t)s->target.pid;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	bt->waiting = bpf_program__attach_iter(br->skel->progs.fwprof_waiting, &opts);
	if (!bt->waiting) {
		bt->waiting_err = errno ? errno : EINVAL;
		say_waiting_refused(br, s);
	}
}

/* Targets: configure the new ones, forget the exited ones, refresh thread states. */
static void bpf_refresh(struct session *sess, uint64_t now)
{
	struct bpf_run *br = sess->backend;
	int fd = bpf_map__fd(br->skel->maps.targets);

	for (size_t i = 0; i < sess->n; i++) {
		struct sampler *s = sess->targets[i];
		struct bpf_target *bt = s->state;
		uint32_t key = (uint32_t)s->target.pid;

		if (sess->exited[i]) {
			if (bt->configured)
				bpf_map_delete_elem(fd, &key);
			bt->configured = 0;
			bpf_link__destroy(bt->waiting);
			bt->waiting = NULL;
			continue;
		}
		configure_target(br, s);
		refresh_tstates(br, s, now);
		if (s->labels && !bt->labels_primed && s->threads.npy) {
			labels_prime(s);
			bt->labels_primed = 1;
			configure_target(br, s);
		}
		/*
		 * A target added once the events are open gets its own (a known
		 * pid, also after an exec, which keeps them, is skipped).
		 */
		if (br->per_task && br->ntasked)
			task_events_open(br, s);
		if (br->iterator && !bt->waiting)
			attach_waiting(br, s);
	}
	if (br->per_task)
		task_watch_check(br);
}

static int bpf_target_init(struct sampler *s)
{
	s->state = xcalloc(1, sizeof(struct bpf_target));
	return 0;
}

static void bpf_target_release(struct sampler *s)
{
	struct bpf_target *bt = s->state;

	if (bt)
		bpf_link__destroy(bt->waiting);
	free(s->state);
	s->state = NULL;
}

/*
 * The ring buffer holds about RING_SECONDS of cpu-clock records at the rate
 * on every CPU (where they wait for a batch, batch_s of them, up to
 * RING_BATCH_MAX: the estimate is a full record's, where the goal-7 agent's
 * are ~2-3 KiB, ~50 a second, so a quarter of 512 KiB is about a second of
 * them; 2 MiB, mapped twice, cost the agent 3.6 MB of RSS) and, in wall and
 * gil modes, two ticks of records of every thread the targets have now (a
 * power of two between RING_MIN and RING_MAX); the program wakes the reader
 * when a quarter of it is waiting. What does not fit is counted as lost and
 * reported.
 */
static size_t ring_size(const struct sampler_opts *o, int ncpus, size_t nthreads)
{
	double per_record = sizeof(struct fw_sample_hdr) + 24.0 * FW_PY_SLOT_MAX +
			    (o->native ? 8192.0 : 0) +
			    (o->labels.n ? (double)sizeof(struct fw_label_rec) : 0);   /* sent before it */
	double want = o->rate_hz * ncpus * RING_SECONDS * per_record;
	double batch = o->rate_hz * ncpus * o->batch_s * per_record;
	size_t size = RING_MIN;

	if (batch > RING_BATCH_MAX)
		batch = RING_BATCH_MAX;
	if (batch > want)
		want = batch;
	if (o->mode != MODE_CPU && 2.0 * (double)nthreads * per_record > want)
		want = 2.0 * (double)nthreads * per_record;
	while (size < want && size < RING_MAX)
		size *= 2;
	return size;
}

/* Threads of every target now (for sizing). */
static size_t count_threads(const struct session *sess)
{
	size_t total = 0;

	for (size_t i = 0; i < sess->n; i++) {
		pid_t *tids;
		size_t n;

		if (!proc_tasks(sess->targets[i]->target.pid, &tids, &n)) {
			total += n;
			free(tids);
		}
	}
	return total;
}

/*
 * Size the maps, then load: with the waiting-thread iterator in wall and gil
 * modes; where the kernel refuses it (iterator_err), without (the waiting
 * threads are then read from user space, Python frames only).
 * FRAMEWALK_BPF_NO_ITERATOR acts as such a kernel.
 */
static int load_program(struct bpf_run *br, const struct sampler_opts *o, size_t nthreads)
{
	size_t ring = ring_size(o, br->ncpus, nthreads);
	int err;

	br->iterator = o->mode != MODE_CPU;
	br->iterator_err = 0;
	if (br->iterator && o->env && o->env->bpf_no_iterator) {
		br->iterator = 0;
		br->iterator_err = -EOPNOTSUPP;
	}
	for (;;) {
		br->skel->rodata->wake_bytes = ring / 4;
		br->skel->rodata->iter_slot = (uint32_t)br->ncpus;
		br->skel->rodata->read_labels = o->labels.n != 0;
		bpf_map__set_max_entries(br->skel->maps.samples, (uint32_t)ring);
		bpf_map__set_max_entries(br->skel->maps.scratch, (uint32_t)br->ncpus + 1);
		bpf_map__set_max_entries(br->skel->maps.tstates, THREAD_MAP_ENTRIES);
		bpf_map__set_max_entries(br->skel->maps.stack_ends, THREAD_MAP_ENTRIES);
		bpf_map__set_max_entries(br->skel->maps.targets, TARGET_MAP_ENTRIES);
		bpf_program__set_autoload(br->skel->progs.fwprof_waiting, br->iterator);
		err = fwprof__load(br->skel);
		if (!err || !br->iterator)
			return err;
		fwprof__destroy(br->skel);
		br->skel = fwprof__open();
		if (!br->skel)
			return -errno;
		br->iterator = 0;
		br->iterator_err = err;
	}
}

static void bpf_run_destroy(struct bpf_run *br)
{
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(br->life[i]);
	for (int i = 0; br->links && i < br->ncpus; i++)
		bpf_link__destroy(br->links[i]);
	for (int i = 0; br->pfds && i < br->ncpus; i++)
		if (br->pfds[i] > 0)
			close(br->pfds[i]);
	task_events_close(br);
	free(br->links);
	free(br->pfds);
	ring_buffer__free(br->rb);
	if (br->wake_fd >= 0)
		close(br->wake_fd);
	fwprof__destroy(br->skel);
	kallsyms_release(&br->ksyms);
	if (br->stats_fd >= 0)
		close(br->stats_fd);
	free(br);
}

/*
 * The events' rate within the kernel's limit for perf events
 * (kernel.perf_event_max_sample_rate, lowered by the kernel itself when its
 * interrupts take too long). The events count CPU time by a period, which
 * the kernel does not check against that limit: a period of a few
 * microseconds on every CPU starves the whole machine, the target and
 * framewalk with it. A rate above the limit is refused (the capture falls
 * back to a backend that ticks from user space).
 */
static int check_rate(const struct sampler_opts *o, long *rate_max, struct strbuf *why)
{
	char buf[32];
	long max;

	if (!read_file_into("/proc/sys/kernel/perf_event_max_sample_rate", buf, sizeof(buf)))
		buf[strcspn(buf, "\n")] = '\0';
	else
		buf[0] = '\0';
	if (parse_long(buf, &max) || max <= 0)
		max = 100000;      /* the kernel's default */
	*rate_max = max;
	if (o->rate_hz > (double)max) {
		strbuf_addf(why, "%g Hz is above this kernel's limit for perf events "
			    "(kernel.perf_event_max_sample_rate = %ld)", o->rate_hz, max);
		return -EINVAL;
	}
	return 0;
}

/* counters[key] over every CPU (fwprof.bpf.c). */
static uint64_t counter_sum(struct bpf_run *br, uint32_t key)
{
	uint64_t *vals = xcalloc((size_t)br->ncpus, sizeof(uint64_t)), sum = 0;

	if (!bpf_map_lookup_elem(bpf_map__fd(br->skel->maps.counters), &key, vals))
		for (int i = 0; i < br->ncpus; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

static uint64_t lost_samples(struct bpf_run *br)
{
	return counter_sum(br, 0);
}

/*
 * The scheduler's exec and exit tracepoints report the targets' (fwprof_exec,
 * fwprof_exit): the loop's checks of /proc/PID/stat and exe then run after
 * a report and every few seconds, not at every refresh (two system calls a
 * target each time: a third of an agent's). Where they cannot be attached,
 * the checks run at every refresh as before.
 */
static void attach_life(struct bpf_run *br)
{
	if (br->sess->opts.env && br->sess->opts.env->bpf_no_life)
		return;
	br->life[0] = bpf_program__attach_raw_tracepoint(br->skel->progs.fwprof_exec,
							 "sched_process_exec");
	br->life[1] = bpf_program__attach_raw_tracepoint(br->skel->progs.fwprof_exit,
							 "sched_process_exit");
	if (!br->life[0] || !br->life[1]) {
		for (int i = 0; i < 2; i++) {
			bpf_link__destroy(br->life[i]);
			br->life[i] = NULL;
		}
	}
}

/* Not reporting (no links), or reports the ring had no room for since the last call. */
static int bpf_life_missed(struct session *sess)
{
	struct bpf_run *br = sess->backend;
	uint64_t lost;

	if (!br || !br->life[0])
		return 1;
	lost = counter_sum(br, 2);
	if (lost == br->life_lost)
		return 0;
	br->life_lost = lost;
	return 1;
}

/*
 * What the loop waits on: readable only when the program woke the reader (a
 * quarter of the ring waiting, submit_flags; an exec or exit reported), not
 * whenever a record waits. libbpf's own descriptor is level-triggered: once
 * woken, any record waiting made the loop's wait return at once until a
 * wait found the ring empty, which a loop that lets records wait for a
 * batch (batch_s) never does. -1 with errno.
 */
static int ring_wake_open(int ring_fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	int fd = epoll_create1(EPOLL_CLOEXEC);

	if (fd >= 0 && epoll_ctl(fd, EPOLL_CTL_ADD, ring_fd, &ev)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int bpf_start(struct session *sess, struct strbuf *why)
{
	struct bpf_run *br = xcalloc(1, sizeof(*br));
	int err;

	br->sess = sess;
	br->stats_fd = -1;
	br->wake_fd = -1;
	br->per_task = sess->opts.fixed_targets && !sess->opts.subprocesses &&
		       sess->opts.mode == MODE_CPU;
	stack_ends_init(&br->ends, FW_STACK_COPY, FW_STACK_COPY);
	libbpf_set_print(silent_print);
	br->ncpus = possible_cpus(why);
	if (br->ncpus < 0) {
		err = br->ncpus;
		goto fail;
	}
	br->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	br->skel = fwprof__open();
	if (!br->skel) {
		err = -errno;
		explain_failure(err, why);
		goto fail;
	}
	err = load_program(br, &sess->opts, count_threads(sess));
	if (err) {
		explain_failure(err, why);
		goto fail;
	}
	sess->backend = br;
	bpf_refresh(sess, fw_now_ns());
	br->rb = ring_buffer__new(bpf_map__fd(br->skel->maps.samples), handle_record, br, NULL);
	if (!br->rb || (br->wake_fd = ring_wake_open(bpf_map__fd(br->skel->maps.samples))) < 0) {
		err = -errno;
		explain_failure(err, why);
		goto fail;
	}
	err = check_rate(&sess->opts, &br->rate_max, why);
	if (err)
		goto fail;
	err = attach_events(br, sess->opts.rate_hz, why);
	if (err)
		goto fail;
	attach_life(br);
	/* Running: what it runs without is said now (not for a start that then failed). */
	br->started = 1;
	for (size_t i = 0; i < sess->n; i++)
		say_waiting_refused(br, sess->targets[i]);
	if (br->iterator_err == -EOPNOTSUPP && sess->opts.env && sess->opts.env->bpf_no_iterator)
		session_fallback_note(sess, "bpf's task iterator is not loaded "
				      "(FRAMEWALK_BPF_NO_ITERATOR): threads off a CPU are read "
				      "from user space, Python frames only");
	else if (br->iterator_err)
		session_fallback_note(sess, "the kernel refused bpf's task iterator (%s): threads "
				      "off a CPU are read from user space, Python frames only",
				      strerror(-br->iterator_err));
	return 0;
fail:
	sess->backend = NULL;
	bpf_run_destroy(br);
	return err;
}

static int bpf_drain(struct session *sess, uint64_t now)
{
	struct bpf_run *br = sess->backend;
	struct epoll_event ev;

	(void)now;
	/* the wake-up is taken with the records it was for */
	while (epoll_wait(br->wake_fd, &ev, 1, 0) > 0)
		;
	return ring_buffer__consume(br->rb);
}

static int bpf_wait_fd(struct session *sess)
{
	struct bpf_run *br = sess->backend;

	return br->wake_fd;
}

static void bpf_stop(struct session *sess)
{
	struct bpf_run *br = sess->backend;
	struct profile_meta *m = &sess->prof->meta;
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	/* Stop the events first, then take what the program wrote before. */
	for (int i = 0; br->links && i < br->ncpus; i++) {
		bpf_link__destroy(br->links[i]);
		br->links[i] = NULL;
	}
	for (size_t i = 0; i < br->ntev; i++) {
		bpf_link__destroy(br->tev[i].link);
		br->tev[i].link = NULL;
	}
	m->events_per_thread = br->per_task;
	ring_buffer__consume(br->rb);
	m->lost = lost_samples(br);
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(br->skel->progs.fwprof_sample), &info, &len)) {
		m->bpf_run_ns = info.run_time_ns;
		m->bpf_run_cnt = info.run_cnt;
	}
	bpf_run_destroy(br);
	sess->backend = NULL;
}

/* Run the iterator over target s's threads: its records land in the ring buffer. */
static int read_waiting(struct bpf_target *bt)
{
	char buf[64];
	int fd = bpf_iter_create(bpf_link__fd(bt->waiting));

	if (fd < 0)
		return -errno;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return 0;
}

/*
 * wall and gil modes: the threads that are off a CPU, which no cpu-clock
 * sample sees, are read at each tick by the task iterator (whole stacks,
 * nothing stopped) where it loaded; else the loop reads them from user
 * space (Python frames: sampler_tick).
 */
static int bpf_reads_waiting(struct sampler *s)
{
	struct bpf_target *bt = s->state;

	return bt && bt->waiting;
}

static void bpf_read_waiting(struct sampler *s)
{
	read_waiting(s->state);
}

/*
 * The events per CPU count wall time: restarted with the loop's period at
 * the loop's moments, their phase against the target's is drawn again.
 * Events on the targets' threads count each thread's CPU time, whose
 * countdown a restart would throw away (a thread using less than a period
 * between two restarts would never be sampled): those are not restarted.
 */
static int bpf_rephase(struct session *sess, uint64_t period_ns, int all)
{
	struct bpf_run *br = sess->backend;
	/* the program's marks (fwprof.bpf.c), mapped: NULL where libbpf could not map them */
	volatile uint8_t *seen = br && br->skel->bss ? br->skel->bss->cpu_seen : NULL;
	uint64_t shortest;
	int restarted = 0;

	if (!br || br->per_task || !br->pfds)
		return -ENOTSUP;
	/* a drawn period never runs above the kernel's limit, which check_rate held to */
	shortest = br->rate_max > 0 ? (uint64_t)(1e9 / (double)br->rate_max) : 0;
	if (period_ns < shortest)
		period_ns = shortest;
	for (int cpu = 0; cpu < br->ncpus; cpu++) {
		/*
		 * A CPU where no target was sampled since its last restart keeps
		 * its clock: its phase matters from when one runs there, and is
		 * as random then as any (each restart is a call on that CPU,
		 * 24-38 us here: on a host of many CPUs, most of the cost).
		 */
		if (!all && seen && cpu < FW_SEEN_CPUS) {
			if (!seen[cpu])
				continue;
			seen[cpu] = 0;
		}
		if (br->pfds[cpu] > 0) {
			if (ioctl(br->pfds[cpu], PERF_EVENT_IOC_PERIOD, &period_ns))
				return -errno;
			restarted++;
		}
	}
	return restarted;
}

const struct backend_ops backend_bpf_ops = {
	.tick_modes = 1u << MODE_WALL | 1u << MODE_GIL,
	.start = bpf_start,
	.stop = bpf_stop,
	.target_init = bpf_target_init,
	.target_release = bpf_target_release,
	.reads_waiting = bpf_reads_waiting,
	.read_waiting = bpf_read_waiting,
	.drain = bpf_drain,
	.wait_fd = bpf_wait_fd,
	.refresh = bpf_refresh,
	.life_missed = bpf_life_missed,
	.rephase = bpf_rephase,
};

/*
 * Implementation of bpf.h with libbpf and the skeleton bpftool generates
 * from fwprof.bpf.c (open -> configure -> load -> attach -> poll ->
 * destroy). User space keeps the tid -> thread-state map current (every
 * 100 ms, from the non-stopping reader), so the program needs no knowledge
 * of the interpreter's thread-local storage.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bpf/fwprof.h"
#include "fwprof.skel.h"
#include "sampler/bpf.h"
#include "sampler/merge.h"
#include "sampler/sampler.h"
#include "symbols/kallsyms.h"
#include "target/proc.h"
#include "unwind/stackcopy.h"
#include "util/util.h"

#define TSTATE_REFRESH_NS 100000000ull
#define POLL_MS 50

struct bpf_run {
	struct session *sess;
	struct fwprof *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int *pfds;
	int ncpus;
	struct kallsyms ksyms;
	char *kernel_names[FW_KSTACK_MAX];
	struct stack_ends ends;             /* what the program is told in stack_ends */
};

int bpf_backend_built(void)
{
	return 1;
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("FRAMEWALK_DEBUG_BPF"))
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

	if ((err == -EPERM || err == -EACCES) && !geteuid() && memlock_charged() &&
	    !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		/* libbpf raises it itself when it may; root under a hard limit cannot. */
		strbuf_addf(why, "not allowed to create the BPF maps: the locked-memory limit is "
			    "%llu KiB (ulimit -l) and this kernel charges BPF maps to it: raise it "
			    "(ulimit -l unlimited), or run framewalk under a limit that allows it",
			    (unsigned long long)rl.rlim_cur / 1024);
	else if (err == -EPERM || err == -EACCES)
		strbuf_addf(why, "not allowed to load BPF programs or open perf events: needs "
			    "CAP_BPF and CAP_PERFMON (or root); in a container: "
			    "docker run --cap-add BPF --cap-add PERFMON");
	else if (err == -EMFILE || err == -ENFILE)
		strbuf_addf(why, "the open-file limit is reached (ulimit -n): the bpf backend needs "
			    "one perf event and one link per CPU besides its maps: raise it "
			    "(ulimit -n 1024), or use --backend ptrace");
	else if (err == -ENOENT || err == -ESRCH)
		strbuf_addf(why, "the kernel lacks BTF (/sys/kernel/btf/vmlinux) or a needed helper");
	else
		strbuf_addf(why, "loading the BPF program failed: %s", strerror(-err));
}

int bpf_backend_probe(struct strbuf *why)
{
	struct fwprof *skel;
	int err;

	libbpf_set_print(silent_print);
	skel = fwprof__open();
	if (!skel) {
		explain_failure(-errno, why);
		return -errno;
	}
	/* The probe needs no ring buffer memory worth the name. */
	bpf_map__set_max_entries(skel->maps.samples, 4096);
	err = fwprof__load(skel);
	fwprof__destroy(skel);
	if (err) {
		explain_failure(err, why);
		return err;
	}
	return 0;
}

static int open_cpu_clock(int cpu, double rate)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = (uint64_t)(1e9 / rate);   /* cpu-clock counts nanoseconds */
	if (!attr.sample_period)
		attr.sample_period = 1;
	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int attach_events(struct bpf_run *br, double rate, struct strbuf *why)
{
	br->ncpus = libbpf_num_possible_cpus();
	if (br->ncpus <= 0)
		return -EINVAL;
	br->pfds = xcalloc((size_t)br->ncpus, sizeof(*br->pfds));
	br->links = xcalloc((size_t)br->ncpus, sizeof(*br->links));
	for (int cpu = 0; cpu < br->ncpus; cpu++) {
		br->pfds[cpu] = open_cpu_clock(cpu, rate);
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

static void target_config(const struct py_offsets *o, int copy_stack, struct fw_target_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->frame_model = o->frame_model == PY_FRAMES_OBJECTS ? FW_FRAMES_OBJECTS :
			   o->frame_model == PY_FRAMES_INTERP_311 || o->cframe_current_frame != PYOFF_NONE ?
			   FW_FRAMES_311 : FW_FRAMES_312;
	cfg->tstate_frame = o->tstate_frame;
	cfg->cframe_current_frame = o->cframe_current_frame;
	cfg->frame_previous = o->frame_previous;
	cfg->frame_size = (uint32_t)o->frame_size;
	cfg->copy_stack = (uint32_t)copy_stack;
}

/* Does any executable module lack frame pointers (so the stack must be copied)? */
static int needs_stack_copy(struct module_map *mm)
{
	for (size_t i = 0; i < mm->n; i++)
		if (module_fp_verdict(&mm->mods[i]) != FP_YES)
			return 1;
	return 0;
}

/* Mirror the interpreter's threads into the tid -> thread state map. */
static void refresh_tstates(struct bpf_run *br, struct sampler *s)
{
	int fd = bpf_map__fd(br->skel->maps.tstates);
	size_t n = 0;

	if (py_reader_threads(&s->reader, s->threads, PY_MAX_THREADS, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t tid = (uint32_t)s->threads[i].tid;
		uint64_t ts = s->threads[i].tstate;

		if (tid)
			bpf_map_update_elem(fd, &tid, &ts, BPF_ANY);
	}
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

/* User pcs from the kernel's frame-pointer walk (records without a stack copy). */
static void unwind_from_fp_walk(const struct fw_sample_hdr *h, struct unwind_result *uw)
{
	size_t n = h->ustack_bytes > 0 ? (size_t)h->ustack_bytes / 8 : 0;

	uw->n = 0;
	uw->fp_steps = uw->cfi_steps = 0;
	uw->end_module = NULL;
	for (size_t i = 0; i < n && i < FW_USTACK_MAX && uw->n < UNWIND_MAX; i++) {
		uw->pcs[uw->n] = h->ustack[i];
		uw->sps[uw->n] = 0;
		uw->signal_frame[uw->n] = i == 0;
		uw->n++;
	}
	uw->fp_steps = uw->n ? (uint32_t)uw->n - 1 : 0;
	uw->end = UNWIND_END_COMPLETE;
}

static void python_from_record(struct sampler *s, const struct fw_sample_hdr *h)
{
	struct native_sample *ns = &s->ns;
	struct py_thread_info ti;

	ns->npy = 0;
	ns->py_ok = 0;
	if (!h->npy)
		return;
	mem_overlay_reset(&s->mem);
	for (uint32_t i = 0; i < h->npy && i < FW_MAX_PY_FRAMES; i++)
		mem_overlay_add(&s->mem, h->py[i].addr, h->py[i].data, (uint32_t)s->target.offsets.frame_size);
	mem_overlay_activate(&s->mem);
	memset(&ti, 0, sizeof(ti));
	ti.tstate = h->tstate;
	ti.frame = h->py[0].addr;
	ti.tid = (int32_t)h->tid;
	ns->py_ok = py_reader_stack(&s->reader, &ti, ns->py, PY_MAX_DEPTH, &ns->npy) == 0;
	mem_overlay_deactivate(&s->mem);
}

static int handle_record(void *ctx, void *data, size_t size)
{
	struct bpf_run *br = ctx;
	const struct fw_sample_hdr *h = data;
	struct sampler *s;
	struct native_sample *ns;
	struct arch_regs regs;
	uint64_t now = fw_now_ns();

	if (size < sizeof(*h) || (h->kind == FW_REC_FULL && size < sizeof(struct fw_sample_full)))
		return 0;
	s = session_find(br->sess, (pid_t)h->pid);
	if (!s)
		return 0;
	ns = &s->ns;
	native_sample_clear(ns);
	python_from_record(s, h);
	if (h->kind == FW_REC_FULL) {
		regs.valid = 0;
		regs.in_syscall = 0;
		for (int i = 0; i < FW_NREGS && i < ARCH_NREGS; i++)
			arch_reg_set(&regs, i, h->regs[i]);
		const struct fw_sample_full *rec = data;
		struct stack_copy sc;

		stack_copy_init(&sc, rec->stack, h->stack_base, h->stack_bytes, FW_STACK_COPY);
		unwind_stack(&s->mm, &regs, stack_copy_read, &sc, &ns->uw);
		/* A library loaded since the modules were read: once more with it. */
		if (ns->uw.end == UNWIND_END_NO_MODULE && sampler_refresh_modules(s, now)) {
			stack_copy_init(&sc, rec->stack, h->stack_base, h->stack_bytes, FW_STACK_COPY);
			unwind_stack(&s->mm, &regs, stack_copy_read, &sc, &ns->uw);
		}
		learn_stack_end(br, h->tid, &sc, &ns->uw);
	} else {
		unwind_from_fp_walk(h, &ns->uw);
	}
	for (int i = 0; h->kstack_bytes > 0 && i < h->kstack_bytes / 8 && i < FW_KSTACK_MAX &&
	     ns->nkernel < KERNEL_MAX_FRAMES; i++) {
		if (!br->ksyms.loaded)
			kallsyms_load(&br->ksyms);
		ns->kernel[ns->nkernel++] = xstrdup(kallsyms_lookup(&br->ksyms, h->kstack[i]));
	}
	if (!s->opts.kernel) {
		for (size_t i = 0; i < ns->nkernel; i++)
			free(ns->kernel[i]);
		ns->nkernel = 0;
	}
	sampler_record_native(s, (pid_t)h->tid, now);
	native_sample_clear(ns);
	s->prof->meta.ticks_taken++;
	return 0;
}

/* Configure every live target; returns how many are alive. */
static size_t update_targets(struct bpf_run *br, int first)
{
	struct session *sess = br->sess;
	int fd = bpf_map__fd(br->skel->maps.targets);
	size_t alive = 0;

	(void)first;
	session_follow_children(sess, fw_now_ns());
	for (size_t i = 0; i < sess->n; i++) {
		struct sampler *s = sess->targets[i];
		uint32_t key = (uint32_t)s->target.pid;

		if (sess->exited[i])
			continue;
		if (s->bpf_configured && sampler_target_exited(s)) {
			sess->exited[i] = 1;
			s->stop_reason = SAMPLER_STOP_TARGET_EXIT;
			bpf_map_delete_elem(fd, &key);
			continue;
		}
		if (!s->bpf_configured) {
			s->bpf_configured = 1;
			struct fw_target_cfg cfg;

			target_config(&s->target.offsets, needs_stack_copy(&s->mm), &cfg);
			bpf_map_update_elem(fd, &key, &cfg, BPF_ANY);
		}
		refresh_tstates(br, s);
		alive++;
	}
	return alive;
}

static uint64_t lost_samples(struct bpf_run *br)
{
	uint32_t key = 0;
	uint64_t *vals = xcalloc((size_t)libbpf_num_possible_cpus(), sizeof(uint64_t)), sum = 0;

	if (!bpf_map_lookup_elem(bpf_map__fd(br->skel->maps.counters), &key, vals))
		for (int i = 0; i < libbpf_num_possible_cpus(); i++)
			sum += vals[i];
	free(vals);
	return sum;
}

static void prog_stats(struct bpf_run *br, struct profile_meta *m)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(br->skel->progs.fwprof_sample), &info, &len)) {
		m->bpf_run_ns = info.run_time_ns;
		m->bpf_run_cnt = info.run_cnt;
	}
}

static void bpf_run_destroy(struct bpf_run *br)
{
	for (int i = 0; br->links && i < br->ncpus; i++)
		bpf_link__destroy(br->links[i]);
	for (int i = 0; br->pfds && i < br->ncpus; i++)
		if (br->pfds[i] > 0)
			close(br->pfds[i]);
	free(br->links);
	free(br->pfds);
	ring_buffer__free(br->rb);
	fwprof__destroy(br->skel);
	kallsyms_release(&br->ksyms);
}

int bpf_backend_run(struct session *sess, struct strbuf *why)
{
	struct profile_meta *m = &sess->prof->meta;
	struct bpf_run br;
	uint64_t start, end, last_refresh = 0, cpu0 = fw_cpu_ns();
	struct timespec wall;
	int stats_fd, err;

	memset(&br, 0, sizeof(br));
	stack_ends_init(&br.ends, FW_STACK_COPY, FW_STACK_COPY);
	br.sess = sess;
	libbpf_set_print(silent_print);
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	br.skel = fwprof__open();
	if (!br.skel) {
		explain_failure(-errno, why);
		return -errno;
	}
	err = fwprof__load(br.skel);
	if (err) {
		explain_failure(err, why);
		goto out;
	}
	update_targets(&br, 1);
	br.rb = ring_buffer__new(bpf_map__fd(br.skel->maps.samples), handle_record, &br, NULL);
	if (!br.rb) {
		err = -errno;
		explain_failure(err, why);
		goto out;
	}
	err = attach_events(&br, sess->opts.rate_hz, why);
	if (err)
		goto out;
	clock_gettime(CLOCK_REALTIME, &wall);
	m->start_unix_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	m->rate_hz = sess->opts.rate_hz;
	start = last_refresh = fw_now_ns();
	end = sess->opts.duration_s > 0 ? start + (uint64_t)(sess->opts.duration_s * 1e9) : 0;
	for (;;) {
		uint64_t now = fw_now_ns();

		if (sampler_stop_requested) {
			sess->stop_reason = SAMPLER_STOP_SIGNAL;
			break;
		}
		if (end && now >= end) {
			sess->stop_reason = SAMPLER_STOP_DURATION;
			break;
		}
		if (now - last_refresh >= TSTATE_REFRESH_NS) {
			last_refresh = now;
			if (!update_targets(&br, 0)) {
				sess->stop_reason = SAMPLER_STOP_TARGET_EXIT;
				break;
			}
		}
		/* The program wakes us only when the buffer fills: drain on every pass. */
		err = ring_buffer__poll(br.rb, POLL_MS);
		if (err >= 0)
			err = ring_buffer__consume(br.rb);
		if (err < 0 && err != -EINTR)
			break;
	}
	/* Drain what the program wrote before the stop. */
	ring_buffer__consume(br.rb);
	m->duration_ns = fw_now_ns() - start;
	m->ticks_requested = 0;
	m->lost = lost_samples(&br);
	prog_stats(&br, m);
	m->profiler_cpu_ns = fw_cpu_ns() - cpu0;
	err = 0;
out:
	bpf_run_destroy(&br);
	if (stats_fd >= 0)
		close(stats_fd);
	return err;
}

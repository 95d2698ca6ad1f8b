/*
 * Unit tests of the capture loop (src/sampler/capture.c) driven by a
 * scripted backend (session_init_ops): the loop's policy without a Python
 * process. The target is a child that waits (or spins); the backend's tick
 * records known samples, dropped ones, and then answers as a target that
 * vanished or refused would. Checked: how each capture ends (duration, a
 * stop request, the hook, every target gone, access lost, the backend not
 * starting), that the profile holds exactly what the ticks recorded (wall
 * mode: one per sample; cpu mode by ticks: the CPU time the thread used),
 * that tick is called only in the modes the backend ticks in, and the
 * backend's lifecycle (target_init/release, start, drain, stop).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sampler/backend.h"
#include "sampler/pacing.h"

/* What the backend is told to do, and what it saw. */
struct script {
	int samples_per_tick;   /* Python samples recorded by each tick */
	int drop_every;         /* every Nth tick also records a dropped sample (0: never) */
	int stop_at;            /* at this tick, ask the capture to stop (0: never) */
	int kill_at;            /* at this tick the target is killed: -ESRCH from then */
	int eperm_at;           /* from this tick, -EPERM (the target refuses) */
	int hook_stop_at;       /* the hook ends the capture at its Nth pass (0: never) */
	int start_err;          /* start answers this (0: it starts) */
	int async_tasks;        /* the capture asks for asyncio task stacks (--async) */
	int ticks, drops, inits, releases, starts, drains, stops, hook_passes;
	volatile sig_atomic_t stop;
};

static struct script sc;

static char outer_name[] = "outer", inner_name[] = "inner", file_name[] = "app.py";
static struct py_code codes[2];
static struct py_frame_info frames[2];  /* innermost first, as the reader gives them */

static int fake_target_init(struct sampler *s)
{
	s->state = &sc;
	sc.inits++;
	return 0;
}

static void fake_target_release(struct sampler *s)
{
	assert_ptr_equal(s->state, &sc);
	sc.releases++;
}

/* Wait until pid is a zombie (dead, not reaped: the loop must see it gone). */
static void kill_and_wait(pid_t pid)
{
	siginfo_t si;

	assert_int_equal(kill(pid, SIGKILL), 0);
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
}

static int fake_tick(struct sampler *s, uint64_t now)
{
	struct script *x = s->state;
	pid_t tid = s->target.pid;

	x->ticks++;
	if (x->kill_at && x->ticks == x->kill_at)
		kill_and_wait(s->target.pid);
	if (x->kill_at && x->ticks >= x->kill_at)
		return -ESRCH;
	if (x->eperm_at && x->ticks >= x->eperm_at)
		return -EPERM;
	for (int i = 0; i < x->samples_per_tick; i++)
		sampler_record_python(s, tid, frames, 2, 0, "", now);
	if (x->drop_every && x->ticks % x->drop_every == 0) {
		sampler_record_dropped(s, tid, now);
		x->drops++;
	}
	if (x->stop_at && x->ticks == x->stop_at)
		x->stop = 1;
	return 0;
}

static int fake_start(struct session *sess, struct strbuf *why)
{
	(void)sess;
	sc.starts++;
	if (sc.start_err)
		strbuf_addstr(why, "the scripted backend refuses to start");
	return sc.start_err;
}

static int fake_drain(struct session *sess, uint64_t now)
{
	(void)sess;
	(void)now;
	sc.drains++;
	return 0;
}

static void fake_stop(struct session *sess)
{
	(void)sess;
	sc.stops++;
}

static const struct backend_ops fake_ops = {
	.tick_modes = EVERY_MODE,
	.start = fake_start,
	.stop = fake_stop,
	.target_init = fake_target_init,
	.target_release = fake_target_release,
	.tick = fake_tick,
	.drain = fake_drain,
};

/* A backend that samples by events only in cpu mode (as bpf does): no ticks there. */
static const struct backend_ops wall_only_ops = {
	.tick_modes = 1u << MODE_WALL,
	.target_init = fake_target_init,
	.target_release = fake_target_release,
	.tick = fake_tick,
	.drain = fake_drain,
	.stop = fake_stop,
};

static int hook_pass(void *ctx, uint64_t now, uint64_t *next)
{
	struct script *x = ctx;

	*next = now + 1000000;
	return x->hook_stop_at && ++x->hook_passes >= x->hook_stop_at;
}

/* The longest any capture here may last. */
#define SAFETY_S 3.0

/* One capture: a waiting child as the target, the backend ops, sc as scripted. */
struct run {
	pid_t child;
	struct profile prof;
	struct session sess;
	enum sampler_stop target_stop;
	int ret;
	char why[256];
};

/* Until pid sleeps (state S in /proc/PID/stat), at most 10 s. */
static void wait_sleeping(pid_t pid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 10000; i++) {
		FILE *f = fopen(path, "r");
		char *end = NULL;

		if (f && fgets(buf, sizeof(buf), f))
			end = strrchr(buf, ')');
		if (f)
			fclose(f);
		if (end && end[1] == ' ' && end[2] == 'S')
			return;
		usleep(1000);
	}
	fail_msg("child %d did not wait", (int)pid);
}

static void capture_child(struct run *r, const struct backend_ops *ops, enum sample_mode mode,
			  double duration_s, int with_hook, int spin)
{
	struct capture_hook hook = { &sc, -1, hook_pass };
	struct strbuf why = STRBUF_INIT;
	struct sampler_opts so;
	struct py_target t;

	int ready[2];
	char c;

	memset(r, 0, sizeof(*r));
	assert_int_equal(pipe(ready), 0);
	r->child = fork();
	assert_true(r->child >= 0);
	if (r->child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);   /* gone with the test, whatever fails */
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		if (spin)
			for (volatile unsigned long n = 0;; n++)
				;
		for (;;)
			pause();
	}
	/*
	 * A waiting child is captured once it waits: its start (slow under
	 * qemu) is CPU time a cpu-mode capture would rightly count.
	 */
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	close(ready[1]);
	if (!spin)
		wait_sleeping(r->child);
	memset(&so, 0, sizeof(so));
	so.mode = mode;
	so.rate_hz = 200;
	/* a capture the policy should end otherwise still ends (and fails its checks) */
	so.duration_s = duration_s > 0 ? duration_s : SAFETY_S;
	so.stop = &sc.stop;
	so.async_tasks = sc.async_tasks;
	memset(&t, 0, sizeof(t));
	t.pid = r->child;
	profile_init(&r->prof);
	session_init_ops(&r->sess, &r->prof, &so, ops);
	assert_int_equal(session_add(&r->sess, &t), 0);
	r->ret = session_run(&r->sess, with_hook ? &hook : NULL, &why);
	snprintf(r->why, sizeof(r->why), "%s", strbuf_str(&why));
	r->target_stop = r->sess.targets[0]->stop_reason;
	strbuf_release(&why);
}

/* A capture of a child that waits. */
static void capture(struct run *r, const struct backend_ops *ops, enum sample_mode mode,
		    double duration_s, int with_hook)
{
	capture_child(r, ops, mode, duration_s, with_hook, 0);
}

static void finish(struct run *r)
{
	session_release(&r->sess);
	assert_int_equal(sc.releases, sc.inits);
	profile_release(&r->prof);
	kill(r->child, SIGKILL);
	waitpid(r->child, NULL, 0);
}

static uint64_t counted(const struct profile *p)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->ncounts; i++)
		n += p->counts[i].count;
	return n;
}

static int setup(void **state)
{
	(void)state;
	memset(&sc, 0, sizeof(sc));
	memset(codes, 0, sizeof(codes));
	codes[0].name = outer_name;
	codes[0].file = file_name;
	codes[0].firstlineno = 10;
	codes[1].name = inner_name;
	codes[1].file = file_name;
	codes[1].firstlineno = 20;
	memset(frames, 0, sizeof(frames));
	frames[0].code = &codes[1];
	frames[0].line = 21;
	frames[1].code = &codes[0];
	frames[1].line = 11;
	return 0;
}

/*
 * Pacing (sampler/pacing.h): every gap within [mean/2, 3 mean/2), their mean
 * the interval (within 0.5% over 200,000 draws), and the ticks spread over
 * every phase of a cycle as long as the interval: 10 bins of 10% each
 * within 1 point (fixed gaps put all of them in one bin).
 */
static void test_pacing_keeps_the_rate_not_the_phase(void **state)
{
	const uint64_t mean = 10000000;       /* 100 Hz */
	const size_t n = 200000;
	size_t bins[10] = { 0 };
	struct pacing p;
	uint64_t t = 0;

	(void)state;
	pacing_init(&p, 42);
	for (size_t i = 0; i < n; i++) {
		uint64_t gap = pacing_gap(&p, mean);

		assert_true(gap >= mean / 2 && gap < mean + mean / 2);
		t += gap;
		bins[(t % mean) * 10 / mean]++;
	}
	assert_true(t > (uint64_t)(0.995 * (double)mean * (double)n) &&
		    t < (uint64_t)(1.005 * (double)mean * (double)n));
	for (size_t b = 0; b < 10; b++)
		assert_true(bins[b] > n / 10 - n / 100 && bins[b] < n / 10 + n / 100);
	pacing_init(&p, 0);                   /* a zero seed still draws */
	assert_true(pacing_gap(&p, mean) != pacing_gap(&p, mean));
}

/*
 * A per-CPU kernel clock restarted as the capture loop restarts it
 * (sampler/pacing.h), over 10 minutes: each restart at the first of the
 * loop's passes from a moment drawn with pacing_rephase_mean, the clock
 * counting down its drawn period from the restart. passes: 0, a pass at
 * each moment drawn (a loop that does not batch); 1, a pass every second
 * (the agent's quiet loop: batch_s 1 s); 2, passes 1/3 to 1 s apart (the
 * program's wake-ups between). told: the batch pacing_rephase_period is
 * told of. Samples.
 */
static double rephased_samples(uint64_t interval, uint64_t mean, uint64_t told, int passes)
{
	const uint64_t second = 1000000000ull, end = 600 * second;
	struct pacing p;
	uint64_t t = 0, next_rephase = 0, restart = 0, period = interval;
	double samples = 0;

	pacing_init(&p, 3);
	while (t < end) {
		if (t >= next_rephase) {
			samples += (double)((t - restart) / period);
			restart = t;
			period = pacing_rephase_period(&p, interval, mean, told);
			next_rephase = t + pacing_gap(&p, mean);
		}
		t = !passes ? next_rephase : passes == 1 ? t + second : t + pacing_gap(&p, second * 2 / 3);
	}
	return samples + (double)((end - restart) / period);
}

/*
 * At 19 and 49 Hz, every way the loop passes holds the rate's samples
 * within 1%; restarts waiting for passes a second apart with the correction
 * of a loop that does not batch (the 200 ms mean, no batch told) gave over
 * 3% more at 49 Hz, and a mean of the batch, none told, ~1% more at 19 Hz.
 */
static void test_rephased_clock_keeps_the_rate(void **state)
{
	const uint64_t batch = 1000000000ull, rates[] = { 19, 49 };

	(void)state;
	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		uint64_t interval = 1000000000ull / rates[r];
		uint64_t mean = pacing_rephase_mean(interval, 0);
		uint64_t batched = pacing_rephase_mean(interval, batch);
		double want = 600.0 * (double)rates[r];

		assert_true(mean >= 200000000ull && batched == batch);
		for (int passes = 0; passes < 3; passes++) {
			double got = passes ? rephased_samples(interval, batched, batch, passes)
					    : rephased_samples(interval, mean, 0, 0);

			assert_true(got > 0.99 * want && got < 1.01 * want);
		}
		if (rates[r] == 49)
			assert_true(rephased_samples(interval, mean, 0, 1) > 1.03 * want);
		else
			assert_true(rephased_samples(interval, batched, 0, 1) > 1.007 * want);
	}
}

/*
 * The loop's moments (tick_clock): a read that waits on the target stands
 * for every moment that passed since its tick was due. Over 20,000 ticks,
 * some begun late, each read at a delay of up to three intervals with
 * nothing after it, the reads' weights add up to every moment drawn, each
 * at least one; a
 * read at once stands for its tick's moment alone; one after 0.5 s for
 * about 500 moments, one after 3 s (framewalk stalled) for its own alone; a clock never started (dump) counts
 * one and never loops; a gap of an hour (framewalk stopped) is counted at
 * once.
 */
static void test_tick_clock_reads_stand_for_the_moments_waited(void **state)
{
	const uint64_t mean = 1000000;
	struct tick_clock c, idle;
	struct pacing delays;
	uint64_t now = 0, weights = 0, late = 0, before;

	(void)state;
	memset(&idle, 0, sizeof(idle));
	assert_int_equal(tick_clock_weight(&idle, 3600000000000ull), 1);
	assert_int_equal(tick_clock_pass(&idle, 3600000000000ull), 0);
	tick_clock_init(&c, now, mean);
	pacing_init(&delays, 7);
	for (int i = 0; i < 20000; i++) {
		uint64_t w;

		now = c.next + (i % 4 ? 0 : 2 * pacing_gap(&delays, mean));  /* some late */
		assert_true(tick_clock_due(&c, now));
		before = c.passed;
		tick_clock_begin(&c, now);
		late += c.passed - before - 1;
		now += pacing_gap(&delays, 2 * mean);                         /* the read waited */
		w = tick_clock_weight(&c, now);
		assert_true(w >= 1);
		weights += w;
		tick_clock_pass(&c, now);
	}
	assert_int_equal(weights, c.passed);
	assert_true(late > 1000);
	assert_true(weights > 20000 * 2);                 /* most reads stood for more than one */
	now = c.next;
	tick_clock_begin(&c, now);
	assert_int_equal(tick_clock_weight(&c, now), 1);
	now = c.next;
	tick_clock_begin(&c, now);
	assert_int_equal(tick_clock_weight(&c, now + 3000000000ull), 1);   /* framewalk stalled */
	now = c.next;
	tick_clock_begin(&c, now);
	before = tick_clock_weight(&c, now + 500000000ull);
	assert_true(before >= 450 && before <= 550);
	before = c.passed;
	tick_clock_pass(&c, now + 3600000000000ull);
	assert_true(c.passed - before >= 3599000 && c.passed - before <= 3600000);   /* 3599.5 s */
}

/* Until the duration: every tick's samples and drops, and nothing else, in the profile (wall mode: one each). */
static void test_duration_and_counts(void **state)
{
	struct run r;
	uint32_t ids[8];
	size_t depth;

	(void)state;
	sc.samples_per_tick = 2;
	sc.drop_every = 3;
	capture(&r, &fake_ops, MODE_WALL, 0.1, 0);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.sess.stop_reason, SAMPLER_STOP_DURATION);
	assert_int_equal(r.target_stop, SAMPLER_STOP_DURATION);
	/*
	 * paced by the rate: gaps of at least half the interval (sampler/pacing.h),
	 * so at most 1 + 0.1 s / 2.5 ms, plus the first at once
	 */
	assert_true(sc.ticks >= 1 && sc.ticks <= 41);
	assert_int_equal(r.prof.meta.ticks_taken, (uint64_t)sc.ticks);
	assert_true(r.prof.meta.ticks_requested >= r.prof.meta.ticks_taken);
	assert_true(r.prof.meta.duration_ns >= 100000000ull);
	assert_int_equal(r.prof.meta.samples, (uint64_t)(2 * sc.ticks));
	assert_int_equal(counted(&r.prof), (uint64_t)(2 * sc.ticks));
	assert_int_equal(r.prof.meta.errors, (uint64_t)sc.drops);
	assert_int_equal(sc.drops, sc.ticks / 3);
	/* one thread, the target's, with its drops; one stack, outermost first */
	assert_int_equal(r.prof.nthreads, 1);
	assert_int_equal(r.prof.threads[0].tid, r.child);
	assert_int_equal(r.prof.threads[0].dropped, (uint64_t)sc.drops);
	assert_int_equal(r.prof.ncounts, 1);
	depth = profile_node_frames(&r.prof, r.prof.counts[0].node, ids, 8);
	assert_int_equal(depth, 2);
	assert_string_equal(profile_str(&r.prof, r.prof.frames[ids[0]].name), "outer");
	assert_string_equal(profile_str(&r.prof, r.prof.frames[ids[1]].name), "inner");
	/* the backend's lifecycle: one target, started, drained every pass, stopped */
	assert_int_equal(sc.inits, 1);
	assert_int_equal(sc.starts, 1);
	assert_true(sc.drains >= sc.ticks);
	assert_int_equal(sc.stops, 1);
	finish(&r);
}

/* A stop request (a signal's flag) ends the capture before the next tick. */
static void test_stop_request(void **state)
{
	struct run r;

	(void)state;
	sc.samples_per_tick = 1;
	sc.stop_at = 3;
	capture(&r, &fake_ops, MODE_WALL, 0, 0);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.sess.stop_reason, SAMPLER_STOP_SIGNAL);
	assert_int_equal(r.target_stop, SAMPLER_STOP_SIGNAL);
	assert_int_equal(sc.ticks, 3);
	assert_int_equal(r.prof.meta.ticks_taken, 3);
	assert_int_equal(r.prof.meta.samples, 3);
	finish(&r);
}

/* The caller's hook ends it. */
static void test_hook_ends(void **state)
{
	struct run r;

	(void)state;
	sc.samples_per_tick = 1;
	sc.hook_stop_at = 4;
	capture(&r, &fake_ops, MODE_WALL, 0, 1);
	assert_int_equal(r.sess.stop_reason, SAMPLER_STOP_HOOK);
	assert_int_equal(sc.hook_passes, 4);
	assert_int_equal(r.prof.meta.samples, (uint64_t)sc.ticks);
	finish(&r);
}

/*
 * The target vanishes: its tick answers -ESRCH and it has exited, so it
 * ends as TARGET_EXIT, the samples before stay, and with no target left the
 * capture ends the same way, long before its duration.
 */
static void test_target_vanishes(void **state)
{
	struct run r;

	(void)state;
	sc.samples_per_tick = 2;
	sc.kill_at = 4;
	capture(&r, &fake_ops, MODE_WALL, 0, 0);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.sess.stop_reason, SAMPLER_STOP_TARGET_EXIT);
	assert_int_equal(r.target_stop, SAMPLER_STOP_TARGET_EXIT);
	assert_int_equal(sc.ticks, 4);          /* an exited target is not ticked again */
	assert_int_equal(r.prof.meta.samples, 6);
	assert_int_equal(counted(&r.prof), 6);
	assert_int_equal(r.prof.meta.errors, 0);
	finish(&r);
}

/* Access lost while it runs (-EPERM from a live target): an error, not an exit. */
static void test_access_lost(void **state)
{
	struct run r;

	(void)state;
	sc.samples_per_tick = 1;
	sc.eperm_at = 3;
	capture(&r, &fake_ops, MODE_WALL, 0, 0);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.sess.stop_reason, SAMPLER_STOP_ERROR);
	assert_int_equal(r.target_stop, SAMPLER_STOP_ERROR);
	assert_int_equal(sc.ticks, 3);
	assert_int_equal(r.prof.meta.samples, 2);
	finish(&r);
}

/*
 * cpu mode by ticks: a stack counts the CPU time its thread used since its
 * previous sample, in periods: nothing for a thread that only waits; for
 * one that spins, at least one and no more than the time the capture took.
 */
static void test_cpu_mode_counts_cpu_time(void **state)
{
	struct run r;

	(void)state;
	sc.samples_per_tick = 1;
	capture(&r, &fake_ops, MODE_CPU, 0.1, 0);
	assert_int_equal(r.sess.stop_reason, SAMPLER_STOP_DURATION);
	assert_true(r.prof.meta.cpu_weighted);
	assert_true(sc.ticks >= 1);
	assert_int_equal(r.prof.meta.samples, 0);
	assert_int_equal(counted(&r.prof), 0);
	finish(&r);

	setup(state);
	sc.samples_per_tick = 1;
	capture_child(&r, &fake_ops, MODE_CPU, 0.3, 0, 1);
	assert_true(r.prof.meta.samples >= 1);
	/*
	 * CPU time from the first look to the last sample is at most the
	 * capture's wall time, in periods (200 Hz: 5 ms). Not the tick count:
	 * paced ticks have random gaps, so a capture may take a few ticks
	 * fewer than its duration holds periods (seen in CI: the child's
	 * CPU time outran ticks_taken + 1).
	 */
	assert_true(r.prof.meta.samples <= r.prof.meta.duration_ns / 5000000 + 1);
	assert_int_equal(counted(&r.prof), r.prof.meta.samples);
	finish(&r);
}

/* A backend that does not tick in this mode is only drained. */
static void test_no_ticks_outside_tick_modes(void **state)
{
	struct run r;

	(void)state;
	sc.samples_per_tick = 1;
	capture(&r, &wall_only_ops, MODE_CPU, 0.05, 0);
	assert_int_equal(r.sess.stop_reason, SAMPLER_STOP_DURATION);
	assert_int_equal(sc.ticks, 0);
	assert_int_equal(r.prof.meta.ticks_taken, 0);
	assert_int_equal(r.prof.meta.ticks_requested, 0);
	assert_int_equal(r.prof.meta.samples, 0);
	assert_true(sc.drains > 0);
	assert_int_equal(sc.stops, 1);
	finish(&r);
}

/* The backend cannot start and none was chosen by auto: the error, no capture, no stop. */
static void test_start_fails(void **state)
{
	struct run r;

	(void)state;
	sc.start_err = -EPERM;
	capture(&r, &fake_ops, MODE_CPU, 0.05, 0);
	assert_int_equal(r.ret, -EPERM);
	assert_string_equal(r.why, "the scripted backend refuses to start");
	assert_int_equal(r.sess.stop_reason, SAMPLER_STOP_ERROR);
	assert_int_equal(r.target_stop, SAMPLER_STOP_ERROR);
	assert_int_equal(sc.starts, 1);
	assert_int_equal(sc.ticks, 0);
	assert_int_equal(sc.stops, 0);
	finish(&r);
}

/*
 * What a target is sampled without is told by the session, once, on stderr
 * and in the profile's events: --async on a target whose objects cannot be
 * read (the child is no Python process) is sampled without task stacks.
 * The view that found it printed it itself before, and the report said
 * nothing.
 */
static void test_shortfall_is_told(void **state)
{
	struct run r;
	char want[96];

	(void)state;
	sc.samples_per_tick = 1;
	sc.async_tasks = 1;
	capture(&r, &fake_ops, MODE_WALL, 0.05, 0);
	assert_int_equal(r.ret, 0);
	assert_non_null(r.prof.meta.events);
	snprintf(want, sizeof(want), "process %d: sampled without task stacks (", (int)r.child);
	assert_non_null(strstr(r.prof.meta.events, want));
	assert_true(r.prof.meta.samples > 0);
	finish(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pacing_keeps_the_rate_not_the_phase),
		cmocka_unit_test(test_rephased_clock_keeps_the_rate),
		cmocka_unit_test(test_tick_clock_reads_stand_for_the_moments_waited),
		cmocka_unit_test_setup(test_duration_and_counts, setup),
		cmocka_unit_test_setup(test_stop_request, setup),
		cmocka_unit_test_setup(test_hook_ends, setup),
		cmocka_unit_test_setup(test_target_vanishes, setup),
		cmocka_unit_test_setup(test_access_lost, setup),
		cmocka_unit_test_setup(test_cpu_mode_counts_cpu_time, setup),
		cmocka_unit_test_setup(test_no_ticks_outside_tick_modes, setup),
		cmocka_unit_test_setup(test_start_fails, setup),
		cmocka_unit_test_setup(test_shortfall_is_told, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

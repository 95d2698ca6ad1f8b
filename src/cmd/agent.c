/*
 * framewalk agent: continuous profiling of a host's Python processes. It
 * runs one long capture (sampler.h) over every process its selectors
 * choose, adding the ones that start and removing the ones that exit
 * (agent/targets.h) between two passes of the capture loop (the hook),
 * and at every period
 * boundary takes the period's profile out of the running session
 * (session_take_profile: no gap, no sample lost, memory bounded by one
 * period), splits it by process and hands it to the destinations
 * (agent/sink.h), which deliver on their own thread. SIGTERM and SIGINT
 * end the current period early and deliver it; SIGHUP reads the
 * configuration again; SIGUSR1 prints the status line now. docs/AGENT.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "agent/calls.h"
#include "agent/http.h"
#include "agent/period.h"
#include "agent/procinfo.h"
#include "agent/select.h"
#include "agent/sink.h"
#include "agent/targets.h"
#include "cmd/agent_opts.h"
#include "cmd/cmd.h"
#include "output/output.h"
#include "sampler/labels.h"
#include "sampler/sampler.h"
#include "util/file.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/util.h"

#define NS 1000000000ull
#define DEFAULT_SPOOL_DISK (256ull << 20)
#define DEFAULT_SPOOL_MEMORY (16ull << 20)
#define RELOAD_FLUSH_NS (2ull * NS)
#define MAX_SINKS 4
/* --count-calls: how long a counting outlives a silent agent, past its period */
#define CALLS_MARGIN_S 30.0
/*
 * In cpu mode the samples' records wait in the ring buffer up to a second and
 * are handled together (each period's cut takes them all), not a few at each
 * pass of the loop: issue 25's goal-7 agent, 0.42% -> 0.39% of a core, medians
 * within this VM's spread (docs/BENCHMARKS.md, "The agent takes its records
 * once a second").
 */
#define AGENT_BATCH_S 1.0

/* ---- the agent's state --------------------------------------------------- */

struct agent {
	struct agent_opts o;
	int argc;
	char **argv;
	char host[256];
	struct sampler_opts so;
	int so_chosen;
	struct session sess;
	struct profile prof;
	struct sinks *sinks;
	struct agent_targets targets;     /* the processes profiled (agent/targets.h) */
	uint64_t period_seq;
	uint64_t period_from_unix;        /* this period's start */
	uint64_t period_end_unix, period_end_mono;
	uint64_t next_scan, next_status;
	int restart_session;              /* the sampling options changed */
	int once_done;
	int once_started;                 /* --once: its period began with the sampling */
	int waiting_logged;
	/* counters */
	uint64_t periods, profiles, samples;
	struct label_counts labels;       /* --context-label: every process's, every period's */
	uint64_t status_cpu_ns, status_mono;
	uint64_t start_mono;
};

static volatile sig_atomic_t agent_reload_requested, agent_status_requested;

static void on_hup(int sig)
{
	(void)sig;
	agent_reload_requested = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	agent_status_requested = 1;
}

static void install_signals(void)
{
	struct sigaction sa;

	cmd_install_signals();          /* SIGINT, SIGTERM: stop; SIGPIPE ignored */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_hup;         /* no SA_RESTART: the loop's sleep ends at once */
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
}

static void PRINTF_LIKE(2, 3) say(const struct agent *a, const char *fmt, ...)
{
	va_list ap;

	if (a->o.quiet)
		return;
	va_start(ap, fmt);
	agent_vline(fmt, ap);
	va_end(ap);
}

static uint64_t unix_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static uint64_t secs_ns(double s)
{
	return (uint64_t)(s * 1e9);
}

/* The end of the period that starts at from: the next multiple of the period (--once: from + period). */
static void set_period_end(struct agent *a, uint64_t from_unix)
{
	uint64_t p = secs_ns(a->o.period), now_u = unix_now_ns(), now_m = fw_now_ns();
	uint64_t end = a->o.once ? from_unix + p : (from_unix / p + 1) * p;

	a->period_from_unix = from_unix;
	a->period_end_unix = end;
	a->period_end_mono = now_m + (end > now_u ? end - now_u : 0);
}

/* ---- sinks ------------------------------------------------------------------ */

static size_t sink_configs(const struct agent *a, struct sink_config *c, char spool_dirs[][4096])
{
	const struct agent_opts *o = &a->o;
	size_t n = 0;

	memset(c, 0, MAX_SINKS * sizeof(*c));
	if (o->dir) {
		c[n].kind = SINK_DIR;
		c[n].url = o->dir;
		c[n].dir_max_bytes = o->dir_max_bytes;
		c[n].dir_max_age_s = o->dir_max_age;
		n++;
	}
	if (o->pyroscope) {
		c[n].kind = strcmp(o->pyroscope_api, "push") ? SINK_PYROSCOPE_INGEST : SINK_PYROSCOPE_PUSH;
		c[n].url = o->pyroscope;
		c[n].user = o->pyroscope_user;
		c[n].password = o->pyroscope_password;
		c[n].bearer = o->pyroscope_token;
		c[n].tenant = o->pyroscope_tenant;
		n++;
	}
	if (o->otlp) {
		c[n].kind = SINK_OTLP;
		c[n].url = o->otlp;
		c[n].headers = o->otlp_headers;
		c[n].nheaders = o->notlp_headers;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		c[i].user_agent = "framewalk-agent/" FRAMEWALK_VERSION;
		c[i].timeout_ms = (long)(o->timeout * 1000);
		c[i].spool_max_items = (size_t)o->spool_max_items;
		if (o->spool && c[i].kind != SINK_DIR) {
			xsnprintf(spool_dirs[i], 4096, "%s/%s", o->spool, sink_kind_name(c[i].kind));
			c[i].spool_dir = spool_dirs[i];
		}
		c[i].spool_max_bytes = o->spool_max_bytes ? o->spool_max_bytes :
				       c[i].spool_dir ? DEFAULT_SPOOL_DISK : DEFAULT_SPOOL_MEMORY;
	}
	return n;
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Do two option sets give the same destinations? */
static int same_sinks(const struct agent_opts *x, const struct agent_opts *y)
{
	if (!same_str(x->dir, y->dir) || !same_str(x->pyroscope, y->pyroscope) ||
	    !same_str(x->pyroscope_api, y->pyroscope_api) || !same_str(x->otlp, y->otlp) ||
	    !same_str(x->pyroscope_user, y->pyroscope_user) ||
	    !same_str(x->pyroscope_password, y->pyroscope_password) ||
	    !same_str(x->pyroscope_token, y->pyroscope_token) ||
	    !same_str(x->pyroscope_tenant, y->pyroscope_tenant) || !same_str(x->spool, y->spool) ||
	    x->dir_max_bytes != y->dir_max_bytes || x->dir_max_age != y->dir_max_age ||
	    x->spool_max_bytes != y->spool_max_bytes || x->spool_max_items != y->spool_max_items ||
	    x->timeout != y->timeout || x->notlp_headers != y->notlp_headers)
		return 0;
	for (size_t i = 0; i < x->notlp_headers; i++)
		if (strcmp(x->otlp_headers[i], y->otlp_headers[i]))
			return 0;
	return 1;
}

static int start_sinks(struct agent *a)
{
	struct sink_config c[MAX_SINKS];
	char spool_dirs[MAX_SINKS][4096];
	struct strbuf err = STRBUF_INIT;
	size_t n = sink_configs(a, c, spool_dirs);
	int ret;

	a->sinks = NULL;
	ret = sinks_start(&a->sinks, c, n, a->o.quiet, &err);
	if (ret) {
		fw_error("%s", strbuf_str(&err));
		strbuf_release(&err);
		return FW_EXIT_OUTPUT;
	}
	strbuf_release(&err);
	return FW_EXIT_OK;
}

static void status_line(struct agent *a, int total);

/* Stop the sinks, delivering until deadline; say what is left (final: and the last status line). */
static void stop_sinks(struct agent *a, uint64_t deadline, int final)
{
	size_t left;

	if (!a->sinks) {
		if (final && !a->o.quiet)
			status_line(a, 1);
		return;
	}
	left = sinks_stop(a->sinks, deadline);
	if (left)
		fw_warning("%zu requests not delivered %s", left,
			   a->o.spool ? "(they stay in the spool and go first at the next start)" :
			   "(lost: give --spool DIR to keep them across restarts)");
	if (final && !a->o.quiet)
		status_line(a, 1);
	sinks_free(a->sinks);
	a->sinks = NULL;
}

/* ---- status --------------------------------------------------------------- */

static uint64_t rss_bytes(void)
{
	char buf[128];
	unsigned long long size, resident;

	if (read_file_into("/proc/self/statm", buf, sizeof(buf)) ||
	    sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return 0;
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static size_t profiled(const struct agent *a)
{
	return agent_targets_profiled(&a->targets);
}

/* The status line: counters, and the agent's CPU share since the last line (total: since its start). */
static void status_line(struct agent *a, int total)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t cpu = fw_cpu_ns(), now = fw_now_ns();
	uint64_t cpu0 = total ? 0 : a->status_cpu_ns, t0 = total ? a->start_mono : a->status_mono;
	double share = now > t0 ? 100.0 * (double)(cpu - cpu0) / (double)(now - t0) : 0;

	strbuf_addf(&sb, "framewalk agent: %zu processes, %" PRIu64 " periods, %" PRIu64
		    " profiles, %" PRIu64 " samples", profiled(a), a->periods, a->profiles, a->samples);
	for (size_t i = 0; a->sinks && i < sinks_count(a->sinks); i++) {
		struct sink_stats st;

		sinks_stats(a->sinks, i, &st);
		strbuf_addf(&sb, "; %s: %" PRIu64 " sent, %zu queued, %" PRIu64 " dropped, %" PRIu64
			    " refused, %" PRIu64 " failed attempts", sinks_name(a->sinks, i), st.sent,
			    st.queued, st.dropped, st.rejected, st.failures);
		if (st.failing)
			strbuf_addf(&sb, " (last: %s)", st.last_error);
	}
	strbuf_addf(&sb, "; cpu %.2f%%%s, rss %.1f MB", share, total ? " since the start" : "",
		    (double)rss_bytes() / 1e6);
	{
		/* sink names and their errors (a server's text) made terminal-safe */
		struct strbuf line = STRBUF_INIT;

		escape_append(&line, strbuf_str(&sb), ESCAPE_TERMINAL);
		strbuf_addch(&line, '\n');
		fputs(strbuf_str(&line), stderr);
		strbuf_release(&line);
	}
	strbuf_release(&sb);
	a->status_cpu_ns = cpu;
	a->status_mono = now;
}

/*
 * The labels target tr read in the period ending now (--context-label): its
 * sampler's counts since the last period, and what a sampler it had before
 * (a restarted session) or just lost (it exited) counted since; NULL when
 * no labels are asked.
 */
static const struct label_counts *period_labels_of(struct agent *a, struct agent_target *tr)
{
	static struct label_counts d;
	struct label_counts *was = &tr->labels_sent;

	if (!a->so.labels.n)
		return NULL;
	agent_target_bank_labels(tr, &a->sess);
	d = tr->labels_pending;
	memset(&tr->labels_pending, 0, sizeof(tr->labels_pending));
	/* banked: the sampler's counts so far are reported; later ones from here */
	if (tr->in_session)
		session_label_counts(&a->sess, tr->info.pid, was);
	label_counts_add(&a->labels, &d);
	return &d;
}

/* The counters in the Prometheus text format, written whole. */
static void write_metrics(struct agent *a)
{
	struct outfile of;
	FILE *f;

	if (!a->o.metrics_file || outfile_open(&of, a->o.metrics_file))
		return;
	f = of.f;
	fprintf(f, "# HELP framewalk_agent_processes Python processes being profiled.\n"
		"# TYPE framewalk_agent_processes gauge\nframewalk_agent_processes %zu\n", profiled(a));
	fprintf(f, "# TYPE framewalk_agent_periods_total counter\nframewalk_agent_periods_total %"
		PRIu64 "\n", a->periods);
	fprintf(f, "# TYPE framewalk_agent_profiles_total counter\nframewalk_agent_profiles_total %"
		PRIu64 "\n", a->profiles);
	fprintf(f, "# TYPE framewalk_agent_samples_total counter\nframewalk_agent_samples_total %"
		PRIu64 "\n", a->samples);
	fprintf(f, "# TYPE framewalk_agent_cpu_seconds_total counter\n"
		"framewalk_agent_cpu_seconds_total %.3f\n", (double)fw_cpu_ns() / 1e9);
	fprintf(f, "# TYPE framewalk_agent_rss_bytes gauge\nframewalk_agent_rss_bytes %" PRIu64 "\n",
		rss_bytes());
	if (a->so.labels.n) {
		fprintf(f, "# HELP framewalk_agent_label_reads_total Samples whose --context-label "
			"values were read.\n# TYPE framewalk_agent_label_reads_total counter\n"
			"framewalk_agent_label_reads_total %" PRIu64 "\n", a->labels.reads);
		fprintf(f, "# HELP framewalk_agent_label_values_total Label values given as a "
			"placeholder: unreadable, or past the distinct-value cap (<other>).\n"
			"# TYPE framewalk_agent_label_values_total counter\n"
			"framewalk_agent_label_values_total{as=\"unreadable\"} %" PRIu64 "\n"
			"framewalk_agent_label_values_total{as=\"other\"} %" PRIu64 "\n",
			a->labels.unreadable, a->labels.folded);
		fprintf(f, "# TYPE framewalk_agent_label_changed_total counter\n"
			"framewalk_agent_label_changed_total %" PRIu64 "\n", a->labels.changed);
	}
	for (size_t i = 0; a->sinks && i < sinks_count(a->sinks); i++) {
		const char *n = sinks_name(a->sinks, i);
		struct sink_stats st;

		sinks_stats(a->sinks, i, &st);
		fprintf(f, "framewalk_agent_sent_total{sink=\"%s\"} %" PRIu64 "\n", n, st.sent);
		fprintf(f, "framewalk_agent_queued{sink=\"%s\"} %zu\n", n, st.queued);
		fprintf(f, "framewalk_agent_queued_bytes{sink=\"%s\"} %" PRIu64 "\n", n, st.queued_bytes);
		fprintf(f, "framewalk_agent_dropped_total{sink=\"%s\"} %" PRIu64 "\n", n, st.dropped);
		fprintf(f, "framewalk_agent_refused_total{sink=\"%s\"} %" PRIu64 "\n", n, st.rejected);
		fprintf(f, "framewalk_agent_failures_total{sink=\"%s\"} %" PRIu64 "\n", n, st.failures);
	}
	if (outfile_commit(&of))
		fw_warning("cannot write %s", a->o.metrics_file);
}

/* ---- processes ------------------------------------------------------------ */

/* Which processes are profiled (agent/targets.h); say once that none is chosen yet. */
static void scan(struct agent *a)
{
	a->targets.quiet = a->o.quiet;
	agent_targets_scan(&a->targets, &a->sess, &a->o.sel);
	if (!profiled(a) && !a->waiting_logged && select_scans(&a->o.sel)) {
		say(a, "no chosen Python process yet; looking every %g s", a->o.scan);
		a->waiting_logged = 1;
	} else if (profiled(a)) {
		a->waiting_logged = 0;
	}
}

/* ---- periods -------------------------------------------------------------- */

/* "service_name=x host=y ..." and a short report of one process's profile (--once). */
static void print_once(const struct period_batch *b, const struct period_proc *p)
{
	struct period_label l[PERIOD_MAX_LABELS];
	size_t n = period_labels(b, p, l, ARRAY_SIZE(l));
	struct output_opts oo;

	fputs("==", stdout);
	for (size_t i = 0; i < n; i++)
		printf(" %.*s=%s", (int)l[i].key_len, l[i].key, l[i].value);
	printf("\nperiod: %.3f s, %" PRIu64 " samples\n", (double)(b->until_ns - b->from_ns) / 1e9,
	       period_samples(&p->prof));
	output_opts_default(&oo);
	oo.limit = 10;
	output_text(&p->prof, stdout, &oo);
	fputc('\n', stdout);
}

/* End the period now (final: early, at a stop) and hand it to the destinations. */
static void cut_period(struct agent *a, int final)
{
	uint64_t until = final ? unix_now_ns() : a->period_end_unix;
	struct period_batch b;
	struct profile taken;
	struct strbuf specs = STRBUF_INIT;
	/*
	 * A period's takes, a process that left or the agent's last period's
	 * stops wait 5 s at most each: a stop signal past those allowed gives
	 * up the one waiting and leaves the rest unread. A period in the loop
	 * allows one (it ends the loop; the last period reads them again).
	 */
	int stops = (int)cmd_stop_requested + (final ? 0 : 1);

	if (until < a->period_from_unix)
		until = a->period_from_unix;
	session_take_profile(&a->sess, &taken);
	period_batch_init(&b, ++a->period_seq, a->period_from_unix, until, a->host,
			  sample_mode_name(a->so.mode), a->so.rate_hz,
			  session_backend_name(&a->sess), a->o.labels, a->o.nlabels);
	b.agent_version = FRAMEWALK_VERSION;
	b.redact_cmdline = a->o.redact_cmdline;
	/* OTLP alone encodes its own: no pprof made (6% of such an agent's CPU) */
	b.want_pprof = a->sinks && sinks_send_pprof(a->sinks);
	label_specs_describe(a->so.labels.l, a->so.labels.n, &specs);
	b.label_specs = specs.len ? strbuf_str(&specs) : NULL;
	for (size_t i = 0; i < a->targets.n; i++) {
		struct agent_target *tr = &a->targets.t[i];

		/* the period's exact counts; the last of a process that left or of the agent */
		if (tr->calls)
			tr->calls->cc.stop_base = stops;
		if (tr->calls && cmd_stop_requested > stops)
			agent_calls_abandon(tr->calls, tr->target.pid);
		if (tr->calls)
			agent_calls_take(tr->calls, &tr->target, final || a->o.once || tr->gone ||
					 !a->so.count_calls);
		if (period_batch_add(&b, &taken, &tr->info, tr->target.version,
				     tr->calls ? &tr->calls->taken : NULL, period_labels_of(a, tr)))
			fw_warning("cannot write the profile of process %d", (int)tr->info.pid);
		if (tr->calls && !a->so.count_calls) {
			/* turned off by a reload: its last counts went out; on again, anew */
			agent_calls_release(tr->calls, &tr->target);
			free(tr->calls);
			tr->calls = NULL;
		}
	}
	for (size_t i = 0; i < b.n; i++) {
		a->profiles++;
		a->samples += period_samples(&b.procs[i].prof);
		if (a->o.once)
			print_once(&b, &b.procs[i]);
	}
	if (a->sinks && b.n)
		sinks_submit(a->sinks, &b);
	a->periods++;
	period_batch_release(&b);
	strbuf_release(&specs);
	profile_release(&taken);
	/* the processes that left go with their last period */
	agent_targets_forget_gone(&a->targets);
	set_period_end(a, until);
	write_metrics(a);
}

/* ---- exact call counts (--count-calls, agent/calls.h) --------------------- */

/* Each profiled process counted once its interpreter runs. */
static void count_calls(struct agent *a, uint64_t now)
{
	double deadline = a->o.period + CALLS_MARGIN_S;

	for (size_t i = 0; i < a->targets.n; i++) {
		struct agent_target *tr = &a->targets.t[i];

		if (tr->gone)
			continue;
		if (!tr->calls) {
			tr->calls = xcalloc(1, sizeof(*tr->calls));
			agent_calls_init(tr->calls, tr->info.pid);
		}
		agent_calls_try_start(tr->calls, &tr->target, deadline, &cmd_stop_requested, now);
	}
}

/* ---- configuration reload (SIGHUP) ---------------------------------------- */

static int same_sampling(const struct agent_opts *x, const struct agent_opts *y)
{
	return cmd_sampling_same(&x->so, &y->so);
}

static void reload(struct agent *a)
{
	struct agent_opts n;
	int sinks_changed, ret;

	if (!a->o.config) {
		say(a, "SIGHUP: no configuration file (--config) to read again");
		return;
	}
	ret = agent_load_options(&n, a->argc, a->argv);
	if (ret) {
		fw_warning("the configuration was not reloaded (the error is above); the previous "
			   "one stays in force");
		return;
	}
	if (n.once != a->o.once) {
		fw_warning("--once cannot change on a reload; the previous configuration stays");
		agent_opts_release(&n);
		return;
	}
	sinks_changed = !same_sinks(&a->o, &n);
	a->restart_session = !same_sampling(&a->o, &n);
	if (sinks_changed)
		stop_sinks(a, fw_now_ns() + RELOAD_FLUSH_NS, 0);
	agent_opts_release(&a->o);
	a->o = n;
	if (sinks_changed && start_sinks(a))
		fw_warning("the new destinations cannot be used; profiles are not sent until the "
			   "configuration is fixed and reloaded");
	/* a new selector: the processes passed over may be chosen now */
	agent_targets_forget_examined(&a->targets);
	a->next_scan = 0;
	if (!a->o.once)
		set_period_end(a, a->period_from_unix);
	say(a, "configuration reloaded from %s%s%s", a->o.config,
	    sinks_changed ? " (new destinations)" : "",
	    a->restart_session ? " (new sampling options: the capture restarts)" : "");
}

/* ---- the capture loop's hook ----------------------------------------------- */

static int agent_pass(void *ctx, uint64_t now, uint64_t *next)
{
	struct agent *a = ctx;

	/*
	 * --once: the one period starts when the capture loop first runs, with
	 * the backend started (the scan, the attach and loading the program took
	 * a third of a 1 s period before, measured)
	 */
	if (a->o.once && !a->once_started && a->sess.n) {
		a->once_started = 1;
		set_period_end(a, unix_now_ns());
		now = fw_now_ns();
	}
	if (agent_reload_requested) {
		agent_reload_requested = 0;
		reload(a);
		if (a->restart_session)
			return 1;
	}
	if (agent_status_requested) {
		agent_status_requested = 0;
		status_line(a, 0);
	}
	if (now >= a->next_scan) {
		scan(a);
		now = fw_now_ns();
		a->next_scan = now + secs_ns(a->o.scan);
	}
	if (a->so.count_calls) {
		count_calls(a, now);
		now = fw_now_ns();
	}
	if (now >= a->period_end_mono && !a->o.once) {
		uint64_t now_u = unix_now_ns(), end = a->period_end_unix;

		if (!period_cut_now(secs_ns(a->o.period), a->period_from_unix, now_u, &end)) {
			say(a, "the period that began at %.3f is extended to %.3f: this pass came "
			    "%.1f s after its end (the loop was held up, or the clock stepped)",
			    a->period_from_unix / 1e9, end / 1e9,
			    (now_u - a->period_end_unix) / 1e9);
			a->period_end_unix = end;
			a->period_end_mono = now + (end > now_u ? end - now_u : 0);
		}
	}
	if (now >= a->period_end_mono) {
		cut_period(a, 0);
		if (a->o.once) {
			a->once_done = 1;
			return 1;
		}
	}
	if (a->o.status > 0 && now >= a->next_status) {
		if (a->next_status)
			status_line(a, 0);
		a->next_status = now + secs_ns(a->o.status);
	}
	*next = a->next_scan < a->period_end_mono ? a->next_scan : a->period_end_mono;
	if (a->o.status > 0 && a->next_status < *next)
		*next = a->next_status;
	/* only -p processes, all gone: nothing more to do */
	if (!select_scans(&a->o.sel) && !profiled(a))
		return 1;
	return 0;
}

/* ---- sampling ------------------------------------------------------------- */

/* The sampling options and backend (the announcement, once). Exit code. */
static int choose_sampling(struct agent *a, pid_t probe)
{
	struct sampler_opts so;
	int code;

	so = a->o.so;
	so.refresh_s = a->o.refresh;
	so.batch_s = AGENT_BATCH_S;
	so.stop = &cmd_stop_requested;
	code = cmd_choose_backend("agent", &so, probe);
	if (code)
		return code;
	a->so = so;
	a->so_chosen = 1;
	say(a, "sampling at %g Hz (%s mode) with the %s backend, %s; a profile per process "
	    "every %g s", so.rate_hz, sample_mode_name(so.mode), backend_name(so.backend),
	    so.native ? (so.kernel ? "Python + native + kernel frames" : "whole stacks")
		      : "Python frames", a->o.period);
	return FW_EXIT_OK;
}

/* A new session with the current options, over every process being profiled. */
static void restart_session(struct agent *a)
{
	for (size_t i = 0; i < a->targets.n; i++)
		agent_target_bank_labels(&a->targets.t[i], &a->sess);
	session_release(&a->sess);
	session_init(&a->sess, &a->prof, &a->so);
	agent_targets_resume(&a->targets, &a->sess);
}

/* Wait (no target to sample) until the next thing the hook wants to do, or a signal. */
static void idle_until(uint64_t when)
{
	struct timespec ts = { (time_t)(when / NS), (long)(when % NS) };

	if (when > fw_now_ns())
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static int run(struct agent *a)
{
	struct capture_hook hook = { a, -1, agent_pass };
	struct strbuf why = STRBUF_INIT;
	int code = FW_EXIT_OK, ret;

	while (!cmd_stop_requested && !a->once_done) {
		uint64_t next = 0;

		if (a->restart_session) {
			struct sampler_opts old = a->so;

			a->restart_session = 0;
			if (choose_sampling(a, a->targets.n ? a->targets.t[0].info.pid : 0))
				a->so = old;
			restart_session(a);
		}
		if (!a->sess.n) {
			/* nothing to sample: the hook's work, without the capture loop */
			if (agent_pass(a, fw_now_ns(), &next)) {
				if (!a->restart_session)
					break;
				continue;
			}
			idle_until(next);
			continue;
		}
		strbuf_reset(&why);
		ret = session_run(&a->sess, &hook, &why);
		/* the session's fallback (backend_fall_back) holds for later sessions too */
		a->so.backend = a->sess.opts.backend;
		a->so.native = a->sess.opts.native;
		if (ret) {
			code = cmd_backend_failed(session_backend_name(&a->sess), ret, &why);
			break;
		}
		if (a->sess.stop_reason == SAMPLER_STOP_HOOK && !a->restart_session &&
		    !a->once_done && !select_scans(&a->o.sel) && !profiled(a))
			break;
	}
	strbuf_release(&why);
	return code;
}

int cmd_agent(int argc, char **argv)
{
	struct agent a;
	int code;

	memset(&a, 0, sizeof(a));
	code = agent_load_options(&a.o, argc, argv);
	if (code)
		return code < 0 ? FW_EXIT_OK : code;
	a.argc = argc;
	a.argv = argv;
	{
		struct strbuf h = STRBUF_INIT;
		char name[256] = "";

		if (a.o.hostname)
			xsnprintf(name, sizeof(name), "%s", a.o.hostname);
		else if (gethostname(name, sizeof(name) - 1))
			xsnprintf(name, sizeof(name), "%s", "unknown");
		procinfo_clean(&h, name, strlen(name), sizeof(a.host) - 1);
		xsnprintf(a.host, sizeof(a.host), "%s", h.len ? strbuf_str(&h) : "unknown");
		strbuf_release(&h);
	}
	if (http_global_init()) {
		fw_error("cannot initialise HTTP (%s)", http_description());
		agent_opts_release(&a.o);
		return FW_EXIT_FAILURE;
	}
	install_signals();
	profile_init(&a.prof);
	a.start_mono = a.status_mono = fw_now_ns();
	a.status_cpu_ns = fw_cpu_ns();
	/* the backend is chosen on the first listed process, if any (ptrace is probed on one) */
	code = choose_sampling(&a, a.o.sel.npids ? a.o.sel.pids[0] : 0);
	if (!code)
		code = start_sinks(&a);
	if (code) {
		profile_release(&a.prof);
		agent_opts_release(&a.o);
		http_global_cleanup();
		return code;
	}
	session_init(&a.sess, &a.prof, &a.so);
	set_period_end(&a, unix_now_ns());
	a.next_status = a.o.status > 0 ? fw_now_ns() + secs_ns(a.o.status) : 0;
	scan(&a);
	a.next_scan = fw_now_ns() + secs_ns(a.o.scan);
	if (!profiled(&a) && !select_scans(&a.o.sel)) {
		struct py_target t;

		/* the exact reason, as record gives it, for the first -p process */
		code = cmd_attach(a.o.sel.pids[0], &t);
		if (!code) {
			fw_error("process %d cannot be sampled", (int)a.o.sel.pids[0]);
			code = FW_EXIT_FAILURE;
		}
	} else if (!profiled(&a) && a.o.once) {
		fw_error("no Python process matches the selectors");
		fw_hint("another user's processes need root or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH "
			"(docs/AGENT.md); `framewalk check` says what is allowed here");
		code = FW_EXIT_NOT_PYTHON;
	} else {
		code = run(&a);
		/* the current period, cut short (SIGTERM, or every process gone) */
		if (!a.once_done)
			cut_period(&a, 1);
	}
	stop_sinks(&a, fw_now_ns() + secs_ns(a.o.flush_timeout), 1);
	session_release(&a.sess);
	profile_release(&a.prof);
	agent_targets_release(&a.targets);
	agent_opts_release(&a.o);
	http_global_cleanup();
	return code;
}

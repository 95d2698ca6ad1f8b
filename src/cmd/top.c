/*
 * framewalk top: a live view of a running process, like top(1) for its
 * functions. It runs the one capture loop (sampler.h) with a hook that
 * refreshes the screen every interval and reads keys in between. Shares are
 * over the last interval; the seconds columns are cumulative. On a terminal the view is an ncurses screen; otherwise one
 * plain table is printed per refresh, so `top | tee log` works.
 */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "cmd/cmd.h"
#include "output/diff.h"
#include "output/format.h"
#include "output/terminal.h"
#include "python/callcount.h"
#include "sampler/sampler.h"
#include "target/proc.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

#define NS 1000000000ull
#define DEFAULT_PLAIN_ROWS 20

static const char top_usage[] = "usage: framewalk top [options] -p PID\n";

static const char top_about[] =
	"A live view of where a running Python process spends its time: its "
	"functions by self and total share, refreshed every second.\n";

static const char top_footer[] =
	"Keys: s sort by self, t by total, n by name; [ and ] (or left/right) "
	"step through the threads, a shows all threads again; space or p pauses "
	"the display (sampling goes on); q quits.\n"
	"\n"
	"%Self and %Total are shares of the samples of the last interval; Self(s) "
	"and Total(s) add up every interval since the start (thread-seconds). When "
	"standard output is not a terminal, one plain table is printed per refresh.\n";

enum sort_key { SORT_SELF, SORT_TOTAL, SORT_NAME };

struct top_opts {
	pid_t pid;
	double interval;
	const char *thread;
	int limit;
	struct sampler_opts so;   /* the sampling options (cmd/sampling.c) */
	const char *where;        /* --where NAME=VALUE */
};

struct top_row {
	uint32_t fn;
	uint64_t wself, wtotal;   /* last interval */
	uint64_t cself, ctotal;   /* since the start */
};

struct top {
	struct top_opts o;
	struct profile prof;
	struct fn_table t;
	struct top_row *rows;
	size_t nrows;
	uint64_t window_samples, window_ns;
	uint64_t *base;           /* counts at the last refresh */
	size_t nbase, base_alloc;
	uint64_t last_snapshot_ns, start_ns;
	uint64_t next_refresh, interval_ns;
	enum sort_key sort;
	int thread_sel;           /* -1: all, else index into the profile's threads */
	char thread_buf[32];
	const char *filter;       /* thread_matches filter in force */
	int paused, curses;
	uint64_t refreshes;
	/* --count-calls: read at each refresh (python/callcount.h) */
	int counting;             /* 1 while counts come */
	struct callcount cc;
	const struct py_target *target;
	struct profile callkeys;  /* functions (name, file) as frames with line 0 */
	uint64_t *calls_now, *calls_then;  /* per callkeys frame: at this and the last read */
	size_t calls_alloc;
	uint64_t calls_ns, calls_then_ns;  /* when they were read */
	char *calls_note;         /* why the counts stopped, or NULL */
};

/* Deadline of the counting in the target: this long after the last read. */
#define TOP_CALLS_DEADLINE_S 30.0

static int opt_interval(const struct opt *op, const char *arg, struct strbuf *err)
{
	if (parse_seconds(arg, op->value) || *(double *)op->value < 0.1) {
		strbuf_addf(err, "bad interval: '%s' (seconds, at least 0.1)", arg);
		return -1;
	}
	return 0;
}

static int opt_limit(const struct opt *op, const char *arg, struct strbuf *err)
{
	long v;

	if (parse_long(arg, &v) || v < 1 || v > 100000) {
		strbuf_addf(err, "bad --limit: '%s'", arg);
		return -1;
	}
	*(int *)op->value = (int)v;
	return 0;
}

static int opt_where(const struct opt *op, const char *arg, struct strbuf *err)
{
	struct output_opts out;
	struct opt o = *op;

	/* the one check of NAME=VALUE (cmd/outputs.c) */
	output_opts_default(&out);
	o.value = &out;
	if (cmd_opt_where(&o, arg, err))
		return -1;
	((struct top_opts *)op->value)->where = arg;
	return 0;
}

/* Parse the command line into o: 0, or the exit code (-1: --help, exit 0). */
static int parse_top_args(int argc, char **argv, struct top_opts *o)
{
	struct cmd_sampling_opts sampling;
	int ret, nargs;

	memset(o, 0, sizeof(*o));
	o->interval = 1;
	cmd_sampling_defaults(&cmd_sampling_top, &o->so);
	cmd_sampling_opts_init(&sampling, &cmd_sampling_top, &o->so);
	{
		const struct opt opts[] = {
			OPT_CALL('p', "pid", &o->pid, "PID", "the process to watch", opts_pid),
			OPT_INCLUDE(sampling.table),
			OPT_CALL('i', "interval", &o->interval, "SECS", "refresh every SECS seconds "
				 "(default 1)", opt_interval),
			OPT_STR(0, "thread", &o->thread, "T", "start with only the thread named T or "
				"with tid T"),
			OPT_CALL('n', "limit", &o->limit, "N", "rows shown (default: what fits; 20 when "
				 "not a terminal)", opt_limit),
			OPT_CALL(0, "where", o, "NAME=VALUE", "show only the samples whose label NAME "
				 "(--label) has the value VALUE", opt_where),
			OPT_TERMINATOR,
		};
		const struct opt_command cmd = {
			"top", top_usage, top_about, top_footer, opts, OPTS_STOP_AT_ARG,
		};

		ret = opts_parse(&cmd, argc, argv, &nargs);
	}
	cmd_sampling_opts_release(&sampling);
	if (ret)
		return ret;
	if (nargs)
		return cmd_usage_error("top", "unexpected argument: '%s' (top watches a running "
				       "process: -p PID)", argv[1]);
	if (!o->pid)
		return cmd_usage_error("top", "nothing to watch: give -p PID");
	return 0;
}

/* ---- the table ----------------------------------------------------------- */

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct top *sort_top = arg;
	const struct top_row *x = a, *y = b;
	uint64_t kx, ky;

	if (sort_top->sort == SORT_NAME) {
		const struct profile *k = &sort_top->t.keys;
		int r = strcmp(profile_str(k, k->frames[x->fn].name), profile_str(k, k->frames[y->fn].name));
		if (r)
			return r;
		return x->fn < y->fn ? -1 : (x->fn > y->fn);
	}
	kx = sort_top->sort == SORT_SELF ? x->wself : x->wtotal;
	ky = sort_top->sort == SORT_SELF ? y->wself : y->wtotal;
	if (kx != ky)
		return kx < ky ? 1 : -1;
	kx = sort_top->sort == SORT_SELF ? x->cself : x->ctotal;
	ky = sort_top->sort == SORT_SELF ? y->cself : y->ctotal;
	if (kx != ky)
		return kx < ky ? 1 : -1;
	return x->fn < y->fn ? -1 : (x->fn > y->fn);
}

static void sort_rows(struct top *tp)
{
	sort_array_r(tp->rows, tp->nrows, sizeof(*tp->rows), cmp_rows, tp);
}

/* Tally the last interval (counts above base) and everything, per function. */
static void compute(struct top *tp)
{
	struct fn_table *t = &tp->t;

	fn_table_release(t);
	fn_table_init(t);
	t->where = tp->o.where;
	fn_table_add(t, 0, &tp->prof, tp->filter, tp->base, tp->nbase);
	fn_table_add(t, 1, &tp->prof, tp->filter, NULL, 0);
	free(tp->rows);
	tp->rows = xcalloc(t->keys.nframes ? t->keys.nframes : 1, sizeof(*tp->rows));
	tp->nrows = 0;
	for (uint32_t i = 1; i < t->keys.nframes; i++) {
		struct top_row *r;

		if (!t->total[1][i])
			continue;
		r = &tp->rows[tp->nrows++];
		r->fn = i;
		r->wself = t->self[0][i];
		r->wtotal = t->total[0][i];
		r->cself = t->self[1][i];
		r->ctotal = t->total[1][i];
	}
	tp->window_samples = t->samples[0];
	tp->window_ns = fw_now_ns() - tp->last_snapshot_ns;
	sort_rows(tp);
}

static void snapshot(struct top *tp)
{
	tp->base = xgrow(tp->base, sizeof(*tp->base), tp->prof.ncounts + 1, &tp->base_alloc);
	for (size_t i = 0; i < tp->prof.ncounts; i++)
		tp->base[i] = tp->prof.counts[i].count;
	tp->nbase = tp->prof.ncounts;
	tp->last_snapshot_ns = fw_now_ns();
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *sort_name(enum sort_key k)
{
	return k == SORT_SELF ? "self" : k == SORT_TOTAL ? "total" : "name";
}

/* The callkeys frame of a function of the table (0: not a Python function). */
static uint32_t call_key(struct top *tp, uint32_t fn)
{
	const struct pf_frame *f = &tp->t.keys.frames[fn];

	if (f->kind != FRAME_PYTHON)
		return 0;
	return profile_frame(&tp->callkeys, FRAME_PYTHON,
			     profile_cstring(&tp->callkeys, profile_str(&tp->t.keys, f->name)),
			     profile_cstring(&tp->callkeys, profile_str(&tp->t.keys, f->file)), 0);
}

/* calls_now and calls_then cover key k. */
static void calls_fit(struct top *tp, size_t k)
{
	size_t old = tp->calls_alloc, want = k + 64;

	if (k < tp->calls_alloc)
		return;
	tp->calls_now = xrealloc(tp->calls_now, want * sizeof(*tp->calls_now));
	tp->calls_then = xrealloc(tp->calls_then, want * sizeof(*tp->calls_then));
	memset(tp->calls_now + old, 0, (want - old) * sizeof(*tp->calls_now));
	memset(tp->calls_then + old, 0, (want - old) * sizeof(*tp->calls_then));
	tp->calls_alloc = want;
}

/*
 * Read the counts so far (a peek: the target's main thread runs a short
 * request) into calls_now, keeping the previous read for the rate. A
 * failure ends the counting for this run, said in the status line.
 */
static void read_calls(struct top *tp)
{
	struct strbuf why = STRBUF_INIT;
	int ret;

	if (!tp->counting)
		return;
	ret = callcount_peek(&tp->cc, tp->target, &why);
	if (ret) {
		tp->counting = 0;
		tp->calls_note = strbuf_detach(&why);
		return;
	}
	calls_fit(tp, 1);
	memcpy(tp->calls_then, tp->calls_now, tp->calls_alloc * sizeof(*tp->calls_now));
	memset(tp->calls_now, 0, tp->calls_alloc * sizeof(*tp->calls_now));
	tp->calls_then_ns = tp->calls_ns ? tp->calls_ns : tp->start_ns;
	tp->calls_ns = fw_now_ns();
	for (size_t i = 0; i < tp->cc.n; i++) {
		const struct callcount_fn *fn = &tp->cc.fns[i];
		uint32_t k = profile_frame(&tp->callkeys, FRAME_PYTHON,
					   profile_cstring(&tp->callkeys, fn->name),
					   profile_cstring(&tp->callkeys, fn->file), 0);

		calls_fit(tp, k);
		tp->calls_now[k] += fn->starts + fn->resumes;
	}
	strbuf_release(&why);
}

static void format_row(struct top *tp, const struct top_row *r, struct strbuf *sb)
{
	double rate = tp->o.so.rate_hz > 0 ? tp->o.so.rate_hz : 1;

	strbuf_reset(sb);
	strbuf_addf(sb, "%7.2f %7.2f %9.2f %9.2f  ", pct(r->wself, tp->window_samples),
		    pct(r->wtotal, tp->window_samples), (double)r->cself / rate,
		    (double)r->ctotal / rate);
	if (tp->calls_now) {
		uint32_t k = call_key(tp, r->fn);
		double secs = (double)(tp->calls_ns - tp->calls_then_ns) / 1e9;

		if (k && k < tp->calls_alloc && tp->calls_now[k])
			strbuf_addf(sb, "%10" PRIu64 " %10.0f  ", tp->calls_now[k],
				    secs > 0 ? (double)(tp->calls_now[k] - tp->calls_then[k]) / secs :
				    0.0);
		else
			strbuf_addf(sb, "%10s %10s  ", "-", "-");
	}
	format_function(sb, &tp->t.keys, r->fn, ESCAPE_TERMINAL);
}

static void format_thread_sel(struct top *tp, struct strbuf *sb)
{
	if (tp->thread_sel >= 0)
		format_thread(sb, &tp->prof, (uint32_t)tp->thread_sel, ESCAPE_TERMINAL);
	else if (tp->filter)
		escape_append(sb, tp->filter, ESCAPE_TERMINAL);
	else
		strbuf_addstr(sb, "all");
}

static void format_title(struct top *tp, struct strbuf *sb)
{
	strbuf_addf(sb, "framewalk top: PID %d (", (int)tp->o.pid);
	escape_append(sb, tp->prof.meta.target ? tp->prof.meta.target : "", ESCAPE_TERMINAL);
	strbuf_addf(sb, "), Python %s", tp->prof.meta.python_version ? tp->prof.meta.python_version : "?");
	if (tp->o.so.mode != MODE_CPU)
		strbuf_addf(sb, ", %s mode", sample_mode_name(tp->o.so.mode));
	if (tp->o.so.async_tasks)
		strbuf_addstr(sb, ", asyncio tasks");
}

static void format_status(struct top *tp, struct strbuf *sb)
{
	const struct profile_meta *m = &tp->prof.meta;
	double elapsed = (double)(fw_now_ns() - tp->start_ns) / 1e9;

	strbuf_addf(sb, "%.1f s, %" PRIu64 " samples (%" PRIu64 " in the last %.1f s), %" PRIu64
		    " errors, %zu thread%s; sort: %s; thread: ", elapsed, m->samples,
		    tp->window_samples, (double)tp->window_ns / 1e9, m->errors, tp->prof.nthreads,
		    tp->prof.nthreads == 1 ? "" : "s",
		    sort_name(tp->sort));
	format_thread_sel(tp, sb);
	if (tp->o.where) {
		strbuf_addstr(sb, "; where ");
		escape_append(sb, tp->o.where, ESCAPE_TERMINAL);
	}
	if (tp->counting)
		strbuf_addf(sb, "; calls counted (last read held the target %.1f ms)",
			    (double)tp->cc.peek_us / 1e3);
	else if (tp->calls_note) {
		strbuf_addstr(sb, "; calls no longer counted: ");
		escape_append(sb, tp->calls_note, ESCAPE_TERMINAL);
	}
}

static const char table_header[] = "  %Self  %Total   Self(s)  Total(s)  Function";
static const char table_header_calls[] =
	"  %Self  %Total   Self(s)  Total(s)       Calls    Calls/s  Function";

/* ---- plain output (not a terminal) ------------------------------------------ */

static void draw_plain(struct top *tp)
{
	struct strbuf sb = STRBUF_INIT;
	int limit = tp->o.limit ? tp->o.limit : DEFAULT_PLAIN_ROWS;

	format_title(tp, &sb);
	printf("%s\n", strbuf_str(&sb));
	strbuf_reset(&sb);
	format_status(tp, &sb);
	printf("%s\n%s\n", strbuf_str(&sb), tp->calls_now ? table_header_calls : table_header);
	for (size_t i = 0; i < tp->nrows && (int)i < limit; i++) {
		format_row(tp, &tp->rows[i], &sb);
		printf("%s\n", strbuf_str(&sb));
	}
	if (!tp->nrows)
		printf("  (no samples yet)\n");
	printf("\n");
	fflush(stdout);
	strbuf_release(&sb);
}

/* ---- curses ----------------------------------------------------------------- */

/* Put at most cols columns of s (valid UTF-8, no controls) at (y, 0). */
static void put_line(int y, const char *s, int cols, int reverse)
{
	size_t n = strlen(s), max = cols > 0 ? (size_t)cols : 0;

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	move(y, 0);
	if (reverse)
		attron(A_REVERSE);
	addnstr(s, (int)n);
	if (reverse) {
		for (int x = getcurx(stdscr); x < cols; x++)
			addch(' ');
		attroff(A_REVERSE);
	} else {
		clrtoeol();
	}
}

static void draw_curses(struct top *tp)
{
	struct strbuf sb = STRBUF_INIT;
	int rows = LINES, cols = COLS, y = 0, avail;

	erase();
	format_title(tp, &sb);
	put_line(y++, strbuf_str(&sb), cols, 1);
	strbuf_reset(&sb);
	format_status(tp, &sb);
	if (tp->paused)
		strbuf_addstr(&sb, "  [PAUSED]");
	put_line(y++, strbuf_str(&sb), cols, 0);
	y++;
	attron(A_BOLD);
	put_line(y++, tp->calls_now ? table_header_calls : table_header, cols, 0);
	attroff(A_BOLD);
	avail = rows - y - 1;
	if (tp->o.limit && tp->o.limit < avail)
		avail = tp->o.limit;
	for (size_t i = 0; i < tp->nrows && (int)i < avail; i++) {
		format_row(tp, &tp->rows[i], &sb);
		put_line(y++, strbuf_str(&sb), cols, 0);
	}
	if (!tp->nrows)
		put_line(y++, "  (no samples yet)", cols, 0);
	put_line(rows - 1, "q quit  s/t/n sort by self/total/name  [ ] thread  a all threads  "
		 "space pause", cols, 1);
	refresh();
	strbuf_release(&sb);
}

static void draw(struct top *tp)
{
	if (tp->curses)
		draw_curses(tp);
	else
		draw_plain(tp);
}

/* Thread indices sorted by tid, for stepping with [ and ]. */
static int cmp_tid(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	pid_t x = p->threads[*(const uint32_t *)a].tid, y = p->threads[*(const uint32_t *)b].tid;

	return x < y ? -1 : (x > y);
}

static void step_thread(struct top *tp, int dir)
{
	size_t n = tp->prof.nthreads;
	uint32_t *order;
	int pos = -1;

	if (!n)
		return;
	order = xcalloc(n, sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	sort_array_r(order, n, sizeof(*order), cmp_tid, &tp->prof);
	for (size_t i = 0; i < n; i++)
		if ((int)order[i] == tp->thread_sel)
			pos = (int)i;
	/* positions: -1 (all), 0..n-1 */
	pos += dir;
	if (pos >= (int)n)
		pos = -1;
	else if (pos < -1)
		pos = (int)n - 1;
	tp->thread_sel = pos < 0 ? -1 : (int)order[pos];
	free(order);
	if (tp->thread_sel >= 0) {
		xsnprintf(tp->thread_buf, sizeof(tp->thread_buf), "%d",
			  (int)tp->prof.threads[tp->thread_sel].tid);
		tp->filter = tp->thread_buf;
	} else {
		tp->filter = NULL;
	}
}

/* Handle pending keys; returns 1 to quit. */
static int handle_keys(struct top *tp)
{
	int ch, redraw = 0, recompute = 0;

	while ((ch = getch()) != ERR) {
		switch (ch) {
		case 'q':
		case 'Q':
			return 1;
		case 's':
			tp->sort = SORT_SELF;
			redraw = 1;
			break;
		case 't':
			tp->sort = SORT_TOTAL;
			redraw = 1;
			break;
		case 'n':
			tp->sort = SORT_NAME;
			redraw = 1;
			break;
		case ']':
		case KEY_RIGHT:
			step_thread(tp, 1);
			recompute = 1;
			break;
		case '[':
		case KEY_LEFT:
			step_thread(tp, -1);
			recompute = 1;
			break;
		case 'a':
			tp->thread_sel = -1;
			tp->filter = NULL;
			recompute = 1;
			break;
		case ' ':
		case 'p':
			tp->paused = !tp->paused;
			redraw = 1;
			break;
		case KEY_RESIZE:
		case 12: /* Ctrl-L */
			redraw = 1;
			break;
		default:
			break;
		}
	}
	if (recompute)
		compute(tp);
	else if (redraw)
		sort_rows(tp);
	if (recompute || redraw)
		draw(tp);
	return 0;
}

/* Curses on the terminal (output/terminal.h: built-in terminfo where the
 * system has none); when it cannot start, says why and top prints plain
 * tables instead. */
static int curses_start(void)
{
	struct strbuf why = STRBUF_INIT;
	SCREEN *scr;

	setlocale(LC_ALL, "");
	scr = term_start(stdout, stdin, &why);
	if (!scr) {
		fprintf(stderr, "framewalk top: %s; printing plain tables instead\n",
			strbuf_str(&why));
		strbuf_release(&why);
		return -ENOTTY;
	}
	strbuf_release(&why);
	set_term(scr);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	return 0;
}

/* ---- the loop ------------------------------------------------------------- */

static void fill_meta(struct profile *prof, const struct py_target *t)
{
	char cmdline[1024] = "";

	proc_cmdline(t->pid, cmdline, sizeof(cmdline));
	prof->meta.pid = t->pid;
	prof->meta.target = xstrdup(cmdline[0] ? cmdline : t->exe);
	prof->meta.python_version = xstrdup(t->version);
	prof->meta.rate_hz = 0;
}

/*
 * The capture loop's hook: keys between passes (curses), and the table
 * redrawn every interval.
 */
static int top_pass(void *ctx, uint64_t now, uint64_t *next)
{
	struct top *tp = ctx;

	if (tp->curses && handle_keys(tp))
		return 1;
	if (now >= tp->next_refresh) {
		read_calls(tp);
		if (!tp->paused) {
			compute(tp);
			draw(tp);
		}
		snapshot(tp);
		tp->refreshes++;
		tp->next_refresh += tp->interval_ns;
		if (tp->next_refresh < now)
			tp->next_refresh = now + tp->interval_ns;
	}
	*next = tp->next_refresh;
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct top tp;
	struct py_target target;
	struct sampler_opts so;
	struct session sess;
	struct capture_hook hook;
	struct strbuf why = STRBUF_INIT;
	const struct cmd_stop_outcome *outcome;
	int ret, start_err, code = FW_EXIT_OK;

	memset(&tp, 0, sizeof(tp));
	ret = parse_top_args(argc, argv, &tp.o);
	if (ret)
		return ret < 0 ? FW_EXIT_OK : ret;
	tp.thread_sel = -1;
	tp.filter = tp.o.thread;
	so = tp.o.so;
	so.announce = 1;
	cmd_install_signals();
	so.stop = &cmd_stop_requested;
	code = cmd_attach(tp.o.pid, &target);
	if (!code)
		code = cmd_check_views("watch", &target, &so);
	if (!code && so.count_calls)
		code = cmd_calls_check("top", 1, &target);
	if (!code)
		code = cmd_choose_backend("top", &so, tp.o.pid);
	if (code)
		return code;
	profile_init(&tp.prof);
	profile_init(&tp.callkeys);
	fill_meta(&tp.prof, &target);
	fn_table_init(&tp.t);
	callcount_init(&tp.cc, 0);
	so.fixed_targets = 1;
	session_init(&sess, &tp.prof, &so);
	if ((ret = session_add(&sess, &target))) {
		fw_error("cannot sample process %d: %s", (int)tp.o.pid, strerror(-ret));
		code = FW_EXIT_FAILURE;
		goto out;
	}
	if (so.count_calls) {
		/* the deadline moves on at each read: a killed top leaves nothing for long */
		struct sampler_opts calls_so = so;

		calls_so.duration_s = TOP_CALLS_DEADLINE_S + tp.o.interval - 10.0;
		tp.target = &target;
		tp.counting = !cmd_calls_begin(&tp.cc, &target, &calls_so, &tp.prof);
		if (!tp.counting && tp.prof.meta.calls_note)
			tp.calls_note = xstrdup(tp.prof.meta.calls_note);
	}
	tp.curses = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) && !curses_start();
	tp.interval_ns = (uint64_t)(tp.o.interval * 1e9);
	tp.start_ns = tp.last_snapshot_ns = fw_now_ns();
	tp.next_refresh = tp.start_ns + tp.interval_ns;
	hook.ctx = &tp;
	hook.fd = tp.curses ? STDIN_FILENO : -1;
	hook.pass = top_pass;
	if (tp.curses) {
		compute(&tp);
		draw(&tp);
	}
	start_err = session_run(&sess, &hook, &why);
	if (tp.curses)
		endwin();
	/* after the screen: a warning of the stop's reads on a plain terminal; a
	 * counting whose reads failed is still asked to stop (its deadline otherwise) */
	if (so.count_calls)
		cmd_calls_end(&tp.cc, &target, &tp.prof, 0);
	outcome = cmd_stop_outcome(sess.stop_reason);
	if (!tp.curses && outcome->complete) {
		/* a last table with what came since the previous one */
		compute(&tp);
		if (tp.window_samples)
			draw(&tp);
	}
	if (start_err) {
		code = cmd_backend_failed(session_backend_name(&sess), start_err, &why);
	} else if (outcome->error) {
		fw_error("%s", outcome->error);
		code = outcome->code;
	} else if (outcome->by_target) {
		fw_note("process %d: %s", (int)tp.o.pid, outcome->text);
	}
out:
	session_release(&sess);
	strbuf_release(&why);
	fn_table_release(&tp.t);
	profile_release(&tp.prof);
	profile_release(&tp.callkeys);
	callcount_release(&tp.cc);
	free(tp.calls_now);
	free(tp.calls_then);
	free(tp.calls_note);
	free(tp.rows);
	free(tp.base);
	return code;
}

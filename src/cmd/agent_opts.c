/*
 * Implementation of agent_opts.h: the option table, the callbacks that
 * parse each value with its one message, the configuration file, defaults
 * and the checks across options. The sampling options are cmd/sampling.c's,
 * included as the agent's use of them says.
 */
#include <errno.h>
#include <strings.h>

#include "agent/http.h"
#include "cmd/agent_opts.h"
#include "cmd/cmd.h"
#include "util/file.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

#define DEFAULT_PERIOD 15.0
#define DEFAULT_SCAN 5.0
#define DEFAULT_TIMEOUT 10.0
/* Threads, mappings, exit and exec of each process: ten times less often
 * than record's 0.1 s (the agent samples at 19-49 Hz), once a second as its
 * records are taken (AGENT_BATCH_S: the loop then wakes about once a second,
 * issue 25's goal-7 agent 0.39% -> 0.32% of a core, docs/BENCHMARKS.md).
 * The cost: without the bpf backend's reports an exec or exit is seen up to
 * 1 s late, and a thread first sampled before Python knew it reads as native
 * until the next look. */
#define DEFAULT_REFRESH 1.0
#define DEFAULT_FLUSH 10.0
#define DEFAULT_STATUS 60.0
#define DEFAULT_DIR_MAX (1ull << 30)
#define DEFAULT_SPOOL_ITEMS 10000

void agent_opts_release(struct agent_opts *o)
{
	select_release(&o->sel);
	strv_free(o->otlp_headers, o->notlp_headers);
	strv_free(o->labels, o->nlabels);
	opts_file_free(o->file_argc, o->file_argv);
	memset(o, 0, sizeof(*o));
}

static int opt_pid(const struct opt *op, const char *arg, struct strbuf *err)
{
	struct agent_opts *o = op->value;
	int pid;

	if (parse_pid(arg, &pid)) {
		strbuf_addf(err, "bad process id: '%s'", arg);
		return -1;
	}
	select_add_pid(&o->sel, pid);
	return 0;
}

static int opt_exe(const struct opt *op, const char *arg, struct strbuf *err)
{
	(void)err;
	select_add_exe(&((struct agent_opts *)op->value)->sel, arg);
	return 0;
}

static int opt_match(const struct opt *op, const char *arg, struct strbuf *err)
{
	return select_add_cmdline(&((struct agent_opts *)op->value)->sel, arg, err) ? -1 : 0;
}

static int opt_container(const struct opt *op, const char *arg, struct strbuf *err)
{
	for (const char *c = arg; *c; c++) {
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))) {
			strbuf_addf(err, "bad container id: '%s' (hex digits, its first 12 or all 64)", arg);
			return -1;
		}
	}
	if (!*arg) {
		strbuf_addstr(err, "empty container id");
		return -1;
	}
	select_add_container(&((struct agent_opts *)op->value)->sel, arg);
	return 0;
}

static int opt_cgroup(const struct opt *op, const char *arg, struct strbuf *err)
{
	(void)err;
	select_add_cgroup(&((struct agent_opts *)op->value)->sel, arg);
	return 0;
}

static int opt_seconds(const struct opt *op, const char *arg, struct strbuf *err)
{
	if (parse_seconds(arg, op->value)) {
		strbuf_addf(err, "bad --%s: '%s' (seconds, e.g. 15 or 2.5)", op->long_name, arg);
		return -1;
	}
	return 0;
}

static int opt_size(const struct opt *op, const char *arg, struct strbuf *err)
{
	if (parse_size(arg, op->value)) {
		strbuf_addf(err, "bad --%s: '%s' (bytes, e.g. 64M or 1G)", op->long_name, arg);
		return -1;
	}
	return 0;
}

static int opt_count(const struct opt *op, const char *arg, struct strbuf *err)
{
	long v;

	if (parse_long(arg, &v) || v < 1 || v > 10000000) {
		strbuf_addf(err, "bad --%s: '%s' (a number from 1)", op->long_name, arg);
		return -1;
	}
	*(long *)op->value = v;
	return 0;
}

static int opt_header(const struct opt *op, const char *arg, struct strbuf *err)
{
	struct agent_opts *o = op->value;
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg || strchr(arg, '\n') || strchr(arg, '\r')) {
		strbuf_addf(err, "bad header: '%s' (give \"Name: value\")", arg);
		return -1;
	}
	strv_add(&o->otlp_headers, &o->notlp_headers, arg);
	return 0;
}

static int opt_label(const struct opt *op, const char *arg, struct strbuf *err)
{
	struct agent_opts *o = op->value;
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg) {
		strbuf_addf(err, "bad label: '%s' (give key=value)", arg);
		return -1;
	}
	for (const char *c = arg; c < eq; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '_' || *c == '.')) {
			strbuf_addf(err, "bad label key in '%s' (letters, digits, '_' and '.')", arg);
			return -1;
		}
	}
	strv_add(&o->labels, &o->nlabels, arg);
	return 0;
}

static int opt_config(const struct opt *op, const char *arg, struct strbuf *err)
{
	struct agent_opts *o = op->value;

	if (o->in_file) {
		strbuf_addstr(err, "a configuration file cannot name another one (config)");
		return -1;
	}
	o->config = arg;
	return 0;
}

static const char agent_usage[] =
	"usage: framewalk agent [-p PID... | --all-python | --match REGEX ...] [-r RATE]\n"
	"                       [--period SECS] [--pyroscope URL] [--otlp URL] [--dir DIR]\n"
	"                       [--spool DIR] [--once] [--config FILE]\n";

static const char agent_about[] =
	"Profile the host's Python processes all the time, at a low rate, and send\n"
	"every period one profile per process (pprof, with labels) to Pyroscope, an\n"
	"OpenTelemetry collector or a directory. New processes are picked up and\n"
	"exited ones dropped; a destination that is down gets what was queued when it\n"
	"comes back. SIGTERM sends the current period and exits, SIGHUP reads the\n"
	"configuration again, SIGUSR1 prints the status line.\n";

static const char agent_footer[] =
	"Selectors: -p adds processes by id; the others make the agent look at every\n"
	"process of the host and take the Python ones that pass each kind of filter\n"
	"given (any pattern of a kind). The configuration file holds the same options,\n"
	"one \"name = value\" per line; the command line wins. The static build has\n"
	"no HTTP: it writes --dir only. See docs/AGENT.md.\n";

/* The agent's options, the sampling ones (made for its use, into o->so) where they stand. */
static void build_table(struct agent_opts *o, const struct opt *sampling, struct opt *t,
			size_t max)
{
	const struct opt table[] = {
		OPT_CALL('p', "pid", o, "PID", "profile this process (may be given several times)",
			 opt_pid),
		OPT_BOOL(0, "all-python", &o->all_python, "every Python process of the host"),
		OPT_CALL(0, "exe", o, "GLOB", "only executables matching GLOB (e.g. "
			 "'*/python3.12'; may repeat)", opt_exe),
		OPT_CALL(0, "match", o, "REGEX", "only command lines matching the extended regular "
			 "expression (may repeat)", opt_match),
		OPT_CALL(0, "container", o, "ID", "only processes of the container whose id starts "
			 "with ID (may repeat)", opt_container),
		OPT_CALL(0, "cgroup", o, "GLOB", "only processes whose cgroup path matches GLOB "
			 "(may repeat)", opt_cgroup),
		OPT_INCLUDE(sampling),
		OPT_BOOL(0, "redact-cmdline", &o->redact_cmdline, "name each process by its "
			 "executable's name only, not its command line (which may hold secrets)"),
		OPT_CALL(0, "period", &o->period, "SECS", "one profile per process every SECS seconds, "
			 "aligned to the clock (default 15; at least 1 with --pyroscope, 0.1 otherwise)",
			 opt_seconds),
		OPT_CALL(0, "scan", &o->scan, "SECS", "look for new and exited processes every SECS "
			 "seconds (default 5)", opt_seconds),
		OPT_CALL(0, "refresh", &o->refresh, "SECS", "look at each profiled process's threads, "
			 "mappings, exit and exec every SECS seconds (default 1; record's 0.1)",
			 opt_seconds),
		OPT_STR(0, "pyroscope", &o->pyroscope, "URL", "send to the Pyroscope server at URL "
			"(e.g. http://pyroscope:4040)"),
		OPT_STR(0, "pyroscope-api", &o->pyroscope_api, "API", "ingest (default: /ingest, a "
			"request per process) or push (/push.v1.PusherService/Push, one per period)"),
		OPT_STR(0, "pyroscope-user", &o->pyroscope_user, "USER", "basic authentication user"),
		OPT_STR(0, "pyroscope-password", &o->pyroscope_password, "PASS",
			"basic authentication password (better in the configuration file)"),
		OPT_STR(0, "pyroscope-token", &o->pyroscope_token, "TOKEN", "bearer token"),
		OPT_STR(0, "pyroscope-tenant", &o->pyroscope_tenant, "ID", "X-Scope-OrgID header "
			"(multi-tenant Pyroscope)"),
		OPT_STR(0, "otlp", &o->otlp, "URL", "send OTLP profiles to the collector at URL (e.g. "
			"http://collector:4318; /v1development/profiles is appended)"),
		OPT_CALL(0, "otlp-header", o, "'NAME: VALUE'", "an HTTP header of every OTLP request "
			 "(e.g. authorization; may repeat)", opt_header),
		OPT_STR(0, "dir", &o->dir, "DIR", "write DIR/<time>-<service>-<pid>.pb.gz files"),
		OPT_CALL(0, "dir-max-bytes", &o->dir_max_bytes, "SIZE", "remove the oldest files past "
			 "SIZE in all (default 1G; 0: no limit)", opt_size),
		OPT_CALL(0, "dir-max-age", &o->dir_max_age, "SECS", "remove files older than SECS "
			 "(default: no limit)", opt_seconds),
		OPT_STR(0, "spool", &o->spool, "DIR", "queue what a destination could not take yet in "
			"DIR (kept across restarts; default: in memory)"),
		OPT_CALL(0, "spool-max-bytes", &o->spool_max_bytes, "SIZE", "bound of each "
			 "destination's queue (default 256M in DIR, 16M in memory); the oldest go first",
			 opt_size),
		OPT_CALL(0, "spool-max-items", &o->spool_max_items, "N", "at most N requests queued "
			 "per destination (default 10000)", opt_count),
		OPT_CALL(0, "timeout", &o->timeout, "SECS", "give up an HTTP request after SECS "
			 "(default 10)", opt_seconds),
		OPT_CALL(0, "flush-timeout", &o->flush_timeout, "SECS", "on SIGTERM, deliver for at "
			 "most SECS (default 10)", opt_seconds),
		OPT_CALL(0, "label", o, "KEY=VALUE", "one more label on every profile (may repeat)",
			 opt_label),
		OPT_STR(0, "hostname", &o->hostname, "NAME", "the host label (default: the host's "
			"name)"),
		OPT_CALL('c', "config", o, "FILE", "read options from FILE (again on SIGHUP)",
			 opt_config),
		OPT_BOOL(0, "once", &o->once, "profile one period, print each profile's summary on "
			 "standard output, send it, and exit"),
		OPT_CALL(0, "status", &o->status, "SECS", "a status line on stderr every SECS (default "
			 "60; 0: never)", opt_seconds),
		OPT_STR(0, "metrics-file", &o->metrics_file, "FILE", "write the counters in the "
			"Prometheus text format to FILE every period"),
		OPT_BOOL('q', "quiet", &o->quiet, "only warnings and errors on stderr"),
		OPT_TERMINATOR,
	};

	/* AGENT_NOPTS holds the table (a new option may need it raised) */
	if (ARRAY_SIZE(table) > max)
		abort();
	memcpy(t, table, sizeof(table));
}

#define AGENT_NOPTS 64

static void opts_default(struct agent_opts *o)
{
	memset(o, 0, sizeof(*o));
	cmd_sampling_defaults(&cmd_sampling_agent, &o->so);
	o->period = DEFAULT_PERIOD;
	o->scan = DEFAULT_SCAN;
	o->refresh = DEFAULT_REFRESH;
	o->timeout = DEFAULT_TIMEOUT;
	o->flush_timeout = DEFAULT_FLUSH;
	o->status = DEFAULT_STATUS;
	o->dir_max_bytes = DEFAULT_DIR_MAX;
	o->spool_max_items = DEFAULT_SPOOL_ITEMS;
	o->pyroscope_api = "ingest";
}

/* Parse argv (a copy: the parser moves arguments) into o. */
static int parse_argv(struct agent_opts *o, int argc, char **argv)
{
	struct opt table[AGENT_NOPTS];
	struct opt_command cmd = { "agent", agent_usage, agent_about, agent_footer, table, 0 };
	struct cmd_sampling_opts sampling;
	char **copy = xcalloc((size_t)argc + 1, sizeof(*copy));
	int nargs, ret;

	cmd_sampling_opts_init(&sampling, &cmd_sampling_agent, &o->so);
	build_table(o, sampling.table, table, ARRAY_SIZE(table));
	memcpy(copy, argv, (size_t)argc * sizeof(*copy));
	ret = opts_parse(&cmd, argc, copy, &nargs);
	cmd_sampling_opts_release(&sampling);
	if (!ret && nargs)
		ret = cmd_usage_error("agent", "unexpected argument: '%s' (the agent takes options "
				      "only)", copy[1]);
	free(copy);
	return ret;
}

/* Does this "Name: value" header carry a secret (by its name)? */
static int header_is_credential(const char *h)
{
	static const char *const words[] = { "auth", "token", "key", "secret", "password" };
	size_t n = strcspn(h, ":");

	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		size_t w = strlen(words[i]);

		for (size_t j = 0; j + w <= n; j++)
			if (!strncasecmp(h + j, words[i], w))
				return 1;
	}
	return 0;
}

/* Rule: no credentials over plain HTTP beyond loopback without a warning. */
static void warn_plain_credentials(const struct agent_opts *o)
{
	const char *url[2] = { o->pyroscope, o->otlp };
	int creds[2] = { o->pyroscope_user || o->pyroscope_password || o->pyroscope_token, 0 };
	char host[256];

	for (size_t i = 0; i < o->notlp_headers; i++)
		creds[1] |= header_is_credential(o->otlp_headers[i]);
	for (size_t i = 0; i < ARRAY_SIZE(url); i++)
		if (url[i] && creds[i] && !http_url_loopback(url[i], host, sizeof(host)))
			fw_warning("%s credentials go over plain http:// to %s, readable on the way: "
				   "send through a TLS proxy on this host (docs/AGENT.md)",
				   i ? "the OTLP header's" : "the Pyroscope", host);
}

static int validate(struct agent_opts *o)
{
	const char *urls[2] = { o->pyroscope, o->otlp };

	if (o->all_python)
		o->sel.all = 1;
	if (!o->sel.npids && !select_scans(&o->sel))
		return cmd_usage_error("agent", "nothing to profile: give -p PID, --all-python or a "
				       "selector (--exe, --match, --container, --cgroup)");
	if (o->period < 0.1 || o->period > 86400)
		return cmd_usage_error("agent", "bad --period: %g (0.1 to 86400 seconds)", o->period);
	/* /ingest's from and until are whole seconds: shorter periods would overlap there */
	if (o->period < 1 && o->pyroscope)
		return cmd_usage_error("agent", "--period %g is too short for Pyroscope (at least 1 "
				       "second; below is for --dir and --otlp, e.g. tests)", o->period);
	if (o->refresh < 0.1 || o->refresh > 10)
		return cmd_usage_error("agent", "bad --refresh: %g (0.1 to 10 seconds)", o->refresh);
	if (o->scan < 0.1)
		return cmd_usage_error("agent", "bad --scan: %g (at least 0.1 seconds)", o->scan);
	if (o->timeout < 0.1 || o->timeout > 600)
		return cmd_usage_error("agent", "bad --timeout: %g (0.1 to 600 seconds)", o->timeout);
	if (strcmp(o->pyroscope_api, "ingest") && strcmp(o->pyroscope_api, "push"))
		return cmd_usage_error("agent", "unknown --pyroscope-api: '%s' (ingest or push)",
				       o->pyroscope_api);
	if (o->pyroscope_token && o->pyroscope_user)
		return cmd_usage_error("agent", "give either --pyroscope-token or --pyroscope-user, "
				       "not both");
	for (size_t i = 0; i < ARRAY_SIZE(urls); i++) {
		if (!urls[i])
			continue;
		struct strbuf why = STRBUF_INIT;
		int bad = http_url_check(urls[i], &why);

		if (bad) {
			bad = cmd_usage_error("agent", "%s", strbuf_str(&why));
			strbuf_release(&why);
			return bad;
		}
	}
	warn_plain_credentials(o);
	if (!o->pyroscope && !o->otlp && !o->dir && !o->once)
		return cmd_usage_error("agent", "nowhere to send the profiles: give --pyroscope URL, "
				       "--otlp URL or --dir DIR (or --once to print one period)");
	if (o->so.native && o->so.python_only)
		return cmd_usage_error("agent", "give either --native (or --kernel) or --python-only");
	return 0;
}

/*
 * The whole configuration: the file's options first (when --config names
 * one), then the command line's, which win. 0, -1 after --help, or an exit
 * code with the message printed.
 */
int agent_load_options(struct agent_opts *o, int argc, char **argv)
{
	struct agent_opts cli;
	const char *config;
	int ret;

	opts_default(&cli);
	ret = parse_argv(&cli, argc, argv);
	config = cli.config;
	agent_opts_release(&cli);
	if (ret)
		return ret;
	opts_default(o);
	if (config) {
		struct opt table[AGENT_NOPTS];
		struct opt_command cmd = { "agent", agent_usage, agent_about, agent_footer, table, 0 };
		struct cmd_sampling_opts sampling;
		struct strbuf err = STRBUF_INIT;

		cmd_sampling_opts_init(&sampling, &cmd_sampling_agent, &o->so);
		build_table(o, sampling.table, table, ARRAY_SIZE(table));
		ret = opts_file_args(&cmd, config, &o->file_argc, &o->file_argv, &err);
		cmd_sampling_opts_release(&sampling);
		if (ret) {
			fw_error("cannot read the configuration: %s", strbuf_str(&err));
			strbuf_release(&err);
			agent_opts_release(o);
			return ret == -EINVAL ? FW_EXIT_USAGE : FW_EXIT_BAD_INPUT;
		}
		strbuf_release(&err);
		o->in_file = 1;
		ret = parse_argv(o, o->file_argc, o->file_argv);
		o->in_file = 0;
		if (ret) {
			fw_hint("in the configuration file %s", config);
			agent_opts_release(o);
			return ret;
		}
	}
	ret = parse_argv(o, argc, argv);
	if (!ret)
		ret = validate(o);
	if (ret)
		agent_opts_release(o);
	return ret;
}


/* Implementation of options.h. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <strings.h>

#include "util/file.h"
#include "util/options.h"
#include "util/util.h"

int parse_rate(const char *s, double *hz)
{
	char *end;
	double v, mult = 1;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K') {
		mult = 1000;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		mult = 1000000;
		end++;
	}
	if (*end && strcasecmp(end, "hz"))
		return -EINVAL;
	v *= mult;
	if (!isfinite(v) || v < 1 || v > RATE_MAX_HZ)
		return -EINVAL;
	*hz = v;
	return 0;
}

int parse_seconds(const char *s, double *secs)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 's' && !end[1])
		end++;
	if (*end || !isfinite(v) || v < 0 || v > 365 * 86400.0)
		return -EINVAL;
	*secs = v;
	return 0;
}

int parse_pid(const char *s, int *pid)
{
	long v;

	if (parse_long(s, &v) || v <= 0 || v > 0x3fffffff)
		return -EINVAL;
	*pid = (int)v;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "kmgt";
	unsigned long long v;
	double mult = 1;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		const char *u = strchr(units, tolower((unsigned char)*end));

		if (!u)
			return -EINVAL;
		for (const char *k = units; k <= u; k++)
			mult *= 1024;
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (*end)
			return -EINVAL;
	}
	if ((double)v * mult > 9.0e18)
		return -EINVAL;
	*bytes = (uint64_t)v * (uint64_t)mult;
	return 0;
}

int usage_verror(const char *cmd, const char *fmt, va_list ap)
{
	fw_verror(fmt, ap);
	fw_hint("see framewalk %s --help", cmd);
	return FW_EXIT_USAGE;
}

int opts_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = usage_verror(cmd, fmt, ap);
	va_end(ap);
	return ret;
}

/* ---- the parser ----------------------------------------------------------- */

int opts_pid(const struct opt *o, const char *arg, struct strbuf *err)
{
	if (parse_pid(arg, o->value)) {
		strbuf_addf(err, "bad process id: '%s'", arg);
		return -1;
	}
	return 0;
}

int opts_pid_list(const struct opt *o, const char *arg, struct strbuf *err)
{
	struct opt_pid_list *l = o->value;
	int pid;
	const struct opt one = { .value = &pid };

	if (opts_pid(&one, arg, err))
		return -1;
	if (l->n >= l->max) {
		if (o->short_name)
			strbuf_addf(err, "too many -%c options (at most %d)", o->short_name, l->max);
		else
			strbuf_addf(err, "too many --%s options (at most %d)", o->long_name, l->max);
		return -1;
	}
	l->pids[l->n++] = pid;
	return 0;
}

static const struct opt help_opt = { 'h', "help", OPT_FLAG, NULL, "this help", { NULL }, NULL, 0 };
static void print_help(const struct opt_command *cmd, FILE *f);

static size_t count_opts(const struct opt *opts)
{
	size_t n = 0;

	for (const struct opt *o = opts; o->type != OPT_END; o++)
		n += o->type == OPT_TABLE ? count_opts(o->table) : 1;
	return n;
}

static size_t copy_opts(struct opt *out, const struct opt *opts)
{
	size_t n = 0;

	for (const struct opt *o = opts; o->type != OPT_END; o++) {
		if (o->type == OPT_TABLE)
			n += copy_opts(out + n, o->table);
		else
			out[n++] = *o;
	}
	return n;
}

/* opts with each included table's options in its place, ended by OPT_END; free() it. */
static struct opt *flatten(const struct opt *opts)
{
	size_t n = count_opts(opts);
	struct opt *flat = xcalloc(n + 1, sizeof(*flat));

	copy_opts(flat, opts);
	flat[n].type = OPT_END;
	return flat;
}

static int takes_value(const struct opt *o)
{
	return o->argh != NULL;
}

/* Store the value of o (arg: its value, NULL for none); 0 or FW_EXIT_USAGE. */
static int apply(const struct opt_command *cmd, const struct opt *o, const char *arg)
{
	struct strbuf err = STRBUF_INIT;
	int ret = 0;

	switch (o->type) {
	case OPT_FLAG:
		*(int *)o->value = 1;
		break;
	case OPT_STRING:
		*(const char **)o->value = arg;
		break;
	case OPT_CALLBACK:
		if (o->cb(o, arg, &err))
			ret = opts_usage_error(cmd->name, "%s", err.len ? strbuf_str(&err) :
					       "bad value");
		break;
	case OPT_END:
	case OPT_TABLE:         /* flattened before (flatten) */
		break;
	}
	strbuf_release(&err);
	return ret;
}

/*
 * The option a long name (up to its '=') stands for: exact, else the one it
 * is a prefix of. NULL when none or several; &help_opt for --help.
 */
static const struct opt *find_long(const struct opt *opts, const char *name, size_t len)
{
	const struct opt *found = NULL;
	int candidates = 0;

	for (const struct opt *o = opts; o->type != OPT_END; o++) {
		if (!o->long_name || strncmp(o->long_name, name, len))
			continue;
		if (!o->long_name[len])
			return o;
		found = o;
		candidates++;
	}
	if (!strncmp(help_opt.long_name, name, len)) {
		if (!help_opt.long_name[len])
			return &help_opt;
		found = &help_opt;
		candidates++;
	}
	return candidates == 1 ? found : NULL;
}

static const struct opt *find_short(const struct opt *opts, char c)
{
	for (const struct opt *o = opts; o->type != OPT_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return c == help_opt.short_name ? &help_opt : NULL;
}

static int unknown(const struct opt_command *cmd, const char *token)
{
	return opts_usage_error(cmd->name, "unknown option or missing value: '%s'", token);
}

/* One "--name[=value]" at argv[*i]; the value may be the next argument. */
static int parse_long_opt(const struct opt_command *cmd, int argc, char **argv, int *i)
{
	const char *token = argv[*i], *name = token + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct opt *o = find_long(cmd->opts, name, len);

	if (!o)
		return unknown(cmd, token);
	if (o == &help_opt) {
		print_help(cmd, stdout);
		return -1;
	}
	if (!takes_value(o))
		return eq ? unknown(cmd, token) : apply(cmd, o, NULL);
	if (eq)
		return apply(cmd, o, eq + 1);
	if (o->flags & OPT_OPTARG)
		return apply(cmd, o, NULL);
	if (*i + 1 >= argc)
		return unknown(cmd, token);
	return apply(cmd, o, argv[++*i]);
}

/* A bundle of short options at argv[*i] ("-q", "-qh", "-oFILE", "-o FILE"). */
static int parse_short_opt(const struct opt_command *cmd, int argc, char **argv, int *i)
{
	const char *token = argv[*i];

	for (const char *p = token + 1; *p; p++) {
		const struct opt *o = find_short(cmd->opts, *p);
		int ret;

		if (!o)
			return unknown(cmd, token);
		if (o == &help_opt) {
			print_help(cmd, stdout);
			return -1;
		}
		if (!takes_value(o) || (o->flags & OPT_OPTARG)) {
			ret = apply(cmd, o, NULL);
			if (ret)
				return ret;
			continue;
		}
		if (p[1])
			return apply(cmd, o, p + 1);
		if (*i + 1 >= argc)
			return unknown(cmd, token);
		return apply(cmd, o, argv[++*i]);
	}
	return 0;
}

/* opts_parse on a flat table */
static int parse(const struct opt_command *cmd, int argc, char **argv, int *nargs)
{
	int n = 0, i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		int ret;

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1]) {
			/* an argument ("-" is one: standard input) */
			if (cmd->flags & OPTS_STOP_AT_ARG)
				break;
			argv[1 + n++] = argv[i];
			continue;
		}
		ret = a[1] == '-' ? parse_long_opt(cmd, argc, argv, &i) : parse_short_opt(cmd, argc, argv, &i);
		if (ret)
			return ret;
	}
	/* what follows "--" (or the first argument with OPTS_STOP_AT_ARG) */
	for (; i < argc; i++)
		argv[1 + n++] = argv[i];
	/* argv[1..n] is an argument vector of its own (record execs it): end it */
	argv[1 + n] = NULL;
	*nargs = n;
	return 0;
}

int opts_parse(const struct opt_command *cmd, int argc, char **argv, int *nargs)
{
	struct opt_command flat = *cmd;
	struct opt *opts = flatten(cmd->opts);
	int ret;

	flat.opts = opts;
	ret = parse(&flat, argc, argv, nargs);
	free(opts);
	return ret;
}

/* ---- configuration files ----------------------------------------------------- */

#define CONFIG_MAX_BYTES (1u << 20)

static const struct opt *find_exact(const struct opt *opts, const char *name, size_t len)
{
	for (const struct opt *o = opts; o->type != OPT_END; o++)
		if (o->long_name && strlen(o->long_name) == len && !strncmp(o->long_name, name, len))
			return o;
	return NULL;
}

/* A flag's value: 1 set, 0 cleared, -1 not a yes or no. */
static int flag_value(const char *v)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(v, yes[i]))
			return 1;
		if (!strcasecmp(v, no[i]))
			return 0;
	}
	return -1;
}

static void add_arg(int *argc, char ***argv, size_t *alloc, char *arg)
{
	*argv = xgrow(*argv, sizeof(**argv), (size_t)*argc + 2, alloc);
	(*argv)[(*argc)++] = arg;
	(*argv)[*argc] = NULL;
}

/* One line of a configuration file (NUL-terminated, no newline). 0 or -EINVAL. */
static int file_line(const struct opt_command *cmd, char *line, int *argc, char ***argv,
		     size_t *alloc, struct strbuf *msg)
{
	char *name = line + strspn(line, " \t"), *v, *end;
	size_t len = strcspn(name, " \t=");
	const struct opt *o;
	struct strbuf arg = STRBUF_INIT;
	int set;

	if (!*name || *name == '#')
		return 0;
	o = find_exact(cmd->opts, name, len);
	if (!o) {
		strbuf_addf(msg, "unknown option '%.*s'", (int)len, name);
		return -EINVAL;
	}
	v = name + len;
	v += strspn(v, " \t");
	if (*v == '=')
		v += 1 + strspn(v + 1, " \t");
	end = v + strlen(v);
	while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	if (end - v >= 2 && *v == '"' && end[-1] == '"') {
		*--end = '\0';
		v++;
	}
	if (!takes_value(o)) {
		set = *v ? flag_value(v) : 1;
		if (set < 0) {
			strbuf_addf(msg, "'%s' is a flag: give yes or no, not '%s'", o->long_name, v);
			return -EINVAL;
		}
		if (set) {
			strbuf_addf(&arg, "--%s", o->long_name);
			add_arg(argc, argv, alloc, strbuf_detach(&arg));
		}
		return 0;
	}
	if (!*v && !(o->flags & OPT_OPTARG)) {
		strbuf_addf(msg, "'%s' needs a value", o->long_name);
		return -EINVAL;
	}
	strbuf_addf(&arg, "--%s", o->long_name);
	if (*v)
		strbuf_addf(&arg, "=%s", v);
	add_arg(argc, argv, alloc, strbuf_detach(&arg));
	return 0;
}

/* opts_file_args on a flat table */
static int file_args(const struct opt_command *cmd, const char *path, int *argc, char ***argv,
		     struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT, msg = STRBUF_INIT;
	size_t alloc = 0;
	char *line, *next;
	int ret, no = 0;

	*argc = 0;
	*argv = NULL;
	ret = read_file_bounded(path, CONFIG_MAX_BYTES, &text);
	if (ret) {
		strbuf_addf(err, "%s: %s", path, ret == -EFBIG ? "larger than 1 MiB" : strerror(-ret));
		strbuf_release(&text);
		return ret;
	}
	if (text.len && memchr(text.buf, '\0', text.len)) {
		strbuf_addf(err, "%s: not a text file (it holds a NUL byte)", path);
		strbuf_release(&text);
		return -EINVAL;
	}
	add_arg(argc, argv, &alloc, xstrdup(cmd->name));
	for (line = text.buf; line && !ret; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		no++;
		ret = file_line(cmd, line, argc, argv, &alloc, &msg);
		if (ret)
			strbuf_addf(err, "%s:%d: %s", path, no, strbuf_str(&msg));
	}
	strbuf_release(&msg);
	strbuf_release(&text);
	if (ret) {
		opts_file_free(*argc, *argv);
		*argc = 0;
		*argv = NULL;
	}
	return ret;
}

int opts_file_args(const struct opt_command *cmd, const char *path, int *argc, char ***argv,
		   struct strbuf *err)
{
	struct opt_command flat = *cmd;
	struct opt *opts = flatten(cmd->opts);
	int ret;

	flat.opts = opts;
	ret = file_args(&flat, path, argc, argv, err);
	free(opts);
	return ret;
}

void opts_file_free(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

/* ---- the help -------------------------------------------------------------- */

/* "-o, --output FILE", "    --site-packages[=DIR]", "-v, --verbose" */
static void option_names(const struct opt *o, struct strbuf *sb)
{
	if (o->short_name)
		strbuf_addf(sb, "-%c%s", o->short_name, o->long_name ? ", " : "");
	else
		strbuf_addstr(sb, "    ");
	if (o->long_name)
		strbuf_addf(sb, "--%s", o->long_name);
	if (!o->argh)
		return;
	if (o->flags & OPT_OPTARG)
		strbuf_addf(sb, "[=%s]", o->argh);
	else
		strbuf_addf(sb, " %s", o->argh);
}

void opts_print_help(const struct opt_command *cmd, FILE *f)
{
	struct opt_command flat = *cmd;
	struct opt *opts = flatten(cmd->opts);

	flat.opts = opts;
	print_help(&flat, f);
	free(opts);
}

/* opts_print_help on a flat table */
static void print_help(const struct opt_command *cmd, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;
	int col = USAGE_HELP_COLUMN;

	for (const struct opt *o = cmd->opts; o->type != OPT_END; o++) {
		if (!o->help)
			continue;
		strbuf_reset(&sb);
		option_names(o, &sb);
		/* two spaces of indent, two between the names and the help */
		if ((int)sb.len + 4 > col && (int)sb.len + 4 <= USAGE_HELP_COLUMN + 8)
			col = (int)sb.len + 4;
	}
	fputs(cmd->usage, f);
	if (cmd->about) {
		fputc('\n', f);
		usage_paragraphs(f, cmd->about);
	}
	fputc('\n', f);
	for (const struct opt *o = cmd->opts;; o++) {
		const struct opt *show = o->type == OPT_END ? &help_opt : o;

		if (show->help) {
			strbuf_reset(&sb);
			option_names(show, &sb);
			usage_option_help(f, strbuf_str(&sb), show->help, col);
		}
		if (o->type == OPT_END)
			break;
	}
	if (cmd->footer) {
		fputc('\n', f);
		usage_paragraphs(f, cmd->footer);
	}
	strbuf_release(&sb);
}

/*
 * text from column at (what is already on the line) to the end of its
 * lines, wrapped at USAGE_WIDTH, each further line indented to col.
 */
static void wrap(FILE *f, const char *text, int at, int col)
{
	const char *p = text;

	do {
		const char *end = p;
		int taken = 0;

		/* whole words while they fit; a word longer than a line stands alone */
		while (*end && *end != '\n') {
			const char *w = end + strspn(end, " ");
			const char *w_end = w + strcspn(w, " \n");

			if (taken && col + (w_end - p) > USAGE_WIDTH - 1)
				break;
			end = w_end;
			taken = 1;
		}
		fprintf(f, "%*s%.*s\n", col - at, "", (int)(end - p), p);
		at = 0;
		if (*end == '\n')
			p = end + 1;
		else
			p = end + strspn(end, " ");
	} while (*p);
}

void usage_option_help(FILE *f, const char *left, const char *help, int col)
{
	int at = fprintf(f, "  %s", left);

	if (at >= col) {
		fputc('\n', f);
		at = 0;
	}
	wrap(f, help, at, col);
}

void usage_paragraphs(FILE *f, const char *text)
{
	wrap(f, text, 0, 0);
}

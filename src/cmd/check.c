/*
 * framewalk check: can this machine profile, with which backends, and will
 * native stacks get through every module? Gathers the facts (audit/env.h),
 * the target's interpreter and modules (the module layer, elf/modules.h, for
 * a process: the files it really mapped, also when deleted or replaced on
 * disk since; an installation's files without running it: audit/install.h),
 * each module's frame pointers, unwind tables and debug info (the audit the
 * unwinder uses, elf/fpaudit.h, run once per file by elf/elffile.h), and
 * prints a report (text or --json) with the exact fix for each unusable
 * backend. The exit code lets scripts gate on the result (docs/CHECK.md).
 */
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>

#include "audit/env.h"
#include "audit/install.h"
#include "audit/sysconfig.h"
#include "cmd/cmd.h"
#include "elf/fpaudit.h"
#include "elf/modules.h"
#include "output/format.h"
#include "output/json.h"
#include "python/discover.h"
#include "sampler/bpf.h"
#include "target/elfsym.h"
#include "target/proc.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

static const char check_usage[] =
	"usage: framewalk check [-p PID] [--backend B]... [--native] [--json] [-v]\n"
	"       framewalk check --python PATH [--site-packages[=DIR]] [--root DIR] [--json] [-v]\n"
	"       framewalk check [options] ELF-FILE...\n"
	"\n"
	"Audit whether profiling works here: permissions and environment, which\n"
	"backends are usable (and the exact fix for each that is not), and for a\n"
	"process or an installation the interpreter's build and, for every module,\n"
	"frame pointers, unwind tables, symbols and build-id.\n"
	"\n"
	"  -p, --pid PID             a running process: its interpreter and every\n"
	"                            module it has loaded\n"
	"      --python PATH         an installation, read from its files (never run)\n"
	"      --site-packages[=DIR] also every extension under its site-packages\n"
	"                            (or under DIR, e.g. a virtualenv's)\n"
	"      --root DIR            the installation lives in this sysroot (default:\n"
	"                            guessed from PATH, e.g. a chroot's DIR/usr/bin)\n"
	"      --backend B           require backend B: vm, ptrace or bpf (repeatable;\n"
	"                            default vm for a machine or a process)\n"
	"      --native              require native stacks: ptrace, and every module\n"
	"                            unwindable\n"
	"      --json                the report as JSON\n"
	"  -v, --verbose             per-module details (paths, counts, debug files)\n"
	"  -h, --help                this help\n"
	"\n"
	"Exit status: 0 when everything required works; 3 no such process, 4 not\n"
	"Python, 5 unsupported version, 8 unreadable file, 6 a required backend\n"
	"lacks a privilege, 9 something else required does not work (a module that\n"
	"cannot be unwound, a missing kernel feature).\n";

enum check_mode { MODE_MACHINE, MODE_PROCESS, MODE_INSTALL, MODE_FILES };

#define NEED_VM (1u << 0)
#define NEED_PTRACE (1u << 1)
#define NEED_BPF (1u << 2)

struct check_opts {
	enum check_mode mode;
	pid_t pid;
	const char *python;
	const char *root;
	const char *site;               /* NULL: none; "": the installation's own */
	unsigned need;
	int need_given;
	int native;
	int json;
	int verbose;
	char **files;
	int nfiles;
};

struct check_module {
	char *name;                     /* as the target or installation names it */
	char *host_path;
	const char *role;
	char *needed_by;
	int err;                        /* opening or auditing: 0 or -errno */
	char why[PATH_MAX + 256];       /* why it could not be opened, "" */
	int deleted, replaced;          /* gone or another file at its path since mapped */
	struct fpa_result r;
};

struct check_interp {
	int present;
	char version[32];
	char module[PATH_MAX];          /* module holding the runtime, as named */
	int shared;
	int free_threaded, debug;       /* -1 unknown */
	struct py_sysconfig sc;
	int sc_err;                     /* 0 or -errno */
	enum sysconfig_fp configured;
	struct strbuf configured_why;
	int mod;                        /* index of its module audit, -1 none */
};

struct check {
	struct check_opts o;
	struct elf_cache *files;        /* every module's file, opened and audited once */
	struct audit_env env;
	struct audit_target target;
	int has_target;
	char comm[64];
	int discover_err;               /* py_discover: 0 or -errno */
	struct strbuf discover_why;
	struct check_interp interp;
	struct check_module *mods;
	size_t nmods, amods;
	int maps_err;
	int modules_truncated;
	struct audit_backend backends[AUDIT_NBACKENDS];
	struct strbuf problems[16];
	size_t nproblems;
	int exit_code;
};

static void problem(struct check *c, int code, const char *fmt, ...) PRINTF_LIKE(3, 4);

/*
 * Record a failure: its message and the exit code it asks for. Target
 * problems (3, 4, 5, 8, then 1 for anything unexpected) outrank permission
 * (6), which outranks the rest (9).
 */
static void problem(struct check *c, int code, const char *fmt, ...)
{
	static const int rank[] = { FW_EXIT_CHECK_FAILED, FW_EXIT_PERMISSION, FW_EXIT_FAILURE,
				    FW_EXIT_BAD_INPUT, FW_EXIT_UNSUPPORTED, FW_EXIT_NOT_PYTHON,
				    FW_EXIT_NO_PROCESS };
	int old = -1, new = -1;
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (c->nproblems < ARRAY_SIZE(c->problems))
		strbuf_addstr(&c->problems[c->nproblems++], buf);
	for (int i = 0; i < (int)ARRAY_SIZE(rank); i++) {
		if (rank[i] == c->exit_code)
			old = i;
		if (rank[i] == code)
			new = i;
	}
	if (new > old)
		c->exit_code = code;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */

static int usage_error(const char *fmt, const char *arg)
{
	return cmd_usage_error("check", fmt, arg);
}

static int parse_args(int argc, char **argv, struct check_opts *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "python", required_argument, NULL, 'P' },
		{ "site-packages", optional_argument, NULL, 'S' },
		{ "root", required_argument, NULL, 'R' },
		{ "backend", required_argument, NULL, 'B' },
		{ "native", no_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'J' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, pid;

	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pid(optarg, &pid))
				return usage_error("bad process id: '%s'", optarg);
			o->pid = pid;
			break;
		case 'P':
			o->python = optarg;
			break;
		case 'S':
			o->site = optarg ? optarg : "";
			break;
		case 'R':
			o->root = optarg;
			break;
		case 'B':
			if (!strcmp(optarg, "vm"))
				o->need |= NEED_VM;
			else if (!strcmp(optarg, "ptrace"))
				o->need |= NEED_PTRACE;
			else if (!strcmp(optarg, "bpf"))
				o->need |= NEED_BPF;
			else
				return usage_error("unknown backend: '%s' (vm, ptrace or bpf)", optarg);
			o->need_given = 1;
			break;
		case 'N':
			o->native = 1;
			break;
		case 'J':
			o->json = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			fputs(check_usage, stdout);
			return -1;
		default:
			return usage_error("unknown option or missing value: '%s'", argv[optind - 1]);
		}
	}
	o->files = argv + optind;
	o->nfiles = argc - optind;
	if (o->pid && o->python)
		return usage_error("%s", "give either -p PID or --python PATH, not both");
	if ((o->site || o->root) && !o->python)
		return usage_error("%s", "--site-packages and --root need --python PATH");
	if (o->pid)
		o->mode = MODE_PROCESS;
	else if (o->python)
		o->mode = MODE_INSTALL;
	else if (o->nfiles)
		o->mode = MODE_FILES;
	else
		o->mode = MODE_MACHINE;
	if (o->native && !(o->need & (NEED_PTRACE | NEED_BPF)))
		o->need |= NEED_PTRACE;
	if (!o->need_given && !o->native && (o->mode == MODE_MACHINE || o->mode == MODE_PROCESS))
		o->need |= NEED_VM;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Gathering                                                           */

static struct check_module *add_module(struct check *c, const char *name, const char *host,
				       const char *role, const char *needed_by)
{
	struct check_module *m;

	c->mods = xgrow(c->mods, sizeof(*c->mods), c->nmods + 1, &c->amods);
	m = &c->mods[c->nmods++];
	memset(m, 0, sizeof(*m));
	m->name = xstrdup(name);
	m->host_path = host ? xstrdup(host) : NULL;
	m->role = role;
	m->needed_by = needed_by ? xstrdup(needed_by) : NULL;
	return m;
}

/* Open and audit the file at m->host_path (installations and files given by name). */
static void audit_module(struct check *c, struct check_module *m, const char *root)
{
	struct elf_info *f;
	int loaded;

	if (!m->host_path) {
		m->r.verdict = FPA_UNKNOWN;
		return;
	}
	f = elf_cache_open_path(c->files, m->host_path, m->name, root, &loaded);
	if (!f) {
		m->err = errno == EACCES ? -EACCES : -errno;
		return;
	}
	m->err = f->audit_err;
	m->r = f->audit;
	elf_cache_put(c->files, f);
}

static void dirname_into(const char *path, char *out, size_t size)
{
	const char *s = strrchr(path, '/');

	if (!s || s == path)
		xsnprintf(out, size, "/");
	else
		xsnprintf(out, size, "%.*s", (int)(s - path), path);
}

/*
 * The interpreter's build flags and configuration, from its module (ef,
 * closed here; module_name only steers the version guess) and prefix.
 */
static void interp_details(struct check_interp *ip, struct elf_file *ef, const char *module_name,
			   const char *exe_host, const char *stdlib_hint)
{
	char bindir[PATH_MAX], prefix[PATH_MAX], stdlib[PATH_MAX + 64], path[PATH_MAX], flags[4];
	int major = 0, minor = 0;

	ip->free_threaded = ip->debug = -1;
	ip->sc_err = -ENOENT;
	if (ef) {
		uint64_t a;
		char v[32];

		if (!install_module_version(ef, module_name, &major, &minor, v, sizeof(v)) &&
		    (!ip->version[0] || strlen(v) > strlen(ip->version)))
			xsnprintf(ip->version, sizeof(ip->version), "%s", v);
		ip->free_threaded = !elf_file_symbol(ef, "_Py_MergeZeroLocalRefcount", &a, NULL);
		ip->debug = !elf_file_symbol(ef, "_Py_NegativeRefcount", &a, NULL);
		elf_file_close(ef);
	}
	if (stdlib_hint && stdlib_hint[0]) {
		xsnprintf(stdlib, sizeof(stdlib), "%s", stdlib_hint);
	} else {
		if (!major && sscanf(ip->version, "%d.%d", &major, &minor) != 2)
			return;
		dirname_into(exe_host, bindir, sizeof(bindir));
		dirname_into(bindir, prefix, sizeof(prefix));
		xsnprintf(stdlib, sizeof(stdlib), "%s/lib/python%d.%d%s", prefix, major, minor,
			  ip->free_threaded == 1 ? "t" : "");
	}
	xsnprintf(flags, sizeof(flags), "%s%s", ip->free_threaded == 1 ? "t" : "",
		  ip->debug == 1 ? "d" : "");
	if (sysconfig_find(stdlib, flags, path, sizeof(path)) &&
	    sysconfig_find(stdlib, NULL, path, sizeof(path)))
		return;
	ip->sc_err = sysconfig_load(path, &ip->sc);
	if (!ip->sc_err) {
		ip->configured = sysconfig_frame_pointers(ip->sc.cflags, &ip->configured_why);
		if (ip->sc.gil_disabled >= 0)
			ip->free_threaded = ip->sc.gil_disabled;
		if (ip->sc.py_debug >= 0)
			ip->debug = ip->sc.py_debug;
	}
}

static int is_extension_path(const char *p)
{
	return strstr(p, "/lib-dynload/") || strstr(p, "-packages/");
}

/* Move the first module with this role to the front of the list. */
static void front_module(struct check *c, const char *role)
{
	for (size_t i = 0; i < c->nmods; i++) {
		struct check_module m;

		if (strcmp(c->mods[i].role, role))
			continue;
		m = c->mods[i];
		memmove(c->mods + 1, c->mods, i * sizeof(*c->mods));
		c->mods[0] = m;
		if (c->interp.mod >= 0 && (size_t)c->interp.mod < i)
			c->interp.mod++;
		else if (c->interp.mod >= 0 && (size_t)c->interp.mod == i)
			c->interp.mod = 0;
		return;
	}
}

/* The interpreter module, opened through its mapping (it may be deleted or replaced). */
static struct elf_file *open_interp_module(pid_t pid, const struct py_target *t)
{
	struct proc_maps maps;
	const struct proc_map *base;
	struct elf_file *ef = NULL;
	int fd;

	if (proc_maps_read(pid, &maps))
		return NULL;
	base = proc_maps_find_base_id(&maps, t->module_dev, t->module_ino);
	fd = base ? proc_map_open(pid, base, NULL) : -ENOENT;
	if (fd >= 0)
		ef = elf_file_open_fd(fd);
	proc_maps_release(&maps);
	return ef;
}

static void gather_process(struct check *c)
{
	struct target_mem mem;
	struct py_target t;
	struct module_map mm;
	char exe_host[PATH_MAX + 64] = "";
	int ret;

	proc_task_comm(c->o.pid, c->o.pid, c->comm, sizeof(c->comm));
	mem_init_pid(&mem, c->o.pid);
	memset(&t, 0, sizeof(t));
	c->discover_err = py_discover(c->o.pid, &mem, &t, &c->discover_why);
	mem_release(&mem);
	switch (c->discover_err) {
	case 0:
		break;
	case -ESRCH:
		if (c->has_target && c->target.kthread) {
			problem(c, FW_EXIT_NOT_PYTHON, "process %d (%s) is a kernel thread, not a "
				"Python process", (int)c->o.pid, c->comm);
			return;
		}
		problem(c, FW_EXIT_NO_PROCESS, "no such process: %d", (int)c->o.pid);
		return;
	case -ENOEXEC:
		problem(c, FW_EXIT_NOT_PYTHON, "%s", strbuf_str(&c->discover_why));
		break;
	case -ENOTSUP:
	case -EPROTO:
		problem(c, FW_EXIT_UNSUPPORTED, "%s", strbuf_str(&c->discover_why));
		break;
	case -EPERM:
	case -EACCES:
		problem(c, FW_EXIT_PERMISSION, "%s", strbuf_str(&c->discover_why));
		break;
	default:
		problem(c, FW_EXIT_FAILURE, "%s", strbuf_str(&c->discover_why));
		break;
	}
	/* The modules as the unwinder sees them: the same layer, the same files. */
	ret = modules_load(&mm, c->o.pid, c->files);
	if (ret) {
		c->maps_err = ret;
		modules_release(&mm);
		return;
	}
	for (size_t i = 0; i < mm.n; i++) {
		const struct fw_module *m = &mm.mods[i];
		struct check_module *cm;
		const char *role = "library";

		if (!c->discover_err && m->dev == t.module_dev && m->ino == t.module_ino)
			role = "interpreter";
		else if (!c->discover_err && !strcmp(m->path, t.exe))
			role = "executable";
		else if (is_extension_path(m->path))
			role = "extension";
		cm = add_module(c, m->path, m->host_path, role, NULL);
		cm->deleted = m->deleted;
		cm->replaced = m->replaced;
		module_problem(m, c->o.pid, cm->why, sizeof(cm->why));
		if (!m->file) {
			cm->err = m->err;
		} else {
			cm->err = m->file->audit_err;
			cm->r = m->file->audit;
		}
		if (!strcmp(role, "interpreter"))
			c->interp.mod = (int)(c->nmods - 1);
		if (!c->discover_err && !strcmp(m->path, t.exe))
			xsnprintf(exe_host, sizeof(exe_host), "%s", m->host_path);
	}
	modules_release(&mm);
	front_module(c, "executable");
	front_module(c, "interpreter");
	if (!c->discover_err) {
		struct elf_file *ef = open_interp_module(c->o.pid, &t);

		c->interp.present = 1;
		xsnprintf(c->interp.version, sizeof(c->interp.version), "%s", t.version);
		xsnprintf(c->interp.module, sizeof(c->interp.module), "%s", t.module);
		c->interp.shared = t.shared;
		if (!exe_host[0])
			xsnprintf(exe_host, sizeof(exe_host), "/proc/%d/root%s", (int)c->o.pid, t.exe);
		interp_details(&c->interp, ef, t.module, exe_host, NULL);
	}
}

static void gather_install(struct check *c)
{
	struct strbuf why = STRBUF_INIT;
	struct install_list list = { 0 };
	struct py_install in;
	const char *root;
	int ret;

	ret = install_open(c->o.python, c->o.root, &in, &why);
	if (ret) {
		problem(c, ret == -ESRCH ? FW_EXIT_NOT_PYTHON : FW_EXIT_BAD_INPUT, "%s",
			strbuf_str(&why));
		strbuf_release(&why);
		install_release(&in);
		return;
	}
	root = in.root;
	c->interp.present = 1;
	xsnprintf(c->interp.version, sizeof(c->interp.version), "%s", in.version);
	install_modules(&in, c->o.site, &list);
	c->modules_truncated = list.truncated;
	for (size_t i = 0; i < list.n; i++) {
		const struct install_module *im = &list.v[i];
		struct check_module *cm = add_module(c, im->name, im->host_path,
						     install_role_name(im->role), im->needed_by);

		audit_module(c, cm, root);
		if (im->role == ROLE_INTERPRETER) {
			c->interp.mod = (int)(c->nmods - 1);
			xsnprintf(c->interp.module, sizeof(c->interp.module), "%s", im->name);
		}
	}
	c->interp.shared = in.libpython[0] != 0;
	interp_details(&c->interp, elf_file_open(in.libpython[0] ? in.libpython : in.exe),
		       in.libpython[0] ? in.libpython : in.exe, in.exe, in.stdlib);
	install_list_release(&list);
	install_release(&in);
	strbuf_release(&why);
}

static void gather_files(struct check *c)
{
	for (int i = 0; i < c->o.nfiles; i++) {
		char real[PATH_MAX];
		struct check_module *cm;
		struct stat st;

		if (!realpath(c->o.files[i], real)) {
			cm = add_module(c, c->o.files[i], NULL, "module", NULL);
			cm->err = -errno;
			problem(c, FW_EXIT_BAD_INPUT, "%s: %s", c->o.files[i], strerror(errno));
			continue;
		}
		if (!stat(real, &st) && S_ISDIR(st.st_mode)) {
			cm = add_module(c, real, NULL, "module", NULL);
			cm->err = -EISDIR;
			problem(c, FW_EXIT_BAD_INPUT, "%s is a directory (for a site-packages "
				"directory: --python PATH --site-packages=DIR)", c->o.files[i]);
			continue;
		}
		cm = add_module(c, real, real, "module", NULL);
		audit_module(c, cm, "");
		if (cm->err)
			problem(c, FW_EXIT_BAD_INPUT, "%s: %s", c->o.files[i],
				cm->err == -ENOEXEC ? "not a 64-bit ELF file" : strerror(-cm->err));
	}
}

/* ------------------------------------------------------------------ */
/* Verdicts                                                            */

static int module_breaks(const struct check_module *m)
{
	return !m->err && m->r.x86_64 && fpa_unwind_of(&m->r) != FPA_UNWIND_FP;
}

static void chain_reason(const struct check_module *m, struct strbuf *sb)
{
	enum fpa_unwind u = fpa_unwind_of(&m->r);

	if (m->r.verdict == FPA_PARTLY)
		strbuf_addstr(sb, "frame pointers in some functions only; ");
	else
		strbuf_addstr(sb, "no frame pointers; ");
	if (u == FPA_UNWIND_DWARF)
		strbuf_addstr(sb, "unwind tables present, framewalk will use DWARF there");
	else
		strbuf_addstr(sb, "no unwind tables either: framewalk cannot unwind through it");
}

static void decide(struct check *c)
{
	static const unsigned bits[AUDIT_NBACKENDS] = { NEED_VM, NEED_PTRACE, NEED_BPF };
	int chain_needed = c->o.native || (c->o.need & (NEED_PTRACE | NEED_BPF)) ||
			   c->o.mode == MODE_INSTALL || c->o.mode == MODE_FILES;

	for (int i = 0; i < AUDIT_NBACKENDS; i++) {
		const struct audit_backend *b = &c->backends[i];
		int ok = b->status == AUDIT_USABLE ||
			 (b->status == AUDIT_LIMITED && !c->has_target);

		if (!(c->o.need & bits[i]) || ok)
			continue;
		if (c->has_target && c->target.kthread)
			continue;       /* said once, as "not a Python process" */
		problem(c, b->failure == AUDIT_NO_PERMISSION ? FW_EXIT_PERMISSION :
			   b->failure == AUDIT_GONE ? FW_EXIT_NO_PROCESS : FW_EXIT_CHECK_FAILED,
			"backend %s is not usable: %s", b->name, strbuf_str(&b->reason));
	}
	if (c->maps_err)
		problem(c, c->maps_err == -ESRCH ? FW_EXIT_NO_PROCESS : FW_EXIT_PERMISSION,
			"cannot read /proc/%d/maps: %s", (int)c->o.pid, strerror(-c->maps_err));
	for (size_t i = 0; chain_needed && i < c->nmods; i++) {
		const struct check_module *m = &c->mods[i];

		/* A file the unwinder cannot open: no CFI and no names there. */
		if (m->why[0])
			problem(c, m->err == -EPERM || m->err == -EACCES ? FW_EXIT_PERMISSION :
				FW_EXIT_CHECK_FAILED, "%s", m->why);
		if (module_breaks(m) && fpa_unwind_of(&m->r) == FPA_UNWIND_NONE)
			problem(c, FW_EXIT_CHECK_FAILED, "%s: no frame pointers and no unwind tables: "
				"native stacks stop there", basename_of(m->name));
	}
}

/* ------------------------------------------------------------------ */
/* Text report                                                         */

static void put_escaped(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	escape_append(&sb, s, ESCAPE_TERMINAL);
	fputs(strbuf_str(&sb), stdout);
	strbuf_release(&sb);
}

static const char *code_word(enum fpa_verdict v)
{
	switch (v) {
	case FPA_YES: return "with";
	case FPA_PARTLY: return "partly";
	case FPA_NO: return "without";
	case FPA_NA: return "n/a";
	default: return "unknown";
	}
}

/* What happened on disk to a module's file since the process mapped it. */
static const char *disk_note(const struct check_module *m)
{
	if (m->replaced)
		return "replaced on disk since the process started (another file is at its path "
		       "now); framewalk reads the file the process mapped";
	return "replaced on disk since the process started (deleted: no file is at its path "
	       "now); framewalk reads the file the process mapped";
}

static void fp_cell(const struct check_module *m, struct strbuf *sb)
{
	if (m->err) {
		strbuf_addf(sb, "unreadable (%s)", m->err == -ENOEXEC ? "not a 64-bit ELF" :
			    strerror(-m->err));
		return;
	}
	if (!m->r.x86_64) {
		strbuf_addstr(sb, "unknown (not x86-64)");
		return;
	}
	strbuf_addstr(sb, fpa_verdict_name(m->r.verdict));
	if (m->r.verdict != FPA_NA)
		strbuf_addf(sb, " (%d%%)", (int)m->r.fp_percent);
	if (m->r.verdict == FPA_YES || m->r.verdict == FPA_NA) {
		if (!m->r.cfi_section)
			strbuf_addstr(sb, ", no unwind tables");
		return;
	}
	if (fpa_unwind_of(&m->r) == FPA_UNWIND_DWARF)
		strbuf_addstr(sb, ", unwind tables present");
	else
		strbuf_addstr(sb, ", no unwind tables: cannot unwind");
}

static void symbols_cell(const struct check_module *m, struct strbuf *sb)
{
	if (m->err)
		return;
	switch (m->r.symbols) {
	case FPA_SYMS_SYMTAB:
		strbuf_addstr(sb, ".symtab");
		break;
	case FPA_SYMS_DYNSYM:
		strbuf_addstr(sb, "stripped (.dynsym only)");
		break;
	default:
		strbuf_addstr(sb, "no symbols");
		break;
	}
	if (m->r.debug_via)
		strbuf_addf(sb, ", debug info: %s", m->r.debug_via);
	else if (m->r.minidebuginfo)
		strbuf_addstr(sb, ", mini debug info");
	else if (m->r.symbols != FPA_SYMS_SYMTAB)
		strbuf_addstr(sb, ", no debug info");
}

static void print_interp(const struct check *c)
{
	const struct check_interp *ip = &c->interp;
	const struct check_module *m = ip->mod >= 0 ? &c->mods[ip->mod] : NULL;

	printf("\nInterpreter\n  Python %s, %s (", ip->version[0] ? ip->version : "?",
	       ip->shared ? "shared" : "static");
	put_escaped(ip->module);
	printf(")%s%s\n", ip->free_threaded == 1 ? ", free-threaded" :
	       ip->free_threaded == 0 ? ", with the GIL" : "",
	       ip->debug == 1 ? ", debug build" : ip->debug == 0 ? ", release build" : "");
	if (!ip->sc_err) {
		printf("  sysconfig: ");
		put_escaped(ip->sc.path);
		printf("\n  CFLAGS: ");
		put_escaped(ip->sc.cflags ? ip->sc.cflags : "(none)");
		putchar('\n');
	} else {
		printf("  sysconfig: no _sysconfigdata file found (%s)\n", strerror(-ip->sc_err));
	}
	printf("  frame pointers: %s (configured: %s",
	       m && !m->err ? fpa_verdict_name(m->r.verdict) : "unknown",
	       ip->configured == SYSCONFIG_FP_WITH ? "with" :
	       ip->configured == SYSCONFIG_FP_WITHOUT ? "without" : "unknown");
	if (ip->configured_why.len) {
		printf(" [");
		put_escaped(strbuf_str(&ip->configured_why));
		printf("]");
	}
	if (m && !m->err)
		printf("; code: %s, %d%% of %zu functions)", code_word(m->r.verdict),
		       (int)m->r.fp_percent, m->r.with_fp + m->r.without_fp);
	else
		printf("; code: unknown)");
	if (m && !m->err && ip->configured != SYSCONFIG_FP_UNKNOWN) {
		int code_yes = m->r.verdict == FPA_YES;

		if (code_yes == (ip->configured == SYSCONFIG_FP_WITH))
			printf(", config and code agree");
		else
			printf(", config and code disagree");
	}
	putchar('\n');
}

/*
 * "a.so, b.so (reason); c.so (other reason)": the modules where the
 * frame-pointer chain breaks, grouped by reason, in module order.
 */
static void chain_summary(const struct check *c, struct strbuf *out, size_t *count)
{
	struct strbuf reason = STRBUF_INIT, other = STRBUF_INIT;
	unsigned char *done = xcalloc(c->nmods ? c->nmods : 1, 1);

	*count = 0;
	for (size_t i = 0; i < c->nmods; i++) {
		size_t n = 0;

		if (done[i] || !module_breaks(&c->mods[i]))
			continue;
		strbuf_reset(&reason);
		chain_reason(&c->mods[i], &reason);
		strbuf_addstr(out, *count ? "; " : "");
		for (size_t k = i; k < c->nmods; k++) {
			if (done[k] || !module_breaks(&c->mods[k]))
				continue;
			strbuf_reset(&other);
			chain_reason(&c->mods[k], &other);
			if (strcmp(strbuf_str(&reason), strbuf_str(&other)))
				continue;
			done[k] = 1;
			strbuf_addstr(out, n++ ? ", " : "");
			strbuf_addstr(out, basename_of(c->mods[k].name));
			(*count)++;
		}
		strbuf_addf(out, " (%s)", strbuf_str(&reason));
	}
	free(done);
	strbuf_release(&reason);
	strbuf_release(&other);
}

static void print_modules(const struct check *c)
{
	struct strbuf *fp = xcalloc(c->nmods ? c->nmods : 1, sizeof(*fp));
	struct strbuf *sy = xcalloc(c->nmods ? c->nmods : 1, sizeof(*sy));
	size_t wname = 6, wfp = 14, wsy = 7, nbreak = 0, analysed = 0;
	struct strbuf breaks = STRBUF_INIT;

	for (size_t i = 0; i < c->nmods; i++) {
		size_t n = strlen(basename_of(c->mods[i].name));

		fp_cell(&c->mods[i], &fp[i]);
		symbols_cell(&c->mods[i], &sy[i]);
		wname = n > wname ? n : wname;
		wfp = fp[i].len > wfp ? fp[i].len : wfp;
		wsy = sy[i].len > wsy ? sy[i].len : wsy;
	}
	printf("\nModules: %zu%s\n", c->nmods, c->modules_truncated ? " (list truncated)" : "");
	if (c->maps_err)
		printf("  cannot read /proc/%d/maps: %s\n", (int)c->o.pid, strerror(-c->maps_err));
	if (c->nmods)
		printf("  %-*s  %-*s  %-*s  %s\n", (int)wname, "MODULE", (int)wfp, "FRAME POINTERS",
		       (int)wsy, "SYMBOLS", "BUILD-ID");
	for (size_t i = 0; i < c->nmods; i++) {
		const struct check_module *m = &c->mods[i];
		struct strbuf name = STRBUF_INIT;

		escape_append(&name, basename_of(m->name), ESCAPE_TERMINAL);
		printf("  %-*s  %-*s  %-*s  %.12s\n", (int)wname, strbuf_str(&name), (int)wfp,
		       strbuf_str(&fp[i]), (int)wsy, strbuf_str(&sy[i]),
		       m->err || !m->r.build_id[0] ? "-" : m->r.build_id);
		if (m->deleted)
			printf("      %s\n", disk_note(m));
		if (m->why[0]) {
			printf("      ");
			put_escaped(m->why);
			putchar('\n');
		}
		if (c->o.verbose) {
			printf("      path: ");
			put_escaped(m->name);
			printf("  (%s%s%s)\n", m->role, m->needed_by ? ", needed by " : "",
			       m->needed_by ? m->needed_by : "");
			if (!m->err) {
				printf("      functions: %zu found, %zu examined: %zu with a frame pointer, "
				       "%zu without, %zu neutral (small or frameless), %zu without CFI\n",
				       m->r.functions, m->r.sampled, m->r.with_fp, m->r.without_fp,
				       m->r.neutral, m->r.no_cfi);
				printf("      unwind tables: %s (%zu FDEs); build-id: %s\n",
				       m->r.cfi_section ? m->r.cfi_section : "none", m->r.fdes,
				       m->r.build_id[0] ? m->r.build_id : "none");
				if (m->r.debug_path[0]) {
					printf("      debug file: ");
					put_escaped(m->r.debug_path);
					putchar('\n');
				}
				if (m->r.nexamples) {
					printf("      e.g. without a frame pointer:");
					for (size_t k = 0; k < m->r.nexamples; k++) {
						putchar(' ');
						put_escaped(m->r.examples[k]);
					}
					putchar('\n');
				}
			}
		}
		strbuf_release(&name);
		strbuf_release(&fp[i]);
		strbuf_release(&sy[i]);
	}
	chain_summary(c, &breaks, &nbreak);
	for (size_t i = 0; i < c->nmods; i++)
		analysed += !c->mods[i].err && c->mods[i].r.x86_64;
	if (nbreak) {
		printf("  the chain breaks in: ");
		put_escaped(strbuf_str(&breaks));
		putchar('\n');
	} else if (analysed) {
		printf("  the frame-pointer chain is intact in every module\n");
	}
	strbuf_release(&breaks);
	free(fp);
	free(sy);
}

static void print_sysctl(const char *name, long v)
{
	if (v == AUDIT_UNSET)
		printf("%s: absent", name);
	else
		printf("%s = %ld", name, v);
}

static void print_env(const struct check *c)
{
	static const int caps[] = { AUDIT_CAP_SYS_PTRACE, AUDIT_CAP_PERFMON, AUDIT_CAP_BPF,
				    AUDIT_CAP_SYS_ADMIN };
	const struct audit_env *e = &c->env;
	const struct audit_target *t = &c->target;

	printf("\nPermissions and environment\n");
	printf("  user: %s (uid %u, gid %u)\n  capabilities:", e->user, (unsigned)e->euid,
	       (unsigned)e->gid);
	for (size_t i = 0; i < ARRAY_SIZE(caps); i++)
		printf(" %s %s%s", audit_cap_name(caps[i]), audit_has_cap(e, caps[i]) ? "yes" : "no",
		       i + 1 < ARRAY_SIZE(caps) ? "," : "\n");
	printf("  ");
	print_sysctl("kernel.perf_event_paranoid", e->perf_event_paranoid);
	printf(", ");
	print_sysctl("kernel.kptr_restrict", e->kptr_restrict);
	printf(", ");
	if (e->ptrace_scope == AUDIT_UNSET)
		printf("Yama: not loaded (no ptrace_scope)\n");
	else
		printf("kernel.yama.ptrace_scope = %ld\n", e->ptrace_scope);
	printf("  container: %s (%s)\n", e->in_container ? "yes" : "no", e->container_why);
	printf("  seccomp: %s%s\n", e->seccomp == 2 ? "filter" : e->seccomp == 1 ? "strict" :
	       e->seccomp == 0 ? "disabled" : "unknown", e->no_new_privs ? ", no_new_privs" : "");
	printf("  kernel: %s, BTF %s, kernel symbols %s\n", e->kernel[0] ? e->kernel : "?",
	       e->btf ? "present" : e->sysfs ? "absent" : "unknown (sysfs not mounted on /sys)",
	       e->kallsyms == 1 ? "visible" : e->kallsyms == 0 ? "hidden" : "unreadable");
	printf("  bpf probe: ");
	if (!e->bpf_load_err && !e->perf_open_err && !e->bpf_attach_err)
		printf("a perf_event program loaded and attached to a cpu-clock event; "
		       "framewalk's own program %s\n", !e->bpf_built ? "is not built in" :
		       !e->bpf_backend_err ? "loaded" : "failed to load");
	else if (e->bpf_load_err)
		printf("BPF_PROG_LOAD failed: %s\n", strerror(-e->bpf_load_err));
	else if (e->perf_open_err)
		printf("program loaded; perf_event_open failed: %s\n", strerror(-e->perf_open_err));
	else
		printf("program loaded; attaching failed: %s\n", strerror(-e->bpf_attach_err));
	if (!c->has_target)
		return;
	printf("  target: process %d", (int)t->pid);
	if (t->uid_known)
		printf(", uid %u (%s)", (unsigned)t->uid, t->user);
	if (t->chroot) {
		printf(", in a chroot (");
		put_escaped(t->root);
		printf(")");
	}
	if (t->in_container)
		printf(", in a container (%s)", t->container_why);
	{
		int differ = 0, unknown = 0;

		for (int i = 0; i < NS_COUNT; i++) {
			differ |= t->ns_same[i] == 0;
			unknown |= t->ns_same[i] < 0;
		}
		if (differ) {
			printf(", other namespaces:");
			for (int i = 0; i < NS_COUNT; i++)
				if (t->ns_same[i] == 0)
					printf(" %s", audit_ns_names[i]);
		} else if (unknown) {
			printf(", namespaces unreadable");
		} else {
			printf(", same namespaces as framewalk");
		}
	}
	if (t->tracer > 0)
		printf(", traced by %d (%s)", (int)t->tracer, t->tracer_comm);
	printf(", seccomp %s\n", t->seccomp == 2 ? "filter" : t->seccomp == 1 ? "strict" :
	       t->seccomp == 0 ? "disabled" : "unknown");
}

static void print_backends(const struct check *c)
{
	static const unsigned bits[AUDIT_NBACKENDS] = { NEED_VM, NEED_PTRACE, NEED_BPF };

	printf("\nBackends%s\n", c->has_target ? " for this process" : "");
	for (int i = 0; i < AUDIT_NBACKENDS; i++) {
		const struct audit_backend *b = &c->backends[i];

		printf("  %-7s %-9s %s%s\n", b->name, audit_backend_status_name(b->status),
		       strbuf_str(&b->reason), c->o.need & bits[i] ? " [required]" : "");
		for (size_t k = 0; k < b->nfixes && b->status != AUDIT_USABLE; k++)
			printf("  %-7s %-9s fix: %s\n", "", "", b->fixes[k]);
		for (size_t k = 0; k < b->nfixes && b->status == AUDIT_USABLE; k++)
			printf("  %-7s %-9s for more: %s\n", "", "", b->fixes[k]);
		if (b->note.len)
			printf("  %-7s %-9s note: %s\n", "", "", strbuf_str(&b->note));
	}
}

static void print_text(const struct check *c)
{
	printf("framewalk check: ");
	switch (c->o.mode) {
	case MODE_PROCESS:
		printf("process %d (", (int)c->o.pid);
		put_escaped(c->comm);
		printf(")\n");
		break;
	case MODE_INSTALL:
		printf("installation ");
		put_escaped(c->o.python);
		printf("\n");
		break;
	case MODE_FILES:
		printf("%d file%s\n", c->o.nfiles, c->o.nfiles == 1 ? "" : "s");
		break;
	case MODE_MACHINE:
		printf("this machine\n");
		break;
	}
	if (c->interp.present)
		print_interp(c);
	if (c->o.mode != MODE_MACHINE)
		print_modules(c);
	print_env(c);
	print_backends(c);
	printf("\n");
	if (!c->nproblems) {
		printf("Result: ok, everything required works (exit 0)\n");
		return;
	}
	printf("Result: %zu problem%s (exit %d)\n", c->nproblems, c->nproblems == 1 ? "" : "s",
	       c->exit_code);
	for (size_t i = 0; i < c->nproblems; i++) {
		printf("  - ");
		put_escaped(strbuf_str(&c->problems[i]));
		putchar('\n');
	}
}

/* ------------------------------------------------------------------ */
/* JSON report                                                         */

static void jkey_str(struct json *j, const char *k, const char *v)
{
	json_key(j, k);
	if (v)
		json_string(j, v);
	else
		json_null(j);
}

static void jkey_int(struct json *j, const char *k, int64_t v)
{
	json_key(j, k);
	json_int(j, v);
}

static void jkey_bool(struct json *j, const char *k, int v)
{
	json_key(j, k);
	if (v < 0)
		json_null(j);
	else
		json_bool(j, v);
}

static void jkey_sysctl(struct json *j, const char *k, long v)
{
	json_key(j, k);
	if (v == AUDIT_UNSET)
		json_null(j);
	else
		json_int(j, v);
}

static void jkey_err(struct json *j, const char *k, int err)
{
	json_key(j, k);
	if (err)
		json_string(j, strerror(-err));
	else
		json_null(j);
}

static void json_module(struct json *j, const struct check_module *m)
{
	struct strbuf reason = STRBUF_INIT;

	json_begin_object(j);
	jkey_str(j, "name", basename_of(m->name));
	jkey_str(j, "path", m->name);
	jkey_str(j, "host_path", m->host_path);
	jkey_str(j, "role", m->role);
	jkey_str(j, "needed_by", m->needed_by);
	jkey_err(j, "error", m->err);
	jkey_str(j, "error_detail", m->why[0] ? m->why : NULL);
	jkey_str(j, "on_disk", m->replaced ? "replaced" : m->deleted ? "deleted" : "same");
	jkey_bool(j, "replaced_on_disk", m->deleted);
	if (!m->err) {
		jkey_str(j, "build_id", m->r.build_id[0] ? m->r.build_id : NULL);
		jkey_str(j, "frame_pointers", m->r.x86_64 ? fpa_verdict_name(m->r.verdict) : "unknown");
		json_key(j, "fp_percent");
		if (m->r.with_fp + m->r.without_fp)
			json_double(j, (double)(int)(m->r.fp_percent * 10 + 0.5) / 10);
		else
			json_null(j);
		json_key(j, "functions");
		json_begin_object(j);
		jkey_int(j, "found", (int64_t)m->r.functions);
		jkey_int(j, "examined", (int64_t)m->r.sampled);
		jkey_int(j, "with_fp", (int64_t)m->r.with_fp);
		jkey_int(j, "without_fp", (int64_t)m->r.without_fp);
		jkey_int(j, "neutral", (int64_t)m->r.neutral);
		jkey_int(j, "without_cfi", (int64_t)m->r.no_cfi);
		json_end_object(j);
		json_key(j, "examples_without_fp");
		json_begin_array(j);
		for (size_t k = 0; k < m->r.nexamples; k++)
			json_string(j, m->r.examples[k]);
		json_end_array(j);
		jkey_str(j, "unwind_tables", m->r.cfi_section);
		jkey_int(j, "fdes", (int64_t)m->r.fdes);
		jkey_str(j, "unwind", m->r.x86_64 ? fpa_unwind_name(fpa_unwind_of(&m->r)) : "unknown");
		jkey_str(j, "symbols", fpa_symbols_name(m->r.symbols));
		jkey_bool(j, "stripped", m->r.symbols != FPA_SYMS_SYMTAB);
		json_key(j, "debug_info");
		json_begin_object(j);
		jkey_str(j, "via", m->r.debug_via);
		jkey_str(j, "path", m->r.debug_path[0] ? m->r.debug_path : NULL);
		jkey_str(j, "debuglink", m->r.debuglink[0] ? m->r.debuglink : NULL);
		jkey_bool(j, "minidebuginfo", m->r.minidebuginfo);
		json_end_object(j);
		json_key(j, "chain_break");
		if (module_breaks(m)) {
			chain_reason(m, &reason);
			json_string(j, strbuf_str(&reason));
		} else {
			json_null(j);
		}
	}
	json_end_object(j);
	strbuf_release(&reason);
}

static void json_interp(struct json *j, const struct check *c)
{
	const struct check_interp *ip = &c->interp;
	const struct check_module *m = ip->mod >= 0 ? &c->mods[ip->mod] : NULL;

	json_key(j, "interpreter");
	if (!ip->present) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	jkey_str(j, "version", ip->version);
	jkey_str(j, "module", ip->module);
	jkey_str(j, "build", ip->shared ? "shared" : "static");
	jkey_bool(j, "free_threaded", ip->free_threaded);
	jkey_bool(j, "debug", ip->debug);
	jkey_str(j, "sysconfig", ip->sc_err ? NULL : ip->sc.path);
	jkey_str(j, "cflags", ip->sc_err ? NULL : ip->sc.cflags);
	jkey_str(j, "configured_frame_pointers",
		 ip->configured == SYSCONFIG_FP_WITH ? "yes" :
		 ip->configured == SYSCONFIG_FP_WITHOUT ? "no" : "unknown");
	jkey_str(j, "configured_because", ip->configured_why.len ?
		 strbuf_str(&ip->configured_why) : NULL);
	jkey_str(j, "frame_pointers", m && !m->err ? fpa_verdict_name(m->r.verdict) : "unknown");
	json_key(j, "fp_percent");
	if (m && !m->err && m->r.with_fp + m->r.without_fp)
		json_double(j, (double)(int)(m->r.fp_percent * 10 + 0.5) / 10);
	else
		json_null(j);
	json_end_object(j);
}

static void json_env(struct json *j, const struct check *c)
{
	static const int caps[] = { AUDIT_CAP_SYS_PTRACE, AUDIT_CAP_PERFMON, AUDIT_CAP_BPF,
				    AUDIT_CAP_SYS_ADMIN, AUDIT_CAP_SYSLOG };
	const struct audit_env *e = &c->env;

	json_key(j, "environment");
	json_begin_object(j);
	jkey_str(j, "user", e->user);
	jkey_int(j, "uid", e->euid);
	jkey_int(j, "gid", e->gid);
	json_key(j, "capabilities");
	json_begin_object(j);
	for (size_t i = 0; i < ARRAY_SIZE(caps); i++)
		jkey_bool(j, audit_cap_name(caps[i]), audit_has_cap(e, caps[i]));
	json_end_object(j);
	jkey_sysctl(j, "perf_event_paranoid", e->perf_event_paranoid);
	jkey_sysctl(j, "kptr_restrict", e->kptr_restrict);
	jkey_sysctl(j, "yama_ptrace_scope", e->ptrace_scope);
	jkey_sysctl(j, "unprivileged_bpf_disabled", e->unprivileged_bpf_disabled);
	jkey_bool(j, "in_container", e->in_container);
	jkey_str(j, "container_evidence", e->container_why);
	jkey_str(j, "cgroup", e->cgroup);
	jkey_int(j, "seccomp", e->seccomp);
	jkey_bool(j, "no_new_privs", e->no_new_privs);
	jkey_str(j, "kernel", e->kernel);
	jkey_bool(j, "btf", e->btf);
	jkey_bool(j, "sysfs", e->sysfs);
	jkey_bool(j, "kallsyms_visible", e->kallsyms);
	json_key(j, "bpf_probe");
	json_begin_object(j);
	jkey_err(j, "prog_load", e->bpf_load_err);
	jkey_err(j, "perf_event_open", e->perf_open_err);
	jkey_err(j, "attach", e->bpf_load_err || e->perf_open_err ? 0 : e->bpf_attach_err);
	jkey_bool(j, "ok", !e->bpf_load_err && !e->perf_open_err && !e->bpf_attach_err);
	jkey_bool(j, "backend_built", e->bpf_built);
	json_key(j, "backend_program");
	if (e->bpf_backend_err == -ECANCELED)
		json_null(j);           /* not tried */
	else if (e->bpf_backend_err)
		json_string(j, e->bpf_backend_why[0] ? e->bpf_backend_why :
			    strerror(-e->bpf_backend_err));
	else
		json_string(j, "loaded");
	json_end_object(j);
	json_end_object(j);
}

static void json_target(struct json *j, const struct check *c)
{
	const struct audit_target *t = &c->target;

	json_key(j, "target");
	if (!c->has_target) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	jkey_int(j, "pid", t->pid);
	jkey_str(j, "comm", c->comm);
	json_key(j, "uid");
	if (t->uid_known)
		json_int(j, t->uid);
	else
		json_null(j);
	jkey_str(j, "user", t->uid_known ? t->user : NULL);
	jkey_str(j, "root", t->root[0] ? t->root : NULL);
	jkey_bool(j, "chroot", t->chroot);
	jkey_bool(j, "in_container", t->in_container);
	jkey_str(j, "container_evidence", t->container_why);
	json_key(j, "same_namespaces");
	json_begin_object(j);
	for (int i = 0; i < NS_COUNT; i++)
		jkey_bool(j, audit_ns_names[i], t->ns_same[i]);
	json_end_object(j);
	jkey_int(j, "seccomp", t->seccomp);
	jkey_int(j, "tracer_pid", t->tracer);
	jkey_str(j, "python", c->discover_err ? NULL : c->interp.version);
	jkey_str(j, "discover_error", c->discover_err ? strbuf_str(&c->discover_why) : NULL);
	json_end_object(j);
}

static int print_json(const struct check *c)
{
	static const char *const modes[] = { "machine", "process", "installation", "files" };
	static const unsigned bits[AUDIT_NBACKENDS] = { NEED_VM, NEED_PTRACE, NEED_BPF };
	struct strbuf reason = STRBUF_INIT;
	struct json j;

	json_init(&j, stdout);
	json_begin_object(&j);
	jkey_int(&j, "format_version", 1);
	jkey_str(&j, "mode", modes[c->o.mode]);
	jkey_int(&j, "exit_code", c->exit_code);
	jkey_bool(&j, "ok", c->exit_code == 0);
	json_key(&j, "problems");
	json_begin_array(&j);
	for (size_t i = 0; i < c->nproblems; i++)
		json_string(&j, strbuf_str(&c->problems[i]));
	json_end_array(&j);
	json_target(&j, c);
	json_interp(&j, c);
	json_key(&j, "modules");
	if (c->o.mode == MODE_MACHINE) {
		json_null(&j);
	} else {
		json_begin_array(&j);
		for (size_t i = 0; i < c->nmods; i++)
			json_module(&j, &c->mods[i]);
		json_end_array(&j);
	}
	json_key(&j, "chain_breaks");
	json_begin_array(&j);
	for (size_t i = 0; i < c->nmods; i++) {
		if (!module_breaks(&c->mods[i]))
			continue;
		strbuf_reset(&reason);
		chain_reason(&c->mods[i], &reason);
		json_begin_object(&j);
		jkey_str(&j, "module", basename_of(c->mods[i].name));
		jkey_str(&j, "unwind", fpa_unwind_name(fpa_unwind_of(&c->mods[i].r)));
		jkey_str(&j, "reason", strbuf_str(&reason));
		json_end_object(&j);
	}
	json_end_array(&j);
	json_env(&j, c);
	json_key(&j, "backends");
	json_begin_array(&j);
	for (int i = 0; i < AUDIT_NBACKENDS; i++) {
		const struct audit_backend *b = &c->backends[i];

		json_begin_object(&j);
		jkey_str(&j, "name", b->name);
		jkey_str(&j, "status", audit_backend_status_name(b->status));
		jkey_bool(&j, "required", (c->o.need & bits[i]) != 0);
		jkey_str(&j, "reason", strbuf_str(&b->reason));
		jkey_str(&j, "note", b->note.len ? strbuf_str(&b->note) : NULL);
		json_key(&j, "fixes");
		json_begin_array(&j);
		for (size_t k = 0; k < b->nfixes; k++)
			json_string(&j, b->fixes[k]);
		json_end_array(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_newline(&j);
	strbuf_release(&reason);
	return json_finish(&j);
}

/* ------------------------------------------------------------------ */

static void check_release(struct check *c)
{
	for (size_t i = 0; i < c->nmods; i++) {
		free(c->mods[i].name);
		free(c->mods[i].host_path);
		free(c->mods[i].needed_by);
	}
	free(c->mods);
	elf_cache_free(c->files);
	for (size_t i = 0; i < ARRAY_SIZE(c->problems); i++)
		strbuf_release(&c->problems[i]);
	strbuf_release(&c->discover_why);
	strbuf_release(&c->interp.configured_why);
	sysconfig_release(&c->interp.sc);
	audit_backends_release(c->backends);
}

/* framewalk's own BPF program through the verifier, when the trivial one loaded. */
static void probe_bpf_backend(struct audit_env *e)
{
	struct strbuf why = STRBUF_INIT;

	e->bpf_built = bpf_backend_built();
	if (!e->bpf_built || !audit_env_wants_bpf_backend(e))
		return;
	e->bpf_backend_err = bpf_backend_probe(&why);
	xsnprintf(e->bpf_backend_why, sizeof(e->bpf_backend_why), "%s", strbuf_str(&why));
	strbuf_release(&why);
}

int cmd_check(int argc, char **argv)
{
	struct check *c = xcalloc(1, sizeof(*c));
	int code, ret;

	ret = parse_args(argc, argv, &c->o);
	if (ret) {
		free(c);
		return ret < 0 ? FW_EXIT_OK : ret;
	}
	c->interp.mod = -1;
	c->files = elf_cache_new();
	audit_env_probe(&c->env);
	probe_bpf_backend(&c->env);
	if (c->o.mode == MODE_PROCESS) {
		if (proc_exists(c->o.pid) == -ESRCH) {
			fw_error("no such process: %d", (int)c->o.pid);
			elf_cache_free(c->files);
			free(c);
			return FW_EXIT_NO_PROCESS;
		}
		c->has_target = !audit_target_probe(&c->env, c->o.pid, &c->target);
		gather_process(c);
	} else if (c->o.mode == MODE_INSTALL) {
		gather_install(c);
	}
	if (c->o.nfiles)
		gather_files(c);
	audit_backends(&c->env, c->has_target ? &c->target : NULL, c->backends);
	decide(c);
	if (c->o.json) {
		ret = print_json(c);
		if (ret)
			fw_error("writing the JSON report failed: %s", strerror(-ret));
	} else {
		print_text(c);
	}
	code = c->exit_code;
	check_release(c);
	free(c);
	return code;
}

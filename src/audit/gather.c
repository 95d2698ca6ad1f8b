/*
 * Implementation of gather.h. The order of the module list is part of the
 * report: a process's interpreter first, then its executable, then the rest
 * in mapping order; an installation's as install_modules() lists them.
 * Every file is opened and audited once, through one elf_cache.
 */
#include <errno.h>
#include <sys/stat.h>

#include "audit/gather.h"
#include "audit/install.h"
#include "elf/elfread.h"
#include "elf/modules.h"
#include "python/discover.h"
#include "python/version.h"
#include "target/proc.h"
#include "util/util.h"

void audit_facts_init(struct audit_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->interp.mod = -1;
	f->files = elf_cache_new();
	audit_env_probe(&f->env);
}

void audit_facts_release(struct audit_facts *f)
{
	for (size_t i = 0; i < f->nmods; i++) {
		free(f->mods[i].name);
		free(f->mods[i].host_path);
		free(f->mods[i].needed_by);
	}
	free(f->mods);
	elf_cache_free(f->files);
	strbuf_release(&f->discover_why);
	strbuf_release(&f->install_why);
	strbuf_release(&f->interp.configured_why);
	sysconfig_release(&f->interp.sc);
	audit_backends_release(f->backends);
}

void audit_gather_backends(struct audit_facts *f)
{
	audit_backends(&f->env, f->has_target ? &f->target : NULL, f->backends);
}

const char *audit_module_basename(const struct audit_module *m)
{
	return path_base(m->name);
}

int audit_module_breaks(const struct audit_module *m)
{
	return !m->err && m->r.analysed && fpa_unwind_of(&m->r) != FPA_UNWIND_FP;
}

void audit_chain_reason(const struct audit_module *m, struct strbuf *sb)
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

static struct audit_module *add_module(struct audit_facts *f, const char *name, const char *host,
				       const char *role, const char *needed_by)
{
	struct audit_module *m;

	f->mods = xgrow(f->mods, sizeof(*f->mods), f->nmods + 1, &f->amods);
	m = &f->mods[f->nmods++];
	memset(m, 0, sizeof(*m));
	m->name = xstrdup(name);
	m->host_path = host ? xstrdup(host) : NULL;
	m->role = role;
	m->needed_by = needed_by ? xstrdup(needed_by) : NULL;
	return m;
}

/* Open and audit the file at m->host_path (installations and files given by name). */
static void audit_one(struct audit_facts *f, struct audit_module *m, const char *root)
{
	struct elf_info *file;
	int loaded;

	if (!m->host_path) {
		m->r.verdict = FPA_UNKNOWN;
		return;
	}
	file = elf_cache_open_path(f->files, m->host_path, m->name, root, &loaded);
	if (!file) {
		m->err = errno == EACCES ? -EACCES : -errno;
		return;
	}
	m->err = file->audit_err;
	m->r = file->audit;
	elf_cache_put(f->files, file);
}

/*
 * The interpreter's build flags and configuration, from what its module's
 * file says (ff: python/filefacts.h, NULL when it could not be read) and
 * prefix. free_threaded: a running process's own answer (its debug
 * offsets, as discovery read them: what the sampler reads by), -1 for a
 * file's, from its symbols and then its configuration.
 */
static void interp_details(struct audit_interp *ip, const struct py_file_facts *ff,
			   const char *exe_host, const char *stdlib_hint, int free_threaded)
{
	char bindir[PATH_MAX], prefix[PATH_MAX], stdlib[PATH_MAX + 64], path[PATH_MAX], flags[4];
	int major = 0, minor = 0;

	ip->free_threaded = ip->debug = -1;
	ip->sc_err = -ENOENT;
	if (ff && ff->version_ok) {
		major = ff->version.major;
		minor = ff->version.minor;
		if (!ip->version[0] || strlen(ff->version.text) > strlen(ip->version))
			xsnprintf(ip->version, sizeof(ip->version), "%s", ff->version.text);
	}
	if (ff) {
		ip->free_threaded = ff->free_threaded;
		ip->debug = ff->debug;
	}
	if (free_threaded >= 0)
		ip->free_threaded = free_threaded;
	if (stdlib_hint && stdlib_hint[0]) {
		xsnprintf(stdlib, sizeof(stdlib), "%s", stdlib_hint);
	} else {
		if (!major && sscanf(ip->version, "%d.%d", &major, &minor) != 2)
			return;
		path_dir(exe_host, bindir, sizeof(bindir));
		path_dir(bindir, prefix, sizeof(prefix));
		py_stdlib_dir(stdlib, sizeof(stdlib), prefix, "lib", major, minor, ip->free_threaded);
	}
	xsnprintf(flags, sizeof(flags), "%s%s", ip->free_threaded == 1 ? "t" : "",
		  ip->debug == 1 ? "d" : "");
	if (sysconfig_find(stdlib, flags, path, sizeof(path)) &&
	    sysconfig_find(stdlib, NULL, path, sizeof(path)))
		return;
	ip->sc_err = sysconfig_load(path, &ip->sc);
	if (!ip->sc_err) {
		ip->configured = sysconfig_frame_pointers(ip->sc.cflags, &ip->configured_why);
		if (ip->sc.gil_disabled >= 0 && free_threaded < 0)
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
static void front_module(struct audit_facts *f, const char *role)
{
	for (size_t i = 0; i < f->nmods; i++) {
		struct audit_module m;

		if (strcmp(f->mods[i].role, role))
			continue;
		m = f->mods[i];
		memmove(f->mods + 1, f->mods, i * sizeof(*f->mods));
		f->mods[0] = m;
		if (f->interp.mod >= 0 && (size_t)f->interp.mod < i)
			f->interp.mod++;
		else if (f->interp.mod >= 0 && (size_t)f->interp.mod == i)
			f->interp.mod = 0;
		return;
	}
}

void audit_gather_process(struct audit_facts *f, pid_t pid)
{
	struct target_mem mem;
	struct py_target t;
	struct module_map mm;
	char exe_host[PATH_MAX + 64] = "";
	int ret;

	f->has_target = !audit_target_probe(&f->env, pid, &f->target);
	proc_task_comm(pid, pid, f->comm, sizeof(f->comm));
	mem_init_pid(&mem, pid);
	memset(&t, 0, sizeof(t));
	f->discover_err = py_discover(pid, &mem, &t, &f->discover_why);
	mem_release(&mem);
	/* A process that went, or a kernel thread: nothing more to read. */
	if (f->discover_err == -ESRCH)
		return;
	/*
	 * The modules as the unwinder sees them: the same layer, the same files
	 * (no debuginfod server asked, no symbols loaded: the audit is all check reads).
	 */
	ret = modules_load(&mm, pid, f->files, MODULES_NO_DEBUGINFOD | MODULES_NO_SYMBOLS, NULL);
	if (ret) {
		f->maps_err = ret;
		modules_release(&mm);
		return;
	}
	for (size_t i = 0; i < mm.n; i++) {
		const struct fw_module *m = &mm.mods[i];
		struct audit_module *cm;
		const char *role = "library";

		if (!f->discover_err && m->dev == t.module_dev && m->ino == t.module_ino)
			role = "interpreter";
		else if (!f->discover_err && !strcmp(m->path, t.exe))
			role = "executable";
		else if (is_extension_path(m->path))
			role = "extension";
		cm = add_module(f, m->path, m->host_path, role, NULL);
		cm->deleted = m->deleted;
		cm->replaced = m->replaced;
		module_problem(m, pid, cm->why, sizeof(cm->why));
		if (!m->file) {
			cm->err = m->err;
		} else {
			cm->err = m->file->audit_err;
			cm->r = m->file->audit;
		}
		if (!strcmp(role, "interpreter"))
			f->interp.mod = (int)(f->nmods - 1);
		if (!f->discover_err && !strcmp(m->path, t.exe))
			xsnprintf(exe_host, sizeof(exe_host), "%s", m->host_path);
	}
	front_module(f, "executable");
	front_module(f, "interpreter");
	if (!f->discover_err) {
		f->interp.present = 1;
		xsnprintf(f->interp.version, sizeof(f->interp.version), "%s", t.version);
		xsnprintf(f->interp.module, sizeof(f->interp.module), "%s", t.module);
		f->interp.shared = t.shared;
		if (!exe_host[0])
			xsnprintf(exe_host, sizeof(exe_host), "/proc/%d/root%s", (int)pid, t.exe);
		/* what discovery read of the module's file (python/filefacts.h) */
		interp_details(&f->interp, &t.module_facts, exe_host, NULL, t.offsets.free_threaded);
	}
	modules_release(&mm);
}

void audit_gather_install(struct audit_facts *f, const char *python, const char *root_arg,
			  const char *site)
{
	struct install_list list = { 0 };
	struct py_install in;
	const char *root;
	int ret;

	ret = install_open(python, root_arg, &in, &f->install_why);
	if (ret) {
		f->install_err = ret;
		install_release(&in);
		return;
	}
	root = in.root;
	f->interp.present = 1;
	xsnprintf(f->interp.version, sizeof(f->interp.version), "%s", in.version);
	install_modules(&in, site, &list);
	f->modules_truncated = list.truncated;
	for (size_t i = 0; i < list.n; i++) {
		const struct install_module *im = &list.v[i];
		struct audit_module *cm = add_module(f, im->name, im->host_path,
						     install_role_name(im->role), im->needed_by);

		audit_one(f, cm, root);
		if (im->role == ROLE_INTERPRETER) {
			f->interp.mod = (int)(f->nmods - 1);
			xsnprintf(f->interp.module, sizeof(f->interp.module), "%s", im->name);
		}
	}
	f->interp.shared = in.libpython[0] != 0;
	/* what install_open read of the interpreter's file */
	interp_details(&f->interp, &in.file, in.exe, in.stdlib, -1);
	install_list_release(&list);
	install_release(&in);
}

void audit_gather_files(struct audit_facts *f, char *const *files, int n)
{
	for (int i = 0; i < n; i++) {
		char real[PATH_MAX];
		struct audit_module *cm;
		struct stat st;

		if (!realpath(files[i], real)) {
			cm = add_module(f, files[i], NULL, "module", NULL);
			cm->err = -errno;
		} else if (!stat(real, &st) && S_ISDIR(st.st_mode)) {
			cm = add_module(f, real, NULL, "module", NULL);
			cm->err = -EISDIR;
		} else {
			cm = add_module(f, real, real, "module", NULL);
			audit_one(f, cm, "");
		}
		cm->given = files[i];
	}
}

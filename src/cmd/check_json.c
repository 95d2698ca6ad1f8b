/*
 * The JSON report of `framewalk check --json` (format_version 1, described
 * in docs/CHECK.md): the same facts and verdict as the text report, for
 * scripts.
 */
#include <errno.h>

#include "cmd/check.h"
#include "output/json.h"
#include "util/util.h"

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

static void json_module(struct json *j, const struct audit_module *m)
{
	struct strbuf reason = STRBUF_INIT;

	json_begin_object(j);
	jkey_str(j, "name", audit_module_basename(m));
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
		jkey_str(j, "frame_pointers", m->r.analysed ? fpa_verdict_name(m->r.verdict) : "unknown");
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
		json_key(j, "branch_protection");
		json_begin_array(j);
		for (unsigned bit = 1; bit <= FPA_BP_SHSTK; bit <<= 1)
			if (m->r.branch_protection & bit)
				json_string(j, fpa_branch_protection_name(bit));
		json_end_array(j);
		jkey_str(j, "unwind_tables", m->r.cfi_section);
		jkey_int(j, "fdes", (int64_t)m->r.fdes);
		jkey_bool(j, "unwind_tables_refused", m->r.cfi_refused);
		jkey_str(j, "unwind", m->r.analysed ? fpa_unwind_name(fpa_unwind_of(&m->r)) : "unknown");
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
		if (audit_module_breaks(m)) {
			audit_chain_reason(m, &reason);
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
	const struct audit_interp *ip = &c->f.interp;
	const struct audit_module *m = ip->mod >= 0 ? &c->f.mods[ip->mod] : NULL;

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
	const struct audit_env *e = &c->f.env;

	json_key(j, "environment");
	json_begin_object(j);
	jkey_str(j, "user", e->user);
	jkey_int(j, "uid", e->euid);
	jkey_int(j, "gid", e->gid);
	json_key(j, "capabilities");
	json_begin_object(j);
	for (size_t i = 0; i < privilege_ncaps; i++)
		jkey_bool(j, privilege_caps[i].name, audit_has_cap(e, (int)privilege_caps[i].cap));
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
	const struct audit_target *t = &c->f.target;

	json_key(j, "target");
	if (!c->f.has_target) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	jkey_int(j, "pid", t->pid);
	jkey_str(j, "comm", c->f.comm);
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
	jkey_str(j, "python", c->f.discover_err ? NULL : c->f.interp.version);
	jkey_str(j, "discover_error", c->f.discover_err ? strbuf_str(&c->f.discover_why) : NULL);
	json_end_object(j);
}

int check_print_json(const struct check *c)
{
	static const char *const modes[] = { "machine", "process", "installation", "files" };
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
	if (c->o.mode == CHECK_MACHINE) {
		json_null(&j);
	} else {
		json_begin_array(&j);
		for (size_t i = 0; i < c->f.nmods; i++)
			json_module(&j, &c->f.mods[i]);
		json_end_array(&j);
	}
	json_key(&j, "chain_breaks");
	json_begin_array(&j);
	for (size_t i = 0; i < c->f.nmods; i++) {
		if (!audit_module_breaks(&c->f.mods[i]))
			continue;
		strbuf_reset(&reason);
		audit_chain_reason(&c->f.mods[i], &reason);
		json_begin_object(&j);
		jkey_str(&j, "module", audit_module_basename(&c->f.mods[i]));
		jkey_str(&j, "unwind", fpa_unwind_name(fpa_unwind_of(&c->f.mods[i].r)));
		jkey_str(&j, "reason", strbuf_str(&reason));
		json_end_object(&j);
	}
	json_end_array(&j);
	json_env(&j, c);
	json_key(&j, "backends");
	json_begin_array(&j);
	for (int i = BACKEND_VM; i < BACKEND_COUNT; i++) {
		const struct audit_backend *b = check_backend(c, (enum backend)i);

		json_begin_object(&j);
		jkey_str(&j, "name", backend_name((enum backend)i));
		jkey_str(&j, "status", audit_backend_status_name(b->status));
		jkey_bool(&j, "required", check_requires(c, (enum backend)i));
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
	{
		int whole;
		enum backend d = check_default_backend(c, &whole);

		jkey_str(&j, "default_backend", backend_name(d));
		jkey_bool(&j, "default_whole_stacks", whole);
	}
	json_end_object(&j);
	json_newline(&j);
	strbuf_release(&reason);
	return json_finish(&j);
}

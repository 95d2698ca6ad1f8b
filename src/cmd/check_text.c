/*
 * The text report of `framewalk check` (docs/CHECK.md): what was checked,
 * the interpreter, the module table and where the frame-pointer chain
 * breaks, permissions and environment, the backends with their fixes, and
 * the result. Names from the target and its files are escaped for the
 * terminal.
 */
#include <errno.h>

#include "arch/arch.h"
#include "cmd/check.h"
#include "output/format.h"
#include "util/util.h"

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
static const char *disk_note(const struct audit_module *m)
{
	if (m->replaced)
		return "replaced on disk since the process started (another file is at its path "
		       "now); framewalk reads the file the process mapped";
	return "replaced on disk since the process started (deleted: no file is at its path "
	       "now); framewalk reads the file the process mapped";
}

/* ", PAC, BTI": the branch protection the file's note records (fpaudit.h). */
static void protection_cell(const struct audit_module *m, struct strbuf *sb)
{
	for (unsigned bit = 1; bit <= FPA_BP_SHSTK; bit <<= 1)
		if (m->r.branch_protection & bit)
			strbuf_addf(sb, ", %s", fpa_branch_protection_name(bit));
}

static void fp_cell(const struct audit_module *m, struct strbuf *sb)
{
	if (m->err) {
		strbuf_addf(sb, "unreadable (%s)", m->err == -ENOEXEC ? "not a 64-bit ELF" :
			    strerror(-m->err));
		return;
	}
	if (!m->r.analysed) {
		strbuf_addf(sb, "unknown (not %s)", arch_name);
		protection_cell(m, sb);
		return;
	}
	strbuf_addstr(sb, fpa_verdict_name(m->r.verdict));
	if (m->r.verdict != FPA_NA)
		strbuf_addf(sb, " (%d%%)", (int)m->r.fp_percent);
	if (m->r.verdict == FPA_YES || m->r.verdict == FPA_NA) {
		if (!m->r.cfi_section)
			strbuf_addstr(sb, ", no unwind tables");
	} else if (fpa_unwind_of(&m->r) == FPA_UNWIND_DWARF) {
		strbuf_addstr(sb, ", unwind tables present");
	} else {
		strbuf_addstr(sb, ", no unwind tables: cannot unwind");
	}
	protection_cell(m, sb);
}

static void symbols_cell(const struct audit_module *m, struct strbuf *sb)
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
	const struct audit_interp *ip = &c->f.interp;
	const struct audit_module *m = ip->mod >= 0 ? &c->f.mods[ip->mod] : NULL;

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
	unsigned char *done = xcalloc(c->f.nmods ? c->f.nmods : 1, 1);

	*count = 0;
	for (size_t i = 0; i < c->f.nmods; i++) {
		size_t n = 0;

		if (done[i] || !audit_module_breaks(&c->f.mods[i]))
			continue;
		strbuf_reset(&reason);
		audit_chain_reason(&c->f.mods[i], &reason);
		strbuf_addstr(out, *count ? "; " : "");
		for (size_t k = i; k < c->f.nmods; k++) {
			if (done[k] || !audit_module_breaks(&c->f.mods[k]))
				continue;
			strbuf_reset(&other);
			audit_chain_reason(&c->f.mods[k], &other);
			if (strcmp(strbuf_str(&reason), strbuf_str(&other)))
				continue;
			done[k] = 1;
			strbuf_addstr(out, n++ ? ", " : "");
			strbuf_addstr(out, audit_module_basename(&c->f.mods[k]));
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
	struct strbuf *fp = xcalloc(c->f.nmods ? c->f.nmods : 1, sizeof(*fp));
	struct strbuf *sy = xcalloc(c->f.nmods ? c->f.nmods : 1, sizeof(*sy));
	size_t wname = 6, wfp = 14, wsy = 7, nbreak = 0, analysed = 0;
	struct strbuf breaks = STRBUF_INIT;

	for (size_t i = 0; i < c->f.nmods; i++) {
		size_t n = strlen(audit_module_basename(&c->f.mods[i]));

		fp_cell(&c->f.mods[i], &fp[i]);
		symbols_cell(&c->f.mods[i], &sy[i]);
		wname = n > wname ? n : wname;
		wfp = fp[i].len > wfp ? fp[i].len : wfp;
		wsy = sy[i].len > wsy ? sy[i].len : wsy;
	}
	printf("\nModules: %zu%s\n", c->f.nmods, c->f.modules_truncated ? " (list truncated)" : "");
	if (c->f.maps_err)
		printf("  cannot read /proc/%d/maps: %s\n", (int)c->o.pid, strerror(-c->f.maps_err));
	if (c->f.nmods)
		printf("  %-*s  %-*s  %-*s  %s\n", (int)wname, "MODULE", (int)wfp, "FRAME POINTERS",
		       (int)wsy, "SYMBOLS", "BUILD-ID");
	for (size_t i = 0; i < c->f.nmods; i++) {
		const struct audit_module *m = &c->f.mods[i];
		struct strbuf name = STRBUF_INIT;

		escape_append(&name, audit_module_basename(m), ESCAPE_TERMINAL);
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
				printf("      unwind tables: %s (%zu FDEs%s); build-id: %s\n",
				       m->r.cfi_section ? m->r.cfi_section : "none", m->r.fdes,
				       m->r.cfi_refused ? "; refused: a register number or nesting no "
							  "compiler writes, docs/SECURITY.md" : "",
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
	for (size_t i = 0; i < c->f.nmods; i++)
		analysed += !c->f.mods[i].err && c->f.mods[i].r.analysed;
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
	const struct audit_env *e = &c->f.env;
	const struct audit_target *t = &c->f.target;

	printf("\nPermissions and environment\n");
	printf("  user: %s (uid %u, gid %u)\n  capabilities:", e->user, (unsigned)e->euid,
	       (unsigned)e->gid);
	for (size_t i = 0; i < privilege_ncaps; i++)
		printf(" %s %s%s", privilege_caps[i].name,
		       audit_has_cap(e, (int)privilege_caps[i].cap) ? "yes" : "no",
		       i + 1 < privilege_ncaps ? "," : "\n");
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
	if (!c->f.has_target)
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
	printf("\nBackends%s\n", c->f.has_target ? " for this process" : "");
	for (int i = BACKEND_VM; i < BACKEND_COUNT; i++) {
		const struct audit_backend *b = check_backend(c, (enum backend)i);

		printf("  %-7s %-9s %s%s\n", backend_name((enum backend)i),
		       audit_backend_status_name(b->status), strbuf_str(&b->reason),
		       check_requires(c, (enum backend)i) ? " [required]" : "");
		for (size_t k = 0; k < b->nfixes && b->status != AUDIT_USABLE; k++)
			printf("  %-7s %-9s fix: %s\n", "", "", b->fixes[k]);
		for (size_t k = 0; k < b->nfixes && b->status == AUDIT_USABLE; k++)
			printf("  %-7s %-9s for more: %s\n", "", "", b->fixes[k]);
		if (b->note.len)
			printf("  %-7s %-9s note: %s\n", "", "", strbuf_str(&b->note));
	}
	{
		enum backend d = check_default_backend(c, NULL);
		const struct backend_info *bi = backend_info(d);

		printf("  default: record and top use %s here", bi->name);
		/* may read some processes, not others: the next one auto takes does those */
		if (check_backend(c, d)->status == AUDIT_LIMITED && d != BACKEND_VM)
			printf(" (for the processes %s may read, above; %s for the others)", bi->name,
			       backend_name(backend_auto_pick(BACKEND_USABLE(VM, 1))));
		printf(": %s%s%s\n", bi->by_default, bi->caveat ? "; " : "",
		       bi->caveat ? bi->caveat : "");
	}
}

void check_print_text(const struct check *c)
{
	printf("framewalk check: ");
	switch (c->o.mode) {
	case CHECK_PROCESS:
		printf("process %d (", (int)c->o.pid);
		put_escaped(c->f.comm);
		printf(")\n");
		break;
	case CHECK_INSTALL:
		printf("installation ");
		put_escaped(c->o.python);
		printf("\n");
		break;
	case CHECK_FILES:
		printf("%d file%s\n", c->o.nfiles, c->o.nfiles == 1 ? "" : "s");
		break;
	case CHECK_MACHINE:
		printf("this machine\n");
		break;
	}
	if (c->f.interp.present)
		print_interp(c);
	if (c->o.mode != CHECK_MACHINE)
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

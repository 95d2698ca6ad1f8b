/*
 * Implementation of symbolize.h: what a file says of an address comes from
 * elf/addrinfo.h (shared by every process mapping the file); here are the
 * names made up for addresses without a symbol, the perf map, the
 * interpreter-specific classification the merge step needs, and the
 * process's own bounded cache by address.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

#include "elf/addrinfo.h"
#include "elf/demangle.h"
#include "symbols/symbolize.h"
#include "target/proc.h"
#include "target/safe_open.h"
#include "util/strbuf.h"
#include "util/util.h"

static const char *const internal_prefixes[] = {
	"_PyEval_Vector", "PyEval_EvalCode", "_PyFunction_Vectorcall", "PyObject_Vectorcall",
	"_PyObject_Vectorcall", "PyObject_Call", "_PyObject_Call", "_PyObject_MakeTpCall",
	"PyVectorcall_Call", "_PyVectorcall_Call", "method_vectorcall", "cfunction_vectorcall",
	"cfunction_call", "slot_tp_call", "vectorcall_method", "_Py_call", "call_function",
	"_PyObject_FastCall", "PyObject_CallOneArg", "_PyEval_EvalCode", "function_code_fastcall",
	"_PyCFunction_FastCall", "_PyMethodDef_", "method_vectorcall_", "object_vacall",
	"_PyObject_VectorcallTstate", "thread_run", "t_bootstrap", "pythread_wrapper",
	"context_run", "slot_tp_init", "type_call", "_PyEval_EvalFrame",
};

static const char *const entry_names[] = {
	"_start", "__libc_start_main", "__libc_start_call_main", "start_thread", "clone",
	"clone3", "__clone", "__clone3", "__GI___clone3", "__GI___clone",
};

void symbolizer_init(struct symbolizer *s, struct module_map *mm)
{
	memset(s, 0, sizeof(*s));
	s->mm = mm;
}

/* Forget every entry; the array is kept for the next ones. */
static void entries_clear(struct symbolizer *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->entries[i].owned);
		for (size_t k = 0; k < s->entries[i].sym.ninl; k++)
			free((char *)s->entries[i].inl[k].name);
		free(s->entries[i].inl);
	}
	s->n = 0;
	hidx_release(&s->index);
}

void symbolizer_reset(struct symbolizer *s)
{
	entries_clear(s);
}

void symbolizer_release(struct symbolizer *s)
{
	entries_clear(s);
	free(s->entries);
	for (size_t i = 0; i < s->nperf; i++)
		free(s->perf_map[i].name);
	free(s->perf_map);
	memset(s, 0, sizeof(*s));
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void classify(struct native_symbol *sym)
{
	const char *n = sym->name;

	if (!strcmp(n, "_PyEval_EvalFrameDefault") || starts_with(n, "_PyEval_EvalFrameDefault."))
		sym->is_eval = 1;
	for (size_t i = 0; i < ARRAY_SIZE(internal_prefixes) && !sym->is_eval; i++)
		if (starts_with(n, internal_prefixes[i]))
			sym->is_internal = 1;
	/* Cython's Python-call wrapper: call machinery around the function's body */
	if (sym->linkage && starts_with(sym->linkage, "__pyx_pw_"))
		sym->is_internal = 1;
	for (size_t i = 0; i < ARRAY_SIZE(entry_names); i++)
		if (!strcmp(n, entry_names[i]))
			sym->is_thread_entry = 1;
}

int perf_map_parse_line(const char *line, struct perf_map_entry *e)
{
	const char *p;
	char *end;
	uint64_t start, size;

	start = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return -EINVAL;
	p = end + 1;
	size = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return -EINVAL;
	e->start = start;
	e->end = start + size;
	/* "name@VERSION" -> "name", as for a file's symbols */
	e->name = strcspn(end + 1, "@") ? xstrndup(end + 1, strcspn(end + 1, "@")) :
		  xstrdup(end + 1);
	return 0;
}

/*
 * /tmp/perf-PID.map lines: "START SIZE name" in hex. The file is the
 * target's (or anyone's who can write /tmp): opened inside the target's root
 * as a regular file only (target/safe_open.h), and read within
 * PERF_MAP_MAX_BYTES, PERF_MAP_MAX_ENTRIES and PERF_MAP_BUDGET_NS, so what
 * it holds costs at most that much once per process.
 */
static void load_perf_map(struct symbolizer *s)
{
	char root[64], path[64];
	struct safe_lines lines;
	uint64_t deadline;
	size_t alloc = 0, nlines = 0;
	pid_t nspid;
	char *line;
	int fd;

	s->perf_map_loaded = 1;
	/* In a container the target writes perf-1.map, not perf-<our pid for it>.map. */
	if (proc_ns_pid(s->mm->pid, &nspid))
		nspid = s->mm->pid;
	xsnprintf(root, sizeof(root), "/proc/%d/root", (int)s->mm->pid);
	xsnprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)nspid);
	fd = safe_open_in_dir(root, path);
	if (fd < 0)
		return;
	deadline = fw_now_ns() + PERF_MAP_BUDGET_NS;
	safe_lines_init(&lines, fd, PERF_MAP_MAX_BYTES);
	while (s->nperf < PERF_MAP_MAX_ENTRIES && (line = safe_lines_next(&lines))) {
		struct perf_map_entry e;

		if (++nlines % 4096 == 0 && fw_now_ns() > deadline)
			break;
		if (perf_map_parse_line(line, &e))
			continue;
		s->perf_map = xgrow(s->perf_map, sizeof(*s->perf_map), s->nperf + 1, &alloc);
		s->perf_map[s->nperf++] = e;
	}
	close(fd);
}

static const char *perf_map_lookup(struct symbolizer *s, uint64_t pc)
{
	if (!s->perf_map_loaded)
		load_perf_map(s);
	for (size_t i = s->nperf; i-- > 0;)
		if (pc >= s->perf_map[i].start && pc < s->perf_map[i].end)
			return s->perf_map[i].name;
	return NULL;
}

/*
 * The functions inlined at file address vaddr become frames inside the
 * symbol's: the innermost runs the address's line, each calls the next
 * from its call site, and the symbol's own line becomes the outermost
 * call site.
 */
static void add_inlines(struct sym_entry *e, struct elf_info *f, uint64_t vaddr)
{
	struct elf_inline found[ELF_INLINE_MAX];
	size_t n = elf_info_inlines(f, vaddr, found, ELF_INLINE_MAX);
	const char *source = e->sym.source;
	int line = e->sym.line;

	if (!n)
		return;
	e->inl = xcalloc(n, sizeof(*e->inl));
	for (size_t k = 0; k < n; k++) {
		struct strbuf sb = STRBUF_INIT;
		enum symbol_lang lang;
		char *demangled = symbol_demangle(found[k].linkage, &lang);

		strbuf_addstr(&sb, demangled ? demangled : found[k].name ? found[k].name :
			       found[k].linkage);
		strbuf_addstr(&sb, INLINED_MARK);
		e->inl[k].linkage = demangled ? found[k].linkage : NULL;
		free(demangled);
		e->inl[k].name = strbuf_detach(&sb);
		e->inl[k].source = source;
		e->inl[k].line = line;
		source = found[k].call_file;
		line = found[k].call_line;
	}
	e->sym.inl = e->inl;
	e->sym.ninl = n;
	e->sym.source = source;
	e->sym.line = line;
}

static void resolve(struct symbolizer *s, struct sym_entry *e, uint64_t pc)
{
	struct fw_module *m = modules_find(s->mm, pc);
	struct strbuf sb = STRBUF_INIT;
	const char *name = NULL;

	e->sym.module = m;
	if (m && !m->file) {
		/* The file could not be opened: an offset into it is all there is. */
		strbuf_addf(&sb, "%s+0x%" PRIx64, m->name, pc - m->bias);
	} else if (m) {
		/* What the file says, at its own addresses (shared by every process). */
		struct elf_addr_info ai;
		struct elf_addr_cost cost = { 0, 0 };

		elf_info_addr(m->file, pc - m->bias, &ai, &cost);
		s->stats.resolved += cost.resolved;
		s->stats.evicted += cost.evicted;
		name = ai.symbol;
		e->sym.linkage = ai.linkage;
		e->sym.source = ai.source;
		e->sym.line = ai.line;
		/* No symbol: name the function by where it starts. */
		if (!name)
			strbuf_addf(&sb, "%s+0x%" PRIx64, m->name, ai.start);
		else if (!s->no_inline)
			add_inlines(e, m->file, pc - m->bias);
	} else {
		const struct exec_range *r = modules_find_range(s->mm, pc);

		name = perf_map_lookup(s, pc);
		if (!name && r && r->name[0])
			strbuf_addf(&sb, "%s+0x%" PRIx64, r->name, pc - r->start);
		else if (!name) {
			strbuf_addf(&sb, "[anon]+0x%" PRIx64, pc);
			e->sym.is_anon = r && !r->name[0];
		}
	}
	if (name) {
		/* perf map names are the symbolizer's for as long as it lives */
		e->sym.name = name;
		strbuf_release(&sb);
	} else {
		e->owned = strbuf_detach(&sb);
		e->sym.name = e->owned;
		e->sym.is_unnamed = 1;
	}
	classify(&e->sym);
}

int symbolize_name_is_address(const char *name)
{
	const char *plus = strstr(name, "+0x");
	const char *p;

	/* No symbol holds '+': the last "+0x" ends the names made in resolve(). */
	while (plus && strstr(plus + 1, "+0x"))
		plus = strstr(plus + 1, "+0x");
	if (!plus || plus == name || !plus[3])
		return 0;
	for (p = plus + 3; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return 0;
	return 1;
}

static uint64_t entry_hash(const void *owner, uint32_t id)
{
	return hash_mix64(((const struct symbolizer *)owner)->entries[id].pc);
}

static void symbolize_pc(struct symbolizer *s, uint64_t pc, int exact, struct native_symbol *out)
{
	uint64_t lookup = exact || pc == 0 ? pc : pc - 1, h = hash_mix64(lookup);
	size_t pos = hidx_start(&s->index, h);
	struct sym_entry *e;
	uint32_t id;

	s->stats.lookups++;
	while ((id = hidx_next(&s->index, &pos)) != HIDX_NONE) {
		if (s->entries[id].pc == lookup) {
			*out = s->entries[id].sym;
			return;
		}
	}
	s->entries = xgrow(s->entries, sizeof(*s->entries), s->n + 1, &s->alloc);
	e = &s->entries[s->n];
	memset(e, 0, sizeof(*e));
	e->pc = lookup;
	resolve(s, e, lookup);
	hidx_insert(&s->index, h, (uint32_t)s->n++, entry_hash, s);
	*out = e->sym;
}

void symbolize_stack(struct symbolizer *s, const uint64_t *pcs, const uint8_t *exact, size_t n,
		     struct native_symbol *out)
{
	/* Full: start again now, while no frame handed out points into an entry. */
	if (s->n >= SYMBOLIZER_CACHE_MAX) {
		s->stats.evicted += s->n;
		entries_clear(s);
	}
	for (size_t i = 0; i < n; i++)
		symbolize_pc(s, pcs[i], exact[i], &out[i]);
}

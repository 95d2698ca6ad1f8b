/*
 * Implementation of format.h: the one place target names are escaped for
 * text destinations.
 */
#include <stdlib.h>

#include "elf/demangle.h"
#include "output/format.h"

/* Basename of a module path, for labels. */
static const char *module_label(const struct profile *p, uint32_t module)
{
	return path_base(profile_str(p, module));
}

/* A frame's name; a native one in its short form (elf/demangle.h). */
static void frame_name(struct strbuf *sb, const struct profile *p, const struct pf_frame *f,
		       enum escape_mode mode)
{
	struct strbuf shortened = STRBUF_INIT;

	if (f->kind != FRAME_NATIVE) {
		escape_append(sb, profile_str(p, f->name), mode);
		return;
	}
	symbol_short_name(profile_str(p, f->name), &shortened);
	escape_append(sb, strbuf_str(&shortened), mode);
	strbuf_release(&shortened);
}

void format_frame(struct strbuf *sb, const struct profile *p, uint32_t frame,
		  enum escape_mode mode)
{
	const struct pf_frame *f = &p->frames[frame];

	frame_name(sb, p, f, mode);
	if (f->kind == FRAME_KERNEL) {
		strbuf_addstr(sb, " [k]");
	} else if (f->file) {
		strbuf_addstr(sb, " (");
		escape_append(sb, profile_str(p, f->file), mode);
		/* Python frames always carry a line (0: the code has none there) */
		if (f->line > 0 || f->kind == FRAME_PYTHON)
			strbuf_addf(sb, ":%d", f->line);
		strbuf_addch(sb, ')');
	} else if (f->module) {
		strbuf_addstr(sb, " (");
		escape_append(sb, module_label(p, f->module), mode);
		strbuf_addch(sb, ')');
	}
}

void format_function(struct strbuf *sb, const struct profile *p, uint32_t frame,
		     enum escape_mode mode)
{
	const struct pf_frame *f = &p->frames[frame];

	frame_name(sb, p, f, mode);
	if (f->kind == FRAME_KERNEL) {
		strbuf_addstr(sb, " [k]");
	} else if (f->file || f->module) {
		strbuf_addstr(sb, " (");
		escape_append(sb, f->file ? profile_str(p, f->file) : module_label(p, f->module), mode);
		strbuf_addch(sb, ')');
	}
}

void format_thread(struct strbuf *sb, const struct profile *p, uint32_t thread,
		   enum escape_mode mode)
{
	const struct pf_thread *t = &p->threads[thread];

	escape_append(sb, profile_str(p, t->name), mode);
	strbuf_addf(sb, " (%d)", (int)t->tid);
	/* Several processes in one profile: say whose thread it is. */
	for (size_t i = 0; i < p->nthreads; i++) {
		if (p->threads[i].pid != t->pid) {
			strbuf_addf(sb, " [pid %d]", (int)t->pid);
			break;
		}
	}
}

void format_profile_title(struct strbuf *sb, const struct profile *p)
{
	strbuf_addf(sb, "framewalk: PID %d", (int)p->meta.pid);
	if (p->meta.target && *p->meta.target)
		strbuf_addf(sb, " %s", p->meta.target);
}

int thread_matches(const struct profile *p, uint32_t thread, const char *filter)
{
	const struct pf_thread *t = &p->threads[thread];
	char *end;
	long v;

	if (!filter || !*filter)
		return 1;
	v = strtol(filter, &end, 10);
	if (!*end && v == t->tid)
		return 1;
	/* Python's name for the thread, or the kernel's (comm) */
	return strcmp(profile_str(p, t->name), filter) == 0 ||
	       (t->comm && strcmp(profile_str(p, t->comm), filter) == 0);
}

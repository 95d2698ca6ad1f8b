/*
 * Implementation of format.h: the one place target names are escaped for
 * text destinations.
 */
#include <stdlib.h>

#include "elf/demangle.h"
#include "output/format.h"

/* Length of a valid UTF-8 sequence at s (1-4), or 0 when invalid. */
static int utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

void escape_append(struct strbuf *sb, const char *str, enum escape_mode mode)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		int n;

		if (*s < 0x20 || *s == 0x7f) {
			strbuf_addch(sb, '?');
			s++;
			continue;
		}
		if (mode == ESCAPE_COLLAPSED && *s == ';') {
			strbuf_addch(sb, ':');
			s++;
			continue;
		}
		n = utf8_len(s);
		if (!n) {
			strbuf_addstr(sb, "\xef\xbf\xbd");
			s++;
			continue;
		}
		/* C1 controls (U+0080-U+009F) can act as terminal escapes too. */
		if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
			strbuf_addch(sb, '?');
			s += 2;
			continue;
		}
		strbuf_add(sb, s, (size_t)n);
		s += n;
	}
}

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

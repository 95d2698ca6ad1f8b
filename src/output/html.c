/*
 * The HTML views: an interactive flame graph of one profile, and the
 * differential flame graph of two. Both are the same page (assets/flame.html
 * with its script, style sheet and the vendored d3 bundles, all inlined), so
 * a written file works offline; the profile goes in as JSON inside a
 * <script type="application/json"> element. Names from the target are never
 * HTML here: they are JSON strings with '<', '>' and '&' written as \u
 * escapes, so no name can close that element or reach the parser as markup.
 */
#include <errno.h>
#include <inttypes.h>

#include "elf/demangle.h"
#include "output/diff.h"
#include "output/format.h"
#include "output/html_assets.h"
#include "output/json.h"
#include "output/output.h"
#include "util/strbuf.h"
#include "util/util.h"

#define FLUSH_AT (64 * 1024)

const struct html_asset *html_asset_find(const char *name)
{
	for (const struct html_asset *a = html_assets; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

/* ---- JSON ------------------------------------------------------------- */

/*
 * A JSON string for any target-supplied text: first made valid, printable
 * UTF-8 by the terminal escaper (invalid bytes become U+FFFD, control
 * characters '?'), then quoted by json.h, which writes the characters that
 * mean something to an HTML parser and the JS line separators as \u escapes.
 */
static void js_string(struct strbuf *sb, const char *s)
{
	struct strbuf clean = STRBUF_INIT;

	escape_append(&clean, s ? s : "", ESCAPE_TERMINAL);
	json_escape_append(sb, strbuf_str(&clean), clean.len);
	strbuf_release(&clean);
}

static void js_double(struct strbuf *sb, double v)
{
	if (v != v || v > 1e300 || v < -1e300)
		v = 0;
	strbuf_addf(sb, "%.6g", v);
}

struct json_out {
	FILE *f;
	struct strbuf sb;
	int err;
};

static void json_flush(struct json_out *j, int force)
{
	if (!force && j->sb.len < FLUSH_AT)
		return;
	if (j->sb.len && fwrite(j->sb.buf, 1, j->sb.len, j->f) != j->sb.len)
		j->err = -EIO;
	strbuf_reset(&j->sb);
}

static void json_meta(struct json_out *j, const struct profile *p, const char *source,
		      uint64_t samples)
{
	const struct profile_meta *m = &p->meta;
	struct strbuf *sb = &j->sb;

	strbuf_addstr(sb, "\"meta\":{\"target\":");
	js_string(sb, m->target);
	strbuf_addf(sb, ",\"pid\":%d,\"python\":", (int)m->pid);
	js_string(sb, m->python_version);
	strbuf_addstr(sb, ",\"backend\":");
	js_string(sb, m->backend);
	strbuf_addstr(sb, ",\"source\":");
	js_string(sb, source);
	strbuf_addstr(sb, ",\"duration_s\":");
	js_double(sb, (double)m->duration_ns / 1e9);
	strbuf_addstr(sb, ",\"rate_hz\":");
	js_double(sb, m->rate_hz);
	strbuf_addf(sb, ",\"start_unix_ms\":%" PRIu64 ",\"samples\":%" PRIu64
		    ",\"errors\":%" PRIu64, m->start_unix_ns / 1000000, samples, m->errors);
	if (p->ncalls) {
		strbuf_addstr(sb, ",\"calls_window_s\":");
		js_double(sb, profile_calls_seconds(p));
	}
	strbuf_addch(sb, '}');
}

/* One profile as the object flame.js decodes (its header comment). */
static void json_profile(struct json_out *j, const struct profile *p, const char *source,
			 const struct output_opts *o)
{
	struct strbuf *sb = &j->sb, shortened = STRBUF_INIT;
	uint64_t samples = 0;
	uint32_t *short_ids;
	size_t extra = 0;
	int first = 1;

	for (size_t i = 0; i < p->ncounts; i++)
		if (!o || thread_matches(p, p->counts[i].thread, o->thread))
			samples += p->counts[i].count;
	strbuf_addch(sb, '{');
	json_meta(j, p, source, samples);
	strbuf_addstr(sb, ",\"strings\":[");
	for (size_t i = 0; i < p->nstrings; i++) {
		if (i)
			strbuf_addch(sb, ',');
		js_string(sb, i ? profile_str(p, (uint32_t)i) : "");
		json_flush(j, 0);
	}
	/* A long native name's short form labels its box; the name is the tooltip's. */
	short_ids = xcalloc(p->nframes, sizeof(*short_ids));
	for (size_t i = 1; i < p->nframes; i++) {
		const char *name = profile_str(p, p->frames[i].name);

		if (p->frames[i].kind != FRAME_NATIVE)
			continue;
		shortened.len = 0;
		symbol_short_name(name, &shortened);
		if (!strcmp(strbuf_str(&shortened), name))
			continue;
		short_ids[i] = (uint32_t)(p->nstrings + extra++);
		strbuf_addch(sb, ',');
		js_string(sb, strbuf_str(&shortened));
		json_flush(j, 0);
	}
	strbuf_release(&shortened);
	strbuf_addstr(sb, "],\"frames\":[[0,0,0,3]");
	for (size_t i = 1; i < p->nframes; i++) {
		const struct pf_frame *fr = &p->frames[i];
		unsigned kind = fr->kind <= FRAME_OTHER ? fr->kind : FRAME_OTHER;

		if (short_ids[i])
			strbuf_addf(sb, ",[%" PRIu32 ",%" PRIu32 ",%" PRId32 ",%u,%" PRIu32 "]",
				    short_ids[i], fr->file, fr->line, kind, fr->name);
		else
			strbuf_addf(sb, ",[%" PRIu32 ",%" PRIu32 ",%" PRId32 ",%u]", fr->name,
				    fr->file, fr->line, kind);
		json_flush(j, 0);
	}
	free(short_ids);
	strbuf_addstr(sb, "],\"nodes\":[0,0");
	for (size_t i = 1; i < p->nnodes; i++) {
		strbuf_addf(sb, ",%" PRIu32 ",%" PRIu32, p->nodes[i].parent, p->nodes[i].frame);
		json_flush(j, 0);
	}
	strbuf_addstr(sb, "],\"threads\":[");
	for (size_t i = 0; i < p->nthreads; i++) {
		strbuf_addf(sb, "%s[%d,%d,%" PRIu32 "]", i ? "," : "", (int)p->threads[i].pid,
			    (int)p->threads[i].tid, p->threads[i].name);
		json_flush(j, 0);
	}
	strbuf_addstr(sb, "],\"counts\":[");
	for (size_t i = 0; i < p->ncounts; i++) {
		const struct pf_count *c = &p->counts[i];

		if (!c->count || (o && !thread_matches(p, c->thread, o->thread)))
			continue;
		strbuf_addf(sb, "%s%" PRIu32 ",%" PRIu32 ",%" PRIu64, first ? "" : ",", c->thread,
			    c->node, c->count);
		first = 0;
		json_flush(j, 0);
	}
	strbuf_addch(sb, ']');
	/* exact call counts (record --count-calls): the tooltip's "calls" row */
	if (p->ncalls) {
		strbuf_addstr(sb, ",\"calls\":[");
		for (size_t i = 0; i < p->ncalls; i++) {
			const struct pf_calls *c = &p->calls[i];

			strbuf_addf(sb, "%s%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64, i ? "," : "",
				    c->name, c->file, c->starts, c->resumes);
			json_flush(j, 0);
		}
		strbuf_addch(sb, ']');
	}
	strbuf_addch(sb, '}');
}

/* ---- the page ------------------------------------------------------------ */

struct page_data {
	const struct profile *p[2];
	const char *name[2];
	int diff;
	const struct output_opts *o;
};

static void write_data(struct json_out *j, const struct page_data *d)
{
	if (d->diff) {
		strbuf_addstr(&j->sb, "{\"mode\":\"diff\",\"before\":");
		json_profile(j, d->p[0], d->name[0], d->o);
		strbuf_addstr(&j->sb, ",\"after\":");
		json_profile(j, d->p[1], d->name[1], d->o);
	} else {
		strbuf_addstr(&j->sb, "{\"mode\":\"flame\",\"profile\":");
		json_profile(j, d->p[0], d->name[0], d->o);
	}
	strbuf_addch(&j->sb, '}');
}

/* The asset a template placeholder stands for; NULL for DATA. */
static const char *placeholder_asset(const char *name, size_t len)
{
	static const struct { const char *key, *asset; } map[] = {
		{ "CSS", "flame.css" },
		{ "D3", "d3.min.js" },
		{ "FLAMEGRAPH", "d3-flamegraph.umd.min.js" },
		{ "APP", "flame.js" },
		{ "VERSIONS", "VERSIONS" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (strlen(map[i].key) == len && !memcmp(map[i].key, name, len))
			return map[i].asset;
	return NULL;
}

/* The VERSIONS file on one line, for the comment at the top of the page. */
static void write_versions(struct json_out *j, const struct html_asset *a)
{
	char prev = 0;

	/* Nothing that could end the comment: no '>' and no "--". */
	for (size_t i = 0; i < a->len; i++) {
		char c = a->data[i];
		if (c == '\n')
			strbuf_addstr(&j->sb, i + 1 < a->len ? "; " : "");
		else if (c != '<' && c != '>' && !(c == '-' && prev == '-'))
			strbuf_addch(&j->sb, c);
		prev = c;
	}
}

/* Copy the template, replacing each @@NAME@@ with its asset or the data. */
static int write_page(FILE *f, const struct page_data *d)
{
	const struct html_asset *tpl = html_asset_find("flame.html");
	struct json_out j = { f, STRBUF_INIT, 0 };
	const char *s, *end;

	if (!tpl)
		return -ENOENT;
	s = tpl->data;
	end = tpl->data + tpl->len;
	while (s < end && !j.err) {
		const char *open = strstr(s, "@@"), *close, *asset;

		if (!open) {
			strbuf_add(&j.sb, s, (size_t)(end - s));
			break;
		}
		close = strstr(open + 2, "@@");
		if (!close) {
			strbuf_add(&j.sb, s, (size_t)(end - s));
			break;
		}
		strbuf_add(&j.sb, s, (size_t)(open - s));
		asset = placeholder_asset(open + 2, (size_t)(close - open - 2));
		if (asset) {
			const struct html_asset *a = html_asset_find(asset);
			if (!a) {
				strbuf_release(&j.sb);
				return -ENOENT;
			}
			if (!strcmp(asset, "VERSIONS")) {
				write_versions(&j, a);
			} else {
				json_flush(&j, 1);
				if (fwrite(a->data, 1, a->len, f) != a->len)
					j.err = -EIO;
			}
		} else if (close - open - 2 == 4 && !memcmp(open + 2, "DATA", 4)) {
			write_data(&j, d);
		} else {
			strbuf_add(&j.sb, open, (size_t)(close + 2 - open));
		}
		json_flush(&j, 0);
		s = close + 2;
	}
	json_flush(&j, 1);
	strbuf_release(&j.sb);
	if (!j.err && ferror(f))
		j.err = -EIO;
	return j.err;
}

int output_html(const struct profile *p, FILE *f, const struct output_opts *o)
{
	struct page_data d = { { p, NULL }, { NULL, NULL }, 0, o };

	return write_page(f, &d);
}

int output_html_diff(const struct profile *before, const char *before_name,
		     const struct profile *after, const char *after_name, FILE *f,
		     const struct output_opts *o)
{
	struct page_data d = { { before, after }, { before_name, after_name }, 1, o };

	return write_page(f, &d);
}

/*
 * Writers that turn a profile into what people read, and the table of formats
 * that names them (registry.c, below). Each writer takes the profile and a
 * FILE and returns 0 or -errno; names from the target pass through the
 * escape helpers of format.h, so no output can be broken or hijacked by a
 * hostile function, file or thread name.
 */
#ifndef FRAMEWALK_OUTPUT_OUTPUT_H
#define FRAMEWALK_OUTPUT_OUTPUT_H

#include <stdio.h>

#include "profile/profile.h"
#include "util/strbuf.h"

struct output_opts {
	int limit;               /* rows in the top tables */
	double min_percent;      /* call-tree nodes below this share are hidden */
	const char *thread;      /* only threads whose name or tid matches */
	const char *by;          /* text: a breakdown by this label's values (--by NAME) */
	const char *where;       /* "NAME=VALUE" the profile was filtered by (--where), for the header */
};

void output_opts_default(struct output_opts *o);

int output_collapsed(const struct profile *p, FILE *f, const struct output_opts *o);
int output_text(const struct profile *p, FILE *f, const struct output_opts *o);
int output_html(const struct profile *p, FILE *f, const struct output_opts *o);
int output_pprof(const struct profile *p, FILE *f, const struct output_opts *o);
int output_speedscope(const struct profile *p, FILE *f, const struct output_opts *o);
int output_gecko(const struct profile *p, FILE *f, const struct output_opts *o);

/*
 * The formats, registered in one table (registry.c): each row names the
 * format, the other names --format accepts, the file endings that select
 * it, its writer, its comparison (diff) writer and its reader where it has
 * them. Help texts, the "unknown format" lists, extension mapping and
 * dispatch all come from the table: a new format is its writer's file plus
 * one row. input/load.c reads through the same rows (input/ and output/ are
 * one layer; this table is where they meet).
 */
typedef int (*output_writer)(const struct profile *p, FILE *f, const struct output_opts *o);
typedef int (*output_diff_writer)(const struct profile *before, const char *before_name,
				  const struct profile *after, const char *after_name, FILE *f,
				  const struct output_opts *o);
/* Fill an initialised profile from data; -EINVAL / -EFBIG with the reason in err. */
typedef int (*output_reader)(const unsigned char *data, size_t len, int compressed,
			     struct profile *p, struct strbuf *err);

struct outfmt {
	const char *name;                 /* --format NAME */
	const char *const *aliases;       /* more names --format takes; NULL-terminated or NULL */
	const char *const *extensions;    /* file endings that select it; NULL-terminated or NULL */
	const char *label;                /* what help texts call its files */
	unsigned flags;                   /* OUTPUT_* below */
	output_writer write;
	output_diff_writer write_diff;    /* NULL: no comparison view */
	output_reader read;               /* NULL: not read back */
};

#define OUTFMT_BINARY 1u     /* not for a terminal; a file of it does not look like text */
#define OUTFMT_STDOUT 2u     /* what standard output gets when no format is given */
#define OUTFMT_OTHER 4u      /* what a file gets whose ending no row claims */

/* What a format is wanted for: a profile, or a comparison of two (diff). */
enum outfmt_use { OUTFMT_PROFILE, OUTFMT_DIFF };

/* The format named name (or an alias) that can serve use; NULL when none. */
const struct outfmt *outfmt_find(const char *name, enum outfmt_use use);
/*
 * The format for an output path: "-" gets the OUTFMT_STDOUT one, a file its
 * longest matching ending's (".gecko.json" before ".json"), anything else
 * the OUTFMT_OTHER one; for diff, a format without a comparison view gives
 * way to the standard output one.
 */
const struct outfmt *outfmt_for_path(const char *path, enum outfmt_use use);
/* The reader for a file that looks binary (1) or like text (0); NULL: none. */
const struct outfmt *outfmt_reader(int binary);

/* "text, collapsed, ... or gecko": the names that serve use, for help and errors. */
void outfmt_names(struct strbuf *sb, enum outfmt_use use);
/* The names of the formats that can be read back ("collapsed or pprof"). */
void outfmt_readable(struct strbuf *sb);
/* ".txt/.report text, ..., anything else collapsed": the endings that choose a format. */
void outfmt_endings(struct strbuf *sb, enum outfmt_use use);

/* Write p in format fmt; 0 or -errno (-EINVAL: the format writes no profiles). */
int outfmt_write(const struct outfmt *fmt, const struct profile *p, FILE *f,
		 const struct output_opts *o);

#endif

/*
 * Comparing profiles by function: a table of per-function self and total
 * sample counts in two columns (before/after for `diff`, cumulative/recent
 * for `top`), and the two diff writers built on it. A function is a frame
 * without its line (kind, name, file); a function that recurses counts once
 * per stack in its total, so total never exceeds the samples.
 */
#ifndef FRAMEWALK_OUTPUT_DIFF_H
#define FRAMEWALK_OUTPUT_DIFF_H

#include <stdio.h>

#include "output/output.h"
#include "profile/profile.h"

struct fn_table {
	struct profile keys;       /* functions interned as frames with line 0 */
	uint64_t *self[2];         /* per keys frame id */
	uint64_t *total[2];
	size_t alloc;
	uint64_t samples[2];       /* all samples added to each column */
	uint32_t *seen;            /* scratch: last stack a function was counted in */
	uint32_t generation;
	const char *where;         /* "NAME=VALUE": only samples carrying that label (NULL: all) */
};

void fn_table_init(struct fn_table *t);
void fn_table_release(struct fn_table *t);

/*
 * Add every stack of p into column col (0 or 1): only threads matching
 * thread (NULL: all, see thread_matches), and when base is given, only the
 * part of each count above base[i] (i indexing p->counts; entries past
 * nbase count whole) — so a caller that snapshots counts can tally what
 * came since.
 */
void fn_table_add(struct fn_table *t, int col, const struct profile *p, const char *thread,
		  const uint64_t *base, size_t nbase);

/* Text table of the functions whose share changed most (stdout of diff). */
int output_diff_text(const struct profile *before, const char *before_name,
		     const struct profile *after, const char *after_name, FILE *f,
		     const struct output_opts *o);

/* Differential flame graph (src/output/html.c). */
int output_html_diff(const struct profile *before, const char *before_name,
		     const struct profile *after, const char *after_name, FILE *f,
		     const struct output_opts *o);

#endif

/*
 * Writers that turn a profile into what people read. Each takes the profile
 * and a FILE and returns 0 or -errno; names from the target pass through the
 * escape helpers of format.h, so no output can be broken or hijacked by a
 * hostile function, file or thread name.
 */
#ifndef FRAMEWALK_OUTPUT_OUTPUT_H
#define FRAMEWALK_OUTPUT_OUTPUT_H

#include <stdio.h>

#include "profile/profile.h"

enum output_format {
	OUTPUT_TEXT = 1,
	OUTPUT_COLLAPSED,
	OUTPUT_HTML,             /* interactive flame graph, one offline file */
	OUTPUT_PPROF,            /* gzip'd profile.proto: the saved format */
	OUTPUT_SPEEDSCOPE,       /* speedscope JSON */
	OUTPUT_GECKO,            /* Firefox Profiler (Gecko profile) JSON */
};

struct output_opts {
	int limit;               /* rows in the top tables */
	double min_percent;      /* call-tree nodes below this share are hidden */
	const char *thread;      /* only threads whose name or tid matches */
};

void output_opts_default(struct output_opts *o);

/* "text" / "collapsed" -> format; from an output file name's extension. */
int output_format_parse(const char *name, enum output_format *out);
enum output_format output_format_for_path(const char *path);

int output_collapsed(const struct profile *p, FILE *f, const struct output_opts *o);
int output_text(const struct profile *p, FILE *f, const struct output_opts *o);
int output_html(const struct profile *p, FILE *f, const struct output_opts *o);
int output_pprof(const struct profile *p, FILE *f, const struct output_opts *o);
int output_speedscope(const struct profile *p, FILE *f, const struct output_opts *o);
int output_gecko(const struct profile *p, FILE *f, const struct output_opts *o);
int output_write(const struct profile *p, enum output_format fmt, FILE *f,
		 const struct output_opts *o);

#endif

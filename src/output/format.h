/*
 * Rendering frames and threads as text, and making target-controlled names
 * safe for a destination: the terminal (control characters and invalid UTF-8
 * replaced) and collapsed stacks (also ';' and newlines, which delimit).
 */
#ifndef FRAMEWALK_OUTPUT_FORMAT_H
#define FRAMEWALK_OUTPUT_FORMAT_H

#include "profile/profile.h"
#include "util/strbuf.h"
#include "util/utf8.h"      /* escape_append: the one rule for target text */

/* "qualname (file:line)" for Python frames. */
void format_frame(struct strbuf *sb, const struct profile *p, uint32_t frame,
		  enum escape_mode mode);
/* "qualname (file)": the function, without the line. */
void format_function(struct strbuf *sb, const struct profile *p, uint32_t frame,
		     enum escape_mode mode);
/* "name (tid)" */
void format_thread(struct strbuf *sb, const struct profile *p, uint32_t thread,
		   enum escape_mode mode);

/* "framewalk: PID N TARGET": what a profile is called in the JSON formats. */
void format_profile_title(struct strbuf *sb, const struct profile *p);

/* Does the thread match a --thread filter (name or tid)? NULL matches all. */
int thread_matches(const struct profile *p, uint32_t thread, const char *filter);

#endif

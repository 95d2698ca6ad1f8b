/*
 * Readers of saved profiles: pprof (gzip'd or plain profile.proto, as
 * `framewalk record -o x.pb.gz` writes it, or from other tools) and
 * collapsed stacks ("thread;outer;...;inner count"). The format is detected
 * from the content, not the file name. This is what `report`, `top` and
 * `diff` read; a file from anywhere is untrusted input: a corrupt, truncated
 * or empty file gives an error, never a crash, and allocations are bounded by
 * the caps below (and so by the size of the input).
 */
#ifndef FRAMEWALK_INPUT_LOAD_H
#define FRAMEWALK_INPUT_LOAD_H

#include <stddef.h>

#include "profile/profile.h"
#include "util/strbuf.h"

#define LOAD_MAX_FILE (256u << 20)       /* bytes read from a file */
#define LOAD_MAX_INFLATED (256u << 20)   /* bytes a gzip stream may expand to */
#define LOAD_MAX_DEPTH 16384             /* frames in one stack */

/*
 * Read the profile at path ("-" is standard input) into out, which this
 * initialises (release it with profile_release()). Returns 0, or -errno (-EINVAL for content that is not a valid
 * profile, -EFBIG past a cap, or the error of open/read) with one line in err
 * naming the file and the problem, e.g. "x.pb.gz: truncated gzip data". On
 * failure out holds nothing and needs no release (releasing it is harmless).
 */
int profile_load(const char *path, struct profile *out, struct strbuf *err);

/* The same for data already in memory; name is used in messages. */
int profile_load_buffer(const void *data, size_t len, const char *name,
			struct profile *out, struct strbuf *err);

#endif

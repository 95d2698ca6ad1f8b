/*
 * The format readers behind profile_load(), for load.c and the tests. Each
 * fills an initialised profile and returns 0, or -EINVAL / -EFBIG with the
 * reason (without the file name) in err; the caller releases the profile on
 * failure.
 */
#ifndef FRAMEWALK_INPUT_READERS_H
#define FRAMEWALK_INPUT_READERS_H

#include <stddef.h>

#include "profile/profile.h"
#include "util/strbuf.h"

/* A serialized perftools.profiles.Profile; compressed says it came out of gzip. */
int read_pprof(const unsigned char *data, size_t len, int compressed, struct profile *p,
	       struct strbuf *err);
/* Inflate a gzip stream into *out (malloc'd), at most LOAD_MAX_INFLATED bytes. */
int inflate_gzip(const unsigned char *in, size_t len, unsigned char **out, size_t *outlen,
		 struct strbuf *err);
/* Collapsed stacks: one "frame;frame;... count" per line (compressed: from gzip). */
int read_collapsed(const unsigned char *data, size_t len, int compressed, struct profile *p,
		   struct strbuf *err);

#endif

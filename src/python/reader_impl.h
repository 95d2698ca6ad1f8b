/*
 * Between the reader's three files (reader.c: frame chains,
 * reader_codes.c: code objects, reader_threads.c: the thread list): what one
 * asks of another. Not for use outside python/.
 */
#ifndef FRAMEWALK_PYTHON_READER_IMPL_H
#define FRAMEWALK_PYTHON_READER_IMPL_H

#include "python/reader.h"

/* C stack copied below a cframe or entry frame, where nested calls put theirs. */
#define C_STACK_WINDOW 4096

/*
 * The code object at addr, from the cache (checked against the target at
 * most once a second) or read anew. 0 or -errno.
 */
int code_cache_get(struct py_reader *r, uint64_t addr, struct py_code **out, uint64_t now);
/* Force the next lookup of this entry to re-check it against the target. */
void code_cache_mark_suspect(struct py_code *c);
/*
 * The codes of one walked stack held against the words that say which code
 * each is (copied with the frames where the backend copies them): a code
 * replaced is read anew and its frames renamed. 0, -EFAULT (drop the
 * sample), -EAGAIN (the sample's code is gone) or -ESRCH/-EPERM.
 */
int code_cache_confirm(struct py_reader *r, struct py_frame_info *frames, size_t n,
		       uint64_t now);
void code_cache_free(struct py_code *c);
/* A str object's text as UTF-8 (at most cap bytes kept). 0 or -errno. */
int py_read_unicode(struct py_reader *r, uint64_t addr, size_t cap, char **out);

#endif

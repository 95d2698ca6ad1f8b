/*
 * Reading a whole file into memory with a size cap: the one loop behind the
 * /proc readers, the _sysconfigdata reader, the environment probes and the
 * saved-profile loader. Whatever the file holds, memory stays bounded by the
 * cap the caller chose. And its twin for writing: all of a buffer to a
 * descriptor.
 */
#ifndef FRAMEWALK_UTIL_FILE_H
#define FRAMEWALK_UTIL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

/*
 * Append what fd holds, up to its end, to sb (NUL-terminated as always).
 * Returns 0; -EFBIG when there is more than max bytes (sb then holds the
 * first max, so a caller content with a prefix can go on); or the -errno of
 * read(2) (EINTR is retried), with sb holding what was read before it.
 */
int read_fd_bounded(int fd, size_t max, struct strbuf *sb);

/* The same for a path, opened read-only; -errno of open(2) when it cannot be. */
int read_file_bounded(const char *path, size_t max, struct strbuf *sb);

/*
 * A small file (a sysctl, a /proc status) into buf, at most size - 1 bytes
 * and NUL-terminated; a longer file is cut. 0 or -errno.
 */
int read_file_into(const char *path, char *buf, size_t size);

/* Write all len bytes of data to fd (short writes continued, EINTR retried). 0 or -errno. */
int write_fd_all(int fd, const void *data, size_t len);
/*
 * The same at offset off (pwrite), and its reading twin (pread): all len
 * bytes, or -errno (-EIO: the file ended first). Neither moves the offset.
 */
int pwrite_fd_all(int fd, const void *data, size_t len, uint64_t off);
int pread_fd_all(int fd, void *buf, size_t len, uint64_t off);

/* The open-file limit framewalk suggests where the current one is too low. */
#define FW_NOFILE_SUGGESTED 1024
/*
 * Append the one way framewalk says the open-file limit stopped it: "the
 * open-file limit is reached (ulimit -n N): raise it, e.g. ulimit -n 1024".
 */
void nofile_reached(struct strbuf *sb);

#endif

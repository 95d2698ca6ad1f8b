/*
 * The one way framewalk opens a file that a target process, a container or
 * a user's sysroot names (a mapped file, a perf map, ld.so.conf, an ELF or
 * debug file, _sysconfigdata). Whoever controls such a path can put a FIFO
 * there (an open or read that never returns), a symlink to /dev/zero (a
 * read that never ends) or to a device whose open has effects, or an
 * absolute symlink meant to reach the host's files from a container.
 *
 * Invariants of every opener here:
 *   - the path is first opened O_PATH (no open(2) of the object itself: a
 *     FIFO cannot block it, a device sees nothing), fstat'ed, and refused
 *     with -EINVAL unless it is a regular file;
 *   - only then is it reopened O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
 *     through /proc/self/fd (the very same inode);
 *   - safe_open_in() resolves inside a root directory (openat2
 *     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): "..", absolute symlinks and
 *     /proc magic links stay in the root. Without openat2 (Linux < 5.6) a
 *     root other than our own "/" is refused (-ENOSYS), never followed.
 * Reads are bounded by the caller's size cap (read_fd_bounded in
 * util/file.h, or the line reader below).
 */
#ifndef FRAMEWALK_TARGET_SAFE_OPEN_H
#define FRAMEWALK_TARGET_SAFE_OPEN_H

#include <stddef.h>
#include <stdint.h>

/* A root directory to resolve paths in (O_PATH | O_DIRECTORY). fd or -errno. */
int safe_root_open(const char *dir);

/*
 * path (absolute or relative, as seen from inside the root) resolved inside
 * root_fd. fd of a regular file, or -errno (-EINVAL: not a regular file).
 */
int safe_open_in(int root_fd, const char *path);

/* The same inside the root directory named dir ("" or NULL: our own "/"). */
int safe_open_in_dir(const char *dir, const char *path);

/*
 * A directory path resolved inside root_fd the same way (openat2
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): an O_PATH | O_DIRECTORY fd to
 * use as the dirfd of *at() calls (mkdirat, openat), or -errno (-ENOTDIR).
 */
int safe_dir_in(int root_fd, const char *path);

/*
 * One entry, name, of a directory framewalk made in a place a target
 * controls (python/callcount.c's request directories in the target's
 * /tmp): resolved beneath dir_fd with no symlink and no mount crossed
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS), so what the target's user bind-mounted over it
 * (in a mount namespace of its own: a rootless container) is refused with
 * -EXDEV, never followed to a file or directory that user could not reach.
 * safe_open_entry: a regular file, opened for reading as safe_open_in
 * opens; safe_dir_entry: a directory, O_RDONLY | O_DIRECTORY (for
 * fdopendir, openat, unlinkat, fchown). fd or -errno; -ENOSYS without
 * openat2 (Linux < 5.6): refused, never followed.
 */
int safe_open_entry(int dir_fd, const char *name);
int safe_dir_entry(int dir_fd, const char *name);

/*
 * A path framewalk itself chose and resolves as the kernel does, magic links
 * included (/proc/PID/map_files/..., /proc/PID/exe, a path already resolved
 * inside a sysroot, a debuginfod cache file): regular files only, with the
 * same O_PATH-first opening. fd or -errno.
 */
int safe_open_path(const char *path);

/*
 * A streaming reader of text lines from an fd opened above, with two bounds:
 * a line longer than SAFE_LINE_MAX is skipped whole, and reading stops after
 * max_total bytes. Memory stays at one buffer whatever the file holds.
 */
#define SAFE_LINE_MAX 4096

struct safe_lines {
	int fd;
	uint64_t total, max_total;
	size_t start, end;
	int done;
	char buf[SAFE_LINE_MAX + 1];
};

void safe_lines_init(struct safe_lines *r, int fd, uint64_t max_total);
/*
 * The next line, newline removed and NUL-terminated (valid until the next
 * call), or NULL at the end of the file, at the size cap or on a read error.
 */
char *safe_lines_next(struct safe_lines *r);

#endif

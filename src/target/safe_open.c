/*
 * Implementation of safe_open.h: every file a target or a sysroot names is
 * opened here, O_PATH first so that nothing but a regular file is ever
 * opened for reading, and read through bounded readers.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "target/safe_open.h"

#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* An O_PATH fd (consumed) reopened for reading when it is a regular file. */
static int reopen_regular(int path_fd)
{
	char self[64];
	struct stat st;
	int fd, err;

	if (path_fd < 0)
		return path_fd;
	if (fstat(path_fd, &st)) {
		err = -errno;
		close(path_fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(path_fd);
		return -EINVAL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
	fd = open(self, READ_FLAGS);
	err = fd < 0 ? -errno : 0;
	close(path_fd);
	if (fd < 0)
		return err;
	/* The same file object, so a regular file; checked once more all the same. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int safe_root_open(const char *dir)
{
	int fd = open(dir && *dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Is dir_fd our own root directory? */
static int is_our_root(int dir_fd)
{
	struct stat a, b;

	return !fstat(dir_fd, &a) && !stat("/", &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * path resolved inside root_fd, never above it nor through a magic link, as
 * an O_PATH descriptor opened with flags (O_PATH | O_CLOEXEC added); with no
 * openat2, only our own root resolves (the same), with also_without
 * added. The descriptor, or -errno.
 */
static int resolve_in_root(int root_fd, const char *path, int flags, int also_without)
{
	struct open_how how;
	long fd;

	if (root_fd < 0)
		return -EBADF;
	if (!path || !*path)
		return -ENOENT;
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_PATH | O_CLOEXEC);
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		/* No openat2: our own root resolves the same; any other is refused. */
		if (!is_our_root(root_fd))
			return -ENOSYS;
		fd = openat(root_fd, path[0] == '/' ? path + 1 : path,
			    flags | also_without | O_PATH | O_CLOEXEC);
	}
	return fd < 0 ? -errno : (int)fd;
}

int safe_open_in(int root_fd, const char *path)
{
	int fd = resolve_in_root(root_fd, path, 0, 0);

	return fd < 0 ? fd : reopen_regular(fd);
}

int safe_dir_in(int root_fd, const char *path)
{
	return resolve_in_root(root_fd, path, O_DIRECTORY, O_NOFOLLOW);
}

/* name beneath dir_fd, no symlink, no mount crossed, opened with flags. fd or -errno. */
static int resolve_entry(int dir_fd, const char *name, int flags)
{
	struct open_how how;
	long fd;

	if (dir_fd < 0)
		return -EBADF;
	if (!name || !*name || strchr(name, '/'))
		return -EINVAL;
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS |
		      RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, dir_fd, name, &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}

int safe_open_entry(int dir_fd, const char *name)
{
	int fd = resolve_entry(dir_fd, name, O_PATH);

	return fd < 0 ? fd : reopen_regular(fd);
}

int safe_dir_entry(int dir_fd, const char *name)
{
	return resolve_entry(dir_fd, name, O_RDONLY | O_DIRECTORY);
}

int safe_open_in_dir(const char *dir, const char *path)
{
	int root = safe_root_open(dir), fd;

	if (root < 0)
		return root;
	fd = safe_open_in(root, path);
	close(root);
	return fd;
}

int safe_open_path(const char *path)
{
	int fd;

	if (!path || !*path)
		return -ENOENT;
	fd = open(path, O_PATH | O_CLOEXEC);
	return reopen_regular(fd < 0 ? -errno : fd);
}

void safe_lines_init(struct safe_lines *r, int fd, uint64_t max_total)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->max_total = max_total;
}

/* Read more into buf[end..]; 0 when nothing more comes (end, cap, error). */
static int fill(struct safe_lines *r)
{
	size_t room = SAFE_LINE_MAX - r->end;
	ssize_t n;

	if (r->total >= r->max_total)
		return 0;
	if (room > r->max_total - r->total)
		room = (size_t)(r->max_total - r->total);
	do
		n = read(r->fd, r->buf + r->end, room);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return 0;
	r->end += (size_t)n;
	r->total += (uint64_t)n;
	return 1;
}

char *safe_lines_next(struct safe_lines *r)
{
	int skipping = 0;

	while (!r->done) {
		char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);

		if (nl) {
			char *line = r->buf + r->start;

			*nl = '\0';
			r->start = (size_t)(nl - r->buf) + 1;
			if (!skipping)
				return line;
			skipping = 0;
			continue;
		}
		if (r->start == 0 && r->end == SAFE_LINE_MAX) {
			/* A line longer than the buffer: dropped up to its newline. */
			skipping = 1;
			r->end = 0;
		} else if (r->start) {
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->end -= r->start;
			r->start = 0;
		}
		if (!fill(r)) {
			r->done = 1;
			if (r->end > r->start && !skipping) {
				/* The last line, without its newline. */
				r->buf[r->end] = '\0';
				r->start = r->end;
				return r->buf;
			}
		}
	}
	return NULL;
}

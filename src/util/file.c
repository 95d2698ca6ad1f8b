/* Implementation of file.h. */
#include <errno.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <unistd.h>

#include "util/file.h"

#define READ_CHUNK 65536

int read_fd_bounded(int fd, size_t max, struct strbuf *sb)
{
	size_t start = sb->len;

	for (;;) {
		size_t room = READ_CHUNK;
		ssize_t n;

		/* One byte past the cap tells a file of exactly max bytes from a longer one. */
		if (sb->len - start + room > max + 1)
			room = max + 1 - (sb->len - start);
		strbuf_grow(sb, room);
		n = read(fd, sb->buf + sb->len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sb->buf[sb->len] = '\0';
			return -errno;
		}
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
		if (n == 0)
			return 0;
		if (sb->len - start > max) {
			sb->len = start + max;
			sb->buf[sb->len] = '\0';
			return -EFBIG;
		}
	}
}

int read_file_bounded(const char *path, size_t max, struct strbuf *sb)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = read_fd_bounded(fd, max, sb);
	close(fd);
	return ret;
}

int read_file_into(const char *path, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	if (!size)
		return -EINVAL;
	ret = read_file_bounded(path, size - 1, &sb);
	if (ret == -EFBIG)
		ret = 0;
	if (!ret)
		memcpy(buf, strbuf_str(&sb), sb.len + 1);
	strbuf_release(&sb);
	return ret;
}

int write_fd_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int pwrite_fd_all(int fd, const void *data, size_t len, uint64_t off)
{
	const char *p = data;

	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		off += (uint64_t)w;
		len -= (size_t)w;
	}
	return 0;
}

int pread_fd_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		off += (uint64_t)r;
		len -= (size_t)r;
	}
	return 0;
}

void nofile_reached(struct strbuf *sb)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		strbuf_addf(sb, "the open-file limit is reached (ulimit -n %llu): raise it, e.g. "
			    "ulimit -n %d", (unsigned long long)rl.rlim_cur, FW_NOFILE_SUGGESTED);
	else
		strbuf_addf(sb, "the open-file limit is reached: raise it, e.g. ulimit -n %d",
			    FW_NOFILE_SUGGESTED);
}

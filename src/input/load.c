/*
 * profile_load(): read a saved profile whole (up to LOAD_MAX_FILE), un-gzip
 * it when it starts with the gzip magic, decide its format from the content
 * (binary or text: the registry's reader of each, output/registry.c) and
 * hand it to that reader.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/load.h"
#include "input/readers.h"
#include "output/output.h"
#include "util/file.h"
#include "util/util.h"

/* Control bytes that never appear in a text file (tab, LF, CR do). */
static int looks_binary(const unsigned char *d, size_t n)
{
	if (n > 4096)
		n = 4096;
	for (size_t i = 0; i < n; i++)
		if (d[i] < 0x20 && d[i] != '\t' && d[i] != '\n' && d[i] != '\r')
			return 1;
	return 0;
}

int profile_load_buffer(const void *data, size_t len, const char *name,
			struct profile *out, struct strbuf *err)
{
	const unsigned char *d = data;
	struct strbuf why = STRBUF_INIT;
	unsigned char *inflated = NULL;
	int ret = 0, gz = len >= 2 && d[0] == 0x1f && d[1] == 0x8b;

	profile_init(out);
	if (gz) {
		ret = inflate_gzip(d, len, &inflated, &len, &why);
		d = inflated;
	}
	if (ret) {
		/* the reason is in why */
	} else if (len == 0) {
		strbuf_addstr(&why, gz ? "empty gzip data" : "empty file");
		ret = -EINVAL;
	} else {
		const struct outfmt *fmt = outfmt_reader(looks_binary(d, len));

		if (fmt) {
			ret = fmt->read(d, len, gz, out, &why);
		} else {
			strbuf_addstr(&why, "not a recognised profile");
			ret = -EINVAL;
		}
	}
	free(inflated);
	if (ret) {
		profile_release(out);
		strbuf_addf(err, "%s: %s", name, strbuf_str(&why));
	}
	strbuf_release(&why);
	return ret;
}

int profile_load(const char *path, struct profile *out, struct strbuf *err)
{
	int is_stdin = !strcmp(path, "-");
	const char *name = is_stdin ? "standard input" : path;
	struct strbuf data = STRBUF_INIT;
	struct stat st;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		strbuf_addf(err, "%s: %s", name, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
	} else if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (off_t)LOAD_MAX_FILE) {
		ret = -EFBIG;
	} else {
		ret = read_fd_bounded(fd, LOAD_MAX_FILE, &data);
	}
	if (!is_stdin)
		close(fd);
	if (ret == -EFBIG) {
		strbuf_addf(err, "%s: larger than the %u MiB limit for a saved profile", name,
			    LOAD_MAX_FILE >> 20);
		strbuf_release(&data);
		return ret;
	}
	if (ret) {
		strbuf_addf(err, "%s: %s", name, strerror(-ret));
		strbuf_release(&data);
		return ret;
	}
	ret = profile_load_buffer(strbuf_str(&data), data.len, name, out, err);
	strbuf_release(&data);
	return ret;
}

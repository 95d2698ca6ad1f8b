/* Implementation of outfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/outfile.h"
#include "util/strbuf.h"
#include "util/util.h"

static int is_stdout(const char *path)
{
	return !path || !strcmp(path, "-");
}

/* Give the file to the user who ran sudo, not to root. */
static void chown_to_sudo_user(int fd)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	long uid, gid;

	if (geteuid() != 0 || !u || !g || parse_long(u, &uid) || parse_long(g, &gid))
		return;
	if (fchown(fd, (uid_t)uid, (gid_t)gid))
		fw_warning("cannot give the output file to uid %ld: %s", uid, strerror(errno));
}

int outfile_open(struct outfile *of, const char *path)
{
	struct strbuf tmp = STRBUF_INIT;
	char *dircopy;
	int fd;

	memset(of, 0, sizeof(*of));
	if (is_stdout(path)) {
		of->f = stdout;
		return 0;
	}
	/* The destination must not be a directory or a symlink planted for us. */
	{
		struct stat st;
		if (!lstat(path, &st) && (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
			return S_ISDIR(st.st_mode) ? -EISDIR : -ELOOP;
		/*
		 * A device, fifo or socket (/dev/null, a pipe) is written in place:
		 * renaming a file over it would replace the node itself.
		 */
		if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
			fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
			if (fd < 0)
				return -errno;
			of->f = fdopen(fd, "w");
			if (!of->f) {
				int err = -errno;
				close(fd);
				return err;
			}
			return 0;
		}
	}
	dircopy = xstrdup(path);
	strbuf_addf(&tmp, "%s/.%s.framewalk-XXXXXX", dirname(dircopy), strrchr(path, '/') ?
		    strrchr(path, '/') + 1 : path);
	free(dircopy);
	fd = mkostemp(tmp.buf, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;
		strbuf_release(&tmp);
		return err;
	}
	fchmod(fd, 0644);
	chown_to_sudo_user(fd);
	of->f = fdopen(fd, "w");
	if (!of->f) {
		int err = -errno;
		close(fd);
		unlink(tmp.buf);
		strbuf_release(&tmp);
		return err;
	}
	of->path = xstrdup(path);
	of->tmp = strbuf_detach(&tmp);
	return 0;
}

int outfile_commit(struct outfile *of)
{
	int ret = 0;

	if (!of->tmp) {
		if (of->f && (fflush(of->f) || ferror(of->f)))
			ret = -EIO;
		if (of->f && of->f != stdout)
			fclose(of->f);
		of->f = NULL;
		return ret;
	}
	if (fflush(of->f) || ferror(of->f) || fsync(fileno(of->f)))
		ret = errno ? -errno : -EIO;
	if (fclose(of->f) && !ret)
		ret = -errno;
	of->f = NULL;
	if (!ret && rename(of->tmp, of->path))
		ret = -errno;
	if (ret)
		unlink(of->tmp);
	free(of->tmp);
	free(of->path);
	of->tmp = of->path = NULL;
	return ret;
}

void outfile_abort(struct outfile *of)
{
	if (!of->tmp && of->f && of->f != stdout)
		fclose(of->f);
	if (of->tmp) {
		if (of->f)
			fclose(of->f);
		unlink(of->tmp);
	}
	free(of->tmp);
	free(of->path);
	memset(of, 0, sizeof(*of));
}

int outfile_mkdirs(const char *dir, mode_t mode)
{
	char path[4096];

	if (!*dir)
		return -EINVAL;
	if (xsnprintf(path, sizeof(path), "%s", dir) < 0)
		return -ENAMETOOLONG;
	for (char *p = path + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(path, mode) && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			return 0;
	}
}

/* Implementation of outfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "util/file.h"
#include "util/outfile.h"
#include "util/strbuf.h"
#include "util/util.h"

static int is_stdout(const char *path)
{
	return !path || !strcmp(path, "-");
}

/*
 * Give the file to the user who ran sudo, not to root. An exception to
 * "only cmd/ reads the environment": this is the one place every file
 * framewalk writes is created (a command's outputs, the agent's directory
 * and metrics), so each writer is right without passing the owner along.
 */
static void chown_to_sudo_user(int fd)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	long uid, gid;

	if (geteuid() != 0 || !u || !g || parse_long(u, &uid) || parse_long(g, &gid))
		return;
	if (fchown(fd, (uid_t)uid, (gid_t)gid))
		fw_warning("cannot give the output file to uid %ld: %s", uid, strerror(errno));
}

static mode_t umask_read;
static pthread_once_t umask_once = PTHREAD_ONCE_INIT;

static void read_umask(void)
{
	char status[4096], *p;

	if (!read_file_into("/proc/self/status", status, sizeof(status)) &&
	    (p = strstr(status, "\nUmask:"))) {
		umask_read = (mode_t)strtoul(p + 7, NULL, 8) & 0777;
		return;
	}
	umask_read = umask(022);
	umask(umask_read);
}

/*
 * The process's umask, read without changing it (other threads may be
 * creating files), once: framewalk never sets it (the agent writes a file
 * every few seconds).
 */
static mode_t current_umask(void)
{
	pthread_once(&umask_once, read_umask);
	return umask_read;
}

/* The null device: writing there is asking for no output, and cannot block. */
static int is_null_device(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3;
}

int outfile_temporary_base(const char *name, char *base, size_t size)
{
	size_t len = strlen(name), mark = strlen(OUTFILE_TMP_MARK), n;

	/* ".NAME" OUTFILE_TMP_MARK "XXXXXX" */
	if (name[0] != '.' || len < 2 + mark + 6 ||
	    memcmp(name + len - 6 - mark, OUTFILE_TMP_MARK, mark))
		return 0;
	n = len - 1 - mark - 6;
	if (n >= size)
		return 0;
	memcpy(base, name + 1, n);
	base[n] = '\0';
	return 1;
}

int outfile_remove_stale(int dirfd, const char *name, int min_age_s)
{
	char base[NAME_MAX + 1];
	struct stat st;
	int fd, removed = 0;

	if (!outfile_temporary_base(name, base, sizeof(base)))
		return 0;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    (!min_age_s || difftime(time(NULL), st.st_mtime) >= min_age_s) &&
	    !flock(fd, LOCK_EX | LOCK_NB))
		removed = !unlinkat(dirfd, name, 0);
	close(fd);
	return removed;
}

/*
 * Remove the temporaries of earlier runs to this destination that were killed
 * before they could (SIGKILL, a crash): each writer holds a lock on its
 * temporary for as long as it lives, so a temporary nobody locks is stale,
 * whatever PID namespace its writer was in.
 */
static void remove_stale_temporaries(const char *dir, const char *base)
{
	char of[NAME_MAX + 1];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d)))
		if (outfile_temporary_base(e->d_name, of, sizeof(of)) && !strcmp(of, base))
			outfile_remove_stale(dirfd(d), e->d_name, 0);
	closedir(d);
}

static int open_temporary(struct outfile *of, const char *path, int look_for_stale)
{
	struct strbuf tmp = STRBUF_INIT;
	char *dircopy, *dir;
	const char *base;
	struct stat st;
	int fd;

	memset(of, 0, sizeof(*of));
	if (is_stdout(path)) {
		of->f = stdout;
		return 0;
	}
	/*
	 * The destination must not be a directory, a symlink, a FIFO, a socket
	 * or a device planted for us: a FIFO would block the write (or feed
	 * whoever reads it), a device is not a file. Only the null device is
	 * written in place.
	 */
	if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (S_ISLNK(st.st_mode))
			return -ELOOP;
		if (!is_null_device(&st))
			return -ENXIO;
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) || !is_null_device(&st)) {
			close(fd);
			return -ENXIO;
		}
		of->f = fdopen(fd, "w");
		if (!of->f) {
			int err = -errno;
			close(fd);
			return err;
		}
		return 0;
	}
	dircopy = xstrdup(path);
	dir = dirname(dircopy);
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (look_for_stale)
		remove_stale_temporaries(dir, base);
	strbuf_addf(&tmp, "%s/.%s" OUTFILE_TMP_MARK "XXXXXX", dir, base);
	free(dircopy);
	fd = mkostemp(tmp.buf, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;
		strbuf_release(&tmp);
		return err;
	}
	/* Held until the file is renamed into place: a temporary nobody holds is stale. */
	flock(fd, LOCK_EX | LOCK_NB);
	fchmod(fd, 0666 & ~current_umask());
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

int outfile_open(struct outfile *of, const char *path)
{
	return open_temporary(of, path, 1);
}

int outfile_open_new(struct outfile *of, const char *path)
{
	return open_temporary(of, path, 0);
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
	/* Renamed while still open (and locked): never taken for a stale one. */
	if (!ret && rename(of->tmp, of->path))
		ret = -errno;
	if (fclose(of->f) && !ret)
		ret = -errno;
	of->f = NULL;
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

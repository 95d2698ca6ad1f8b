/*
 * Implementation of spool.h. On disk each request is one file,
 * NNNNNNNNNNNNNNNNNNNN.req (its sequence number, zero-padded so names sort
 * in order), holding a header line "framewalk-spool 1 META_LEN BODY_LEN",
 * the meta line and the body. It is written under a temporary name and
 * renamed, the file and then the directory fsync'd, so neither a crash
 * nor a power loss leaves half a request under a real name or loses one
 * taken; the temporary files of a crash are removed at the next open.
 * The directory is held with an exclusive flock while open (one agent per
 * spool), and must be a directory of the agent's user that no one else
 * can write into (requests are read back and sent with the agent's
 * credentials).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/spool.h"
#include "util/file.h"
#include "util/outfile.h"
#include "util/util.h"

#define SPOOL_MAGIC "framewalk-spool 1"

static void entry_path(const struct spool *q, uint64_t seq, char *buf, size_t size)
{
	xsnprintf(buf, size, "%s/%020" PRIu64 ".req", q->dir, seq);
}

static void entry_free(struct spool_entry *e)
{
	free(e->meta);
	strbuf_release(&e->body);
}

/* Remove entry i (its file too). */
static void remove_at(struct spool *q, size_t i)
{
	if (q->dir) {
		char path[4096];

		entry_path(q, q->e[i].seq, path, sizeof(path));
		unlink(path);
	}
	q->bytes -= q->e[i].size;
	entry_free(&q->e[i]);
	memmove(&q->e[i], &q->e[i + 1], (q->n - i - 1) * sizeof(*q->e));
	q->n--;
}

/* Drop the oldest (not the one in flight) until one more of size fits. */
static int make_room(struct spool *q, uint64_t size)
{
	int dropped = 0;

	while (q->n && (q->n + 1 > q->max_items || q->bytes + size > q->max_bytes)) {
		size_t i = q->inflight && q->e[0].seq == q->inflight ? 1 : 0;

		if (i >= q->n)
			break;
		remove_at(q, i);
		q->dropped++;
		dropped++;
	}
	return dropped;
}

static void append(struct spool *q, uint64_t seq, uint64_t size, char *meta, struct strbuf *body)
{
	struct spool_entry *e;

	q->e = xgrow(q->e, sizeof(*q->e), q->n + 1, &q->alloc);
	e = &q->e[q->n++];
	memset(e, 0, sizeof(*e));
	e->seq = seq;
	e->size = size;
	e->meta = meta;
	if (body)
		e->body = *body;
	q->bytes += size;
}

/* Queue the requests already in the directory, oldest first. */
static int scan_dir(struct spool *q, struct strbuf *err)
{
	DIR *d = opendir(q->dir);
	struct dirent *de;
	uint64_t *seqs = NULL;
	size_t n = 0, alloc = 0;

	if (!d) {
		strbuf_addf(err, "cannot open the spool directory %s: %s", q->dir, strerror(errno));
		return -errno;
	}
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		char *end;
		uint64_t seq;

		if (!strncmp(name, ".tmp-", 5)) {
			unlinkat(dirfd(d), name, 0);
			continue;
		}
		if (strlen(name) != 24 || !str_ends_with(name, ".req"))
			continue;
		errno = 0;
		seq = strtoull(name, &end, 10);
		if (errno || end != name + 20 || !seq)
			continue;
		seqs = xgrow(seqs, sizeof(*seqs), n + 1, &alloc);
		seqs[n++] = seq;
	}
	closedir(d);
	sort_array(seqs, n, sizeof(*seqs), cmp_u64);
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		entry_path(q, seqs[i], path, sizeof(path));
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		make_room(q, (uint64_t)st.st_size);
		append(q, seqs[i], (uint64_t)st.st_size, NULL, NULL);
		if (seqs[i] >= q->next_seq)
			q->next_seq = seqs[i] + 1;
	}
	free(seqs);
	return 0;
}

/*
 * Open the directory (not through a symlink), check who may write into
 * it, and lock it. The descriptor into q->dir_fd; 0 or -errno with the reason.
 */
static int hold_dir(struct spool *q, struct strbuf *err)
{
	struct stat st;
	int fd = open(q->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		struct stat lst;

		if ((e == ELOOP || e == ENOTDIR) && !lstat(q->dir, &lst) && S_ISLNK(lst.st_mode)) {
			strbuf_addf(err, "the spool directory %s is a symbolic link: give its target",
				    q->dir);
			return -ELOOP;
		}
		strbuf_addf(err, "cannot open the spool directory %s: %s", q->dir, strerror(e));
		return -e;
	}
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		strbuf_addf(err, "cannot stat the spool directory %s: %s", q->dir, strerror(e));
		return -e;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		if (st.st_uid != geteuid())
			strbuf_addf(err, "the spool directory %s is owned by uid %u, not by this "
				    "agent's (%u): others could plant requests in it", q->dir,
				    (unsigned)st.st_uid, (unsigned)geteuid());
		else
			strbuf_addf(err, "the spool directory %s is writable by others (mode %04o): "
				    "chmod go-w it", q->dir, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		close(fd);
		if (e == EWOULDBLOCK) {
			strbuf_addf(err, "the spool directory %s is in use by another agent (each "
				    "agent needs its own --spool)", q->dir);
			return -EBUSY;
		}
		strbuf_addf(err, "cannot lock the spool directory %s: %s", q->dir, strerror(e));
		return -e;
	}
	q->dir_fd = fd;
	return 0;
}

int spool_open(struct spool *q, const char *dir, size_t max_items, uint64_t max_bytes,
	       struct strbuf *err)
{
	int ret;

	memset(q, 0, sizeof(*q));
	q->dir_fd = -1;
	q->max_items = max_items ? max_items : 1;
	q->max_bytes = max_bytes ? max_bytes : 1;
	q->next_seq = 1;
	if (!dir)
		return 0;
	q->dir = xstrdup(dir);
	ret = outfile_mkdirs(dir, 0700);
	if (ret) {
		strbuf_addf(err, "cannot create the spool directory %s: %s", dir, strerror(-ret));
		return ret;
	}
	ret = hold_dir(q, err);
	if (ret)
		return ret;
	return scan_dir(q, err);
}

static int write_file(const struct spool *q, uint64_t seq, const char *meta, const void *body,
		      size_t len)
{
	char tmp[4096], path[4096], head[96];
	int fd, ret;

	xsnprintf(tmp, sizeof(tmp), "%s/.tmp-%020" PRIu64, q->dir, seq);
	entry_path(q, seq, path, sizeof(path));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	xsnprintf(head, sizeof(head), SPOOL_MAGIC " %zu %zu\n", strlen(meta), len);
	ret = write_fd_all(fd, head, strlen(head));
	if (!ret)
		ret = write_fd_all(fd, meta, strlen(meta));
	if (!ret)
		ret = write_fd_all(fd, body, len);
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	else if (fsync(q->dir_fd))     /* the new name itself, on disk */
		ret = -errno;
	return ret;
}

int spool_push(struct spool *q, const char *meta, const void *body, size_t len)
{
	uint64_t seq = q->next_seq++, size = strlen(meta) + len;
	struct strbuf copy = STRBUF_INIT;
	int dropped, ret;

	if (size > q->max_bytes || size > SPOOL_ITEM_MAX) {
		q->dropped++;
		return 1;
	}
	dropped = make_room(q, size);
	if (q->dir) {
		ret = write_file(q, seq, meta, body, len);
		if (ret) {
			q->dropped++;
			return ret;
		}
		append(q, seq, size, NULL, NULL);
		return dropped;
	}
	strbuf_add(&copy, body, len);
	append(q, seq, size, xstrdup(meta), &copy);
	return dropped;
}

/* A spool file into sb: a regular file, never through a symlink, bounded. */
static int read_entry_file(const char *path, struct strbuf *sb)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	else
		ret = read_fd_bounded(fd, SPOOL_ITEM_MAX + 128, sb);
	close(fd);
	return ret;
}

/* Errors that say nothing about the file: try it again later. */
static int transient(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM || err == -EINTR ||
	       err == -EAGAIN;
}

/* Read request seq back from its file. 0 or -EINVAL (corrupt) / -errno. */
static int read_entry(const struct spool *q, uint64_t seq, struct spool_item *it)
{
	struct strbuf sb = STRBUF_INIT;
	char path[4096], head[96], *nl;
	size_t mlen, blen, hlen;
	int ret;

	entry_path(q, seq, path, sizeof(path));
	ret = read_entry_file(path, &sb);
	if (ret) {
		strbuf_release(&sb);
		return ret == -EFBIG ? -EINVAL : ret;
	}
	nl = sb.len ? memchr(sb.buf, '\n', sb.len < 96 ? sb.len : 96) : NULL;
	if (!nl || sscanf(sb.buf, SPOOL_MAGIC " %zu %zu\n", &mlen, &blen) != 2) {
		strbuf_release(&sb);
		return -EINVAL;
	}
	hlen = (size_t)(nl - sb.buf) + 1;
	/*
	 * The header line exactly as write_file writes it: sscanf also takes
	 * "framewalk-spool 12 ...", numbers spelt otherwise, junk after them
	 * and a header that runs on into the meta.
	 */
	xsnprintf(head, sizeof(head), SPOOL_MAGIC " %zu %zu\n", mlen, blen);
	if (strlen(head) != hlen || memcmp(head, sb.buf, hlen) ||
	    mlen > sb.len || blen > sb.len || hlen + mlen + blen != sb.len ||
	    memchr(sb.buf + hlen, '\0', mlen) || memchr(sb.buf + hlen, '\n', mlen)) {
		strbuf_release(&sb);
		return -EINVAL;
	}
	it->seq = seq;
	it->meta = xstrndup(sb.buf + hlen, mlen);
	memset(&it->body, 0, sizeof(it->body));
	strbuf_add(&it->body, sb.buf + hlen + mlen, blen);
	strbuf_release(&sb);
	return 0;
}

int spool_peek(struct spool *q, struct spool_item *it)
{
	int ret;

	memset(it, 0, sizeof(*it));
	while (q->n) {
		struct spool_entry *e = &q->e[0];

		if (!q->dir) {
			it->seq = e->seq;
			it->meta = xstrdup(e->meta);
			strbuf_add(&it->body, e->body.buf ? e->body.buf : "", e->body.len);
			q->inflight = e->seq;
			return 0;
		}
		ret = read_entry(q, e->seq, it);
		if (!ret) {
			q->inflight = e->seq;
			return 0;
		}
		if (transient(ret))
			return ret;
		q->corrupt++;
		remove_at(q, 0);
	}
	return -ENOENT;
}

void spool_pop(struct spool *q, uint64_t seq)
{
	for (size_t i = 0; i < q->n; i++) {
		if (q->e[i].seq == seq) {
			remove_at(q, i);
			break;
		}
	}
	q->inflight = 0;
}

void spool_unpeek(struct spool *q)
{
	q->inflight = 0;
}

void spool_item_release(struct spool_item *it)
{
	free(it->meta);
	strbuf_release(&it->body);
	memset(it, 0, sizeof(*it));
}

void spool_close(struct spool *q)
{
	for (size_t i = 0; i < q->n; i++)
		entry_free(&q->e[i]);
	free(q->e);
	/* a zeroed queue (its sink failed before opening it) has no descriptor */
	if (q->dir && q->dir_fd >= 0)
		close(q->dir_fd);       /* and the lock with it */
	free(q->dir);
	memset(q, 0, sizeof(*q));
	q->dir_fd = -1;
}

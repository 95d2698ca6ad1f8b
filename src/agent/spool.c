/*
 * Implementation of spool.h. On disk each request is one file,
 * NNNNNNNNNNNNNNNNNNNN.req (its sequence number, zero-padded so names sort
 * in order), holding a header line "framewalk-spool 1 META_LEN BODY_LEN",
 * the meta line and the body. It is written under a temporary name and
 * renamed, so a crash never leaves half a request under a real name; the
 * temporary files of a crash are removed at the next open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
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

int spool_open(struct spool *q, const char *dir, size_t max_items, uint64_t max_bytes,
	       struct strbuf *err)
{
	int ret;

	memset(q, 0, sizeof(*q));
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
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
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

/* Read request seq back from its file. 0 or -EINVAL (corrupt) / -errno. */
static int read_entry(const struct spool *q, uint64_t seq, struct spool_item *it)
{
	struct strbuf sb = STRBUF_INIT;
	char path[4096], *nl;
	size_t mlen, blen, hlen;
	int ret;

	entry_path(q, seq, path, sizeof(path));
	ret = read_file_bounded(path, SPOOL_ITEM_MAX + 128, &sb);
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
	if (mlen > sb.len || blen > sb.len || hlen + mlen + blen != sb.len ||
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
		if (!read_entry(q, e->seq, it)) {
			q->inflight = e->seq;
			return 0;
		}
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
	free(q->dir);
	memset(q, 0, sizeof(*q));
}

/*
 * Implementation of cython.h: each generated .c file is read once into a
 * sorted list of (C line, .pyx name, .pyx line) marks; a lookup is a
 * search by halving. What the file holds is the target's: names are kept
 * only as far as the quote ends (at most 255 bytes), lines are counted by
 * the newlines read, and reading stops at the byte cap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/cython.h"
#include "target/safe_open.h"
#include "util/util.h"

struct cython_mark {
	int c_line;
	int pyx_line;
	uint32_t name;              /* index into names */
};

struct cython_source {
	char *c_path;
	struct cython_mark *marks;
	size_t n;
	char **names;
	size_t nnames;
};

struct cython_sources {
	struct cython_source *s;
	size_t n, alloc;
};

#define HEAD_MAX 320   /* the start of a line looked at for a mark */

/* A mark line: optional blanks, then "/ *" (no space), blank, "NAME.pyx":LINE. */
static int parse_mark(const char *line, size_t len, char *name, size_t name_max, int *pyx_line)
{
	size_t i = 0, k = 0;
	long v = 0;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (len - i < 4 || line[i] != '/' || line[i + 1] != '*' || line[i + 2] != ' ' ||
	    line[i + 3] != '"')
		return 0;
	for (i += 4; i < len && line[i] != '"' && k + 1 < name_max; i++)
		name[k++] = line[i];
	name[k] = 0;
	if (i + 1 >= len || line[i] != '"' || line[i + 1] != ':' || k < 5 ||
	    strcmp(name + k - 4, ".pyx"))
		return 0;
	for (i += 2; i < len && line[i] >= '0' && line[i] <= '9' && v < 100000000; i++)
		v = v * 10 + (line[i] - '0');
	if (!v)
		return 0;
	*pyx_line = (int)v;
	return 1;
}

static uint32_t intern_name(struct cython_source *src, const char *name, size_t *alloc)
{
	for (size_t i = src->nnames; i-- > 0;)
		if (!strcmp(src->names[i], name))
			return (uint32_t)i;
	src->names = xgrow(src->names, sizeof(*src->names), src->nnames + 1, alloc);
	src->names[src->nnames] = xstrdup(name);
	return (uint32_t)src->nnames++;
}

static void read_source(struct elf_info *f, struct cython_source *src)
{
	char buf[65536], head[HEAD_MAX], name[256];
	size_t hlen = 0, alloc = 0, nalloc = 0;
	uint64_t total = 0;
	int fd = safe_open_in_dir(f->root, src->c_path), c_line = 1;
	ssize_t got;

	if (fd < 0)
		return;
	while (total < CYTHON_C_MAX_BYTES && src->n < CYTHON_MARKS_MAX &&
	       (got = read(fd, buf, sizeof(buf))) > 0) {
		total += (uint64_t)got;
		for (ssize_t i = 0; i < got; i++) {
			int pyx_line;

			if (buf[i] != '\n') {
				if (hlen < sizeof(head))
					head[hlen++] = buf[i];
				continue;
			}
			if (parse_mark(head, hlen, name, sizeof(name), &pyx_line) &&
			    src->n < CYTHON_MARKS_MAX) {
				src->marks = xgrow(src->marks, sizeof(*src->marks), src->n + 1, &alloc);
				src->marks[src->n].c_line = c_line;
				src->marks[src->n].pyx_line = pyx_line;
				src->marks[src->n++].name = intern_name(src, name, &nalloc);
			}
			hlen = 0;
			if (c_line < INT32_MAX)
				c_line++;
		}
	}
	close(fd);
}

int elf_cython_line(struct elf_info *f, const char *c_path, int c_line, const char **pyx,
		    int *pyx_line)
{
	struct cython_sources *all = f->cython;
	struct cython_source *src = NULL;
	size_t lo = 0, hi;

	if (!c_path || c_line <= 0)
		return -1;
	if (!all)
		all = f->cython = xcalloc(1, sizeof(*all));
	for (size_t i = 0; i < all->n && !src; i++)
		if (!strcmp(all->s[i].c_path, c_path))
			src = &all->s[i];
	if (!src) {
		all->s = xgrow(all->s, sizeof(*all->s), all->n + 1, &all->alloc);
		src = &all->s[all->n++];
		memset(src, 0, sizeof(*src));
		src->c_path = xstrdup(c_path);
		read_source(f, src);
	}
	/* the last mark at or above the line */
	hi = src->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (src->marks[mid].c_line <= c_line)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	*pyx = src->names[src->marks[lo - 1].name];
	*pyx_line = src->marks[lo - 1].pyx_line;
	return 0;
}

void elf_cython_release(struct elf_info *f)
{
	struct cython_sources *all = f->cython;

	if (!all)
		return;
	for (size_t i = 0; i < all->n; i++) {
		for (size_t k = 0; k < all->s[i].nnames; k++)
			free(all->s[i].names[k]);
		free(all->s[i].names);
		free(all->s[i].marks);
		free(all->s[i].c_path);
	}
	free(all->s);
	free(all);
	f->cython = NULL;
}

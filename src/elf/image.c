/* Implementation of image.h. */
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "elf/image.h"
#include "util/util.h"

/*
 * The mappings of one file looked at (in address order), and the ones tried
 * as where the image is: a target choosing its own maps cannot make a
 * placement cost more than these bounds.
 */
#define FILE_MAPS_MAX 4096
#define CANDIDATE_MAPS_MAX 64

static uint64_t host_page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 && !(p & (p - 1)) ? (uint64_t)p : 4096;
}

static int of_file(const struct proc_map *m, uint64_t dev, uint64_t inode)
{
	return m->inode == inode && m->dev == dev && m->path[0] == '/';
}

/*
 * The bias under which segment l holds mapping y, or 0 with *ok 0 when it
 * cannot: y's file offset is not in l's pages, or one is code and the
 * other not. *first: y starts at the segment's first page.
 */
static uint64_t bias_of(const struct proc_map *y, const struct elf_load *l, uint64_t page,
			int *ok, int *first)
{
	uint64_t off0 = l->offset & ~(page - 1), off_end = l->offset + l->filesz;

	*ok = y->offset >= off0 && y->offset < (off_end > off0 ? off_end : off0 + 1) &&
	      (y->perms[2] == 'x') == !!(l->flags & PF_X);
	*first = *ok && y->offset == off0;
	return *ok ? y->start - ((l->vaddr & ~(page - 1)) + (y->offset - off0)) : 0;
}

/*
 * Is mapping z where a loader puts some segment of the file under bias b?
 * 2 at a segment's first page, 1 inside one (a hole mprotect'ed, RELRO's
 * end, a huge-page remap's remains), 0 not.
 */
static int placed(const struct proc_map *z, const struct elf_loads *loads, uint64_t b,
		  uint64_t page)
{
	int best = 0;

	for (size_t k = 0; k < loads->n && best < 2; k++) {
		int ok, first;

		if (bias_of(z, &loads->l[k], page, &ok, &first) == b && ok)
			best = first ? 2 : 1;
	}
	return best;
}

/*
 * The image under bias b: how many segments' first pages it explains (a
 * copy of the file mapped as data, even split in pieces, starts at most one
 * of them where a loader would), and the span of its code.
 */
static void measure(const struct proc_map *const *mine, size_t n, const struct elf_loads *loads,
		    uint64_t b, uint64_t page, struct elf_image *img)
{
	memset(img, 0, sizeof(*img));
	img->bias = b;
	img->lowest = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *z = mine[i];
		int how = placed(z, loads, b, page);

		if (!how)
			continue;
		img->explained += how == 2;
		img->lowest = z->start < img->lowest ? z->start : img->lowest;
		if (z->perms[2] != 'x')
			continue;
		img->start = img->start && img->start < z->start ? img->start : z->start;
		img->end = z->end > img->end ? z->end : img->end;
	}
}

/* Try the biases under which y is a segment's; keep the best image in *out. */
static void try_candidate(const struct proc_map *y, const struct proc_map *const *mine, size_t n,
			  const struct elf_loads *loads, uint64_t page, struct elf_image *out,
			  int *found)
{
	for (size_t k = 0; k < loads->n; k++) {
		struct elf_image img;
		int ok, first;
		uint64_t b = bias_of(y, &loads->l[k], page, &ok, &first);

		if (!ok)
			continue;
		measure(mine, n, loads, b, page, &img);
		/* without code, a loaded image shows two segments where the loader put them */
		if (img.explained < 2 && !img.start)
			continue;
		if (!*found || img.explained > out->explained ||
		    (img.explained == out->explained && img.start && !out->start)) {
			*out = img;
			*found = 1;
		}
	}
}

int elf_image_place(const struct proc_maps *maps, const struct proc_map *code, uint64_t dev,
		    uint64_t inode, const struct elf_loads *loads, uint64_t page,
		    struct elf_image *out)
{
	const struct proc_map **mine;
	size_t n = 0, tried = 0;
	int found = 0;

	if (!page || (page & (page - 1)))
		page = host_page_size();
	mine = xmalloc((maps->n < FILE_MAPS_MAX ? maps->n : FILE_MAPS_MAX) * sizeof(*mine) + 1);
	for (size_t i = 0; i < maps->n && n < FILE_MAPS_MAX; i++)
		if (of_file(&maps->maps[i], dev, inode))
			mine[n++] = &maps->maps[i];
	if (code) {
		try_candidate(code, mine, n, loads, page, out, &found);
	} else {
		/* code first (each one an image's), then the rest */
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < n && tried < CANDIDATE_MAPS_MAX; i++)
				if ((mine[i]->perms[2] == 'x') == !pass) {
					try_candidate(mine[i], mine, n, loads, page, out, &found);
					tried++;
				}
	}
	free(mine);
	return found ? 0 : -ENOENT;
}

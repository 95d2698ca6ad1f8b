/* Implementation of image.h. */
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "elf/image.h"

static uint64_t page_size(void)
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
 * other not.
 */
static uint64_t bias_of(const struct proc_map *y, const struct elf_load *l, uint64_t page, int *ok)
{
	uint64_t off0 = l->offset & ~(page - 1), off_end = l->offset + l->filesz;

	*ok = y->offset >= off0 && y->offset < (off_end > off0 ? off_end : off0 + 1) &&
	      (y->perms[2] == 'x') == !!(l->flags & PF_X);
	return *ok ? y->start - ((l->vaddr & ~(page - 1)) + (y->offset - off0)) : 0;
}

/* Is mapping z where a loader puts some segment of the file under bias b? */
static int placed(const struct proc_map *z, const struct elf_loads *loads, uint64_t b,
		  uint64_t page)
{
	for (size_t k = 0; k < loads->n; k++) {
		int ok;

		if (bias_of(z, &loads->l[k], page, &ok) == b && ok)
			return 1;
	}
	return 0;
}

/* The mappings of one file considered: more are not a loaded image's. */
#define FILE_MAPS_MAX 64

/* The image under bias b: how many of the file's mappings it explains, its code's span. */
static void measure(const struct proc_map *const *mine, size_t n, const struct elf_loads *loads,
		    uint64_t b, uint64_t page, struct elf_image *img)
{
	memset(img, 0, sizeof(*img));
	img->bias = b;
	img->lowest = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *z = mine[i];

		if (!placed(z, loads, b, page))
			continue;
		img->explained++;
		img->lowest = z->start < img->lowest ? z->start : img->lowest;
		if (z->perms[2] != 'x')
			continue;
		img->start = img->start && img->start < z->start ? img->start : z->start;
		img->end = z->end > img->end ? z->end : img->end;
	}
}

int elf_image_place(const struct proc_maps *maps, const struct proc_map *code, uint64_t dev,
		    uint64_t inode, const struct elf_loads *loads, struct elf_image *out)
{
	const struct proc_map *mine[FILE_MAPS_MAX];
	uint64_t page = page_size();
	size_t n = 0;
	int found = 0;

	for (size_t i = 0; i < maps->n && n < FILE_MAPS_MAX; i++)
		if (of_file(&maps->maps[i], dev, inode))
			mine[n++] = &maps->maps[i];
	for (size_t i = 0; i < n; i++) {
		const struct proc_map *y = mine[i];

		if (code && y != code)
			continue;
		for (size_t k = 0; k < loads->n; k++) {
			struct elf_image img;
			int ok;
			uint64_t b = bias_of(y, &loads->l[k], page, &ok);

			if (!ok)
				continue;
			measure(mine, n, loads, b, page, &img);
			/* a mapping explained only by itself is a loaded image only if it is code */
			if (img.explained < 2 && !img.start)
				continue;
			if (!found || img.explained > out->explained ||
			    (img.explained == out->explained && img.start && !out->start)) {
				*out = img;
				found = 1;
			}
		}
	}
	return found ? 0 : -ENOENT;
}

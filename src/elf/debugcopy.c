/*
 * Implementation of debugcopy.h: a debug file's zlib sections written out
 * decompressed into an unlinked file, with zlib's streaming inflate (a
 * chunk at a time: never a whole section in memory).
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#include "elf/debugcopy.h"
#include "util/file.h"
#include "util/util.h"

#define CHUNK (256u << 10)
/* a copy leaves at least this much (or as much as it takes, if more) free */
#define SPARE_BYTES (64ull << 20)
#define MAX_SECTIONS 65536u
#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6

/* the bytes of every copy made and not yet released (debugcopy_release) */
static uint64_t live_bytes;

struct zsec {
	uint32_t index;
	uint64_t in_off, in_size;   /* the compressed stream, after its Elf64_Chdr */
	uint64_t out_size, align;
	uint64_t out_off;           /* in the copy */
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

/* An unlinked file of ours in a disk-backed dir with room for need bytes more; -1 if none. */
static int make_copy_file(const char *const *dirs, uint64_t need)
{
	static const char *const defaults[] = { "/var/tmp", "/tmp", NULL };

	/* need is at most DEBUGCOPY_MAX_BYTES and 16 MB: no sum below wraps */
	uint64_t want = need + (need > SPARE_BYTES ? need : SPARE_BYTES);

	for (const char *const *d = dirs ? dirs : defaults; *d; d++) {
		struct statfs sf;
		struct statvfs sv;
		int fd;

		if (statfs(*d, &sf) || sf.f_type == TMPFS_MAGIC_ || sf.f_type == RAMFS_MAGIC_ ||
		    statvfs(*d, &sv) || sv.f_bavail < want / (sv.f_frsize ? sv.f_frsize : 1) + 1)
			continue;
		/*
		 * Never a name in the directory: a file system without O_TMPFILE
		 * (overlayfs before Linux 6.6) gets no copy (a named file, even
		 * unlinked at once, could be opened by its owner meanwhile, and
		 * left behind by a kill).
		 */
		fd = open(*d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd < 0)
			continue;
		/* the room taken now: a full disk fails here, not in the middle */
		if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)need) && errno != EOPNOTSUPP) {
			close(fd);
			continue;
		}
		return fd;
	}
	return -1;
}

/* Copy n bytes from in at off to out at the same offset. */
static int copy_range(int in, int out, uint64_t n, unsigned char *buf)
{
	for (uint64_t off = 0; off < n;) {
		size_t len = n - off < CHUNK ? (size_t)(n - off) : CHUNK;

		if (pread_fd_all(in, buf, len, off) || pwrite_fd_all(out, buf, len, off))
			return -1;
		off += len;
	}
	return 0;
}

/* Inflate one section's zlib stream into out at z->out_off: exactly out_size bytes. */
static int inflate_section(int in, int out, const struct zsec *z, unsigned char *ibuf,
			   unsigned char *obuf)
{
	z_stream zs;
	uint64_t read = 0, written = 0;
	int ret = Z_OK, err = 0;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		return -1;
	while (ret != Z_STREAM_END && !err) {
		if (!zs.avail_in) {
			size_t len = z->in_size - read < CHUNK ? (size_t)(z->in_size - read) : CHUNK;

			if (!len || pread_fd_all(in, ibuf, len, z->in_off + read)) {
				err = 1;        /* the stream runs past its section, or the file was cut */
				break;
			}
			read += len;
			zs.next_in = ibuf;
			zs.avail_in = (uInt)len;
		}
		zs.next_out = obuf;
		zs.avail_out = CHUNK;
		ret = inflate(&zs, Z_NO_FLUSH);
		if (ret != Z_OK && ret != Z_STREAM_END) {
			err = 1;
			break;
		}
		size_t got = CHUNK - zs.avail_out;

		if (got > z->out_size - written ||
		    pwrite_fd_all(out, obuf, got, z->out_off + written)) {
			err = 1;        /* more than the header said */
			break;
		}
		written += got;
	}
	inflateEnd(&zs);
	return err || written != z->out_size ? -1 : 0;
}

static int by_offset(const void *a, const void *b)
{
	const struct zsec *x = a, *y = b;

	return (x->in_off > y->in_off) - (x->in_off < y->in_off);
}

uint64_t debugcopy_live_bytes(void)
{
	return live_bytes;
}

void debugcopy_release(uint64_t bytes)
{
	live_bytes -= bytes < live_bytes ? bytes : live_bytes;
}

int debugcopy_uncompressed(int fd, const char *const *dirs, uint64_t *copy_bytes)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	struct zsec *zs = NULL;
	unsigned char *ibuf = NULL, *obuf = NULL;
	struct stat st;
	uint64_t size, nsec, total = 0, end, shoff;
	size_t nz = 0;
	int out = -1, ok = 0;

	if (copy_bytes)
		*copy_bytes = 0;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > DEBUGCOPY_MAX_BYTES || pread_fd_all(fd, &eh, sizeof(eh), 0))
		return fd;
	size = (uint64_t)st.st_size;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != (BYTE_ORDER == LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shoff || eh.e_shoff >= size)
		return fd;
	nsec = eh.e_shnum;
	if (!nsec) {                    /* the count in section 0's sh_size */
		Elf64_Shdr first;

		if (pread_fd_all(fd, &first, sizeof(first), eh.e_shoff))
			return fd;
		nsec = first.sh_size;
	}
	if (!nsec || nsec > MAX_SECTIONS || nsec * sizeof(Elf64_Shdr) > size ||
	    eh.e_shoff > size - nsec * sizeof(Elf64_Shdr))
		return fd;
	sh = xcalloc(nsec, sizeof(*sh));
	if (pread_fd_all(fd, sh, nsec * sizeof(*sh), eh.e_shoff))
		goto done;
	/* section 0 is no section (its fields may hold the counts) */
	for (uint64_t i = 1; i < nsec; i++) {
		Elf64_Chdr ch;

		if (!(sh[i].sh_flags & SHF_COMPRESSED) || sh[i].sh_type == SHT_NOBITS)
			continue;
		if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
		    sh[i].sh_size <= sizeof(ch) ||
		    pread_fd_all(fd, &ch, sizeof(ch), sh[i].sh_offset) ||
		    ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_addralign > 4096 ||
		    (ch.ch_addralign & (ch.ch_addralign - 1)) ||
		    ch.ch_size > DEBUGCOPY_MAX_BYTES - size - total)
			goto done;      /* another kind, or not a file to trust with a copy */
		total += ch.ch_size;
		if (!nz || !(nz & (nz - 1)))
			zs = xrealloc(zs, (nz ? nz * 2 : 8) * sizeof(*zs));
		zs[nz++] = (struct zsec){ .index = (uint32_t)i, .in_off = sh[i].sh_offset + sizeof(ch),
					  .in_size = sh[i].sh_size - sizeof(ch),
					  .out_size = ch.ch_size, .align = ch.ch_addralign };
	}
	if (!nz)
		goto done;
	/*
	 * Each compressed byte read once: streams that overlap (one stream
	 * named by thousands of sections) would have it inflated again each.
	 */
	qsort(zs, nz, sizeof(*zs), by_offset);
	for (size_t i = 1; i < nz; i++)
		if (zs[i].in_off < zs[i - 1].in_off + zs[i - 1].in_size)
			goto done;
	/* the layout: the file as it is, the sections, the new table */
	end = size;
	for (size_t i = 0; i < nz; i++) {
		zs[i].out_off = align_up(end, zs[i].align);
		end = zs[i].out_off + zs[i].out_size;
	}
	shoff = align_up(end, 8);
	end = shoff + nsec * sizeof(Elf64_Shdr);
	/*
	 * The file and its sections are within DEBUGCOPY_MAX_BYTES; the padding
	 * for their alignment and the new table are a little more (a lot only
	 * for a file made to pad). What every copy alive holds is bounded too.
	 */
	if (end > DEBUGCOPY_MAX_BYTES + (16ull << 20) || live_bytes > DEBUGCOPY_LIVE_MAX ||
	    end > DEBUGCOPY_LIVE_MAX - live_bytes)
		goto done;
	out = make_copy_file(dirs, end);
	if (out < 0)
		goto done;
	ibuf = xmalloc(CHUNK);
	obuf = xmalloc(CHUNK);
	if (copy_range(fd, out, size, obuf))
		goto done;
	for (size_t i = 0; i < nz; i++) {
		Elf64_Shdr *s = &sh[zs[i].index];

		if (inflate_section(fd, out, &zs[i], ibuf, obuf))
			goto done;
		s->sh_offset = zs[i].out_off;
		s->sh_size = zs[i].out_size;
		s->sh_addralign = zs[i].align;
		s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
	}
	eh.e_shoff = shoff;
	if (pwrite_fd_all(out, sh, nsec * sizeof(*sh), shoff) ||
	    pwrite_fd_all(out, &eh, sizeof(eh), 0) || ftruncate(out, (off_t)end))
		goto done;
	ok = 1;
done:
	free(ibuf);
	free(obuf);
	free(zs);
	free(sh);
	if (!ok) {
		if (out >= 0)
			close(out);
		return fd;
	}
	close(fd);
	live_bytes += end;
	if (copy_bytes)
		*copy_bytes = end;
	return out;
}

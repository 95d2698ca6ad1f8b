/*
 * Implementation of funcbounds.h: a reader of .eh_frame_hdr's binary
 * search table (LSB's "Exception Frame Header") and of the one FDE and CIE
 * an address leads to (the DWARF CFI format as .eh_frame writes it: pointer
 * encodings DW_EH_PE_*, augmentation "z" with 'R' naming the FDE's
 * encoding). Only the table encoding every linker writes is accepted:
 * DW_EH_PE_datarel | DW_EH_PE_sdata4 pairs, relative to the header.
 */
#include <dwarf.h>
#include <gelf.h>
#include <string.h>

#include "elf/funcbounds.h"
#include "util/util.h"

#define EH_TABLE_ENC (DW_EH_PE_datarel | DW_EH_PE_sdata4)

struct section_span {
	uint64_t addr, offset, size;    /* file address, file offset, bytes */
};

struct eh_table {
	int usable;
	struct section_span hdr, frame;
	uint64_t table;                 /* file offset of the first pair */
	uint64_t count;                 /* pairs */
};

/* A cursor over the file's bytes [pos, end): every read is checked. */
struct cursor {
	const uint8_t *base;
	uint64_t pos, end;
	int bad;
};

static uint64_t read_bytes(struct cursor *c, unsigned n, int is_signed)
{
	uint64_t v = 0;

	if (c->bad || n > 8 || c->pos > c->end || c->end - c->pos < n) {
		c->bad = 1;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->base[c->pos + i] << (8 * i);
	c->pos += n;
	if (is_signed && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * n);
	return v;
}

static uint64_t read_uleb(struct cursor *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !c->bad; shift += 7) {
		uint64_t b = read_bytes(c, 1, 0);

		if (shift < 64)
			v |= (b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		if (shift > 70)
			c->bad = 1;
	}
	return v;
}

/* Bytes of a pointer in encoding enc's format, 0 for one not handled. */
static unsigned enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	default:
		return 0;
	}
}

/*
 * A pointer in encoding enc at the cursor, which lies in section s: its
 * value with pc-relative and data-relative applications resolved (data:
 * relative to data_base). Indirect and aligned pointers are refused.
 */
static uint64_t read_encoded(struct cursor *c, uint8_t enc, const struct section_span *s,
			     uint64_t data_base)
{
	unsigned n = enc_size(enc);
	uint64_t at = s->addr + (c->pos - s->offset), v;

	if (!n || (enc & DW_EH_PE_indirect)) {
		c->bad = 1;
		return 0;
	}
	v = read_bytes(c, n, (enc & 0x08) != 0);
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		return v;
	case DW_EH_PE_pcrel:
		return at + v;
	case DW_EH_PE_datarel:
		return data_base + v;
	default:
		c->bad = 1;
		return 0;
	}
}

static int find_section(Elf *elf, const char *want, size_t file_size, struct section_span *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, want))
			continue;
		if (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset)
			return -1;
		out->addr = sh.sh_addr;
		out->offset = sh.sh_offset;
		out->size = sh.sh_size;
		return 0;
	}
	return -1;
}

static void load_table(struct elf_info *f, struct eh_table *t)
{
	struct cursor c;
	uint8_t ptr_enc, count_enc, table_enc;

	if (!f->file.elf || find_section(f->file.elf, ".eh_frame_hdr", f->file.size, &t->hdr) ||
	    find_section(f->file.elf, ".eh_frame", f->file.size, &t->frame))
		return;
	c = (struct cursor){ f->file.image, t->hdr.offset, t->hdr.offset + t->hdr.size, 0 };
	if (read_bytes(&c, 1, 0) != 1)
		return;
	ptr_enc = (uint8_t)read_bytes(&c, 1, 0);
	count_enc = (uint8_t)read_bytes(&c, 1, 0);
	table_enc = (uint8_t)read_bytes(&c, 1, 0);
	if (c.bad || table_enc != EH_TABLE_ENC || count_enc == DW_EH_PE_omit)
		return;
	read_encoded(&c, ptr_enc, &t->hdr, t->hdr.addr);
	t->count = read_encoded(&c, count_enc, &t->hdr, t->hdr.addr);
	if (c.bad || t->count > (c.end - c.pos) / 8)
		return;
	t->table = c.pos;
	t->usable = t->count > 0;
}

/* The FDE encoding its CIE names (augmentation 'R'), or -1. */
static int cie_fde_encoding(const struct elf_info *f, const struct eh_table *t, uint64_t cie)
{
	struct cursor c = { f->file.image, cie, t->frame.offset + t->frame.size, 0 };
	uint64_t len = read_bytes(&c, 4, 0);
	const char *aug;
	size_t auglen;
	uint8_t version;

	if (len == 0xffffffffu || c.bad || len > c.end - c.pos)
		return -1;
	c.end = c.pos + len;
	if (read_bytes(&c, 4, 0) != 0)           /* a CIE's id in .eh_frame */
		return -1;
	version = (uint8_t)read_bytes(&c, 1, 0);
	if (c.bad || (version != 1 && version != 3))
		return -1;
	aug = (const char *)f->file.image + c.pos;
	auglen = strnlen(aug, c.end - c.pos);
	if (auglen == c.end - c.pos)
		return -1;
	if (aug[0] != 'z')
		return aug[0] == '\0' ? DW_EH_PE_absptr : -1;
	c.pos += auglen + 1;
	read_uleb(&c);                           /* code alignment */
	read_uleb(&c);                           /* data alignment (signed: skipped alike) */
	if (version == 1)
		read_bytes(&c, 1, 0);            /* return address register */
	else
		read_uleb(&c);
	read_uleb(&c);                           /* augmentation data length */
	for (size_t i = 1; i < auglen && !c.bad; i++) {
		switch (aug[i]) {
		case 'R':
			return (int)read_bytes(&c, 1, 0);
		case 'P': {
			uint8_t enc = (uint8_t)read_bytes(&c, 1, 0);

			if (!enc_size(enc) || c.end - c.pos < enc_size(enc))
				return -1;
			c.pos += enc_size(enc);
			break;
		}
		case 'L':
			read_bytes(&c, 1, 0);
			break;
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return -1;
		}
	}
	return c.bad ? -1 : DW_EH_PE_absptr;
}

/* The range of the FDE at file address fde, when it starts at start. */
static int fde_end(const struct elf_info *f, const struct eh_table *t, uint64_t fde, uint64_t start,
		   uint64_t *end)
{
	uint64_t off, len, cie_field, cie_ptr, begin, range;
	struct cursor c;
	int enc;

	if (fde < t->frame.addr || fde - t->frame.addr >= t->frame.size)
		return -1;
	off = t->frame.offset + (fde - t->frame.addr);
	c = (struct cursor){ f->file.image, off, t->frame.offset + t->frame.size, 0 };
	len = read_bytes(&c, 4, 0);
	if (len == 0xffffffffu || len == 0 || c.bad || len > c.end - c.pos)
		return -1;
	c.end = c.pos + len;
	cie_field = c.pos;
	cie_ptr = read_bytes(&c, 4, 0);
	if (c.bad || !cie_ptr || cie_ptr > cie_field - t->frame.offset)
		return -1;
	enc = cie_fde_encoding(f, t, cie_field - cie_ptr);
	if (enc < 0)
		return -1;
	begin = read_encoded(&c, (uint8_t)enc, &t->frame, 0);
	range = read_bytes(&c, enc_size((uint8_t)enc), 0);
	if (c.bad || begin != start || range > UINT64_MAX - begin)
		return -1;
	*end = begin + range;
	return 0;
}

int elf_function_bounds(struct elf_info *f, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	struct eh_table *t = f->eh_table;
	struct cursor c;
	uint64_t lo = 0, hi, fde = 0;
	int found = 0;

	if (!t) {
		t = f->eh_table = xcalloc(1, sizeof(*t));
		load_table(f, t);
	}
	if (!t->usable)
		return -1;
	/* The last pair whose initial location is at or below vaddr. */
	hi = t->count;
	c = (struct cursor){ f->file.image, 0, t->table + t->count * 8, 0 };
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, loc;

		c.pos = t->table + mid * 8;
		loc = t->hdr.addr + read_bytes(&c, 4, 1);
		if (c.bad)
			return -1;
		if (loc <= vaddr) {
			*start = loc;
			fde = t->hdr.addr + read_bytes(&c, 4, 1);
			found = 1;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (!found || c.bad || fde_end(f, t, fde, *start, end) || vaddr >= *end)
		return -1;
	return 0;
}

void elf_function_bounds_release(struct elf_info *f)
{
	free(f->eh_table);
	f->eh_table = NULL;
}

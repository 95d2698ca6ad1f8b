/*
 * Implementation of cfiguard.h: libdw's reading of CFI (elfutils 0.188:
 * dwarf_getcfi_elf.c, fde.c, cie.c, cfi.c, encoded-value.h) followed far
 * enough to see every register number and remember_state its CFA
 * interpreter would meet. Entries are parsed by libdw's own dwarf_next_cfi;
 * what libdw does after it (a CIE's augmentation, where an FDE's
 * instructions start, each instruction's operands) is mirrored here byte
 * for byte. Where libdw would stop, nothing after it runs; where this code
 * cannot tell what libdw would do, the CFI is refused.
 */
#include <dwarf.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/cfiguard.h"
#include "elf/elfread.h"
#include "util/util.h"

#define PE_SIGNED 0x08

/* What libdw's intern_new_cie takes from a CIE's augmentation. */
struct cie_facts {
	uint8_t fde_enc;
	int sized;                      /* 'z': the FDE's augmentation data has a length */
	size_t fde_aug_size;            /* else its size */
	unsigned maxreg;                /* the largest register its program names */
};

/* The bytes libdw reads the entries from, and what it knows about them. */
struct frame_data {
	Elf_Data *data;
	const unsigned char *ident;
	const uint8_t *buf, *end;       /* the section's bytes */
	unsigned addr_size;             /* 4 or 8: the ELF class's */
	int eh;                         /* .eh_frame (else .debug_frame) */
	uint64_t expr_bytes;            /* DWARF expressions' bytes so far (CFI_GUARD_EXPR_TOTAL_MAX) */
};

/* What follows a check: the program is safe to run (or libdw stops before harm), or not. */
enum { SAFE = 0, REFUSE = -1 };

/*
 * A LEB128 read as libdw's get_uleb128/get_sleb128 read it: its first byte
 * whatever end says, then up to ten bytes or end; *v is UINT64_MAX when it
 * does not end there (the sleb's value is not needed, only its length).
 * REFUSE when a byte libdw would read lies outside the section.
 */
static int leb(const struct frame_data *d, const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	size_t max = p < end ? (size_t)(end - p) : 0;
	uint64_t acc = 0;

	if (max > 10)
		max = 10;
	for (size_t i = 0;; i++) {
		uint8_t b;

		if (p < d->buf || p >= d->end)
			return REFUSE;
		b = *p++;
		if (i < 10)
			acc |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			break;
		if (i + 1 >= max) {
			acc = UINT64_MAX;
			break;
		}
	}
	*pp = p;
	*v = acc;
	return SAFE;
}

/* libdw's encoded_value_size: bytes of a value in encoding enc (its uleb case as written there). */
static size_t value_size(const struct frame_data *d, uint8_t enc, const uint8_t *p)
{
	if (enc == DW_EH_PE_omit)
		return 0;
	switch (enc & 0x07) {
	case DW_EH_PE_udata2:
		return 2;
	case DW_EH_PE_udata4:
		return 4;
	case DW_EH_PE_udata8:
		return 8;
	case DW_EH_PE_absptr:
		return d->addr_size;
	case DW_EH_PE_uleb128:
		if (p)
			for (const uint8_t *e = p; e >= d->buf && e < d->end;)
				if (*e++ & 0x80u)
					return (size_t)(e - p);
		return 0;
	default:
		return 0;
	}
}

/*
 * Move *pp past a value in encoding enc as libdw's read_encoded_value does:
 * 0 when it reads one, 1 when libdw fails there, REFUSE when it cannot be
 * followed (the aligned form, which no linker writes).
 */
static int skip_encoded(const struct frame_data *d, uint8_t enc, const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v;
	size_t n;

	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_pcrel:
	case DW_EH_PE_textrel:
	case DW_EH_PE_datarel:
	case DW_EH_PE_funcrel:
		break;
	case DW_EH_PE_aligned:
		return REFUSE;
	default:
		return 1;
	}
	switch (enc & 0x0f) {
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		n = 2;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		n = 4;
		break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		n = 8;
		break;
	case DW_EH_PE_absptr:
		n = d->addr_size;
		break;
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		if (leb(d, &p, d->end, &v))
			return REFUSE;
		*pp = p;
		return 0;
	default:
		return 1;
	}
	if (p < d->buf || p > d->end || (size_t)(d->end - p) < n)
		return 1;
	*pp = p + n;
	return 0;
}

/* A register rule's register: one libdw would grow its frame to is refused past the limit. */
static int reg_ok(uint64_t reg)
{
	return reg < CFI_GUARD_REG_MAX;
}

/*
 * The CFA program [p, end) as libdw's execute_cfi reads it. fde_enc is the
 * CIE's FDE pointer encoding (DW_CFA_set_loc's operand). An instruction cut
 * by the program's end is refused: libdw reads its operands past the end
 * (an expression's length there makes it decode whatever follows, later),
 * and no assembler writes one.
 */
static int check_program(struct frame_data *d, const uint8_t *p, const uint8_t *end,
			 uint8_t fde_enc, unsigned *maxreg)
{
	unsigned depth = 0;
	uint64_t reg, v, remembers = 0;

	if (end > p && (size_t)(end - p) > CFI_GUARD_PROGRAM_MAX)
		return REFUSE;
#define LEB(x) do { if (leb(d, &p, end, &(x)) || p > end) return REFUSE; } while (0)
#define RULE(x) do {                                                            \
		if (!reg_ok(x))                                                 \
			return REFUSE;                                          \
		if ((x) > *maxreg)                                              \
			*maxreg = (unsigned)(x);                                \
	} while (0)
#define SKIP(n) do { if ((size_t)(end - p) < (n)) return REFUSE; p += (n); } while (0)
#define EXPR(n) do {                                                            \
		if ((n) > (uint64_t)(end - p))                                  \
			return SAFE;    /* libdw stops */                       \
		if ((n) > CFI_GUARD_EXPR_MAX ||                                 \
		    (d->expr_bytes += (n)) > CFI_GUARD_EXPR_TOTAL_MAX)          \
			return REFUSE;                                          \
		p += (n);                                                       \
	} while (0)
	while (p < end) {
		uint8_t op = *p++;

		if (op >= DW_CFA_advance_loc && op < DW_CFA_offset)
			continue;
		if (op >= DW_CFA_offset && op < DW_CFA_restore) {
			LEB(v);         /* the offset; the register (< 64) is in op */
			RULE(op & 0x3fu);
			continue;
		}
		if (op >= DW_CFA_restore) {
			RULE(op & 0x3fu);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_GNU_window_save:    /* registers 8..31 */
			break;
		case DW_CFA_advance_loc1:
			SKIP(1);
			break;
		case DW_CFA_advance_loc2:
			SKIP(2);
			break;
		case DW_CFA_advance_loc4:
			SKIP(4);
			break;
		case DW_CFA_MIPS_advance_loc8:
			SKIP(8);
			break;
		case DW_CFA_set_loc: {
			int r = skip_encoded(d, fde_enc, &p);

			if (r)
				return r > 0 ? SAFE : REFUSE;
			if (p > end)
				return REFUSE;
			break;
		}
		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
			LEB(v);
			LEB(v);
			break;
		case DW_CFA_def_cfa_register:
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			LEB(v);
			break;
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_restore_extended:
			LEB(reg);
			RULE(reg);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_GNU_negative_offset_extended:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_register:
			LEB(reg);
			LEB(v);
			RULE(reg);
			break;
		case DW_CFA_def_cfa_expression:
			LEB(v);
			EXPR(v);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			LEB(reg);
			LEB(v);
			RULE(reg);
			EXPR(v);
			break;
		case DW_CFA_remember_state:
			if (++depth > CFI_GUARD_DEPTH_MAX)
				return REFUSE;
			remembers++;
			break;
		case DW_CFA_restore_state:
			if (!depth)
				return SAFE;    /* libdw stops: nothing to restore */
			depth--;
			break;
		default:
			return SAFE;            /* an instruction libdw does not know: it stops */
		}
	}
#undef LEB
#undef RULE
#undef SKIP
#undef EXPR
	/*
	 * each remember_state a copy of the frame (8 bytes a register up to the
	 * largest named, and its head), at every lookup through the program:
	 * python3.15's interpreter loop has 957 of 17 registers
	 */
	if (remembers * 8 * ((uint64_t)*maxreg + 1 + 8) > CFI_GUARD_REMEMBER_BYTES_MAX)
		return REFUSE;
	return SAFE;
}

static int in_section(const struct frame_data *d, const uint8_t *p)
{
	return p >= d->buf && p < d->end;
}

static int cie_facts(const struct frame_data *d, const Dwarf_CIE *cie, struct cie_facts *out)
{
	const uint8_t *data = cie->augmentation_data;

	out->fde_enc = DW_EH_PE_absptr;
	out->sized = 0;
	out->fde_aug_size = 0;
	out->maxreg = 0;
	for (const char *ap = cie->augmentation; *ap; ap++) {
		uint8_t enc;

		switch (*ap) {
		case 'z':
			out->sized = 1;
			continue;
		case 'S':
			continue;
		case 'L':
			if (!in_section(d, data))
				return REFUSE;
			enc = *data++;
			if (!out->sized)
				out->fde_aug_size += value_size(d, enc, NULL);
			continue;
		case 'R':
			if (!in_section(d, data))
				return REFUSE;
			out->fde_enc = *data++;
			continue;
		case 'P':
			if (!in_section(d, data))
				return REFUSE;
			enc = *data++;
			data += value_size(d, enc, data);
			continue;
		default:
			if (out->sized)
				continue;
		}
		break;
	}
	return SAFE;
}

/* A CIE the walk met: its offset and what libdw takes from it. */
struct cie_seen {
	Dwarf_Off off;
	struct cie_facts facts;
};

/* An FDE the walk met. */
struct fde_seen {
	Dwarf_Off off;
	Dwarf_FDE fde;
};

/* The element of an array sorted by the Dwarf_Off at key_offset whose offset is off, or NULL. */
static const void *find_off(const void *base, size_t n, size_t size, size_t key_offset,
			    Dwarf_Off off)
{
	size_t i = count_at_or_below(base, n, size, key_offset, off);
	const char *e;
	Dwarf_Off at;

	if (!i)
		return NULL;            /* none (base may be NULL) */
	e = (const char *)base + (i - 1) * size;
	memcpy(&at, e + key_offset, sizeof(at));
	return at == off ? e : NULL;
}

/* An FDE (libdw's intern_fde): where its instructions start, then the instructions. */
static int check_fde(struct frame_data *d, const Dwarf_FDE *fde, const struct cie_facts *facts)
{
	const uint8_t *p = fde->start, *end = fde->end;
	unsigned maxreg;
	int r;

	if ((r = skip_encoded(d, facts->fde_enc, &p)) ||
	    (r = skip_encoded(d, facts->fde_enc & 0x0f, &p)))
		return r > 0 ? SAFE : REFUSE;
	if (facts->sized) {
		uint64_t len;

		if (leb(d, &p, end, &len) || p > end)
			return REFUSE;
		if ((uint64_t)(end - p) < len)
			return SAFE;            /* libdw stops */
		p += len;
	} else {
		if (p > end || facts->fde_aug_size > (uint64_t)(end - p))
			return REFUSE;
		p += facts->fde_aug_size;
	}
	maxreg = facts->maxreg;
	return check_program(d, p, end, facts->fde_enc, &maxreg);
}

/*
 * Every entry libdw's linear search reads (fde.c: an invalid entry is
 * skipped when its length let dwarf_next_cfi go on), checked; the FDEs in
 * *fdes (by offset, ascending) for the search table's check. An FDE must
 * name a CIE of the walk: libdw takes a CIE wherever one parses, and one
 * inside another entry's bytes would have libdw decode those bytes twice,
 * two ways (its expression cache, keyed by address, then asserts).
 */
static int check_entries(struct frame_data *d, struct fde_seen **fdes, size_t *nfdes)
{
	struct cie_seen *cies = NULL;
	struct fde_seen *seen = NULL;
	size_t ncies = 0, acies = 0, nseen = 0, aseen = 0;
	Dwarf_Off off = 0;
	int ret = SAFE;

	for (;;) {
		Dwarf_CFI_Entry e;
		Dwarf_Off next = off;
		int r = dwarf_next_cfi(d->ident, d->data, d->eh, off, &next, &e);

		if (r > 0 || (r < 0 && next == off) || next <= off)
			break;
		if (r == 0 && dwarf_cfi_cie_p(&e)) {
			struct cie_seen c = { off, { 0, 0, 0, 0 } };

			if (ncies >= CFI_GUARD_CIES_MAX || cie_facts(d, &e.cie, &c.facts) ||
			    check_program(d, e.cie.initial_instructions,
					  e.cie.initial_instructions_end, c.facts.fde_enc,
					  &c.facts.maxreg)) {
				ret = REFUSE;
				goto out;
			}
			cies = xgrow(cies, sizeof(*cies), ncies + 1, &acies);
			cies[ncies++] = c;
		} else if (r == 0) {
			if (nseen >= CFI_GUARD_FDES_MAX) {
				ret = REFUSE;
				goto out;
			}
			seen = xgrow(seen, sizeof(*seen), nseen + 1, &aseen);
			seen[nseen].off = off;
			seen[nseen++].fde = e.fde;
		}
		off = next;
	}
	for (size_t i = 0; i < nseen && !ret; i++) {
		const struct cie_seen *c = find_off(cies, ncies, sizeof(*cies),
						    offsetof(struct cie_seen, off),
						    seen[i].fde.CIE_pointer);

		if (!c || check_fde(d, &seen[i].fde, &c->facts))
			ret = REFUSE;
	}
out:
	free(cies);
	*fdes = seen;
	*nfdes = nseen;
	return ret;
}

/*
 * .eh_frame_hdr's search table (dwarf_getcfi_elf.c's parse_eh_frame_hdr):
 * when libdw would use it, every FDE it names must be one the linear walk
 * checked. Only the encodings linkers write are followed.
 */
static int check_table(Elf_Data *hdr, uint64_t hdr_vaddr, uint64_t frame_vaddr,
		       const struct fde_seen *fdes, size_t nfdes)
{
	const uint8_t *h = hdr->d_buf;
	size_t n = hdr->d_size;
	uint64_t ptr, count;

	if (!h || n < 4 || h[0] != 1 || h[1] == DW_EH_PE_omit)
		return SAFE;                    /* libdw makes no CFI of the file */
	if (h[2] == DW_EH_PE_omit || h[3] == DW_EH_PE_omit ||
	    (h[3] & ~PE_SIGNED) == DW_EH_PE_uleb128)
		return SAFE;                    /* no table */
	if (h[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) || h[2] != DW_EH_PE_udata4 ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || n < 12)
		return REFUSE;
	ptr = hdr_vaddr + 4 + (uint64_t)(int64_t)load_i32(h, 4);
	count = (uint32_t)load_i32(h, 8);
	if (!count || count > (n - 12) / 4 / 2 || ptr != frame_vaddr)
		return SAFE;                    /* no table, or no CFI */
	for (uint64_t i = 0; i < count; i++) {
		uint64_t fde = hdr_vaddr + (uint64_t)(int64_t)load_i32(h, 12 + 8 * i + 4);

		if (!find_off(fdes, nfdes, sizeof(*fdes), offsetof(struct fde_seen, off),
			      fde - frame_vaddr))
			return REFUSE;
	}
	return SAFE;
}

/* Pin [p, p + n) (elf/elfread.h: pin_private) and widen *span over it. */
static void pin(const void *p, size_t n, struct elf_span *span)
{
	if (!n)
		return;
	pin_private(p, n);
	elf_span_widen(span, p, (const uint8_t *)p + n);
}

static const char *section_name(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh)
{
	if (!gelf_getshdr(scn, sh))
		return NULL;
	return elf_strptr(elf, shstrndx, sh->sh_name);
}

static int frame_data_of(Elf *elf, Elf_Data *data, int eh, struct frame_data *d)
{
	d->data = data;
	d->ident = (const unsigned char *)elf_getident(elf, NULL);
	d->buf = data->d_buf;
	d->end = d->buf + data->d_size;
	d->eh = eh;
	d->expr_bytes = 0;
	if (!d->ident || d->ident[EI_DATA] != ELFDATA2LSB)
		return REFUSE;
	d->addr_size = d->ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	return SAFE;
}

int cfi_guard_eh_frame(Elf *elf, struct elf_span *span)
{
	Elf_Scn *scn = NULL, *frame = NULL, *hdr = NULL;
	GElf_Shdr sh, frame_sh = { 0 }, hdr_sh = { 0 };
	size_t shstrndx, nfdes;
	struct frame_data d;
	struct fde_seen *fdes;
	Elf_Data *data, *hd = NULL;
	int r;

	/* no section headers: libdw reads PT_GNU_EH_FRAME's, sized by the file (refused) */
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) || !shstrndx)
		return REFUSE;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = section_name(elf, shstrndx, scn, &sh);

		if (!name)
			continue;
		if (!strcmp(name, ".eh_frame")) {
			if (frame)
				return REFUSE;
			frame = scn;
			frame_sh = sh;
		} else if (!strcmp(name, ".eh_frame_hdr")) {
			if (hdr)
				return REFUSE;
			hdr = scn;
			hdr_sh = sh;
		}
	}
	if (!frame)
		return REFUSE;
	if (frame_sh.sh_type == SHT_NOBITS)
		return SAFE;                    /* libdw makes no CFI of it */
	data = elf_rawdata(frame, NULL);
	if (!data || !data->d_buf)
		return SAFE;
	if (frame_data_of(elf, data, 1, &d) || data->d_size > CFI_GUARD_SECTION_MAX)
		return REFUSE;
	if (hdr && (hd = elf_rawdata(hdr, NULL)) && hd->d_buf && hd->d_size > CFI_GUARD_SECTION_MAX)
		return REFUSE;
	if (hd && hd->d_buf)
		pin(hd->d_buf, hd->d_size, span);
	pin(data->d_buf, data->d_size, span);
	r = check_entries(&d, &fdes, &nfdes);
	if (!r && hd && hd->d_buf)
		r = check_table(hd, hdr_sh.sh_addr, frame_sh.sh_addr, fdes, nfdes);
	free(fdes);
	return r;
}

int cfi_guard_debug_frame(Dwarf *dwarf, struct elf_span *span)
{
	Elf *elf = dwarf ? dwarf_getelf(dwarf) : NULL;
	Elf_Scn *scn = NULL, *frame = NULL;
	GElf_Shdr sh, frame_sh = { 0 };
	size_t shstrndx, nfdes;
	struct frame_data d;
	struct fde_seen *fdes;
	Elf_Data *data;
	int r;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) || !shstrndx)
		return REFUSE;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = section_name(elf, shstrndx, scn, &sh);

		if (!name || !strstr(name, "debug_frame"))
			continue;
		/* .zdebug_frame, an LTO copy or a second one: libdw's choice not followed */
		if (frame || strcmp(name, ".debug_frame"))
			return REFUSE;
		frame = scn;
		frame_sh = sh;
	}
	if (!frame || frame_sh.sh_type == SHT_NOBITS)
		return SAFE;
	if (frame_sh.sh_flags & SHF_COMPRESSED)
		return REFUSE;                  /* libdw decompressed it when it began: it did not */
	data = elf_getdata(frame, NULL);
	if (!data || !data->d_buf)
		return SAFE;
	if (frame_data_of(elf, data, 0, &d) || data->d_size > CFI_GUARD_SECTION_MAX)
		return REFUSE;
	pin(data->d_buf, data->d_size, span);
	r = check_entries(&d, &fdes, &nfdes);
	free(fdes);
	return r;
}

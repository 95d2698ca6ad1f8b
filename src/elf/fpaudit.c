/*
 * Implementation of fpaudit.h. Functions come from the FDEs of the unwind
 * tables (complete also in stripped files) plus the function symbols no FDE
 * covers; each examined function's CFI rows are read with libdw
 * (dwarf_cfi_addrframe, dwarf_frame_cfa) and its first bytes matched against
 * the frame-setup prologue. The file may be hostile: every pointer into
 * section data is bounds-checked, and libdw does its own checking.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "elf/cfiguard.h"
#include "elf/elfread.h"
#include "elf/fpaudit.h"
#include "target/debuginfo.h"
#include "util/util.h"

#define MAX_ROWS 64                    /* CFI rows read per function */

/* Toolchain glue that never had a frame pointer, whatever the module's flags. */
static const char *const crt_functions[] = {
	"_init", "_fini", "_start", "deregister_tm_clones", "register_tm_clones",
	"__do_global_dtors_aux", "frame_dummy", "__libc_csu_init", "__libc_csu_fini",
	"_dl_relocate_static_pie",
};

struct xsection {
	uint64_t addr, size;
	const uint8_t *data;            /* NULL when unreadable */
	int skip;                       /* .plt*, .init, .fini */
};

struct fn {
	uint64_t start, end;
	const char *name;               /* from the symbol table, may be NULL */
	int has_fde;
};

struct module {
	Elf *elf;
	struct xsection *xs;
	size_t nxs, axs;
	struct fn *syms;                /* function symbols, sorted by start */
	size_t nsyms, asyms;
	struct fn *fdes;                /* FDE ranges, sorted by start */
	size_t nfdes, afdes;
	Dwarf_CFI *cfi;
	Dwarf *dwarf;                   /* owner of cfi for .debug_frame */
	int cfi_from_elf;               /* cfi must be released with dwarf_cfi_end */
	unsigned machine;               /* e_machine */
};

int fpa_prologue_match(const uint8_t *code, size_t len)
{
	return arch_prologue_sets_fp(code, len, arch_prologue_window);
}

enum fpa_verdict fpa_verdict_of(size_t with_fp, size_t without_fp)
{
	double pct;

	if (!with_fp && !without_fp)
		return FPA_NA;
	pct = 100.0 * (double)with_fp / (double)(with_fp + without_fp);
	if (pct >= FPA_YES_PERCENT)
		return FPA_YES;
	if (pct >= FPA_NO_PERCENT)
		return FPA_PARTLY;
	return FPA_NO;
}

const char *fpa_verdict_name(enum fpa_verdict v)
{
	switch (v) {
	case FPA_NA: return "n/a";
	case FPA_NO: return "no";
	case FPA_PARTLY: return "partly";
	case FPA_YES: return "yes";
	case FPA_UNKNOWN:
	default: return "unknown";
	}
}

enum fpa_unwind fpa_unwind_of(const struct fpa_result *r)
{
	if (r->verdict == FPA_YES || r->verdict == FPA_NA)
		return FPA_UNWIND_FP;
	if (r->cfi_section && r->fdes)
		return FPA_UNWIND_DWARF;
	return FPA_UNWIND_NONE;
}

const char *fpa_unwind_name(enum fpa_unwind u)
{
	switch (u) {
	case FPA_UNWIND_FP: return "frame-pointers";
	case FPA_UNWIND_DWARF: return "dwarf";
	case FPA_UNWIND_NONE:
	default: return "none";
	}
}

const char *fpa_symbols_name(enum fpa_symbols s)
{
	switch (s) {
	case FPA_SYMS_SYMTAB: return "symtab";
	case FPA_SYMS_DYNSYM: return "dynsym";
	case FPA_SYMS_NONE:
	default: return "none";
	}
}

static int cmp_fn(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end < y->end) - (x->end > y->end);   /* longest first */
}

/* Sort and keep one entry per start address. */
static void sort_unique(struct fn *v, size_t *n)
{
	size_t o = 0;

	if (!*n)
		return;
	sort_array(v, *n, sizeof(*v), cmp_fn);
	for (size_t i = 0; i < *n; i++) {
		if (o && v[o - 1].start == v[i].start) {
			if (!v[o - 1].name)
				v[o - 1].name = v[i].name;
			continue;
		}
		v[o++] = v[i];
	}
	*n = o;
}

/* The entry of sorted v whose range holds addr, or NULL. */
static const struct fn *find_fn(const struct fn *v, size_t n, uint64_t addr)
{
	size_t lo = count_at_or_below(v, n, sizeof(*v), offsetof(struct fn, start), addr);

	if (!lo)
		return NULL;
	return addr < v[lo - 1].end ? &v[lo - 1] : NULL;
}

static const struct xsection *find_xsection(const struct module *m, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < m->nxs; i++)
		if (start >= m->xs[i].addr && end <= m->xs[i].addr + m->xs[i].size && end > start)
			return &m->xs[i];
	return NULL;
}

static int is_crt_function(const char *name)
{
	if (!name)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(crt_functions); i++)
		if (!strcmp(name, crt_functions[i]))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Sections, symbols, notes                                            */

static void read_debuglink(Elf_Scn *scn, struct fpa_result *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !data->d_buf || !data->d_size)
		return;
	n = strnlen(data->d_buf, data->d_size);
	if (n == data->d_size || n >= sizeof(out->debuglink) || memchr(data->d_buf, '/', n))
		return;
	memcpy(out->debuglink, data->d_buf, n);
	out->debuglink[n] = '\0';
	/* The CRC follows the name, padded to 4 bytes. */
	n = (n + 4) & ~(size_t)3;
	if (n + 4 <= data->d_size)
		memcpy(&out->debuglink_crc, (const char *)data->d_buf + n, 4);
}

static void add_symbols(struct module *m, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count;

	if (!data || !shdr->sh_entsize)
		return;
	count = data->d_size / shdr->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		struct fn f;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_size || sym.st_value + sym.st_size < sym.st_value)
			continue;
		f.start = sym.st_value;
		f.end = sym.st_value + sym.st_size;
		f.name = elf_strptr(m->elf, shdr->sh_link, sym.st_name);
		f.has_fde = 0;
		m->syms = xgrow(m->syms, sizeof(*m->syms), m->nsyms + 1, &m->asyms);
		m->syms[m->nsyms++] = f;
	}
}

#define NT_GNU_PROPERTY_TYPE_0_ 5

/* Per machine: the property holding its feature word, and what its bits 0 and 1 mean. */
static const struct {
	unsigned machine;
	uint32_t type;
	unsigned bit0, bit1;
} feature_words[] = {
	{ EM_AARCH64, 0xc0000000u, FPA_BP_BTI, FPA_BP_PAC },    /* ..._AARCH64_FEATURE_1_AND */
	{ EM_X86_64, 0xc0000002u, FPA_BP_IBT, FPA_BP_SHSTK },   /* ..._X86_FEATURE_1_AND */
};

/*
 * The branch protection every object of the file was built with, from
 * .note.gnu.property (the linker keeps a feature only where all its inputs
 * had it). The note is untrusted: each property is bounds-checked.
 */
static void read_properties(Elf_Scn *scn, unsigned machine, struct fpa_result *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next, w = 0;

	while (w < sizeof(feature_words) / sizeof(feature_words[0]) &&
	       feature_words[w].machine != machine)
		w++;
	if (w == sizeof(feature_words) / sizeof(feature_words[0]) || !data || !data->d_buf)
		return;
	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const uint8_t *d = (const uint8_t *)data->d_buf + desc_off;
		size_t at = 0;

		off = next;
		if (nh.n_type != NT_GNU_PROPERTY_TYPE_0_ || nh.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4))
			continue;
		while (at + 8 <= nh.n_descsz) {
			uint32_t type, size, bits;

			memcpy(&type, d + at, 4);
			memcpy(&size, d + at + 4, 4);
			if (size > nh.n_descsz - at - 8)
				break;
			if (type == feature_words[w].type && size >= 4) {
				memcpy(&bits, d + at + 8, 4);
				out->branch_protection |= (bits & 1 ? feature_words[w].bit0 : 0) |
							  (bits & 2 ? feature_words[w].bit1 : 0);
			}
			at += 8 + (((size_t)size + 7) & ~(size_t)7);   /* 8-aligned in ELF64 */
		}
	}
}

const char *fpa_branch_protection_name(unsigned bit)
{
	switch (bit) {
	case FPA_BP_PAC: return "PAC";
	case FPA_BP_BTI: return "BTI";
	case FPA_BP_IBT: return "IBT";
	case FPA_BP_SHSTK: return "SHSTK";
	default: return NULL;
	}
}

/* Walk the section headers once: code, symbol tables, notes, debug sections. */
static int scan_sections(struct module *m, struct fpa_result *out, Elf_Scn **cfi_scn)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL, *eh = NULL, *dbg = NULL;
	GElf_Shdr shdr, symtab_shdr, dynsym_shdr;
	size_t shstrndx;

	if (elf_getshdrstrndx(m->elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(m->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		name = elf_strptr(m->elf, shstrndx, shdr.sh_name);
		if (!name)
			name = "";
		if (shdr.sh_type == SHT_SYMTAB && shdr.sh_entsize &&
		    shdr.sh_size / shdr.sh_entsize > 1) {
			symtab = scn;
			symtab_shdr = shdr;
		} else if (shdr.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsym_shdr = shdr;
		} else if (shdr.sh_type == SHT_NOTE || shdr.sh_type == SHT_NOBITS) {
			/* the build-id: elfread_build_id, after the walk */
			if (shdr.sh_type == SHT_NOTE && !strcmp(name, ".note.gnu.property"))
				read_properties(scn, m->machine, out);
			continue;
		} else if (!strcmp(name, ".eh_frame") && shdr.sh_size > 4) {
			eh = scn;
		} else if (!strcmp(name, ".debug_frame") && shdr.sh_size > 4) {
			dbg = scn;
		} else if (!strcmp(name, ".debug_info") && shdr.sh_size) {
			out->debug_embedded = 1;
		} else if (!strcmp(name, ".gnu_debugdata")) {
			out->minidebuginfo = 1;
		} else if (!strcmp(name, ".gnu_debuglink")) {
			read_debuglink(scn, out);
		}
		if (shdr.sh_type == SHT_PROGBITS && (shdr.sh_flags & SHF_EXECINSTR) && shdr.sh_size) {
			Elf_Data *data = elf_getdata(scn, NULL);
			struct xsection x = { shdr.sh_addr, shdr.sh_size, NULL, 0 };

			if (data && data->d_buf && data->d_size == shdr.sh_size)
				x.data = data->d_buf;
			x.skip = !strncmp(name, ".plt", 4) || !strcmp(name, ".init") ||
				 !strcmp(name, ".fini");
			m->xs = xgrow(m->xs, sizeof(*m->xs), m->nxs + 1, &m->axs);
			m->xs[m->nxs++] = x;
		}
	}
	if (elfread_build_id(m->elf, out->build_id, sizeof(out->build_id), 0))
		out->build_id[0] = '\0';
	if (symtab) {
		out->symbols = FPA_SYMS_SYMTAB;
		add_symbols(m, symtab, &symtab_shdr);
	} else if (dynsym) {
		out->symbols = FPA_SYMS_DYNSYM;
		add_symbols(m, dynsym, &dynsym_shdr);
	}
	sort_unique(m->syms, &m->nsyms);
	if (eh) {
		*cfi_scn = eh;
		out->cfi_section = ".eh_frame";
	} else if (dbg) {
		*cfi_scn = dbg;
		out->cfi_section = ".debug_frame";
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* FDE enumeration                                                     */

struct cie_info {
	Dwarf_Off off;
	uint8_t enc;                    /* FDE pointer encoding */
	int ok;
};

static int read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -EINVAL;
}

/* Read an encoded value (format in the low nibble). 0 or -EINVAL. */
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t *v)
{
	size_t n;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: n = 8; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: n = 4; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: n = 2; break;
	case DW_EH_PE_uleb128: return read_uleb(p, end, v);
	case DW_EH_PE_sleb128: {
		uint64_t u;
		const uint8_t *s = *p;
		int ret = read_uleb(p, end, &u);
		size_t bits = (size_t)(*p - s) * 7;

		if (!ret && bits < 64 && (u >> (bits - 1)) & 1)
			u |= ~0ull << bits;
		*v = u;
		return ret;
	}
	default: return -EINVAL;
	}
	if ((size_t)(end - *p) < n)
		return -EINVAL;
	if (n == 8) {
		memcpy(v, *p, 8);
	} else if (n == 4) {
		uint32_t x;
		memcpy(&x, *p, 4);
		*v = (enc & 0x0f) == DW_EH_PE_sdata4 ? (uint64_t)(int64_t)(int32_t)x : x;
	} else {
		uint16_t x;
		memcpy(&x, *p, 2);
		*v = (enc & 0x0f) == DW_EH_PE_sdata2 ? (uint64_t)(int64_t)(int16_t)x : x;
	}
	*p += n;
	return 0;
}

/* The FDE pointer encoding a CIE declares ('R' in a "z..." augmentation). */
static int cie_fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const char *a = cie->augmentation;
	const uint8_t *d = cie->augmentation_data, *end;

	*enc = DW_EH_PE_absptr;
	if (!a || !a[0])
		return 0;
	if (a[0] != 'z' || !d)
		return -EINVAL;
	end = d + cie->augmentation_data_size;
	for (a++; *a; a++) {
		uint64_t skip;

		switch (*a) {
		case 'R':
			if (d >= end)
				return -EINVAL;
			*enc = *d++;
			return 0;
		case 'L':
			d++;
			break;
		case 'P':
			if (d >= end)
				return -EINVAL;
			skip = *d++;
			if (read_encoded(&d, end, (uint8_t)skip, &skip))
				return -EINVAL;
			break;
		case 'S': case 'B': case 'G':
			break;
		default:
			return 0;
		}
	}
	return 0;
}

static const struct cie_info *find_cie(const struct cie_info *v, size_t n, Dwarf_Off off)
{
	for (size_t i = n; i-- > 0;)
		if (v[i].off == off)
			return &v[i];
	return NULL;
}

static void collect_fdes(struct module *m, Elf_Scn *scn, int eh_frame)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const unsigned char *ident = (const unsigned char *)elf_getident(m->elf, NULL);
	struct cie_info *cies = NULL;
	size_t ncies = 0, acies = 0;
	Dwarf_Off off = 0, next;
	GElf_Shdr shdr;

	if (!data || !data->d_buf || !ident || !gelf_getshdr(scn, &shdr))
		return;
	for (size_t guard = 0; guard < 10000000; guard++) {
		Dwarf_CFI_Entry e;
		int r = dwarf_next_cfi(ident, data, eh_frame, off, &next, &e);

		if (r != 0 || next <= off)
			break;
		if (dwarf_cfi_cie_p(&e)) {
			struct cie_info ci = { off, 0, 0 };

			ci.ok = !cie_fde_encoding(&e.cie, &ci.enc) &&
				!(ci.enc & DW_EH_PE_indirect) &&
				((ci.enc & 0x70) == 0 || (ci.enc & 0x70) == DW_EH_PE_pcrel);
			cies = xgrow(cies, sizeof(*cies), ncies + 1, &acies);
			cies[ncies++] = ci;
		} else {
			const struct cie_info *ci = find_cie(cies, ncies, e.fde.CIE_pointer);
			const uint8_t *p = e.fde.start, *end = e.fde.end;
			uint64_t start, range;

			if (ci && ci->ok && p >= (const uint8_t *)data->d_buf &&
			    !read_encoded(&p, end, ci->enc, &start) &&
			    !read_encoded(&p, end, ci->enc & 0x0f, &range) && range) {
				if ((ci->enc & 0x70) == DW_EH_PE_pcrel)
					start += shdr.sh_addr +
						 (uint64_t)(e.fde.start - (const uint8_t *)data->d_buf);
				if (start + range > start) {
					struct fn f = { start, start + range, NULL, 1 };

					m->fdes = xgrow(m->fdes, sizeof(*m->fdes), m->nfdes + 1, &m->afdes);
					m->fdes[m->nfdes++] = f;
				}
			}
		}
		off = next;
	}
	free(cies);
	sort_unique(m->fdes, &m->nfdes);
}

/* ------------------------------------------------------------------ */
/* Per-function classification                                         */

enum fn_class { FN_WITH_FP, FN_WITHOUT_FP, FN_NEUTRAL };

/* Where a row saves register reg: CFA + *off (the offset(N) rule). 0 or -1. */
static int saved_at(Dwarf_Frame *frame, int reg, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, reg, mem, &ops, &nops) || !ops || !nops ||
	    ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	if (nops == 1) {
		*off = 0;
		return 0;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return 0;
	}
	if (nops == 3 && (ops[1].atom == DW_OP_consts || ops[1].atom == DW_OP_constu) &&
	    ops[2].atom == DW_OP_plus) {
		*off = (int64_t)ops[1].number;
		return 0;
	}
	return -1;
}

/*
 * Does the row save a frame record: the frame pointer and, just above it,
 * a return address column that is a real register (aarch64: x29 at CFA-N,
 * x30 at CFA-N+8)? gcc keeps the CFA on sp with frame pointers on aarch64,
 * so the record is what tells; without frame pointers it saves x30 alone.
 * On x86-64 the return address column is rip, always at CFA-8, and a saved
 * rbp beside it says nothing: never.
 */
static int saves_frame_record(Dwarf_Frame *frame, int ra_reg)
{
	int64_t fp_off, ra_off;

	if (ra_reg == arch_reg_ip || ra_reg < 0)
		return 0;
	return !saved_at(frame, arch_reg_fp, &fp_off) && !saved_at(frame, ra_reg, &ra_off) &&
	       ra_off - fp_off == arch_fp.ret_addr_off - arch_fp.saved_fp_off;
}

/*
 * Read the CFI rows of [start, end): *rbp when a row puts the CFA on the
 * frame pointer (rbp, x29) or saves a frame record (saves_frame_record),
 * *entry_only when every row keeps the CFA where a function's entry has it
 * (rsp+8, sp+0). 0, or -ENOENT without CFI.
 */
static int cfi_rows(struct module *m, uint64_t start, uint64_t end, int *rbp, int *entry_only)
{
	uint64_t pc = start;
	int rows = 0;

	*rbp = 0;
	*entry_only = 1;
	while (pc < end && rows < MAX_ROWS) {
		Dwarf_Frame *frame;
		Dwarf_Op *ops;
		size_t nops;
		Dwarf_Addr fstart, fend;
		int ra_reg;

		if (dwarf_cfi_addrframe(m->cfi, pc, &frame))
			return rows ? 0 : -ENOENT;
		if (!dwarf_frame_cfa(frame, &ops, &nops) && nops == 1 && ops[0].atom == DW_OP_bregx) {
			if (ops[0].number == (Dwarf_Word)arch_reg_fp)
				*rbp = 1;
			if (ops[0].number != (Dwarf_Word)arch_reg_sp ||
			    (int64_t)ops[0].number2 != arch_entry_cfa_offset)
				*entry_only = 0;
		} else {
			*entry_only = 0;        /* an expression: not a plain entry state */
		}
		ra_reg = dwarf_frame_info(frame, &fstart, &fend, NULL);
		if (ra_reg >= 0 && saves_frame_record(frame, ra_reg))
			*rbp = 1;
		if (ra_reg < 0 || fend <= pc) {
			free(frame);
			break;
		}
		free(frame);
		pc = fend;
		rows++;
	}
	return 0;
}

static enum fn_class classify(struct module *m, const struct fn *f, const struct xsection *x,
			      int *no_cfi)
{
	uint64_t size = f->end - f->start;
	const uint8_t *code = NULL;
	size_t avail = 0;
	int prologue = 0, rbp, entry_only;

	*no_cfi = 0;
	if (x->data) {
		code = x->data + (f->start - x->addr);
		avail = (size_t)(x->addr + x->size - f->start);
		if (avail > size)
			avail = (size_t)size;
		prologue = fpa_prologue_match(code, avail);
	}
	if (size < FPA_SMALL)
		return FN_NEUTRAL;
	/* The CFI is exact where it exists; the bytes are the fallback. */
	if (m->cfi && f->has_fde && !cfi_rows(m, f->start, f->end, &rbp, &entry_only)) {
		if (rbp)
			return FN_WITH_FP;
		return entry_only ? FN_NEUTRAL : FN_WITHOUT_FP;
	}
	*no_cfi = 1;
	return prologue ? FN_WITH_FP : FN_WITHOUT_FP;
}

/* The functions to examine: every FDE, plus function symbols no FDE covers. */
static struct fn *candidates(struct module *m, size_t *n)
{
	struct fn *v = NULL;
	size_t alloc = 0;

	*n = 0;
	for (size_t i = 0; i < m->nfdes; i++) {
		const struct xsection *x = find_xsection(m, m->fdes[i].start, m->fdes[i].end);
		const struct fn *s;
		struct fn f = m->fdes[i];

		if (!x || x->skip)
			continue;
		s = find_fn(m->syms, m->nsyms, f.start);
		if (s && s->start == f.start)
			f.name = s->name;
		if (is_crt_function(f.name))
			continue;
		v = xgrow(v, sizeof(*v), *n + 1, &alloc);
		v[(*n)++] = f;
	}
	for (size_t i = 0; i < m->nsyms; i++) {
		const struct xsection *x = find_xsection(m, m->syms[i].start, m->syms[i].end);

		if (!x || x->skip || is_crt_function(m->syms[i].name) ||
		    find_fn(m->fdes, m->nfdes, m->syms[i].start))
			continue;
		v = xgrow(v, sizeof(*v), *n + 1, &alloc);
		v[(*n)++] = m->syms[i];
	}
	return v;
}

static void analyse(struct module *m, struct fpa_result *out)
{
	size_t n, step_num, take;
	struct fn *v = candidates(m, &n);

	out->functions = n;
	take = n < FPA_MAX_SAMPLED ? n : FPA_MAX_SAMPLED;
	step_num = n;
	for (size_t k = 0; k < take; k++) {
		/* Evenly spread over the address-sorted list, deterministic. */
		const struct fn *f = &v[take == n ? k : (size_t)((uint64_t)k * step_num / take)];
		const struct xsection *x = find_xsection(m, f->start, f->end);
		int no_cfi;

		if (!x)
			continue;
		out->sampled++;
		switch (classify(m, f, x, &no_cfi)) {
		case FN_WITH_FP:
			out->with_fp++;
			break;
		case FN_NEUTRAL:
			out->neutral++;
			break;
		case FN_WITHOUT_FP:
			out->without_fp++;
			if (out->nexamples < FPA_MAX_EXAMPLES && f->name) {
				xsnprintf(out->examples[out->nexamples], sizeof(out->examples[0]),
					  "%s", f->name);
				out->nexamples++;
			}
			break;
		}
		out->no_cfi += (size_t)no_cfi;
	}
	free(v);
	if (out->with_fp + out->without_fp)
		out->fp_percent = 100.0 * (double)out->with_fp /
				  (double)(out->with_fp + out->without_fp);
	out->verdict = fpa_verdict_of(out->with_fp, out->without_fp);
}

/* ------------------------------------------------------------------ */
/* Separate debug info                                                 */

/* The same lookup as record's (target/debuginfo.c), without servers. */
static void find_debug_info(const char *target_path, const char *root,
			    const struct debuginfo_env *env, struct fpa_result *out)
{
	struct debuginfo d;
	unsigned char bid[64];
	size_t len = 0;
	const char *via;
	char *path = NULL;
	int fd;

	if (out->debug_embedded) {
		out->debug_via = "embedded";
		return;
	}
	for (const char *h = out->build_id; h[0] && h[1] && len < sizeof(bid); h += 2) {
		unsigned int byte;

		if (sscanf(h, "%2x", &byte) != 1)
			break;
		bid[len++] = (unsigned char)byte;
	}
	debuginfo_init_root(&d, root, env);
	fd = debuginfo_find_local(&d, target_path, bid, len, out->debuglink[0] ? out->debuglink : NULL,
				  out->debuglink_crc, &path, &via);
	if (fd >= 0) {
		close(fd);
		xsnprintf(out->debug_path, sizeof(out->debug_path), "%s", path);
		out->debug_via = via;
	}
	free(path);
	debuginfo_release(&d);
}

/* ------------------------------------------------------------------ */

static void module_release(struct module *m)
{
	if (m->cfi && m->cfi_from_elf)
		dwarf_cfi_end(m->cfi);
	if (m->dwarf)
		dwarf_end(m->dwarf);
	free(m->xs);
	free(m->syms);
	free(m->fdes);
}

int fpa_audit_elf(Elf *elf, const char *target_path, const char *root,
		  const struct debuginfo_env *env, struct fpa_result *out)
{
	struct module m;
	Elf_Scn *cfi_scn = NULL;
	GElf_Ehdr eh;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	out->verdict = FPA_UNKNOWN;
	m.elf = elf;
	if (!m.elf || elf_kind(m.elf) != ELF_K_ELF || gelf_getclass(m.elf) != ELFCLASS64 ||
	    !gelf_getehdr(m.elf, &eh)) {
		ret = -ENOEXEC;
		goto out;
	}
	m.machine = eh.e_machine;
	ret = scan_sections(&m, out, &cfi_scn);
	if (ret)
		goto out;
	find_debug_info(target_path, root, env, out);
	out->analysed = eh.e_machine == arch_elf_machine;
	if (!out->analysed)
		goto out;
	if (cfi_scn) {
		int eh_frame = !strcmp(out->cfi_section, ".eh_frame");

		collect_fdes(&m, cfi_scn, eh_frame);
		out->fdes = m.nfdes;
		/* the tables are the file's: libdw runs them only when cfiguard.h lets it */
		struct elf_span span = { NULL, NULL };

		if (eh_frame) {
			out->cfi_refused = cfi_guard_eh_frame(m.elf, &span) != 0;
			m.cfi = out->cfi_refused ? NULL : dwarf_getcfi_elf(m.elf);
			m.cfi_from_elf = 1;
		} else {
			m.dwarf = dwarf_begin_elf(m.elf, DWARF_C_READ, NULL);
			out->cfi_refused = m.dwarf && cfi_guard_debug_frame(m.dwarf, &span) != 0;
			m.cfi = m.dwarf && !out->cfi_refused ? dwarf_getcfi(m.dwarf) : NULL;
		}
		if (!m.cfi) {
			out->fdes = 0;
			for (size_t i = 0; i < m.nfdes; i++)
				m.fdes[i].has_fde = 0;
		}
	}
	analyse(&m, out);
out:
	module_release(&m);
	return ret;
}

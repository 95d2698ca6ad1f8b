/*
 * Implementation of addrinfo.h. The index keeps the symbols libdwfl would
 * choose from (named, defined, not a section, file or TLS symbol) that lie
 * in executable sections, sorted by address, and picks the one
 * dwfl_module_addrinfo picks: among sized symbols holding the address the
 * closest below it, then the stronger binding (global, weak, local), then
 * the smaller; when none holds it, the closest sizeless symbol (an assembly
 * label) above every sized symbol below the address and in the address's
 * section.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/addrinfo.h"
#include "elf/cython.h"
#include "elf/funcbounds.h"
#include "elf/demangle.h"
#include "util/hashidx.h"
#include "util/util.h"

struct fsym {
	uint64_t start;
	uint64_t limit;             /* sized: start + size; sizeless: its section's end + 1 */
	uint64_t max_end;           /* the largest end of a sized symbol at or before this one */
	const char *name;
	const char *display;        /* demangled (elf/demangle.h), once looked up; NULL: as is */
	uint32_t order;             /* index in libdwfl's table: the first found wins ties */
	uint8_t sized, bind;
	uint8_t demangled;          /* display was worked out */
	uint8_t lang;               /* enum symbol_lang */
};

struct elf_symidx {
	struct fsym *syms;
	size_t n;
	char **copies;              /* names without their @VERSION */
	size_t ncopies, copies_alloc;
};

struct addr_entry {
	uint64_t vaddr;
	struct elf_addr_info info;
	struct elf_inline *inl;     /* the functions inlined there (elf_info_inlines), owned */
	uint8_t ninl;
	uint8_t inl_known;          /* inl/ninl were worked out */
};

struct elf_addr_cache {
	struct addr_entry *e;
	size_t n, alloc;
	struct hidx index;
	/* the debug info's compile units as the inline lookup indexed them: kept
	 * while the file is (not emptied with the answers) */
	struct cu_index *cus;
	size_t ncus, cus_alloc;
	size_t cu_ranges;           /* their ranges, all units: at most ELF_INLINE_RANGES_MAX */
	/* each function's answers by span, worked out at its first lookup (fn_table_at) */
	struct fn_table *fns;       /* sorted by low, not overlapping */
	size_t nfns, fns_alloc;
	size_t fn_spans;            /* spans in all tables: at most ELF_FN_SPANS_MAX */
	/* strings read from the debug info, copied once: they outlive its session */
	char **kept;
	size_t nkept, kept_alloc;
	struct hidx kept_index;
};

/* One pc range of a compile unit's top-level entry (a function, mostly). */
struct die_range {
	uint64_t low, high;         /* [low, high), the unit's addresses */
	uint64_t max_high;          /* the largest high at or before this one (sorted by low) */
	uint32_t order;             /* the entry's place among the unit's: the first wins */
	Dwarf_Die die;
};

struct cu_index {
	void *cu;                   /* the unit's DIE's address in the debug data: its key */
	struct die_range *r;
	size_t n;
	int complete;               /* every top-level entry is in r (else search the unit) */
};

/*
 * What the debug info says over a span of a function's addresses: the
 * same at every address from start to the next span's start.
 */
struct fn_span {
	uint64_t start;
	const char *path;           /* the line's source file (kept_string), NULL: no line */
	int line;
	uint8_t ninl;
	struct elf_inline *inl;     /* the functions inlined there, innermost first, owned */
};

/*
 * One top-level entry's pc range [low, high) (a function, in the file's
 * addresses) cut into spans at every address where an answer may change:
 * the line table's rows and the ends of every range of an entry below it.
 * A function with more than ELF_FN_SPANS_ONE of them or ELF_FN_DIES_ONE
 * entries below it, or overlapped by another top-level entry or another
 * table (clipped to the addresses left), is a table with no spans
 * (untabled): each of its addresses is looked up alone.
 */
struct fn_table {
	uint64_t low, high;
	struct fn_span *s;
	size_t n;
	int untabled;
};

#define ELF_FN_SPANS_ONE 1024
#define ELF_FN_DIES_ONE 2048
#define ELF_FN_SPANS_MAX (1u << 17)

/* Top-level pc ranges kept per file for the inline lookup, at most (a libxul has ~1M). */
#define ELF_INLINE_RANGES_MAX (1u << 20)

static int bind_rank(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int cmp_fsym(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* "memcpy@@GLIBC_2.14" -> "memcpy": the symbol version is noise in a profile. */
static const char *plain_name(struct elf_symidx *x, const char *name)
{
	size_t len = strcspn(name, "@");

	if (!name[len] || !len)
		return name;
	x->copies = xgrow(x->copies, sizeof(*x->copies), x->ncopies + 1, &x->copies_alloc);
	x->copies[x->ncopies] = xstrndup(name, len);
	return x->copies[x->ncopies++];
}

/*
 * An ARM/AArch64 mapping symbol ($x: A64 code from here, $d: data, $a/$t:
 * A32/T32 code; "$x.<anything>" too, local and untyped): it marks what
 * kind of bytes follow, it names no function, and as the nearest label it
 * would name the code after it ("$x" for deregister_tm_clones in an arm64
 * binary). libdwfl skips them as well.
 */
static int mapping_symbol(const char *name, const GElf_Sym *sym)
{
	return name[0] == '$' && strchr("xdat", name[1]) && name[1] &&
	       (!name[2] || name[2] == '.') && GELF_ST_TYPE(sym->st_info) == STT_NOTYPE &&
	       GELF_ST_BIND(sym->st_info) == STB_LOCAL;
}

static struct elf_symidx *build_index(struct elf_info *f)
{
	struct elf_symidx *x = xcalloc(1, sizeof(*x));
	int nsyms = f->mod ? dwfl_module_getsymtab(f->mod) : -1;
	size_t alloc = 0;

	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		GElf_Shdr shdr;
		Elf *elf = NULL;
		Elf_Scn *scn;
		int type;
		const char *name = dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, &elf,
							   NULL);

		type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || !elf || shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS || mapping_symbol(name, &sym))
			continue;
		/* Only code is looked up: symbols elsewhere would only slow the search. */
		scn = shndx < SHN_LORESERVE || shndx == SHN_XINDEX ? elf_getscn(elf, shndx) : NULL;
		if (!scn || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR))
			continue;
		if (x->n >= ELF_SYMIDX_MAX) {
			f->symbols_capped++;
			continue;
		}
		x->syms = xgrow(x->syms, sizeof(*x->syms), x->n + 1, &alloc);
		struct fsym *s = &x->syms[x->n++];

		memset(s, 0, sizeof(*s));
		s->start = addr;
		s->sized = sym.st_size != 0;
		/*
		 * A label holds addresses up to its section's end, that end
		 * included as libdwfl has it; in the module's addresses as addr is.
		 */
		s->limit = s->sized ? addr + sym.st_size :
			   shdr.sh_addr + shdr.sh_size + 1 + (addr - sym.st_value);
		s->name = plain_name(x, name);
		s->order = (uint32_t)i;
		s->bind = (uint8_t)bind_rank(&sym);
	}
	sort_array(x->syms, x->n, sizeof(*x->syms), cmp_fsym);
	for (size_t i = 0; i < x->n; i++) {
		uint64_t end = x->syms[i].sized ? x->syms[i].limit : 0;
		uint64_t before = i ? x->syms[i - 1].max_end : 0;

		x->syms[i].max_end = end > before ? end : before;
	}
	return x;
}

static void index_free(struct elf_symidx *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->ncopies; i++)
		free(x->copies[i]);
	free(x->copies);
	free(x->syms);
	free(x);
}

/* Is a better than b for the same start? */
static int better(const struct fsym *a, const struct fsym *b)
{
	if (a->bind != b->bind)
		return a->bind > b->bind;
	if (a->sized && b->sized && a->limit != b->limit)
		return a->limit < b->limit;
	return a->order < b->order;
}

static int is_local(const struct fsym *s)
{
	return s->bind == 1;
}

/* The index of the first symbol starting above vaddr. */
static size_t upper_bound(const struct elf_symidx *x, uint64_t vaddr)
{
	return count_at_or_below(x->syms, x->n, sizeof(*x->syms), offsetof(struct fsym, start), vaddr);
}

/*
 * The sized symbol holding vaddr with the closest start below it, global
 * and weak ones first (libdwfl looks at the locals only when no other
 * symbol holds the address). last: upper_bound's.
 */
static const struct fsym *find_sized(const struct elf_symidx *x, size_t last, uint64_t vaddr)
{
	const struct fsym *global = NULL, *local = NULL;

	for (size_t i = last; i-- > 0 && x->syms[i].max_end > vaddr;) {
		const struct fsym *s = &x->syms[i];
		const struct fsym **best = is_local(s) ? &local : &global;

		if (global && s->start != global->start)
			break;
		if (!s->sized || vaddr >= s->limit)
			continue;
		if (!*best || (s->start == (*best)->start && better(s, *best)))
			*best = s;
	}
	return global ? global : local;
}

/*
 * No sized symbol holds vaddr: the closest label (a sizeless symbol) above
 * every sized symbol below it, in the same section.
 */
static const struct fsym *find_label(const struct elf_symidx *x, size_t last, uint64_t vaddr)
{
	const struct fsym *best = NULL;
	uint64_t floor = last ? x->syms[last - 1].max_end : 0;

	for (size_t i = last; i-- > 0;) {
		const struct fsym *s = &x->syms[i];

		if (s->sized || s->start < floor || (best && s->start != best->start))
			break;
		if (vaddr < s->limit && (!best || better(s, best)))
			best = s;
	}
	return best;
}

static const struct fsym *find_symbol(const struct elf_symidx *x, uint64_t vaddr)
{
	size_t last = upper_bound(x, vaddr);
	const struct fsym *sized, *label;

	if (!last)
		return NULL;
	sized = find_sized(x, last, vaddr);
	label = find_label(x, last, vaddr);
	/* A global label exactly at the address beats a local function holding it. */
	if (sized && is_local(sized) && label && !is_local(label) && label->start == vaddr)
		return label;
	return sized ? sized : label;
}

/* A symbol's readable name, worked out the first time an address in it is asked for. */
static void demangle_once(struct elf_symidx *x, struct fsym *s)
{
	enum symbol_lang lang;
	char *display;

	if (s->demangled)
		return;
	s->demangled = 1;
	display = symbol_demangle(s->name, &lang);
	s->lang = (uint8_t)lang;
	if (!display)
		return;
	x->copies = xgrow(x->copies, sizeof(*x->copies), x->ncopies + 1, &x->copies_alloc);
	x->copies[x->ncopies++] = display;
	s->display = display;
}

/* The file's answer cache, made on first use. */
static struct elf_addr_cache *addr_cache(struct elf_info *f)
{
	if (!f->addrs)
		f->addrs = xcalloc(1, sizeof(*f->addrs));
	return f->addrs;
}

static uint64_t kept_hash(const void *owner, uint32_t id)
{
	const char *k = ((const struct elf_addr_cache *)owner)->kept[id];

	return hash_bytes(k, strlen(k));
}

/* The file's own copy of a string read from its debug info (NULL stays NULL). */
static const char *keep_string(struct elf_info *f, const char *str)
{
	struct elf_addr_cache *c = addr_cache(f);
	uint64_t h;
	size_t pos;
	uint32_t id;

	if (!str)
		return NULL;
	h = hash_bytes(str, strlen(str));
	pos = hidx_start(&c->kept_index, h);
	while ((id = hidx_next(&c->kept_index, &pos)) != HIDX_NONE)
		if (!strcmp(c->kept[id], str))
			return c->kept[id];
	c->kept = xgrow(c->kept, sizeof(*c->kept), c->nkept + 1, &c->kept_alloc);
	c->kept[c->nkept] = xstrdup(str);
	hidx_insert(&c->kept_index, h, (uint32_t)c->nkept, kept_hash, c);
	return c->kept[c->nkept++];
}

static int line_at(struct elf_info *f, uint64_t vaddr, const char **path, int *lineno);

static void resolve(struct elf_info *f, uint64_t vaddr, struct elf_addr_info *out)
{
	const struct fsym *s;
	const char *src;
	int lineno = 0;

	memset(out, 0, sizeof(*out));
	if (!f->symidx) {
		elf_info_load_symbols(f, NULL);
		elf_info_addr_prepare(f);
	}
	s = find_symbol(f->symidx, vaddr);
	if (s) {
		demangle_once(f->symidx, (struct fsym *)s);
		out->symbol = s->display ? s->display : s->name;
		out->linkage = s->display ? s->name : NULL;
		out->lang = s->lang;
		out->start = s->start;
	} else {
		/* No symbol: the function is known by where its unwind entry starts. */
		uint64_t end;

		if (elf_function_bounds(f, vaddr, &out->start, &end))
			out->start = vaddr;
	}
	if (line_at(f, vaddr, &src, &lineno)) {
		const char *base = strrchr(src, '/'), *pyx;
		int pyx_line;

		out->source = base ? base + 1 : src;      /* src is the file's own copy */
		out->line = lineno;
		/* Cython's generated C: the .pyx line it was made from */
		if (out->lang == SYMBOL_CYTHON && !elf_cython_line(f, src, lineno, &pyx, &pyx_line)) {
			out->source = pyx;
			out->line = pyx_line;
		}
	}
}

static const char *attr_string(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) ? dwarf_formstring(&a) : NULL;
}

static int cmp_range(const void *a, const void *b)
{
	const struct die_range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* A unit's top-level entries with pc ranges, sorted (built once, on its first lookup). */
static struct cu_index *cu_index_of(struct elf_addr_cache *c, Dwarf_Die *cu)
{
	struct cu_index *x = NULL;
	Dwarf_Die child;
	size_t alloc = 0;
	uint32_t order = 0;

	for (size_t i = 0; i < c->ncus; i++)
		if (c->cus[i].cu == cu->addr)
			return &c->cus[i];
	c->cus = xgrow(c->cus, sizeof(*c->cus), c->ncus + 1, &c->cus_alloc);
	x = &c->cus[c->ncus++];
	memset(x, 0, sizeof(*x));
	x->cu = cu->addr;
	x->complete = 1;
	if (dwarf_child(cu, &child))
		return x;
	do {
		Dwarf_Addr base, low, high;
		ptrdiff_t off = 0;

		order++;
		while ((off = dwarf_ranges(&child, off, &base, &low, &high)) > 0) {
			if (low >= high)
				continue;
			if (c->cu_ranges >= ELF_INLINE_RANGES_MAX) {
				x->complete = 0;
				break;
			}
			x->r = xgrow(x->r, sizeof(*x->r), x->n + 1, &alloc);
			x->r[x->n++] = (struct die_range){ .low = low, .high = high,
							   .order = order, .die = child };
			c->cu_ranges++;
		}
	} while (x->complete && !dwarf_siblingof(&child, &child));
	if (!x->complete) {
		/* the unit is walked instead (top_entry): its ranges would go unused */
		free(x->r);
		x->r = NULL;
		x->n = 0;
	}
	sort_array(x->r, x->n, sizeof(*x->r), cmp_range);
	for (size_t i = 0; i < x->n; i++)
		x->r[i].max_high = i && x->r[i - 1].max_high > x->r[i].high ? x->r[i - 1].max_high :
			x->r[i].high;
	return x;
}

/*
 * The unit's top-level entry holding pc (the first in the unit's order, as
 * a walk of the unit finds it), from its index, or by walking the unit
 * when the index is not whole. 0, or -1 when none holds it.
 */
static int top_entry(struct cu_index *x, Dwarf_Die *cu, uint64_t pc, Dwarf_Die *out,
		     const struct die_range **range)
{
	const struct die_range *best = NULL;
	size_t lo;

	if (range)
		*range = NULL;
	if (!x->complete) {
		if (dwarf_child(cu, out))
			return -1;
		do {
			if (dwarf_haspc(out, pc) > 0)
				return 0;
		} while (!dwarf_siblingof(out, out));
		return -1;
	}
	lo = count_at_or_below(x->r, x->n, sizeof(*x->r), offsetof(struct die_range, low), pc);
	for (size_t i = lo; i-- > 0 && x->r[i].max_high > pc;)
		if (pc < x->r[i].high && (!best || x->r[i].order < best->order))
			best = &x->r[i];
	if (!best)
		return -1;
	*out = best->die;
	if (range)
		*range = best;
	return 0;
}

/*
 * The functions inlined at unit address pc under top (the unit's top-level
 * entry holding it), innermost first, without the answers' cache: the
 * concrete chain of entries holding the address, from top down (each
 * level, its first child holding the address), its inlined-subroutine
 * entries read innermost first. (libdw's
 * dwarf_getscopes names only the innermost inlined function and then the
 * scopes of its abstract definition: a function inlined into an inlined
 * function lost its caller; it also searched the whole unit each time.)
 */
static size_t inlines_below(struct elf_info *f, Dwarf_Die *cu, const Dwarf_Die *top, uint64_t pc,
			    struct elf_inline *out, size_t max)
{
	Dwarf_Die chain[ELF_INLINE_DEPTH_MAX];
	Dwarf_Files *files = NULL;
	size_t nfiles = 0, depth = 0, k = 0;

	chain[0] = *top;
	for (depth = 1; depth < ELF_INLINE_DEPTH_MAX; depth++) {
		Dwarf_Die *d = &chain[depth];

		if (dwarf_child(&chain[depth - 1], d))
			break;
		while (dwarf_haspc(d, pc) <= 0)
			if (dwarf_siblingof(d, d))
				goto innermost;
	}
innermost:
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	for (size_t i = depth; i-- > 0 && k < max;) {
		Dwarf_Attribute a;
		Dwarf_Word w;
		const char *file;
		Dwarf_Die *d = &chain[i];

		if (dwarf_tag(d) != DW_TAG_inlined_subroutine)
			continue;
		out[k].name = keep_string(f, attr_string(d, DW_AT_name));
		out[k].linkage = attr_string(d, DW_AT_linkage_name);
		if (!out[k].linkage)
			out[k].linkage = attr_string(d, DW_AT_MIPS_linkage_name);
		out[k].linkage = keep_string(f, out[k].linkage);
		out[k].call_line = dwarf_attr(d, DW_AT_call_line, &a) &&
				   !dwarf_formudata(&a, &w) && w <= INT32_MAX ? (int)w : 0;
		out[k].call_file = NULL;
		if (files && dwarf_attr(d, DW_AT_call_file, &a) && !dwarf_formudata(&a, &w) &&
		    w < nfiles && (file = dwarf_filesrc(files, w, NULL, NULL))) {
			const char *base = strrchr(file, '/');

			out[k].call_file = keep_string(f, base ? base + 1 : file);
		}
		if (out[k].name || out[k].linkage)
			k++;
	}
	return k;
}

/* The same for a file address, its unit and top-level entry found first. */
static size_t read_inlines(struct elf_info *f, uint64_t vaddr, struct elf_inline *out, size_t max)
{
	Dwfl_Module *mod = elf_info_lookup_module(f);
	Dwarf_Die *cu, top;
	Dwarf_Addr bias;

	if (!mod || !(cu = dwfl_module_addrdie(mod, vaddr, &bias)) ||
	    top_entry(cu_index_of(addr_cache(f), cu), cu, vaddr - bias, &top, NULL))
		return 0;
	return inlines_below(f, cu, &top, vaddr - bias, out, max);
}

/* The source file and line at vaddr from the debug info alone (1), or 0. */
static int read_line(struct elf_info *f, Dwfl_Module *mod, uint64_t vaddr, const char **path,
		     int *lineno)
{
	Dwfl_Line *line = mod ? dwfl_module_getsrc(mod, vaddr) : NULL;
	const char *src = line ? dwfl_lineinfo(line, NULL, lineno, NULL, NULL, NULL) : NULL;

	*path = keep_string(f, src);
	return *path != NULL;
}

/* Where an answer may change in [lo, hi) (unit addresses): one more, unless there are too many. */
static int add_cut(uint64_t **cuts, size_t *n, size_t *alloc, uint64_t at, uint64_t lo, uint64_t hi)
{
	if (at <= lo || at >= hi)
		return 0;
	if (*n >= ELF_FN_SPANS_ONE * 2)
		return -1;
	*cuts = xgrow(*cuts, sizeof(**cuts), *n + 1, alloc);
	(*cuts)[(*n)++] = at;
	return 0;
}

/* The ends of the ranges of every entry below die (as deep as inlines_below walks). */
static int entry_cuts(Dwarf_Die *die, int depth, uint64_t **cuts, size_t *n, size_t *alloc,
		      uint64_t lo, uint64_t hi, size_t *dies)
{
	Dwarf_Die child;

	if (depth >= ELF_INLINE_DEPTH_MAX || dwarf_child(die, &child))
		return 0;
	do {
		Dwarf_Addr base, low, high;
		ptrdiff_t off = 0;

		/* each span's read walks these: a function of very many is looked up alone */
		if (++*dies > ELF_FN_DIES_ONE)
			return -1;
		while ((off = dwarf_ranges(&child, off, &base, &low, &high)) > 0)
			if (add_cut(cuts, n, alloc, low, lo, hi) || add_cut(cuts, n, alloc, high, lo, hi))
				return -1;
		if (entry_cuts(&child, depth + 1, cuts, n, alloc, lo, hi, dies))
			return -1;
	} while (!dwarf_siblingof(&child, &child));
	return 0;
}

/* Does another top-level range of the unit overlap r? */
static int overlapped(const struct cu_index *x, const struct die_range *r)
{
	for (size_t i = 0; i < x->n && x->r[i].low < r->high; i++)
		if (&x->r[i] != r && x->r[i].high > r->low)
			return 1;
	return 0;
}

static void fn_table_free(struct fn_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i].inl);
	free(t->s);
}

/* The table holding vaddr, or NULL. */
static struct fn_table *fn_table_find(struct elf_addr_cache *c, uint64_t vaddr)
{
	size_t n = count_at_or_below(c->fns, c->nfns, sizeof(*c->fns), offsetof(struct fn_table, low),
				     vaddr);

	return n && vaddr < c->fns[n - 1].high ? &c->fns[n - 1] : NULL;
}

/* Work out the table of the function holding vaddr (the debug info open). NULL: none. */
static struct fn_table *fn_table_make(struct elf_info *f, uint64_t vaddr)
{
	struct elf_addr_cache *c = addr_cache(f);
	Dwfl_Module *mod = elf_info_lookup_module(f);
	const struct die_range *r;
	struct fn_table t;
	Dwarf_Lines *lines;
	Dwarf_Die *cu, top;
	Dwarf_Addr bias;
	uint64_t *cuts = NULL;
	size_t ncuts = 0, alloc = 0, nlines = 0, pos;
	struct cu_index *x;
	int over = 0;

	if (!mod || !(cu = dwfl_module_addrdie(mod, vaddr, &bias)))
		return NULL;
	x = cu_index_of(c, cu);
	if (top_entry(x, cu, vaddr - bias, &top, &r) || !r)
		return NULL;
	memset(&t, 0, sizeof(t));
	t.low = r->low + bias;
	t.high = r->high + bias;
	/* where it goes, in order by low; a table already made there clips it (and it is untabled) */
	for (pos = c->nfns; pos > 0 && c->fns[pos - 1].low > vaddr; pos--)
		;
	if (pos && c->fns[pos - 1].high > t.low) {
		t.low = c->fns[pos - 1].high;
		over = 1;
	}
	if (pos < c->nfns && c->fns[pos].low < t.high) {
		t.high = c->fns[pos].low;
		over = 1;
	}
	if (overlapped(x, r))
		over = 1;
	if (!over && !dwarf_getsrclines(cu, &lines, &nlines))
		for (size_t i = 0; i < nlines && !over; i++) {
			Dwarf_Addr a;

			if (!dwarf_lineaddr(dwarf_onesrcline(lines, i), &a))
				over = add_cut(&cuts, &ncuts, &alloc, a, r->low, r->high) != 0;
		}
	if (!over) {
		size_t dies = 0;

		over = entry_cuts(&top, 1, &cuts, &ncuts, &alloc, r->low, r->high, &dies) != 0;
	}
	if (!over)
		ncuts = sort_unique_u64(cuts, ncuts);
	if (!over && ncuts >= ELF_FN_SPANS_ONE)
		over = 1;
	if (!over) {
		t.s = xcalloc(ncuts + 1, sizeof(*t.s));
		for (size_t i = 0; i <= ncuts; i++) {
			uint64_t pc = i ? cuts[i - 1] : r->low;
			struct elf_inline found[ELF_INLINE_MAX];
			struct fn_span *sp = &t.s[t.n++];
			size_t k;

			sp->start = pc + bias;
			if (!read_line(f, mod, sp->start, &sp->path, &sp->line))
				sp->line = 0;
			k = inlines_below(f, cu, &top, pc, found, ELF_INLINE_MAX);
			sp->ninl = (uint8_t)k;
			sp->inl = k ? memcpy(xmalloc(k * sizeof(*found)), found, k * sizeof(*found)) : NULL;
		}
	}
	free(cuts);
	if (over) {
		fn_table_free(&t);
		t.s = NULL;
		t.n = 0;
		t.untabled = 1;
	}
	if (c->fn_spans + t.n > ELF_FN_SPANS_MAX) {
		/* full: start again, as the answers' cache does */
		for (size_t i = 0; i < c->nfns; i++)
			fn_table_free(&c->fns[i]);
		c->nfns = 0;
		c->fn_spans = 0;
		pos = 0;
	}
	c->fns = xgrow(c->fns, sizeof(*c->fns), c->nfns + 1, &c->fns_alloc);
	memmove(&c->fns[pos + 1], &c->fns[pos], (c->nfns - pos) * sizeof(*c->fns));
	c->fns[pos] = t;
	c->nfns++;
	c->fn_spans += t.n;
	return &c->fns[pos];
}

/*
 * The span of the function's table holding vaddr: found, or the table
 * worked out now (which opens the debug info). NULL when the function has
 * no table (untabled, or no debug info there): look the address up alone.
 */
static const struct fn_span *span_at(struct elf_info *f, uint64_t vaddr)
{
	struct fn_table *t = f->addrs ? fn_table_find(f->addrs, vaddr) : NULL;
	size_t n;

	if (!t && !(t = fn_table_make(f, vaddr)))
		return NULL;
	if (t->untabled || vaddr < t->low || vaddr >= t->high)
		return NULL;
	n = count_at_or_below(t->s, t->n, sizeof(*t->s), offsetof(struct fn_span, start), vaddr);
	return n ? &t->s[n - 1] : NULL;
}

/* The source line at vaddr: its function's span, else the debug info. 1 found, 0 none. */
static int line_at(struct elf_info *f, uint64_t vaddr, const char **path, int *lineno)
{
	const struct fn_span *sp = span_at(f, vaddr);

	if (sp) {
		*path = sp->path;
		*lineno = sp->line;
		return sp->path != NULL;
	}
	return read_line(f, elf_info_lookup_module(f), vaddr, path, lineno);
}

/* The functions inlined at vaddr: its function's span, else the debug info. */
static size_t inlines_at(struct elf_info *f, uint64_t vaddr, struct elf_inline *out, size_t max)
{
	const struct fn_span *sp = span_at(f, vaddr);
	size_t n;

	if (!sp)
		return read_inlines(f, vaddr, out, max);
	n = sp->ninl < max ? sp->ninl : max;
	if (n)
		memcpy(out, sp->inl, n * sizeof(*out));
	return n;
}

static uint64_t entry_hash(const void *owner, uint32_t id)
{
	return hash_mix64(((const struct elf_addr_cache *)owner)->e[id].vaddr);
}

static struct addr_entry *cache_find(struct elf_addr_cache *c, uint64_t vaddr)
{
	size_t pos = hidx_start(&c->index, hash_mix64(vaddr));
	uint32_t id;

	while ((id = hidx_next(&c->index, &pos)) != HIDX_NONE)
		if (c->e[id].vaddr == vaddr)
			return &c->e[id];
	return NULL;
}

/* Empty the cache, keeping its storage (its entries' inline lists are freed). */
static void cache_empty(struct elf_addr_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->e[i].inl);
	c->n = 0;
	hidx_release(&c->index);
}

size_t elf_info_inlines(struct elf_info *f, uint64_t vaddr, struct elf_inline *out, size_t max)
{
	struct addr_entry *e = f->addrs ? cache_find(f->addrs, vaddr) : NULL;
	struct elf_inline found[ELF_INLINE_MAX];
	size_t n;

	if (!e)
		return inlines_at(f, vaddr, out, max);
	if (!e->inl_known) {
		n = inlines_at(f, vaddr, found, ELF_INLINE_MAX);
		e->inl = n ? memcpy(xmalloc(n * sizeof(*found)), found, n * sizeof(*found)) : NULL;
		e->ninl = (uint8_t)n;
		e->inl_known = 1;
	}
	n = e->ninl < max ? e->ninl : max;
	if (n)
		memcpy(out, e->inl, n * sizeof(*out));
	return n;
}

void elf_info_addr(struct elf_info *f, uint64_t vaddr, struct elf_addr_info *out,
		   struct elf_addr_cost *cost)
{
	struct elf_addr_cache *c = addr_cache(f);
	struct addr_entry *e = cache_find(c, vaddr);

	if (e) {
		*out = e->info;
		return;
	}
	resolve(f, vaddr, out);
	cost->resolved++;
	if (c->n >= ELF_ADDR_CACHE_MAX) {
		/* Full: start again (the strings are not the cache's, nothing dangles). */
		cost->evicted += c->n;
		cache_empty(c);
	}
	c->e = xgrow(c->e, sizeof(*c->e), c->n + 1, &c->alloc);
	memset(&c->e[c->n], 0, sizeof(c->e[c->n]));
	c->e[c->n].vaddr = vaddr;
	c->e[c->n].info = *out;
	hidx_insert(&c->index, hash_mix64(vaddr), (uint32_t)c->n++, entry_hash, c);
}

/*
 * Loading read much of the file once (the audit's walk over its code, the
 * symbol table for the index, the debug info's address index): those pages
 * are given back (elf_info_give_back); what the lookups need later faults
 * in again.
 */
void elf_info_load_symbols(struct elf_info *f, struct debuginfo *debug)
{
	Dwfl_Module *mod;
	Dwarf *dw;
	Dwarf_Addr low, bias;

	if (f->symbols_loaded)
		return;
	f->symbols_loaded = 1;
	f->debug = debug;
	dwfl_module_getsymtab(f->mod);
	elf_info_addr_prepare(f);
	mod = elf_info_lookup_module(f);
	dw = mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
	elf_info_guard_debug(f, mod);
	if (dw) {
		dwfl_module_info(mod, NULL, &low, NULL, NULL, NULL, NULL, NULL);
		dwfl_module_getsrc(mod, low);
	}
	f->debug = NULL;
	elf_info_give_back(f, 1);
}

void elf_info_addr_prepare(struct elf_info *f)
{
	if (!f->symidx)
		f->symidx = build_index(f);
}

void elf_info_addr_forget_units(struct elf_info *f)
{
	struct elf_addr_cache *c = f->addrs;

	if (!c)
		return;
	for (size_t i = 0; i < c->ncus; i++)
		free(c->cus[i].r);
	free(c->cus);
	c->cus = NULL;
	c->ncus = c->cus_alloc = c->cu_ranges = 0;
}

void elf_info_addr_release(struct elf_info *f)
{
	index_free(f->symidx);
	f->symidx = NULL;
	if (f->addrs) {
		cache_empty(f->addrs);
		elf_info_addr_forget_units(f);
		for (size_t i = 0; i < f->addrs->nfns; i++)
			fn_table_free(&f->addrs->fns[i]);
		free(f->addrs->fns);
		for (size_t i = 0; i < f->addrs->nkept; i++)
			free(f->addrs->kept[i]);
		free(f->addrs->kept);
		hidx_release(&f->addrs->kept_index);
		free(f->addrs->e);
		free(f->addrs);
		f->addrs = NULL;
	}
}

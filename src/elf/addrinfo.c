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
};

struct elf_addr_cache {
	struct addr_entry *e;
	size_t n, alloc;
	struct hidx index;
};

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
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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

static void resolve(struct elf_info *f, uint64_t vaddr, struct elf_addr_info *out)
{
	const struct fsym *s;
	Dwfl_Line *line;

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
	line = f->mod ? dwfl_module_getsrc(f->mod, vaddr) : NULL;
	if (line) {
		int lineno = 0;
		const char *src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (src) {
			const char *base = strrchr(src, '/'), *pyx;
			int pyx_line;

			out->source = base ? base + 1 : src;
			out->line = lineno;
			/* Cython's generated C: the .pyx line it was made from */
			if (out->lang == SYMBOL_CYTHON &&
			    !elf_cython_line(f, src, lineno, &pyx, &pyx_line)) {
				out->source = pyx;
				out->line = pyx_line;
			}
		}
	}
}

static const char *attr_string(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) ? dwarf_formstring(&a) : NULL;
}

size_t elf_info_inlines(struct elf_info *f, uint64_t vaddr, struct elf_inline *out, size_t max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0, k = 0;
	int n;

	if (!f->mod || !(cu = dwfl_module_addrdie(f->mod, vaddr, &bias)))
		return 0;
	n = dwarf_getscopes(cu, vaddr - bias, &scopes);
	if (n > 0 && dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	for (int i = 0; i < n && k < max; i++) {
		Dwarf_Attribute a;
		Dwarf_Word w;
		const char *file;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		out[k].name = attr_string(&scopes[i], DW_AT_name);
		out[k].linkage = attr_string(&scopes[i], DW_AT_linkage_name);
		if (!out[k].linkage)
			out[k].linkage = attr_string(&scopes[i], DW_AT_MIPS_linkage_name);
		out[k].call_line = dwarf_attr(&scopes[i], DW_AT_call_line, &a) &&
				   !dwarf_formudata(&a, &w) && w <= INT32_MAX ? (int)w : 0;
		out[k].call_file = NULL;
		if (files && dwarf_attr(&scopes[i], DW_AT_call_file, &a) && !dwarf_formudata(&a, &w) &&
		    w < nfiles && (file = dwarf_filesrc(files, w, NULL, NULL))) {
			const char *base = strrchr(file, '/');

			out[k].call_file = base ? base + 1 : file;
		}
		if (out[k].name || out[k].linkage)
			k++;
	}
	free(scopes);
	return k;
}

static uint64_t entry_hash(const void *owner, uint32_t id)
{
	return hash_mix64(((const struct elf_addr_cache *)owner)->e[id].vaddr);
}

void elf_info_addr(struct elf_info *f, uint64_t vaddr, struct elf_addr_info *out,
		   struct elf_addr_cost *cost)
{
	struct elf_addr_cache *c = f->addrs;
	uint64_t h = hash_mix64(vaddr);
	size_t pos;
	uint32_t id;

	if (!c)
		c = f->addrs = xcalloc(1, sizeof(*c));
	pos = hidx_start(&c->index, h);
	while ((id = hidx_next(&c->index, &pos)) != HIDX_NONE) {
		if (c->e[id].vaddr == vaddr) {
			*out = c->e[id].info;
			return;
		}
	}
	resolve(f, vaddr, out);
	cost->resolved++;
	if (c->n >= ELF_ADDR_CACHE_MAX) {
		/* Full: start again (the strings are not the cache's, nothing dangles). */
		cost->evicted += c->n;
		c->n = 0;
		hidx_release(&c->index);
	}
	c->e = xgrow(c->e, sizeof(*c->e), c->n + 1, &c->alloc);
	c->e[c->n].vaddr = vaddr;
	c->e[c->n].info = *out;
	hidx_insert(&c->index, h, (uint32_t)c->n++, entry_hash, c);
}

/*
 * Loading read much of the file once (the audit's walk over its code, the
 * symbol table for the index, the debug info's address index): give those
 * pages back to the kernel, file-backed as they are, so they stop counting
 * in our RSS; what the lookups need later faults in again. MADV_PAGEOUT
 * leaves alone pages another process maps (the targets' libpython) and
 * never drops data: a page libelf changed in place stays (no swap) or is
 * swapped.
 */
static void give_back(struct elf_info *f, Dwarf *dw)
{
	Elf *debug = dw ? dwarf_getelf(dw) : NULL;
	size_t size = 0;
	char *raw = debug && debug != f->file.elf ? elf_rawfile(debug, &size) : NULL;
	long page = sysconf(_SC_PAGESIZE);

	madvise(f->file.image, f->file.size, MADV_PAGEOUT);
	/* a separate debug file libdwfl mapped whole (not one read into memory) */
	if (raw && page > 0 && !((uintptr_t)raw % (uintptr_t)page))
		madvise(raw, size, MADV_PAGEOUT);
}

void elf_info_load_symbols(struct elf_info *f, struct debuginfo *debug)
{
	Dwarf *dw;
	Dwarf_Addr low, bias;

	if (f->symbols_loaded)
		return;
	f->symbols_loaded = 1;
	f->debug = debug;
	dwfl_module_getsymtab(f->mod);
	elf_info_addr_prepare(f);
	dw = dwfl_module_getdwarf(f->mod, &bias);
	if (dw) {
		dwfl_module_info(f->mod, NULL, &low, NULL, NULL, NULL, NULL, NULL);
		dwfl_module_getsrc(f->mod, low);
	}
	f->debug = NULL;
	give_back(f, dw);
}

void elf_info_addr_prepare(struct elf_info *f)
{
	if (!f->symidx)
		f->symidx = build_index(f);
}

void elf_info_addr_release(struct elf_info *f)
{
	index_free(f->symidx);
	f->symidx = NULL;
	if (f->addrs) {
		free(f->addrs->e);
		hidx_release(&f->addrs->index);
		free(f->addrs);
		f->addrs = NULL;
	}
}

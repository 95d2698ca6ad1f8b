/*
 * Unit tests of the per-file address knowledge (src/elf/addrinfo.c) and the
 * symbolizer's caches (src/symbols/symbolize.c), on this very process's
 * modules (the test binary, libc, libdw, libelf, libz, ...): the sorted
 * symbol index names every sampled code address as libdwfl's own
 * dwfl_module_addrinfo does, the file's cache is shared by two processes'
 * module maps and bounded, and the symbolizer's cache is bounded with its
 * evictions counted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/addrinfo.h"
#include "elf/demangle.h"
#include "elf/elffile.h"
#include "symbols/symbolize.h"
#include "unwind/unwind.h"

/* A deterministic spread of addresses (no test depends on the clock). */
static uint64_t next_rand(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 11;
}

static size_t checked, named;

/*
 * Is vaddr in a section of code? Executable segments hold data too where
 * the linker does not separate code (aarch64's binutils keep .rodata and
 * .eh_frame_hdr in the text segment; -z separate-code is x86-64's
 * default only), and no pc lands there.
 */
static int in_code(struct elf_info *f, uint64_t vaddr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(f->mod, &bias);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!elf)
		return 1;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    sh.sh_type != SHT_NOBITS && vaddr >= sh.sh_addr + bias &&
		    vaddr < sh.sh_addr + bias + sh.sh_size)
			return 1;
	return 0;
}

/*
 * libdwfl's answer for vaddr, without the symbol version: what the index
 * must give (1 named, 0 not, -1 not code or a mapping symbol: not compared).
 */
static int libdw_name(struct elf_info *f, uint64_t vaddr, char *buf, size_t size)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(f->mod, vaddr, &off, &sym, NULL, NULL, NULL);
	size_t len;

	if (!in_code(f, vaddr))
		return -1;
	if (!name)
		return 0;
	/*
	 * An ARM mapping symbol ($x: code follows; $d: data) names no
	 * function, and the index leaves them out (elf/addrinfo.c): where
	 * libdwfl answers with one, the index gives the label before it, or
	 * none. Not compared.
	 */
	if (name[0] == '$' && name[1] && strchr("xdat", name[1]) && (!name[2] || name[2] == '.'))
		return -1;
	len = strcspn(name, "@");
	if (!len)
		len = strlen(name);
	snprintf(buf, size, "%.*s", (int)len, name);
	return 1;
}

static void check_one(struct fw_module *m, uint64_t vaddr, struct elf_addr_cost *cost)
{
	struct elf_addr_info ai;
	const char *linkage;
	char want[512];
	int has = libdw_name(m->file, vaddr, want, sizeof(want));

	if (has < 0)
		return;
	elf_info_addr(m->file, vaddr, &ai, cost);
	/* the name in the file: ai.symbol is its demangled form when it has one */
	linkage = ai.linkage ? ai.linkage : ai.symbol;
	if (has != (linkage != NULL) || (has && strcmp(want, linkage)))
		print_message("%s+0x%llx: libdwfl %s, index %s\n", m->name,
			      (unsigned long long)vaddr, has ? want : "(none)",
			      linkage ? linkage : "(none)");
	assert_int_equal(has, linkage != NULL);
	if (has)
		assert_string_equal(want, linkage);
	if (ai.linkage) {
		enum symbol_lang lang;
		char *demangled = symbol_demangle(ai.linkage, &lang);

		assert_non_null(demangled);
		assert_string_equal(demangled, ai.symbol);
		assert_int_equal(lang, ai.lang);
		free(demangled);
	}
	if (ai.symbol)
		assert_true(ai.start <= vaddr);
	checked++;
	named += has;
}

/* Each symbol's edges: its first and last byte, the byte after it (up to 600 symbols). */
static void check_edges(struct module_map *mm, struct fw_module *m, struct elf_addr_cost *cost)
{
	int nsyms = dwfl_module_getsymtab(m->file->mod);

	for (int i = 1, n = 0; i < nsyms && n < 600; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(m->file->mod, i, &sym, &addr, NULL, NULL,
							   NULL);
		uint64_t probes[3] = { addr, addr + sym.st_size - 1, addr + sym.st_size };

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		n++;
		for (int k = 0; k < 3; k++)
			if (modules_find(mm, probes[k] + m->bias) == m)
				check_one(m, probes[k], cost);
	}
}

static void test_index_matches_libdwfl(void **state)
{
	struct module_map mm;
	uint64_t rnd = 42;
	size_t files = 0;

	(void)state;
	assert_int_equal(modules_load(&mm, getpid(), NULL, MODULES_NO_DEBUGINFOD, NULL), 0);
	for (size_t i = 0; i < mm.n; i++) {
		struct fw_module *m = &mm.mods[i];
		struct elf_addr_cost cost = { 0, 0 };

		if (!m->file || !m->file->mod)
			continue;
		files++;
		for (size_t r = 0; r < mm.nranges; r++) {
			const struct exec_range *x = &mm.ranges[r];
			uint64_t span = x->end - x->start;

			if (x->dev != m->dev || x->ino != m->ino || !span)
				continue;
			for (int k = 0; k < 1500; k++)
				check_one(m, x->start + next_rand(&rnd) % span - m->bias, &cost);
		}
		check_edges(&mm, m, &cost);
	}
	modules_release(&mm);
	/* the test binary, libc and the libraries it links: thousands of addresses */
	assert_true(files >= 3);
	assert_true(checked >= 1000);
	assert_true(named >= checked / 2);
}

/* The module holding a function of this binary. */
static struct fw_module *own_module(struct module_map *mm)
{
	struct fw_module *m = modules_find(mm, (uint64_t)(uintptr_t)&test_index_matches_libdwfl);

	assert_non_null(m);
	assert_non_null(m->file);
	return m;
}

static void test_file_cache_shared_and_bounded(void **state)
{
	struct module_map a, b;
	struct elf_cache *files = elf_cache_new();
	struct elf_addr_cost cost = { 0, 0 };
	struct elf_addr_info one, two;
	struct fw_module *ma, *mb;
	uint64_t pc = (uint64_t)(uintptr_t)&test_index_matches_libdwfl;

	(void)state;
	/* Two maps (two processes, as far as they know) over one cache of files. */
	assert_int_equal(modules_load(&a, getpid(), files, MODULES_NO_DEBUGINFOD, NULL), 0);
	assert_int_equal(modules_load(&b, getpid(), files, MODULES_NO_DEBUGINFOD, NULL), 0);
	ma = own_module(&a);
	mb = own_module(&b);
	assert_ptr_equal(ma->file, mb->file);
	elf_info_addr(ma->file, pc - ma->bias, &one, &cost);
	assert_int_equal(cost.resolved, 1);
	elf_info_addr(mb->file, pc - mb->bias, &two, &cost);
	assert_int_equal(cost.resolved, 1);           /* the second asked no libdw */
	assert_string_equal(one.symbol, "test_index_matches_libdwfl");
	assert_ptr_equal(one.symbol, two.symbol);
	assert_int_equal(one.start, pc - ma->bias);
	/* More distinct addresses than the cap: it is emptied once, counted. */
	for (uint64_t k = 0; k < ELF_ADDR_CACHE_MAX + 10; k++)
		elf_info_addr(ma->file, pc - ma->bias + 1 + k, &one, &cost);
	assert_true(cost.evicted >= ELF_ADDR_CACHE_MAX - 1);
	assert_true(cost.evicted <= ELF_ADDR_CACHE_MAX + 1);
	/* The strings handed out before the eviction still stand: they are the file's. */
	assert_string_equal(two.symbol, "test_index_matches_libdwfl");
	modules_release(&a);
	modules_release(&b);
	assert_int_equal(elf_cache_files(files), 0);
	elf_cache_free(files);
}

/* A stop request ends the load before the next file: no module is made, the ranges stay whole. */
static void test_load_stops_on_request(void **state)
{
	static volatile sig_atomic_t stop = 1;
	struct module_map mm, all;

	(void)state;
	assert_int_equal(modules_load(&mm, getpid(), NULL, MODULES_NO_DEBUGINFOD, &stop), -EINTR);
	assert_int_equal(mm.n, 0);
	assert_true(mm.nranges > 0);
	assert_int_equal(modules_changed(&mm), 1);     /* incomplete: to be read again */
	/* once the flag is down, a refresh loads what was skipped */
	stop = 0;
	assert_int_equal(modules_refresh(&mm), 0);
	assert_int_equal(modules_changed(&mm), 0);
	assert_int_equal(modules_load(&all, getpid(), NULL, MODULES_NO_DEBUGINFOD, NULL), 0);
	assert_int_equal(mm.n, all.n);
	modules_release(&all);
	modules_release(&mm);
}

static void test_symbolizer_bounded(void **state)
{
	static uint64_t pcs[UNWIND_MAX];
	static uint8_t exact[UNWIND_MAX];
	static struct native_symbol out[UNWIND_MAX];
	struct module_map mm;
	struct symbolizer s;
	uint64_t base = (uint64_t)(uintptr_t)&test_index_matches_libdwfl, next = 0;
	size_t stacks = 0;

	(void)state;
	assert_int_equal(modules_load(&mm, getpid(), NULL, MODULES_NO_DEBUGINFOD, NULL), 0);
	own_module(&mm);
	symbolizer_init(&s, &mm);
	/* Stacks of distinct addresses, three times what the cache holds. */
	while (next < 3 * SYMBOLIZER_CACHE_MAX) {
		for (size_t i = 0; i < UNWIND_MAX; i++) {
			pcs[i] = base + next++;
			exact[i] = 1;
		}
		symbolize_stack(&s, pcs, exact, UNWIND_MAX, out);
		stacks++;
		assert_true(s.n <= SYMBOLIZER_CACHE_MAX + UNWIND_MAX);
		/* every frame of the stack just named is still readable */
		for (size_t i = 0; i < UNWIND_MAX; i++)
			assert_true(strlen(out[i].name) > 0);
	}
	assert_int_equal(s.stats.lookups, stacks * UNWIND_MAX);
	assert_true(s.stats.evicted >= SYMBOLIZER_CACHE_MAX);
	assert_true(s.stats.evicted + s.n == stacks * UNWIND_MAX);
	/* Once more, the addresses seen last: a cache (this one or the file's) has them all. */
	{
		uint64_t resolved = s.stats.resolved;

		symbolize_stack(&s, pcs, exact, UNWIND_MAX, out);
		assert_int_equal(s.stats.resolved, resolved);
	}
	symbolizer_release(&s);
	modules_release(&mm);
}

/* The line of fixture source INLINES_SRC that holds "@mark". */
static int marked_line(const char *mark)
{
	FILE *fp = fopen(INLINES_SRC, "r");
	char buf[512];
	int line = 0, found = 0;

	assert_non_null(fp);
	while (!found && fgets(buf, sizeof(buf), fp)) {
		line++;
		found = strstr(buf, mark) != NULL;
	}
	fclose(fp);
	assert_true(found);
	return line;
}

/*
 * A function inlined into an inlined function (inner into outer into
 * fwinl_nested, tests/ext/fwinl.c at -O2): every address of the function
 * whose line is inner's body names both inlined functions, innermost
 * first, each with the line that calls it. libdw's dwarf_getscopes, used
 * before, named inner alone (outer lost, and its call line given to
 * fwinl_nested).
 */
static void test_nested_inlines(void **state)
{
	int body = marked_line("@inner_body"), call_inner = marked_line("@call_inner");
	int call_outer = marked_line("@call_outer"), loaded;
	struct elf_cache *c = elf_cache_new();
	struct elf_info *f = elf_cache_open_path(c, INLINES_LIB, INLINES_LIB, "", &loaded);
	struct elf_addr_cost cost = { 0, 0 };
	size_t in_body = 0, in_work = 0;

	(void)state;
	assert_non_null(f);
	elf_info_load_symbols(f, NULL);
	/* every address of the first 64 KiB: the library's code is there */
	for (uint64_t vaddr = 0; vaddr < 0x10000; vaddr++) {
		struct elf_addr_info ai;
		struct elf_inline inl[ELF_INLINE_MAX];
		size_t n;

		elf_info_addr(f, vaddr, &ai, &cost);
		if (!ai.symbol || strcmp(ai.symbol, "fwinl_nested"))
			continue;
		in_work++;
		n = elf_info_inlines(f, vaddr, inl, ELF_INLINE_MAX);
		if (ai.line != body)
			continue;
		in_body++;
		assert_int_equal(n, 2);
		assert_string_equal(inl[0].name, "inner");
		assert_int_equal(inl[0].call_line, call_inner);
		assert_string_equal(inl[0].call_file, "fwinl.c");
		assert_string_equal(inl[1].name, "outer");
		assert_int_equal(inl[1].call_line, call_outer);
		/* asked again: the same, from the file's cache */
		assert_int_equal(elf_info_inlines(f, vaddr, inl, ELF_INLINE_MAX), 2);
		assert_string_equal(inl[1].name, "outer");
	}
	assert_true(in_work > 8);
	assert_true(in_body >= 1);
	elf_cache_put(c, f);
	elf_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_matches_libdwfl),
		cmocka_unit_test(test_file_cache_shared_and_bounded),
		cmocka_unit_test(test_symbolizer_bounded),
		cmocka_unit_test(test_load_stops_on_request),
		cmocka_unit_test(test_nested_inlines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

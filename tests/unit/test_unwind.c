/*
 * Unit tests of the native unwinder (src/unwind/): the frame-pointer walk
 * over crafted stacks (a complete chain, a cycle, a misaligned or unreadable
 * frame pointer, the depth cap), and on x86-64 the CFI walk of this very
 * process's stack from registers captured here, through the test binary's
 * and libc's real unwind tables, checked by the names the symbolizer gives.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/elffile.h"
#include "elf/modules.h"
#include "symbols/symbolize.h"
#include "unwind/unwind.h"

/* A crafted stack: words at fake addresses base, base + 8, ... */
#define STACK_WORDS 4096
struct fake_stack {
	uint64_t base;
	uint64_t w[STACK_WORDS];
};

static int fake_read(void *ctx, uint64_t addr, uint64_t *val)
{
	struct fake_stack *s = ctx;

	if (addr < s->base || addr + 8 > s->base + sizeof(s->w) || (addr - s->base) % 8)
		return -EFAULT;
	*val = s->w[(addr - s->base) / 8];
	return 0;
}

static void put(struct fake_stack *s, uint64_t addr, uint64_t v)
{
	s->w[(addr - s->base) / 8] = v;
}

static void regs_at(struct arch_regs *r, uint64_t ip, uint64_t sp, uint64_t fp)
{
	memset(r, 0, sizeof(*r));
	arch_reg_set(r, arch_reg_ip, ip);
	arch_reg_set(r, arch_reg_sp, sp);
	arch_reg_set(r, arch_reg_fp, fp);
}

/* A frame at fp: the caller's frame pointer and the return address. */
static void frame(struct fake_stack *s, uint64_t fp, uint64_t caller_fp, uint64_t ret)
{
	put(s, fp + (uint64_t)arch_fp.saved_fp_off, caller_fp);
	put(s, fp + (uint64_t)arch_fp.ret_addr_off, ret);
}

static struct fake_stack stack;
static struct unwind_result out;

static void test_fp_chain(void **state)
{
	struct module_map mm;          /* no modules: every step is a frame-pointer one */
	struct arch_regs r;
	uint64_t b = 0x7f0000000000ull;

	(void)state;
	memset(&mm, 0, sizeof(mm));
	memset(&stack, 0, sizeof(stack));
	stack.base = b;
	frame(&stack, b + 0x20, b + 0x60, 0x401100);
	frame(&stack, b + 0x60, b + 0xa0, 0x401200);
	frame(&stack, b + 0xa0, 0, 0x401300);
	regs_at(&r, 0x401000, b, b + 0x20);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.end, UNWIND_END_COMPLETE);   /* the outermost frame pointer is 0 */
	assert_int_equal(out.n, 4);
	assert_int_equal(out.pcs[0], 0x401000);
	assert_int_equal(out.pcs[1], 0x401100);
	assert_int_equal(out.pcs[3], 0x401300);
	assert_int_equal(out.fp_steps, 3);
	assert_int_equal(out.cfi_steps, 0);
	assert_int_equal(out.steps[1], UNWIND_STEP_FP);
	/* each frame's stack pointer: above its callee's */
	assert_true(out.sps[1] > out.sps[0] && out.sps[2] > out.sps[1]);
	/* a zero return address ends the chain too */
	frame(&stack, b + 0x60, b + 0xa0, 0);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.end, UNWIND_END_COMPLETE);
	assert_int_equal(out.n, 2);
}

static void test_fp_bad_chains(void **state)
{
	struct module_map mm;
	struct arch_regs r;
	uint64_t b = 0x7f0000000000ull;

	(void)state;
	memset(&mm, 0, sizeof(mm));
	memset(&stack, 0, sizeof(stack));
	stack.base = b;
	/* a frame pointing to itself: the walk stops, it does not loop */
	frame(&stack, b + 0x40, b + 0x40, 0x401100);
	regs_at(&r, 0x401000, b, b + 0x40);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.n, 2);
	assert_int_equal(out.end, UNWIND_END_NO_MODULE);
	/* a caller's frame below its callee's */
	frame(&stack, b + 0x40, b + 0x20, 0x401100);
	frame(&stack, b + 0x20, 0, 0x401200);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.n, 2);
	assert_int_equal(out.end, UNWIND_END_NO_MODULE);
	/* misaligned, and unreadable, frame pointers: outside any module, the end */
	regs_at(&r, 0x401000, b, b + 0x43);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.end, UNWIND_END_NO_MODULE);
	assert_int_equal(out.n, 1);
	regs_at(&r, 0x401000, b, b + sizeof(stack.w) + 0x1000);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.end, UNWIND_END_NO_MODULE);
	assert_int_equal(out.n, 1);
	/* no instruction pointer at all: nothing to walk */
	memset(&r, 0, sizeof(r));
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.n, 0);
}

static void test_fp_depth_cap(void **state)
{
	struct module_map mm;
	struct arch_regs r;
	uint64_t b = 0x7f0000000000ull, fp = b + 0x10;

	(void)state;
	memset(&mm, 0, sizeof(mm));
	memset(&stack, 0, sizeof(stack));
	stack.base = b;
	/* a chain longer than UNWIND_MAX frames */
	for (int i = 0; i < UNWIND_MAX + 100; i++, fp += 0x20)
		frame(&stack, fp, fp + 0x20, 0x500000 + (uint64_t)i);
	assert_true(fp < b + sizeof(stack.w));
	regs_at(&r, 0x401000, b, b + 0x10);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.end, UNWIND_END_DEPTH);
	assert_int_equal(out.n, UNWIND_MAX);
}

#if defined(__x86_64__)
/* Reads of this process's own memory that fail instead of faulting. */
static int self_read(void *ctx, uint64_t addr, uint64_t *val)
{
	struct iovec local = { val, sizeof(*val) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(*val) };

	(void)ctx;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof(*val) ? 0 : -EFAULT;
}

static char walked[64][128];
static size_t nwalked;
static int walk_end;

/* Capture this thread's registers here and unwind from them with the real CFI. */
static __attribute__((noinline)) void capture_and_walk(void)
{
	static const int dwarf_of_greg[17] = {
		REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
		REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
	};
	struct module_map mm;
	struct symbolizer sym;
	struct arch_regs r;
	ucontext_t uc;

	assert_int_equal(getcontext(&uc), 0);
	memset(&r, 0, sizeof(r));
	for (int n = 0; n < 17; n++)
		arch_reg_set(&r, n, (uint64_t)uc.uc_mcontext.gregs[dwarf_of_greg[n]]);
	assert_int_equal(modules_load(&mm, getpid(), NULL, MODULES_NO_DEBUGINFOD, NULL), 0);
	assert_int_equal(unwind_stack(&mm, &r, self_read, NULL, &out), 0);
	symbolizer_init(&sym, &mm);
	nwalked = 0;
	{
		static struct native_symbol ns[UNWIND_MAX];
		static uint8_t exact[UNWIND_MAX];

		exact[0] = 1;
		symbolize_stack(&sym, out.pcs, exact, out.n, ns);
		for (size_t i = 0; i < out.n && nwalked < 64; i++)
			snprintf(walked[nwalked++], sizeof(walked[0]), "%s", ns[i].name);
	}
	walk_end = out.end;
	symbolizer_release(&sym);
	modules_release(&mm);
}

static __attribute__((noinline)) int unwind_level2(int x)
{
	capture_and_walk();
	return x + 1;
}

static __attribute__((noinline)) int unwind_level1(int x)
{
	return unwind_level2(x * 3) + 1;
}

/* Where name is in the walk; the compiler's clones ("f.constprop.0") count as f. */
static int position_of(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < nwalked; i++)
		if (!strncmp(walked[i], name, n) && (!walked[i][n] || walked[i][n] == '.'))
			return (int)i;
	return -1;
}

static void test_cfi_self(void **state)
{
	int a, b, c, m;

	(void)state;
	assert_true(unwind_level1(1) > 0);
	a = position_of("capture_and_walk");
	b = position_of("unwind_level2");
	c = position_of("unwind_level1");
	m = position_of("main");
	if (a < 0 || b < 0 || c < 0 || m < 0)
		for (size_t i = 0; i < nwalked; i++)
			print_message("  frame %zu: %s\n", i, walked[i]);
	/* innermost first, every caller in place, down to main and the entry */
	assert_true(a >= 0 && a < b && b < c && c < m);
	assert_int_equal(walk_end, UNWIND_END_COMPLETE);
}
#endif

#if defined(__x86_64__) && defined(PLT_LIB)
/*
 * A sample in a PLT stub that no CFI covers (fixtures/plt.c, linked
 * without the linker's PLT unwind info): the return address is at sp, the
 * caller's sp is sp + 8 (the entry state), not the frame pointer's step.
 * The caller is a file-less module at 0x400000; a word at sp that leads
 * into no module (a lazy entry's pushed relocation index) is not taken.
 */
static void test_plt_stub_x86(void **state)
{
	static char path[] = PLT_LIB;
	struct elf_cache *c = elf_cache_new();
	struct fw_module mods[2] = { { 0 }, { 0 } };
	struct module_map mm = { 0 };
	static struct fake_stack s;
	struct unwind_result *out = calloc(1, sizeof(*out));
	struct arch_regs r;
	uint64_t bias = 0x7f0000000000ull, sp, stub;
	int loaded;

	(void)state;
	assert_non_null(out);
	mods[1].file = elf_cache_open_path(c, PLT_LIB, PLT_LIB, "", &loaded);
	assert_non_null(mods[1].file);
	elf_info_load_cfi(mods[1].file);
	assert_true(mods[1].file->nplt >= 1);
	stub = mods[1].file->plt[0].start;
	assert_true(elf_info_in_plt(mods[1].file, stub));
	assert_null(elf_info_cfi_frame(mods[1].file, stub));   /* the premise: no CFI there */
	mods[1].start = mods[1].bias = bias;
	mods[1].end = bias + 0x10000;
	mods[1].path = mods[1].host_path = path;
	mods[1].name = "libfwplt.so";
	mods[0].start = 0x400000;
	mods[0].end = 0x500000;
	mods[0].name = "caller";
	mm.mods = mods;
	mm.n = mm.alloc = 2;

	memset(&s, 0, sizeof(s));
	s.base = 0x7ffff0000000ull;
	sp = s.base + 0x100;
	s.w[(sp - s.base) / 8] = 0x401234;
	memset(&r, 0, sizeof(r));
	arch_reg_set(&r, arch_reg_ip, bias + stub);
	arch_reg_set(&r, arch_reg_sp, sp);
	arch_reg_set(&r, arch_reg_fp, 0);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &s, out), 0);
	assert_int_equal(out->n, 2);
	assert_int_equal(out->pcs[1], 0x401234);
	assert_int_equal(out->sps[1], sp + 8);
	assert_int_equal(out->end, UNWIND_END_COMPLETE);
	/* a relocation index at sp: leads into no module, not taken */
	s.w[(sp - s.base) / 8] = 3;
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &s, out), 0);
	for (size_t i = 1; i < out->n; i++)
		assert_int_not_equal(out->pcs[i], 3);
	free(out);
	elf_cache_put(c, mods[1].file);
	elf_cache_free(c);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fp_chain),
		cmocka_unit_test(test_fp_bad_chains),
		cmocka_unit_test(test_fp_depth_cap),
#if defined(__x86_64__)
		cmocka_unit_test(test_cfi_self),
#endif
#if defined(__x86_64__) && defined(PLT_LIB)
		cmocka_unit_test(test_plt_stub_x86),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

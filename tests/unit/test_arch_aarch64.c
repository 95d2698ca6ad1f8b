/*
 * Unit tests of the aarch64 port on any host: this test links
 * src/arch/aarch64.c ahead of the core library, so the arch-independent
 * unwinder (src/unwind/) and the ELF layer run with the aarch64 facts
 * whatever the build's own architecture (arch.h: the facts are link-time
 * constants). The unwinder walks crafted stacks through a real arm64
 * object's CFI (fixtures/a64_funcs.so, built by Debian's cross compiler with
 * -mbranch-protection=standard, see fixtures/a64_funcs.c): frame records
 * whose return addresses carry pointer authentication codes, a leaf whose
 * return address is still in x30, samples inside a prologue. The prologue
 * matcher reads the same object's code bytes (fixtures/a64_prologues.h),
 * and the frame-pointer verdict its CFI and that of its twin built without
 * frame pointers (fixtures/a64_funcs_nofp.so).
 * Cross-built, the same test runs under qemu-aarch64 (make unit-aarch64).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arch/arch.h"
#include "elf/elffile.h"
#include "elf/fpaudit.h"
#include "elf/modules.h"
#include "unwind/unwind.h"

#include "fixtures/a64_prologues.h"

#define X29 29
#define X30 30

/* where the fixture is "mapped" in the crafted process */
#define BIAS 0x5555550000ull
/* a PAC as pac-ret leaves it with 48-bit virtual addresses (bits 48-54), and one in the top byte too */
#define PAC(a) ((a) | 0x0035000000000000ull)
#define PAC_TOP(a) ((a) | 0x9a4e000000000000ull)
/* NT_ARM_PAC_MASK's insn_mask for 48-bit virtual addresses: bits 48-54 */
#define MASK_VA48 0x007f000000000000ull

/* ---- a crafted stack ---------------------------------------------------- */

#define STACK_WORDS 4096
struct fake_stack {
	uint64_t base;
	uint64_t w[STACK_WORDS];
};

static struct fake_stack stack;
static struct unwind_result out;

static int fake_read(void *ctx, uint64_t addr, uint64_t *val)
{
	struct fake_stack *s = ctx;

	if (addr < s->base || addr + 8 > s->base + sizeof(s->w) || (addr - s->base) % 8)
		return -EFAULT;
	*val = s->w[(addr - s->base) / 8];
	return 0;
}

static void put(uint64_t addr, uint64_t v)
{
	stack.w[(addr - stack.base) / 8] = v;
}

/* A frame record at fp: {caller's x29, x30}. */
static void record(uint64_t fp, uint64_t caller_fp, uint64_t ret)
{
	put(fp + (uint64_t)arch_fp.saved_fp_off, caller_fp);
	put(fp + (uint64_t)arch_fp.ret_addr_off, ret);
}

static void regs_at(struct arch_regs *r, uint64_t pc, uint64_t sp, uint64_t fp, uint64_t lr,
		    uint64_t pac_mask)
{
	memset(r, 0, sizeof(*r));
	arch_reg_set(r, arch_reg_ip, pc);
	arch_reg_set(r, arch_reg_sp, sp);
	arch_reg_set(r, arch_reg_fp, fp);
	if (lr)
		arch_reg_set(r, X30, lr);
	r->pac_mask = pac_mask;
}

/* ---- the fixture as a module of the crafted process --------------------- */

static struct elf_cache *cache;
static struct fw_module mod;
static struct module_map mm;
static char mod_path[] = A64_FIXTURE;

static int setup_module(void **state)
{
	int loaded;

	(void)state;
	cache = elf_cache_new();
	memset(&mod, 0, sizeof(mod));
	mod.file = elf_cache_open_path(cache, A64_FIXTURE, A64_FIXTURE, "", &loaded);
	if (!mod.file)
		return -1;
	elf_info_load_cfi(mod.file);
	mod.start = BIAS;
	mod.end = BIAS + 0x10000;
	mod.bias = BIAS;
	mod.path = mod.host_path = mod_path;
	mod.name = "a64_funcs.so";
	memset(&mm, 0, sizeof(mm));
	mm.mods = &mod;
	mm.n = mm.alloc = 1;
	return 0;
}

static int teardown_module(void **state)
{
	(void)state;
	elf_cache_put(cache, mod.file);
	elf_cache_free(cache);
	return 0;
}

/* ---- the facts ---------------------------------------------------------- */

static void test_facts(void **state)
{
	(void)state;
	assert_string_equal(arch_name, "aarch64");
	assert_int_equal(arch_elf_machine, 183);         /* EM_AARCH64 */
	assert_string_equal(arch_multiarch, "aarch64-linux-gnu");
	assert_int_equal(arch_nregs, 33);
	assert_int_equal(arch_reg_fp, 29);
	assert_int_equal(arch_reg_sp, 31);
	assert_int_equal(arch_reg_ip, 32);
	assert_int_equal(arch_entry_cfa_offset, 0);      /* bl leaves the return address in x30 */
	assert_int_equal(arch_fp.saved_fp_off, 0);
	assert_int_equal(arch_fp.ret_addr_off, 8);
	/* AAPCS64: x19-x28, the frame pointer and sp survive a call; x30 and x0-x18 do not */
	for (int n = 0; n < 33; n++)
		assert_int_equal(arch_reg_callee_saved(n), (n >= 19 && n <= 29) || n == 31);
	/* the generic table (asm-generic/unistd.h), not x86-64's */
	assert_string_equal(arch_syscall_name(63), "read");
	assert_string_equal(arch_syscall_name(98), "futex");
	assert_string_equal(arch_syscall_name(73), "ppoll");
	assert_string_equal(arch_syscall_name(22), "epoll_pwait");
	assert_null(arch_syscall_name(7));               /* x86-64's poll: none here */
	assert_int_equal(arch_syscall_fd_arg(63), 1);
	assert_int_equal(arch_syscall_fd_arg(98), 0);
	assert_true(arch_syscall_is_restart(128));
	assert_false(arch_syscall_is_restart(219));
}

/* ---- pointer authentication --------------------------------------------- */

static void test_strip_ra(void **state)
{
	(void)state;
	/* a return address from a frame record of python3.15 under qemu -cpu max (issue 24) */
	assert_int_equal(arch_strip_ra(0x400000006b9308ull, 0), 0x6b9308);
	assert_int_equal(arch_strip_ra(0x400000006b9308ull, MASK_VA48), 0x6b9308);
	/* a PAC in the top byte too (no top-byte-ignore for code addresses) */
	assert_int_equal(arch_strip_ra(PAC_TOP(0xffffa1b2c3d4ull), 0), 0xffffa1b2c3d4ull);
	assert_int_equal(arch_strip_ra(PAC_TOP(0xffffa1b2c3d4ull), MASK_VA48), 0xffffa1b2c3d4ull);
	/* an unsigned address is unchanged */
	assert_int_equal(arch_strip_ra(0xaaaab0001234ull, 0), 0xaaaab0001234ull);
	assert_int_equal(arch_strip_ra(0xaaaab0001234ull, MASK_VA48), 0xaaaab0001234ull);
	/*
	 * 52-bit virtual addresses: the kernel's mask (bits 52-54) keeps an
	 * address above 2^48, which the default (every bit from 48) would cut
	 */
	assert_int_equal(arch_strip_ra(0x005f000012345678ull, 0x0070000000000000ull),
			 0x000f000012345678ull);
	assert_int_equal(arch_strip_ra(0x005f000012345678ull, 0), 0x12345678);
}

/* The frame-pointer walk (no module: every step a frame-pointer one) strips the PACs. */
static void test_fp_chain_pac(void **state)
{
	struct module_map none;
	struct arch_regs r;
	uint64_t b = 0xfffff7ff0000ull;

	(void)state;
	memset(&none, 0, sizeof(none));
	memset(&stack, 0, sizeof(stack));
	stack.base = b;
	record(b + 0x20, b + 0x60, PAC(0xaaaab0401100ull));
	record(b + 0x60, b + 0xa0, PAC_TOP(0xaaaab0401200ull));
	record(b + 0xa0, 0, PAC(0xffffb7e01300ull));
	for (int i = 0; i < 2; i++) {
		/* the mask ptrace gives, then none known (the BPF path): the default */
		regs_at(&r, 0xaaaab0401000ull, b, b + 0x20, 0, i ? 0 : MASK_VA48);
		assert_int_equal(unwind_stack(&none, &r, fake_read, &stack, &out), 0);
		assert_int_equal(out.end, UNWIND_END_COMPLETE);
		assert_int_equal(out.n, 4);
		assert_int_equal(out.pcs[0], 0xaaaab0401000ull);
		assert_int_equal(out.pcs[1], 0xaaaab0401100ull);
		assert_int_equal(out.pcs[2], 0xaaaab0401200ull);
		assert_int_equal(out.pcs[3], 0xffffb7e01300ull);
		assert_int_equal(out.fp_steps, 3);
		assert_true(out.sps[1] > out.sps[0] && out.sps[2] > out.sps[1]);
	}
	/* a signed zero is still the end of the chain */
	record(b + 0x60, b + 0xa0, PAC(0));
	regs_at(&r, 0xaaaab0401000ull, b, b + 0x20, 0, 0);
	assert_int_equal(unwind_stack(&none, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.end, UNWIND_END_COMPLETE);
	assert_int_equal(out.n, 2);
}

/*
 * The stack of fw_outer -> fw_mid -> fw_leaf in the fixture, as the CPU
 * would leave it, with return addresses signed where the code signs them.
 * fw_outer's sp is sp_outer, its record at sp_outer (gcc puts the record at
 * the bottom of a large frame); fw_mid's record at sp_outer - 32.
 */
#define OUTER_FRAME 8208                 /* sub sp, sp, x12 (#0x2010) */
#define CALLER_RA 0xffffb7e05678ull      /* fw_outer's caller, outside the module */

static uint64_t sp_outer, sp_mid;

static void craft_outer_mid(int top_byte)
{
	uint64_t b = 0xfffff7ff0000ull;

	memset(&stack, 0, sizeof(stack));
	stack.base = b;
	sp_outer = b + 0x1000;
	sp_mid = sp_outer - 32;
	/* fw_outer's record: the outermost frame pointer (0), its signed return address */
	record(sp_outer, 0, top_byte ? PAC_TOP(CALLER_RA) : PAC(CALLER_RA));
	/* fw_mid's record (stp x29, x30, [sp, #-32]! after paciasp): back into fw_outer after its bl */
	record(sp_mid, sp_outer, top_byte ? PAC_TOP(BIAS + 0x2bc) : PAC(BIAS + 0x2bc));
}

static void expect_outer_chain(size_t from, uint64_t mid_cfa)
{
	/* ... fw_mid, fw_outer after its call, fw_outer's caller; then fp 0 */
	assert_int_equal(out.end, UNWIND_END_COMPLETE);
	assert_int_equal(out.n, from + 2);
	assert_int_equal(out.pcs[from], BIAS + 0x2bc);
	assert_int_equal(out.pcs[from + 1], CALLER_RA);
	assert_int_equal(out.sps[from], mid_cfa);                 /* fw_outer's sp */
	assert_int_equal(out.sps[from + 1], mid_cfa + OUTER_FRAME);
}

/* A sample in fw_leaf: no frame record, the return address in x30 (CFI: x30 same value). */
static void test_leaf_lr(void **state)
{
	struct arch_regs r;

	(void)state;
	for (int top = 0; top < 2; top++) {
		craft_outer_mid(top);
		/* bl fw_leaf at 0x264 left 0x268 in x30, unsigned (fw_leaf signs nothing) */
		regs_at(&r, BIAS + 0x248, sp_mid, sp_mid, BIAS + 0x268, top ? 0 : MASK_VA48);
		assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
		assert_int_equal(out.pcs[0], BIAS + 0x248);
		assert_true(out.n >= 2);
		assert_int_equal(out.pcs[1], BIAS + 0x268);    /* fw_mid after its call: from x30 */
		assert_int_equal(out.steps[1], UNWIND_STEP_CFI);
		assert_int_equal(out.sps[1], sp_mid);           /* a leaf's CFA is its sp */
		expect_outer_chain(2, sp_outer);
	}
	/*
	 * x30 holding this frame's own return address (what a callee's step
	 * restored into it): nothing saved it here, the outermost frame
	 * (_start: DW_CFA_undefined x30, which libdw reads as no rule too)
	 */
	regs_at(&r, BIAS + 0x248, sp_mid, sp_mid, PAC(BIAS + 0x248), MASK_VA48);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.end, UNWIND_END_COMPLETE);
	assert_int_equal(out.n, 1);
	/* x30 unknown (a record without it): no caller from the link register, nor a wrong one */
	craft_outer_mid(0);
	regs_at(&r, BIAS + 0x248, sp_mid, sp_mid, 0, 0);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	for (size_t i = 1; i < out.n; i++)
		assert_int_not_equal(out.pcs[i], BIAS + 0x268);
}

/* Samples in fw_mid's prologue: the return address in x30 (signed), then saved. */
static void test_prologue_samples(void **state)
{
	struct arch_regs r;

	(void)state;
	craft_outer_mid(0);
	/* at the stp (paciasp done): x30 holds the signed return address, fp is fw_outer's */
	regs_at(&r, BIAS + 0x254, sp_outer, sp_outer, PAC(BIAS + 0x2bc), MASK_VA48);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.pcs[0], BIAS + 0x254);
	expect_outer_chain(1, sp_outer);
	/* at the mov x29, sp: the record is stored, x29 not yet set (still fw_outer's) */
	regs_at(&r, BIAS + 0x258, sp_mid, sp_outer, PAC(BIAS + 0x2bc), 0);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.pcs[0], BIAS + 0x258);
	expect_outer_chain(1, sp_outer);
	/* in the body, after the call returned: the ordinary case */
	regs_at(&r, BIAS + 0x268, sp_mid, sp_mid, BIAS + 0x268, MASK_VA48);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	expect_outer_chain(1, sp_outer);
	/* fw_outer before its record is stored (frame allocated): x30 signed by paciasp */
	regs_at(&r, BIAS + 0x290, sp_outer, 0, PAC(CALLER_RA), MASK_VA48);
	assert_int_equal(unwind_stack(&mm, &r, fake_read, &stack, &out), 0);
	assert_true(out.n >= 2);
	assert_int_equal(out.pcs[1], CALLER_RA);
	assert_int_equal(out.sps[1], sp_outer + OUTER_FRAME);
}

/* ---- prologues ------------------------------------------------------------ */

static void put_insns(uint8_t *code, const uint32_t *insns, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		code[4 * i] = (uint8_t)insns[i];
		code[4 * i + 1] = (uint8_t)(insns[i] >> 8);
		code[4 * i + 2] = (uint8_t)(insns[i] >> 16);
		code[4 * i + 3] = (uint8_t)(insns[i] >> 24);
	}
}

static int matches(const uint32_t *insns, size_t n)
{
	uint8_t code[64];

	put_insns(code, insns, n);
	return arch_prologue_sets_fp(code, 4 * n, 32);
}

static void test_prologue_real(void **state)
{
	(void)state;
	/* gcc -O2 -mbranch-protection=standard: bti c; no record (a leaf) */
	assert_false(arch_prologue_sets_fp(a64_leaf_code, sizeof(a64_leaf_code), 32));
	/* paciasp; stp x29, x30, [sp, #-32]!; mov x29, sp */
	assert_true(arch_prologue_sets_fp(a64_mid_code, sizeof(a64_mid_code), 32));
	/* bytes past len are not read: cut before the mov x29, sp */
	assert_false(arch_prologue_sets_fp(a64_mid_code, 8, 32));
	assert_false(arch_prologue_sets_fp(a64_mid_code, 0, 32));
	/*
	 * paciasp; mov x12, #8208; sub sp, sp, x12; 5 others; stp x29, x30,
	 * [sp]; mov x29, sp: the record's store is the 9th instruction, past a
	 * 32-byte window (fpaudit's), within a 64-byte one
	 */
	assert_false(arch_prologue_sets_fp(a64_outer_code, sizeof(a64_outer_code), 32));
	assert_true(arch_prologue_sets_fp(a64_outer_code, sizeof(a64_outer_code), 64));
	/* ... and fpaudit looks within aarch64's window (it looked in 32 bytes before) */
	assert_true(fpa_prologue_match(a64_outer_code, sizeof(a64_outer_code)));
	assert_true(fpa_prologue_match(a64_mid_code, sizeof(a64_mid_code)));
	assert_false(fpa_prologue_match(a64_leaf_code, sizeof(a64_leaf_code)));
}

static void test_prologue_crafted(void **state)
{
	static const uint32_t bti_c = 0xd503245f, paciasp = 0xd503233f, nop = 0xd503201f;
	static const uint32_t stp_fp_lr_pre16 = 0xa9bf7bfd;   /* stp x29, x30, [sp, #-16]! */
	static const uint32_t mov_fp_sp = 0x910003fd;
	(void)state;

	assert_true(matches((const uint32_t[]){ stp_fp_lr_pre16, mov_fp_sp }, 2));
	assert_true(matches((const uint32_t[]){ bti_c, stp_fp_lr_pre16, mov_fp_sp }, 3));
	assert_true(matches((const uint32_t[]){ paciasp, stp_fp_lr_pre16, nop, mov_fp_sp }, 4));
	/* clang's record above the locals: sub sp, sp, #48; stp x29, x30, [sp, #32]; add x29, sp, #32 */
	assert_true(matches((const uint32_t[]){ 0xd100c3ff, 0xa9027bfd, 0x910083fd }, 3));
	/* ... but x29 pointed elsewhere than the record: add x29, sp, #16 */
	assert_false(matches((const uint32_t[]){ 0xd100c3ff, 0xa9027bfd, 0x910043fd }, 3));
	/* a record at an offset without the frame allocated first: not a prologue */
	assert_false(matches((const uint32_t[]){ 0xa9027bfd, 0x910083fd }, 2));
	/* other callee-saved registers stored, no record: stp x19, x20, [sp, #-32]! */
	assert_false(matches((const uint32_t[]){ 0xa9be53f3, mov_fp_sp }, 2));
	/* sp moved between the record and the mov: x29 would not point at the record */
	assert_false(matches((const uint32_t[]){ stp_fp_lr_pre16, 0xd10043ff, mov_fp_sp }, 3));
	/* mov x29, sp alone: x29 borrowed, no record */
	assert_false(matches((const uint32_t[]){ mov_fp_sp, nop }, 2));
	/* x86-64's push %rbp; mov %rsp,%rbp means nothing here */
	{
		static const uint8_t x86[] = { 0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90 };
		assert_false(arch_prologue_sets_fp(x86, sizeof(x86), 32));
	}
}

/* ---- the frame-pointer verdict from arm64 CFI ------------------------------ */

static enum fpa_verdict verdict_of(const char *path)
{
	struct elf_cache *c = elf_cache_new();
	struct elf_info *f;
	enum fpa_verdict v;
	int loaded;

	f = elf_cache_open_path(c, path, path, "", &loaded);
	assert_non_null(f);
	v = f->fp;
	elf_cache_put(c, f);
	elf_cache_free(c);
	return v;
}

static void test_fp_verdict(void **state)
{
	(void)state;
	/*
	 * gcc keeps the CFA on sp with frame pointers on aarch64: the saved
	 * x29/x30 pair (a frame record) is what says so; without frame
	 * pointers gcc saves x30 alone
	 */
	assert_int_equal(verdict_of(A64_FIXTURE), FPA_YES);
	assert_int_equal(verdict_of(A64_FIXTURE_NOFP), FPA_NO);
}

/* -mbranch-protection=standard: the property note says PAC and BTI (check notes them). */
static void test_branch_protection(void **state)
{
	struct elf_cache *c = elf_cache_new();
	struct elf_info *f;
	int loaded;

	(void)state;
	f = elf_cache_open_path(c, A64_FIXTURE, A64_FIXTURE, "", &loaded);
	assert_non_null(f);
	assert_int_equal(f->audit.branch_protection, FPA_BP_PAC | FPA_BP_BTI);
	elf_cache_put(c, f);
	elf_cache_free(c);
}

/*
 * A sample in a PLT stub (fixtures/a64_plt.so: fw_caller -> fw_ext@plt),
 * which has no CFI: the return address is still in x30 and the sp is the
 * caller's (the entry state). The frame-pointer step would read
 * fw_caller's record and skip fw_caller (CI's arm64 guest: 1-5% of a
 * C extension's samples incomplete, "pc outside any module"). In .plt's
 * header (PLT0, which pushes x16 and x30) the rule does not hold: not
 * taken there.
 */
static void test_plt_stub(void **state)
{
	static char plt_path[] = A64_FIXTURE_PLT;
	struct elf_cache *c = elf_cache_new();
	struct fw_module pm = { 0 };
	struct module_map pmm = { 0 };
	uint64_t sp_c;
	struct arch_regs r;
	int loaded;

	(void)state;
	pm.file = elf_cache_open_path(c, A64_FIXTURE_PLT, A64_FIXTURE_PLT, "", &loaded);
	assert_non_null(pm.file);
	pm.start = pm.bias = BIAS;
	pm.end = BIAS + 0x10000;
	pm.path = pm.host_path = plt_path;
	pm.name = "a64_plt.so";
	pmm.mods = &pm;
	pmm.n = pmm.alloc = 1;
	assert_false(elf_info_in_plt(pm.file, 0x2a0));     /* PLT0 */
	assert_false(elf_info_in_plt(pm.file, 0x2bc));
	assert_true(elf_info_in_plt(pm.file, 0x2c0));      /* fw_ext@plt */
	assert_true(elf_info_in_plt(pm.file, 0x2cc));
	assert_false(elf_info_in_plt(pm.file, 0x2d0));     /* fw_caller */

	/* fw_caller's record (paciasp; stp x29, x30, [sp, #-16]!; mov x29, sp) at sp_c */
	memset(&stack, 0, sizeof(stack));
	stack.base = 0xfffff7ff0000ull;
	sp_c = stack.base + 0x1000;
	record(sp_c, 0, PAC(CALLER_RA));
	/* in fw_ext@plt (br x17 ahead): bl at 0x2e0 left 0x2e4 in x30 */
	regs_at(&r, BIAS + 0x2c8, sp_c, sp_c, BIAS + 0x2e4, MASK_VA48);
	assert_int_equal(unwind_stack(&pmm, &r, fake_read, &stack, &out), 0);
	assert_int_equal(out.end, UNWIND_END_COMPLETE);
	assert_int_equal(out.n, 3);
	assert_int_equal(out.pcs[1], BIAS + 0x2e4);         /* fw_caller after its call */
	assert_int_equal(out.sps[1], sp_c);
	assert_int_equal(out.steps[1], UNWIND_STEP_CFI);
	assert_int_equal(out.pcs[2], CALLER_RA);            /* from fw_caller's CFI */
	assert_int_equal(out.sps[2], sp_c + 16);
	/* in PLT0 (after its stp): no entry rule, the frame pointer's step */
	regs_at(&r, BIAS + 0x2a8, sp_c - 16, sp_c, BIAS + 0x2e4, MASK_VA48);
	assert_int_equal(unwind_stack(&pmm, &r, fake_read, &stack, &out), 0);
	assert_true(out.n >= 2);
	assert_int_equal(out.steps[1], UNWIND_STEP_FP);
	elf_cache_put(c, pm.file);
	elf_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_facts),
		cmocka_unit_test(test_strip_ra),
		cmocka_unit_test(test_fp_chain_pac),
		cmocka_unit_test(test_leaf_lr),
		cmocka_unit_test(test_prologue_samples),
		cmocka_unit_test(test_prologue_real),
		cmocka_unit_test(test_prologue_crafted),
		cmocka_unit_test(test_fp_verdict),
		cmocka_unit_test(test_branch_protection),
		cmocka_unit_test(test_plt_stub),
	};

	return cmocka_run_group_tests(tests, setup_module, teardown_module);
}

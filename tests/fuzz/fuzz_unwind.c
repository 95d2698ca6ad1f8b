/*
 * libFuzzer harness for the native unwinder (src/unwind/unwind.h) over a
 * copied stack, as the bpf backend walks the copy the program took: the
 * modules are this process's own (the harness, libc, libdw...: real CFI
 * and frame-pointer verdicts, loaded once), the registers and the stack the
 * target's (it controls every word of its stack). Addresses are written
 * relative to what they point into, so inputs survive address-space
 * randomization:
 *   byte 0      flags (unused, reserved)
 *   then        FW_NREGS registers (DWARF order: rax rdx rcx rbx rsi rdi rbp
 *               rsp r8-r15 rip), 8 bytes each, then the stack copy, placed
 *               at STACK_BASE; every 8-byte word (registers and stack) is
 *               read as
 *                 top byte 0xfe: a code address, byte 6 the module (by name
 *                                order), bytes 0-3 the offset in it;
 *                 top byte 0xfd: STACK_BASE + bytes 0-3;
 *                 anything else: itself.
 * FUZZ_UNWIND_SEED=FILE writes the harness's own registers and stack there,
 * so encoded, and to FILE-signal (in a signal handler) and FILE-qsort (in
 * a callback from libc) (seeds.sh). Checked: the chain is bounded and ends with a
 * reason; it starts at the registers' pc and sp; steps are counted once
 * per frame; each frame's sp is above its callee's unless the callee is a
 * signal frame; the pcs after the first are return addresses read from
 * the copy or kept in registers; no read leaves the copy; the module an
 * incomplete chain ended in is one of the map's; a second walk (the CFI
 * rows cached now) gives the same chain.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "bpf/fwprof.h"
#include "elf/modules.h"
#include "unwind/stackcopy.h"
#include "unwind/unwind.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_unwind: check failed: %s (line %d)\n", \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#define STACK_BASE 0x7ffd00000000ull
#define TAG_CODE 0xfeu
#define TAG_STACK 0xfdu
#define HEAD (1 + 8 * FW_NREGS)

static struct module_map mm;
static size_t by_name[256], nmods;   /* module indices, sorted by name */
static struct unwind_result first, second;
static uint8_t stack[FW_STACK_COPY];
static int verbose = -1;    /* FUZZ_VERBOSE=1: print the chain */

static int cmp_name(const void *a, const void *b)
{
	const struct fw_module *x = &mm.mods[*(const size_t *)a];
	const struct fw_module *y = &mm.mods[*(const size_t *)b];
	int c = strcmp(x->name, y->name);

	return c ? c : (x->start > y->start) - (x->start < y->start);
}

static void load_modules(void)
{
	CHECK(modules_load(&mm, getpid(), NULL, MODULES_NO_DEBUGINFOD | MODULES_NO_SYMBOLS,
			   NULL) == 0);
	for (size_t i = 0; i < mm.n && nmods < 256; i++)
		by_name[nmods++] = i;
	qsort(by_name, nmods, sizeof(by_name[0]), cmp_name);
	CHECK(nmods > 0);
}

static uint64_t decode(uint64_t w)
{
	uint32_t off = (uint32_t)w;

	if (w >> 56 == TAG_CODE) {
		const struct fw_module *m = &mm.mods[by_name[(w >> 48 & 0xff) % nmods]];

		return m->start + off % (m->end - m->start);
	}
	if (w >> 56 == TAG_STACK)
		return STACK_BASE + off;
	return w;
}

/* A word of this process as an input word: relative to its module or to the stack copy. */
static uint64_t encode(uint64_t v, uint64_t lo, uint64_t hi)
{
	if (v >= lo && v < hi)
		return (uint64_t)TAG_STACK << 56 | (v - lo);
	for (size_t k = 0; k < nmods; k++) {
		const struct fw_module *m = &mm.mods[by_name[k]];

		if (v >= m->start && v < m->end)
			return (uint64_t)TAG_CODE << 56 | (uint64_t)k << 48 | (v - m->start);
	}
	return v;
}

/* The end of this thread's stack mapping (the main thread's: [stack]). */
static uint64_t stack_end(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long long lo, hi = 0;

	CHECK(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			break;
	fclose(f);
	CHECK(hi);
	return hi;
}

/* A word of this thread's stack, redzones included (not ASan's to check). */
static __attribute__((no_sanitize("address"))) uint64_t stack_word(uint64_t a)
{
	return *(const volatile uint64_t *)a;
}

/* FUZZ_UNWIND_SEED: this thread's registers and up to 16 KiB of its stack, encoded. */
static __attribute__((noinline)) void write_seed(const char *path)
{
	static const int greg[FW_NREGS] = {
		REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
		REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
	};
	ucontext_t uc;
	uint64_t lo, hi, w;
	uint8_t flags = 0;
	FILE *f;

	CHECK(getcontext(&uc) == 0);
	lo = (uint64_t)uc.uc_mcontext.gregs[REG_RSP] - STACK_COPY_BELOW_SP;
	hi = lo + 16384 < stack_end() ? lo + 16384 : stack_end();
	f = fopen(path, "wb");
	CHECK(f);
	fwrite(&flags, 1, 1, f);
	for (int i = 0; i < FW_NREGS; i++) {
		w = encode((uint64_t)uc.uc_mcontext.gregs[greg[i]], lo, hi);
		fwrite(&w, 8, 1, f);
	}
	for (uint64_t a = lo; a < hi; a += 8) {
		w = encode(stack_word(a), lo, hi);
		fwrite(&w, 8, 1, f);
	}
	CHECK(fclose(f) == 0);
}

static char seed_path[4096];

/* A stack through a signal frame (the kernel's, and libc's __restore_rt)... */
static void seed_in_handler(int sig)
{
	char path[4200];

	(void)sig;
	snprintf(path, sizeof(path), "%s-signal", seed_path);
	write_seed(path);
}

/* ... and one through libc's own code (qsort calling back). */
static int seed_in_compare(const void *a, const void *b)
{
	static int done;
	char path[4200];

	if (!done++) {
		snprintf(path, sizeof(path), "%s-qsort", seed_path);
		write_seed(path);
	}
	return *(const int *)a - *(const int *)b;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seed = getenv("FUZZ_UNWIND_SEED");
	int v[] = { 3, 1, 2 };

	(void)argc;
	(void)argv;
	load_modules();
	if (seed) {
		snprintf(seed_path, sizeof(seed_path), "%s", seed);
		write_seed(seed_path);
		signal(SIGUSR1, seed_in_handler);
		raise(SIGUSR1);
		signal(SIGUSR1, SIG_DFL);
		qsort(v, 3, sizeof(v[0]), seed_in_compare);
	}
	return 0;
}

static int in_map(const struct fw_module *m)
{
	return m >= mm.mods && m < mm.mods + mm.n;
}

/* Was v a word of the copy, or of the registers? */
static int known_word(uint64_t v, const struct arch_regs *regs, size_t len)
{
	for (int i = 0; i < FW_NREGS; i++)
		if (regs->r[i] == v)
			return 1;
	for (size_t i = 0; i + 8 <= len; i++)
		if (!memcmp(stack + i, &v, 8))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arch_regs regs;
	struct stack_copy sc;
	size_t len, steps;
	uint64_t w;

	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (size < HEAD)
		return 0;
	memset(&regs, 0, sizeof(regs));   /* pac_mask 0: the architecture's default */
	for (int i = 0; i < FW_NREGS; i++) {
		memcpy(&w, data + 1 + 8 * i, 8);
		arch_reg_set(&regs, i, decode(w));
	}
	len = size - HEAD;
	if (len > FW_STACK_COPY)
		len = FW_STACK_COPY;
	for (size_t i = 0; i < len; i += 8) {
		size_t n = len - i < 8 ? len - i : 8;

		w = 0;
		memcpy(&w, data + HEAD + i, n);
		if (n == 8)
			w = decode(w);
		memcpy(stack + i, &w, n);
	}

	stack_copy_init(&sc, stack, STACK_BASE, len, FW_STACK_COPY);
	unwind_stack(&mm, &regs, stack_copy_read, &sc, &first);
	CHECK(first.n <= UNWIND_MAX);
	CHECK(first.end >= UNWIND_END_COMPLETE && first.end <= UNWIND_END_BAD_FRAME);
	CHECK(first.end != UNWIND_END_DEPTH || first.n == UNWIND_MAX);
	CHECK(!first.end_module || in_map(first.end_module));
	CHECK(sc.read_end <= STACK_BASE + len);
	if (verbose) {
		fprintf(stderr, "%zu frames (%u fp, %u cfi steps), end: %s\n", first.n,
			first.fp_steps, first.cfi_steps, unwind_end_text(first.end));
		for (size_t i = 0; i < first.n; i++) {
			const struct fw_module *m = modules_find(&mm, first.pcs[i]);

			fprintf(stderr, "  %s+%#llx\n", m ? m->name : "?",
				(unsigned long long)(first.pcs[i] - (m ? m->start : 0)));
		}
	}
	steps = first.fp_steps + first.cfi_steps;
	CHECK(steps == first.n || steps + 1 == first.n || (!first.n && !steps));
	if (first.n) {
		CHECK(first.pcs[0] == regs.r[arch_reg_ip] && first.sps[0] == regs.r[arch_reg_sp]);
		CHECK(first.signal_frame[0] == 1);
	}
	for (size_t i = 1; i < first.n; i++) {
		CHECK(first.pcs[i] && known_word(first.pcs[i], &regs, len));
		/* frame i was reached from i - 1: up the stack, unless by a signal frame's rule */
		CHECK(first.signal_frame[i] || first.sps[i] > first.sps[i - 1]);
	}

	/* again, with every row cached: the same chain */
	stack_copy_init(&sc, stack, STACK_BASE, len, FW_STACK_COPY);
	unwind_stack(&mm, &regs, stack_copy_read, &sc, &second);
	CHECK(second.n == first.n && second.end == first.end);
	CHECK(second.end_module == first.end_module);
	CHECK(!memcmp(second.pcs, first.pcs, first.n * sizeof(first.pcs[0])));
	CHECK(!memcmp(second.sps, first.sps, first.n * sizeof(first.sps[0])));
	return 0;
}

/*
 * Implementation of unwind.h: the step loop and a small evaluator for the
 * DWARF expressions CFI uses (register + offset, the PLT's computed CFA,
 * call_frame_cfa + offset, deref, stack_value).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>

#include "unwind/unwind.h"
#include "util/util.h"

#define EXPR_STACK 16

struct expr_ctx {
	const struct arch_regs *regs;
	uint64_t cfa;
	int have_cfa;
	unwind_read_fn read;
	void *read_ctx;
};

/* Evaluate a DWARF expression; *is_value says whether it ended with stack_value. */
static int eval_expr(const struct expr_ctx *c, const Dwarf_Op *ops, size_t n, uint64_t *out,
		     int *is_value)
{
	uint64_t st[EXPR_STACK];
	size_t sp = 0;

	*is_value = 0;
#define PUSH(v) do { if (sp == EXPR_STACK) return -EINVAL; st[sp++] = (v); } while (0)
#define POP(v) do { if (!sp) return -EINVAL; (v) = st[--sp]; } while (0)
	for (size_t i = 0; i < n; i++) {
		uint8_t op = ops[i].atom;
		uint64_t a, b;

		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			PUSH((uint64_t)(op - DW_OP_lit0));
		} else if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
			int reg = op - DW_OP_breg0;
			if (!arch_reg_valid(c->regs, reg))
				return -EINVAL;
			PUSH(c->regs->r[reg] + (uint64_t)(int64_t)ops[i].number);
		} else {
			switch (op) {
			case DW_OP_bregx:
				if (!arch_reg_valid(c->regs, (int)ops[i].number))
					return -EINVAL;
				PUSH(c->regs->r[ops[i].number] + (uint64_t)(int64_t)ops[i].number2);
				break;
			case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
			case DW_OP_const8u: case DW_OP_constu:
			case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
			case DW_OP_const8s: case DW_OP_consts:
				PUSH((uint64_t)ops[i].number);
				break;
			case DW_OP_call_frame_cfa:
				if (!c->have_cfa)
					return -EINVAL;
				PUSH(c->cfa);
				break;
			case DW_OP_plus_uconst:
				POP(a);
				PUSH(a + ops[i].number);
				break;
			case DW_OP_plus: POP(b); POP(a); PUSH(a + b); break;
			case DW_OP_minus: POP(b); POP(a); PUSH(a - b); break;
			case DW_OP_and: POP(b); POP(a); PUSH(a & b); break;
			case DW_OP_or: POP(b); POP(a); PUSH(a | b); break;
			case DW_OP_shl: POP(b); POP(a); PUSH(b < 64 ? a << b : 0); break;
			case DW_OP_shr: POP(b); POP(a); PUSH(b < 64 ? a >> b : 0); break;
			case DW_OP_ge: POP(b); POP(a); PUSH((int64_t)a >= (int64_t)b); break;
			case DW_OP_gt: POP(b); POP(a); PUSH((int64_t)a > (int64_t)b); break;
			case DW_OP_le: POP(b); POP(a); PUSH((int64_t)a <= (int64_t)b); break;
			case DW_OP_lt: POP(b); POP(a); PUSH((int64_t)a < (int64_t)b); break;
			case DW_OP_eq: POP(b); POP(a); PUSH(a == b); break;
			case DW_OP_ne: POP(b); POP(a); PUSH(a != b); break;
			case DW_OP_dup: POP(a); PUSH(a); PUSH(a); break;
			case DW_OP_drop: POP(a); break;
			case DW_OP_deref:
				POP(a);
				if (c->read(c->read_ctx, a, &b))
					return -EFAULT;
				PUSH(b);
				break;
			case DW_OP_stack_value:
				*is_value = 1;
				break;
			default:
				return -ENOTSUP;
			}
		}
	}
#undef PUSH
#undef POP
	if (!sp)
		return -EINVAL;
	*out = st[sp - 1];
	return 0;
}

const char *unwind_end_text(enum unwind_end e)
{
	switch (e) {
	case UNWIND_END_COMPLETE: return "complete";
	case UNWIND_END_NO_INFO: return "no frame pointer and no CFI";
	case UNWIND_END_BAD_MEMORY: return "unreadable memory";
	case UNWIND_END_DEPTH: return "depth cap";
	case UNWIND_END_NO_MODULE: return "pc outside any module";
	case UNWIND_END_BAD_FRAME: return "stack did not grow toward its base";
	}
	return "unknown";
}

/*
 * One CFI step. Returns 1 when the frame is the outermost (return address
 * undefined), 0 when regs now hold the caller's, -ENOENT when there is no CFI
 * at pc, other -errno on failure.
 */
static int cfi_step(struct fw_module *m, uint64_t lookup_pc, struct arch_regs *regs,
		    unwind_read_fn read, void *ctx, int *signal_frame)
{
	struct expr_ctx ec = { regs, 0, 0, read, ctx };
	struct arch_regs caller;
	Dwarf_Frame *frame;
	Dwarf_Op *ops, ops_mem[3];
	size_t nops;
	Dwarf_Addr start, end;
	bool signalp = false;
	int ra_reg, is_value, ret = -ENOENT;
	uint64_t v;

	/* The row belongs to the file's cache (elf/elffile.h): not freed here. */
	frame = module_cfi_frame(m, lookup_pc);
	if (!frame)
		return -ENOENT;
	ra_reg = dwarf_frame_info(frame, &start, &end, &signalp);
	if (ra_reg < 0 || ra_reg >= arch_nregs)
		goto out;
	ret = -EINVAL;
	if (dwarf_frame_cfa(frame, &ops, &nops) || eval_expr(&ec, ops, nops, &ec.cfa, &is_value))
		goto out;
	ec.have_cfa = 1;
	caller.valid = 0;
	for (int reg = 0; reg < arch_nregs; reg++) {
		if (dwarf_frame_register(frame, reg, ops_mem, &ops, &nops))
			continue;
		if (nops == 0) {
			/*
			 * A return address column that is a real register
			 * (aarch64's link register x30, not x86-64's rip) with no
			 * rule: the return address is still in it (a leaf, a
			 * prologue before the frame record is stored, a function
			 * interrupted by a signal) -- unless what it holds is
			 * this frame's own return address, restored there by the
			 * callee's step: then nothing saved it, the outermost
			 * frame (_start's DW_CFA_undefined reads the same way:
			 * libdw gives no rule for either). Unknown (after a
			 * frame-pointer step): frame pointers from here.
			 */
			if (reg == ra_reg && ra_reg != arch_reg_ip) {
				if (!arch_reg_valid(regs, reg))
					goto out;
				if (arch_strip_ra(regs->r[reg], regs->pac_mask) ==
				    regs->r[arch_reg_ip]) {
					ret = 1;
					goto out;
				}
				arch_reg_set(&caller, reg, regs->r[reg]);
				continue;
			}
			if (reg == ra_reg) {
				/* Undefined (or same-value) return address: outermost frame. */
				ret = 1;
				goto out;
			}
			/*
			 * Same value, or no rule at all: a callee-saved register the
			 * function did not save was not touched, so the caller has the
			 * same one (the frame pointer through a function built without
			 * frame pointers, above all).
			 */
			if ((ops || arch_reg_callee_saved(reg)) && arch_reg_valid(regs, reg))
				arch_reg_set(&caller, reg, regs->r[reg]);
			continue;
		}
		if (nops == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
			int src = ops[0].atom - DW_OP_reg0;
			if (arch_reg_valid(regs, src))
				arch_reg_set(&caller, reg, regs->r[src]);
			continue;
		}
		if (eval_expr(&ec, ops, nops, &v, &is_value))
			continue;
		if (!is_value) {
			uint64_t addr = v;
			if (read(ctx, addr, &v)) {
				if (reg == ra_reg) {
					ret = -EFAULT;
					goto out;
				}
				continue;
			}
		}
		arch_reg_set(&caller, reg, v);
	}
	if (!arch_reg_valid(&caller, ra_reg))
		goto out;
	/*
	 * The caller's ip is the return address (without a pointer
	 * authentication code); its sp is the CFA.
	 */
	arch_reg_set(&caller, arch_reg_ip, arch_strip_ra(caller.r[ra_reg], regs->pac_mask));
	arch_reg_set(&caller, arch_reg_sp, ec.cfa);
	caller.in_syscall = 0;
	caller.syscall_nr = -1;
	caller.syscall_arg0 = 0;
	caller.pac_mask = regs->pac_mask;
	*regs = caller;
	*signal_frame = signalp;
	ret = 0;
out:
	return ret;
}

/* Frame-pointer step. 0, 1 at the end of the chain (fp 0), -errno. */
static int fp_step(struct arch_regs *regs, unwind_read_fn read, void *ctx)
{
	uint64_t fp, caller_fp, ra;

	if (!arch_reg_valid(regs, arch_reg_fp))
		return -EINVAL;
	fp = regs->r[arch_reg_fp];
	if (fp == 0)
		return 1;
	if (fp & 7 || (arch_reg_valid(regs, arch_reg_sp) && fp < regs->r[arch_reg_sp]))
		return -EINVAL;
	if (read(ctx, fp + (uint64_t)arch_fp.saved_fp_off, &caller_fp) ||
	    read(ctx, fp + (uint64_t)arch_fp.ret_addr_off, &ra))
		return -EFAULT;
	/* aarch64: a signed return address carries its authentication code */
	ra = arch_strip_ra(ra, regs->pac_mask);
	if (ra == 0)
		return 1;
	regs->valid = 0;
	arch_reg_set(regs, arch_reg_fp, caller_fp);
	arch_reg_set(regs, arch_reg_ip, ra);
	arch_reg_set(regs, arch_reg_sp, fp + (uint64_t)arch_fp.caller_sp_off);
	return 0;
}

/*
 * The step out of a function that has done nothing yet (arch.h:
 * arch_reg_ra, arch_entry_cfa_offset): the return address in the link
 * register or at the stack pointer, the caller's sp the entry CFA, the
 * callee-saved registers untouched. A PLT stub is in that state
 * throughout, and has no CFI on aarch64. 0, or -errno.
 */
static int entry_step(struct arch_regs *regs, unwind_read_fn read, void *ctx)
{
	struct arch_regs caller;
	uint64_t sp, ra;

	if (!arch_reg_valid(regs, arch_reg_sp))
		return -EINVAL;
	sp = regs->r[arch_reg_sp];
	if (arch_reg_ra >= 0) {
		if (!arch_reg_valid(regs, arch_reg_ra))
			return -EINVAL;
		ra = regs->r[arch_reg_ra];
	} else if (read(ctx, sp, &ra)) {
		return -EFAULT;
	}
	memset(&caller, 0, sizeof(caller));
	caller.pac_mask = regs->pac_mask;
	for (int reg = 0; reg < arch_nregs; reg++)
		if (arch_reg_callee_saved(reg) && arch_reg_valid(regs, reg))
			arch_reg_set(&caller, reg, regs->r[reg]);
	arch_reg_set(&caller, arch_reg_ip, arch_strip_ra(ra, regs->pac_mask));
	arch_reg_set(&caller, arch_reg_sp, sp + (uint64_t)arch_entry_cfa_offset);
	*regs = caller;
	return 0;
}

/*
 * Take the frame-pointer step for a caller's frame in m? Where the module
 * keeps frame pointers and the step gives the caller's sp exactly (not on
 * aarch64, where the CFI step does it; arch.h).
 */
static int fp_first_choice(const struct fw_module *m)
{
	return arch_fp.caller_sp_exact && module_fp_verdict(m) == FPA_YES;
}

int unwind_stack(struct module_map *mm, const struct arch_regs *initial,
		 unwind_read_fn read, void *ctx, struct unwind_result *out)
{
	struct arch_regs regs = *initial;
	int exact = 1;   /* the innermost pc is where the thread was interrupted */

	out->n = 0;
	out->fp_steps = out->cfi_steps = 0;
	out->end_module = NULL;
	out->end = UNWIND_END_DEPTH;
	while (out->n < UNWIND_MAX) {
		uint64_t pc = regs.r[arch_reg_ip], old_sp = regs.r[arch_reg_sp];
		struct fw_module *m;
		int ret = -ENOENT, sig = 0, first = out->n == 0;

		if (!arch_reg_valid(&regs, arch_reg_ip) || pc == 0) {
			out->end = UNWIND_END_COMPLETE;
			break;
		}
		out->pcs[out->n] = pc;
		out->sps[out->n] = old_sp;
		out->steps[out->n] = first ? UNWIND_STEP_FIRST : out->steps[out->n];
		out->signal_frame[out->n] = (uint8_t)exact;
		out->n++;
		m = modules_find(mm, pc);
		/* Callers' pcs are return addresses: look up the call instruction. */
		if (m && (first || !fp_first_choice(m))) {
			ret = cfi_step(m, exact ? pc : pc - 1, &regs, read, ctx, &sig);
			/*
			 * Interrupted in a PLT stub without CFI: it keeps no frame
			 * (not the frame pointer's step: that skips its caller).
			 * Taken where it leads into a module: an x86-64 lazy-binding
			 * entry past its push holds the relocation's index there.
			 */
			if (ret == -ENOENT && exact && module_in_plt(m, pc)) {
				struct arch_regs at_entry = regs;

				if (!entry_step(&at_entry, read, ctx) &&
				    modules_find(mm, at_entry.r[arch_reg_ip])) {
					regs = at_entry;
					ret = 0;
					sig = 0;
				}
			}
			if (ret == 0) {
				out->cfi_steps++;
				out->steps[out->n < UNWIND_MAX ? out->n : UNWIND_MAX - 1] = UNWIND_STEP_CFI;
			}
		}
		/* No CFI here (or an expression we cannot evaluate): frame pointers. */
		if (ret == -ENOENT || ret == -EINVAL || ret == -ENOTSUP ||
		    (m && !first && fp_first_choice(m))) {
			ret = fp_step(&regs, read, ctx);
			sig = 0;
			if (ret == 0) {
				out->fp_steps++;
				out->steps[out->n < UNWIND_MAX ? out->n : UNWIND_MAX - 1] = UNWIND_STEP_FP;
			} else if (ret < 0 && !m) {
				out->end = UNWIND_END_NO_MODULE;
				out->end_module = NULL;
				return 0;
			} else if (ret < 0) {
				out->end = ret == -EFAULT ? UNWIND_END_BAD_MEMORY : UNWIND_END_NO_INFO;
				out->end_module = m;
				return 0;
			}
		}
		if (ret == 1) {
			out->end = UNWIND_END_COMPLETE;
			return 0;
		}
		if (ret < 0) {
			out->end = ret == -EFAULT ? UNWIND_END_BAD_MEMORY : UNWIND_END_NO_INFO;
			out->end_module = m;
			return 0;
		}
		/*
		 * The stack grows down: a caller's frame is above its callee's;
		 * at the same sp only where a call leaves the return address in
		 * a register (aarch64) and the function interrupted (the
		 * innermost, or one a signal interrupted) has no frame yet: a
		 * leaf, a prologue.
		 */
		if ((!sig && (regs.r[arch_reg_sp] < old_sp ||
			      (regs.r[arch_reg_sp] == old_sp && !(exact && arch_entry_cfa_offset == 0)))) ||
		    (regs.r[arch_reg_ip] == pc && regs.r[arch_reg_sp] - old_sp <= 16)) {
			out->end = UNWIND_END_BAD_FRAME;
			out->end_module = m;
			return 0;
		}
		exact = sig;
	}
	return 0;
}

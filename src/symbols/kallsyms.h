/*
 * Kernel addresses to names, from /proc/kallsyms (needs root or CAP_SYSLOG
 * for real addresses; with kptr_restrict the table is all zeros and every
 * lookup says "[kernel]").
 */
#ifndef FRAMEWALK_SYMBOLS_KALLSYMS_H
#define FRAMEWALK_SYMBOLS_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	char *name;
};

struct kallsyms {
	struct ksym *syms;
	size_t n;
	int loaded;
};

/* Load the text symbols. 0, or -errno (then lookups name nothing). */
int kallsyms_load(struct kallsyms *k);
void kallsyms_release(struct kallsyms *k);
/* The function holding addr, or "[kernel]". */
const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);

#endif

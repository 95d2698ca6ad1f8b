/* Implementation of kallsyms.h: a sorted array searched by address. */
#include <errno.h>

#include "symbols/kallsyms.h"
#include "util/util.h"

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int kallsyms_load(struct kallsyms *k)
{
	char line[512];
	size_t alloc = 0;
	FILE *f;

	memset(k, 0, sizeof(*k));
	k->loaded = 1;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		unsigned long long addr;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T')
			continue;
		k->syms = xgrow(k->syms, sizeof(*k->syms), k->n + 1, &alloc);
		k->syms[k->n].addr = addr;
		k->syms[k->n].name = xstrdup(name);
		k->n++;
	}
	fclose(f);
	sort_array(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	return k->n ? 0 : -EPERM;
}

void kallsyms_release(struct kallsyms *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->syms[i].name);
	free(k->syms);
	memset(k, 0, sizeof(*k));
}

const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? k->syms[lo - 1].name : "[kernel]";
}

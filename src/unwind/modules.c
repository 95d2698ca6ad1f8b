/*
 * Implementation of modules.h. Each file-backed executable mapping becomes a
 * libdwfl module reported with the fd we opened ourselves (through
 * /proc/PID/root, inode-checked), so container files are used, not the
 * host's. The frame-pointer verdict is `framewalk check`'s (src/audit/
 * fpaudit.c) on x86-64; elsewhere it samples up to FP_SAMPLE functions and
 * asks the CFI whether the CFA is rbp-based in the middle of each.
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <unistd.h>

#include "arch/arch.h"
#include "audit/fpaudit.h"
#include "target/proc.h"
#include "unwind/modules.h"
#include "util/util.h"

#define FP_SAMPLE 200
#define FP_MIN_FUNC_SIZE 24

static int cmp_module(const void *a, const void *b)
{
	const struct fw_module *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void module_free(struct fw_module *m)
{
	if (m->cfi_cache)
		for (size_t i = 0; i < CFI_CACHE_SLOTS; i++)
			free(m->cfi_cache[i].frame);
	free(m->cfi_cache);
	free(m->host_path);
	free(m->path);
}

void modules_release(struct module_map *mm)
{
	for (size_t i = 0; i < mm->nranges; i++)
		free(mm->ranges[i].name);
	free(mm->ranges);
	for (size_t i = 0; i < mm->n; i++)
		module_free(&mm->mods[i]);
	free(mm->mods);
	if (mm->dwfl)
		dwfl_end(mm->dwfl);
	if (mm->debug) {
		debuginfo_release(mm->debug);
		free(mm->debug);
	}
	memset(mm, 0, sizeof(*mm));
}

static struct fw_module *find_by_path(struct module_map *mm, const char *path)
{
	for (size_t i = 0; i < mm->n; i++)
		if (!strcmp(mm->mods[i].path, path))
			return &mm->mods[i];
	return NULL;
}

/* Load bias of an ELF whose offset-0 mapping starts at start. */
static int elf_bias(int fd, uint64_t start, uint64_t *bias)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t n;
	int ret = -ENOEXEC;

	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &n)) {
		GElf_Ehdr eh;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (gelf_getehdr(elf, &eh) && eh.e_type == ET_EXEC)
				*bias = 0;
			else
				*bias = start - (ph.p_vaddr - ph.p_offset);
			ret = 0;
			break;
		}
	}
	elf_end(elf);
	return ret;
}

static void report_module(struct module_map *mm, const struct proc_maps *maps,
			  const struct proc_map *exec_map)
{
	const struct proc_map *base = proc_maps_find_base(maps, exec_map->path);
	struct fw_module *m;
	char host[PATH_MAX + 64];
	const unsigned char *bid;
	GElf_Addr vaddr;
	uint64_t bias, lo = UINT64_MAX, hi = 0;
	void **userdata;
	int fd, len;

	if (!base)
		base = exec_map;
	if (proc_map_host_path(mm->pid, exec_map, host, sizeof(host)))
		return;
	fd = open(host, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (elf_bias(fd, base->start - base->offset, &bias)) {
		close(fd);
		return;
	}
	for (size_t i = 0; i < maps->n; i++) {
		if (strcmp(maps->maps[i].path, exec_map->path))
			continue;
		if (maps->maps[i].start < lo)
			lo = maps->maps[i].start;
		if (maps->maps[i].end > hi)
			hi = maps->maps[i].end;
	}
	mm->mods = xgrow(mm->mods, sizeof(*mm->mods), mm->n + 1, &mm->alloc);
	m = &mm->mods[mm->n];
	memset(m, 0, sizeof(*m));
	/* libdwfl takes ownership of fd. */
	m->dwfl_mod = dwfl_report_elf(mm->dwfl, exec_map->path, host, fd, bias, false);
	if (!m->dwfl_mod) {
		close(fd);
		return;
	}
	/* What debuginfo_dwfl_find works with. */
	if (dwfl_module_info(m->dwfl_mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
		*userdata = mm->debug;
	m->start = lo;
	m->end = hi;
	m->bias = bias;
	m->path = xstrdup(exec_map->path);
	m->host_path = xstrdup(host);
	m->name = path_base(m->path);
	len = dwfl_module_build_id(m->dwfl_mod, &bid, &vaddr);
	for (int i = 0; i < len && i < 20; i++)
		xsnprintf(m->build_id + 2 * i, 3, "%02x", bid[i]);
	mm->n++;
}

/* Every module is reported with the fd we opened: libdwfl never looks for one. */
static int no_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
	errno = ENOENT;
	return -1;
}

static int load(struct module_map *mm, pid_t pid, unsigned flags, struct debuginfo *debug)
{
	struct proc_maps maps;
	int ret;

	memset(mm, 0, sizeof(*mm));
	mm->pid = pid;
	mm->flags = flags;
	mm->debug = debug;
	/*
	 * Neither of libdwfl's standard callbacks: both ask debuginfod
	 * servers by themselves, unbounded, whenever a file is first needed
	 * (mid-capture); debuginfo.c asks them once, here, within a budget.
	 */
	mm->callbacks.find_elf = no_find_elf;
	mm->callbacks.find_debuginfo = debuginfo_dwfl_find;
	mm->callbacks.section_address = dwfl_offline_section_address;
	mm->dwfl = dwfl_begin(&mm->callbacks);
	if (!mm->dwfl)
		return -ENOMEM;
	ret = proc_maps_read(pid, &maps);
	if (ret)
		return ret;
	dwfl_report_begin(mm->dwfl);
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.maps[i];

		if (m->perms[2] != 'x')
			continue;
		mm->ranges = xgrow(mm->ranges, sizeof(*mm->ranges), mm->nranges + 1, &mm->ranges_alloc);
		mm->ranges[mm->nranges].start = m->start;
		mm->ranges[mm->nranges].end = m->end;
		mm->ranges[mm->nranges].name = xstrdup(m->path);
		mm->nranges++;
		if (m->path[0] != '/' || find_by_path(mm, m->path))
			continue;
		report_module(mm, &maps, m);
	}
	dwfl_report_end(mm->dwfl, NULL, NULL);
	proc_maps_release(&maps);
	qsort(mm->mods, mm->n, sizeof(*mm->mods), cmp_module);
	/* Debug files from debuginfod servers, before any sample is taken. */
	for (size_t i = 0; i < mm->n; i++) {
		struct fw_module *m = &mm->mods[i];
		const unsigned char *bid;
		GElf_Addr vaddr;
		Dwarf_Addr bias;
		int len = dwfl_module_build_id(m->dwfl_mod, &bid, &vaddr);

		if (len > 0)
			debuginfo_prefetch(mm->debug, m->path, dwfl_module_getelf(m->dwfl_mod, &bias),
					   bid, (size_t)len);
		/*
		 * Symbols and the address index of the debug info now too: the
		 * first lookup in a large debug file (python3.15's is 23 MB)
		 * takes a second, which mid-capture costs ticks.
		 */
		dwfl_module_getsymtab(m->dwfl_mod);
		if (dwfl_module_getdwarf(m->dwfl_mod, &bias))
			dwfl_module_getsrc(m->dwfl_mod, m->start);
	}
	/*
	 * Unwind tables and frame-pointer verdicts now, before any thread is
	 * stopped: loading them during the first stop held it for 100s of ms.
	 */
	for (size_t i = 0; i < mm->n; i++)
		module_fp_verdict(&mm->mods[i]);
	return 0;
}

int modules_load(struct module_map *mm, pid_t pid, unsigned flags)
{
	struct debuginfo *debug = xcalloc(1, sizeof(*debug));

	debuginfo_init(debug, pid, !(flags & MODULES_NO_DEBUGINFOD));
	return load(mm, pid, flags, debug);
}

int modules_changed(const struct module_map *mm)
{
	struct proc_maps maps;
	size_t n = 0;
	int changed = 0;

	if (proc_maps_read(mm->pid, &maps))
		return 0;
	for (size_t i = 0; i < maps.n && !changed; i++) {
		const struct proc_map *m = &maps.maps[i];

		if (m->perms[2] != 'x')
			continue;
		changed = n >= mm->nranges || m->start != mm->ranges[n].start ||
			  m->end != mm->ranges[n].end || strcmp(m->path, mm->ranges[n].name);
		n++;
	}
	proc_maps_release(&maps);
	return changed || n != mm->nranges;
}

int modules_refresh(struct module_map *mm)
{
	struct debuginfo *debug = mm->debug;
	unsigned flags = mm->flags;
	pid_t pid = mm->pid;

	/* The same debug files and server budget: a dlopen is no new capture. */
	mm->debug = NULL;
	modules_release(mm);
	return load(mm, pid, flags, debug);
}

const struct exec_range *modules_find_range(const struct module_map *mm, uint64_t pc)
{
	for (size_t i = 0; i < mm->nranges; i++)
		if (pc >= mm->ranges[i].start && pc < mm->ranges[i].end)
			return &mm->ranges[i];
	return NULL;
}

struct fw_module *modules_find(struct module_map *mm, uint64_t pc)
{
	size_t lo = 0, hi = mm->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pc < mm->mods[mid].start)
			hi = mid;
		else if (pc >= mm->mods[mid].end)
			lo = mid + 1;
		else
			return &mm->mods[mid];
	}
	return NULL;
}

void module_load_cfi(struct fw_module *m)
{
	if (m->cfi_loaded)
		return;
	m->cfi_loaded = 1;
	m->eh_cfi = dwfl_module_eh_cfi(m->dwfl_mod, &m->eh_bias);
	/* .debug_frame may live in a separate debug file: only when needed. */
	if (!m->eh_cfi)
		m->dbg_cfi = dwfl_module_dwarf_cfi(m->dwfl_mod, &m->dbg_bias);
}

/* Is the CFA at pc (absolute) defined on the frame pointer? 1 yes, 0 no, -1 unknown or no frame. */
static int cfa_on_fp(struct fw_module *m, uint64_t pc)
{
	Dwarf_CFI *cfi = m->eh_cfi ? m->eh_cfi : m->dbg_cfi;
	Dwarf_Addr bias = m->eh_cfi ? m->eh_bias : m->dbg_bias;
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	int ret = -1;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame))
		return -1;
	if (!dwarf_frame_cfa(frame, &ops, &nops) && nops == 1) {
		uint8_t op = ops[0].atom;
		if (op == DW_OP_breg0 + arch_reg_fp)
			ret = 1;
		else if (op == DW_OP_breg0 + arch_reg_sp &&
			 (int64_t)ops[0].number == arch_entry_cfa_offset)
			ret = -1;       /* no frame at all: a leaf, neutral (as check's audit) */
		else if (op >= DW_OP_breg0 && op <= DW_OP_breg31)
			ret = 0;
		else if (op == DW_OP_bregx)
			ret = (int)ops[0].number == arch_reg_fp;
	}
	free(frame);
	return ret;
}

/*
 * The verdict of `framewalk check`'s audit (x86-64): CFI rows of every FDE
 * (a shrink-wrapped function sets up rbp only on the path that calls, which
 * a row at one pc can miss), leaf functions without a frame left out.
 * 0, or -1 when the audit cannot say (another architecture, unreadable).
 */
static int audit_fp_verdict(struct fw_module *m)
{
	struct fpa_result *r = xcalloc(1, sizeof(*r));
	int ret = -1;

	if (m->host_path && !fpa_audit_file(m->host_path, m->path, "", r) && r->analysed &&
	    (r->verdict == FPA_YES || r->verdict == FPA_PARTLY || r->verdict == FPA_NO)) {
		m->fp_percent = (int)r->fp_percent;
		m->fp = r->verdict == FPA_YES ? FP_YES : r->verdict == FPA_PARTLY ? FP_PARTLY : FP_NO;
		ret = 0;
	}
	free(r);
	return ret;
}

enum fp_verdict module_fp_verdict(struct fw_module *m)
{
	int nsyms, yes = 0, total = 0, step;

	if (m->fp_checked)
		return m->fp;
	m->fp_checked = 1;
	module_load_cfi(m);
	if (!audit_fp_verdict(m))
		goto out;
	/* Elsewhere: CFI sampled at the middle of up to FP_SAMPLE functions. */
	nsyms = dwfl_module_getsymtab(m->dwfl_mod);
	if (nsyms <= 0) {
		m->fp = FP_UNKNOWN;
		return m->fp;
	}
	step = nsyms > FP_SAMPLE * 4 ? nsyms / (FP_SAMPLE * 4) : 1;
	for (int i = 0; i < nsyms && total < FP_SAMPLE; i += step) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(m->dwfl_mod, i, &sym, &addr, NULL, NULL, NULL);
		int r;

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < FP_MIN_FUNC_SIZE ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		r = cfa_on_fp(m, addr + sym.st_size / 2);
		if (r < 0)
			continue;
		total++;
		yes += r;
	}
	if (!total) {
		m->fp = FP_UNKNOWN;
		return m->fp;
	}
	m->fp_percent = yes * 100 / total;
	m->fp = m->fp_percent >= 90 ? FP_YES : m->fp_percent >= 10 ? FP_PARTLY : FP_NO;
out:
	if (getenv("FRAMEWALK_DEBUG_FP"))
		fprintf(stderr, "framewalk: %s: frame pointers in %d%% of its functions\n",
			m->name, m->fp_percent);
	return m->fp;
}

/*
 * Implementation of elffile.h. Each file gets a libdwfl session of its own
 * with one module reported at the file's own addresses (bias 0), so the
 * same parsed symbols, lines and CFI serve every process that maps the file,
 * whatever address it was loaded at: callers translate with their
 * mapping's bias. libdwfl is handed the Elf we made on the file's bytes
 * through its find_elf callback, so it never opens the file by name (the
 * name may be gone or may now be another file). Neither of libdwfl's
 * standard callbacks is used: both ask debuginfod servers by themselves,
 * unbounded, whenever a file is first needed (mid-capture); the debug file
 * comes from target/debuginfo.h, whose servers are asked once, while the
 * file is loaded, within a budget.
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "elf/addrinfo.h"
#include "elf/cfiguard.h"
#include "elf/cython.h"
#include "elf/debugcopy.h"
#include "elf/funcbounds.h"
#include "elf/elffile.h"
#include "target/mapguard.h"
#include "target/safe_open.h"
#include "util/util.h"

#define FP_SAMPLE 200
#define FP_MIN_FUNC_SIZE 24

struct elf_cache {
	struct elf_info **files;
	size_t n, alloc;
	const struct elf_env *env;
	uint64_t trimmed_ns;        /* elf_cache_trim's last now (0: never) */
	uint64_t lookups_ended;     /* sessions ended by elf_cache_trim */
};

struct elf_cache *elf_cache_new(void)
{
	elf_version(EV_CURRENT);
	return xcalloc(1, sizeof(struct elf_cache));
}

void elf_cache_set_env(struct elf_cache *c, const struct elf_env *env)
{
	c->env = env;
}

const struct elf_env *elf_cache_env(const struct elf_cache *c)
{
	return c ? c->env : NULL;
}

/* The debug-file part of f's environment, or NULL. */
static const struct debuginfo_env *debug_env(const struct elf_info *f)
{
	return f->env ? &f->env->debug : NULL;
}

void elf_cache_free(struct elf_cache *c)
{
	if (!c)
		return;
	free(c->files);
	free(c);
}

size_t elf_cache_files(const struct elf_cache *c)
{
	return c ? c->n : 0;
}

static int has_id(const struct elf_info *f, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < f->nids; i++)
		if (f->ids[i].dev == dev && f->ids[i].ino == ino)
			return 1;
	return 0;
}

static void add_id(struct elf_info *f, uint64_t dev, uint64_t ino)
{
	if (has_id(f, dev, ino))
		return;
	f->ids = xgrow(f->ids, sizeof(*f->ids), f->nids + 1, &f->aids);
	f->ids[f->nids].dev = dev;
	f->ids[f->nids].ino = ino;
	f->nids++;
}

struct elf_info *elf_cache_find(struct elf_cache *c, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < c->n; i++) {
		if (has_id(c->files[i], dev, ino)) {
			c->files[i]->refs++;
			return c->files[i];
		}
	}
	return NULL;
}

static struct elf_info *find_build_id(struct elf_cache *c, const char *build_id)
{
	if (!build_id[0])
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->files[i]->build_id, build_id))
			return c->files[i];
	return NULL;
}

static void lookups_end(struct elf_info *f);

/*
 * The separate debug file libdwfl mapped for a session's module (mod's or
 * look_mod's), guarded against being cut short (target/mapguard.h) from
 * the first time it is seen loaded until the session ends: libdwfl maps it
 * itself, whole. Asked at each hand-out of a module: loaded only where
 * libdwfl loaded it (dwfl_module_info's dwbias stays -1 until then). A dwz
 * alternate file is not guarded (libdw's dwarf_getalt would look for one
 * itself where libdwfl found none).
 */
void elf_info_guard_debug(struct elf_info *f, Dwfl_Module *mod)
{
	int which = mod && mod == f->look_mod;
	Dwarf_Addr dwbias = (Dwarf_Addr)-1, bias;
	Dwarf *dw;
	Elf *debug;
	size_t size = 0;
	char *raw;

	if (!mod || f->debug_looked[which])
		return;
	dwfl_module_info(mod, NULL, NULL, NULL, &dwbias, NULL, NULL, NULL);
	if (dwbias == (Dwarf_Addr)-1)
		return;
	f->debug_looked[which] = 1;     /* not asked again in this session */
	if (!(dw = dwfl_module_getdwarf(mod, &bias)) || !(debug = dwarf_getelf(dw)) ||
	    debug == f->file.elf)
		return;
	raw = elf_rawfile(debug, &size);
	if (!raw || !size || raw == (char *)f->file.image)
		return;
	map_guard(raw, size);
	f->debug_guarded[which] = raw;
}

/* Before the session `which` ends (its mapping with it). */
static void unguard_debug_file(struct elf_info *f, int which)
{
	if (f->debug_guarded[which])
		map_unguard(f->debug_guarded[which]);
	f->debug_guarded[which] = NULL;
	f->debug_looked[which] = 0;
}

static void info_free(struct elf_info *f)
{
	if (f->cfi_cache)
		for (size_t i = 0; i < CFI_CACHE_SLOTS; i++)
			free(f->cfi_cache[i].frame);
	free(f->cfi_cache);
	elf_info_addr_release(f);
	lookups_end(f);
	for (size_t i = 0; i < ARRAY_SIZE(f->kept_debug); i++) {
		if (f->kept_debug[i].fd >= 0)
			close(f->kept_debug[i].fd);
		free(f->kept_debug[i].link);
		free(f->kept_debug[i].name);
	}
	elf_function_bounds_release(f);
	elf_cython_release(f);
	/* libdwfl ends the Elf it was given (and closes a debug file it opened). */
	unguard_debug_file(f, 0);
	if (f->dwfl)
		dwfl_end(f->dwfl);
	/* every descriptor of its copies closed: kept ones above, libdwfl's with its sessions */
	debugcopy_release(f->debug_copy_bytes);
	if (f->elf_given)
		f->file.elf = NULL;
	elf_file_unmap(&f->file);
	free(f->ids);
	free(f->root);
	free(f->host_path);
	free(f->path);
	free(f);
}

void elf_cache_put(struct elf_cache *c, struct elf_info *f)
{
	if (!f || --f->refs > 0)
		return;
	for (size_t i = 0; i < c->n; i++) {
		if (c->files[i] == f) {
			c->files[i] = c->files[--c->n];
			break;
		}
	}
	info_free(f);
}

/* libdwfl's find_elf: the Elf already made on the file's bytes, never a path. */
static int give_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct elf_info *f = *userdata;

	(void)mod;
	(void)modname;
	(void)base;
	if (!f || f->elf_given)
		return -1;
	f->elf_given = 1;
	*elfp = f->file.elf;
	/* libdwfl frees the name (its main file's, as debuginfo.c is handed it). */
	*file_name = strdup(f->host_path);
	return -1;
}

/* Keep a copy of a debug file handed to libdwfl, with the request it answered (room allowing). */
static void keep_debug(struct elf_info *f, int fd, const char *link, GElf_Word crc, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(f->kept_debug); i++) {
		struct elf_kept_debug *k = &f->kept_debug[i];

		if (k->fd >= 0)
			continue;
		k->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (k->fd < 0)
			return;
		k->link = link ? xstrdup(link) : NULL;
		k->crc = crc;
		k->name = name ? xstrdup(name) : NULL;
		return;
	}
}

/*
 * The separate debug info, from target/debuginfo.h (modname is the path the
 * target names the file by, the lookup's start in its root), noting when
 * the file the audit found is there but could not be opened (the open-file
 * limit): names are then missing for a reason the report can give.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct elf_info *f = *userdata;
	struct debuginfo local, *d;
	void *ud;
	int fd;

	if (!f) {
		errno = ENOENT;
		return -1;
	}
	/* found before (the lookups' session, opened again): the same file for the same request */
	for (size_t i = 0; i < ARRAY_SIZE(f->kept_debug); i++) {
		struct elf_kept_debug *k = &f->kept_debug[i];

		if (k->fd >= 0 && k->crc == debuglink_crc && !k->link == !debuglink_file &&
		    (!k->link || !strcmp(k->link, debuglink_file))) {
			fd = fcntl(k->fd, F_DUPFD_CLOEXEC, 0);
			if (fd >= 0 && k->name)
				*debuginfo_file_name = strdup(k->name);
			return fd;
		}
	}
	/* Asked after loading (nothing asked for it then): the local files alone. */
	d = f->debug;
	if (!d) {
		debuginfo_init_root(&local, f->root, debug_env(f));
		d = &local;
	}
	ud = d;
	fd = debuginfo_dwfl_find(mod, &ud, modname, base, file_name, debuglink_file, debuglink_crc,
				 debuginfo_file_name);
	if (d == &local)
		debuginfo_release(&local);
	/* compressed sections decompressed once, into a file (elf/debugcopy.h) */
	if (fd >= 0) {
		uint64_t copied;

		fd = debugcopy_uncompressed(fd, NULL, &copied);
		f->debug_copy_bytes += copied;
	}
	if (fd >= 0)
		keep_debug(f, fd, debuglink_file, debuglink_crc, *debuginfo_file_name);
	if (fd < 0 && f->audit.debug_path[0] && !f->audit.debug_embedded) {
		int probe = safe_open_path(f->audit.debug_path);

		if (probe < 0)
			f->debug_err = probe;
		else
			close(probe);
	}
	return fd;
}

/* The span of the PT_LOAD segments, aligned the way libdwfl aligns the first. */
static int load_span(Elf *elf, uint64_t *low, uint64_t *high)
{
	size_t n;
	int found = 0;

	*low = UINT64_MAX;
	*high = 0;
	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			return -ENOEXEC;
		if (!found) {
			uint64_t align = ph.p_align && !(ph.p_align & (ph.p_align - 1)) ? ph.p_align : 1;

			*low = ph.p_vaddr & ~(align - 1);
			found = 1;
		}
		if (ph.p_vaddr + ph.p_memsz > *high)
			*high = ph.p_vaddr + ph.p_memsz;
	}
	return found && *high > *low ? 0 : -ENOEXEC;
}

/* Is the CFA at a file address on the frame pointer? 1 yes, 0 no, -1 unknown. */
static int cfa_on_fp(struct elf_info *f, uint64_t vaddr)
{
	Dwarf_Frame *frame = elf_info_cfi_frame(f, vaddr);
	Dwarf_Op *ops;
	size_t nops;

	if (!frame || dwarf_frame_cfa(frame, &ops, &nops) || nops != 1)
		return -1;
	if (ops[0].atom == DW_OP_breg0 + arch_reg_fp)
		return 1;
	if (ops[0].atom == DW_OP_breg0 + arch_reg_sp &&
	    (int64_t)ops[0].number == arch_entry_cfa_offset)
		return -1;      /* no frame at all: a leaf, neutral (as the audit) */
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
		return 0;
	if (ops[0].atom == DW_OP_bregx)
		return (int)ops[0].number == arch_reg_fp;
	return -1;
}

/*
 * The unwinder's verdict: the audit's (x86-64: CFI rows of every FDE, leaf
 * functions without a frame left out); elsewhere the CFI sampled at the
 * middle of up to FP_SAMPLE functions.
 */
static void decide_fp(struct elf_info *f)
{
	const struct fpa_result *r = &f->audit;
	int nsyms, yes = 0, total = 0, step;

	if (!f->audit_err && r->analysed &&
	    (r->verdict == FPA_YES || r->verdict == FPA_PARTLY || r->verdict == FPA_NO)) {
		f->fp_percent = (int)r->fp_percent;
		f->fp = r->verdict;
		goto out;
	}
	nsyms = dwfl_module_getsymtab(f->mod);
	f->fp = FPA_UNKNOWN;
	if (nsyms <= 0)
		return;
	step = nsyms > FP_SAMPLE * 4 ? nsyms / (FP_SAMPLE * 4) : 1;
	for (int i = 0; i < nsyms && total < FP_SAMPLE; i += step) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(f->mod, i, &sym, &addr, NULL, NULL, NULL);
		int v;

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < FP_MIN_FUNC_SIZE ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		v = cfa_on_fp(f, addr + sym.st_size / 2);
		if (v < 0)
			continue;
		total++;
		yes += v;
	}
	if (!total)
		return;
	f->fp_percent = yes * 100 / total;
	f->fp = fpa_verdict_of((size_t)yes, (size_t)(total - yes));
out:
	if (f->env && f->env->trace_fp)
		debuginfo_say(debug_env(f), 0, "%s: frame pointers in %d%% of its functions",
			      f->name, f->fp_percent);
}

/*
 * A libdwfl session of the file's own, its one module reported at the
 * file's addresses, f its userdata; find_elf gives the Elf (never a path).
 */
typedef int find_elf_fn(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			char **file_name, Elf **elfp);

static int report_session(struct elf_info *f, Dwfl_Callbacks *cb, find_elf_fn *find_elf,
			  Dwfl **dwfl, Dwfl_Module **mod)
{
	void **userdata;

	cb->find_elf = find_elf;
	cb->find_debuginfo = find_debuginfo;
	cb->section_address = dwfl_offline_section_address;
	*dwfl = dwfl_begin(cb);
	if (!*dwfl)
		return -ENOMEM;
	dwfl_report_begin(*dwfl);
	*mod = dwfl_report_module(*dwfl, f->path, f->span_low, f->span_high);
	if (!*mod || dwfl_report_end(*dwfl, NULL, NULL))
		return -ENOMEM;
	dwfl_module_info(*mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = f;
	return 0;
}

/* Report the file to its own libdwfl session and take the Elf back from it. */
static int open_dwfl(struct elf_info *f)
{
	uint64_t low, high;
	Dwarf_Addr bias;
	GElf_Ehdr eh;
	int ret;

	if (!gelf_getehdr(f->file.elf, &eh))
		return -ENOEXEC;
	f->e_type = eh.e_type;
	ret = load_span(f->file.elf, &low, &high);
	if (ret || elf_file_load_delta(&f->file, &f->load_delta))
		return ret ? ret : -ENOEXEC;
	elf_file_loads(&f->file, &f->loads);
	f->span_low = low;
	f->span_high = high;
	ret = report_session(f, &f->callbacks, give_elf, &f->dwfl, &f->mod);
	if (ret)
		return ret;
	if (dwfl_module_getelf(f->mod, &bias) != f->file.elf || bias != 0)
		return -ENOEXEC;
	return 0;
}

/*
 * Will the file's image stay as it was read? libelf changes a private
 * image in place to convert another byte order, to decompress a section
 * (SHF_COMPRESSED, or GNU's .zdebug_*: its header rewritten), and libdwfl
 * to relocate a relocatable file's sections: with none of them, a second
 * Elf may read the image (the lookups' session) and its pages may be
 * dropped, not paged out (elf_info_give_back). Asked before anything has
 * opened the file's debug info or unwind tables.
 */
static int image_stays_as_read(Elf *elf)
{
	const unsigned char host[2] = { ELFDATA2LSB, ELFDATA2MSB };
	const uint16_t probe = 1;
	const char *ident = elf_getident(elf, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;

	if (!ident || (unsigned char)ident[EI_DATA] != host[*(const uint8_t *)&probe ? 0 : 1] ||
	    !gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || (shdr.sh_flags & SHF_COMPRESSED))
			return 0;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name || !strncmp(name, ".zdebug", 7))
			return 0;
	}
	return 1;
}

static struct elf_info *load(int fd, const char *path, const char *host_path, const char *root,
			     int *err)
{
	struct elf_info *f = xcalloc(1, sizeof(*f));
	const char *slash;

	f->refs = 1;
	for (size_t i = 0; i < ARRAY_SIZE(f->kept_debug); i++)
		f->kept_debug[i].fd = -1;
	f->path = xstrdup(path);
	slash = strrchr(f->path, '/');
	f->name = slash ? slash + 1 : f->path;
	f->host_path = xstrdup(host_path);
	f->root = xstrdup(root);
	*err = elf_file_map(&f->file, fd);
	if (*err)
		goto fail;
	f->image_fixed = image_stays_as_read(f->file.elf);
	/* The first 20 bytes: enough to tell files apart (and a debug file's name). */
	elf_file_build_id(&f->file, f->build_id, sizeof(f->build_id), 20);
	return f;
fail:
	info_free(f);
	return NULL;
}

/* Debug files from debuginfod servers, before anything asks libdwfl for one. */
static void prefetch(struct elf_info *f, struct debuginfo *debug)
{
	const void *id;
	ssize_t len = elf_file_build_id_bits(&f->file, &id);

	if (len > 0)
		debuginfo_prefetch(debug, f->path, f->file.elf, id, (size_t)len);
}

/*
 * Everything the unwinder will want before a thread is first stopped:
 * loading unwind tables and the audit during a stop held it for 100s of ms.
 */
static int prepare(struct elf_info *f, struct debuginfo *debug, unsigned flags)
{
	int ret = open_dwfl(f);

	if (ret)
		return ret;
	f->debug = debug;
	if (debug)
		prefetch(f, debug);
	f->audit_err = fpa_audit_elf(f->file.elf, f->path, f->root, debug_env(f), &f->audit);
	elf_info_load_cfi(f);
	decide_fp(f);
	f->debug = NULL;
	if (flags & ELF_LOAD_SYMBOLS)
		elf_info_load_symbols(f, debug);
	return 0;
}

struct elf_info *elf_cache_add_fd(struct elf_cache *c, int fd, uint64_t dev, uint64_t ino,
				  const char *path, const char *host_path, const char *root,
				  struct debuginfo *debug, unsigned flags, int *loaded)
{
	struct elf_info *f, *same;
	int err;

	*loaded = 0;
	f = load(fd, path, host_path, root ? root : "", &err);
	if (!f) {
		errno = -err;
		return NULL;
	}
	f->env = c->env;
	/* Another copy of a file already known (a copied interpreter, another container). */
	same = find_build_id(c, f->build_id);
	if (same) {
		info_free(f);
		add_id(same, dev, ino);
		same->refs++;
		if (flags & ELF_LOAD_SYMBOLS)
			elf_info_load_symbols(same, debug);
		return same;
	}
	err = prepare(f, debug, flags);
	if (err) {
		info_free(f);
		errno = -err;
		return NULL;
	}
	add_id(f, dev, ino);
	c->files = xgrow(c->files, sizeof(*c->files), c->n + 1, &c->alloc);
	c->files[c->n++] = f;
	*loaded = 1;
	return f;
}

struct elf_info *elf_cache_open_path(struct elf_cache *c, const char *host_path,
				     const char *name, const char *root, int *loaded)
{
	struct elf_info *f;
	struct stat st;
	int fd;

	*loaded = 0;
	fd = safe_open_path(host_path);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (fstat(fd, &st)) {
		int err = errno;

		close(fd);
		errno = err;
		return NULL;
	}
	f = elf_cache_find(c, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (f) {
		close(fd);
		return f;
	}
	return elf_cache_add_fd(c, fd, (uint64_t)st.st_dev, (uint64_t)st.st_ino, name, host_path,
				root, NULL, 0, loaded);
}

/* The file's executable sections named .plt* or .iplt, .plt's header left out. */
static void find_plt(struct elf_info *f)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	f->nplt = 0;
	if (!f->file.elf || elf_getshdrstrndx(f->file.elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(f->file.elf, scn)) && f->nplt < ELF_PLT_RANGES) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR) ||
		    shdr.sh_type != SHT_PROGBITS || !shdr.sh_size ||
		    shdr.sh_addr + shdr.sh_size < shdr.sh_addr)
			continue;
		name = elf_strptr(f->file.elf, shstrndx, shdr.sh_name);
		if (!name || (strncmp(name, ".plt", 4) && strcmp(name, ".iplt")))
			continue;
		if (!strcmp(name, ".plt")) {
			if (shdr.sh_size <= arch_plt_header_size)
				continue;
			shdr.sh_addr += arch_plt_header_size;
			shdr.sh_size -= arch_plt_header_size;
		}
		f->plt[f->nplt++] = (struct elf_range){ shdr.sh_addr, shdr.sh_addr + shdr.sh_size };
	}
}

int elf_info_in_plt(struct elf_info *f, uint64_t vaddr)
{
	elf_info_load_cfi(f);
	for (int i = 0; i < f->nplt; i++)
		if (vaddr >= f->plt[i].start && vaddr < f->plt[i].end)
			return 1;
	return 0;
}

/* Does this Elf lie on f's own image (private, writable: cfiguard.h's condition)? */
static int on_own_image(const struct elf_info *f, Elf *elf)
{
	size_t size;

	return elf && elf_rawfile(elf, &size) == f->file.image && size == f->file.size;
}

void elf_info_load_cfi(struct elf_info *f)
{
	Dwarf_Addr bias;
	Elf *elf;
	Dwarf *dw;

	if (f->cfi_loaded)
		return;
	f->cfi_loaded = 1;
	find_plt(f);
	/*
	 * The tables are the target's: libdw runs them only when cfiguard.h lets
	 * it, and only from f's own image, whose checked pages stay ours (a
	 * separate debug file is libdwfl's read-only mapping of a file the
	 * target's root holds: its .debug_frame is not used).
	 */
	if (f->file.unpinned)
		return;                 /* its section headers could change under libdw */
	elf = dwfl_module_getelf(f->mod, &bias);
	if (on_own_image(f, elf) && !cfi_guard_eh_frame(elf, &f->cfi_span)) {
		f->eh_cfi = dwfl_module_eh_cfi(f->mod, &f->eh_bias);
	}
	/* .debug_frame may live in a separate debug file: only when needed. */
	if (!f->eh_cfi && (dw = dwfl_module_getdwarf(f->mod, &bias))) {
		elf_info_guard_debug(f, f->mod);
		if (on_own_image(f, dwarf_getelf(dw)) && !cfi_guard_debug_frame(dw, &f->cfi_span))
			f->dbg_cfi = dwfl_module_dwarf_cfi(f->mod, &f->dbg_bias);
	}
}

Dwarf_Frame *elf_info_cfi_frame(struct elf_info *f, uint64_t vaddr)
{
	struct cfi_cache_slot *slot;
	Dwarf_Frame *frame = NULL;

	if (!f->cfi_cache)
		f->cfi_cache = xcalloc(CFI_CACHE_SLOTS, sizeof(*f->cfi_cache));
	slot = &f->cfi_cache[(vaddr ^ (vaddr >> 9)) % CFI_CACHE_SLOTS];
	if (slot->vaddr == vaddr && vaddr)
		return slot->frame;
	elf_info_load_cfi(f);
	for (int which = 0; which < 2 && !frame; which++) {
		Dwarf_CFI *cfi = which ? f->dbg_cfi : f->eh_cfi;
		Dwarf_Addr bias = which ? f->dbg_bias : f->eh_bias;

		if (cfi && dwarf_cfi_addrframe(cfi, vaddr - bias, &frame))
			frame = NULL;
	}
	free(slot->frame);
	slot->vaddr = vaddr;
	slot->frame = frame;
	return frame;
}

/* ---- the debug info's lookups, in a session that can end ---------------- */

/* The lookups' find_elf: another Elf on the file's image (nothing changes it: image_fixed). */
static int give_lookup_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct elf_info *f = *userdata;

	(void)mod;
	(void)modname;
	(void)base;
	if (!f)
		return -1;
	*elfp = elf_memory(f->file.image, f->file.size);
	if (*elfp)
		*file_name = strdup(f->host_path);
	return -1;
}

static int lookups_open(struct elf_info *f)
{
	Dwarf_Addr bias;
	int ret = report_session(f, &f->look_callbacks, give_lookup_elf, &f->look_dwfl,
				 &f->look_mod);

	if (ret)
		return ret;
	if (!dwfl_module_getelf(f->look_mod, &bias) || bias != 0)
		return -ENOEXEC;
	return 0;
}

static void lookups_end(struct elf_info *f)
{
	unguard_debug_file(f, 1);
	if (f->look_dwfl)
		dwfl_end(f->look_dwfl);
	f->look_dwfl = NULL;
	f->look_mod = NULL;
}

static uint64_t first_idle(const struct elf_info *f)
{
	return f->env && f->env->lookup_idle_ns ? f->env->lookup_idle_ns : ELF_LOOKUP_IDLE_NS;
}

/*
 * libdw's table of address ranges by unit (dwarf_getaranges, which the
 * session's first lookup by address makes) reads every unit's header: a
 * page of each across the whole .debug_info, 5.7 MB of libc6-dbg's, which
 * stayed in our RSS while the session lasted. The table is made here, at
 * the session's start, and those pages given back at once (as at its end,
 * elf_info_give_back): the lookups after it touch the units they ask for.
 */
static void units_table_then_give_back(struct elf_info *f)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(f->look_mod, &bias);
	Dwarf_Aranges *ranges;
	size_t n;

	if (dw && !dwarf_getaranges(dw, &ranges, &n))
		elf_info_give_back(f, 0);
}

Dwfl_Module *elf_info_lookup_module(struct elf_info *f)
{
	int opened = 0;

	f->look_uses++;
	if (!f->image_fixed || f->look_failed) {
		elf_info_guard_debug(f, f->mod);
		return f->mod;
	}
	if (f->look_none)
		return NULL;
	if (!f->look_mod) {
		int err = lookups_open(f);
		Dwarf_Addr bias;

		if (err || !dwfl_module_getdwarf(f->look_mod, &bias)) {
			lookups_end(f);
			/*
			 * The file has no debug info to look in (found at the first
			 * open): not looked for again. A session that could not be
			 * made, or found none where it did before (out of
			 * descriptors, memory): the main session serves from now on.
			 */
			if (err || f->look_opens)
				f->look_failed = 1;
			else
				f->look_none = 1;
			return f->look_failed ? f->mod : NULL;
		}
		/* opened again after it was ended: wait longer before ending it next time */
		f->look_idle_ns = look_again_after(f->look_idle_ns, 1, first_idle(f),
						   ELF_LOOKUP_IDLE_MAX_NS);
		f->look_opens++;
		opened = 1;
	}
	elf_info_guard_debug(f, f->look_mod);
	/* after the guard: the table reads the debug file's every unit (mapguard.h) */
	if (opened)
		units_table_then_give_back(f);
	return f->look_mod;
}

/*
 * Drop f's image but the pages pinned (elf/elfread.h: pin_private): the
 * headers sections are chosen by and the unwind tables cfiguard.h checked,
 * private copies now; dropped, they would come back from the file, which the
 * target's owner may have rewritten. Those are paged out instead.
 */
static void drop_but_pinned(struct elf_info *f, int pinned_too)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t base = (uintptr_t)f->file.image, end = base + f->file.size, at = base;
	struct elf_span kept[ELF_KEPT_MAX + 1];
	int n = 0;

	for (int i = 0; i < f->file.nkept; i++)
		kept[n++] = f->file.kept[i];
	if (f->cfi_span.lo)
		kept[n++] = f->cfi_span;
	/* by start (a handful: insertion) */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && (uintptr_t)kept[j].lo < (uintptr_t)kept[j - 1].lo; j--) {
			struct elf_span t = kept[j];

			kept[j] = kept[j - 1];
			kept[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		uintptr_t lo = (uintptr_t)kept[i].lo & ~(page - 1);
		uintptr_t hi = ((uintptr_t)kept[i].hi + page - 1) & ~(page - 1);

		if ((uintptr_t)kept[i].lo < base || (uintptr_t)kept[i].hi > end || hi <= at)
			continue;               /* outside the image, or within the last */
		if (lo < at)
			lo = at;
		if (lo > at)
			madvise((void *)at, lo - at, MADV_DONTNEED);
		if (pinned_too)
			madvise((void *)lo, hi - lo, MADV_PAGEOUT);
		at = hi;
	}
	if (at < end)
		madvise((void *)at, end - at, MADV_DONTNEED);
}

void elf_info_give_back(struct elf_info *f, int pinned_too)
{
	Dwarf_Addr bias;
	/* the session holding the debug info (only ever asked once it is open) */
	Dwfl_Module *m = f->image_fixed ? f->look_mod : f->symbols_loaded ? f->mod : NULL;
	Dwarf *dw = m ? dwfl_module_getdwarf(m, &bias) : NULL;
	Elf *debug = dw ? dwarf_getelf(dw) : NULL;
	size_t size = 0;
	char *raw = debug && debug != f->file.elf ? elf_rawfile(debug, &size) : NULL;
	long page = sysconf(_SC_PAGESIZE);

	/*
	 * An image nothing changed holds the file's own pages: dropped, they
	 * leave our RSS at once, those the targets map too (its code) included,
	 * and stay in the page cache; the pinned ones (headers, checked unwind
	 * tables) are paged out. Else all only paged out: MADV_PAGEOUT never
	 * drops data (a page libelf changed stays), and leaves pages another
	 * process maps.
	 */
	if (f->image_fixed)
		drop_but_pinned(f, pinned_too);
	else
		madvise(f->file.image, f->file.size, MADV_PAGEOUT);
	/* a separate debug file libdwfl mapped whole (not one read into memory) */
	if (raw && page > 0 && !((uintptr_t)raw % (uintptr_t)page))
		madvise(raw, size, MADV_PAGEOUT);
}

size_t elf_cache_trim(struct elf_cache *c, uint64_t now)
{
	uint64_t elapsed = c->trimmed_ns && now > c->trimmed_ns ? now - c->trimmed_ns : 0;
	size_t ended = 0;

	c->trimmed_ns = now;
	for (size_t i = 0; i < c->n; i++) {
		struct elf_info *f = c->files[i];

		if (f->look_uses) {
			f->look_uses = 0;
			f->look_quiet_ns = 0;
			f->look_pages_back = 0;
			continue;
		}
		f->look_quiet_ns += elapsed;
		if (!f->look_mod)
			continue;
		if (f->look_quiet_ns < f->look_idle_ns) {
			/*
			 * Quiet since the last trim: the session (libdw's parsed
			 * units, dear to make again) is kept, the file's pages it
			 * read are given back, once (they come back from the page
			 * cache if asked for again): libpython's debug info of a
			 * pyenv build, 5.8 MB of the agent's 30 MB, stayed.
			 */
			if (!f->look_pages_back)
				elf_info_give_back(f, 0);
			f->look_pages_back = 1;
			continue;
		}
		elf_info_addr_forget_units(f);
		lookups_end(f);
		elf_info_give_back(f, 1);
		ended++;
	}
	c->lookups_ended += ended;
	/* what they held, freed inside the heap, returned to the kernel too */
	if (ended)
		malloc_trim(0);
	return ended;
}

void elf_cache_lookup_counts(const struct elf_cache *c, uint64_t *ended, uint64_t *reopened)
{
	*ended = c ? c->lookups_ended : 0;
	*reopened = 0;
	for (size_t i = 0; c && i < c->n; i++)
		*reopened += c->files[i]->look_opens > 1 ? c->files[i]->look_opens - 1 : 0;
}

/*
 * libFuzzer harness for the module layer's per-file loader (src/elf/
 * elffile.h): the input is handed over as a mapped file would be (an fd,
 * here a memfd), loaded, audited and given its own libdwfl session, then
 * asked what the unwinder and the symbolizer ask: CFI rows, symbols
 * (demangled) and function bounds from .eh_frame_hdr at addresses inside
 * and around its segments. A second load of the same
 * bytes must come back from the cache by build-id.
 */
#include <elfutils/libdwfl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/addrinfo.h"
#include "elf/elffile.h"
#include "elf/funcbounds.h"

static int memfd_of(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-elffile", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_cache *c = elf_cache_new();
	struct elf_info *f, *g;
	Dwarf_Addr low, high;
	int loaded;

	f = elf_cache_add_fd(c, memfd_of(data, size), 1, 1, "/fuzz/lib.so", "/fuzz/lib.so", "",
			     NULL, ELF_LOAD_SYMBOLS, &loaded);
	if (f) {
		if (!loaded || f->fp < FPA_UNKNOWN || f->fp > FPA_YES)
			abort();
		dwfl_module_info(f->mod, NULL, &low, &high, NULL, NULL, NULL, NULL);
		for (uint64_t a = low; a < high && a - low < (1u << 20); a += 1 + (a - low) / 3) {
			GElf_Off off;
			GElf_Sym sym;

			elf_info_cfi_frame(f, a);
			elf_info_cfi_frame(f, a);       /* the cached row */
			dwfl_module_addrinfo(f->mod, a, &off, &sym, NULL, NULL, NULL);
			dwfl_module_getsrc(f->mod, a);
			{
				struct elf_addr_info ai;
				struct elf_addr_cost cost = { 0, 0 };
				uint64_t start, end;

				elf_info_addr(f, a, &ai, &cost);
				if (!elf_function_bounds(f, a, &start, &end) && (start > a || a >= end))
					abort();
			}
		}
		elf_info_cfi_frame(f, 0);
		elf_info_cfi_frame(f, UINT64_MAX);
		g = elf_cache_add_fd(c, memfd_of(data, size), 2, 2, "/fuzz/copy.so", "/fuzz/copy.so",
				     "", NULL, ELF_LOAD_SYMBOLS, &loaded);
		if (g && f->build_id[0] && (g != f || loaded))
			abort();
		if (!elf_cache_find(c, 1, 1))
			abort();
		elf_cache_put(c, f);            /* the find's */
		elf_cache_put(c, g);
		elf_cache_put(c, f);
		if (elf_cache_files(c) != 0)
			abort();
	}
	elf_cache_free(c);
	return 0;
}

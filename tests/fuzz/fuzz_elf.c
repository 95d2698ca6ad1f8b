/*
 * libFuzzer harness for the ELF reader (src/elf/elfread.h): the input is
 * written to a memfd and opened by path, as discovery opens a module from a
 * possibly hostile container, then asked every question discovery and
 * `check` ask: sections, symbols, load delta, reads by address, the version
 * string and the build-id.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/elfread.h"

static void query(struct elf_file *ef)
{
	static const char *const sections[] = { ".PyRuntime", ".rodata", ".data", ".symtab", "" };
	static const char *const symbols[] = {
		"_PyRuntime", "Py_Version", "PyCode_Type", "Py_Initialize",
		"_Py_MergeZeroLocalRefcount", "",
	};
	uint8_t buf[4096];
	char str[64];
	uint64_t a, s, delta;

	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		if (elf_file_section(ef, sections[i], &a, &s))
			continue;
		elf_file_read_vaddr(ef, a, buf, s < sizeof(buf) ? (size_t)s : sizeof(buf));
		elf_file_read_vaddr(ef, a + s - 1, buf, 1);
	}
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		if (elf_file_symbol(ef, symbols[i], &a, &s))
			continue;
		elf_file_read_vaddr(ef, a, buf, s < sizeof(buf) ? (size_t)s : sizeof(buf));
		elf_file_read_vaddr(ef, a, buf, 4);
		elf_file_symbol(ef, symbols[i], &a, NULL);
	}
	elf_file_load_delta(ef, &delta);
	elf_file_read_vaddr(ef, 0, buf, 8);
	elf_file_read_vaddr(ef, UINT64_MAX - 3, buf, 8);
	/* as discovery asks: "3.12." and "3." prefixes, buffers big and tiny */
	for (int minor = 8; minor <= 15; minor++) {
		char prefix[16];

		snprintf(prefix, sizeof(prefix), "3.%d.", minor);
		if (!elf_file_find_version_string(ef, prefix, str, sizeof(str)) &&
		    (strlen(str) >= sizeof(str) || strncmp(str, prefix, strlen(prefix))))
			abort();
	}
	elf_file_find_version_string(ef, "3.", str, 5);
	if (!elf_file_build_id(ef, str, sizeof(str), 0) && strlen(str) >= sizeof(str))
		abort();
	elf_file_build_id(ef, str, 3, 0);
	elf_file_build_id(ef, str, sizeof(str), 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *ef;
	char path[64];
	int fd;

	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ef = elf_file_open(path);
	if (ef) {
		query(ef);
		elf_file_close(ef);
	}
	close(fd);
	return 0;
}

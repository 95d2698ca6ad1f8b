/*
 * What an interpreter's ELF file says of the CPython in it, read once per
 * file and shared by discovery (python/discover.c: every process of one
 * interpreter), check of a process (audit/gather.c: the process discovery
 * just read) and the installation audit (audit/install.c): where
 * _PyRuntime and PyCode_Type are, the version, and the build (free-threaded,
 * debug) by its symbols. A running process says its build in its
 * _Py_DebugOffsets block too (3.13+), which discovery reads and which wins.
 */
#ifndef FRAMEWALK_PYTHON_FILEFACTS_H
#define FRAMEWALK_PYTHON_FILEFACTS_H

#include <stdint.h>

#include "elf/elfread.h"

#include "python/version.h"

struct elf_file;

struct py_file_facts {
	int has_runtime;            /* runtime_vaddr and its segments were found */
	uint64_t runtime_vaddr;
	struct elf_loads loads;     /* where the loader puts the file (elf/image.h; n 0: none) */
	int has_code_type;
	uint64_t code_type;         /* PyCode_Type's vaddr */
	int version_ok;             /* py_module_version answered */
	struct py_version version;
	int free_threaded, debug;   /* py_module_build's answer: 1, 0 */
};

/* Is path named as a Python's executable or libpython? */
int py_path_looks_like_python(const char *path);
int py_path_is_libpython(const char *path);

/* The facts of the open file ef (path: its name, which a version may come from). */
void py_file_facts_read(struct elf_file *ef, const char *path, struct py_file_facts *out);

/*
 * The facts of the ELF file open at fd (which it takes), found under path:
 * kept by the file's identity (device, inode, size, modification time: a
 * deleted file's inode may come back as another file) and path, read when
 * not kept. Only a Python's file (its runtime, or its name) is read whole
 * and kept: another file's answer is has_runtime 0 and nothing else
 * (*python 0). 0, or -errno (not an ELF file: -ENOEXEC), *out zeroed and *python 0.
 */
int py_file_facts(int fd, const char *path, struct py_file_facts *out, int *python);

#endif

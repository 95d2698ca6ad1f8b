/*
 * Finding the CPython runtime inside a target process: which module holds
 * _PyRuntime (the executable for static builds, libpython3.X.so for shared
 * ones), where it is loaded, which version it is, and the offsets to read it
 * with (built-in tables for 3.8-3.12, the target's own _Py_DebugOffsets for
 * 3.13+). ELF files are opened through the mappings themselves
 * (target/proc.h: proc_map_open), so a process in a container or chroot
 * resolves to its own files, and one whose executable or libpython was
 * deleted or replaced on disk since it started to the files it runs. Which
 * version a module is and which versions are supported: version.h.
 */
#ifndef FRAMEWALK_PYTHON_DISCOVER_H
#define FRAMEWALK_PYTHON_DISCOVER_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/filefacts.h"
#include "python/offsets.h"
#include "python/version.h"
#include "target/memory.h"
#include "util/strbuf.h"

struct proc_map;
struct proc_maps;

struct py_target {
	pid_t pid;
	char exe[PATH_MAX];             /* the executable, as the target names it */
	char module[PATH_MAX];          /* module holding _PyRuntime, as the target names it */
	int shared;                     /* module is a libpython shared library */
	uint64_t module_dev, module_ino;/* which file that module is */
	uint64_t module_bias;           /* load bias of that module */
	uint64_t runtime_addr;          /* &_PyRuntime in the target */
	uint64_t code_type_addr;        /* &PyCode_Type in the target, 0 if unknown */
	int major, minor, micro;
	char version[32];               /* "3.12.1", or "3.9" when the micro is unknown */
	struct py_file_facts module_facts; /* what module's file says (python/filefacts.h) */
	struct py_offsets offsets;      /* how to read this interpreter */
	/*
	 * pthread_t (a thread state's thread_id) is the thread pointer less
	 * this: glibc's sizeof(struct pthread) where it lies below the thread
	 * pointer (arch_pthread_below_tp: aarch64), from the target's C
	 * library; 0 where it is the thread pointer (x86-64) or unknown.
	 */
	uint64_t pthread_below_tp;
};

/*
 * Discover the runtime of pid. Returns 0, or:
 *   -ESRCH    no such process
 *   -EPERM    not allowed to read it (why says what is missing)
 *   -ENOEXEC  not a CPython process
 *   -ENOTSUP  a CPython this framewalk cannot read (version names it)
 *   -EPROTO   the runtime's own debug offsets are invalid
 *   -EACCES   a module that may hold the runtime cannot be opened without a
 *             privilege framewalk lacks (a deleted or replaced file)
 *   -EMFILE   ... because the open-file limit is reached
 *   -EIO      ... for another reason
 * why receives a one-line reason for the non-zero cases.
 */
int py_discover(pid_t pid, struct target_mem *mem, struct py_target *out, struct strbuf *why);

/*
 * glibc's sizeof(struct pthread) in process pid (maps: its mappings;
 * exe_map: its executable's, which holds it when static, or NULL), which
 * glibc publishes for debuggers (_thread_db_sizeof_pthread): from its C
 * library's file. 0 when not found. py_discover keeps it as
 * pthread_below_tp where the architecture puts the descriptor below the
 * thread pointer.
 */
uint64_t py_glibc_sizeof_pthread(pid_t pid, const struct proc_maps *maps,
				 const struct proc_map *exe_map);

/*
 * py_discover for a caller that only asks "is it Python?" (scans, roots,
 * descendants): its own memory handle, no reason kept. The same returns.
 */
int py_discover_quiet(pid_t pid, struct py_target *out);

/*
 * Where a named section of one of pid's Python modules (the executable, a
 * libpython, an _asyncio extension) is loaded: 3.14+ .AsyncioDebug. 0 or
 * -ENOENT (no module has it, e.g. _asyncio not imported yet), -errno.
 */
int py_find_section(pid_t pid, const char *name, uint64_t *addr, uint64_t *size);

/*
 * The layout that reads a 3.13+ block of len bytes (at least the GIL
 * layout's block_size): both builds publish one block layout, and the
 * block's own free_threaded byte says which headers give the values it
 * does not carry. NULL: no layout for that minor version and build.
 */
const struct py_debug_offsets_layout *py_debug_layout_of_block(int minor, const uint8_t *block,
							       size_t len);

/*
 * Do two discoveries of one process find the same Python program? An exec
 * (even of the same executable) gives a new runtime, or another module.
 */
static inline int py_target_same_program(const struct py_target *a, const struct py_target *b)
{
	return a->runtime_addr == b->runtime_addr && a->module_ino == b->module_ino;
}

/* Fill py_offsets from a 3.13+ _Py_DebugOffsets block (debug_offsets.c). 0 or -EPROTO. */
int py_offsets_from_debug(const struct py_debug_offsets_layout *layout,
			  const uint8_t *block, size_t len, struct py_offsets *out);

#endif

/*
 * Python's own names for a process's threads (threading.Thread.name), read
 * out of process on every supported version 3.8-3.15.
 *
 * Where: sys.modules["threading"]._active, the dict threading keeps of its
 * running threads (ident -> Thread); each Thread's _name (a str) and
 * _native_id (the kernel's thread id, set by the thread itself as it
 * starts) are instance attributes, read through python/objects.h (3.8-3.10
 * instance dicts, 3.11/3.12 managed dicts and split values, 3.13+ inline
 * values). sys.modules is found from the interpreter state
 * (PyInterpreterState.modules, 3.12+ .imports.modules; 3.13+ the offset
 * comes from the target's _Py_DebugOffsets). This path works whatever the
 * main module is and does not depend on frames; it needs the threading
 * module to have been imported (any program starting a Thread has), and a
 * thread started with _thread.start_new_thread has a name only once it
 * called threading.current_thread() (a "Dummy-N" thread).
 *
 * The table is re-read once a second while it changes, and less often
 * while reads find it as it was (each such read doubles the wait, up to
 * PY_THREAD_NAMES_STABLE_NS; any change brings it back to a second); and
 * when a young thread not in it is asked for (at most every 100 ms). An
 * agent's long-lived processes read it every 8 s instead of every second
 * (threading's table is most of what an agent reads of its targets: issue
 * 25). Every read is bounded: at most PY_THREAD_NAMES_MAX threads, names
 * cut at PY_THREAD_NAME_MAX bytes.
 */
#ifndef FRAMEWALK_PYTHON_THREAD_NAMES_H
#define FRAMEWALK_PYTHON_THREAD_NAMES_H

#include <stdint.h>
#include <sys/types.h>

#include "python/objects.h"
#include "util/hashidx.h"

/* above the reader's PY_MAX_THREADS: the threads it reads are the newest,
 * threading._active lists the oldest first */
#define PY_THREAD_NAMES_MAX 16384
#define PY_THREAD_NAME_MAX 256          /* code points of a name kept */
#define PY_THREAD_NAMES_REFRESH_NS 1000000000ull
#define PY_THREAD_NAMES_MISS_NS 100000000ull
#define PY_THREAD_NAMES_STABLE_NS 8000000000ull

struct py_thread_name {
	pid_t tid;
	char *name;                     /* UTF-8, as Python has it */
};

struct py_thread_names {
	struct py_objects *ob;
	struct py_thread_name *names;
	size_t n, alloc;
	struct hidx index;              /* names by tid */
	uint64_t read_ns;               /* when the last read ended (0: never) */
	uint64_t every;                 /* before the next periodic read (0: a second) */
	uint64_t digest;                /* of the last read's table and result */
	int last_error;                 /* of the last read: 0 or -errno */
	uint64_t reads, failures;       /* table reads, and those that failed */
	struct py_kv *items;            /* the table's entries, kept between reads */
	size_t items_alloc;
};

void py_thread_names_init(struct py_thread_names *tn, struct py_objects *ob);
void py_thread_names_release(struct py_thread_names *tn);

/*
 * Python's name of thread tid (valid until the next call), or NULL: not a
 * thread threading knows, or the table cannot be read (tn->last_error). A
 * young thread (just started: threading names it a moment later) that the
 * table lacks has the table read again; another waits for the next
 * periodic read.
 */
const char *py_thread_name(struct py_thread_names *tn, pid_t tid, int young, uint64_t now);

/* Re-read the table now. 0 or -errno (-ENOENT: threading not imported). */
int py_thread_names_read(struct py_thread_names *tn, uint64_t now);

#endif

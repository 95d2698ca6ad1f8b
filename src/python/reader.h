/*
 * Reading a live interpreter's threads and Python call stacks from outside,
 * through a target_mem, with the offsets discovery chose. Everything read is
 * untrusted: pointers are validated (code objects by their type), walks are
 * depth-capped, strings length-capped, and a torn or garbage read makes the
 * call fail with -EFAULT so the sampler counts and drops that sample.
 * Code objects are cached by address with their names, file and line table;
 * the codes of every stack read are confirmed to still be the ones cached
 * (an address freed is soon another code's), in one read per stack.
 */
#ifndef FRAMEWALK_PYTHON_READER_H
#define FRAMEWALK_PYTHON_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "python/discover.h"
#include "target/memory.h"
#include "target/pidns.h"
#include "util/hashidx.h"
#include "util/util.h"

#define PY_MAX_DEPTH 1024       /* frames per stack */
#define PY_MAX_THREADS 4096     /* thread states read per process and tick (reader.c) */
#define PY_COUNT_THREADS_MAX (1u << 20)  /* states counted beyond it, at most */
#define PY_NAME_MAX 1024        /* bytes of a function name kept */
#define PY_FILE_MAX 4096        /* bytes of a file name kept */
#define PY_THREADS_HEAD_NS 5000000ull /* re-read the thread list heads this often */
#define PY_MAX_INTERPS 64       /* interpreters walked (the main one and subinterpreters) */

struct py_code {
	uint64_t addr;
	char *name;                 /* co_qualname (3.11+) or co_name, UTF-8 */
	char *file;                 /* co_filename, UTF-8 */
	int firstlineno;
	uint8_t *table;             /* co_lnotab / co_linetable bytes */
	uint32_t table_len;
	uint32_t line_cache_next;
	int32_t line_cache_key[4];
	int32_t line_cache_val[4];
	uint32_t user_name;         /* free for the consumer (profile string ids) */
	uint32_t user_file;
	/* what the entry was read from, to notice an address reused by another code */
	uint64_t name_ptr, file_ptr, table_ptr;
	int64_t code_units;         /* 3.11+: instructions, for a bounds check; -1 unknown */
	/* free-threaded 3.14+: threads' own copies of the bytecode seen (index -> start) */
	int32_t tlbc_index[4];
	uint64_t tlbc_start[4];
	int internal;               /* the interpreter's shim code, not a user frame */
	int marker;                 /* not code: a label put among the frames (name only),
	                             * e.g. a task of the asyncio view (python/asyncio.h) */
	uint64_t checked_ns;        /* when the fields above were last confirmed */
	uint64_t confirmed_walk;    /* the stack walk that last confirmed it (reader.c) */
};

struct py_frame_info {
	uint64_t addr;              /* the frame in the target */
	int64_t instr;              /* instruction offset, in the version's units */
	const struct py_code *code;
	int line;                   /* 0 when unknown */
	int entry;                  /* outermost frame of its C-level eval call */
	int generator;              /* a generator's or coroutine's own frame */
	uint64_t shim;              /* an address inside the native stack frame of the eval
	                             * call this entry frame began: 3.12+ the C-stack entry
	                             * frame after it; 3.11 the thread's cframe, for the
	                             * innermost call's entry frame only; 0 if none */
};

struct py_thread_info {
	uint64_t tstate;
	uint64_t frame;             /* innermost frame address, 0 when idle */
	uint64_t frame_slot;        /* where that address is stored (tstate or cframe) */
	uint64_t cframe;            /* 3.11/3.12: the innermost eval call's _PyCFrame (on its
	                             * C stack), read with frame; 0 unknown */
	uint64_t pthread_id;
	int32_t tid;                /* native thread id, 0 when unknown */
	int64_t interp_id;          /* its interpreter's id: 0 the main one */
};

struct py_reader_stats {
	uint64_t gen_placed;        /* generator frames copied just after yielding, placed */
	uint64_t placed_live;       /* chains placed under their thread's current callers */
	uint64_t code_by_instr;     /* frames named by their instruction (executable cleared) */
	uint64_t code_misses;       /* code objects read */
	uint64_t code_errors;       /* candidate code objects rejected */
	uint64_t depth_capped;
	uint64_t code_stale;        /* cached code objects found replaced */
	uint64_t tlbc_read;         /* threads' own bytecode copies located (free-threaded) */
	uint64_t threads_capped;    /* thread lists read that held more than PY_MAX_THREADS */
	uint64_t threads_listed_most;  /* ... the most states they held (0: never capped) */
};

/* py_frame_info.instr of a frame whose thread's copy of the bytecode is unreadable: line 0 */
#define PY_INSTR_UNKNOWN (-2)

/* A generator frame and the caller it was last seen running under. */
struct py_gen_link {
	uint64_t frame, code, previous;
	uint64_t caller_code;       /* the caller's code and the instruction it resumed from */
	int64_t caller_instr;
	int votes;                  /* majority vote for caller_instr */
};

struct py_reader {
	struct target_mem *mem;
	const struct py_target *target;
	const struct py_offsets *off;
	uint64_t interp;            /* the main interpreter (id 0), cached */
	/* every interpreter's id and first thread state, newest first, cached briefly */
	struct py_interp_seen {
		uint64_t addr, threads_head;
		int64_t id;
	} interps[PY_MAX_INTERPS];
	size_t ninterps;
	size_t most_interps;        /* the most interpreters seen at once */
	uint64_t threads_head_ns;   /* when interps was read (0: to be read) */
	size_t threads_listed;      /* states in the lists at the last read, the capped included */
	struct hidx states_by_tid;  /* scratch: one state per thread among subinterpreters */
	struct py_code **codes;     /* open-addressing cache by address */
	size_t codes_cap, codes_n;
	uint64_t walks;             /* stacks walked: numbers code confirmations */
	int pthread_tid_off;        /* <= 3.10: offset of the tid in struct pthread */
	struct pidns_tids tids;     /* the target's own thread numbers -> ours */
	struct py_gen_link gen_links[256];
	/*
	 * The vm backend's copies span moments: a chain that cannot go on is
	 * placed under the thread's current callers (reader.c, place_live).
	 */
	int place_live;
	int keep_internal;          /* keep the interpreter's shim frames (--native-all) */
	struct py_reader_stats stats;
};

void py_reader_init(struct py_reader *r, struct target_mem *mem, const struct py_target *t);
void py_reader_release(struct py_reader *r);

/*
 * Every interpreter's thread states (subinterpreters' too, each with its
 * interpreter's id), in list order, one per thread: a thread that entered
 * a subinterpreter (Interpreter.exec) has a state in each, and the one
 * running is the innermost, the newest interpreter's with a frame (the
 * list is newest first). At most PY_MAX_THREADS (or max) states are read:
 * the newest; the rest are only counted (threads_listed, stats) and the
 * read still succeeds, so a process with more threads is sampled up to the
 * cap, never not at all. Returns 0; -EAGAIN when
 * the runtime has no interpreter or thread yet (still starting or already
 * finalizing); -EFAULT on a torn read; -ESRCH/-EPERM from the memory reader.
 */
int py_reader_threads(struct py_reader *r, struct py_thread_info *out, size_t max, size_t *n);

/*
 * The Python stack of one thread, innermost frame first, into frames (at most
 * max). Returns 0; -EFAULT on an invalid read; -EAGAIN when the chain was
 * read while it changed (3.11+: it does not end at an entry frame); -ELOOP
 * when the chain exceeds max frames; -ESRCH/-EPERM from the memory reader.
 */
int py_reader_stack(struct py_reader *r, const struct py_thread_info *t,
		    struct py_frame_info *frames, size_t max, size_t *depth);

/*
 * Who holds the GIL: the holder's thread state (0 when none) and whether it
 * is locked at all. 0 or -errno (-ENOTSUP: no GIL offsets for this version).
 */
int py_reader_gil(struct py_reader *r, uint64_t *holder, int *locked);

/*
 * Where the GIL's holder (a thread state pointer) and locked flag (an int),
 * the collector's running flag (an int) and the head of the thread list (a
 * thread state pointer) live in the target, to be read elsewhere (the BPF
 * program reads them at each sample's instant). 0 or -errno (-EAGAIN: no
 * interpreter yet); an address is 0 when this version has no offsets for it.
 */
int py_reader_state_addrs(struct py_reader *r, uint64_t *gil_holder, uint64_t *gil_locked,
			  uint64_t *gc_collecting, uint64_t *threads_head);

/*
 * How a thread is labelled with its interpreter: " [interp main]" or
 * " [interp N]" (N its id) in a process that has had more than one
 * interpreter, else "" (t NULL: a thread no interpreter lists).
 */
void py_reader_interp_label(const struct py_reader *r, const struct py_thread_info *t,
			    char *buf, size_t size);

/* The main interpreter's state (id 0). 0, -EAGAIN (none yet) or -errno of the read. */
int py_reader_main_interp(struct py_reader *r, uint64_t *interp);

/* Is the cyclic garbage collector running? 0 or -errno (-ENOTSUP: unknown). */
int py_reader_gc(struct py_reader *r, int *collecting);

/*
 * One frame at addr, not its callers (a suspended coroutine's, say): its
 * code, instruction and line; entry and shim are 0. 0; -EFAULT when it is
 * no Python frame; -ESRCH/-EPERM from the memory reader.
 */
int py_reader_frame(struct py_reader *r, uint64_t addr, struct py_frame_info *out);

/*
 * A str object as UTF-8 (at most cap code points; compact strings only) into
 * *out (malloc'd). 0, -EFAULT when it is none, or -errno of the read.
 */
int py_reader_str(struct py_reader *r, uint64_t addr, size_t cap, char **out);

/* Re-read the innermost frame of one thread state (after stopping it). */
int py_reader_thread_frame(struct py_reader *r, struct py_thread_info *t);

/*
 * Where the header words that say which code an object is (name, file,
 * line table, first line) lie in a code object: [*start, *start + *len).
 * Each stack's codes are confirmed by re-reading them (a reader that copies
 * frames at a sample's instant copies these words with them).
 */
void py_code_id_span(const struct py_offsets *o, int32_t *start, size_t *len);

/* Look up (or read and cache) the code object at addr. 0 or -EFAULT. */
int py_reader_code(struct py_reader *r, uint64_t addr, struct py_code **out);

/* Source line of a code object at an instruction (in that version's units). */
int py_code_line(struct py_code *c, const struct py_offsets *off, int64_t instr);

/*
 * A str object's head, from its first bytes buf (which must hold the
 * unicode_length and unicode_state fields): its length in characters and
 * PyASCIIObject's state bits (kind 1, 2 or 4 bytes a character; compact:
 * the text follows the head; ascii: compact ASCII, its text at
 * unicode_ascii_data).
 */
struct py_str_head {
	uint64_t len;
	unsigned kind, compact, ascii;
};

static inline struct py_str_head py_str_head(const struct py_offsets *o, const uint8_t *buf)
{
	struct py_str_head h;
	uint32_t state;

	memcpy(&state, buf + o->unicode_state, sizeof(state));
	h.len = load_u64(buf, (size_t)o->unicode_length);
	h.kind = (state >> 2) & 7;
	h.compact = (state >> 5) & 1;
	h.ascii = (state >> 6) & 1;
	return h;
}

/* Compact ASCII: its len bytes of text at unicode_ascii_data. */
static inline int py_str_compact_ascii(const struct py_str_head *h)
{
	return h->kind == 1 && h->compact && h->ascii;
}

#endif

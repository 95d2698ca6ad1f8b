/*
 * Definitions shared by the BPF program (fwprof.bpf.c) and its loader
 * (sampler/bpf.c): the per-target configuration user space writes into a map
 * and the sample records the program writes into the ring buffer. Plain
 * fixed-size types only, so both compilers agree on the layout.
 *
 * A record is variable-sized: the header, then npy Python frame copies
 * (struct fw_py_frame each, py_stride bytes), the kernel's and the user
 * pcs when taken, then stack_bytes of user stack; its length is what the
 * program wrote, so a record holds only what it needs.
 */
#ifndef FRAMEWALK_BPF_FWPROF_H
#define FRAMEWALK_BPF_FWPROF_H

#include <linux/types.h>

#define FW_MAX_PY_FRAMES 128     /* Python frames copied per sample */
#define FW_FRAME_COPY 128        /* bytes copied per frame (>= every frame_size) */
#define FW_CODE_ID_COPY 128      /* bytes of its code object copied with each frame:
				  * the words saying which code it is (py_code_id_span) */
#define FW_STACK_PAGES 8
#define FW_STACK_COPY (FW_STACK_PAGES * 4096)  /* most user stack copied from sp */
#define FW_BELOW_SP 256          /* a trimmed copy starts this far below sp */
#define FW_KSTACK_MAX 64
#define FW_USTACK_MAX 127
#define FW_MAX_THREAD_WALK 512   /* thread states looked at to find one thread's */
#define FW_PY_WINDOW 4096        /* bytes below the current frame read at once (3.11+) */
#define FW_TSTATE_SPAN 512       /* bytes of a thread state read at once */
#define FW_SEEN_CODES 4          /* code objects remembered per sample (a power of two) */
#define FW_INTERP_SPAN 512       /* bytes around the GIL and collector words read at once */

/*
 * Registers in a record, in DWARF order (x86-64 17: rax rdx rcx rbx rsi rdi
 * rbp rsp r8-r15 rip; aarch64 33: x0-x30 sp pc): the architecture's, which
 * meson.build passes to both compilers (-DFW_NREGS, arch_record_nregs).
 */
#ifndef FW_NREGS
#error "FW_NREGS comes from meson.build"
#endif

#define FW_UREGS_WORDS 48        /* >= sizeof(fw_uregs_t) / 8 on every architecture */

/*
 * tstates map value for a thread found with no Python state: the kernel's
 * clock when it was looked for, with this bit (never a pointer: odd). The
 * program looks for it again FW_NOT_PYTHON_RECHECK_NS later (a thread
 * sampled before its Python state named it is found then), so user space
 * need not rewrite the map often (src/sampler/bpf.c, refresh_tstates).
 */
#define FW_NOT_PYTHON 1ULL
#define FW_NOT_PYTHON_RECHECK_NS 1000000000ULL

#define FW_FRAMES_OBJECTS 1      /* <= 3.10 */
#define FW_FRAMES_311 2          /* tstate -> cframe -> current_frame */
#define FW_FRAMES_312 3          /* tstate -> current_frame */

/*
 * Labels from context variables (--label NAME=MODULE:VARIABLE), read at the
 * sample's instant: per variable, its own cache where it belongs to the
 * thread's state and context version (what ContextVar.get() trusts), else a
 * walk of the thread's context's HAMT (Python/hamt.c's hamt_node_find), and
 * the head of the value found (a short str's text lies within it). User
 * space found the variables, learnt the node types, and checks and renders
 * what the program found (sampler/labels.h, python/contextvars.h).
 */
#define FW_LABELS_MAX 4
#define FW_SEEN_CPUS 8192        /* CPUs whose target samples are marked (cpu_seen; a power of two) */
#define FW_LABEL_HEAD 160        /* bytes of the value object copied (= PY_CTXVALUE_READ) */
#define FW_HAMT_LEVELS 8         /* nodes on a lookup path (= PY_HAMT_DEPTH_MAX) */
#define FW_COLLISION_PAIRS 4     /* pairs of a collision node looked at */

struct fw_label_cfg {
	__u32 nvars;                 /* variables read (0: no labels) */
	__u32 cache;                 /* the variables' caches can be used (offsets below) */
	__s32 tstate_context, tstate_context_ver, tstate_id;
	__s32 cache_start;           /* a variable's cache: 32 bytes from here, */
	__u32 cache_value, cache_tsid, cache_tsver;  /* ... these words of them */
	__s32 object_type;
	__s32 context_vars, hamt_root, hamt_count;
	__s32 bitmap_bitmap, bitmap_array, array_array, collision_size, collision_array;
	__u32 pad0;
	/* the HAMT node types (static objects; 0: not learnt yet) */
	__u64 type_bitmap, type_array, type_collision;
	__u64 var[FW_LABELS_MAX];    /* the ContextVar objects (0: not found) */
	__u32 hash[FW_LABELS_MAX];   /* their hashes as the HAMT folds them */
};

#define FW_LAB_VALUE 1           /* value: the object the variable holds */
#define FW_LAB_UNSET 2           /* not set in the thread's context (or it has none) */
#define FW_LAB_NOVAR 3           /* no variable known to the program */
#define FW_LAB_FAULT 4           /* a read failed, or a node was not a node */
#define FW_LAB_TYPE 5            /* a node of a type not learnt yet (node_type): an array
				  * or collision node (the bitmap node's is taken on trust) */

struct fw_label_val {
	__u32 status;                /* FW_LAB_* */
	__u32 cached;                /* FW_LAB_VALUE from the variable's cache, not a walk */
	__u64 value;
	__u64 node_type;             /* FW_LAB_TYPE: the unknown type; else the type taken
				      * for the bitmap node's before it was learnt (0: none) */
	__u32 head_ok;               /* head holds FW_LABEL_HEAD bytes at value */
	__u32 pad0;
	__u8 head[FW_LABEL_HEAD];
};

/* Sent just before the sample record of the same thread and time. */
struct fw_label_rec {
	__u32 kind;                  /* FW_REC_LABELS */
	__u32 pid, tid, nvals;
	__u64 time_ns;
	__u64 ctx_type, hamt_type;   /* the types of the context and its HAMT as read (0: not) */
	struct fw_label_val v[FW_LABELS_MAX];
};

/* Per target process (key: tgid). */
struct fw_target_cfg {
	__u32 frame_model;
	__s32 tstate_frame;          /* offset in the thread state */
	__s32 cframe_current_frame;  /* 3.11/3.12 */
	__s32 frame_previous;
	__u32 frame_size;            /* bytes of a frame to copy (<= FW_FRAME_COPY) */
	/*
	 * With each frame, code_id_len bytes of its code object from
	 * code_id_start: a code freed after the sample may be another by the
	 * time the record is read (0: not copied).
	 */
	__s32 frame_code;            /* the code pointer in the frame */
	__u32 code_id_len;           /* < FW_CODE_ID_COPY, a power of two */
	__s32 code_id_start;
	__u32 pad0;
	__u64 frame_code_mask;       /* clears a tagged reference's tag bits (3.14+) */
	__u32 copy_stack;            /* copy the user stack (a module lacks frame pointers) */
	__u32 native;                /* read native frames at all (else Python only) */
	__u32 kernel;                /* read the kernel stack */
	/*
	 * The frames of 3.11+ lie one above another in the thread's data
	 * stack: read FW_PY_WINDOW bytes ending at the current frame at once
	 * and take each frame found in them from that copy, not a read each
	 * (0: a read per frame), from no lower than the data stack's chunk
	 * holding it (tstate_datastack: its chunk, then its top; -1 unknown).
	 */
	__u32 py_window;
	__s32 tstate_datastack;
	/*
	 * The thread state's words the program uses (its thread id, frame and
	 * data stack) lie within tstate_span_len (<= FW_TSTATE_SPAN) bytes
	 * from tstate_span_start: one read (0: a read each).
	 */
	__s32 tstate_span_start;
	__u32 tstate_span_len;
	__u32 pad1;
	/*
	 * Finding a thread's state the moment it is first seen (user space's
	 * tid -> thread state map is only refreshed now and then): walk the
	 * interpreter's list for the state whose pthread_t is the thread's own
	 * (on x86-64 glibc, its fs base). 0: not yet known.
	 */
	__u64 threads_head_addr;     /* &interp->threads.head */
	__s32 tstate_next;
	__s32 tstate_thread_id;      /* pthread_t */
	/*
	 * pthread_t = the thread pointer less this: 0 on x86-64 (the fs base
	 * is struct pthread), sizeof(struct pthread) on aarch64 (it lies right
	 * below TPIDR_EL0; arch_pthread_below_tp).
	 */
	__u64 pthread_below_tp;
	/* Interpreter state read at the sample's instant (0: unknown). */
	__u64 gil_holder_addr;       /* thread state holding the GIL */
	__u64 gil_locked_addr;       /* int: is it locked */
	__u64 gc_collecting_addr;    /* int: is the collector running */
	/* the words above that lie within interp_span_len (<= FW_INTERP_SPAN) bytes
	 * from interp_span_addr: one read (0: a read each) */
	__u64 interp_span_addr;
	__u32 interp_span_len;
	__u32 pad2;
	struct fw_label_cfg lab;
};

#define FW_REC_SMALL 1           /* no stack copy: user pcs from the kernel's fp walk */
#define FW_REC_FULL 2            /* registers + the top of the user stack */
#define FW_REC_LABELS 3          /* struct fw_label_rec */
#define FW_REC_LIFE 4            /* struct fw_life_rec */

/* What a life record reports (fwprof_exec, fwprof_exit). */
#define FW_LIFE_EXEC 1           /* the target exec'd (any thread: it is the leader now) */
#define FW_LIFE_EXIT 2           /* its main thread is exiting (the process, or pthread_exit) */

/*
 * A target's exec or its main thread's exit, from the scheduler's
 * tracepoints: user space looks at that process then, and at the others
 * only now and then, instead of reading each one's /proc/PID/stat and
 * exe at every refresh.
 */
struct fw_life_rec {
	__u32 kind;                  /* FW_REC_LIFE */
	__u32 pid, tid, what;        /* FW_LIFE_* */
	__u64 time_ns;
};

/* off_cpu records (the task iterator): */
#define FW_OFFCPU_STABLE 1       /* the thread stayed off a CPU across the copy */
#define FW_OFFCPU_MOVED 2        /* it ran meanwhile: the copy may mix two moments */

/*
 * A copied Python frame in a record, hdr.py_stride bytes: this head, then
 * hdr.py_data_len bytes of the frame (its frame_size, whole words, at most
 * FW_FRAME_COPY), then the rest of the stride for the words of its code
 * object (code_id_len of them; junk when code_id_addr is 0).
 */
struct fw_py_frame {
	__u64 addr;
	__u64 code_id_addr;          /* where the code words were copied from; 0: not copied */
};

#define FW_PY_SLOT_MAX (sizeof(struct fw_py_frame) + FW_FRAME_COPY + FW_CODE_ID_COPY)

struct fw_sample_hdr {
	__u32 kind;                  /* FW_REC_* */
	__u32 pid, tid, cpu;
	__u64 time_ns;
	__u64 tstate;                /* 0: no Python thread state known */
	__u64 cframe;                /* FW_FRAMES_311: tstate's cframe at the instant, else 0 */
	__u32 npy;                   /* Python frames copied after the header */
	__u32 py_truncated;          /* the chain went on past FW_MAX_PY_FRAMES */
	__u32 py_stride, py_data_len;   /* struct fw_py_frame */
	__s32 kstack_bytes;          /* bpf_get_stack results (bytes, or -errno) */
	__s32 ustack_bytes;
	__u32 stack_bytes;           /* user stack bytes after the Python frames */
	__u32 user_mode;             /* the sample interrupted user code */
	__u32 off_cpu;               /* 0: a cpu-clock sample; else FW_OFFCPU_* (waiting thread) */
	__s32 syscall_nr;            /* off_cpu: the system call it waits in, -1 none */
	__u64 syscall_arg0;
	__u64 stack_base;            /* address of the first stack byte copied */
	__u64 gil_holder;            /* at the instant (cfg->gil_*_addr) */
	__u32 gil_locked;
	__u32 gc_collecting;
	__u64 switches;              /* off_cpu: its context switches when read */
	__u64 regs[FW_NREGS];
};

/*
 * After the header, as much as a record needs of: npy frames (py_stride
 * bytes each), the kernel's pcs (kstack_bytes when positive), the user pcs
 * of the kernel's frame-pointer walk (ustack_bytes when positive), the user
 * stack (stack_bytes). FW_FRAME_COPY of slack past the most: a frame's copy
 * from the window is whole words up to FW_FRAME_COPY.
 */
#define FW_BODY_MAX (FW_MAX_PY_FRAMES * FW_PY_SLOT_MAX + 8 * (FW_KSTACK_MAX + FW_USTACK_MAX) + \
		     FW_STACK_COPY + FW_FRAME_COPY)

/*
 * The bytes a part of pcs takes in the body after bpf_get_stack's result
 * (bytes, or -errno): as a mask, which the verifier follows (a result is
 * never more than the 8 * FW_USTACK_MAX asked for).
 */
#define FW_PCS_ADVANCE(got) ((got) > 0 ? (__u64)(got) & 0x3f8 : 0)

/* The program's scratch space for one record (one per CPU). */
struct fw_sample_buf {
	struct fw_sample_hdr h;
	__u8 body[FW_BODY_MAX];
	struct fw_label_rec lab;
	/*
	 * Here, not on the BPF stack (512 bytes, shared with the bpf_loop
	 * callbacks: the iterator did not load with them on it, 2026-12-04):
	 * the label walk's words read, and the user registers (fw_uregs_t of
	 * the BPF program's architecture: arm64's struct is 272 bytes).
	 */
	__u64 lab_words[2 * FW_COLLISION_PAIRS];
	__u64 uregs[FW_UREGS_WORDS];
	__u8 interp_span[FW_INTERP_SPAN];   /* cfg->interp_span_len bytes, this sample's */
	__u64 rec_size;                     /* the record's size, while its labels are read */
	__u64 seen_codes[FW_SEEN_CODES];    /* codes whose words this sample copied (a ring) */
	__u64 nseen;
	__u64 tstate_span_at;               /* the thread state read into tstate_span (0: none) */
	__u8 tstate_span[FW_TSTATE_SPAN];   /* cfg->tstate_span_len bytes of it, this sample's */
	/* cfg->py_window's copy (a frame's FW_FRAME_COPY bytes past its end are read from it) */
	__u8 py_window[FW_PY_WINDOW + FW_FRAME_COPY];
};

#define FW_PY_OFFSET sizeof(struct fw_sample_hdr)

#endif

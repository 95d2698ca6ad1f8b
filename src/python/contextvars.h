/*
 * contextvars.ContextVar values read out of a live interpreter as one of its
 * threads sees them: the thread state's current context
 * (PyThreadState.context, a PyContext *, NULL until the thread uses one),
 * the context's variables (ctx_vars, an immutable HAMT as in CPython's
 * Python/hamt.c: bitmap, array and collision nodes) and the variable looked
 * up by identity, with the hash CPython cached in it. The variable is found
 * through sys.modules[MODULE].__dict__[VARIABLE] (python/objects.h), or
 * one attribute of that global's (OpenTelemetry's runtime context holds its
 * variable so: python/otel.h), and checked to be a ContextVar; no Python
 * code runs, nothing is called.
 *
 * Where a variable's own cache of its value (what ContextVar.get() trusts:
 * the value for thread state id tsid at context version tsver; GIL builds
 * only) belongs to the thread's state at that instant, it is used; else the
 * HAMT is walked. Both are what CPython itself would answer.
 *
 * A context object can also be read by itself (py_context_values_in): an
 * asyncio task's own context while the task is suspended, what it sees
 * once resumed. Only its HAMT answers there: a variable's cache is of a
 * thread state and its context version, never of a context object.
 *
 * Everything read is untrusted: every read bounded and checked, node types
 * recognised by their (static, never heap) type objects, a lookup path at
 * most PY_HAMT_DEPTH_MAX nodes, values kept as the target's bytes (a str's
 * UTF-8, escaped by each output) and cut at PY_CTXVALUE_CHARS code points.
 * A value is always given: its text, or one of the placeholders below.
 */
#ifndef FRAMEWALK_PYTHON_CONTEXTVARS_H
#define FRAMEWALK_PYTHON_CONTEXTVARS_H

#include <stddef.h>
#include <stdint.h>

#include "python/objects.h"
#include "util/strbuf.h"

#define PY_CTXVARS_MAX 8          /* variables read per target */
#define PY_CTXVAR_NAME_MAX 40     /* bytes of MODULE or VARIABLE, NUL included (objects.c's keys) */
#define PY_CTXVALUE_CHARS 128     /* code points of a str value kept */
#define PY_CTXVALUE_MAX (4 * PY_CTXVALUE_CHARS + 1)
#define PY_HAMT_DEPTH_MAX 8       /* nodes on a lookup path: 7 levels of 5 hash bits, a collision node */
#define PY_HAMT_COLLISION_MAX 64  /* pairs of a collision node read */

/* The placeholders (docs/LABELS.md): angle brackets, as a type's "<TypeName>". */
#define PY_CTXVALUE_TEXT_UNSET "<unset>"             /* no value in the context, no default */
#define PY_CTXVALUE_TEXT_NO_VARIABLE "<no variable>" /* MODULE:VARIABLE is no ContextVar (yet) */
#define PY_CTXVALUE_TEXT_UNREADABLE "<unreadable>"   /* torn or invalid memory */

enum py_ctxvalue_kind {
	PY_CTXVALUE_STR = 1,      /* a str (or subclass): its text */
	PY_CTXVALUE_INT,          /* an int that fits 64 bits (bool: True/False): decimal */
	PY_CTXVALUE_NONE,         /* None */
	PY_CTXVALUE_OTHER,        /* another type: "<TypeName>" (an int too big: "<int>") */
	PY_CTXVALUE_UNSET,
	PY_CTXVALUE_NO_VARIABLE,
	PY_CTXVALUE_UNREADABLE,
};

struct py_ctxvalue {
	enum py_ctxvalue_kind kind;
	size_t len;                   /* bytes of text, without the NUL */
	char text[PY_CTXVALUE_MAX];   /* NUL-terminated; a str cut at its first NUL */
	uint64_t obj;                 /* the value object rendered (0: a placeholder) */
};

/* out = text (cut to fit) of kind, no object: a placeholder, or text made here. */
void py_ctxvalue_set(struct py_ctxvalue *out, enum py_ctxvalue_kind kind, const char *text);

/* One variable a label reads. */
struct py_ctxvar {
	char module[PY_CTXVAR_NAME_MAX];
	char variable[PY_CTXVAR_NAME_MAX];
	char attr[PY_CTXVAR_NAME_MAX];   /* "": VARIABLE is the ContextVar; else VARIABLE.attr is */
	uint64_t var;                 /* the ContextVar object, 0: not found */
	uint64_t dflt;                /* its default value, 0: none */
	int32_t hash;                 /* its hash as the HAMT folds it */
	uint64_t checked_ns;          /* when var was last looked up (0: never) */
};

struct py_ctxvars_stats {
	uint64_t lookups;             /* values asked for */
	uint64_t cached;              /* ... answered by the variable's own cache */
	uint64_t walked;              /* ... by a walk of the context's HAMT */
	uint64_t unreadable;          /* ... given as PY_CTXVALUE_UNREADABLE */
};

/* Node and object types, each recognised once by its static type object. */
enum py_ctx_type {
	PY_CTX_TYPE_CONTEXT,
	PY_CTX_TYPE_VAR,
	PY_CTX_TYPE_HAMT,
	PY_CTX_TYPE_BITMAP,
	PY_CTX_TYPE_ARRAY,
	PY_CTX_TYPE_COLLISION,
	PY_CTX_TYPE_COUNT,
};

struct py_contextvars {
	struct py_objects *ob;
	const struct py_objects_layout *lo;
	uint64_t types[PY_CTX_TYPE_COUNT];   /* 0: not seen yet */
	struct py_ctxvar vars[PY_CTXVARS_MAX];
	size_t nvars;
	struct py_ctxvars_stats stats;
};

/*
 * Can a target of these offsets be read? 0, or -ENOTSUP with the reason in
 * why (no objects layout for the version, a free-threaded build).
 */
int py_contextvars_supported(const struct py_offsets *o, const char *version, struct strbuf *why);

/* 0, or -ENOTSUP: the version's layout has no contextvars offsets. */
int py_contextvars_init(struct py_contextvars *cv, struct py_objects *ob);
void py_contextvars_release(struct py_contextvars *cv);

/*
 * Read variable MODULE:VARIABLE (attr NULL), or the attribute attr of
 * that global, from now on (all ASCII, shorter than PY_CTXVAR_NAME_MAX; the
 * lookup itself is lazy). Its index, or -EINVAL (a name too long or not
 * ASCII), -E2BIG (PY_CTXVARS_MAX variables already).
 */
int py_contextvars_add(struct py_contextvars *cv, const char *module, const char *variable,
		       const char *attr);

/*
 * The values of variables 0 .. n-1 (indices from py_contextvars_add) as
 * the thread of thread state tstate sees them now: each its text or a
 * placeholder. The thread state and the variables' caches are read in one
 * system call, the values in another; a HAMT is walked only where a
 * variable's cache is not the thread's. A variable is looked up again
 * every second while not found (its module may be imported later), and
 * every ten seconds once found.
 */
void py_context_values(struct py_contextvars *cv, uint64_t tstate, struct py_ctxvalue *out,
		       size_t n);

/*
 * The values of variables 0 .. n-1 in the context object ctx (a PyContext *,
 * e.g. a suspended asyncio task's _context; 0: none, every variable unset
 * or its default), by a walk of its HAMT alone (never a variable's cache:
 * that is a thread's). The context, its HAMT and the nodes on the way are
 * read once for all variables, now, from the target (no tick's copy serves
 * or remembers them); the values in one more system call. A ctx that is no
 * Context gives PY_CTXVALUE_UNREADABLE.
 */
void py_context_values_in(struct py_contextvars *cv, uint64_t ctx, struct py_ctxvalue *out,
			  size_t n);

/* Bytes of a value object read with it: its head, and a short str's text. */
#define PY_CTXVALUE_READ 160

/*
 * What a reader elsewhere found for one variable at a sample's instant (the
 * bpf program: sampler/bpf.c), the way locate() below finds it: from the
 * variable's cache or a walk of the thread's context's HAMT.
 */
struct py_ctx_found {
	int status;               /* 0: value; -ENOENT: not set; -ESRCH: no variable known
				   * to that reader; -EFAULT: unreadable */
	int cached;               /* 0: value found by a walk (the types below checked) */
	uint64_t value;
	const uint8_t *head;      /* PY_CTXVALUE_READ bytes at value, read then; NULL: none */
};

/*
 * The values of variables 0 .. n-1 from found[i], each its text or a
 * placeholder as py_context_values gives them: a value found by a walk
 * counts only if the context and its HAMT, read with it, were of their
 * types (ctx_type, hamt_type: their ob_type then); a value is rendered from
 * its head read then (a str longer than that head holds, a large int: read
 * now); a variable not set gives its default.
 */
void py_context_values_found(struct py_contextvars *cv, uint64_t ctx_type, uint64_t hamt_type,
			     const struct py_ctx_found *found, struct py_ctxvalue *out, size_t n);

/*
 * Variable i for a reader elsewhere: its object (0: not found yet) and hash,
 * looked up again when due (as py_context_values does).
 */
void py_contextvars_var(struct py_contextvars *cv, size_t i, uint64_t *var, int32_t *hash);

/* The HAMT node types learnt so far (0: not yet): bitmap, array, collision. */
void py_contextvars_node_types(const struct py_contextvars *cv, uint64_t out[3]);

/*
 * Learn type (a node's ob_type) if it is a HAMT node type: its kind
 * (PY_CTX_TYPE_BITMAP, _ARRAY, _COLLISION), or -EFAULT (no node type).
 */
int py_contextvars_node_kind(struct py_contextvars *cv, uint64_t type);

/*
 * The HAMT lookup itself: the value of key (by identity) of hash (folded as
 * the HAMT folds it, py_hamt_hash) in the HAMT object hamt. 0; -ENOENT
 * absent; -ELOOP a path longer than PY_HAMT_DEPTH_MAX; -EFAULT not a HAMT
 * or an invalid node; -ESRCH/-EPERM from the memory reader.
 */
int py_hamt_find(struct py_contextvars *cv, uint64_t hamt, int32_t hash, uint64_t key,
		 uint64_t *value);

/* A Python hash folded to 32 bits as Python/hamt.c does (hamt_hash). */
static inline int32_t py_hamt_hash(int64_t hash)
{
	int32_t x = (int32_t)((uint64_t)hash & 0xffffffffu) ^ (int32_t)((uint64_t)hash >> 32);

	return x == -1 ? -2 : x;
}

#endif

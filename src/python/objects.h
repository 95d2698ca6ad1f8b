/*
 * Reading ordinary Python objects out of a live interpreter: type names and
 * flags, str and int values, dicts (combined, split, an instance's managed
 * dict or inline values), instance attributes, sets, lists and tuples, weak
 * references, modules by name from sys.modules. The readers of thread names
 * (python/thread_names.c) and asyncio tasks (python/asyncio.c) are built on it.
 *
 * Every object is untrusted memory: each read is bounded (entry counts,
 * string lengths, chain depths), a value is used only after its type was
 * checked by the caller or here, and a failure is -EFAULT (garbage or torn),
 * -ENOENT (absent), or the memory reader's -ESRCH/-EPERM. Reads are made
 * outside the sampler's per-tick copies (mem_uncached_*): they are not part
 * of any stack.
 *
 * Layouts: struct py_objects_layout of the target's version (generated from
 * each version's headers; 3.13+ from the target's _Py_DebugOffsets where the
 * block has them). Free-threaded builds are not supported (their objects
 * have another header and their dicts a lock): py_objects_init refuses.
 */
#ifndef FRAMEWALK_PYTHON_OBJECTS_H
#define FRAMEWALK_PYTHON_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#include "python/reader.h"

#define PY_OBJ_DICT_MAX 16384      /* entries of a dict, set or sequence read */
#define PY_OBJ_TYPE_NAME 96        /* bytes of tp_name kept */

struct py_type_info {
	uint64_t addr;
	char name[PY_OBJ_TYPE_NAME];   /* tp_name as far as it fits ("" when unreadable) */
	uint64_t flags;
	int64_t basicsize, dictoffset;
	uint64_t base;                 /* tp_base */
	uint64_t cached_keys;          /* heap types: ht_cached_keys */
	uint64_t checked_ns;
};

struct py_key_cache {
	char name[40];                 /* a key this process's readers look up */
	uint64_t addr;                 /* the str object last found holding it */
};

struct py_module_cache {
	char name[48];
	uint64_t module, dict;         /* sys.modules[name] and its __dict__ */
	uint64_t checked_ns;
};

struct py_objects {
	struct py_reader *r;
	const struct py_objects_layout *lo;
	struct py_type_info *types;    /* open addressing by address */
	size_t types_cap, ntypes;
	struct py_key_cache keys[64];
	size_t nkeys;
	struct py_module_cache modules[16];
	size_t nmodules;
	uint64_t none_addr;            /* the None singleton, once seen */
};

struct py_kv {
	uint64_t key, value;
};

/* 0, or -ENOTSUP (no objects layout for this version, or a free-threaded build). */
int py_objects_init(struct py_objects *ob, struct py_reader *r);
void py_objects_release(struct py_objects *ob);

/* The type of obj (cached by the type's address, re-read every second). */
int py_obj_type(struct py_objects *ob, uint64_t obj, const struct py_type_info **out);
/* The type object at type itself (as py_obj_type gives an object's). */
int py_type_at(struct py_objects *ob, uint64_t type, const struct py_type_info **out);
/* Does obj's type, or one of its bases (up to 8), have tp_name name? 1, 0, or -errno. */
int py_obj_isinstance(struct py_objects *ob, uint64_t obj, const char *name);
/* Is obj None? 1, 0, or -errno. */
int py_obj_is_none(struct py_objects *ob, uint64_t obj);

/* A str object as UTF-8 (at most cap code points). -EFAULT when it is no str. */
int py_obj_str(struct py_objects *ob, uint64_t obj, size_t cap, char **out);
/* An int that fits in 64 bits. -EFAULT when it is no int, -ERANGE when too big. */
int py_obj_long(struct py_objects *ob, uint64_t obj, int64_t *v);
/* A non-negative int of at most 128 bits (hi:lo). -ERANGE when negative or wider. */
int py_obj_uint128(struct py_objects *ob, uint64_t obj, uint64_t *hi, uint64_t *lo);

/* d[key] for a str key. 0, -ENOENT when absent, -EFAULT when d is no dict. */
int py_dict_get(struct py_objects *ob, uint64_t dict, const char *key, uint64_t *value);
/* Every (key, value) of a dict, in insertion order; at most max. */
int py_dict_items(struct py_objects *ob, uint64_t dict, struct py_kv *out, size_t max, size_t *n);
/* obj.name from the instance's own attributes (its dict or inline values). */
int py_obj_attr(struct py_objects *ob, uint64_t obj, const char *name, uint64_t *value);

/* The keys of a set or frozenset (at most max; removed keys' dummies skipped). */
int py_set_items(struct py_objects *ob, uint64_t set, uint64_t *out, size_t max, size_t *n);
/* The items of a list or tuple (at most max). */
int py_seq_items(struct py_objects *ob, uint64_t seq, uint64_t *out, size_t max, size_t *n);
/* The object a weak reference points to (0: dead). */
int py_weakref_get(struct py_objects *ob, uint64_t ref, uint64_t *target);
/* A bound method's __self__ (type "method") or a builtin's (type "builtin_function_or_method"). */
int py_method_self(struct py_objects *ob, uint64_t meth, uint64_t *self);
/* The cells' contents of a function's closure (at most max; empty cells are 0). */
int py_function_closure(struct py_objects *ob, uint64_t func, uint64_t *out, size_t max, size_t *n);

/* sys.modules[name] (cached and re-checked every second). -ENOENT: not imported. */
int py_module(struct py_objects *ob, const char *name, uint64_t *module);
/* A module's global: sys.modules[module].__dict__[name]. */
int py_module_attr(struct py_objects *ob, const char *module, const char *name, uint64_t *value);

/* Read one pointer-sized word of target memory (0 or -errno). */
int py_obj_word(struct py_objects *ob, uint64_t addr, uint64_t *v);

#endif

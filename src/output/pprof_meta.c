/*
 * The metadata of a saved pprof profile: one table of the struct
 * profile_meta fields kept as "key: value" comments, how each is written and
 * when, walked by the writer (output/pprof.c) and the reader (input/pprof.c)
 * alike, so the two cannot drift. The keys are part of the file format
 * (docs/FORMATS.md): never rename one.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "output/pprof.h"
#include "util/util.h"

enum meta_kind {
	META_CONST,          /* a fixed value marking the file as framewalk's */
	META_STR,            /* char *, absent when NULL */
	META_PID,            /* pid_t */
	META_RATE,           /* double, written exactly */
	META_U64,            /* uint64_t */
};

enum meta_when {
	WHEN_ALWAYS,
	WHEN_NATIVE,         /* the capture unwound native stacks */
	WHEN_NONZERO,        /* the value is not 0 */
	WHEN_BPF,            /* the bpf backend reported its run time */
	WHEN_MODULES,        /* the module layer loaded or reused a file */
};

#define FIELD(key, kind, field, when) \
	{ key, kind, offsetof(struct profile_meta, field), when }

static const struct meta_field {
	const char *key;
	enum meta_kind kind;
	size_t off;
	enum meta_when when;
} fields[] = {
	{ "framewalk", META_CONST, 0, WHEN_ALWAYS },
	FIELD("target", META_STR, target, WHEN_ALWAYS),
	FIELD("pid", META_PID, pid, WHEN_ALWAYS),
	FIELD("python", META_STR, python_version, WHEN_ALWAYS),
	FIELD("backend", META_STR, backend, WHEN_ALWAYS),
	FIELD("mode", META_STR, mode, WHEN_ALWAYS),
	FIELD("labels", META_STR, labels, WHEN_ALWAYS),
	FIELD("rate_hz", META_RATE, rate_hz, WHEN_ALWAYS),
	FIELD("ticks_requested", META_U64, ticks_requested, WHEN_ALWAYS),
	FIELD("ticks_taken", META_U64, ticks_taken, WHEN_ALWAYS),
	FIELD("samples", META_U64, samples, WHEN_ALWAYS),
	FIELD("errors", META_U64, errors, WHEN_ALWAYS),
	FIELD("sample_ns_total", META_U64, sample_ns_total, WHEN_ALWAYS),
	FIELD("sample_ns_max", META_U64, sample_ns_max, WHEN_ALWAYS),
	FIELD("profiler_cpu_ns", META_U64, profiler_cpu_ns, WHEN_ALWAYS),
	FIELD("py_threads_cap", META_U64, py_threads_cap, WHEN_NONZERO),
	FIELD("py_threads_listed", META_U64, py_threads_listed, WHEN_NONZERO),
	FIELD("native_stacks", META_U64, native_stacks, WHEN_NATIVE),
	FIELD("native_complete", META_U64, native_complete, WHEN_NATIVE),
	FIELD("stops", META_U64, stops, WHEN_NONZERO),
	FIELD("stopped_ns_total", META_U64, stopped_ns_total, WHEN_NONZERO),
	FIELD("stopped_ns_max", META_U64, stopped_ns_max, WHEN_NONZERO),
	FIELD("fp_steps", META_U64, fp_steps, WHEN_NATIVE),
	FIELD("cfi_steps", META_U64, cfi_steps, WHEN_NATIVE),
	FIELD("merge_mismatches", META_U64, merge_mismatches, WHEN_NATIVE),
	FIELD("unwind_breaks", META_STR, unwind_breaks, WHEN_ALWAYS),
	FIELD("lost", META_U64, lost, WHEN_NONZERO),
	FIELD("rephases", META_U64, rephases, WHEN_NONZERO),
	FIELD("clock_restarts", META_U64, clock_restarts, WHEN_NONZERO),
	FIELD("drains", META_U64, drains, WHEN_NONZERO),
	FIELD("moments_waited", META_U64, moments_waited, WHEN_NONZERO),
	FIELD("modules_loaded", META_U64, modules_loaded, WHEN_MODULES),
	FIELD("modules_reused", META_U64, modules_reused, WHEN_MODULES),
	FIELD("modules_refreshes", META_U64, modules_refreshes, WHEN_MODULES),
	FIELD("symbol_lookups", META_U64, symbol_lookups, WHEN_NONZERO),
	FIELD("symbols_resolved", META_U64, symbols_resolved, WHEN_NONZERO),
	FIELD("symbols_evicted", META_U64, symbols_evicted, WHEN_NONZERO),
	FIELD("debug_info_ended", META_U64, debug_info_ended, WHEN_NONZERO),
	FIELD("debug_info_reopened", META_U64, debug_info_reopened, WHEN_NONZERO),
	FIELD("modules_capped", META_U64, modules_capped, WHEN_NONZERO),
	FIELD("symbols_capped", META_U64, symbols_capped, WHEN_NONZERO),
	FIELD("modules_unreadable", META_STR, modules_unreadable, WHEN_ALWAYS),
	FIELD("events", META_STR, events, WHEN_ALWAYS),
	FIELD("label_specs", META_STR, label_specs, WHEN_ALWAYS),
	FIELD("label_reads", META_U64, label_counts.reads, WHEN_NONZERO),
	FIELD("label_ns_total", META_U64, label_counts.ns_total, WHEN_NONZERO),
	FIELD("label_cached", META_U64, label_counts.cached, WHEN_NONZERO),
	FIELD("label_walked", META_U64, label_counts.walked, WHEN_NONZERO),
	FIELD("label_unreadable", META_U64, label_counts.unreadable, WHEN_NONZERO),
	FIELD("label_folded", META_U64, label_counts.folded, WHEN_NONZERO),
	FIELD("label_changed", META_U64, label_counts.changed, WHEN_NONZERO),
	FIELD("bpf_run_ns", META_U64, bpf_run_ns, WHEN_BPF),
	FIELD("bpf_run_cnt", META_U64, bpf_run_cnt, WHEN_BPF),
	FIELD("calls_note", META_STR, calls_note, WHEN_ALWAYS),
	FIELD("calls_window_ns", META_U64, calls_window_ns, WHEN_NONZERO),
};

#define AT(m, f, type) ((type *)((char *)(m) + (f)->off))
#define AT_CONST(m, f, type) ((const type *)((const char *)(m) + (f)->off))

static int wanted(const struct profile_meta *m, const struct meta_field *f)
{
	switch (f->when) {
	case WHEN_NATIVE:
		return m->native_stacks != 0;
	case WHEN_NONZERO:
		return *AT_CONST(m, f, uint64_t) != 0;
	case WHEN_BPF:
		return m->bpf_run_cnt != 0;
	case WHEN_MODULES:
		return m->modules_loaded || m->modules_reused;
	case WHEN_ALWAYS:
	default:
		return 1;
	}
}

void pprof_meta_write(const struct profile_meta *m,
		      void (*add)(void *ctx, const char *key, const char *value), void *ctx)
{
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct meta_field *f = &fields[i];
		char b[64];

		if (!wanted(m, f))
			continue;
		switch (f->kind) {
		case META_CONST:
			add(ctx, f->key, "saved profile");
			break;
		case META_STR:
			if (*AT_CONST(m, f, char *))
				add(ctx, f->key, *AT_CONST(m, f, char *));
			break;
		case META_PID:
			xsnprintf(b, sizeof(b), "%d", (int)*AT_CONST(m, f, pid_t));
			add(ctx, f->key, b);
			break;
		case META_RATE:
			xsnprintf(b, sizeof(b), "%.17g", *AT_CONST(m, f, double));
			add(ctx, f->key, b);
			break;
		case META_U64:
			xsnprintf(b, sizeof(b), "%" PRIu64, *AT_CONST(m, f, uint64_t));
			add(ctx, f->key, b);
			break;
		}
	}
}

void pprof_meta_read(struct profile_meta *m, const char *key, size_t klen, const char *v)
{
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct meta_field *f = &fields[i];
		unsigned long long x;
		char *end;
		double r;
		long pid;

		if (klen != strlen(f->key) || memcmp(key, f->key, klen))
			continue;
		switch (f->kind) {
		case META_CONST:
			break;
		case META_STR:
			free(*AT(m, f, char *));
			*AT(m, f, char *) = xstrdup(v);
			break;
		case META_PID:
			pid = strtol(v, &end, 10);
			if (!*end && pid >= 0 && pid <= INT32_MAX)
				*AT(m, f, pid_t) = (pid_t)pid;
			break;
		case META_RATE:
			r = strtod(v, &end);
			if (!*end && isfinite(r) && r >= 0)
				*AT(m, f, double) = r;
			break;
		case META_U64:
			if (*v < '0' || *v > '9')
				break;
			errno = 0;
			x = strtoull(v, &end, 10);
			if (!*end && !errno)
				*AT(m, f, uint64_t) = x;
			break;
		}
		return;
	}
}

/*
 * The conventions framewalk's pprof files follow, shared by the writer
 * (output/pprof.c) and the reader (input/pprof.c); docs/FORMATS.md describes
 * them for other tools.
 *
 * - Sample types: PPROF_TYPE_SAMPLES/count, then, when the sampling rate is
 *   known, cpu/nanoseconds in cpu mode, else wall/nanoseconds (count x
 *   period; the name is profile_mode_type's); the period type is the same, with
 *   period = 1e9 / rate.
 * - Exact call counts (record --count-calls): one more sample type,
 *   PPROF_TYPE_CALLS/count, last; the default sample type stays the time
 *   (or the samples). One sample per counted code object, its one location
 *   a Python frame at the function's first line, all other values 0, its
 *   entries as the value, its generator resumes as the number label
 *   PPROF_LABEL_RESUMES.
 * - Per-sample labels: thread id and process id (numbers), thread name.
 * - Thread records: first, one sample per thread with all values 0 and no
 *   locations, whose labels add the thread's kernel accounting (CPU and wall
 *   time, GIL ticks). They keep threads that have no samples, and the order
 *   of threads; they weigh nothing in any tool.
 * - Frame kind: by the mapping of the frame's Location. Python frames belong
 *   to the mapping named PPROF_MAPPING_PYTHON, kernel frames to
 *   PPROF_MAPPING_KERNEL, markers to PPROF_MAPPING_OTHER; native frames to
 *   their module's mapping (file name and build id), or PPROF_MAPPING_NATIVE
 *   while the profile does not record the module.
 * - Metadata: "key: value" comments, one row each in pprof_meta.c, read back
 *   when present.
 */
#ifndef FRAMEWALK_OUTPUT_PPROF_H
#define FRAMEWALK_OUTPUT_PPROF_H

#define PPROF_TYPE_SAMPLES "samples"
/* the time's type: profile_mode_type (profile/profile.h), "cpu" or "wall" */
#define PPROF_TYPE_CALLS "calls"   /* --count-calls: exact entries, unit "count" */
#define PPROF_LABEL_RESUMES "resumes" /* ... and resumes, a number on those samples */

#define PPROF_LABEL_THREAD_ID "thread_id"
#define PPROF_LABEL_THREAD_NAME "thread_name"
#define PPROF_LABEL_THREAD_COMM "thread_comm"   /* the kernel's name, when known */
#define PPROF_LABEL_PROCESS_ID "process_id"
/* on thread records only (see above), numbers */
#define PPROF_LABEL_THREAD_CPU_NS "thread_cpu_ns"
#define PPROF_LABEL_THREAD_WALL_NS "thread_wall_ns"
#define PPROF_LABEL_GIL_HELD "gil_held_ticks"
#define PPROF_LABEL_GIL_WAITING "gil_waiting_ticks"
#define PPROF_LABEL_GIL_TICKS "gil_ticks"
#define PPROF_LABEL_DROPPED "dropped_samples"
#define PPROF_LABEL_EXEC "exec_generation"   /* the thread runs after its process's Nth exec */

#define PPROF_MAPPING_PYTHON "[python]"
#define PPROF_MAPPING_NATIVE "[native]"
#define PPROF_MAPPING_KERNEL "[kernel.kallsyms]"
#define PPROF_MAPPING_OTHER "[other]"

/*
 * Metadata comments. Every field of struct profile_meta a saved profile
 * keeps is one row of the table in pprof_meta.c, which both the writer and
 * the reader walk: a new field is one row there.
 */
#include <stddef.h>

#include "profile/profile.h"

/* Each "key: value" comment of m, in the table's order, through add. */
void pprof_meta_write(const struct profile_meta *m,
		      void (*add)(void *ctx, const char *key, const char *value), void *ctx);

/*
 * One comment read back: key (klen bytes) and its value. A known key with a
 * value that parses sets its field; anything else is ignored, so files from
 * other tools and newer framewalks read.
 */
void pprof_meta_read(struct profile_meta *m, const char *key, size_t klen, const char *value);

#endif

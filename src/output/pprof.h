/*
 * The conventions framewalk's pprof files follow, shared by the writer
 * (output/pprof.c) and the reader (input/pprof.c); docs/FORMATS.md describes
 * them for other tools.
 *
 * - Sample types: PPROF_TYPE_SAMPLES/count, then, when the sampling rate is
 *   known, PPROF_TYPE_WALL/nanoseconds (count x period); the period type is
 *   wall/nanoseconds with period = 1e9 / rate.
 * - Per-sample labels: thread id and process id (numbers), thread name.
 * - Frame kind: by the mapping of the frame's Location. Python frames belong
 *   to the mapping named PPROF_MAPPING_PYTHON, kernel frames to
 *   PPROF_MAPPING_KERNEL, markers to PPROF_MAPPING_OTHER; native frames to
 *   their module's mapping (file name and build id), or PPROF_MAPPING_NATIVE
 *   while the profile does not record the module.
 * - Metadata: "key: value" comments (PPROF_COMMENT_*), read back when present.
 */
#ifndef FRAMEWALK_OUTPUT_PPROF_H
#define FRAMEWALK_OUTPUT_PPROF_H

#define PPROF_TYPE_SAMPLES "samples"
#define PPROF_TYPE_WALL "wall"

#define PPROF_LABEL_THREAD_ID "thread_id"
#define PPROF_LABEL_THREAD_NAME "thread_name"
#define PPROF_LABEL_PROCESS_ID "process_id"

#define PPROF_MAPPING_PYTHON "[python]"
#define PPROF_MAPPING_NATIVE "[native]"
#define PPROF_MAPPING_KERNEL "[kernel.kallsyms]"
#define PPROF_MAPPING_OTHER "[other]"

#define PPROF_COMMENT_TARGET "target"
#define PPROF_COMMENT_PID "pid"
#define PPROF_COMMENT_PYTHON "python"
#define PPROF_COMMENT_BACKEND "backend"
#define PPROF_COMMENT_RATE "rate_hz"
#define PPROF_COMMENT_TICKS_REQUESTED "ticks_requested"
#define PPROF_COMMENT_TICKS_TAKEN "ticks_taken"
#define PPROF_COMMENT_SAMPLES "samples"
#define PPROF_COMMENT_ERRORS "errors"
#define PPROF_COMMENT_SAMPLE_NS_TOTAL "sample_ns_total"
#define PPROF_COMMENT_SAMPLE_NS_MAX "sample_ns_max"
#define PPROF_COMMENT_PROFILER_CPU_NS "profiler_cpu_ns"
#define PPROF_COMMENT_NATIVE_STACKS "native_stacks"
#define PPROF_COMMENT_NATIVE_COMPLETE "native_complete"
#define PPROF_COMMENT_STOPPED_NS_TOTAL "stopped_ns_total"
#define PPROF_COMMENT_STOPPED_NS_MAX "stopped_ns_max"
#define PPROF_COMMENT_FP_STEPS "fp_steps"
#define PPROF_COMMENT_CFI_STEPS "cfi_steps"
#define PPROF_COMMENT_MERGE_MISMATCHES "merge_mismatches"
#define PPROF_COMMENT_UNWIND_BREAKS "unwind_breaks"

#endif

/*
 * The conventions framewalk's pprof files follow, shared by the writer
 * (output/pprof.c) and the reader (input/pprof.c); docs/FORMATS.md describes
 * them for other tools.
 *
 * - Sample types: PPROF_TYPE_SAMPLES/count, then, when the sampling rate is
 *   known, PPROF_TYPE_CPU/nanoseconds in cpu mode, else PPROF_TYPE_WALL/
 *   nanoseconds (count x period); the period type is the same, with
 *   period = 1e9 / rate.
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
 * - Metadata: "key: value" comments (PPROF_COMMENT_*), read back when present.
 */
#ifndef FRAMEWALK_OUTPUT_PPROF_H
#define FRAMEWALK_OUTPUT_PPROF_H

#define PPROF_TYPE_SAMPLES "samples"
#define PPROF_TYPE_WALL "wall"
#define PPROF_TYPE_CPU "cpu"       /* mode cpu: only on-CPU threads are sampled */

#define PPROF_LABEL_THREAD_ID "thread_id"
#define PPROF_LABEL_THREAD_NAME "thread_name"
#define PPROF_LABEL_PROCESS_ID "process_id"
/* on thread records only (see above), numbers */
#define PPROF_LABEL_THREAD_CPU_NS "thread_cpu_ns"
#define PPROF_LABEL_THREAD_WALL_NS "thread_wall_ns"
#define PPROF_LABEL_GIL_HELD "gil_held_ticks"
#define PPROF_LABEL_GIL_WAITING "gil_waiting_ticks"
#define PPROF_LABEL_GIL_TICKS "gil_ticks"
#define PPROF_LABEL_DROPPED "dropped_samples"

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
#define PPROF_COMMENT_MODE "mode"
#define PPROF_COMMENT_LOST "lost"
#define PPROF_COMMENT_BPF_RUN_NS "bpf_run_ns"
#define PPROF_COMMENT_BPF_RUN_CNT "bpf_run_cnt"
#define PPROF_COMMENT_MODULES_LOADED "modules_loaded"
#define PPROF_COMMENT_MODULES_REUSED "modules_reused"
#define PPROF_COMMENT_MODULES_REFRESHES "modules_refreshes"
#define PPROF_COMMENT_MODULES_UNREADABLE "modules_unreadable"

#endif

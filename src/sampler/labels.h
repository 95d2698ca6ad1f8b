/*
 * Labels from the target's context (--label NAME=MODULE:VARIABLE, struct
 * label_spec in sampler.h): each sample of a Python thread carries, per
 * label, the value its thread, or the asyncio task it runs, sees in the
 * contextvars.ContextVar MODULE.VARIABLE at the sample's instant
 * (python/contextvars.h), as the profile label (NAME, value). --label
 * trace reads OpenTelemetry's context variable and gives three labels,
 * its current span's trace_id, span_id and span_name (python/otel.h). A backend reads
 * them where it reads the stack (labels_read: vm right after the stack,
 * ptrace while the thread is stopped, the bpf program in the kernel at the
 * sample's instant: labels_found); the sample recorded next for that
 * thread takes them (labels_take). A suspended asyncio task's sample
 * (--async, wall mode: sampler/pyview.c) is no thread's instant: its
 * labels are its own context's (labels_of_context), what the task sees
 * once resumed, never the thread's, which runs another task. The bpf
 * program reads context variables but not OpenTelemetry's span (three
 * objects deep): --label trace takes ptrace or vm (sampler/choose.c).
 *
 * Distinct values per label are capped at LABEL_VALUES_MAX per profile:
 * a value past the cap counts as LABEL_OTHER (meta.label_counts.folded).
 */
#ifndef FRAMEWALK_SAMPLER_LABELS_H
#define FRAMEWALK_SAMPLER_LABELS_H

#include <stdint.h>
#include <sys/types.h>

#include "sampler/sampler.h"
#include "util/strbuf.h"

#define LABEL_VALUES_MAX 1000
#define LABEL_OTHER "<other>"

/*
 * Parse "NAME=MODULE:VARIABLE" or "trace", the argument of option opt
 * (--label, --context-label), (NAME: letters, digits, '_', '-', '.', not
 * one of the labels framewalk gives every sample; MODULE a dotted name,
 * VARIABLE a name, both ASCII). 0, or -EINVAL with the reason in err.
 */
int label_spec_parse(const char *opt, const char *arg, struct label_spec *out, struct strbuf *err);
/* "route=app:route tenant=app:tenant", for the profile's metadata. */
void label_specs_describe(const struct label_spec *l, size_t n, struct strbuf *sb);

struct sampler;
struct labels;

/*
 * The labels of one target (NULL: none asked). A target whose objects
 * cannot be read gets no labels, with why said once.
 */
struct labels *labels_new(struct sampler *s, struct strbuf *why);
void labels_free(struct labels *l);

/* Read the labels of thread tid, of thread state tstate, now: the sample's instant. */
void labels_read(struct sampler *s, pid_t tid, uint64_t tstate);
/*
 * For a reader that does not stop the thread (vm): labels_read_first reads
 * tid's values before its stack; labels_confirm reads them again, from the
 * target (not the tick's copy), once the stack is read. 0 when they are
 * the same: the label set is made then (labels_take gives it); -EAGAIN
 * when they changed in between (a request ended while the stack was read,
 * which is then of either): the sample is dropped and counted
 * (meta.label_counts.changed), and no set is made.
 */
void labels_read_first(struct sampler *s, pid_t tid, uint64_t tstate);
int labels_confirm(struct sampler *s, pid_t tid, uint64_t tstate);
/*
 * The label set (profile_labels) of a suspended asyncio task, from its own
 * context object (its _context; 0: none, so every variable unset), read
 * now; 0: no labels asked. Same names, values and cap as labels_read's.
 */
uint32_t labels_of_context(struct sampler *s, uint64_t context);
/*
 * For the bpf program, which reads the variables itself at the sample's
 * instant (sampler/bpf.c): the target's variables' reader (NULL: no labels),
 * and the label set made from what the program found for thread tid
 * (found[i] for variable i; ctx_type and hamt_type as python/contextvars.h's
 * py_context_values_found takes them), which labels_take gives.
 */
struct py_contextvars *labels_vars(struct sampler *s);
struct py_ctx_found;
void labels_found(struct sampler *s, pid_t tid, uint64_t ctx_type, uint64_t hamt_type,
		  const struct py_ctx_found *found);
/* The label set read for tid (profile_labels), for the sample being recorded; 0: none. */
uint32_t labels_take(struct sampler *s, pid_t tid);
/* s's counts since it became a target (sampler.h): 0, or -ESRCH when it reads no labels. */
int labels_counts(const struct sampler *s, struct label_counts *out);
/* The profile was emptied (session_take_profile): its string ids and the value caps go. */
void labels_profile_reset(struct labels *l);

#endif

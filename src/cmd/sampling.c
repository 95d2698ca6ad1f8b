/*
 * The option callbacks (util/options.h) of the commands that sample (record
 * and top): rate, duration, backend and mode, each with the one error
 * message its bad value gets; and the check, before sampling, that a
 * target can give what --async, --mode exception and --label read.
 */
#include "cmd/cmd.h"
#include "python/asyncio.h"
#include "python/contextvars.h"
#include "python/excstate.h"
#include "sampler/labels.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

int cmd_opt_rate(const struct opt *o, const char *arg, struct strbuf *err)
{
	if (parse_rate(arg, o->value)) {
		strbuf_addf(err, "bad rate: '%s' (e.g. 100, 1k, 10khz; 1 Hz to 1 MHz)", arg);
		return -1;
	}
	return 0;
}

int cmd_opt_duration(const struct opt *o, const char *arg, struct strbuf *err)
{
	if (parse_seconds(arg, o->value)) {
		strbuf_addf(err, "bad duration: '%s' (seconds, e.g. 10 or 2.5)", arg);
		return -1;
	}
	return 0;
}

int cmd_opt_backend(const struct opt *o, const char *arg, struct strbuf *err)
{
	if (backend_parse(arg, o->value)) {
		strbuf_addf(err, "unknown backend: '%s' (auto, vm, ptrace or bpf)", arg);
		return -1;
	}
	return 0;
}

int cmd_opt_nonblocking(const struct opt *o, const char *arg, struct strbuf *err)
{
	(void)arg;
	(void)err;
	*(enum backend *)o->value = BACKEND_VM;
	return 0;
}

int cmd_opt_mode(const struct opt *o, const char *arg, struct strbuf *err)
{
	if (sample_mode_parse(arg, o->value)) {
		strbuf_addf(err, "unknown mode: '%s' (cpu, wall, gil or exception)", arg);
		return -1;
	}
	return 0;
}

int cmd_opt_label(const struct opt *o, const char *arg, struct strbuf *err)
{
	struct label_specs *ls = o->value;

	if (ls->n == LABELS_MAX) {
		strbuf_addf(err, "too many --label options (at most %d)", LABELS_MAX);
		return -1;
	}
	if (label_spec_parse(arg, &ls->l[ls->n], err))
		return -1;
	for (size_t i = 0; i < ls->n; i++) {
		if (!strcmp(ls->l[i].name, ls->l[ls->n].name)) {
			strbuf_addf(err, "--label %s given twice", ls->l[i].name);
			return -1;
		}
	}
	ls->n++;
	return 0;
}

int cmd_check_views(const char *verb, const struct py_target *t, const struct sampler_opts *so)
{
	struct strbuf why = STRBUF_INIT;
	int code = FW_EXIT_OK;

	if (so->async_tasks && py_async_supported(t->minor, t->offsets.free_threaded, &why)) {
		fw_error("process %d: %s", (int)t->pid, strbuf_str(&why));
		fw_hint("%s it without --async", verb);
		code = FW_EXIT_UNSUPPORTED;
	} else if (so->mode == MODE_GIL && t->offsets.free_threaded) {
		fw_error("process %d: Python %s is free-threaded: it has no GIL to wait for or hold",
			 (int)t->pid, t->version);
		fw_hint("%s it with --mode cpu or wall", verb);
		code = FW_EXIT_UNSUPPORTED;
	} else if (so->mode == MODE_EXCEPTION && py_exc_supported(&t->offsets, t->version, &why)) {
		fw_error("process %d: %s", (int)t->pid, strbuf_str(&why));
		fw_hint("%s it in another mode (--mode cpu, wall or gil)", verb);
		code = FW_EXIT_UNSUPPORTED;
	} else if (so->labels.n && py_contextvars_supported(&t->offsets, t->version, &why)) {
		fw_error("process %d: %s", (int)t->pid, strbuf_str(&why));
		fw_hint("%s it without --label", verb);
		code = FW_EXIT_UNSUPPORTED;
	}
	strbuf_release(&why);
	return code;
}

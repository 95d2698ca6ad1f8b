/*
 * The option callbacks (util/options.h) of the commands that sample (record
 * and top): rate, duration and backend, each with the one error message
 * its bad value gets.
 */
#include "cmd/cmd.h"
#include "util/options.h"
#include "util/strbuf.h"

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

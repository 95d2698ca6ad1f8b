/*
 * The environment, read here once for the library code below cmd/, which
 * is handed the facts instead of reading them (style.md: library code
 * leaves the environment to cmd/): where debug files come from
 * (DEBUGINFOD_URLS, libdebuginfod's cache, FRAMEWALK_DEBUGINFOD_TIMEOUT)
 * the frame-pointer trace (FRAMEWALK_DEBUG_FP), libbpf's warnings
 * (FRAMEWALK_DEBUG_BPF) and bpf without its task iterator
 * (FRAMEWALK_BPF_NO_ITERATOR, as a kernel that refuses it), how long a file's
 * debug info stays open unused (FRAMEWALK_LOOKUP_IDLE_S). The sampling commands
 * pass it in struct sampler_opts (cmd_sampling_defaults), check to its
 * files (elf_cache_set_env).
 */
#include <limits.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "elf/elffile.h"
#include "sampler/bpf.h"
#include "util/util.h"

/* FRAMEWALK_DEBUGINFOD_TIMEOUT in seconds; 0 (the library's default) when unset or bad. */
static double debuginfod_budget(void)
{
	const char *s = getenv("FRAMEWALK_DEBUGINFOD_TIMEOUT");
	char *end;
	double v;

	if (!s || !*s)
		return 0;
	v = strtod(s, &end);
	if (*end || !(v > 0) || v > 3600)
		return 0;
	return v;
}

/*
 * FRAMEWALK_LOOKUP_IDLE_S: seconds without a lookup before a file's debug
 * info is let go the first time (elf/elffile.h), for tests that cannot
 * wait ELF_LOOKUP_IDLE_NS; 0 (the default) when unset or bad.
 */
static uint64_t lookup_idle(void)
{
	const char *s = getenv("FRAMEWALK_LOOKUP_IDLE_S");
	char *end;
	double v;

	if (!s || !*s)
		return 0;
	v = strtod(s, &end);
	if (*end || !(v > 0) || v > 86400)
		return 0;
	return (uint64_t)(v * 1e9);
}

/* libdebuginfod's cache directory, as the library itself chooses it; 0 or -1. */
static int debuginfod_cache(char *buf, size_t size)
{
	const char *cache = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (cache && *cache)
		return xsnprintf(buf, size, "%s", cache) < 0 ? -1 : 0;
	if (xdg && *xdg)
		return xsnprintf(buf, size, "%s/debuginfod_client", xdg) < 0 ? -1 : 0;
	if (home && *home)
		return xsnprintf(buf, size, "%s/.cache/debuginfod_client", home) < 0 ? -1 : 0;
	return -1;
}

/* The ELF and debug-file layers' words, said as every command says things. */
static void say(int warning, const char *text)
{
	if (warning)
		fw_warning("%s", text);
	else
		fw_note("%s", text);
}

const struct elf_env *cmd_elf_env(void)
{
	static struct elf_env env;
	static char cache[PATH_MAX];
	static int read;

	if (!read) {
		env.debug.urls = getenv("DEBUGINFOD_URLS");
		env.debug.cache_dir = debuginfod_cache(cache, sizeof(cache)) ? NULL : cache;
		env.debug.budget_s = debuginfod_budget();
		env.debug.say = say;
		env.trace_fp = getenv("FRAMEWALK_DEBUG_FP") != NULL;
		env.debug_bpf = getenv("FRAMEWALK_DEBUG_BPF") != NULL;
		env.bpf_no_iterator = getenv("FRAMEWALK_BPF_NO_ITERATOR") != NULL;
		env.lookup_idle_ns = lookup_idle();
		bpf_backend_set_debug(env.debug_bpf);
		read = 1;
	}
	return &env;
}

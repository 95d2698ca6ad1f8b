/*
 * The environment, read here once for the library code below cmd/, which
 * is handed the facts instead of reading them (style.md: library code
 * leaves the environment to cmd/): where debug files come from
 * (DEBUGINFOD_URLS, libdebuginfod's cache, FRAMEWALK_DEBUGINFOD_TIMEOUT)
 * the frame-pointer trace (FRAMEWALK_DEBUG_FP), libbpf's warnings
 * (FRAMEWALK_DEBUG_BPF) and bpf without its task iterator
 * (FRAMEWALK_BPF_NO_ITERATOR, as a kernel that refuses it) or its exec and
 * exit reports (FRAMEWALK_BPF_NO_LIFE), how long a file's
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

/* Seconds in the variable name, above 0 and at most most; 0 when unset or bad. */
static double env_seconds(const char *name, double most)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return 0;
	v = strtod(s, &end);
	if (*end || !(v > 0) || v > most)
		return 0;
	return v;
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
		/* the servers' whole budget (0: the library's default) */
		env.debug.budget_s = env_seconds("FRAMEWALK_DEBUGINFOD_TIMEOUT", 3600);
		env.debug.say = say;
		env.trace_fp = getenv("FRAMEWALK_DEBUG_FP") != NULL;
		env.debug_bpf = getenv("FRAMEWALK_DEBUG_BPF") != NULL;
		env.bpf_no_iterator = getenv("FRAMEWALK_BPF_NO_ITERATOR") != NULL;
		env.bpf_no_life = getenv("FRAMEWALK_BPF_NO_LIFE") != NULL;
		/* a file's debug info let go the first time after (elf/elffile.h; 0: its
		 * default), for tests that cannot wait ELF_LOOKUP_IDLE_NS */
		env.lookup_idle_ns = (uint64_t)(env_seconds("FRAMEWALK_LOOKUP_IDLE_S", 86400) * 1e9);
		bpf_backend_set_debug(env.debug_bpf);
		read = 1;
	}
	return &env;
}

/*
 * framewalk: a sampling profiler for CPython processes. This file is the
 * command table and dispatcher; each command lives in cmd/NAME.c. The
 * dispatcher checks that stdout was written completely before exiting, so
 * `framewalk dump | head` and a full disk are reported, not ignored.
 */
#include <errno.h>
#include <malloc.h>
#include <unistd.h>

#include "arch/arch.h"
#include "cmd/cmd.h"
#include "target/privilege.h"
#include "util/util.h"
#include "version.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "sample a process (or a command) and write a profile" },
	{ "dump", cmd_dump, "print every thread's current Python stack once" },
	{ "top", cmd_top, "live view of a running process's hottest functions" },
	{ "diff", cmd_diff, "compare two saved profiles (table, differential flame graph)" },
	{ "report", cmd_report, "render a saved profile (pprof, collapsed) in any format" },
	{ "check", cmd_check, "can this machine profile? backends, permissions, frame pointers" },
	{ "agent", cmd_agent, "profile the host's Python processes all the time; send to Pyroscope, OTLP" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: framewalk <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'framewalk <command> --help' describes a command; exit codes are listed\n"
		"in framewalk(1) and docs/EXIT-CODES.md.\n");
}

/* FRAMEWALK_VERSION and FRAMEWALK_BUILD come from meson.build, the commit
 * from the generated version.h, the architecture from the arch file linked. */
static void print_version(void)
{
	if (strcmp(FRAMEWALK_COMMIT, "unknown"))
		printf("framewalk %s (commit %s, %s build, %s)\n", FRAMEWALK_VERSION,
		       FRAMEWALK_COMMIT, FRAMEWALK_BUILD, arch_name);
	else
		printf("framewalk %s (commit unknown: built from a source tree without git "
		       "metadata, %s build, %s)\n", FRAMEWALK_VERSION, FRAMEWALK_BUILD, arch_name);
}

static int finish_stdout(int code)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			fw_error("writing to standard output failed: %s", strerror(errno));
		return code ? code : FW_EXIT_OUTPUT;
	}
	return code;
}

int main(int argc, char **argv)
{
	/* a setcap or setuid copy keeps only what profiling uses, before anything is read */
	int err = privilege_drop_unneeded();

	if (err) {
		fw_error("cannot drop the capabilities framewalk does not use: %s", strerror(-err));
		return FW_EXIT_FAILURE;
	}
	/*
	 * Large blocks (a debug file's sections, decompressed) are mappings of
	 * their own, given back to the kernel when freed (elf/elffile.h lets
	 * debug info go). Left alone, glibc raises this threshold to the
	 * largest block freed and serves the next ones from the heap, which
	 * holds on to them: 19 MB of heap in the agent then, 10 MB now.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (argc < 2) {
		usage(stderr);
		return FW_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return finish_stdout(FW_EXIT_OK);
	}
	if (!strcmp(argv[1], "--version")) {
		print_version();
		return finish_stdout(FW_EXIT_OK);
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return finish_stdout(commands[i].fn(argc - 1, argv + 1));
	fw_error("unknown command: '%s'", argv[1]);
	usage(stderr);
	return FW_EXIT_USAGE;
}

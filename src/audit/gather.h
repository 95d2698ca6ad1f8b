/*
 * The facts `framewalk check` reports, gathered in one place: the
 * environment and backends (env.h), and for a process, an installation or
 * given files, the interpreter and every module with its frame-pointer,
 * unwind-table and symbol audit (install.h, sysconfig.h; the audit is the
 * one the unwinder uses, elf/fpaudit.h, run once per file by elf/elffile.h).
 * A process's modules come from the module layer (elf/modules.h): the files
 * it really mapped, also when deleted or replaced on disk since.
 * Gathering decides nothing: failures are kept as facts (an -errno and its
 * reason) for the command to judge (cmd/check.c) and render.
 */
#ifndef FRAMEWALK_AUDIT_GATHER_H
#define FRAMEWALK_AUDIT_GATHER_H

#include <limits.h>
#include <sys/types.h>

#include "audit/env.h"
#include "audit/sysconfig.h"
#include "elf/elffile.h"
#include "elf/fpaudit.h"
#include "util/strbuf.h"

struct audit_module {
	char *name;                     /* as the target or installation names it */
	char *host_path;                /* NULL: not reachable from here */
	const char *role;               /* "interpreter", "library", ... */
	char *needed_by;
	const char *given;              /* a file named on the command line, as named */
	int err;                        /* opening or auditing: 0 or -errno */
	char why[PATH_MAX + 256];       /* why it could not be opened, "" */
	int deleted, replaced;          /* gone or another file at its path since mapped */
	struct fpa_result r;
};

struct audit_interp {
	int present;
	char version[32];
	char module[PATH_MAX];          /* module holding the runtime, as named */
	int shared;
	int free_threaded, debug;       /* -1 unknown */
	struct py_sysconfig sc;
	int sc_err;                     /* 0 or -errno */
	enum sysconfig_fp configured;
	struct strbuf configured_why;
	int mod;                        /* index of its module audit, -1 none */
};

struct audit_facts {
	struct elf_cache *files;        /* every module's file, opened and audited once */
	struct audit_env env;
	struct audit_target target;
	int has_target;
	char comm[64];                  /* the process's name */
	int discover_err;               /* py_discover: 0 or -errno */
	struct strbuf discover_why;
	int install_err;                /* install_open: 0 or -errno */
	struct strbuf install_why;
	struct audit_interp interp;
	struct audit_module *mods;
	size_t nmods, amods;
	int maps_err;                   /* reading /proc/PID/maps: 0 or -errno */
	int modules_truncated;
	struct audit_backend backends[BACKEND_COUNT];   /* by enum backend */
};

/* Probe the environment (before any of the below). */
void audit_facts_init(struct audit_facts *f);
void audit_facts_release(struct audit_facts *f);

/* A running process: its target facts, interpreter and mapped modules. */
void audit_gather_process(struct audit_facts *f, pid_t pid);
/* An installation read from its files (install.h); site as install_modules() takes it. */
void audit_gather_install(struct audit_facts *f, const char *python, const char *root,
			  const char *site);
/* ELF files named on the command line. */
void audit_gather_files(struct audit_facts *f, char *const *files, int n);
/* Which backends can work, for the target when there is one (last). */
void audit_gather_backends(struct audit_facts *f);

/* Basename of a module's name, for tables and messages. */
const char *audit_module_basename(const struct audit_module *m);
/* Does the frame-pointer chain break in m (an analysed module without frame pointers)? */
int audit_module_breaks(const struct audit_module *m);
/* Why it breaks, and whether framewalk gets through it anyway (DWARF). */
void audit_chain_reason(const struct audit_module *m, struct strbuf *sb);

#endif

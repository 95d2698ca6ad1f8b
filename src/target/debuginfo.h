/*
 * Where a module's separate debug information comes from, for libdwfl's
 * find_debuginfo callback. Local files first, all looked up inside the
 * target's root (/proc/PID/root, so a container's own files, with absolute
 * symlinks resolved inside that root):
 *
 *   /usr/lib/debug/.build-id/xx/yyyy.debug            (build-id)
 *   DIR/LINK, DIR/.debug/LINK, /usr/lib/debug/DIR/LINK (.gnu_debuglink)
 *
 * then the host's /usr/lib/debug/.build-id, then libdebuginfod's cache
 * (a file fetched earlier, by framewalk or debuginfod-find), then what
 * debuginfod servers sent this capture (target/debuginfod.h). Servers are
 * asked only in
 * debuginfo_prefetch, before sampling starts, within one time budget for
 * the whole capture; a module's own .symtab, .debug_info or .gnu_debugdata
 * (MiniDebugInfo, which libdwfl decompresses itself) needs no file.
 * A file is used only when its build-id matches (the debuglink CRC when the
 * module has no build-id).
 */
#ifndef FRAMEWALK_TARGET_DEBUGINFO_H
#define FRAMEWALK_TARGET_DEBUGINFO_H

#include <elfutils/libdwfl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The whole server phase of a capture, unless the environment says (budget_s). */
#define DEBUGINFO_BUDGET_S 5.0

#include "util/util.h"

struct dbgd;

/*
 * What the environment says about debug files, read by the command layer
 * (cmd/environ.c), never here. NULL or zeroed: no server, no cache, the
 * default budget.
 */
struct debuginfo_env {
	const char *urls;           /* DEBUGINFOD_URLS; NULL or blank: no server */
	const char *cache_dir;      /* libdebuginfod's cache directory; NULL: none known */
	double budget_s;            /* FRAMEWALK_DEBUGINFOD_TIMEOUT; 0: DEBUGINFO_BUDGET_S */
	/*
	 * What this layer has to say while it works (a file coming from a
	 * server, a server given up; the ELF layer's frame-pointer trace), said
	 * as the command layer says things; NULL: nothing is said (what
	 * happened stays in struct debuginfo: gave_up, asked, fetched).
	 */
	void (*say)(int warning, const char *text);
};

/* Say text through env's say (printf-like; nothing when env or say is NULL). */
void debuginfo_say(const struct debuginfo_env *env, int warning, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

struct debuginfo_hit {
	char build_id[81];          /* lower-case hex */
	char *path;                 /* in libdebuginfod's cache */
};

struct debuginfo {
	const struct debuginfo_env *env; /* never NULL after init */
	char root[64 + 4096];       /* "/proc/PID/root", a sysroot, or "" for the host */
	int root_fd;                /* O_PATH of root, -1 if it cannot be opened */
	int servers;                /* may ask debuginfod servers */
	uint64_t budget_ns, spent_ns;
	int gave_up;                /* a server failed or the budget is spent: ask no more */
	struct dbgd *client;
	struct debuginfo_hit *hits;
	size_t nhits, hits_alloc;
	unsigned asked, fetched;    /* server lookups made, files received */
	/* the lookup in progress */
	const char *cur_name;
	const char *cur_id;
	uint64_t cur_start_ns, cur_deadline_ns;
	int announced;
	const volatile sig_atomic_t *stop; /* set: the lookup in progress gives up */
};

/*
 * allow_servers: 0 for --no-debuginfod. Servers are asked only when env
 * (may be NULL; kept, not copied) names some; otherwise nothing here
 * touches the network.
 */
void debuginfo_init(struct debuginfo *d, pid_t pid, const struct debuginfo_env *env,
		    int allow_servers);
/* The same for files under root ("" the host, a sysroot); no servers. */
void debuginfo_init_root(struct debuginfo *d, const char *root, const struct debuginfo_env *env);
void debuginfo_release(struct debuginfo *d);

/*
 * The local debug file of a module (target_path as the target names it;
 * build-id bid of len bytes, may be 0; .gnu_debuglink name and CRC, link
 * may be NULL): a file descriptor, its path in *path (malloc'd) and in *via
 * "build-id", "debuglink" or "debuginfod cache"; or -1.
 */
int debuginfo_find_local(const struct debuginfo *d, const char *target_path,
			 const unsigned char *bid, size_t len, const char *link, uint32_t crc,
			 char **path, const char **via);

/*
 * Before sampling: a module (target_path as the target names it, elf its
 * main file) with no symbols or debug info of its own and no local debug
 * file is asked of the servers, within what is left of the budget. Prints
 * a progress line on stderr while a file downloads, and one warning when a
 * server cannot be reached or the budget runs out (no server is asked after
 * that).
 */
void debuginfo_prefetch(struct debuginfo *d, const char *target_path, Elf *elf,
			const unsigned char *bid, size_t bid_len);

/*
 * libdwfl's find_debuginfo callback (Dwfl_Callbacks.find_debuginfo); each
 * module's userdata (dwfl_module_info) must point at its struct debuginfo.
 * Also finds dwz's alternate file (.gnu_debugaltlink) by its build-id.
 */
int debuginfo_dwfl_find(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif

/*
 * Readers for the /proc files of a target process: its memory map, threads,
 * thread names and states, command line and children. Everything here parses
 * text another process controls (file names with spaces, newlines or ')' in
 * comm): lengths are capped and malformed lines are skipped, never trusted.
 */
#ifndef FRAMEWALK_TARGET_PROC_H
#define FRAMEWALK_TARGET_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map {
	uint64_t start, end, offset;
	uint64_t dev;      /* device of the mapped file (makedev of maps' major:minor) */
	uint64_t inode;    /* with dev: which file is mapped, whatever its path names now */
	char perms[5];
	int deleted;       /* the file was deleted (or replaced) since it was mapped */
	char *path;        /* as /proc shows it, without the " (deleted)" mark; "" for
			      anonymous; owned */
};

struct proc_maps {
	struct proc_map *maps;
	size_t n, alloc;
};

/* 0 on success, -ESRCH when the process is gone, -errno otherwise. */
int proc_maps_read(pid_t pid, struct proc_maps *out);
void proc_maps_release(struct proc_maps *m);
/* Parse one line of /proc/PID/maps (without its newline). 0 or -EINVAL. */
int proc_maps_parse_line(const char *line, struct proc_map *out);
/*
 * Where the loader put a file, from the maps alone (when its segments are
 * not known; elf/image.h places a file from them): the mapping at file
 * offset 0 of the image an executable mapping belongs to (the nearest one
 * of its file at or below it), or NULL. A file the process maps again as
 * data elsewhere is not it.
 */
const struct proc_map *proc_maps_image_base(const struct proc_maps *m,
					    const struct proc_map *exec_map);
/* The end of that image's last mapping of its file (base as returned above). */
uint64_t proc_maps_image_end(const struct proc_maps *m, const struct proc_map *base);

/* Is there a process pid? 0 yes, -ESRCH no, -EPERM exists but not ours. */
int proc_exists(pid_t pid);

/* Thread ids of pid (sorted); *tids is malloc'd. 0 or -errno. */
int proc_tasks(pid_t pid, pid_t **tids, size_t *n);

/* Thread name (comm), NUL-terminated, control characters kept. 0 or -errno. */
int proc_task_comm(pid_t pid, pid_t tid, char *buf, size_t size);

/* Scheduler state letter of a thread (R, S, D, ...). 0 or -errno. */
int proc_task_state(pid_t pid, pid_t tid, char *state);
/* Parse the text of a /proc/.../stat file for its state letter. */
int proc_stat_parse_state(const char *text, size_t len, char *state);
/* The CPU a thread last ran on, from its /proc stat text (field 39). 0 or -EINVAL. */
int proc_stat_parse_cpu(const char *text, size_t len, int *cpu);
/* Numeric field number `field` (1-based, as proc(5) counts; 3 or more). 0 or -EINVAL. */
int proc_stat_parse_field(const char *text, size_t len, int field, uint64_t *value);
/*
 * When process pid started, in clock ticks after boot (/proc/pid/stat
 * field 22): with the pid, what tells a process from a later one that
 * reuses its pid. 0, -ESRCH (gone) or -errno.
 */
int proc_start_time(pid_t pid, uint64_t *ticks);
/* proc_start_time, and whether pid is a kernel thread (which never runs a program). */
int proc_start_identity(pid_t pid, uint64_t *ticks, int *kernel_thread);

/*
 * What tells one program image of a process from the next: an exec keeps
 * the pid but maps another executable (or the same one again, with a new
 * stack and argument block: exec'ing the same interpreter changes those).
 */
struct proc_program_id {
	uint64_t exe_dev, exe_ino;
	uint64_t stack_start, args_start;  /* 0 when the kernel does not show them */
};
int proc_program_id(pid_t pid, struct proc_program_id *id);
/* Nonzero when a and b are not the same program image. */
int proc_program_changed(const struct proc_program_id *a, const struct proc_program_id *b);

/*
 * A process watched for its exit and its execs at low cost (every ~100 ms
 * per target): its /proc/PID directory and stat file are kept open and the
 * stat file read again in place, so no path is looked up again, one read
 * answers both questions, and a pid reused by another process reads as
 * gone rather than as the other process.
 */
struct proc_watch {
	int dirfd, statfd;          /* -1 when not open */
};
/* 0 or -errno (w is then closed: the callers read by path instead). */
int proc_watch_open(struct proc_watch *w, pid_t pid);
void proc_watch_close(struct proc_watch *w);
/*
 * The main thread's state letter and the program image now. 0; 1 when the
 * state is known but not the image (its executable cannot be looked at:
 * a zombie's, or without ptrace access); -ESRCH gone; -errno.
 */
int proc_watch_read(const struct proc_watch *w, char *state, struct proc_program_id *id);

/* Command line with NULs turned into spaces, capped to size. 0 or -errno. */
int proc_cmdline(pid_t pid, char *buf, size_t size);

/* Path of the target's executable as the target sees it. 0 or -errno. */
int proc_exe(pid_t pid, char *buf, size_t size);

/* Direct children of pid (from every task's children file). 0 or -errno. */
int proc_children(pid_t pid, pid_t **kids, size_t *n);

/*
 * Every descendant of pid down to max_depth generations (children first,
 * then theirs), at most PROC_DESCENDANTS_MAX. 0 or -errno (pid's own
 * children unreadable); *out is NULL when there are none.
 */
#define PROC_DESCENDANTS_MAX 4096
int proc_descendants(pid_t pid, int max_depth, pid_t **out, size_t *n);

/*
 * The host path to reach a file the target names: /proc/PID/root/<path>,
 * which resolves inside the target's mount namespace and chroot.
 */
int proc_root_path(pid_t pid, const char *path, char *buf, size_t size);

/*
 * A host path that reaches the file behind a mapping: /proc/PID/root/<path>
 * (containers: the path is the target's own), else <path> itself for a
 * target in our mount namespace (a chroot seen from outside shows host
 * paths). Either must have the mapping's inode.
 * 0, -ENOENT when neither does, -EPERM when /proc/PID/root is refused. For
 * naming and for finding files beside it (debug info, sysconfig); the file
 * itself is opened with proc_map_open.
 */
int proc_map_host_path(pid_t pid, const struct proc_map *map, char *buf, size_t size);

/* Which way proc_map_open reached a mapped file. */
enum proc_open_via {
	PROC_VIA_MAP_FILES = 1,   /* /proc/PID/map_files/START-END: the mapping itself */
	PROC_VIA_EXE,             /* /proc/PID/exe */
	PROC_VIA_ROOT,            /* /proc/PID/root/<path>, the same inode */
	PROC_VIA_PATH,            /* <path> on the host, the same inode */
};

/* Is pid in our mount namespace? 1 yes, 0 no, -errno when it cannot be told. */
int proc_same_mount_ns(pid_t pid);

/*
 * Open the file behind a mapping read-only, also when it was deleted or
 * replaced on disk since the target mapped it. In order: the mapping itself
 * (/proc/PID/map_files/START-END; opening those needs CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE), /proc/PID/exe when the mapping is of the
 * executable (needs only the access reading the process needs), then the
 * path inside the target's root (resolved in it: target/safe_open.h) and,
 * for a target in our own mount namespace only, on the host, each only when
 * it still names the mapped inode: a path that now names another file is
 * never used. Only regular files are opened, never blocking (a FIFO or a
 * device put at the path is refused).
 * Returns the fd (O_CLOEXEC), or -errno: -EPERM when the file is reachable
 * only through map_files and that was refused, -EMFILE/-ENFILE at the
 * open-file limit, -ENOENT when nothing reaches it. *via may be NULL.
 */
int proc_map_open(pid_t pid, const struct proc_map *map, enum proc_open_via *via);
/*
 * Why proc_map_open's -EPERM: appended to why, "/proc/PID/map_files, which
 * needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE (run framewalk as root, or:
 * GRANT)", the grant the one privilege_grant_fix gives.
 */
struct strbuf;
void proc_map_files_refused(struct strbuf *why, pid_t pid);

/*
 * Is the mapped file still on disk under its name? 1 yes; 0 no: it was
 * deleted or replaced since mapped (the kernel's " (deleted)" mark), and
 * *other says whether another file is at its path now; -errno when it
 * cannot be told.
 */
int proc_map_on_disk(pid_t pid, const struct proc_map *map, int *other);

/*
 * The pid the target has in its own PID namespace (the last NSpid field of
 * /proc/PID/status; pid itself on kernels without NSpid). What the target
 * writes into file names (/tmp/perf-<pid>.map) and thread states is this
 * number, not ours. 0 or -errno.
 */
int proc_ns_pid(pid_t pid, pid_t *nspid);
/* The same for a thread: /proc/PID/task/TID/status. */
int proc_ns_tid(pid_t pid, pid_t tid, pid_t *nstid);
/* Parse the text of a status file for its innermost NSpid. 0 or -ENOENT. */
int proc_status_parse_nspid(const char *text, pid_t *nspid);

/*
 * May this process ptrace pid? PTRACE_SEIZE from a short-lived child, whose
 * exit detaches at once: the target is neither stopped nor signalled.
 * 0 or -errno (-EPERM refused, -ESRCH no such process).
 */
int proc_ptrace_probe(pid_t pid);

/*
 * Kernel stack of a thread from /proc/PID/task/TID/stack, innermost first
 * (at most max names, each allocated), or none: a stack entered through an
 * interrupt (the thread was running user code) or still leaving a ptrace
 * stop of framewalk's.
 */
size_t kernel_stack_read(pid_t pid, pid_t tid, char **out, size_t max);

#endif

/*
 * Implementation of callcount.h: placing framewalk's files in the target's
 * root, the two remote-execution requests, and reading the counts back.
 * Files are created O_EXCL in a directory framewalk made (0755, its own):
 * the target can read the script and write only the two result files
 * framewalk created for it (owned by the target's user), never replace
 * them, and framewalk reads those with the bounded safe opener.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "python/callcount.h"
#include "target/proc.h"
#include "target/safe_open.h"
#include "util/file.h"
#include "util/utf8.h"
#include "util/util.h"

extern const char py_callcount_script[];

#define EVENT_CAP 2000000000000ull  /* events counted before the script gives up */
#define POLL_NS 5000000ull
/* a start taken this long without an answer was dropped unrun (see run_script) */
#define CALLCOUNT_RETAKEN_NS 1000000000ull

static const char *const tmp_dirs[] = { "/tmp", "/var/tmp", "/dev/shm" };

void callcount_log_request(pid_t pid, const char *path, const char *mode)
{
	fw_note("count-calls: asking process %d to run %s (%s)", (int)pid, path, mode);
}

void callcount_add_counts(const struct callcount *cc, struct profile *p)
{
	for (size_t i = 0; i < cc->n; i++)
		profile_add_calls(p, cc->fns[i].name, cc->fns[i].file, cc->fns[i].firstline,
				  cc->fns[i].starts, cc->fns[i].resumes);
}

void callcount_warn_unread(pid_t pid)
{
	fw_warning("process %d: interrupted: its counting was not read (it removes itself at its "
		   "deadline)", (int)pid);
}

void callcount_init(struct callcount *cc, pid_t pid)
{
	memset(cc, 0, sizeof(*cc));
	cc->pid = pid;
	cc->tmp_fd = cc->dir_fd = -1;
	cc->keep_tmp_fd = cc->keep_fd = -1;
	cc->tool_id = -1;
	cc->stop_base = -1;
	mem_init_pid(&cc->mem, pid);
}

static void random_hex(char *out, size_t nbytes)
{
	unsigned char b[16];

	if (nbytes > sizeof(b))
		nbytes = sizeof(b);
	if (getrandom(b, nbytes, 0) != (ssize_t)nbytes) {
		uint64_t t = fw_now_ns() ^ ((uint64_t)getpid() << 32);
		for (size_t i = 0; i < nbytes; i++)
			b[i] = (unsigned char)(t >> (8 * (i % 8)));
	}
	for (size_t i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static const char *const placed_files[] = { "start.py", "peek.py", "take.py", "stop.py", "status",
					    "counts" };

/*
 * What a framewalk killed during a request left in tmp_fd: a directory of
 * ours for this target, older than a minute (no request lasts that long),
 * with only our files in it. Removed; anything else is left alone. A
 * start request's directory, kept while the counting lasts, says until
 * when in its name ("-until-" and the Unix time): it is left alone until
 * then (the counting has removed itself, its exit handler with it).
 */
static void remove_stale(int tmp_fd, pid_t pid, const char *keep, uid_t target_uid)
{
	char prefix[48];
	DIR *d;
	int fd = openat(tmp_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	int seen = 0;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	snprintf(prefix, sizeof(prefix), "framewalk-cc-%d-", (int)pid);
	while ((e = readdir(d)) && seen++ < 100000) {
		const char *until;
		struct stat st, now;
		int dfd;

		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		until = strstr(e->d_name, "-until-");
		if (until && (long long)time(NULL) < strtoll(until + 7, NULL, 10))
			continue;
		/* a kept one was given to the target's user (the script's deadline removes it) */
		if (!strcmp(e->d_name, keep) ||
		    fstatat(tmp_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
		    (st.st_uid != geteuid() && !(until && st.st_uid == target_uid)) ||
		    time(NULL) - st.st_mtime < 60)
			continue;
		/* not through a mount the target's user placed there (another directory) */
		dfd = safe_dir_entry(tmp_fd, e->d_name);
		if (dfd < 0)
			continue;
		/* the very directory looked at (not one renamed into its place since) */
		if (fstat(dfd, &now) || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
			close(dfd);
			continue;
		}
		for (size_t i = 0; i < ARRAY_SIZE(placed_files); i++)
			unlinkat(dfd, placed_files[i], 0);
		close(dfd);
		unlinkat(tmp_fd, e->d_name, AT_REMOVEDIR);  /* fails if anything else is in it */
	}
	closedir(d);
}

/*
 * Is the directory dir_fd one where the target's user may make files
 * itself: a temporary directory for all (world-writable and sticky) or
 * its own? framewalk makes its directory only there, so a /tmp that is
 * another directory bind-mounted (/etc, in a mount namespace the target's
 * user made) gets nothing from framewalk that user could not make.
 */
static int writable_by(int dir_fd, uid_t uid)
{
	struct stat st;

	if (fstat(dir_fd, &st) || !S_ISDIR(st.st_mode))
		return 0;
	return ((st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH)) || st.st_uid == uid;
}

/*
 * framewalk's own directory in the target's first usable temporary
 * directory; until (Unix time, 0: none) names the time before which no
 * other framewalk may take it for a stale one.
 */
static int make_dir(struct callcount *cc, long long until, struct strbuf *why)
{
	char root[64], hex[17];
	struct stat st;
	uid_t target_uid;
	int root_fd, err = -ENOENT;

	snprintf(root, sizeof(root), "/proc/%d", (int)cc->pid);
	target_uid = stat(root, &st) ? geteuid() : st.st_uid;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)cc->pid);
	root_fd = safe_root_open(root);
	if (root_fd < 0) {
		strbuf_addf(why, "cannot open the target's root: %s", strerror(-root_fd));
		return root_fd;
	}
	for (size_t i = 0; i < ARRAY_SIZE(tmp_dirs); i++) {
		int fd = safe_dir_in(root_fd, tmp_dirs[i]);

		if (fd < 0) {
			err = fd;
			continue;
		}
		if (!writable_by(fd, target_uid)) {
			err = -EACCES;
			close(fd);
			continue;
		}
		remove_stale(fd, cc->pid, cc->keep_dirname, target_uid);
		random_hex(hex, 8);
		if (until)
			snprintf(cc->dirname, sizeof(cc->dirname), "framewalk-cc-%d-%s-until-%lld",
				 (int)cc->pid, hex, until);
		else
			snprintf(cc->dirname, sizeof(cc->dirname), "framewalk-cc-%d-%s",
				 (int)cc->pid, hex);
		if (mkdirat(fd, cc->dirname, 0755)) {
			err = -errno;
			close(fd);
			continue;
		}
		cc->tmp_fd = fd;
		snprintf(cc->tpath, sizeof(cc->tpath), "%s/%s", tmp_dirs[i], cc->dirname);
		break;
	}
	close(root_fd);
	if (cc->tmp_fd < 0) {
		strbuf_addf(why, "cannot make a directory in the target's /tmp, /var/tmp or "
			    "/dev/shm: %s", err == -EACCES ? "none is a temporary directory its user "
			    "may write (world-writable and sticky, or its own)" : strerror(-err));
		if (err == -ENOSYS)
			strbuf_addstr(why, " (--count-calls needs Linux 5.6 or later: openat2)");
		return err;
	}
	/* 0755 whatever the umask; checked to be the one just made, ours, no mount over it */
	{
		int fd = safe_dir_entry(cc->tmp_fd, cc->dirname);

		if (fd < 0 || fstat(fd, &st) || st.st_uid != geteuid() || fchmod(fd, 0755)) {
			err = fd < 0 ? fd : -EPERM;
			if (fd >= 0)
				close(fd);
			strbuf_addf(why, "cannot set up %s in the target's root: %s%s", cc->tpath,
				    strerror(-err), err == -ENOSYS ? " (--count-calls needs Linux "
				    "5.6 or later: openat2)" : "");
			return err;
		}
		cc->dir_fd = fd;
	}
	return 0;
}

/* Create name in our directory, O_EXCL, with text (or empty), mode, owner. */
static int create_file(struct callcount *cc, const char *name, const char *text, mode_t mode,
		       uid_t uid, gid_t gid)
{
	int fd = openat(cc->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
	int err;

	if (fd < 0)
		return -errno;
	err = text ? write_fd_all(fd, text, strlen(text)) : 0;
	if (!err && (uid != geteuid() || gid != getegid()) && fchown(fd, uid, gid))
		err = -errno;
	if (!err && fchmod(fd, mode))
		err = -errno;
	close(fd);
	if (err)
		unlinkat(cc->dir_fd, name, 0);
	return err;
}

/* Remove every file framewalk may have placed in a directory, and it. */
static void remove_placed(int *dir_fd, int *tmp_fd, const char *dirname)
{
	if (*dir_fd >= 0) {
		for (size_t i = 0; i < ARRAY_SIZE(placed_files); i++)
			unlinkat(*dir_fd, placed_files[i], 0);
		close(*dir_fd);
		*dir_fd = -1;
	}
	if (*tmp_fd >= 0) {
		unlinkat(*tmp_fd, dirname, AT_REMOVEDIR);
		close(*tmp_fd);
		*tmp_fd = -1;
	}
}

/* The request's directory. */
static void remove_dir(struct callcount *cc)
{
	remove_placed(&cc->dir_fd, &cc->tmp_fd, cc->dirname);
}

/* The script: one line of parameters, all framewalk's own, then the fixed text. */
static void script_text(struct strbuf *sb, const struct callcount *cc, const char *mode)
{
	strbuf_addf(sb, "_P = {'dir': '%s', 'deadline': %.3f, 'cap': %llu, 'name': '%s', "
		    "'mode': '%s'}\n", cc->tpath, cc->deadline_s, (unsigned long long)EVENT_CAP,
		    cc->name, mode);
	strbuf_addstr(sb, py_callcount_script);
}

/* Has pid exited (gone, or a zombie)? */
static int process_ended(pid_t pid)
{
	struct proc_program_id id;
	struct proc_watch w;
	char state = 0;
	int ret = proc_watch_open(&w, pid);

	if (ret)
		return ret == -ESRCH || ret == -ENOENT;
	ret = proc_watch_read(&w, &state, &id);
	proc_watch_close(&w);
	return ret == -ESRCH || (ret >= 0 && (state == 'Z' || state == 'X'));
}

/* The process's start time (clock ticks after boot), 0 when unreadable. */
static uint64_t start_ticks(pid_t pid)
{
	uint64_t ticks = 0;

	return proc_start_time(pid, &ticks) ? 0 : ticks;
}

/* Still the process counting started in (not exited, its pid not reused)? */
static int same_process(const struct callcount *cc)
{
	return !process_ended(cc->pid) && (!cc->start_ticks || start_ticks(cc->pid) == cc->start_ticks);
}

/* The result file's text when the script has finished writing it, else -EAGAIN. */
static int read_result(struct callcount *cc, const char *name, struct strbuf *sb)
{
	int fd = safe_open_entry(cc->dir_fd, name), ret;
	size_t len;

	if (fd < 0)
		return fd;
	strbuf_reset(sb);
	ret = read_fd_bounded(fd, CALLCOUNT_MAX_BYTES, sb);
	close(fd);
	if (ret)
		return ret;
	len = sb->len;
	if (!len || strbuf_str(sb)[len - 1] != '\n')
		return -EAGAIN;
	return 0;
}

/*
 * Place script (as file), ask the target to run it, wait for result to be
 * written. keep: the start, whose directory stays (cc->keep_*) when it
 * succeeds.
 */
static int run_script(struct callcount *cc, const struct py_target *t, const char *file,
		      const char *mode, const char *result, struct strbuf *out, struct strbuf *why)
{
	int keep = !strcmp(mode, "start");
	struct strbuf text = STRBUF_INIT;
	struct py_rexec rq;
	struct stat st;
	char path[512];
	uint64_t start, taken_ns = 0;
	int stops = cc->stop_base >= 0 ? cc->stop_base : cc->stop ? (int)*cc->stop : 0;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d", (int)cc->pid);
	if (stat(path, &st) || !same_process(cc)) {
		strbuf_addf(why, "process %d is gone", (int)cc->pid);
		return -ESRCH;
	}
	/*
	 * A directory for this request alone: a framewalk killed between two
	 * leaves none. The start's is kept while counting (its exit handler
	 * writes "counts" there), named with the time it is stale after.
	 */
	ret = make_dir(cc, keep ? (long long)time(NULL) + (long long)cc->deadline_s + 60 : 0,
		       why);
	if (ret) {
		remove_dir(cc);
		return ret;
	}
	script_text(&text, cc, mode);
	ret = create_file(cc, file, strbuf_str(&text), 0644, geteuid(), getegid());
	strbuf_release(&text);
	if (!ret)
		ret = create_file(cc, result, NULL, 0600, st.st_uid, st.st_gid);
	if (!ret && keep)
		ret = create_file(cc, "counts", NULL, 0600, st.st_uid, st.st_gid);
	if (ret) {
		strbuf_addf(why, "cannot create the files in %s: %s", cc->tpath, strerror(-ret));
		remove_dir(cc);
		return ret;
	}
	snprintf(path, sizeof(path), "%s/%s", cc->tpath, file);
	if (cc->announce && strcmp(mode, "peek"))
		cc->announce(cc->pid, path, mode);
	ret = py_rexec_send(&cc->mem, t, path, &rq, why);
	if (ret) {
		remove_dir(cc);
		return ret;
	}
	start = fw_now_ns();
	for (;;) {
		struct timespec ts = { 0, (long)POLL_NS };

		ret = read_result(cc, result, out);
		if (ret != -EAGAIN)
			break;
		/* a start not yet taken can be given up at once (a stop is seen through) */
		if (cc->stop && *cc->stop && keep &&
		    py_rexec_pending(&cc->mem, &rq) > 0 && !py_rexec_withdraw(&cc->mem, &rq)) {
			strbuf_addstr(why, "interrupted before the target took the request");
			ret = -EINTR;
			break;
		}
		/*
		 * A stop, peek or take is given up when a stop signal comes past
		 * those its caller allowed (the first one may have ended the
		 * capture: this is another): the counting removes itself at its
		 * deadline.
		 */
		if (cc->stop && *cc->stop > stops && !keep) {
			if (py_rexec_pending(&cc->mem, &rq) > 0)
				py_rexec_withdraw(&cc->mem, &rq);
			strbuf_addstr(why, "interrupted while waiting for the target to run the "
				      "request (the counting removes itself at its deadline)");
			ret = -EINTR;
			break;
		}
		/* a process that ended will not answer */
		if (!same_process(cc)) {
			strbuf_addf(why, "process %d ended before it ran the request", (int)cc->pid);
			ret = -ESRCH;
			break;
		}
		/*
		 * A start taken (its flag cleared) but silent a second on: the
		 * interpreter could not open it (a start-up still installing its
		 * imports: "Can't open debugger script") and dropped it. Asked
		 * again by the caller; a start merely slow is found by its tool's
		 * name then, never counted twice.
		 */
		if (keep && !taken_ns && py_rexec_pending(&cc->mem, &rq) == 0)
			taken_ns = fw_now_ns();
		if (keep && taken_ns && fw_now_ns() - taken_ns > CALLCOUNT_RETAKEN_NS) {
			strbuf_addf(why, "process %d took the request and did not run it",
				    (int)cc->pid);
			ret = -EAGAIN;
			break;
		}
		if (fw_now_ns() - start > CALLCOUNT_WAIT_NS) {
			int pending = py_rexec_pending(&cc->mem, &rq);

			if (pending > 0)
				py_rexec_withdraw(&cc->mem, &rq);
			strbuf_addf(why, "process %d did not run the request within %.0f s (%s)",
				    (int)cc->pid, CALLCOUNT_WAIT_NS / 1e9, pending > 0 ?
				    "its thread never reached a safe point: blocked in C code, or "
				    "a build without remote debugging; withdrawn" :
				    "taken but not finished");
			ret = -ETIMEDOUT;
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (ret && ret != -ETIMEDOUT && ret != -EINTR && ret != -ESRCH && ret != -EAGAIN)
		strbuf_addf(why, "reading %s/%s failed: %s", cc->tpath, result, strerror(-ret));
	/*
	 * The start's directory, kept: given to the target's user, so that the
	 * counting, removing itself at its deadline (framewalk killed), removes
	 * it too. Its files stay framewalk's; what framewalk reads from it is
	 * opened as a file the target controls, no link or mount followed
	 * (safe_open_entry, bounded).
	 */
	if (!ret && keep && (st.st_uid != geteuid() || st.st_gid != getegid()) &&
	    fchown(cc->dir_fd, st.st_uid, st.st_gid)) {
		/* not fatal: the counting runs; a later framewalk removes it when stale */
	}
	if (!ret && keep) {
		remove_placed(&cc->keep_fd, &cc->keep_tmp_fd, cc->keep_dirname);
		cc->keep_fd = cc->dir_fd;
		cc->keep_tmp_fd = cc->tmp_fd;
		snprintf(cc->keep_dirname, sizeof(cc->keep_dirname), "%s", cc->dirname);
		cc->dir_fd = cc->tmp_fd = -1;
	}
	remove_dir(cc);
	return ret;
}

/*
 * The target's status text, quoted in a message: its first STATUS_QUOTE_MAX
 * bytes, escaped (the target wrote them: hostile text, and a message is no
 * place for a whole file).
 */
#define STATUS_QUOTE_MAX 300

static void quote_status(struct strbuf *out, const char *s)
{
	char head[STATUS_QUOTE_MAX + 1];
	size_t n = strnlen(s, STATUS_QUOTE_MAX + 1);

	memcpy(head, s, n > STATUS_QUOTE_MAX ? STATUS_QUOTE_MAX : n);
	head[n > STATUS_QUOTE_MAX ? STATUS_QUOTE_MAX : n] = '\0';
	escape_append(out, head, ESCAPE_TERMINAL);
	if (n > STATUS_QUOTE_MAX)
		strbuf_addstr(out, "...");
}

int callcount_check(struct target_mem *m, const struct py_target *t, struct strbuf *why)
{
	int ret = py_rexec_check(m, t, why);

	/* a starting interpreter's remote_debug reads 0 until its configuration is in */
	if ((!ret || ret == -EPERM || ret == -EAGAIN) && py_rexec_ready(m, t) == -EAGAIN) {
		strbuf_reset(why);
		strbuf_addstr(why, "its interpreter is still starting");
		return -EAGAIN;
	}
	return ret;
}

/* callcount_start without the reset after a failure. */
static int start_request(struct callcount *cc, const struct py_target *t, double deadline_s,
			 struct strbuf *why)
{
	struct strbuf res = STRBUF_INIT;
	char hex[17];
	int ret;

	ret = py_rexec_check(&cc->mem, t, why);
	if (ret)
		return ret;
	cc->start_ticks = start_ticks(cc->pid);
	random_hex(hex, 8);
	snprintf(cc->name, sizeof(cc->name), "framewalk-callcount-%s", hex);
	cc->deadline_s = deadline_s;
	/* a start dropped unrun is asked again, twice at most (the same tool name) */
	for (int i = 0; i < 3; i++) {
		strbuf_reset(why);
		ret = run_script(cc, t, "start.py", "start", "status", &res, why);
		if (ret != -EAGAIN)
			break;
	}
	if (!ret) {
		const char *s = strbuf_str(&res);
		int id;

		unsigned long long us = 0;

		if (sscanf(s, "ok %d %llu", &id, &us) >= 1 && id >= 0 && id < 6) {
			cc->tool_id = id;
			cc->start_us = us;
		} else if (!strncmp(s, "busy ", 5)) {
			struct strbuf holders = STRBUF_INIT;

			quote_status(&holders, s + 5);
			strbuf_addf(why, "every sys.monitoring tool id is taken (%s)",
				    strbuf_str(&holders));
			strbuf_release(&holders);
			ret = -EBUSY;
		} else {
			struct strbuf msg = STRBUF_INIT;

			quote_status(&msg, s);
			strbuf_addf(why, "the counting script failed: %s", strbuf_str(&msg));
			strbuf_release(&msg);
			ret = -EIO;
		}
	}
	strbuf_release(&res);
	return ret;
}

int callcount_start(struct callcount *cc, const struct py_target *t, double deadline_s,
		    struct strbuf *why)
{
	int ret = start_request(cc, t, deadline_s, why);

	if (ret)
		callcount_reset(cc);     /* the files of a start that failed are gone */
	return ret;
}

/* Free the counts read before. */
static void free_counts(struct callcount *cc)
{
	for (size_t i = 0; i < cc->n; i++) {
		free(cc->fns[i].file);
		free(cc->fns[i].name);
	}
	free(cc->fns);
	cc->fns = NULL;
	cc->n = 0;
}

/* A stop or peek request: the counts into cc. */
static int read_counts(struct callcount *cc, const struct py_target *t, const char *mode,
		       struct strbuf *why)
{
	struct strbuf res = STRBUF_INIT;
	char file[16];
	int ret;

	snprintf(file, sizeof(file), "%s.py", mode);
	ret = run_script(cc, t, file, mode, "counts", &res, why);
	if (!ret && !strcmp(strbuf_str(&res), "gone\n")) {
		strbuf_addf(why, "the counting had removed itself (its %.0f s deadline)",
			    cc->deadline_s);
		ret = -ENOENT;
	} else if (!ret) {
		free_counts(cc);
		ret = callcount_parse(cc, (char *)strbuf_str(&res), res.len);
		if (ret)
			strbuf_addstr(why, "the counts file is malformed");
	}
	strbuf_release(&res);
	return ret;
}

/*
 * The counting's deadline moved: so does the time the kept directory's
 * name says it is ours until (renamed in place; the target writes through
 * a descriptor, not its name).
 */
static void keep_until(struct callcount *cc)
{
	char name[sizeof(cc->keep_dirname)], *until = strstr(cc->keep_dirname, "-until-");

	if (cc->keep_fd < 0 || !until)
		return;
	snprintf(name, sizeof(name), "%.*s-until-%lld", (int)(until - cc->keep_dirname),
		 cc->keep_dirname, (long long)time(NULL) + (long long)cc->deadline_s + 60);
	if (!renameat(cc->keep_tmp_fd, cc->keep_dirname, cc->keep_tmp_fd, name))
		snprintf(cc->keep_dirname, sizeof(cc->keep_dirname), "%s", name);
}

/* A request that leaves the counting on: its pause is peek_us, not stop_us. */
static int read_counts_on(struct callcount *cc, const struct py_target *t, const char *mode,
			  struct strbuf *why)
{
	uint64_t stop_us = cc->stop_us;
	int ret = read_counts(cc, t, mode, why);

	cc->peek_us = cc->stop_us;
	cc->stop_us = stop_us;
	if (!ret)
		keep_until(cc);
	return ret;
}

int callcount_peek(struct callcount *cc, const struct py_target *t, struct strbuf *why)
{
	return read_counts_on(cc, t, "peek", why);
}

int callcount_take(struct callcount *cc, const struct py_target *t, struct strbuf *why)
{
	int ret;

	/* one that exited (or is exiting): its last counts, from its exit handler */
	if (!same_process(cc))
		return callcount_stop(cc, t, why);
	ret = read_counts_on(cc, t, "take", why);
	if (ret && !same_process(cc)) {
		strbuf_reset(why);
		ret = callcount_stop(cc, t, why);
	}
	return ret;
}

int callcount_ended(const struct callcount *cc)
{
	return !same_process(cc);
}

/* The counts the script wrote at the target's exit, whole: 0, else -errno. */
static int read_exit_counts(struct callcount *cc)
{
	struct strbuf res = STRBUF_INIT;
	int fd, ret;

	if (cc->keep_fd < 0)
		return -ENOENT;
	fd = safe_open_entry(cc->keep_fd, "counts");
	if (fd < 0)
		return fd;
	ret = read_fd_bounded(fd, CALLCOUNT_MAX_BYTES, &res);
	close(fd);
	if (!ret && !res.len)
		ret = -ENOENT;
	if (!ret) {
		free_counts(cc);
		ret = callcount_parse(cc, (char *)strbuf_str(&res), res.len);
		if (ret)
			free_counts(cc);    /* still being written: not whole */
	}
	strbuf_release(&res);
	cc->at_exit = !ret;
	return ret;
}

int callcount_stop(struct callcount *cc, const struct py_target *t, struct strbuf *why)
{
	int ret;

	if (!read_exit_counts(cc))
		return 0;
	ret = read_counts(cc, t, "stop", why);
	/*
	 * Gone (or going) while asked: what its exit handler wrote, given a
	 * second to finish writing (the stop can run between its removal of
	 * the counting and its write: "gone").
	 */
	for (int i = 0; ret && i < 10; i++) {
		struct timespec ts = { 0, 100000000L };
		int alive;

		if (!read_exit_counts(cc)) {
			strbuf_reset(why);
			return 0;
		}
		alive = same_process(cc);
		if ((alive && ret != -ENOENT) || (!alive && i))
			break;      /* the stop's own answer; or ended, its file read after: none */
		nanosleep(&ts, NULL);
	}
	if (ret && !same_process(cc)) {
		strbuf_reset(why);
		strbuf_addf(why, "process %d ended without running its exit handlers (killed by "
			    "a signal, or os._exit), so its counts were lost", (int)cc->pid);
		ret = -ENOENT;
	}
	return ret;
}

/* Undo esc() of the script: \\ \t \n \r, in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* A count the script writes: decimal digits only, within a long. 0 or -EINVAL. */
static int parse_count(const char *s, long *out)
{
	if (!*s || s[strspn(s, "0123456789")])
		return -EINVAL;
	return parse_long(s, out);
}

int callcount_parse(struct callcount *cc, char *text, size_t len)
{
	size_t alloc = 0, lines = 0;
	int ended = 0;
	char *save = NULL;

	if (cc->fns || !len || text[len - 1] != '\n')
		return -EPROTO;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[6], *p = line;
		struct callcount_fn *fn;
		long starts, resumes, firstline;
		int nf = 0;

		if (!strncmp(line, "end ", 4)) {
			/* "end LINES [MICROSECONDS]" */
			char *us = strchr(line + 4, ' ');
			long n, held = 0;

			if (us)
				*us++ = 0;
			if (parse_count(line + 4, &n) || (us && parse_count(us, &held)))
				return -EPROTO;
			ended = (size_t)n == lines;
			cc->stop_us = (uint64_t)held;
			break;
		}
		lines++;
		while (nf < 6) {
			f[nf++] = p;
			p = strchr(p, '\t');
			if (!p)
				break;
			*p++ = 0;
		}
		if (nf != 6 || strcmp(f[0], "C"))
			return -EPROTO;
		if (cc->n >= CALLCOUNT_MAX_FUNCS)
			continue;
		if (cc->n == alloc) {
			alloc = alloc ? 2 * alloc : 256;
			cc->fns = xrealloc(cc->fns, alloc * sizeof(*cc->fns));
		}
		/* whole non-negative numbers, or the file is not the script's */
		if (parse_count(f[1], &starts) || parse_count(f[2], &resumes) ||
		    parse_count(f[3], &firstline) || firstline > INT_MAX)
			return -EPROTO;
		unescape(f[4]);
		unescape(f[5]);
		fn = &cc->fns[cc->n++];
		fn->starts = (uint64_t)starts;
		fn->resumes = (uint64_t)resumes;
		fn->firstline = (int)firstline;
		fn->file = xstrdup(f[4]);
		fn->name = xstrdup(f[5]);
	}
	return ended ? 0 : -EPROTO;
}

void callcount_release(struct callcount *cc)
{
	remove_dir(cc);
	remove_placed(&cc->keep_fd, &cc->keep_tmp_fd, cc->keep_dirname);
	free_counts(cc);
	mem_release(&cc->mem);
}

void callcount_reset(struct callcount *cc)
{
	void (*announce)(pid_t, const char *, const char *) = cc->announce;
	volatile sig_atomic_t *stop = cc->stop;
	pid_t pid = cc->pid;

	callcount_release(cc);
	callcount_init(cc, pid);
	cc->announce = announce;
	cc->stop = stop;
}

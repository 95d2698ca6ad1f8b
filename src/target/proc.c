/*
 * Implementation of proc.h: /proc parsing for one target process. Files are
 * read whole into a bounded buffer first, then parsed, so a process changing
 * under us gives a stale answer, never a torn read loop.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "target/privilege.h"
#include "target/proc.h"
#include "target/safe_open.h"
#include "util/file.h"
#include "util/strbuf.h"
#include "util/util.h"

#define PROC_FILE_MAX (64u << 20)
#define DELETED_MARK " (deleted)"

/*
 * Read a whole /proc file into a malloc'd, NUL-terminated buffer (a file
 * past PROC_FILE_MAX is cut there). A file that vanished means the process did.
 */
static int read_file(const char *path, char **out, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = read_file_bounded(path, PROC_FILE_MAX, &sb);

	if (ret == -EFBIG)
		ret = 0;
	if (ret) {
		strbuf_release(&sb);
		return ret == -ENOENT ? -ESRCH : ret;
	}
	if (len)
		*len = sb.len;
	*out = strbuf_detach(&sb);
	return 0;
}

static int parse_hex(const char **p, uint64_t *v)
{
	char *end;
	errno = 0;
	*v = strtoull(*p, &end, 16);
	if (end == *p || errno)
		return -EINVAL;
	*p = end;
	return 0;
}

int proc_maps_parse_line(const char *line, struct proc_map *out)
{
	const char *p = line;
	uint64_t dev_major, dev_minor;
	char *end;
	int i;

	memset(out, 0, sizeof(*out));
	if (parse_hex(&p, &out->start) || *p++ != '-' || parse_hex(&p, &out->end))
		return -EINVAL;
	if (*p++ != ' ')
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (!p[i] || p[i] == ' ')
			return -EINVAL;
		out->perms[i] = p[i];
	}
	out->perms[4] = '\0';
	p += 4;
	if (*p++ != ' ' || parse_hex(&p, &out->offset) || *p++ != ' ')
		return -EINVAL;
	if (parse_hex(&p, &dev_major) || *p++ != ':' || parse_hex(&p, &dev_minor))
		return -EINVAL;
	if (*p++ != ' ')
		return -EINVAL;
	errno = 0;
	out->inode = strtoull(p, &end, 10);
	if (end == p || errno)
		return -EINVAL;
	p = end;
	while (*p == ' ')
		p++;
	if (out->end < out->start)
		return -EINVAL;
	out->dev = makedev((unsigned)dev_major, (unsigned)dev_minor);
	out->path = xstrdup(p);
	/* The kernel appends the mark to a file-backed mapping whose file lost its name. */
	if (out->inode && str_ends_with(out->path, DELETED_MARK)) {
		out->path[strlen(out->path) - strlen(DELETED_MARK)] = '\0';
		out->deleted = 1;
	}
	return 0;
}

int proc_maps_read(pid_t pid, struct proc_maps *out)
{
	char path[64], *buf, *line, *next;
	int ret;

	memset(out, 0, sizeof(*out));
	xsnprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	ret = read_file(path, &buf, NULL);
	if (ret)
		return ret;
	for (line = buf; line && *line; line = next) {
		struct proc_map m;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (proc_maps_parse_line(line, &m))
			continue;
		out->maps = xgrow(out->maps, sizeof(*out->maps), out->n + 1, &out->alloc);
		out->maps[out->n++] = m;
	}
	free(buf);
	return 0;
}

void proc_maps_release(struct proc_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->maps[i].path);
	free(m->maps);
	memset(m, 0, sizeof(*m));
}

static int same_file(const struct proc_map *a, const struct proc_map *b)
{
	return a->inode == b->inode && a->dev == b->dev && a->path[0] == '/';
}

/*
 * The loader maps an image as one reserved span: its mapping at offset 0
 * first, then the others above it, holes kept mapped. So the image an
 * executable mapping belongs to starts at the nearest mapping of the same
 * file at offset 0 at or below it. A mapping of the file anywhere else (a
 * process reading the ELF file as data, as framewalk's agent does) is not
 * part of it.
 */
const struct proc_map *proc_maps_image_base(const struct proc_maps *m,
					    const struct proc_map *exec_map)
{
	size_t at = (size_t)(exec_map - m->maps);

	if (at >= m->n || exec_map->perms[2] != 'x' || exec_map->path[0] != '/')
		return NULL;
	for (size_t i = at + 1; i-- > 0;)
		if (m->maps[i].offset == 0 && same_file(&m->maps[i], exec_map))
			return &m->maps[i];
	return NULL;
}

uint64_t proc_maps_image_end(const struct proc_maps *m, const struct proc_map *base)
{
	uint64_t end = base->end;

	for (size_t i = (size_t)(base - m->maps) + 1; i < m->n; i++) {
		const struct proc_map *next = &m->maps[i];

		if (same_file(next, base)) {
			if (next->offset == 0)
				break;          /* another image, or the file mapped as data */
			end = next->end;
		} else if (next->inode) {
			break;                  /* another file: the image ended */
		}                               /* anonymous: a hole, or its .bss */
	}
	return end;
}

int proc_exists(pid_t pid)
{
	char path[64];

	if (pid <= 0)
		return -ESRCH;
	xsnprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (access(path, F_OK) == 0)
		return 0;
	return errno == EACCES ? -EPERM : -ESRCH;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

int proc_tasks(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	struct dirent *de;
	size_t alloc = 0;
	DIR *d;

	*tids = NULL;
	*n = 0;
	xsnprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		long v;

		if (parse_long(de->d_name, &v) || v <= 0)
			continue;
		*tids = xgrow(*tids, sizeof(**tids), *n + 1, &alloc);
		(*tids)[(*n)++] = (pid_t)v;
	}
	closedir(d);
	sort_array(*tids, *n, sizeof(**tids), cmp_pid);
	return 0;
}

int proc_task_comm(pid_t pid, pid_t tid, char *buf, size_t size)
{
	char path[96], *text;
	size_t len;
	int ret;

	xsnprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	ret = read_file(path, &text, &len);
	if (ret)
		return ret;
	if (len && text[len - 1] == '\n')
		text[--len] = '\0';
	if (size) {
		size_t c = len < size - 1 ? len : size - 1;
		memcpy(buf, text, c);
		buf[c] = '\0';
	}
	free(text);
	return 0;
}

int proc_stat_parse_state(const char *text, size_t len, char *state)
{
	const char *p = NULL;

	/* comm may contain ')' and spaces: the state follows the last ')'. */
	for (size_t i = len; i > 0; i--) {
		if (text[i - 1] == ')') {
			p = text + i;
			break;
		}
	}
	if (!p || (size_t)(p - text) + 2 > len || p[0] != ' ' || !isalpha((unsigned char)p[1]))
		return -EINVAL;
	*state = p[1];
	return 0;
}

int proc_stat_parse_field(const char *text, size_t len, int field, uint64_t *value)
{
	const char *p = NULL, *end = text + len;
	int at = 2;             /* the state is field 3 */

	if (field < 3)
		return -EINVAL;
	for (size_t i = len; i > 0; i--) {
		if (text[i - 1] == ')') {
			p = text + i;
			break;
		}
	}
	if (!p)
		return -EINVAL;
	while (p < end && at < field) {
		while (p < end && *p == ' ')
			p++;
		at++;
		if (at == field)
			break;
		while (p < end && *p != ' ')
			p++;
	}
	if (at != field || p >= end || !isdigit((unsigned char)*p))
		return -EINVAL;
	/* Bounded by len: the text need not be terminated. */
	*value = 0;
	for (; p < end && isdigit((unsigned char)*p); p++) {
		if (*value > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		*value = *value * 10 + (uint64_t)(*p - '0');
	}
	return 0;
}

/* PF_KTHREAD in stat's flags (field 9): include/linux/sched.h */
#define PROC_PF_KTHREAD 0x00200000u

int proc_start_identity(pid_t pid, uint64_t *ticks, int *kernel_thread)
{
	char path[64], text[1024];
	uint64_t flags;
	size_t len;
	int ret;

	xsnprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	ret = read_file_into(path, text, sizeof(text));
	if (ret)
		return ret == -ENOENT ? -ESRCH : ret;
	len = strlen(text);
	ret = proc_stat_parse_field(text, len, 22, ticks);
	if (!ret && kernel_thread)
		*kernel_thread = !proc_stat_parse_field(text, len, 9, &flags) &&
				 (flags & PROC_PF_KTHREAD);
	return ret;
}

int proc_start_time(pid_t pid, uint64_t *ticks)
{
	return proc_start_identity(pid, ticks, NULL);
}

int proc_stat_parse_cpu(const char *text, size_t len, int *cpu)
{
	uint64_t v;
	/* Field 39 is the CPU the thread last ran on. */
	int ret = proc_stat_parse_field(text, len, 39, &v);

	if (!ret)
		*cpu = (int)v;
	return ret;
}

int proc_program_id(pid_t pid, struct proc_program_id *id)
{
	char path[64], *text;
	struct stat st;
	size_t len;
	int ret;

	memset(id, 0, sizeof(*id));
	xsnprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st))
		return -errno;
	id->exe_dev = (uint64_t)st.st_dev;
	id->exe_ino = (uint64_t)st.st_ino;
	xsnprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	ret = read_file(path, &text, &len);
	if (ret)
		return ret;
	/* Laid out anew by each exec: the stack's start (28) and the arguments' (48). */
	if (proc_stat_parse_field(text, len, 28, &id->stack_start) ||
	    proc_stat_parse_field(text, len, 48, &id->args_start))
		id->stack_start = id->args_start = 0;
	free(text);
	return 0;
}

int proc_watch_open(struct proc_watch *w, pid_t pid)
{
	char path[64];

	w->statfd = -1;
	xsnprintf(path, sizeof(path), "/proc/%d", (int)pid);
	w->dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0)
		return -errno;
	w->statfd = openat(w->dirfd, "stat", O_RDONLY | O_CLOEXEC);
	if (w->statfd < 0) {
		int err = -errno;

		proc_watch_close(w);
		return err;
	}
	return 0;
}

void proc_watch_close(struct proc_watch *w)
{
	if (w->statfd >= 0)
		close(w->statfd);
	if (w->dirfd >= 0)
		close(w->dirfd);
	w->dirfd = w->statfd = -1;
}

int proc_watch_read(const struct proc_watch *w, char *state, struct proc_program_id *id)
{
	char text[4096];
	struct stat st;
	ssize_t len;
	int ret;

	memset(id, 0, sizeof(*id));
	if (w->statfd < 0)
		return -EBADF;
	len = pread(w->statfd, text, sizeof(text), 0);
	if (len < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	ret = proc_stat_parse_state(text, (size_t)len, state);
	if (ret)
		return ret;
	if (proc_stat_parse_field(text, (size_t)len, 28, &id->stack_start) ||
	    proc_stat_parse_field(text, (size_t)len, 48, &id->args_start))
		id->stack_start = id->args_start = 0;
	/* A zombie has no executable left; another user's needs ptrace access. */
	if (fstatat(w->dirfd, "exe", &st, 0))
		return 1;
	id->exe_dev = (uint64_t)st.st_dev;
	id->exe_ino = (uint64_t)st.st_ino;
	return 0;
}

int proc_program_changed(const struct proc_program_id *a, const struct proc_program_id *b)
{
	return a->exe_dev != b->exe_dev || a->exe_ino != b->exe_ino ||
	       a->stack_start != b->stack_start || a->args_start != b->args_start;
}

int proc_task_state(pid_t pid, pid_t tid, char *state)
{
	char path[96], *text;
	size_t len;
	int ret;

	xsnprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	ret = read_file(path, &text, &len);
	if (ret)
		return ret;
	ret = proc_stat_parse_state(text, len, state);
	free(text);
	return ret;
}

int proc_cmdline(pid_t pid, char *buf, size_t size)
{
	char path[64], *text;
	size_t len, i, o = 0;
	int ret;

	xsnprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	ret = read_file(path, &text, &len);
	if (ret)
		return ret;
	while (len && text[len - 1] == '\0')
		len--;
	for (i = 0; i < len && o + 1 < size; i++)
		buf[o++] = text[i] ? text[i] : ' ';
	if (size)
		buf[o] = '\0';
	free(text);
	return 0;
}

int proc_exe(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	xsnprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, size - 1);
	if (n < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf[n] = '\0';
	/* A deleted executable still maps; drop the marker for matching. */
	if ((size_t)n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		buf[n - 10] = '\0';
	return 0;
}

int proc_children(pid_t pid, pid_t **kids, size_t *n)
{
	pid_t *tids;
	size_t ntids, alloc = 0;
	int ret;

	*kids = NULL;
	*n = 0;
	ret = proc_tasks(pid, &tids, &ntids);
	if (ret)
		return ret;
	for (size_t i = 0; i < ntids; i++) {
		char path[96], *text, *p, *end;

		xsnprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tids[i]);
		if (read_file(path, &text, NULL))
			continue;
		for (p = text;; p = end) {
			long v = strtol(p, &end, 10);
			if (end == p)
				break;
			if (v > 0) {
				*kids = xgrow(*kids, sizeof(**kids), *n + 1, &alloc);
				(*kids)[(*n)++] = (pid_t)v;
			}
		}
		free(text);
	}
	free(tids);
	return 0;
}

int proc_descendants(pid_t pid, int max_depth, pid_t **out, size_t *n)
{
	size_t alloc = 0, level_start = 0, level_end;
	pid_t *kids;
	size_t nkids;
	int ret;

	*out = NULL;
	*n = 0;
	ret = proc_children(pid, &kids, &nkids);
	if (ret)
		return ret;
	for (int depth = 0;; depth++) {
		for (size_t i = 0; i < nkids && *n < PROC_DESCENDANTS_MAX; i++) {
			*out = xgrow(*out, sizeof(**out), *n + 1, &alloc);
			(*out)[(*n)++] = kids[i];
		}
		free(kids);
		kids = NULL;
		nkids = 0;
		level_end = *n;
		if (depth + 1 >= max_depth || level_start == level_end)
			break;
		/* the next generation: the children of this one's members */
		for (size_t i = level_start; i < level_end; i++) {
			pid_t *more;
			size_t nmore;

			if (proc_children((*out)[i], &more, &nmore) || !nmore) {
				free(more);
				continue;
			}
			kids = xrealloc(kids, (nkids + nmore) * sizeof(*kids) + 1);
			memcpy(kids + nkids, more, nmore * sizeof(*more));
			nkids += nmore;
			free(more);
		}
		level_start = level_end;
	}
	return 0;
}

int proc_root_path(pid_t pid, const char *path, char *buf, size_t size)
{
	if (xsnprintf(buf, size, "/proc/%d/root%s%s", (int)pid,
		      path[0] == '/' ? "" : "/", path) < 0)
		return -ENAMETOOLONG;
	return 0;
}

int proc_map_host_path(pid_t pid, const struct proc_map *map, char *buf, size_t size)
{
	struct stat st;
	int denied = 0;

	if (map->path[0] != '/')
		return -ENOENT;
	if (!proc_root_path(pid, map->path, buf, size)) {
		if (!stat(buf, &st) && (uint64_t)st.st_ino == map->inode)
			return 0;
		denied = errno == EACCES || errno == EPERM;
	}
	/* The host's path names the target's file only in our own mount namespace. */
	if (proc_same_mount_ns(pid) == 1 && xsnprintf(buf, size, "%s", map->path) >= 0 &&
	    !stat(buf, &st) && (uint64_t)st.st_ino == map->inode)
		return 0;
	return denied ? -EPERM : -ENOENT;
}

/* fd when it is open on the mapping's inode, else closed and -ENOENT. */
static int same_inode(int fd, const struct proc_map *map)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (!fstat(fd, &st) && (uint64_t)st.st_ino == map->inode)
		return fd;
	close(fd);
	return -ENOENT;
}

int proc_same_mount_ns(pid_t pid)
{
	char path[64];
	struct stat ours, theirs;

	xsnprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	if (stat("/proc/self/ns/mnt", &ours) || stat(path, &theirs))
		return -errno;
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

void proc_map_files_refused(struct strbuf *why, pid_t pid)
{
	strbuf_addf(why, "/proc/%d/map_files, which needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE "
		    "(run framewalk as root, or: ", (int)pid);
	privilege_grant_fix(why, FW_CAPS_ATTACH, "$(command -v framewalk)");
	strbuf_addch(why, ')');
}

int proc_map_open(pid_t pid, const struct proc_map *map, enum proc_open_via *via)
{
	char path[PATH_MAX + 64];
	enum proc_open_via how;
	int fd, refused = 0;

	if (map->path[0] != '/' || !map->inode)
		return -ENOENT;
	/*
	 * Through the mapping itself: exact whatever happened to the path (no
	 * inode check: on overlayfs the mapping shows the layer's inode while
	 * the file opened is the overlay's). Every way below opens regular
	 * files only, never blocking (target/safe_open.h): the target names
	 * these paths and may have put a FIFO or a device there.
	 */
	xsnprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		  map->start, map->end);
	fd = safe_open_path(path);
	if (fd == -EMFILE || fd == -ENFILE)
		return fd;
	refused = fd == -EPERM || fd == -EACCES;
	how = PROC_VIA_MAP_FILES;
	if (fd < 0) {
		/* The executable stays reachable with ordinary access. */
		xsnprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		how = PROC_VIA_EXE;
		fd = same_inode(safe_open_path(path), map);
	}
	if (fd < 0) {
		/* The path inside the target's root: its symlinks stay in there. */
		xsnprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
		how = PROC_VIA_ROOT;
		fd = same_inode(safe_open_in_dir(path, map->path), map);
	}
	if (fd < 0 && proc_same_mount_ns(pid) == 1) {
		/*
		 * A chroot seen from outside shows host paths. Only in our own mount
		 * namespace is the host's path the target's file.
		 */
		how = PROC_VIA_PATH;
		fd = same_inode(safe_open_in_dir("/", map->path), map);
	}
	if (fd == -EMFILE || fd == -ENFILE)
		return fd;
	if (fd < 0)
		return refused ? -EPERM : -ENOENT;
	if (via)
		*via = how;
	return fd;
}

int proc_map_on_disk(pid_t pid, const struct proc_map *map, int *other)
{
	char path[PATH_MAX + 64], root[PATH_MAX];
	struct stat st;
	ssize_t n;

	*other = 0;
	/* The kernel marks a mapping whose file lost its name: nothing else is authoritative. */
	if (!map->deleted)
		return 1;
	if (map->path[0] != '/')
		return -EINVAL;
	if (!proc_root_path(pid, map->path, path, sizeof(path)) && !stat(path, &st)) {
		*other = 1;
		return 0;
	}
	/* A chroot in our mount namespace: maps shows the path from our root. */
	xsnprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	n = readlink(path, root, sizeof(root) - 1);
	if (n > 1) {
		root[n] = '\0';
		if (!strncmp(map->path, root, (size_t)n) && map->path[n] == '/' && !stat(map->path, &st))
			*other = 1;
	}
	return 0;
}

int proc_status_parse_nspid(const char *text, pid_t *nspid)
{
	const char *p = strstr(text, "\nNSpid:");
	long last = -1;

	if (!p)
		return -ENOENT;
	p += strlen("\nNSpid:");
	for (;;) {
		char *end;
		long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v <= 0 || v > INT32_MAX)
			return -ENOENT;
		last = v;
		p = end;
	}
	if (last <= 0)
		return -ENOENT;
	*nspid = (pid_t)last;
	return 0;
}

static int status_nspid(const char *path, pid_t self, pid_t *nspid)
{
	char *text;
	int ret = read_file(path, &text, NULL);

	if (ret)
		return ret;
	/* No NSpid line (before Linux 4.1): one namespace as far as we can tell. */
	if (proc_status_parse_nspid(text, nspid))
		*nspid = self;
	free(text);
	return 0;
}

int proc_ns_pid(pid_t pid, pid_t *nspid)
{
	char path[64];

	xsnprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return status_nspid(path, pid, nspid);
}

int proc_ns_tid(pid_t pid, pid_t tid, pid_t *nstid)
{
	char path[96];

	xsnprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	return status_nspid(path, tid, nstid);
}

int proc_ptrace_probe(pid_t pid)
{
	int status;
	pid_t child = fork();

	if (child < 0)
		return -errno;
	if (!child)
		_exit(ptrace(PTRACE_SEIZE, pid, NULL, NULL) ? (errno & 0x7f) : 0);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

size_t kernel_stack_read(pid_t pid, pid_t tid, char **out, size_t max)
{
	char path[96], line[256];
	size_t n = 0;
	FILE *f;

	xsnprintf(path, sizeof(path), "/proc/%d/task/%d/stack", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* "[<0>] do_syscall_64+0x5b/0x110" */
	while (n < max && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ']'), *end;

		if (!p)
			continue;
		p++;
		while (*p == ' ')
			p++;
		end = p + strcspn(p, "+ \n");
		if (end == p)
			continue;
		out[n++] = xstrndup(p, (size_t)(end - p));
	}
	fclose(f);
	/*
	 * A stack entered through an interrupt (asm_sysvec_*, asm_common_interrupt)
	 * belongs to a thread that was running user code and got preempted: the
	 * kernel frames are the scheduler's, not the thread's. Exceptions
	 * (asm_exc_page_fault) and system calls are kept.
	 */
	int ours = 0;

	/* Still leaving the previous sample's stop: the path is framewalk's own. */
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i], "ptrace_stop") || !strcmp(out[i], "ptrace_notify") ||
		    !strcmp(out[i], "get_signal") || !strcmp(out[i], "ptrace_do_notify"))
			ours = 1;
	if (n && (ours || !strncmp(out[n - 1], "asm_sysvec_", 11) ||
		  !strcmp(out[n - 1], "asm_common_interrupt"))) {
		for (size_t i = 0; i < n; i++)
			free(out[i]);
		n = 0;
	}
	return n;
}

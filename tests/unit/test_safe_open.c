/*
 * Unit tests of src/target/safe_open.c: what the one opener of target-named
 * files refuses (FIFO, device, a symlink to one) without blocking, how a
 * path resolves inside a root (an absolute symlink stays in it), and the
 * line reader's bounds (long lines skipped, the total cap, a last line
 * without newline), and a directory's entries opened with no link and no
 * mount followed (as root: a bind mount over one, in a mount namespace of
 * a child's own, is refused with EXDEV).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "target/safe_open.h"

static char dir[64];

static void path_in(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static void write_file(const char *name, const char *text, size_t len)
{
	char p[256];
	FILE *f;

	path_in(p, sizeof(p), name);
	f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/fw-safeopen-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void test_refuses_non_regular(void **state)
{
	char p[256];

	(void)state;
	path_in(p, sizeof(p), "fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	/* a FIFO nobody writes: refused at once, not blocked on */
	assert_int_equal(safe_open_path(p), -EINVAL);
	assert_int_equal(safe_open_in_dir(dir, "/fifo"), -EINVAL);
	path_in(p, sizeof(p), "zero");
	assert_int_equal(symlink("/dev/zero", p), 0);
	assert_int_equal(safe_open_path(p), -EINVAL);
	assert_int_equal(safe_open_path("/dev/zero"), -EINVAL);
	assert_int_equal(safe_open_path(dir), -EINVAL);
	assert_int_equal(safe_open_path(""), -ENOENT);
}

static void test_resolves_inside_root(void **state)
{
	char p[256], buf[16];
	int fd;
	ssize_t n;

	(void)state;
	path_in(p, sizeof(p), "etc");
	assert_int_equal(mkdir(p, 0700), 0);
	write_file("etc/passwd", "inside\n", 7);
	/* an absolute symlink and ".." climbing out resolve in the root */
	path_in(p, sizeof(p), "link");
	assert_int_equal(symlink("/etc/passwd", p), 0);
	fd = safe_open_in_dir(dir, "/link");
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_int_equal(n, 7);
	assert_memory_equal(buf, "inside\n", 7);
	fd = safe_open_in_dir(dir, "/../../../etc/passwd");
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_int_equal(n, 7);
	/* a magic link is refused inside a root */
	path_in(p, sizeof(p), "magic");
	assert_int_equal(symlink("/proc/self/root/etc/hostname", p), 0);
	assert_true(safe_open_in_dir("/", p) < 0);
	assert_int_equal(safe_open_in(-1, "/x"), -EBADF);
}

/*
 * In a child with a mount namespace of its own: file2 bind-mounted over,
 * then opened through the directory as seen in that namespace (as
 * framewalk sees a target's, through /proc/PID/root).
 */
static int entry_over_mount(void)
{
	char file2[256], other[256];
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int fd, dir_fd;

		path_in(file2, sizeof(file2), "file2");
		path_in(other, sizeof(other), "other");
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount(other, file2, NULL, MS_BIND, NULL))
			_exit(2);
		dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		fd = safe_open_entry(dir_fd, "file2");
		_exit(fd == -EXDEV ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void test_entries(void **state)
{
	char p[256];
	int dfd, fd, sub;

	(void)state;
	write_file("file", "x\n", 2);
	write_file("file2", "y\n", 2);
	write_file("other", "secret\n", 7);
	path_in(p, sizeof(p), "efifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	path_in(p, sizeof(p), "elink");
	assert_int_equal(symlink("file", p), 0);
	path_in(p, sizeof(p), "edir");
	assert_int_equal(mkdir(p, 0700), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	fd = safe_open_entry(dfd, "file");
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(safe_open_entry(dfd, "efifo"), -EINVAL);
	assert_true(safe_open_entry(dfd, "elink") < 0);       /* not followed, even inside */
	assert_int_equal(safe_open_entry(dfd, "edir"), -EINVAL);
	assert_int_equal(safe_open_entry(dfd, "edir/../file"), -EINVAL);
	assert_int_equal(safe_open_entry(dfd, ""), -EINVAL);
	assert_true(safe_dir_entry(dfd, "elink") < 0);
	assert_true(safe_dir_entry(dfd, "file") < 0);
	sub = safe_dir_entry(dfd, "edir");
	assert_true(sub >= 0);
	close(sub);
	/* root only (unshare and mount): what CI runs as */
	if (geteuid() == 0)
		assert_int_equal(entry_over_mount(), 0);
	close(dfd);
}

static void test_lines_bounds(void **state)
{
	static char text[3 * SAFE_LINE_MAX];
	struct safe_lines r;
	size_t len = 0;
	char *line;
	int fd;

	(void)state;
	len += (size_t)snprintf(text + len, sizeof(text) - len, "one\n");
	memset(text + len, 'x', SAFE_LINE_MAX + 10);   /* too long: skipped whole */
	len += SAFE_LINE_MAX + 10;
	text[len++] = '\n';
	len += (size_t)snprintf(text + len, sizeof(text) - len, "two\nlast");
	write_file("lines", text, len);
	fd = safe_open_in_dir(dir, "lines");
	assert_true(fd >= 0);
	safe_lines_init(&r, fd, UINT64_MAX);
	line = safe_lines_next(&r);
	assert_string_equal(line, "one");
	line = safe_lines_next(&r);
	assert_string_equal(line, "two");
	line = safe_lines_next(&r);
	assert_string_equal(line, "last");
	assert_null(safe_lines_next(&r));
	close(fd);
	/* the total cap: only the first 6 bytes are read */
	fd = safe_open_in_dir(dir, "lines");
	safe_lines_init(&r, fd, 6);
	assert_string_equal(safe_lines_next(&r), "one");
	assert_string_equal(safe_lines_next(&r), "xx");
	assert_null(safe_lines_next(&r));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refuses_non_regular),
		cmocka_unit_test(test_resolves_inside_root),
		cmocka_unit_test(test_lines_bounds),
		cmocka_unit_test(test_entries),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

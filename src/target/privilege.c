/*
 * Implementation of privilege.h: what framewalk holds beyond its real user,
 * dropping what profiling does not use, and the ownership rule every target
 * passes when framewalk is elevated. Raw capget/capset/prctl: no library,
 * the same in the static build.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "target/privilege.h"
#include "util/util.h"

const struct fw_cap_info privilege_caps[] = {
	{ FW_CAP_SYS_PTRACE, "CAP_SYS_PTRACE", "other users' processes: ptrace, their memory and maps" },
	{ FW_CAP_CHECKPOINT_RESTORE, "CAP_CHECKPOINT_RESTORE",
	  "/proc/PID/map_files: files deleted or replaced since a process mapped them" },
	{ FW_CAP_BPF, "CAP_BPF", "the bpf backend: its program and maps" },
	{ FW_CAP_PERFMON, "CAP_PERFMON", "the bpf backend: perf events on other processes" },
	{ FW_CAP_SYSLOG, "CAP_SYSLOG", "kernel frames' names (/proc/kallsyms)" },
	{ FW_CAP_SYS_ADMIN, "CAP_SYS_ADMIN", "the bpf backend before Linux 5.8 (never kept)" },
};
const size_t privilege_ncaps = sizeof(privilege_caps) / sizeof(privilege_caps[0]);

const char *privilege_cap_name(int cap)
{
	for (size_t i = 0; i < privilege_ncaps; i++)
		if ((int)privilege_caps[i].cap == cap)
			return privilege_caps[i].name;
	return "CAP_?";
}

struct cap_sets {
	uint64_t effective, permitted, inheritable;
};

static int caps_get(struct cap_sets *c)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	c->effective = d[0].effective | (uint64_t)d[1].effective << 32;
	c->permitted = d[0].permitted | (uint64_t)d[1].permitted << 32;
	c->inheritable = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

static int caps_set(const struct cap_sets *c)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	d[0].effective = (uint32_t)c->effective;
	d[1].effective = (uint32_t)(c->effective >> 32);
	d[0].permitted = (uint32_t)c->permitted;
	d[1].permitted = (uint32_t)(c->permitted >> 32);
	d[0].inheritable = (uint32_t)c->inheritable;
	d[1].inheritable = (uint32_t)(c->inheritable >> 32);
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* The ambient set: capabilities whoever started us gave to this user. */
static uint64_t caps_ambient(void)
{
	uint64_t set = 0;

	for (int c = 0; c < 64; c++) {
		int r = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0);

		if (r < 0)
			break;          /* past the last capability, or no ambient sets */
		if (r == 1)
			set |= FW_CAP_BIT(c);
	}
	return set;
}

static int compute_elevated(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	struct cap_sets c;

	if (getauxval(AT_SECURE))
		return 1;
	if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg))
		return 1;       /* cannot tell: assume the worst */
	if (ru != eu || ru != su || rg != eg || rg != sg)
		return 1;
	if (ru == 0)
		return 0;       /* root's capabilities are its own */
	if (caps_get(&c))
		return 1;
	return (c.permitted & ~caps_ambient()) != 0;
}

int privilege_elevated(void)
{
	static int elevated = -1;

	if (elevated < 0)
		elevated = compute_elevated();
	return elevated;
}

int privilege_drop_unneeded(void)
{
	struct cap_sets c;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	int ret;

	if (!privilege_elevated())
		return 0;
	if ((ret = caps_get(&c)))
		return ret;
	if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg))
		return -errno;
	/* set-user/group-ID: become the real user, keeping the permitted set */
	if (ru != eu || ru != su || rg != eg || rg != sg) {
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresgid(rg, rg, rg) < 0 ||
		    setresuid(ru, ru, ru) < 0)
			return -errno;
		prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	}
	c.permitted &= FW_CAPS_USED;
	c.effective = c.permitted;      /* setresuid cleared it; capset raises it back */
	c.inheritable = 0;
	return caps_set(&c);
}

/* "Uid:\tR\tE\tS\tFS" -> the first three. 0 or -EINVAL. */
static int parse_ids(const char *line, unsigned long ids[3])
{
	char *end;

	for (int i = 0; i < 3; i++) {
		while (*line == '\t' || *line == ' ')
			line++;
		errno = 0;
		ids[i] = strtoul(line, &end, 10);
		if (end == line || errno)
			return -EINVAL;
		line = end;
	}
	return 0;
}

static int read_status_ids(int dirfd, unsigned long uids[3], unsigned long gids[3])
{
	char buf[4096], *p;
	ssize_t n;
	int fd, got = 0;

	fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;      /* read after the task died */
	buf[n] = '\0';
	/* both lines come before anything the target can set but its name, on line 1 */
	for (p = strchr(buf, '\n'); p; p = strchr(p + 1, '\n')) {
		if (!strncmp(p + 1, "Uid:", 4) && !parse_ids(p + 5, uids))
			got |= 1;
		else if (!strncmp(p + 1, "Gid:", 4) && !parse_ids(p + 5, gids))
			got |= 2;
	}
	return got == 3 ? 0 : -EINVAL;
}

int privilege_may_profile(pid_t pid, struct strbuf *why)
{
	unsigned long uids[3], gids[3];
	char path[64];
	struct stat st;
	uid_t me = getuid();
	gid_t mygid = getgid();
	int dirfd, ret;

	if (!privilege_elevated())
		return 0;
	xsnprintf(path, sizeof(path), "/proc/%d", (int)pid);
	/* one directory: the status and the owner are the same process's */
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -ESRCH;
	ret = fstat(dirfd, &st) ? -errno : read_status_ids(dirfd, uids, gids);
	close(dirfd);
	if (ret == -ESRCH || ret == -ENOENT)
		return -ESRCH;
	if (ret) {
		strbuf_addf(why, "cannot read the owner of process %d: %s", (int)pid,
			    strerror(-ret));
		return -EPERM;
	}
	for (int i = 0; i < 3; i++)
		if (uids[i] != me) {
			strbuf_addf(why, "process %d belongs to another user (uid %lu); this "
				    "framewalk holds capabilities its user (uid %u) lacks and "
				    "profiles only that user's own processes", (int)pid, uids[i],
				    (unsigned)me);
			return -EPERM;
		}
	for (int i = 0; i < 3; i++)
		if (gids[i] != mygid) {
			strbuf_addf(why, "process %d runs with another group (gid %lu); this "
				    "framewalk holds capabilities its user lacks and profiles only "
				    "processes of that user and group (gid %u)", (int)pid, gids[i],
				    (unsigned)mygid);
			return -EPERM;
		}
	/* not dumpable: the kernel shows its /proc directory as root's */
	if (st.st_uid != me) {
		strbuf_addf(why, "process %d is not dumpable (it changed its ids, or set "
			    "PR_SET_DUMPABLE 0); this framewalk holds capabilities its user lacks "
			    "and profiles only what that user could trace without them", (int)pid);
		return -EPERM;
	}
	return 0;
}

const char *privilege_refusal_hint(void)
{
	return "run framewalk as the process's own user, or as root (sudo framewalk ...); "
	       "see docs/CHECK.md, \"Giving framewalk capabilities\"";
}

void privilege_cap_names(struct strbuf *out, uint64_t caps, const char *prefix,
			 const char *between, int short_names)
{
	int first = 1;

	for (size_t i = 0; i < privilege_ncaps; i++) {
		if (!(caps & FW_CAP_BIT(privilege_caps[i].cap)))
			continue;
		strbuf_addf(out, "%s%s%s", first ? "" : between, prefix,
			    privilege_caps[i].name + (short_names ? 4 : 0));
		first = 0;
	}
}

void privilege_grant_fix(struct strbuf *out, uint64_t caps, const char *exe)
{
	static const char copy[] = "/usr/local/lib/framewalk/framewalk";
	int first = 1;

	strbuf_addf(out, "sudo groupadd -f framewalk && sudo install -D -o root -g framewalk "
		    "-m 0750 %s %s && sudo setcap ", exe, copy);
	/* setcap's names: lower case, in the table's order */
	for (size_t i = 0; i < privilege_ncaps; i++) {
		if (!(caps & FW_CAP_BIT(privilege_caps[i].cap)))
			continue;
		if (!first)
			strbuf_addch(out, ',');
		first = 0;
		for (const char *p = privilege_caps[i].name; *p; p++)
			strbuf_addch(out, (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p));
	}
	strbuf_addf(out, "+ep %s, then sudo usermod -aG framewalk USER for each trusted user "
		    "(docs/CHECK.md)", copy);
}

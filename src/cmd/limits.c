/*
 * The open-file limit a capture runs under: raised to the hard limit when
 * the soft one is lower (it only concerns framewalk itself), then checked
 * against what the chosen backend needs before anything is sampled, so a
 * low `ulimit -n` fails with one line naming the limit and the fix, or
 * degrades and says so, instead of a capture with silently missing data.
 *
 * What a capture holds open besides what is open now (stdio, the outputs):
 * a few files at a time for /proc and ELF reads, a separate debug file per
 * module that has one (native stacks), and what the backend's row says it
 * holds itself (struct backend_info: bpf's perf event and link per CPU, its
 * program and maps; its per-thread events, opened when it attaches to
 * processes, it bounds itself to a quarter of the limit, bpf.c's
 * attach_task_events). Per-thread /proc files are kept open
 * only within target/taskstat.h's budget and reopened per reading past it.
 */
#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>

#include "cmd/cmd.h"
#include "target/proc.h"
#include "target/taskstat.h"
#include "util/file.h"
#include "util/strbuf.h"
#include "util/util.h"

#define TRANSIENT_FDS 4         /* /proc reads, an ELF being opened, kallsyms */
#define NATIVE_FDS 4            /* separate debug files (without room: fewer names, reported) */
/* A backend's own descriptors are in its row (struct backend_info). */

static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 16;          /* cannot tell: assume a handful */
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0;       /* the directory's own descriptor */
}

size_t cmd_fd_need(const struct sampler_opts *so, size_t open_now, int ncpus)
{
	const struct backend_info *bi = backend_info(so->backend);
	size_t need = open_now + TRANSIENT_FDS;

	if (so->native || (bi && bi->native))
		need += NATIVE_FDS;
	if (bi)
		need += bi->fds_fixed + bi->fds_per_cpu * (size_t)(ncpus > 0 ? ncpus : 1);
	return need;
}

/*
 * Who needs them, for the message: "the bpf backend" (one that holds
 * descriptors per CPU, and the next in auto's order that holds none),
 * "a native capture" or "a capture".
 */
static void say_needer(struct strbuf *who, struct strbuf *where, const struct sampler_opts *so)
{
	const struct backend_info *bi = backend_info(so->backend);

	if (bi && bi->fds_per_cpu) {
		strbuf_addf(who, "the %s backend", bi->name);
		strbuf_addstr(where, " on this machine's CPUs");
		if (backend_fewer_descriptors() != BACKEND_AUTO)
			strbuf_addf(where, " (or use --backend %s, which needs fewer)",
				    backend_name(backend_fewer_descriptors()));
	} else {
		strbuf_addstr(who, bi && bi->native ? "a native capture" : "a capture");
	}
}

int cmd_fd_limits(const struct sampler_opts *so, const struct py_target *targets, size_t n)
{
	struct rlimit rl;
	size_t need, threads = 0;
	int ncpus = get_nprocs_conf();

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return FW_EXIT_OK;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur == RLIM_INFINITY)
			return FW_EXIT_OK;
	}
	need = cmd_fd_need(so, open_fds(), ncpus);
	if (rl.rlim_cur < need) {
		struct strbuf who = STRBUF_INIT, where = STRBUF_INIT;

		say_needer(&who, &where, so);
		fw_error("the open-file limit (ulimit -n %llu) is too low: %s needs about %zu "
			 "descriptors%s; raise it: ulimit -n %d", (unsigned long long)rl.rlim_cur,
			 strbuf_str(&who), need, strbuf_str(&where), FW_NOFILE_SUGGESTED);
		strbuf_release(&who);
		strbuf_release(&where);
		return FW_EXIT_FAILURE;
	}
	for (size_t i = 0; i < n; i++) {
		pid_t *tids;
		size_t ntids;

		if (!proc_tasks(targets[i].pid, &tids, &ntids)) {
			threads += ntids;
			free(tids);
		}
	}
	/* Three files per thread (state, system call, CPU time) when kept open. */
	if (n && taskstat_fd_budget(rl.rlim_cur) < 3 * threads)
		fw_warning("the open-file limit is low (ulimit -n %llu): the per-thread /proc files of "
			   "%zu threads are reopened for each reading instead of kept open (more system "
			   "calls per sample); for the full rate: ulimit -n %d",
			   (unsigned long long)rl.rlim_cur, threads, FW_NOFILE_SUGGESTED);
	return FW_EXIT_OK;
}

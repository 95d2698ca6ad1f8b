/* Implementation of pidns.h over /proc/PID/task/TID/status (target/proc.h). */
#include <errno.h>

#include "target/pidns.h"
#include "target/proc.h"
#include "util/util.h"

void pidns_tids_init(struct pidns_tids *m, pid_t pid)
{
	pid_t nspid;

	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->foreign = !proc_ns_pid(pid, &nspid) && nspid != pid;
}

void pidns_tids_release(struct pidns_tids *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static void reread(struct pidns_tids *m)
{
	pid_t *tids;
	size_t n;

	m->read_ns = fw_now_ns();
	if (proc_tasks(m->pid, &tids, &n))
		return;
	m->n = 0;
	for (size_t i = 0; i < n; i++) {
		pid_t ns;

		if (proc_ns_tid(m->pid, tids[i], &ns))
			continue;       /* the thread exited meanwhile */
		m->v = xgrow(m->v, sizeof(*m->v), m->n + 1, &m->alloc);
		m->v[m->n].ns = ns;
		m->v[m->n].host = tids[i];
		m->n++;
	}
	free(tids);
}

static pid_t lookup(const struct pidns_tids *m, pid_t ns_tid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].ns == ns_tid)
			return m->v[i].host;
	return 0;
}

pid_t pidns_host_tid(struct pidns_tids *m, pid_t ns_tid)
{
	pid_t host;

	if (!m->foreign || ns_tid <= 0)
		return ns_tid;
	host = lookup(m, ns_tid);
	if (!host && (!m->read_ns || fw_now_ns() - m->read_ns >= PIDNS_REREAD_NS)) {
		reread(m);
		host = lookup(m, ns_tid);
	}
	return host;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

int pidns_target_tids(struct pidns_tids *m, pid_t **tids, size_t *n)
{
	if (!m->foreign)
		return proc_tasks(m->pid, tids, n);
	reread(m);
	*n = m->n;
	*tids = xmalloc((m->n ? m->n : 1) * sizeof(**tids));
	for (size_t i = 0; i < m->n; i++)
		(*tids)[i] = m->v[i].ns;
	sort_array(*tids, *n, sizeof(**tids), cmp_pid);
	return 0;
}

/*
 * Implementation of remote_exec.h: the PEP 768 request, written field by
 * field at the offsets the target's own _Py_DebugOffsets block gives
 * (positions from the generated layout table, python/offsets_table.c).
 */
#include <errno.h>
#include <string.h>

#include "python/objects.h"
#include "python/remote_exec.h"
#include "util/util.h"

#define REXEC_MAX_THREADS 4096
#define MAX_TSTATE_OFFSET 8192
#define MAX_INTERP_OFFSET (1 << 20)
/* _PY_EVAL_PLEASE_STOP_BIT (pycore_ceval.h, 3.14 and 3.15): what sys.remote_exec sets */
#define EVAL_PLEASE_STOP_BIT (1ull << 5)

/* The debugger_support values of t's block, range-checked. */
struct dbg_support {
	uint64_t eval_breaker, support, enabled, pending, path, path_size;
	uint64_t interp;            /* the main interpreter */
};

static int block_value(const uint8_t *block, size_t len, int32_t pos, uint64_t limit,
		       uint64_t *v)
{
	if (pos == PYOFF_NONE || pos < 0 || (size_t)pos + 8 > len)
		return -ENOTSUP;
	memcpy(v, block + pos, sizeof(*v));
	return *v < limit ? 0 : -EPROTO;
}

static int read_support(struct target_mem *m, const struct py_target *t, struct dbg_support *d,
			struct strbuf *why)
{
	const struct py_debug_offsets_layout *l;
	uint8_t block[4096];
	int ret;

	if (t->major != 3 || t->minor < 14) {
		strbuf_addf(why, "Python %s has no remote execution (PEP 768 came in 3.14)",
			    t->version);
		return -ENOTSUP;
	}
	l = py_debug_layout(t->minor, t->offsets.free_threaded);
	if (!l || l->dbg_pending_call == PYOFF_NONE || (size_t)l->block_size > sizeof(block)) {
		strbuf_addf(why, "no remote-execution layout known for Python %s", t->version);
		return -ENOTSUP;
	}
	ret = mem_read(m, t->runtime_addr, block, (size_t)l->block_size);
	if (ret) {
		strbuf_addf(why, "reading its debug offsets failed: %s", strerror(-ret));
		return ret;
	}
	if (memcmp(block, "xdebugpy", 8)) {
		strbuf_addstr(why, "its debug offsets are invalid (no xdebugpy cookie)");
		return -EPROTO;
	}
	ret = block_value(block, (size_t)l->block_size, l->dbg_eval_breaker, MAX_TSTATE_OFFSET,
			  &d->eval_breaker);
	if (!ret)
		ret = block_value(block, (size_t)l->block_size, l->dbg_remote_support,
				  MAX_TSTATE_OFFSET, &d->support);
	if (!ret)
		ret = block_value(block, (size_t)l->block_size, l->dbg_remote_enabled,
				  MAX_INTERP_OFFSET, &d->enabled);
	if (!ret)
		ret = block_value(block, (size_t)l->block_size, l->dbg_pending_call, 64,
				  &d->pending);
	if (!ret)
		ret = block_value(block, (size_t)l->block_size, l->dbg_script_path, 64, &d->path);
	if (!ret)
		ret = block_value(block, (size_t)l->block_size, l->dbg_script_path_size,
				  MEM_WRITE_MAX + 1, &d->path_size);
	if (!ret && (d->path_size < 2 || d->pending + 4 > d->path))
		ret = -EPROTO;
	if (ret) {
		strbuf_addstr(why, "its debug offsets give no valid remote-execution fields");
		return ret == -ENOTSUP ? -ENOTSUP : -EPROTO;
	}
	ret = mem_read_u64(m, t->runtime_addr + (uint64_t)t->offsets.runtime_interpreters_head,
			   &d->interp);
	if (!ret && !d->interp)
		ret = -EAGAIN;
	if (ret) {
		strbuf_addstr(why, "its interpreter cannot be read (starting or exiting?)");
		return ret;
	}
	return 0;
}

/*
 * Is __main__ in sys.modules? The interpreter opens a remote script with
 * _io.open (PyFile_OpenCodeObject, imported then): a request taken while
 * its start-up still installs the import system (its first thread state,
 * even _io, come well before) fails inside it ("Can't open debugger
 * script", a SystemError from importlib's bootstrap), the request cleared
 * and nothing run: seen under load. The main module is added once imports
 * work, before site and the program. 0 yes; -ENOENT or -EAGAIN not yet;
 * another -errno: cannot be told (the request's own wait is the bound).
 */
static int main_module_made(struct target_mem *m, const struct py_target *t)
{
	struct py_reader r;
	struct py_objects ob;
	uint64_t module;
	int ret;

	py_reader_init(&r, m, t);
	ret = py_objects_init(&ob, &r);
	if (!ret)
		ret = py_module(&ob, "__main__", &module);
	py_objects_release(&ob);
	py_reader_release(&r);
	return ret;
}

int py_rexec_check(struct target_mem *m, const struct py_target *t, struct strbuf *why)
{
	struct dbg_support d;
	int32_t enabled;
	int ret;

	if (t->offsets.free_threaded && t->major == 3 && t->minor >= 14) {
		strbuf_addf(why, "Python %s is a free-threaded build: counting calls there is not "
			    "supported (its monitoring callbacks run concurrently)", t->version);
		return -EOPNOTSUPP;
	}
	ret = read_support(m, t, &d, why);
	if (ret)
		return ret;
	ret = mem_read(m, d.interp + d.enabled, &enabled, sizeof(enabled));
	if (ret) {
		strbuf_addf(why, "reading its remote_debug setting failed: %s", strerror(-ret));
		return ret;
	}
	if (enabled != 1) {
		strbuf_addstr(why, "remote debugging is disabled in it (PYTHON_DISABLE_REMOTE_DEBUG "
			      "or -X disable-remote-debug, or a build without it)");
		return -EPERM;
	}
	return 0;
}

int py_rexec_ready(struct target_mem *m, const struct py_target *t)
{
	struct strbuf why = STRBUF_INIT;
	struct dbg_support d;
	uint64_t first = 0;
	int ret = read_support(m, t, &d, &why);

	strbuf_release(&why);
	if (ret)
		return ret == -EAGAIN ? ret : 0;
	/* its configuration is copied in before its first thread state is made */
	if (!mem_read_u64(m, d.interp + (uint64_t)t->offsets.interp_threads_head, &first) &&
	    !first)
		return -EAGAIN;
	ret = main_module_made(m, t);
	return ret == -ENOENT || ret == -EAGAIN ? -EAGAIN : 0;
}

/* The main thread's state (native id == pid), else the first listed. */
static int pick_thread(struct target_mem *m, const struct py_target *t, uint64_t interp,
		       uint64_t *tstate, int32_t *tid)
{
	const struct py_offsets *o = &t->offsets;
	uint64_t ts, first = 0;
	int32_t first_tid = 0;
	int ret;

	ret = mem_read_u64(m, interp + (uint64_t)o->interp_threads_head, &ts);
	for (int n = 0; !ret && ts && n < REXEC_MAX_THREADS; n++) {
		int32_t ntid = 0;

		if (o->tstate_native_thread_id != PYOFF_NONE)
			ret = mem_read(m, ts + (uint64_t)o->tstate_native_thread_id, &ntid,
				       sizeof(ntid));
		if (ret)
			break;
		if (!first) {
			first = ts;
			first_tid = ntid;
		}
		if (ntid == (int32_t)t->pid) {
			*tstate = ts;
			*tid = ntid;
			return 0;
		}
		ret = mem_read_u64(m, ts + (uint64_t)o->tstate_next, &ts);
	}
	if (ret)
		return ret;
	if (!first)
		return -EAGAIN;
	*tstate = first;
	*tid = first_tid;
	return 0;
}

int py_rexec_send(struct target_mem *m, const struct py_target *t, const char *path,
		  struct py_rexec *rq, struct strbuf *why)
{
	struct dbg_support d;
	char buf[MEM_WRITE_MAX];
	size_t len = strlen(path);
	int32_t pending, one = 1;
	uint64_t breaker;
	int ret;

	memset(rq, 0, sizeof(*rq));
	ret = py_rexec_check(m, t, why);
	if (ret)
		return ret;
	ret = read_support(m, t, &d, why);
	if (ret)
		return ret;
	if (len + 1 > d.path_size || len + 1 > sizeof(buf)) {
		strbuf_addf(why, "the script path is longer than the target's buffer (%llu bytes)",
			    (unsigned long long)d.path_size);
		return -ENAMETOOLONG;
	}
	ret = pick_thread(m, t, d.interp, &rq->tstate, &rq->tid);
	if (ret) {
		strbuf_addstr(why, "no thread state to ask");
		return ret;
	}
	rq->pending_addr = rq->tstate + d.support + d.pending;
	ret = mem_read(m, rq->pending_addr, &pending, sizeof(pending));
	if (!ret && pending) {
		strbuf_addstr(why, "another debugger's remote-execution request is still pending in "
			      "it");
		return -EBUSY;
	}
	/* the path with its NUL: the interpreter copies the whole buffer and ends it itself */
	memcpy(buf, path, len + 1);
	if (!ret)
		ret = mem_write(m, rq->tstate + d.support + d.path, buf, len + 1);
	if (!ret)
		ret = mem_write(m, rq->pending_addr, &one, sizeof(one));
	/*
	 * As sys.remote_exec does: read, set the bit, write back. A bit the
	 * interpreter sets between the two is lost once; each is re-set by its
	 * own cause (a GIL drop request again after the switch interval).
	 */
	if (!ret)
		ret = mem_read_u64(m, rq->tstate + d.eval_breaker, &breaker);
	if (!ret) {
		breaker |= EVAL_PLEASE_STOP_BIT;
		ret = mem_write(m, rq->tstate + d.eval_breaker, &breaker, sizeof(breaker));
	}
	if (ret)
		strbuf_addf(why, "writing the request failed: %s", strerror(-ret));
	return ret;
}

int py_rexec_pending(struct target_mem *m, const struct py_rexec *rq)
{
	int32_t pending;
	int ret = mem_read(m, rq->pending_addr, &pending, sizeof(pending));

	return ret ? ret : pending != 0;
}

int py_rexec_withdraw(struct target_mem *m, const struct py_rexec *rq)
{
	int32_t zero = 0;
	int ret = py_rexec_pending(m, rq);

	if (ret <= 0)
		return ret;
	return mem_write(m, rq->pending_addr, &zero, sizeof(zero));
}

/*
 * framewalk dump: print every thread's current Python stack once, like
 * py-spy dump: thread name and native id, on or off CPU, frames innermost
 * last with file:line. A torn read (the target keeps running) is retried.
 */
#include <errno.h>
#include <getopt.h>

#include "cmd/cmd.h"
#include "output/format.h"
#include "python/reader.h"
#include "target/proc.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

#define DUMP_TRIES 5

static const char dump_usage[] =
	"usage: framewalk dump -p PID\n"
	"\n"
	"Print the current Python stack of every thread of a process, innermost\n"
	"frame last, without stopping it.\n"
	"\n"
	"  -p, --pid PID   the process\n"
	"  -h, --help      this help\n";

static void print_thread(struct py_reader *r, const struct py_thread_info *t,
			 struct py_frame_info *frames)
{
	struct strbuf sb = STRBUF_INIT;
	char name[64] = "?", state = '?';
	size_t depth = 0;
	int ret = -EFAULT;

	if (t->tid > 0) {
		proc_task_comm(r->target->pid, t->tid, name, sizeof(name));
		proc_task_state(r->target->pid, t->tid, &state);
	}
	escape_append(&sb, name, ESCAPE_TERMINAL);
	printf("\nThread %d \"%s\" %s\n", (int)t->tid, strbuf_str(&sb),
	       state == 'R' ? "on-cpu" : "off-cpu");
	if (!t->frame) {
		printf("  (no Python frames)\n");
		strbuf_release(&sb);
		return;
	}
	for (int i = 0; i < DUMP_TRIES && ret; i++)
		ret = py_reader_stack(r, t, frames, PY_MAX_DEPTH, &depth);
	if (ret) {
		printf("  (stack unreadable: %s)\n", strerror(-ret));
		strbuf_release(&sb);
		return;
	}
	for (size_t k = depth; k-- > 0;) {
		strbuf_reset(&sb);
		escape_append(&sb, frames[k].code->name, ESCAPE_TERMINAL);
		strbuf_addstr(&sb, " (");
		escape_append(&sb, frames[k].code->file, ESCAPE_TERMINAL);
		strbuf_addf(&sb, ":%d)", frames[k].line);
		printf("  %s\n", strbuf_str(&sb));
	}
	strbuf_release(&sb);
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct py_thread_info *threads;
	struct py_frame_info *frames;
	struct target_mem mem;
	struct py_target t;
	struct py_reader r;
	struct strbuf sb = STRBUF_INIT;
	char comm[64] = "?";
	size_t n = 0;
	int c, pid = 0, ret = -EFAULT, code;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pid(optarg, &pid)) {
				fw_error("bad process id: '%s'", optarg);
				return FW_EXIT_USAGE;
			}
			break;
		case 'h':
			fputs(dump_usage, stdout);
			return FW_EXIT_OK;
		default:
			fw_error("unknown option or missing value: '%s'", argv[optind - 1]);
			fw_hint("see framewalk dump --help");
			return FW_EXIT_USAGE;
		}
	}
	if (!pid) {
		fw_error("nothing to dump: give -p PID");
		return FW_EXIT_USAGE;
	}
	code = cmd_attach(pid, &t);
	if (code)
		return code;
	mem_init_pid(&mem, pid);
	py_reader_init(&r, &mem, &t);
	threads = xcalloc(PY_MAX_THREADS, sizeof(*threads));
	frames = xcalloc(PY_MAX_DEPTH, sizeof(*frames));
	for (int i = 0; i < DUMP_TRIES && ret; i++)
		ret = py_reader_threads(&r, threads, PY_MAX_THREADS, &n);
	proc_task_comm(pid, pid, comm, sizeof(comm));
	escape_append(&sb, comm, ESCAPE_TERMINAL);
	printf("Process %d (%s), Python %s\n", pid, strbuf_str(&sb), t.version);
	if (ret == -EAGAIN)
		printf("\n(the interpreter has no threads: starting up or shutting down)\n");
	else if (ret)
		fw_error("cannot read the thread list of process %d: %s", pid, strerror(-ret));
	for (size_t i = 0; !ret && i < n; i++)
		print_thread(&r, &threads[i], frames);
	free(threads);
	free(frames);
	py_reader_release(&r);
	strbuf_release(&sb);
	return ret && ret != -EAGAIN ? FW_EXIT_FAILURE : FW_EXIT_OK;
}

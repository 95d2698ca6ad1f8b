/*
 * Attaching to a target for any command: discovery plus the one-line error
 * and hint users need for each way it can fail (no process, not Python but a
 * child is, unsupported version, permission).
 */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/env.h"
#include "cmd/cmd.h"
#include "target/privilege.h"
#include "target/proc.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

/*
 * Why pid cannot be read, and the fix: from the audit `check` runs (the
 * reasons and fixes of the backend that reads Python frames, for this
 * target), so record, dump, top and check give the same hint.
 */
void cmd_permission_hints(pid_t pid)
{
	struct audit_backend b[BACKEND_COUNT], *vm;
	struct audit_target t;
	struct audit_env e;

	audit_env_probe(&e);
	if (audit_target_probe(&e, pid, &t)) {
		fw_hint("process %d is gone", (int)pid);
		return;
	}
	audit_backends(&e, &t, b);
	/* vm's verdict: it reads what every capture needs */
	vm = &b[BACKEND_VM];
	if (vm->reason.len)
		fw_hint("%s", strbuf_str(&vm->reason));
	for (size_t k = 0; k < vm->nfixes; k++)
		fw_hint("fix: %s", vm->fixes[k]);
	if (!vm->nfixes)
		fw_hint("see `framewalk check -p %d` for what this machine allows", (int)pid);
	audit_backends_release(b);
}

/* If a child (or grandchild) of pid runs Python, name it. */
static void hint_python_child(pid_t pid, int depth)
{
	pid_t *kids;
	size_t n;

	if (depth > 2 || proc_children(pid, &kids, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct target_mem mem;
		struct py_target t;
		struct strbuf why = STRBUF_INIT;
		char cmdline[256] = "";

		mem_init_pid(&mem, kids[i]);
		if (py_discover(kids[i], &mem, &t, &why) != -ENOEXEC) {
			proc_cmdline(kids[i], cmdline, sizeof(cmdline));
			fw_hint("its child process %d is a Python process (%s): use -p %d",
				(int)kids[i], cmdline, (int)kids[i]);
			strbuf_release(&why);
			free(kids);
			return;
		}
		strbuf_release(&why);
		hint_python_child(kids[i], depth + 1);
	}
	free(kids);
}

int cmd_attach(pid_t pid, struct py_target *t)
{
	struct strbuf why = STRBUF_INIT;
	struct target_mem mem;
	uint64_t probe;
	int ret, code = FW_EXIT_OK;

	/* its own reason and hint: a capability would not help, it is what is refused */
	ret = privilege_may_profile(pid, &why);
	if (ret == -EPERM) {
		fw_error("%s", strbuf_str(&why));
		fw_hint("%s", privilege_refusal_hint());
		strbuf_release(&why);
		return FW_EXIT_PERMISSION;
	}
	mem_init_pid(&mem, pid);
	ret = py_discover(pid, &mem, t, &why);
	/* Discovery of <= 3.12 reads only files: check the memory is readable. */
	if (!ret && mem_read_u64(&mem, t->runtime_addr, &probe) == -EPERM) {
		strbuf_addf(&why, "permission denied reading the memory of process %d", (int)pid);
		ret = -EPERM;
	}
	switch (ret) {
	case 0:
		break;
	case -ESRCH:
		fw_error("no such process: %d", (int)pid);
		code = FW_EXIT_NO_PROCESS;
		break;
	case -EPERM:
		fw_error("%s", strbuf_str(&why));
		cmd_permission_hints(pid);
		code = FW_EXIT_PERMISSION;
		break;
	case -ENOEXEC:
		fw_error("%s", strbuf_str(&why));
		hint_python_child(pid, 0);
		code = FW_EXIT_NOT_PYTHON;
		break;
	case -ENOTSUP:
		fw_error("%s", strbuf_str(&why));
		strbuf_reset(&why);
		fw_hint("supported: CPython %s", py_supported_text(&why, 1));
		code = FW_EXIT_UNSUPPORTED;
		break;
	case -EACCES:       /* a deleted or replaced module needs a privilege to open */
		fw_error("%s", strbuf_str(&why));
		code = FW_EXIT_PERMISSION;
		break;
	case -EMFILE:       /* the open-file limit */
	case -EIO:
		fw_error("%s", strbuf_str(&why));
		code = FW_EXIT_FAILURE;
		break;
	default:
		fw_error("%s", strbuf_str(&why));
		code = FW_EXIT_UNSUPPORTED;
		break;
	}
	strbuf_release(&why);
	return code;
}

int cmd_output_error(const char *path, int err)
{
	struct stat st;

	if (err == -ENXIO && !lstat(path, &st)) {
		fw_error("output path %s is a %s, not a regular file: refused", path,
			 S_ISFIFO(st.st_mode) ? "FIFO" : S_ISSOCK(st.st_mode) ? "socket" :
			 "device");
		fw_hint("framewalk writes only regular files (or /dev/null); remove it or choose "
			"another path, or use -o - for standard output");
		return FW_EXIT_OUTPUT;
	}
	fw_error("output file not writable: %s: %s", path, strerror(-err));
	fw_hint("choose a path in a writable directory with -o");
	return FW_EXIT_OUTPUT;
}

volatile sig_atomic_t cmd_stop_requested;

/* Counted: a second stop signal cuts short what the first one began (the counts' reading). */
static void on_stop_signal(int sig)
{
	(void)sig;
	if (cmd_stop_requested < 100)
		cmd_stop_requested = cmd_stop_requested + 1;
}

void cmd_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	/* one handler at a time: the count's increment is not interrupted */
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sa.sa_flags = 0;          /* no SA_RESTART: sleeps end at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int cmd_choose_backend(const char *cmd, struct sampler_opts *so, pid_t probe_pid)
{
	struct strbuf why = STRBUF_INIT, announce = STRBUF_INIT;
	int ret = backend_choose(so, probe_pid, &why, &announce);

	if (ret == -EINVAL) {
		cmd_usage_error(cmd, "%s", strbuf_str(&why));
	} else if (ret) {
		fw_error("%s", strbuf_str(&why));
	} else if (so->announce && announce.len) {
		fw_note("%s", strbuf_str(&announce));
	}
	strbuf_release(&why);
	strbuf_release(&announce);
	return ret == -EINVAL ? FW_EXIT_USAGE : ret ? FW_EXIT_PERMISSION : FW_EXIT_OK;
}

const struct cmd_stop_outcome *cmd_stop_outcome(enum sampler_stop reason)
{
	static const struct cmd_stop_outcome table[] = {
		[SAMPLER_STOP_DURATION] = { "duration reached", NULL, FW_EXIT_OK, 1, 0 },
		[SAMPLER_STOP_SIGNAL] = { "interrupted", NULL, FW_EXIT_OK, 1, 0 },
		[SAMPLER_STOP_TARGET_EXIT] = { "target exited", NULL, FW_EXIT_OK, 1, 1 },
		[SAMPLER_STOP_ERROR] = { "access lost",
			"lost access to a target during the capture (ptrace or memory reads refused)",
			FW_EXIT_PERMISSION, 0, 0 },
		[SAMPLER_STOP_HOOK] = { "stopped", NULL, FW_EXIT_OK, 0, 0 },
		[SAMPLER_STOP_EXEC] = { "target exec'd a program that is not Python", NULL,
			FW_EXIT_OK, 1, 1 },
	};
	static const struct cmd_stop_outcome other = { "stopped", NULL, FW_EXIT_OK, 0, 0 };

	return (size_t)reason < ARRAY_SIZE(table) && table[reason].text ? &table[reason] : &other;
}

int cmd_backend_failed(const char *name, int err, const struct strbuf *why)
{
	fw_error("the %s backend could not start: %s", name,
		 why->len ? strbuf_str(why) : strerror(-err));
	if (err == -EPERM || err == -EACCES) {
		fw_hint("framewalk check says what this machine allows and the narrowest fix");
		return FW_EXIT_PERMISSION;
	}
	return FW_EXIT_FAILURE;
}

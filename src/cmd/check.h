/*
 * What `framewalk check` shares between its parts: the options, the facts
 * gathered (audit/gather.h), the verdict (problems and the exit code,
 * decided in check.c) and the two renderers of them all, text
 * (check_text.c) and JSON (check_json.c).
 */
#ifndef FRAMEWALK_CMD_CHECK_H
#define FRAMEWALK_CMD_CHECK_H

#include <sys/types.h>

#include "audit/gather.h"
#include "sampler/sampler.h"
#include "util/strbuf.h"

enum check_mode { CHECK_MACHINE, CHECK_PROCESS, CHECK_INSTALL, CHECK_FILES };

/* check_opts.need: the backends required, a bit per enum backend */
#define CHECK_NEED(b) (1u << (b))

struct check_opts {
	enum check_mode mode;
	pid_t pid;
	const char *python;
	const char *root;
	const char *site;               /* NULL: none; "": the installation's own */
	unsigned need;                  /* CHECK_NEED(backend) bits */
	int need_given;
	int native;
	int json;
	int verbose;
	char **files;
	int nfiles;
};

#define CHECK_MAX_PROBLEMS 16

struct check {
	struct check_opts o;
	struct audit_facts f;
	struct strbuf problems[CHECK_MAX_PROBLEMS];
	size_t nproblems;
	int exit_code;
};

/* The audit's verdict on backend b (not BACKEND_AUTO). */
const struct audit_backend *check_backend(const struct check *c, enum backend b);
/* Was backend b required? */
int check_requires(const struct check *c, enum backend b);

/*
 * The backend record and top choose here by default (backend_auto_pick on
 * what the audit found), and whether it gives whole stacks in cpu mode
 * (whole_stacks may be NULL).
 */
enum backend check_default_backend(const struct check *c, int *whole_stacks);

void check_print_text(const struct check *c);
/* 0 or -errno of writing it. */
int check_print_json(const struct check *c);

#endif

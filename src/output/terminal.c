/*
 * Implementation of terminal.h. The system's terminfo is asked first
 * (setupterm); only when it has no entry for $TERM is a built-in one written
 * to a private temporary directory that TERMINFO points at while newterm
 * reads it, then removed: ncurses keeps what it read in memory, and the
 * TERMINFO environment variable is its documented way to name a database.
 * An exception to "only cmd/ reads the environment", linked into the
 * executable for top alone: ncurses takes its terminal (TERM) and database
 * (TERMINFO) from the environment, so this file reads them, sets TERMINFO
 * and restores it, and puts the database under TMPDIR as mkdtemp's users do.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <term.h>
#include <unistd.h>

#include "output/terminal.h"
#include "util/file.h"
#include "util/util.h"

const struct term_entry *term_builtin_find(const char *name)
{
	for (size_t i = 0; name && i < term_builtin_count; i++)
		if (!strcmp(term_builtin[i].name, name))
			return &term_builtin[i];
	return NULL;
}

enum probe { TERM_USABLE, TERM_NO_CURSOR, TERM_NO_ENTRY };

/* What the terminfo currently visible says about $TERM on fd. */
static enum probe probe_term(int fd)
{
	int err = 0;
	const char *cup;
	enum probe r;

	/* err: 1 a hardcopy terminal, 0 no such entry, -1 no database at all */
	if (setupterm(NULL, fd, &err) != OK)
		return err == 1 ? TERM_NO_CURSOR : TERM_NO_ENTRY;
	cup = tigetstr("cup");
	r = cup && cup != (const char *)-1 ? TERM_USABLE : TERM_NO_CURSOR;
	del_curterm(cur_term);
	return r;
}

struct temp_db {
	char dir[PATH_MAX];             /* mkdtemp'd database root, "" when none */
	char sub[PATH_MAX];             /* dir/<first letter> */
	char file[PATH_MAX];            /* sub/<name> */
	char *old_terminfo;             /* TERMINFO before, or NULL when unset */
	int env_set;                    /* TERMINFO points at dir */
};

/* Write e as the only entry of a new database and point TERMINFO at it. */
static int temp_db_create(struct temp_db *db, const struct term_entry *e)
{
	static const char *const bases[] = { NULL, "/tmp", "/dev/shm" };
	int fd, err = -ENOENT;

	memset(db, 0, sizeof(*db));
	if (getenv("TERMINFO"))
		db->old_terminfo = xstrdup(getenv("TERMINFO"));
	for (size_t i = 0; i < ARRAY_SIZE(bases) && !db->dir[0]; i++) {
		const char *base = i ? bases[i] : getenv("TMPDIR");

		if (!base || !*base ||
		    xsnprintf(db->dir, sizeof(db->dir), "%s/framewalk-terminfo.XXXXXX", base) < 0 ||
		    !mkdtemp(db->dir)) {
			err = -errno;
			db->dir[0] = '\0';
		}
	}
	if (!db->dir[0])
		return err;
	if (xsnprintf(db->sub, sizeof(db->sub), "%s/%c", db->dir, e->name[0]) < 0 ||
	    xsnprintf(db->file, sizeof(db->file), "%s/%s", db->sub, e->name) < 0)
		return -ENAMETOOLONG;
	if (mkdir(db->sub, 0700))
		return -errno;
	fd = open(db->file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_fd_all(fd, e->data, e->size);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		return err;
	if (setenv("TERMINFO", db->dir, 1))
		return -errno;
	db->env_set = 1;
	return 0;
}

static void temp_db_remove(struct temp_db *db)
{
	if (db->file[0])
		unlink(db->file);
	if (db->sub[0])
		rmdir(db->sub);
	if (db->dir[0])
		rmdir(db->dir);
	if (db->env_set && db->old_terminfo)
		setenv("TERMINFO", db->old_terminfo, 1);
	else if (db->env_set)
		unsetenv("TERMINFO");
	free(db->old_terminfo);
	memset(db, 0, sizeof(*db));
}

void *term_start(FILE *out, FILE *in, struct strbuf *why)
{
	const char *term = getenv("TERM");
	const struct term_entry *e;
	struct temp_db db;
	enum probe p;
	SCREEN *scr;
	int err;

	if (!term || !*term) {
		strbuf_addstr(why, "TERM is not set");
		return NULL;
	}
	p = probe_term(fileno(out));
	if (p == TERM_NO_CURSOR) {
		strbuf_addf(why, "TERM=%s cannot move the cursor", term);
		return NULL;
	}
	if (p == TERM_USABLE) {
		scr = newterm(NULL, out, in);
		if (!scr)
			strbuf_addf(why, "curses cannot start on TERM=%s", term);
		return scr;
	}
	e = term_builtin_find(term);
	if (!e) {
		strbuf_addf(why, "no terminfo entry for TERM=%s here, and none built in "
			    "(try TERM=xterm-256color, or install ncurses-base)", term);
		return NULL;
	}
	err = temp_db_create(&db, e);
	if (err) {
		strbuf_addf(why, "no terminfo entry for TERM=%s here, and the built-in one cannot "
			    "be written to a temporary directory: %s", term, strerror(-err));
		temp_db_remove(&db);
		return NULL;
	}
	p = probe_term(fileno(out));
	scr = p == TERM_USABLE ? newterm(NULL, out, in) : NULL;
	temp_db_remove(&db);
	if (p == TERM_NO_CURSOR)
		strbuf_addf(why, "TERM=%s cannot move the cursor", term);
	else if (!scr)
		strbuf_addf(why, "curses cannot start on the built-in entry for TERM=%s", term);
	return scr;
}

/*
 * Output files that are either written whole or not at all: the data goes to
 * a temporary file created beside the destination (".NAME.framewalk-XXXXXX",
 * O_EXCL, mode 0666 less the umask, locked with flock while its writer
 * lives), which is renamed over the destination only after a successful
 * write and fsync. The next open of the same destination removes the
 * temporaries no live writer holds (left by a SIGKILLed run). Opening
 * happens before sampling, so an unwritable path fails at once. Under sudo
 * the file is given to SUDO_UID/SUDO_GID.
 */
#ifndef FRAMEWALK_UTIL_OUTFILE_H
#define FRAMEWALK_UTIL_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

struct outfile {
	char *path;        /* destination; NULL or "-" means stdout */
	char *tmp;         /* temporary file beside it */
	FILE *f;
};

#define OUTFILE_TMP_MARK ".framewalk-"

/*
 * 0, or -errno with a message in the caller's hands: -EISDIR, -ELOOP (a
 * symlink), -ENXIO when the destination exists and is a FIFO, socket or
 * device (only the null device is written in place).
 */
int outfile_open(struct outfile *of, const char *path);
/*
 * outfile_open for a writer whose every destination is a new name, which
 * therefore has no earlier run's temporaries to look for (the directory is
 * not listed); it removes those itself with outfile_remove_stale when it
 * lists the directory (the agent's --dir).
 */
int outfile_open_new(struct outfile *of, const char *path);
/*
 * Is name a temporary's (".NAME" OUTFILE_TMP_MARK "XXXXXX")? 1 with NAME,
 * the destination's, in base (size bytes); 0 when not, or too long.
 */
int outfile_temporary_base(const char *name, char *base, size_t size);
/*
 * name, in the directory dirfd, is one of our temporaries no live writer
 * holds, last written at least min_age_s ago (another writer's is unlocked
 * between its creation and its flock; 0: any age): remove it. 1 when
 * removed.
 */
int outfile_remove_stale(int dirfd, const char *name, int min_age_s);
/* Flush, fsync and rename into place; 0 or -errno (the temp file is removed). */
int outfile_commit(struct outfile *of);
/* Remove the temporary file without touching the destination. */
void outfile_abort(struct outfile *of);

/* Create dir and its missing parents with mode (an existing one is kept as it is). 0 or -errno. */
int outfile_mkdirs(const char *dir, mode_t mode);

#endif

/*
 * A scratch directory for harnesses that need files (fuzz_spool,
 * fuzz_sysconfig): NAME-PID on tmpfs (/dev/shm, else /tmp), made once per
 * process. libFuzzer ends a run with _Exit, so no atexit handler removes
 * it: each new one first removes those whose process is gone.
 */
#ifndef FRAMEWALK_FUZZ_SCRATCH_H
#define FRAMEWALK_FUZZ_SCRATCH_H

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int scratch_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) && errno != ENOENT ? -1 : 0;
}

/* Make base/name-PID into out (removing dead processes' ones); 0 or -1. */
static inline int fuzz_scratch_dir(const char *name, char *out, size_t size)
{
	const char *base = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	size_t nlen = strlen(name);
	struct dirent *de;
	DIR *d = opendir(base);

	while (d && (de = readdir(d))) {
		char path[4096], *end;
		long pid;

		if (strncmp(de->d_name, name, nlen) || de->d_name[nlen] != '-')
			continue;
		pid = strtol(de->d_name + nlen + 1, &end, 10);
		/* ours is made once: one of our pid is an earlier process's */
		if (*end || pid <= 0 ||
		    (pid != (long)getpid() && !(kill((pid_t)pid, 0) && errno == ESRCH)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", base, de->d_name);
		nftw(path, scratch_remove_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	if (d)
		closedir(d);
	if (snprintf(out, size, "%s/%s-%ld", base, name, (long)getpid()) >= (int)size)
		return -1;
	return mkdir(out, 0700) ? -1 : 0;
}

#endif

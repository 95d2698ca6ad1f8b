/*
 * The agent's options: from the command line and the configuration file
 * (--config, read again on SIGHUP), with their defaults and the checks that
 * hold across options (at least one destination, credentials over plain
 * http:// beyond loopback warned). docs/AGENT.md lists them.
 */
#ifndef FRAMEWALK_CMD_AGENT_OPTS_H
#define FRAMEWALK_CMD_AGENT_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/select.h"
#include "sampler/sampler.h"

struct agent_opts {
	struct select_set sel;
	int all_python;
	struct sampler_opts so;  /* the sampling options (cmd/sampling.c) */
	double period, scan, refresh;
	const char *pyroscope, *pyroscope_api, *pyroscope_user, *pyroscope_password;
	const char *pyroscope_token, *pyroscope_tenant;
	const char *otlp;
	char **otlp_headers;
	size_t notlp_headers;
	const char *dir;
	uint64_t dir_max_bytes;
	double dir_max_age;
	const char *spool;
	uint64_t spool_max_bytes;
	long spool_max_items;
	double timeout, flush_timeout;
	char **labels;
	size_t nlabels;
	const char *hostname;
	const char *config;
	int once;
	double status;
	const char *metrics_file;
	int quiet;
	int redact_cmdline;
	/* the configuration file's arguments: strings above may point into them */
	int file_argc;
	char **file_argv;
	int in_file;            /* parsing the file now */
};

/*
 * Fill o from argv (and the configuration file it names): FW_EXIT_OK, -1
 * when --help was printed, or the exit code with the message printed.
 */
int agent_load_options(struct agent_opts *o, int argc, char **argv);
void agent_opts_release(struct agent_opts *o);

#endif

/*
 * Parsers for option values shared by the commands: rates ("1000", "1k",
 * "10khz", "250hz") and durations in seconds. Each returns 0 or -EINVAL.
 * And the one way a usage error is reported.
 */
#ifndef FRAMEWALK_UTIL_OPTIONS_H
#define FRAMEWALK_UTIL_OPTIONS_H

#include <stdarg.h>

#include "util/util.h"

#define RATE_MAX_HZ 1000000.0

int parse_rate(const char *s, double *hz);
int parse_seconds(const char *s, double *secs);
int parse_pid(const char *s, int *pid);

/*
 * A usage error of command cmd: "framewalk: error: <message>" and a hint to
 * see `framewalk CMD --help`, on stderr. Returns FW_EXIT_USAGE.
 */
int usage_verror(const char *cmd, const char *fmt, va_list ap) PRINTF_LIKE(2, 0);

/* Help texts start at this column unless an option's names need more. */
#define USAGE_HELP_COLUMN 25

/*
 * One option of a --help text: "  LEFT" padded to column col, then help
 * wrapped at USAGE_WIDTH with continuation lines indented to col ('\n' in
 * help starts a new line too). A LEFT too long for col gets a line of its own.
 */
#define USAGE_WIDTH 80
void usage_option_help(FILE *f, const char *left, const char *help, int col);

#endif

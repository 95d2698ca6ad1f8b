/*
 * Parsers for option values shared by the commands: rates ("1000", "1k",
 * "10khz", "250hz") and durations in seconds. Each returns 0 or -EINVAL.
 */
#ifndef FRAMEWALK_UTIL_OPTIONS_H
#define FRAMEWALK_UTIL_OPTIONS_H

#define RATE_MAX_HZ 1000000.0

int parse_rate(const char *s, double *hz);
int parse_seconds(const char *s, double *secs);
int parse_pid(const char *s, int *pid);

#endif

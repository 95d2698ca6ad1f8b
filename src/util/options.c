/* Implementation of options.h. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <strings.h>

#include "util/options.h"
#include "util/util.h"

int parse_rate(const char *s, double *hz)
{
	char *end;
	double v, mult = 1;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K') {
		mult = 1000;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		mult = 1000000;
		end++;
	}
	if (*end && strcasecmp(end, "hz"))
		return -EINVAL;
	v *= mult;
	if (!isfinite(v) || v < 1 || v > RATE_MAX_HZ)
		return -EINVAL;
	*hz = v;
	return 0;
}

int parse_seconds(const char *s, double *secs)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 's' && !end[1])
		end++;
	if (*end || !isfinite(v) || v < 0 || v > 365 * 86400.0)
		return -EINVAL;
	*secs = v;
	return 0;
}

int parse_pid(const char *s, int *pid)
{
	long v;

	if (parse_long(s, &v) || v <= 0 || v > 0x3fffffff)
		return -EINVAL;
	*pid = (int)v;
	return 0;
}

int usage_verror(const char *cmd, const char *fmt, va_list ap)
{
	fputs("framewalk: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fw_hint("see framewalk %s --help", cmd);
	return FW_EXIT_USAGE;
}

void usage_option_help(FILE *f, const char *left, const char *help, int col)
{
	const char *p = help;
	int at = fprintf(f, "  %s", left);

	if (at >= col) {
		fputc('\n', f);
		at = 0;
	}
	do {
		const char *end = p;
		int taken = 0;

		/* whole words while they fit; a word longer than a line stands alone */
		while (*end && *end != '\n') {
			const char *w = end + strspn(end, " ");
			const char *w_end = w + strcspn(w, " \n");

			if (taken && col + (w_end - p) > USAGE_WIDTH - 1)
				break;
			end = w_end;
			taken = 1;
		}
		fprintf(f, "%*s%.*s\n", col - at, "", (int)(end - p), p);
		at = 0;
		if (*end == '\n')
			p = end + 1;
		else
			p = end + strspn(end, " ");
	} while (*p);
}

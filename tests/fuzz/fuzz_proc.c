/*
 * libFuzzer harness for the /proc parsers (src/target/proc.h): one line of
 * /proc/PID/maps and the text of a /proc/PID/stat file, both controlled by
 * the target (paths with spaces, newlines or "(deleted)", comm with ')' or
 * spaces), and the NSpid line of a status file. Input: the maps line up to
 * the first NUL (or all of it), the rest (or all of it) as the stat text and,
 * NUL-terminated, as the status text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "target/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t line_len = nul ? (size_t)(nul - data) : size;
	const uint8_t *stat = nul ? nul + 1 : data;
	size_t stat_len = nul ? size - line_len - 1 : size;
	struct proc_map m;
	char *line, *text, state = 0;

	line = malloc(line_len + 1);
	if (!line)
		return 0;
	memcpy(line, data, line_len);
	line[line_len] = '\0';
	if (proc_maps_parse_line(line, &m) == 0) {
		if (!m.path || m.end < m.start || strlen(m.perms) != 4 ||
		    strlen(m.path) > line_len || (m.deleted && !m.inode))
			abort();
		free(m.path);
	}
	free(line);

	/* exactly stat_len bytes, not terminated: the parser must use the length */
	text = malloc(stat_len ? stat_len : 1);
	if (!text)
		return 0;
	memcpy(text, stat, stat_len);
	if (proc_stat_parse_state(text, stat_len, &state) == 0 &&
	    !((state >= 'A' && state <= 'Z') || (state >= 'a' && state <= 'z')))
		abort();
	{
		uint64_t v;
		int cpu;

		(void)proc_stat_parse_field(text, stat_len, 28, &v);
		(void)proc_stat_parse_field(text, stat_len, 48, &v);
		(void)proc_stat_parse_cpu(text, stat_len, &cpu);
	}
	free(text);

	text = malloc(stat_len + 1);
	if (!text)
		return 0;
	memcpy(text, stat, stat_len);
	text[stat_len] = '\0';
	{
		pid_t nspid = 0;

		if (proc_status_parse_nspid(text, &nspid) == 0 && nspid <= 0)
			abort();
	}
	free(text);
	return 0;
}

/*
 * log - stderr diagnostics with a level filter.  Not the audit log.
 */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static enum log_level log_level_max = LOG_LVL_INFO;

void log_set_level(enum log_level lvl)
{
	log_level_max = lvl;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	char buf[2048];
	va_list ap;

	if (lvl > log_level_max)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "netd[%d]: %s: %s\n", (int)getpid(), names[lvl], buf);
}

char *log_quote(const void *in, size_t len, char *out, size_t outsz)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = in;
	size_t o = 0;

	if (outsz == 0)
		return out;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			if (o + 1 >= outsz)
				break;
			out[o++] = (char)c;
		} else {
			if (o + 4 >= outsz)
				break;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return out;
}

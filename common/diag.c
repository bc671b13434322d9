/*
 * diag - error messages for parsers: located ones (policy, config, CNI
 * config) and plain ones (control requests, state files).
 */
#include "common/diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int diag_set(struct diag *d, const char *file, unsigned int line, unsigned int col,
	     const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return -EINVAL;
	snprintf(d->file, sizeof(d->file), "%s", file ? file : "<input>");
	d->line = line;
	d->col = col;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

char *diag_format(const struct diag *d, char *buf, unsigned int sz)
{
	if (d->line && d->col)
		snprintf(buf, sz, "%s:%u:%u: %s", d->file, d->line, d->col, d->msg);
	else if (d->line)
		snprintf(buf, sz, "%s:%u: %s", d->file, d->line, d->msg);
	else
		snprintf(buf, sz, "%s: %s", d->file, d->msg);
	return buf;
}

int diag_err(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

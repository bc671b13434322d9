/*
 * diag - one located error message, the way nftables attaches a location to
 * its error records: "FILE:LINE:COL: message".  Filled by pure parsers,
 * printed by their callers.
 */
#ifndef NETD_COMMON_DIAG_H
#define NETD_COMMON_DIAG_H

#include <stddef.h>

struct diag {
	char file[256];		/* file name as given, or "<input>" */
	unsigned int line;	/* 1-based; 0 = no location */
	unsigned int col;	/* 1-based; 0 = no column */
	char msg[512];
};

/*
 * diag_set() - record an error at @file:@line:@col (1-based; 0 = unknown).
 * @d may be NULL (then nothing is recorded).  Always returns -EINVAL so a
 * parser can write `return diag_set(...)`.
 */
int diag_set(struct diag *d, const char *file, unsigned int line, unsigned int col,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * diag_format() - "FILE:LINE:COL: message" (parts without a value are left
 * out) into @buf of @sz bytes.  Return: @buf.
 */
char *diag_format(const struct diag *d, char *buf, unsigned int sz);

/*
 * diag_err() - an error message with no location: printf @fmt into @err
 * (@errsz bytes, always NUL-terminated if @errsz > 0), for decoders that
 * hand their caller one line (control requests, state files).  Always
 * returns -EINVAL so a decoder can write `return diag_err(...)`.
 */
int diag_err(char *err, size_t errsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif

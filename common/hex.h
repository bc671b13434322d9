/*
 * hex - one hexadecimal digit's value, for the decoders that read hex
 * (percent-escapes in control request paths, MAC addresses).  Pure,
 * header-only.
 */
#ifndef NETD_COMMON_HEX_H
#define NETD_COMMON_HEX_H

/* hex_digit() - the value of hex digit @c (either case), 0..15; -1 if not one. */
static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif

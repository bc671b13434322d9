/*
 * ifname.h - what netd accepts as a Linux interface name, from an API
 * request or a state file alike.  Pure, header-only.
 */
#ifndef NETD_COMMON_IFNAME_H
#define NETD_COMMON_IFNAME_H

#include <stdbool.h>
#include <string.h>

/*
 * ifname_valid() - @s is a usable interface name: 1-15 bytes (IFNAMSIZ - 1),
 * not "." or "..", no '/', ':', white space, control bytes or DEL (the
 * kernel's dev_valid_name() plus ':' for alias names and spaces for logs).
 */
static inline bool ifname_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/' || s[i] == ':' || (unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return false;
	return true;
}

#endif

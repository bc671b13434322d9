/*
 * fuzz_gw_name - gw_name_check() (netd/gw/name.c): the names the gateway
 * will mint a leaf for, as a TLS client sends them in server_name (any
 * bytes, not NUL-terminated).  Beyond the sanitizers: the verdict equals
 * a reference written the other way round (split at the dots first, then
 * judge each label); a name taken comes back lower-cased, the same
 * length, NUL-terminated, and is taken again unchanged.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/gw/name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reference: what docs/gateway.md and netd/gw/name.h say is taken. */
static bool reference(const uint8_t *s, size_t n)
{
	size_t from = 0, last_from = 0;

	if (n == 0 || n > GW_NAME_MAX)
		return false;
	while (from <= n) {
		const uint8_t *dot = memchr(s + from, '.', n - from);
		size_t to = dot ? (size_t)(dot - s) : n, len = to - from;

		if (len < 1 || len > GW_LABEL_MAX || s[from] == '-' || s[to - 1] == '-')
			return false;
		for (size_t i = from; i < to; i++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_",
				    s[i]) || !s[i])
				return false;
		last_from = from;
		if (!dot)
			break;
		from = to + 1;
		if (from == n)
			return false;	/* a trailing dot leaves an empty last label */
	}
	/* the last label: all digits, or 0x/0X and hex digits, reads as IPv4 */
	{
		const uint8_t *l = s + last_from;
		size_t len = n - last_from, i = 0;
		bool hex = len >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X');

		for (i = hex ? 2 : 0; i < len; i++)
			if (!(l[i] >= '0' && l[i] <= '9') &&
			    !(hex && strchr("abcdefABCDEF", l[i]) && l[i]))
				break;
		if (i == len)
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[GW_NAME_MAX + 1], again[GW_NAME_MAX + 1];
	char *copy = malloc(size ? size : 1);	/* exact size: ASan sees any overread */
	int r;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	r = gw_name_check(copy, size, out);
	if (r != 0 && r != -EINVAL)
		abort();
	if ((r == 0) != reference(data, size))
		abort();
	if (r == 0) {
		if (strlen(out) != size)
			abort();
		for (size_t i = 0; i < size; i++) {
			char c = copy[i];

			if (c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			if (out[i] != c)
				abort();
		}
		if (gw_name_check(out, size, again) != 0 || strcmp(out, again) != 0)
			abort();
	}
	free(copy);
	return 0;
}

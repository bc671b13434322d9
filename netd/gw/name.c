/*
 * gw/name - the gateway's check of a name before a leaf is minted for it
 * (netd/gw/name.h says what is taken and why).  Pure: bytes in, a verdict
 * and the lower-cased name out; no allocation.
 */
#include "netd/gw/name.h"

#include <errno.h>
#include <stdbool.h>

static bool ldh_or_underscore(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Is the label @s (@n bytes, lower case) a number to an IPv4 parser (inet_aton(3))? */
static bool numeric_label(const char *s, size_t n)
{
	bool hex = n >= 2 && s[0] == '0' && s[1] == 'x';

	for (size_t i = hex ? 2 : 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (hex && s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int gw_name_check(const char *in, size_t len, char *out)
{
	size_t start = 0;

	if (len == 0 || len > GW_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != '.' && !ldh_or_underscore(c))
			return -EINVAL;	/* NUL, ',', ':', '*', space, non-ASCII, ... */
		out[i] = c;
		if (c != '.' && i + 1 < len)
			continue;
		/* the label out[start .. end) ends here: a dot, or the name's end */
		size_t end = c == '.' ? i : i + 1;

		if (end == start || end - start > GW_LABEL_MAX)
			return -EINVAL;	/* empty (leading, double or trailing dot), too long */
		if (out[start] == '-' || out[end - 1] == '-')
			return -EINVAL;	/* RFC 952: no hyphen first or last */
		if (c == '.' && i + 1 == len)
			return -EINVAL;	/* a trailing dot (RFC 6066 3) */
		if (end == len && numeric_label(out + start, end - start))
			return -EINVAL;	/* an IPv4 literal, or reads as one */
		start = i + 1;
	}
	out[len] = '\0';
	return 0;
}

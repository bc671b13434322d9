/*
 * fuzz_ctlpath - ctlreq_path() on any request path a client can send.  A
 * success has only segments free of NUL, '/', control characters, "." and
 * "..", each within CTLREQ_SEG_MAX; a failure says why and leaves nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/api/ctlreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char raw[CTLREQ_PATH_MAX + 2], err[160] = "";
	struct ctlreq_path p;

	if (size > CTLREQ_PATH_MAX + 1)
		size = CTLREQ_PATH_MAX + 1;
	memcpy(raw, data, size);
	raw[size] = '\0';	/* evhttp hands over a C string */
	if (ctlreq_path(raw, &p, err, sizeof(err)) < 0) {
		if (!err[0] || p.n)
			abort();
		return 0;
	}
	if (p.n == 0 || p.n > CTLREQ_SEGS_MAX)
		abort();
	for (size_t i = 0; i < p.n; i++) {
		size_t n = strlen(p.seg[i]);

		if (n > CTLREQ_SEG_MAX || strcmp(p.seg[i], ".") == 0 || strcmp(p.seg[i], "..") == 0)
			abort();
		for (size_t k = 0; k < n; k++)
			if (p.seg[i][k] == '/' || (unsigned char)p.seg[i][k] < 0x20 || p.seg[i][k] == 0x7f)
				abort();
	}
	return 0;
}

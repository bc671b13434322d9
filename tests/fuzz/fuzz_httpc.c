/*
 * fuzz_httpc - httpc_parse_reply() (common/httpc.c) on any reply bytes the
 * control socket could send back to the CLI or netd-cni.  A success has a
 * status of 100-599 that is the three digits after "HTTP/1.x "; a failure
 * leaves no status and no JSON.  The input is not NUL-terminated: the
 * parser must not read past @size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/httpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);	/* exactly @size bytes: ASan sees an overread */
	json_t *j = NULL;
	int status = -1, r;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	r = httpc_parse_reply(copy, size, &status, &j);
	if (r < 0) {
		if (status != 0 || j)
			abort();
	} else {
		if (status < 100 || status > 599 || size < 12 ||
		    status != (copy[9] - '0') * 100 + (copy[10] - '0') * 10 + (copy[11] - '0'))
			abort();
		json_decref(j);
	}
	free(copy);
	return 0;
}

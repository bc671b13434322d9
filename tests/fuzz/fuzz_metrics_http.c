/*
 * fuzz_metrics_http - request heads on the metrics_listen port: anything
 * a scraper, a scanner or an attacker sends.  The classifier must never
 * read past the bytes given, must say "more" only when no empty line is
 * there yet, and must answer 200 only to GET/HEAD of exactly /metrics.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/api/metrics_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct metrics_http_req r;
	char *copy;
	int n;

	if (size > METRICS_HTTP_HEAD_MAX)
		return 0;
	copy = malloc(size ? size : 1);	/* exact size: ASan sees any overread */
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	n = metrics_http_parse(copy, size, &r);
	if (n != 0 && n != 1)
		abort();
	if (n == 0 && (memmem(copy, size, "\n\n", 2) || memmem(copy, size, "\n\r\n", 3)))
		abort();
	if (n == 1 && r.verdict == METRICS_HTTP_OK &&
	    !(size >= 13 && (memcmp(copy, "GET /metrics", 12) == 0 ||
			     memcmp(copy, "HEAD /metrics", 13) == 0)))
		abort();
	free(copy);
	return 0;
}

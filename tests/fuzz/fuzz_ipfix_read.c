/*
 * fuzz_ipfix_read - the tests' own IPFIX reader (tests/unit/ipfix_read.h,
 * which checks netd's encoder in test_ipfix and test_ipfixexp) on arbitrary
 * bytes: a stream of messages, each led by a 2-byte length, read by one
 * reader so Templates carry over.  Beyond the sanitizers: only the
 * documented errors; every value decoded lies inside the message; a message
 * that reads once reads the same way again.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/ipfix_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ipr_reader rd, rd2;
static struct ipr_msg m, m2;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	memset(&rd, 0, sizeof(rd));
	while (size - off >= 2) {
		size_t len = (size_t)data[off] << 8 | data[off + 1];
		const uint8_t *msg = data + off + 2;
		int r;

		off += 2;
		if (len > size - off)
			len = size - off;
		rd2 = rd;
		r = ipr_parse(&rd, msg, len, &m);
		if (r != 0 && r != -EBADMSG && r != -EPROTO && r != -ENOSPC)
			abort();
		if (r == 0) {
			if (m.len != len || m.version != 10)
				abort();
			for (size_t i = 0; i < m.n_rec && i < IPR_RECORDS; i++)
				for (uint16_t k = 0; k < m.rec[i].n; k++) {
					const struct ipr_val *v = &m.rec[i].v[k];

					if (v->p < msg || v->p + v->len > msg + len)
						abort();
				}
			/* The same bytes, from the same Templates, read the same. */
			if (ipr_parse(&rd2, msg, len, &m2) != 0 || m2.n_rec != m.n_rec ||
			    m2.n_templates != m.n_templates)
				abort();
		}
		off += len;
	}
	return 0;
}

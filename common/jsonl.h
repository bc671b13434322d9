/*
 * jsonl - a tiny writer for one flat JSON object's members into a
 * caller-provided buffer, for the audit records written on the DNS hot
 * path (jansson's build-a-tree-then-dump costs more than the query).  Pure;
 * output is ASCII: '"', '\\' and control characters are escaped, bytes
 * >= 0x7f are written as \u00XX.  Everything else uses jansson.
 */
#ifndef NETD_COMMON_JSONL_H
#define NETD_COMMON_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jsonl {
	char *buf;
	size_t cap, len;
	bool overflow;		/* something did not fit: the result is unusable */
	bool first;		/* no member (or array element) written yet */
};

/* jsonl_init() - write members into @buf of @cap bytes (borrowed). */
void jsonl_init(struct jsonl *j, char *buf, size_t cap);

/* jsonl_str() - "key":"value" (value NULL: null). */
void jsonl_str(struct jsonl *j, const char *key, const char *val);

/* jsonl_uint() - "key":N. */
void jsonl_uint(struct jsonl *j, const char *key, uint64_t val);

/* jsonl_array_begin() / jsonl_array_str() / jsonl_array_end() - "key":["a","b"]. */
void jsonl_array_begin(struct jsonl *j, const char *key);
void jsonl_array_str(struct jsonl *j, const char *val);
void jsonl_array_end(struct jsonl *j);

/*
 * jsonl_raw() - append @len bytes of members an earlier writer produced
 * (jsonl_done() of another buffer) as they are: a cache of members that
 * repeat from record to record.
 */
void jsonl_raw(struct jsonl *j, const char *members, size_t len);

/*
 * jsonl_done() - the members written, without braces, for
 * audit_write_members().  Return: their length in bytes; -ENOBUFS if
 * anything overflowed the buffer.
 */
int jsonl_done(const struct jsonl *j);

#endif

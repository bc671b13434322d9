/*
 * yamlx - load one YAML document (libyaml event API) into a small tree of
 * scalars, sequences and mappings, each node carrying its 1-based
 * line:column, for the schema checkers in netd/model/policy.c and netd/model/config.c.
 *
 * What it is not: a general YAML library.  Aliases are refused (a "billion
 * laughs" document cannot expand), a stream may hold at most one document,
 * nesting and node count are bounded, tags are ignored.  Pure; never logs.
 */
#ifndef NETD_COMMON_YAMLX_H
#define NETD_COMMON_YAMLX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"

#define YAMLX_MAX_DEPTH 32		/* nested collections */
#define YAMLX_MAX_NODES (1u << 19)	/* nodes per document */
#define YAMLX_FIELDS_MAX 24		/* keys of one yamlx_fields() schema */

enum yamlx_type { YAMLX_SCALAR, YAMLX_SEQ, YAMLX_MAP };

struct yamlx_node {
	enum yamlx_type type;
	unsigned int line, col;	/* 1-based start of the node */
	bool plain;		/* scalar: written without quotes or block style */
	char *str;		/* scalar: value, NUL-terminated (may hold a NUL: see len) */
	size_t len;		/* scalar: bytes in str */
	struct yamlx_node **kids;	/* seq: items; map: key, value, key, value, ... */
	size_t n_kids;
	size_t cap;
};

struct yamlx_doc {
	struct yamlx_node *root;	/* NULL if the stream holds no document */
	size_t n_nodes;
};

/*
 * yamlx_load() - parse @buf/@len (not retained, need not be NUL-terminated)
 * as a single YAML document.
 * @file: name used in @err.
 * @ret: on success a new document; caller frees with yamlx_free().  An
 *       empty stream (only comments) gives a document with root == NULL.
 * Errors carry FILE:LINE:COL from libyaml's marks (or, for encoding errors,
 * from the byte offset) and libyaml's problem text.
 * Return: 0; -EINVAL (@err filled); -ENOMEM.
 */
int yamlx_load(const char *buf, size_t len, const char *file, struct yamlx_doc **ret,
	       struct diag *err);

/* yamlx_free() - free @d and all its nodes; NULL-safe. */
void yamlx_free(struct yamlx_doc *d);

/* yamlx_is_null() - true for a plain scalar "", "~", "null", "Null", "NULL". */
bool yamlx_is_null(const struct yamlx_node *n);

/* yamlx_is_str() - true for a scalar that is not null and holds no NUL byte. */
bool yamlx_is_str(const struct yamlx_node *n);

/*
 * yamlx_digits() - @s/@n (not NUL-terminated) as a plain decimal: digits
 * only, no sign, no leading zero, at most @max.  For numbers inside a
 * scalar ("500/10m", "5/s burst 20").  Return: 0 and *@ret; -EINVAL (not
 * such a number); -ERANGE (over @max).
 */
int yamlx_digits(const char *s, size_t n, uint64_t max, uint64_t *ret);

/*
 * yamlx_decimal() - scalar @n as a plain decimal in [@lo, @hi]: digits
 * only, no sign, no leading zero, at most 9 digits (YAML 1.2's core int
 * without its other forms: a config's numbers mean one thing).
 * Return: 0 and *@ret; -EINVAL (not such a number, or out of range: the
 * caller says which key, with yamlx_quote() of the text).
 */
int yamlx_decimal(const struct yamlx_node *n, unsigned long lo, unsigned long hi,
		  unsigned long *ret);

/* yamlx_kind() - "a list", "a mapping", "null" or "a string", for messages. */
const char *yamlx_kind(const struct yamlx_node *n);

/*
 * yamlx_quote() - printable, bounded rendering of untrusted bytes for an
 * error message: printable ASCII except '\'' and '\\' is copied, others
 * become \xHH; more than 64 input bytes are cut and end in "...".
 * @out, @outsz: destination, always NUL-terminated.  Return: @out.
 */
char *yamlx_quote(const char *in, size_t len, char *out, size_t outsz);

/*
 * yamlx_fields() - check mapping @map against a fixed schema.
 * @where: path for messages ("policy", "egress[2]", "pool").
 * @names, @n: the allowed keys, @n <= YAMLX_FIELDS_MAX (more: -EINVAL, unfilled).  @vals[i] (and @keys[i], may be NULL) get
 *             the value (key) node of names[i], or NULL if absent.
 * Errors, located at the offending key: a key that is not a string, an
 * unknown key (the message lists the allowed ones), a duplicate key (the
 * message gives the first one's location).  @map must be a mapping.
 * Return: 0; -EINVAL with @err filled.
 */
int yamlx_fields(const struct yamlx_node *map, const char *file, struct diag *err,
		 const char *where, const char *const *names, size_t n,
		 const struct yamlx_node **keys, const struct yamlx_node **vals);

/*
 * yamlx_near_miss() - the one of @names[0..@n) that @key is a near miss of
 * (one edit for names under 5 bytes, two from 5 on: insert, delete,
 * substitute, swap neighbours; "port" -> "ports"), for "did you mean"
 * hints; NULL if none.  Borrowed from @names.
 */
const char *yamlx_near_miss(const char *key, const char *const *names, size_t n);

/*
 * yamlx_read_file() - read all of regular file @path, at most @max bytes.
 * @ret_buf: on success malloc'd bytes (NUL-terminated for convenience),
 *           caller frees; @ret_len: their count.
 * Return: 0; -EFBIG if larger than @max; -EINVAL if not a regular file;
 *         -ENOMEM; or the -errno of open()/read().
 */
int yamlx_read_file(const char *path, size_t max, char **ret_buf, size_t *ret_len);

/*
 * yamlx_load_file() - yamlx_read_file() that says what went wrong in @err
 * ("FILE: file is larger than N bytes", "not a regular file", "cannot
 * read: ..."), for the parsers' *_load_file().  Return: as yamlx_read_file().
 */
int yamlx_load_file(const char *path, size_t max, char **ret_buf, size_t *ret_len,
		    struct diag *err);

#endif

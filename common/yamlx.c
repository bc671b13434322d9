/*
 * yamlx - a bounded YAML document tree built from libyaml events, shared by
 * the policy and config parsers.  Works on memory only; never logs.
 *
 * The event API (rather than yaml_parser_load()) is used so that an alias
 * can be refused where it appears: the document loader would resolve it to
 * a shared node and a walker would then expand "billion laughs" input.
 */
#include "common/yamlx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "common/fsutil.h"

static void node_free(struct yamlx_node *n)
{
	if (!n)
		return;
	/* Depth is bounded by YAMLX_MAX_DEPTH, so recursion is bounded too. */
	for (size_t i = 0; i < n->n_kids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

void yamlx_free(struct yamlx_doc *d)
{
	if (!d)
		return;
	node_free(d->root);
	free(d);
}

bool yamlx_is_null(const struct yamlx_node *n)
{
	if (!n || n->type != YAMLX_SCALAR || !n->plain)
		return false;
	return n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
	       strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0;
}

int yamlx_digits(const char *s, size_t n, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (n == 0 || (n > 1 && s[0] == '0'))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > max)
			return -ERANGE;	/* before it could wrap */
	}
	*ret = v;
	return 0;
}

int yamlx_decimal(const struct yamlx_node *n, unsigned long lo, unsigned long hi,
		  unsigned long *ret)
{
	uint64_t v;

	if (!yamlx_is_str(n) || n->len > 9 || yamlx_digits(n->str, n->len, hi, &v) < 0 || v < lo)
		return -EINVAL;
	*ret = (unsigned long)v;
	return 0;
}

bool yamlx_is_str(const struct yamlx_node *n)
{
	return n && n->type == YAMLX_SCALAR && !yamlx_is_null(n) && strlen(n->str) == n->len;
}

const char *yamlx_kind(const struct yamlx_node *n)
{
	if (!n)
		return "nothing";
	switch (n->type) {
	case YAMLX_SEQ:
		return "a list";
	case YAMLX_MAP:
		return "a mapping";
	case YAMLX_SCALAR:
		break;
	}
	if (yamlx_is_null(n))
		return "null";
	return strlen(n->str) == n->len ? "a string" : "a string with a NUL byte";
}

char *yamlx_quote(const char *in, size_t len, char *out, size_t outsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, cut = len > 64 ? 64 : len;

	if (!outsz)
		return out;
	for (size_t i = 0; i < cut; i++) {
		unsigned char ch = (unsigned char)in[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\'' && ch != '\\') {
			if (o + 1 >= outsz)
				break;
			out[o++] = (char)ch;
		} else {
			if (o + 4 >= outsz)
				break;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	if (cut < len && o + 3 < outsz) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

static int attach(struct yamlx_node *parent, struct yamlx_node *kid)
{
	if (parent->n_kids == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 4;
		struct yamlx_node **k = realloc(parent->kids, cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		parent->kids = k;
		parent->cap = cap;
	}
	parent->kids[parent->n_kids++] = kid;
	return 0;
}

/* Location of byte @off in @buf: libyaml gives only an offset for encoding errors. */
static void offset_mark(const char *buf, size_t len, size_t off, unsigned int *line,
			unsigned int *col)
{
	size_t bol = 0;

	*line = 1;
	if (off > len)
		off = len;
	for (size_t i = 0; i < off; i++)
		if (buf[i] == '\n') {
			(*line)++;
			bol = i + 1;
		}
	*col = (unsigned int)(off - bol + 1);
}

/* The byte at @m in @buf (what libyaml stopped at); 0 past the end. */
static char byte_at(const char *buf, size_t len, yaml_mark_t m)
{
	return m.index < len ? buf[m.index] : 0;
}

/*
 * What to do about the syntax errors people make (libyaml's own words are
 * kept after it): an unquoted name that starts with '*' (an alias to
 * YAML), a tab, indentation that does not line up, ": " inside a value.
 * Return: the hint (in @hint, @sz bytes, or static), or NULL when there is
 * none.  *@at: the mark to report.
 */
static const char *syntax_hint(const yaml_parser_t *p, const char *buf, size_t len,
			       yaml_mark_t *at, char *hint, size_t sz)
{
	const char *problem = p->problem ? p->problem : "", *context = p->context ? p->context : "";

	*at = p->problem_mark;
	if (strstr(context, "alias") && byte_at(buf, len, p->context_mark) == '*') {
		/* The name as written, up to what ends a plain scalar in a list. */
		/* (@buf is not NUL-terminated: bounded by @len, never strcspn) */
		size_t i = p->context_mark.index, n = 0;
		char q[80];

		while (i + n < len && !memchr(" \t\r\n,]}#\"'", buf[i + n], 11))
			n++;
		*at = p->context_mark;
		snprintf(hint, sz, "a name that starts with '*' must be quoted: \"%s\" (unquoted, "
			 "YAML reads '*' as an alias)", yamlx_quote(buf + i, n, q, sizeof(q)));
		return hint;
	}
	if (byte_at(buf, len, p->problem_mark) == '\t' ||
	    (strstr(problem, "cannot start any token") && memchr(buf, '\t', len)))
		return "a tab: YAML indents with spaces only; replace the tab with spaces";
	if (strstr(problem, "expected '-' indicator") || strstr(problem, "expected key"))
		return "the indentation does not line up: the items of one list start in one "
		       "column, and so do the keys of one mapping";
	if (strstr(problem, "mapping values are not allowed"))
		return "a ': ' where YAML did not expect a key: indent a key like its siblings, "
		       "or quote a value that holds ': '";
	if (strstr(problem, "expected node content") || strstr(problem, "expected ',' or ']'") ||
	    strstr(problem, "expected ',' or '}'"))
		return "an unclosed [ ] or { }, or a missing comma between items";
	return NULL;
}

static int syntax_error(const yaml_parser_t *p, const char *buf, size_t len, const char *file,
			struct diag *err)
{
	unsigned int line, col;
	const char *hint;
	char hbuf[200];
	yaml_mark_t at;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return -ENOMEM;
	case YAML_READER_ERROR:
		offset_mark(buf, len, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			return diag_set(err, file, line, col, "YAML syntax error: %s (byte 0x%02x)",
					p->problem ? p->problem : "unreadable input",
					(unsigned int)p->problem_value & 0xff);
		return diag_set(err, file, line, col, "YAML syntax error: %s",
				p->problem ? p->problem : "unreadable input");
	default:
		break;
	}
	hint = syntax_hint(p, buf, len, &at, hbuf, sizeof(hbuf));
	line = (unsigned int)at.line + 1;
	col = (unsigned int)at.column + 1;
	if (hint && p->context)
		return diag_set(err, file, line, col, "YAML syntax error: %s (libyaml: %s, %s at %u:%u)",
				hint, p->problem ? p->problem : "invalid YAML", p->context,
				(unsigned int)p->context_mark.line + 1,
				(unsigned int)p->context_mark.column + 1);
	if (hint)
		return diag_set(err, file, line, col, "YAML syntax error: %s (libyaml: %s)", hint,
				p->problem ? p->problem : "invalid YAML");
	if (p->context)
		return diag_set(err, file, line, col, "YAML syntax error: %s (%s at %u:%u)",
				p->problem ? p->problem : "invalid YAML", p->context,
				(unsigned int)p->context_mark.line + 1,
				(unsigned int)p->context_mark.column + 1);
	return diag_set(err, file, line, col, "YAML syntax error: %s",
			p->problem ? p->problem : "invalid YAML");
}

int yamlx_load(const char *buf, size_t len, const char *file, struct yamlx_doc **ret,
	       struct diag *err)
{
	struct yamlx_node *stack[YAMLX_MAX_DEPTH];
	unsigned int depth = 0, n_docs = 0;
	struct yamlx_doc *d;
	yaml_parser_t p;
	bool done = false;
	int r = 0;

	*ret = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (!yaml_parser_initialize(&p)) {
		free(d);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);

	while (!done && r == 0) {
		unsigned int line, col;
		struct yamlx_node *n;
		yaml_event_t ev;

		if (!yaml_parser_parse(&p, &ev)) {
			r = syntax_error(&p, buf, len, file, err);
			break;
		}
		line = (unsigned int)ev.start_mark.line + 1;
		col = (unsigned int)ev.start_mark.column + 1;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++n_docs > 1)
				r = diag_set(err, file, line, col,
					     "a second YAML document; the file must hold exactly one");
			break;
		case YAML_ALIAS_EVENT:
			r = diag_set(err, file, line, col, "YAML aliases (*name) are not allowed "
				     "(a name that starts with '*' must be quoted: \"*.example.com\")");
			break;
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (d->n_nodes >= YAMLX_MAX_NODES) {
				r = diag_set(err, file, line, col,
					     "too many YAML nodes (more than %u)", YAMLX_MAX_NODES);
				break;
			}
			if (ev.type != YAML_SCALAR_EVENT && depth >= YAMLX_MAX_DEPTH) {
				r = diag_set(err, file, line, col,
					     "YAML nested too deeply (more than %u levels)",
					     YAMLX_MAX_DEPTH);
				break;
			}
			n = calloc(1, sizeof(*n));
			if (!n) {
				r = -ENOMEM;
				break;
			}
			n->line = line;
			n->col = col;
			if (ev.type == YAML_SCALAR_EVENT) {
				n->type = YAMLX_SCALAR;
				n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
				n->len = ev.data.scalar.length;
				n->str = malloc(n->len + 1);
				if (!n->str) {
					free(n);
					r = -ENOMEM;
					break;
				}
				memcpy(n->str, ev.data.scalar.value, n->len);
				n->str[n->len] = '\0';
			} else {
				n->type = ev.type == YAML_SEQUENCE_START_EVENT ? YAMLX_SEQ : YAMLX_MAP;
			}
			d->n_nodes++;
			if (depth == 0) {
				/* One document, so one root (libyaml enforces one node per document). */
				if (d->root) {
					node_free(n);
					r = diag_set(err, file, line, col,
						     "a second YAML document; the file must hold exactly one");
					break;
				}
				d->root = n;
			} else if (attach(stack[depth - 1], n) < 0) {
				node_free(n);
				r = -ENOMEM;
				break;
			}
			if (n->type != YAMLX_SCALAR)
				stack[depth++] = n;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (r < 0) {
		yamlx_free(d);
		return r;
	}
	*ret = d;
	return 0;
}

/*
 * Edits (insert, delete, substitute, swap two neighbours) from @a to @b,
 * counted up to 3 (3 means "3 or more"): keys are short.
 */
static unsigned int edits(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned int d[33][33];

	if (la > 32 || lb > 32)
		return 3;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[la][lb] < 3 ? d[la][lb] : 3;
}

const char *yamlx_near_miss(const char *key, const char *const *names, size_t n)
{
	const char *best = NULL;
	unsigned int best_d = 3;

	for (size_t i = 0; i < n; i++) {
		unsigned int e = edits(key, names[i]);
		/* One edit for short keys, two from five letters on. */
		unsigned int max = strlen(names[i]) >= 5 ? 2 : 1;

		if (e <= max && e < best_d) {
			best = names[i];
			best_d = e;
		}
	}
	return best;
}

int yamlx_fields(const struct yamlx_node *map, const char *file, struct diag *err,
		 const char *where, const char *const *names, size_t n,
		 const struct yamlx_node **keys, const struct yamlx_node **vals)
{
	const struct yamlx_node *seen[YAMLX_FIELDS_MAX] = { 0 };

	if (n > YAMLX_FIELDS_MAX || map->type != YAMLX_MAP)
		return -EINVAL;	/* programmer error: the schemas are small */
	for (size_t i = 0; i < n; i++) {
		vals[i] = NULL;
		if (keys)
			keys[i] = NULL;
	}
	for (size_t k = 0; k + 1 < map->n_kids; k += 2) {
		const struct yamlx_node *key = map->kids[k];
		char q[300], allowed[256];
		size_t i, o = 0;

		if (!yamlx_is_str(key))
			return diag_set(err, file, key->line, key->col,
					"%s: expected a key name, got %s", where, yamlx_kind(key));
		for (i = 0; i < n; i++)
			if (strcmp(key->str, names[i]) == 0)
				break;
		if (i == n) {
			const char *near = yamlx_near_miss(key->str, names, n);

			allowed[0] = '\0';
			for (size_t j = 0; j < n; j++) {
				int w = snprintf(allowed + o, sizeof(allowed) - o, "%s%s",
						 j ? ", " : "", names[j]);

				if (w < 0 || (size_t)w >= sizeof(allowed) - o)
					break;
				o += (size_t)w;
			}
			if (near)
				return diag_set(err, file, key->line, key->col,
						"%s: unknown key '%s'; did you mean '%s'? (allowed: %s)",
						where, yamlx_quote(key->str, key->len, q, sizeof(q)),
						near, allowed);
			return diag_set(err, file, key->line, key->col,
					"%s: unknown key '%s' (allowed: %s)", where,
					yamlx_quote(key->str, key->len, q, sizeof(q)), allowed);
		}
		if (seen[i])
			return diag_set(err, file, key->line, key->col,
					"%s: duplicate key '%s' (first at line %u, column %u)",
					where, names[i], seen[i]->line, seen[i]->col);
		seen[i] = key;
		vals[i] = map->kids[k + 1];
		if (keys)
			keys[i] = key;
	}
	return 0;
}

int yamlx_read_file(const char *path, size_t max, char **ret_buf, size_t *ret_len)
{
	struct stat st;
	size_t len = 0;
	char *buf;
	int fd, r = 0;

	*ret_buf = NULL;
	*ret_len = 0;
	fd = fs_open_stat(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0, &st);
	if (fd < 0)
		return fd;
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((uintmax_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	/* One byte more than allowed, so a file that grew meanwhile is caught. */
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t got = read(fd, buf + len, max + 1 - len);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (got == 0)
			break;
		len += (size_t)got;
		if (len > max) {
			r = -EFBIG;
			break;
		}
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

int yamlx_load_file(const char *path, size_t max, char **ret_buf, size_t *ret_len,
		    struct diag *err)
{
	int r = yamlx_read_file(path, max, ret_buf, ret_len);

	if (r == -EFBIG)
		diag_set(err, path, 0, 0, "file is larger than %zu bytes", max);
	else if (r == -EINVAL)
		diag_set(err, path, 0, 0, "not a regular file");
	else if (r < 0)
		diag_set(err, path, 0, 0, "cannot read: %s", strerror(-r));
	return r;
}

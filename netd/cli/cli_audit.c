/*
 * cli_audit - `netd audit`: the audit log read back.  Lines that are not
 * JSON objects (a torn last line, garbage) are skipped and counted on
 * stderr; nothing in the file is trusted beyond being printed escaped.
 */
#include "netd/cli/cli_audit.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/httpc.h"
#include "common/paths.h"
#include "netd/cli/cli_help.h"
#include "netd/cli/cli_table.h"
#include "netd/model/config.h"

#define AUDIT_DEFAULT_LOG "/var/log/netd/audit.jsonl"
#define AUDIT_LINE_MAX    (1u << 20)	/* longer lines are skipped */
#define AUDIT_SUMMARY_MAX 65536		/* (sandbox, domain) rows */

static const char audit_usage[] =
	"usage: netd audit [--file PATH] [-f [--from-start]] [--last N] [--sandbox NAME]\n"
	"                  [--event EVENT] [--domain NAME|*.SUFFIX] [--verdict allow|deny]\n"
	"                  [--reason REASON] [--dst ADDR|CIDR] [--port N]\n"
	"                  [--since T] [--until T] [--json | --summary [--json]]\n"
	"  -f: follow from the end of the log (like tail -f); --from-start: replay it first\n"
	"  --last N: only the last N matching records (then follow, with -f)\n"
	"  T: RFC 3339 UTC (2026-11-30T06:00:00Z, or a prefix of it) or N[smhd] ago\n";

#define AUDIT_LAST_MAX 1000000	/* --last N at most */

const char *cli_audit_verdict(const json_t *rec)
{
	const char *ev = json_string_value(json_object_get(rec, "event"));
	const char *v = json_string_value(json_object_get(rec, "verdict"));

	if (v)
		return v;
	if (!ev)
		return NULL;
	if (strcmp(ev, "deny") == 0 || strcmp(ev, "deny_suppressed") == 0)
		return "deny";
	if (strncmp(ev, "conn", 4) == 0 && (ev[4] == '\0' || strcmp(ev + 4, "_open") == 0 ||
					    strcmp(ev + 4, "_update") == 0 ||
					    strcmp(ev + 4, "_late") == 0))
		return "allow";
	return NULL;
}

/* Is @s an address inside @p? */
static bool in_prefix(const struct prefix *p, const char *s)
{
	struct addr a;

	return s && addr_parse(s, &a) == 0 && a.family == p->addr.family && prefix_contains(p, &a);
}

/*
 * An http record's "upstream" ("198.51.100.60:443", "[2001:db8::1]:443")
 * split: the address into @addr, the port into *@port.  Return: false if
 * it is not of that form.
 */
static bool upstream_split(const char *up, char *addr, size_t sz, long *port)
{
	const char *colon, *a = up;
	size_t n;
	char *end;

	if (!up)
		return false;
	colon = strrchr(up, ':');
	if (!colon)
		return false;
	n = (size_t)(colon - up);
	if (up[0] == '[') {
		if (n < 2 || up[n - 1] != ']')
			return false;
		a = up + 1;
		n -= 2;
	}
	if (n == 0 || n >= sz)
		return false;
	memcpy(addr, a, n);
	addr[n] = '\0';
	*port = strtol(colon + 1, &end, 10);
	return colon[1] && !*end && *port >= 0 && *port <= 65535;
}

static bool is_http(const json_t *rec)
{
	const char *ev = json_string_value(json_object_get(rec, "event"));

	return ev && strcmp(ev, "http") == 0;
}

static bool dst_match(const struct prefix *p, const json_t *rec)
{
	const json_t *ans = json_object_get(rec, "answers");
	size_t i;
	const json_t *v;
	char up[ADDR_STRLEN + 2];
	long port;

	if (in_prefix(p, json_string_value(json_object_get(rec, "dst"))))
		return true;
	/* A gateway request's destination is its upstream (the table's DESTINATION). */
	if (is_http(rec) && upstream_split(json_string_value(json_object_get(rec, "upstream")),
					   up, sizeof(up), &port) && in_prefix(p, up))
		return true;
	json_array_foreach(ans, i, v)
		if (in_prefix(p, json_string_value(v)))
			return true;
	return false;
}

/* The i-th word of CLI_AUDIT_EVENTS at *@w, its length *@n.  Return: false past the end. */
static bool event_word(size_t i, const char **w, size_t *n)
{
	static const char sep[] = ", \n";
	const char *s = CLI_AUDIT_EVENTS;

	for (;;) {
		s += strspn(s, sep);
		if (!*s)
			return false;
		*w = s;
		*n = strcspn(s, sep);
		if (i-- == 0)
			return true;
		s += *n;
	}
}

bool cli_audit_event_known(const char *ev)
{
	const char *w;
	size_t n;

	for (size_t i = 0; event_word(i, &w, &n); i++)
		if (strlen(ev) == n && memcmp(ev, w, n) == 0)
			return true;
	return false;
}

/* "dns, dns_suppressed, ..." on one line of @out. */
static void print_events(FILE *out)
{
	const char *w;
	size_t n;

	for (size_t i = 0; event_word(i, &w, &n); i++)
		fprintf(out, "%s%.*s", i ? ", " : "", (int)n, w);
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

bool cli_audit_match(const struct audit_filter *f, const json_t *rec)
{
	const char *ts = str(rec, "ts");

	if (f->sandbox && (!str(rec, "sandbox") || strcmp(str(rec, "sandbox"), f->sandbox) != 0))
		return false;
	if (f->event && (!str(rec, "event") || strcmp(str(rec, "event"), f->event) != 0))
		return false;
	/* Same format everywhere (UTC, "Z"): string order is time order. */
	if (f->since[0] && (!ts || strcmp(ts, f->since) < 0))
		return false;
	if (f->until[0] && (!ts || strncmp(ts, f->until, strlen(f->until)) > 0))
		return false;
	if (f->verdict && (!cli_audit_verdict(rec) || strcmp(cli_audit_verdict(rec), f->verdict) != 0))
		return false;
	if (f->reason && (!str(rec, "reason") || strcmp(str(rec, "reason"), f->reason) != 0))
		return false;
	if (f->port >= 0) {
		const json_t *dport = json_object_get(rec, "dport");
		char up[ADDR_STRLEN + 2];
		long port = -1;

		/* An http record has no dport: its upstream's port is the one it went to. */
		if (json_is_integer(dport))
			port = (long)json_integer_value(dport);
		else if (is_http(rec) && !upstream_split(str(rec, "upstream"), up, sizeof(up), &port))
			port = -1;
		if (port != f->port)
			return false;
	}
	if (f->has_dst && !dst_match(&f->dst, rec))
		return false;
	if (f->domain) {
		/* dns: qname; conn, deny, sni: domain; http: the request's host (DOMAIN) */
		const char *d = str(rec, "domain") ? str(rec, "domain") :
				str(rec, "qname") ? str(rec, "qname") :
				is_http(rec) ? str(rec, "host") : NULL;
		size_t dl, sl;

		if (!d)
			return false;
		if (strncmp(f->domain, "*.", 2) == 0) {
			dl = strlen(d);
			sl = strlen(f->domain + 1);	/* ".suffix" */
			return dl > sl && strcmp(d + dl - sl, f->domain + 1) == 0;
		}
		return strcmp(d, f->domain) == 0;
	}
	return true;
}

int cli_audit_time(const char *arg, long long now, char *out, size_t sz)
{
	size_t n = strlen(arg);
	char *end;
	long long v;

	if (n == 0 || n >= sz)
		return -EINVAL;
	if (strchr("smhd", arg[n - 1]) && n > 1) {
		static const long long mult[] = { ['s'] = 1, ['m'] = 60, ['h'] = 3600, ['d'] = 86400 };
		struct tm tm;
		time_t t;

		errno = 0;
		v = strtoll(arg, &end, 10);
		if (errno || end != arg + n - 1 || v < 0 || v > 100LL * 365 * 86400)
			return -EINVAL;
		t = (time_t)(now - v * mult[(unsigned char)arg[n - 1]]);
		gmtime_r(&t, &tm);
		strftime(out, sz, "%Y-%m-%dT%H:%M:%S", &tm);
		return 0;
	}
	/* An absolute time: digits and RFC 3339 punctuation only. */
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789-:.TZ", arg[i]))
			return -EINVAL;
	if (n < 4)
		return -EINVAL;
	memcpy(out, arg, n + 1);
	if (out[n - 1] == 'Z')
		out[n - 1] = '\0';	/* "…:00Z" sorts before "…:00.123Z" otherwise */
	return 0;
}

/* ---- output ---------------------------------------------------------------------- */

static struct cli_table *table_new(void)
{
	static const char *const head[] = { "TIME", "EVENT", "SANDBOX", "PROTO", "DESTINATION",
					    "DOMAIN", "QTYPE", "RCODE", "BYTES_OUT", "BYTES_IN",
					    "DETAIL" };

	return cli_table_new(11, head, "llllllllrrl");
}

const char *cli_audit_cell(const char *s, char *buf, size_t sz)
{
	size_t j = 0;

	if (!s)
		return "-";
	for (size_t i = 0; s[i] && j + 1 < sz; i++)
		buf[j++] = s[i] > ' ' && s[i] < 0x7f ? s[i] : '?';
	buf[j] = '\0';
	return buf;
}

/*
 * A budget record: "closed api.openai.com tcp: 1000291816 of 1GB/day".
 * The rule key's words are cells each; the spaces between them are ours.
 */
static void budget_detail(const json_t *r, char *buf, size_t sz)
{
	const json_t *used = json_object_get(r, "used_bytes");
	const char *rule = str(r, "rule");
	char a[32], w[300], c[300], u[24] = "-";
	size_t n = (size_t)snprintf(buf, sz, "%s%s", cli_audit_cell(str(r, "action"), a, sizeof(a)),
				    rule ? "" : " -");

	if (json_is_integer(used))
		snprintf(u, sizeof(u), "%lld", (long long)json_integer_value(used));
	while (rule && *(rule += strspn(rule, " ")) && n < sz) {
		size_t len = strcspn(rule, " ");

		snprintf(w, sizeof(w), "%.*s", (int)(len < sizeof(w) ? len : sizeof(w) - 1), rule);
		n += (size_t)snprintf(buf + n, sz - n, " %s", cli_audit_cell(w, c, sizeof(c)));
		rule += len;
	}
	if (n < sz)
		snprintf(buf + n, sz - n, ": %s of %s", u, cli_audit_cell(str(r, "budget"), a, sizeof(a)));
}

const char *cli_audit_detail(const json_t *r, char *buf, size_t sz)
{
	char c3[300], c10[64];
	const char *ev = str(r, "event");
	const char *detail = str(r, "reason");
	const json_t *cnt = json_object_get(r, "count");
	const char *wd = str(r, "would_deny");

	if (ev && strcmp(ev, "dns") == 0)
		detail = str(r, "verdict");
	if (ev && strcmp(ev, "sandbox") == 0)
		detail = str(r, "action");
	if (ev && strcmp(ev, "http") == 0) {
		/* A gateway request: "METHOD PATH STATUS [reason]"; its parts are
		 * cells already, the spaces are ours. */
		const json_t *st = json_object_get(r, "status");
		char m[40], p[200], why[48];

		snprintf(buf, sz, "%s %s %lld%s%s", cli_audit_cell(str(r, "method"), m, sizeof(m)),
			 cli_audit_cell(str(r, "path"), p, sizeof(p)),
			 json_is_integer(st) ? (long long)json_integer_value(st) : 0LL,
			 str(r, "reason") ? " " : "",
			 str(r, "reason") ? cli_audit_cell(str(r, "reason"), why, sizeof(why)) : "");
		return buf;
	}
	if (ev && strcmp(ev, "budget") == 0) {
		budget_detail(r, buf, sz);
		return buf;
	}
	snprintf(buf, sz, "%s", cli_audit_cell(detail, c3, sizeof(c3)));
	/* A folded deny: its packets (the SYN and its retransmits). */
	if (json_is_integer(cnt) && json_integer_value(cnt) > 1)
		snprintf(buf, sz, "%s x%lld", c3, (long long)json_integer_value(cnt));
	/* Audit mode: passed, but enforce would not have (the JSON's "would_deny"). */
	if (wd)
		snprintf(buf, sz, "%s, would deny: %s", detail ? c3 : "allow",
			 cli_audit_cell(wd, c10, sizeof(c10)));
	return buf;
}

/* Add record @r to table @t.  Return: 0; -ENOMEM. */
static int table_row(struct cli_table *t, const json_t *r)
{
	char dst[80], c1[64], c2[64], c3[300], c4[300], c5[32], c6[32], c7[16], c8[16], c9[16],
		out[24] = "-", in[24] = "-", det[420];
	const json_t *port = json_object_get(r, "dport");
	const char *ev = str(r, "event");

	if (json_is_integer(json_object_get(r, "bytes_out")))
		snprintf(out, sizeof(out), "%lld",
			 (long long)json_integer_value(json_object_get(r, "bytes_out")));
	if (json_is_integer(json_object_get(r, "bytes_in")))
		snprintf(in, sizeof(in), "%lld",
			 (long long)json_integer_value(json_object_get(r, "bytes_in")));
	if (str(r, "dst") && json_is_integer(port))
		snprintf(dst, sizeof(dst), "%s:%lld", cli_audit_cell(str(r, "dst"), c1, sizeof(c1)),
			 (long long)json_integer_value(port));
	else
		snprintf(dst, sizeof(dst), "%s", cli_audit_cell(str(r, "dst"), c1, sizeof(c1)));
	if (ev && strcmp(ev, "dns") == 0)
		snprintf(c4, sizeof(c4), "%s", cli_audit_cell(str(r, "qname"), c3, sizeof(c3)));
	else
		snprintf(c4, sizeof(c4), "%s", cli_audit_cell(str(r, "domain"), c3, sizeof(c3)));
	if (ev && strcmp(ev, "http") == 0) {
		/* A gateway request: the upstream, the Host. */
		snprintf(dst, sizeof(dst), "%s", cli_audit_cell(str(r, "upstream"), c1, sizeof(c1)));
		snprintf(c4, sizeof(c4), "%s", cli_audit_cell(str(r, "host"), c3, sizeof(c3)));
	}
	{
		const char *row[] = { cli_audit_cell(str(r, "ts"), c5, sizeof(c5)), cli_audit_cell(ev, c6, sizeof(c6)),
				      cli_audit_cell(str(r, "sandbox"), c2, sizeof(c2)),
				      cli_audit_cell(str(r, "proto"), c7, sizeof(c7)), dst, c4,
				      cli_audit_cell(str(r, "qtype"), c8, sizeof(c8)),
				      cli_audit_cell(str(r, "rcode"), c9, sizeof(c9)), out, in,
				      cli_audit_detail(r, det, sizeof(det)) };

		return cli_table_add(t, row);
	}
}

/* ---- summary ----------------------------------------------------------------------- */

struct sum_row {
	char *sandbox, *domain;
	unsigned long long conns, bytes_out, bytes_in, denied;
};

struct summary {
	struct sum_row *rows;
	size_t n, cap;
	unsigned long long overflow;
};

static void summary_add(struct summary *s, const json_t *r)
{
	const char *ev = str(r, "event"), *sb = str(r, "sandbox"), *dom = str(r, "domain");
	struct sum_row *row = NULL;
	bool conn, deny, late;

	if (!ev || !sb)
		return;
	conn = strcmp(ev, "conn") == 0;
	deny = strcmp(ev, "deny") == 0;
	late = strcmp(ev, "conn_late") == 0;	/* bytes after the conn record: no new conn */
	if (!conn && !deny && !late)
		return;
	if (!dom)
		dom = "-";
	for (size_t i = 0; i < s->n && !row; i++)
		if (strcmp(s->rows[i].sandbox, sb) == 0 && strcmp(s->rows[i].domain, dom) == 0)
			row = &s->rows[i];
	if (!row) {
		if (s->n == AUDIT_SUMMARY_MAX) {
			s->overflow++;
			return;
		}
		if (s->n == s->cap) {
			size_t nc = s->cap ? s->cap * 2 : 64;
			struct sum_row *nr = realloc(s->rows, nc * sizeof(*nr));

			if (!nr)
				return;
			s->rows = nr;
			s->cap = nc;
		}
		row = &s->rows[s->n];
		memset(row, 0, sizeof(*row));
		row->sandbox = strdup(sb);
		row->domain = strdup(dom);
		if (!row->sandbox || !row->domain) {
			free(row->sandbox);
			free(row->domain);
			return;
		}
		s->n++;
	}
	if (conn || late) {
		row->conns += conn;
		row->bytes_out += (unsigned long long)json_integer_value(json_object_get(r, "bytes_out"));
		row->bytes_in += (unsigned long long)json_integer_value(json_object_get(r, "bytes_in"));
	} else {
		/* A folded record stands for "count" packets (older records: one). */
		json_int_t c = json_integer_value(json_object_get(r, "count"));

		row->denied += c > 0 ? (unsigned long long)c : 1;
	}
}

static int row_cmp(const void *a, const void *b)
{
	const struct sum_row *x = a, *y = b;
	int c = strcmp(x->sandbox, y->sandbox);

	return c ? c : strcmp(x->domain, y->domain);
}

static void summary_print(struct summary *s, bool as_json)
{
	static const char *const head[] = { "SANDBOX", "DOMAIN", "CONNS", "BYTES_OUT",
					    "BYTES_IN", "DENIED" };
	struct cli_table *tab = as_json ? NULL : cli_table_new(6, head, "llrrrr");
	char c1[80], c2[300];

	if (s->n > 1)	/* no rows: rows may be NULL, which qsort() must not get */
		qsort(s->rows, s->n, sizeof(*s->rows), row_cmp);
	if (!as_json && !tab)
		fprintf(stderr, "netd audit: out of memory\n");
	for (size_t i = 0; (as_json || tab) && i < s->n; i++) {
		const struct sum_row *r = &s->rows[i];

		if (as_json) {
			json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "sandbox", r->sandbox,
					      "domain", r->domain, "conns", (json_int_t)r->conns,
					      "bytes_out", (json_int_t)r->bytes_out, "bytes_in",
					      (json_int_t)r->bytes_in, "denied", (json_int_t)r->denied);
			char *t = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

			if (t)
				puts(t);
			free(t);
			json_decref(o);
		} else {
			char n[4][24];
			const char *row[] = { cli_audit_cell(r->sandbox, c1, sizeof(c1)),
					      cli_audit_cell(r->domain, c2, sizeof(c2)), n[0], n[1], n[2], n[3] };

			snprintf(n[0], sizeof(n[0]), "%llu", r->conns);
			snprintf(n[1], sizeof(n[1]), "%llu", r->bytes_out);
			snprintf(n[2], sizeof(n[2]), "%llu", r->bytes_in);
			snprintf(n[3], sizeof(n[3]), "%llu", r->denied);
			cli_table_add(tab, row);	/* a row lost to ENOMEM: the rest still print */
		}
	}
	if (tab) {
		cli_table_print(tab, stdout);
		cli_table_free(tab);
	}
	if (s->overflow)
		fprintf(stderr, "netd audit: %llu records beyond %u summary rows not shown\n",
			s->overflow, AUDIT_SUMMARY_MAX);
	for (size_t i = 0; i < s->n; i++) {
		free(s->rows[i].sandbox);
		free(s->rows[i].domain);
	}
	free(s->rows);
}

/* ---- reading ------------------------------------------------------------------------- */

struct reader {
	const struct audit_filter *f;
	bool json, summary;
	struct cli_table *table;	/* table output: rows wait here until printed */
	struct summary sum;
	unsigned long long bad;
	char *line;
	size_t len;
	bool skipping;	/* inside an overlong line */
	/* --last N: the last N matching lines of the backlog wait here */
	char **ring;
	size_t last_n, ring_n, ring_head;
	bool collecting;
};

/* One matching record out: summary, the line itself (--json) or a row. */
static void emit(struct reader *rd, const json_t *r, const char *line, size_t len)
{
	if (rd->summary)
		summary_add(&rd->sum, r);
	else if (rd->json)
		printf("%.*s\n", (int)len, line);
	else if (table_row(rd->table, r) < 0)
		rd->bad++;	/* out of memory: counted with the unreadable */
}

/* Keep @line as one of the last N; the oldest goes. */
static void ring_push(struct reader *rd, const char *line, size_t len)
{
	size_t at = (rd->ring_head + rd->ring_n) % rd->last_n;
	char *copy = strndup(line, len);

	if (!copy) {
		rd->bad++;
		return;
	}
	if (rd->ring_n == rd->last_n) {
		free(rd->ring[rd->ring_head]);
		rd->ring[rd->ring_head] = copy;
		rd->ring_head = (rd->ring_head + 1) % rd->last_n;
	} else {
		rd->ring[at] = copy;
		rd->ring_n++;
	}
}

/* The backlog is read: the kept lines out, oldest first; later ones go straight out. */
static void ring_flush(struct reader *rd)
{
	for (size_t i = 0; i < rd->ring_n; i++) {
		char *l = rd->ring[(rd->ring_head + i) % rd->last_n];
		json_t *r = json_loads(l, 0, NULL);

		if (r)
			emit(rd, r, l, strlen(l));
		json_decref(r);
		free(l);
	}
	free(rd->ring);
	rd->ring = NULL;
	rd->ring_n = 0;
	rd->collecting = false;
}

static void handle_line(struct reader *rd, const char *line, size_t len)
{
	json_error_t err;
	json_t *r = json_loadb(line, len, 0, &err);

	if (!json_is_object(r)) {
		rd->bad++;
		json_decref(r);
		return;
	}
	if (cli_audit_match(rd->f, r)) {
		if (rd->collecting)
			ring_push(rd, line, len);
		else
			emit(rd, r, line, len);
	}
	json_decref(r);
}

/* Feed @n bytes; complete lines are handled, a partial one is kept. */
static void feed(struct reader *rd, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			if (!rd->skipping && rd->len)
				handle_line(rd, rd->line, rd->len);
			rd->len = 0;
			rd->skipping = false;
			continue;
		}
		if (rd->skipping)
			continue;
		if (rd->len == AUDIT_LINE_MAX) {
			rd->skipping = true;
			rd->bad++;
			continue;
		}
		rd->line[rd->len++] = buf[i];
	}
}

/*
 * The end of a file that will not grow (no -f, or the old file of a
 * rotation): a last line without its newline is still a record (netd
 * writes whole lines; a file cut short ends so).
 */
static void feed_end(struct reader *rd)
{
	if (!rd->skipping && rd->len)
		handle_line(rd, rd->line, rd->len);
	rd->len = 0;
	rd->skipping = false;
}

static int read_all(struct reader *rd, int fd)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		feed(rd, buf, (size_t)n);
	return n < 0 ? -errno : 0;
}

/* -f: poll for growth; reopen when the path is a new file (rotation). */
static int follow(struct reader *rd, const char *path, int fd)
{
	struct stat st_fd, st_path;

	for (;;) {
		int r = read_all(rd, fd);

		if (r < 0)
			return r;
		if (rd->collecting)
			ring_flush(rd);
		/* The backlog sizes the columns; later rows keep those widths. */
		if (rd->table)
			cli_table_print(rd->table, stdout);
		fflush(stdout);
		if (stat(path, &st_path) == 0 && fstat(fd, &st_fd) == 0 &&
		    (st_path.st_ino != st_fd.st_ino || st_path.st_dev != st_fd.st_dev)) {
			int nfd = open(path, O_RDONLY | O_CLOEXEC);

			if (nfd >= 0) {
				read_all(rd, fd);	/* the rest of the old file first */
				feed_end(rd);
				close(fd);
				fd = nfd;
				continue;
			}
		}
		usleep(200 * 1000);
	}
}

static int copy_path(const char *p, char *out, size_t sz)
{
	if (strlen(p) >= sz)
		return -ENAMETOOLONG;
	memcpy(out, p, strlen(p) + 1);
	return 0;
}

int cli_audit_locate(const char *socket_path, const char *config_path, char *out, size_t sz,
		     const char **how)
{
	const char *env = getenv("NETD_AUDIT_LOG");
	json_t *reply = NULL;
	struct config cfg;
	int status = 0, r;

	if (env && env[0]) {
		*how = "env";
		return copy_path(env, out, sz);
	}
	/* The running daemon knows best: its config may be anywhere. */
	if (socket_path && httpc_request(socket_path, "GET", "/v1/status", NULL, &status,
					 &reply) == 0 && status == 200) {
		const char *p = json_string_value(
			json_object_get(json_object_get(reply, "audit"), "file"));

		if (p && p[0]) {
			*how = "daemon";
			r = copy_path(p, out, sz);
			json_decref(reply);
			return r;
		}
	}
	json_decref(reply);
	if (config_path && access(config_path, R_OK) == 0 && config_init(&cfg) == 0) {
		struct diag err = { 0 };

		r = 1;
		if (config_load_file(&cfg, config_path, &err) == 0 && cfg.audit_log) {
			*how = "config";
			r = copy_path(cfg.audit_log, out, sz);
		}
		config_done(&cfg);
		if (r <= 0)
			return r;
	}
	*how = "default";
	return copy_path(AUDIT_DEFAULT_LOG, out, sz);
}

/* The lines of one file that were not JSON objects: how many, the first. */
struct read_bad {
	unsigned long n;
	const char *file;	/* of the first; borrowed */
	unsigned long line;
};

/* Hand every JSON object line of @path to @fn.  Return: 0; -errno. */
static int read_file(const char *path, cli_audit_fn fn, void *arg, struct read_bad *bad)
{
	FILE *f = fopen(path, "re");
	unsigned long line_no = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int r = 0;

	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) >= 0) {
		json_t *rec = NULL;

		line_no++;
		if ((size_t)n <= AUDIT_LINE_MAX)
			rec = json_loadb(line, (size_t)n, JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_object(rec)) {
			if (!bad->n++) {
				bad->file = path;
				bad->line = line_no;
			}
		} else {
			r = fn(arg, rec, path, line_no);
		}
		json_decref(rec);
		if (r < 0)
			break;
	}
	if (r >= 0)
		r = ferror(f) ? -EIO : 0;
	free(line);
	fclose(f);
	return r;
}

int cli_audit_read_files(const char *cmd, const char *const *files, size_t n_files,
			 const char *socket_path, cli_audit_fn fn, void *arg, char *source,
			 size_t source_sz)
{
	struct read_bad bad = { 0 };
	const char *how, *one[1];
	char found[4096];

	if (source && source_sz)
		source[0] = '\0';
	if (!n_files) {
		/* The log `netd audit` would read: $NETD_AUDIT_LOG, the daemon's, the config's. */
		if (cli_audit_locate(socket_path, NETD_DEFAULT_CONFIG, found, sizeof(found), &how) < 0) {
			fprintf(stderr, "netd: %s: the audit log's path is too long\n", cmd);
			return CLI_FAILED;
		}
		one[0] = found;
		files = one;
		n_files = 1;
	}
	for (size_t i = 0; i < n_files; i++) {
		int r = read_file(files[i], fn, arg, &bad);
		size_t l = source ? strlen(source) : 0;

		if (r < 0) {
			fprintf(stderr, "netd: %s: %s: %s\n", cmd, files[i], strerror(-r));
			return r == -ENOENT ? CLI_NOT_FOUND : CLI_FAILED;	/* as `netd audit` */
		}
		if (source)
			snprintf(source + l, source_sz - l, "%s%s", l ? ", " : "", files[i]);
	}
	if (bad.n)
		fprintf(stderr, "netd: %s: skipped %lu line%s that %s not a JSON object (the "
			"first at %s:%lu)\n", cmd, bad.n, bad.n == 1 ? "" : "s",
			bad.n == 1 ? "is" : "are", bad.file, bad.line);
	return CLI_OK;
}

/* What `netd audit`'s options ask for, beside the filter and the reader. */
struct audit_opts {
	const char *path;	/* --file, borrowed from argv; NULL = find the log */
	bool follow, from_start;
};

/*
 * audit_args() - parse `netd audit`'s options into @f, @rd and @o.
 * Return: -1 to go on; CLI_OK (--help printed); CLI_USAGE (said why).
 */
static int audit_args(int argc, char **argv, struct audit_filter *f, struct reader *rd,
		      struct audit_opts *o)
{
	/* The options that take a value: each at most once, never without it
	 * (as cli_opt_next() holds the other commands to). */
	static const char *const valued[] = { "--last", "--port", "--verdict", "--reason",
					      "--dst", "--file", "--sandbox", "--event",
					      "--domain", "--since", "--until" };
	const char *seen[sizeof(valued) / sizeof(valued[0])] = { 0 };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
			if (strcmp(a, valued[k]) != 0)
				continue;
			if (!v) {
				fprintf(stderr, "netd: audit: %s wants a value\n", a);
				return CLI_USAGE;
			}
			if (seen[k]) {
				fprintf(stderr, "netd: audit: %s given twice (\"%s\", then \"%s\"): "
					"give it once\n", a, seen[k], v);
				return CLI_USAGE;
			}
			seen[k] = v;
		}

		if (strcmp(a, "-f") == 0 || strcmp(a, "--follow") == 0) {
			o->follow = true;
		} else if (strcmp(a, "--from-start") == 0) {
			o->from_start = true;
		} else if (v && (strcmp(a, "--last") == 0 || strcmp(a, "--port") == 0)) {
			char *end;
			long n;

			errno = 0;
			n = strtol(v, &end, 10);
			if (errno || *end || end == v || n < (a[2] == 'l' ? 1 : 0) ||
			    n > (a[2] == 'l' ? AUDIT_LAST_MAX : 65535)) {
				fprintf(stderr, "netd audit: %s: bad number \"%s\" (%s)\n", a, v,
					a[2] == 'l' ? "1-1000000" : "0-65535");
				return CLI_USAGE;
			}
			if (a[2] == 'l')
				rd->last_n = (size_t)n;
			else
				f->port = (int)n;
			i++;
		} else if (v && strcmp(a, "--verdict") == 0) {
			if (strcmp(v, "allow") != 0 && strcmp(v, "deny") != 0) {
				fprintf(stderr, "netd audit: --verdict: allow or deny, not \"%s\"\n", v);
				return CLI_USAGE;
			}
			f->verdict = v, i++;
		} else if (v && strcmp(a, "--reason") == 0) {
			f->reason = v, i++;
		} else if (v && strcmp(a, "--dst") == 0) {
			struct addr one;

			if (prefix_parse(v, &f->dst) == 0) {
				f->has_dst = true;
			} else if (addr_parse(v, &one) == 0) {
				f->dst.addr = one;
				f->dst.plen = one.family == AF_INET ? 32 : 128;
				f->has_dst = true;
			} else {
				fprintf(stderr, "netd audit: --dst: \"%s\" is not an address or CIDR\n", v);
				return CLI_USAGE;
			}
			i++;
		} else if (strcmp(a, "--json") == 0) {
			rd->json = true;
		} else if (strcmp(a, "--summary") == 0) {
			rd->summary = true;
		} else if (v && strcmp(a, "--file") == 0) {
			o->path = v, i++;
		} else if (v && strcmp(a, "--sandbox") == 0) {
			f->sandbox = v, i++;
		} else if (v && strcmp(a, "--event") == 0) {
			if (!cli_audit_event_known(v)) {
				fprintf(stderr, "netd audit: unknown event \"%s\" (", v);
				print_events(stderr);
				fputs(")\n", stderr);
				return CLI_USAGE;
			}
			f->event = v, i++;
		} else if (v && strcmp(a, "--domain") == 0) {
			f->domain = v, i++;
		} else if (v && (strcmp(a, "--since") == 0 || strcmp(a, "--until") == 0)) {
			char *out = a[2] == 's' ? f->since : f->until;

			if (cli_audit_time(v, (long long)time(NULL), out, sizeof(f->since)) < 0) {
				fprintf(stderr, "netd audit: bad time \"%s\"\n%s", v, audit_usage);
				return CLI_USAGE;
			}
			i++;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(audit_usage, stdout);
			return CLI_OK;
		} else {
			fputs(audit_usage, stderr);
			return CLI_USAGE;
		}
	}
	return -1;
}

int cli_audit(int argc, char **argv, const char *socket_path)
{
	struct audit_filter f = { .port = -1 };
	struct reader rd = { .f = &f };
	struct audit_opts o = { 0 };
	const char *path, *how = "--file";
	char found[4096];
	bool follow_mode, from_start;
	int fd, r;

	r = audit_args(argc, argv, &f, &rd, &o);
	if (r >= 0)
		return r;
	path = o.path;
	follow_mode = o.follow;
	from_start = o.from_start;
	if (follow_mode && rd.summary) {
		fprintf(stderr, "netd audit: --summary and -f do not go together\n");
		return CLI_USAGE;
	}
	if (!path) {
		if (cli_audit_locate(socket_path, NETD_DEFAULT_CONFIG, found, sizeof(found), &how) < 0) {
			fprintf(stderr, "netd audit: the audit log's path is too long\n");
			return CLI_FAILED;
		}
		path = found;
	}
	rd.line = malloc(AUDIT_LINE_MAX);
	if (!rd.line || (!rd.json && !rd.summary && !(rd.table = table_new()))) {
		free(rd.line);
		return CLI_FAILED;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = errno;
		fprintf(stderr, "netd audit: %s (%s): %s\n", path,
			strcmp(how, "daemon") == 0 ? "the running daemon's audit_log" :
			strcmp(how, "config") == 0 ? "audit_log in " NETD_DEFAULT_CONFIG :
			strcmp(how, "env") == 0 ? "$NETD_AUDIT_LOG" :
			strcmp(how, "--file") == 0 ? "--file" :
			"the default; no daemon answered and no config names another", strerror(r));
		free(rd.line);
		cli_table_free(rd.table);
		return r == ENOENT ? CLI_NOT_FOUND : CLI_FAILED;
	}
	if (rd.last_n) {
		rd.ring = calloc(rd.last_n, sizeof(*rd.ring));
		rd.collecting = rd.ring != NULL;
	}
	/* -f is tail -f: only what is written from now on, unless asked
	 * for the backlog (--from-start) or its end (--last N). */
	if (follow_mode && !from_start && !rd.last_n)
		lseek(fd, 0, SEEK_END);
	r = follow_mode ? follow(&rd, path, fd) : read_all(&rd, fd);
	if (!follow_mode)
		feed_end(&rd);
	if (rd.collecting)
		ring_flush(&rd);
	close(fd);
	if (rd.table) {
		cli_table_print(rd.table, stdout);
		cli_table_free(rd.table);
	}
	if (rd.summary)
		summary_print(&rd.sum, rd.json);
	if (rd.bad)
		fprintf(stderr, "netd audit: %llu lines were not JSON records (skipped)\n", rd.bad);
	free(rd.line);
	if (r < 0) {
		fprintf(stderr, "netd audit: %s: %s\n", path, strerror(-r));
		return CLI_FAILED;
	}
	return CLI_OK;
}

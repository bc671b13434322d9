/*
 * journal - audit records to the systemd journal (see journal.h): the
 * conversion (journal_fields(), pure) on the loop's thread, the sending
 * (sd_journal_sendv()) on a thread of its own, a bounded queue between.
 * The thread touches nothing of netd but this queue.
 */
#include "netd/trail/journal.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-journal.h>

#define SUMMARY_MAX 400		/* bytes of MESSAGE='s value */
#define DRAIN_MS    1000	/* journal_free() waits at most this long for the queue */

struct jent {
	struct jent *next;
	size_t n, bytes;
	uint32_t *lens;		/* n field lengths, then the fields' bytes */
	char *data;
};

struct journal {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct jent *head, *tail;
	size_t queued, queued_bytes;
	bool stop;
	uint64_t written, dropped;
};

/* Append "NAME=value" (@vlen bytes of @val, cut at JOURNAL_ENTRY_MAX). */
static int put(char *buf, size_t cap, size_t *off, struct iovec *iov, size_t max, size_t *n,
	       const char *name, const char *val, size_t vlen)
{
	size_t nl = strlen(name);

	if (*n >= max)
		return -ENOSPC;
	if (vlen > JOURNAL_ENTRY_MAX)
		vlen = JOURNAL_ENTRY_MAX;
	if (*off + nl + 1 + vlen > cap)
		return -ENOSPC;
	memcpy(buf + *off, name, nl);
	buf[*off + nl] = '=';
	memcpy(buf + *off + nl + 1, val, vlen);
	iov[*n].iov_base = buf + *off;
	iov[*n].iov_len = nl + 1 + vlen;
	*off += nl + 1 + vlen;
	(*n)++;
	return 0;
}

/* A scalar's text: a string as it is, others as JSON writes them.  @tmp freed by the caller. */
static const char *scalar_text(const json_t *v, char **tmp, size_t *len)
{
	*tmp = NULL;
	if (json_is_string(v)) {
		*len = json_string_length(v);
		return json_string_value(v);
	}
	*tmp = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(12));
	*len = *tmp ? strlen(*tmp) : 0;
	return *tmp ? *tmp : "";
}

/* "NETD_" + @key upper-cased, [A-Z0-9_] only.  Return: false if too long for a field name. */
static bool field_name(const char *key, char *out, size_t sz)
{
	size_t kl = strlen(key);

	if (kl == 0 || 5 + kl + 1 > sz || 5 + kl > 64)	/* journald: names of at most 64 */
		return false;
	memcpy(out, "NETD_", 5);
	for (size_t i = 0; i < kl; i++) {
		char ch = key[i];

		if (ch >= 'a' && ch <= 'z')
			ch = (char)(ch - 'a' + 'A');
		else if (!((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')))
			ch = '_';
		out[5 + i] = ch;
	}
	out[5 + kl] = '\0';
	return true;
}

/* MESSAGE=: "EVENT key=value ..." of the members people look for first, on one line. */
static size_t summary(const json_t *rec, const char *event, char *out, size_t sz)
{
	static const char *const keys[] = { "sandbox", "action", "qname", "qtype", "verdict",
					    "reason", "rcode", "would_deny", "proto", "dst",
					    "dport", "domain", "bytes_out", "bytes_in", "count",
					    "status", "host", NULL };
	size_t n = (size_t)snprintf(out, sz, "%s", event);

	for (size_t i = 0; keys[i] && n < sz; i++) {
		const json_t *v = json_object_get(rec, keys[i]);
		char *tmp;
		size_t len;
		const char *s;

		if (!v || json_is_null(v) || json_is_array(v) || json_is_object(v))
			continue;
		s = scalar_text(v, &tmp, &len);
		n += (size_t)snprintf(out + n, sz - n, " %s=%.*s", keys[i], (int)len, s);
		free(tmp);
	}
	if (n >= sz)
		n = sz - 1;
	for (size_t i = 0; i < n; i++)	/* one line: what a sandbox wrote stays on it */
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	return n;
}

int journal_fields(const json_t *rec, char *buf, size_t cap, struct iovec *iov, size_t max_iov)
{
	const char *event = json_string_value(json_object_get(rec, "event"));
	const json_t *verdict = json_object_get(rec, "verdict");
	char msg[SUMMARY_MAX], name[72];
	const char *key;
	const json_t *v;
	bool notice;
	size_t off = 0, n = 0, ml;

	if (!json_is_object(rec) || !event)
		return -EINVAL;
	notice = strcmp(event, "deny") == 0 || strcmp(event, "sni") == 0 ||
		 json_object_get(rec, "would_deny") ||
		 (strcmp(event, "dns") == 0 && json_is_string(verdict) &&
		  strcmp(json_string_value(verdict), "deny") == 0);
	ml = summary(rec, event, msg, sizeof(msg));
	if (put(buf, cap, &off, iov, max_iov, &n, "MESSAGE", msg, ml) < 0 ||
	    put(buf, cap, &off, iov, max_iov, &n, "PRIORITY", notice ? "5" : "6", 1) < 0 ||
	    put(buf, cap, &off, iov, max_iov, &n, "SYSLOG_IDENTIFIER", "netd-audit", 10) < 0)
		return -ENOSPC;
	json_object_foreach((json_t *)rec, key, v) {
		if (json_is_null(v) || !field_name(key, name, sizeof(name)))
			continue;
		if (json_is_array(v)) {		/* one field per element: each can be matched */
			size_t i;
			const json_t *e;

			json_array_foreach(v, i, e) {
				char *tmp;
				size_t len;
				const char *s = scalar_text(e, &tmp, &len);
				int r = put(buf, cap, &off, iov, max_iov, &n, name, s, len);

				free(tmp);
				if (r < 0)
					return (int)n;	/* what fits: the rest is left out */
			}
			continue;
		}
		{
			char *tmp;
			size_t len;
			const char *s = scalar_text(v, &tmp, &len);
			int r = put(buf, cap, &off, iov, max_iov, &n, name, s, len);

			free(tmp);
			if (r < 0)
				return (int)n;
		}
	}
	return (int)n;
}

static void *writer(void *arg)
{
	struct journal *j = arg;
	struct iovec iov[JOURNAL_FIELDS_MAX];
	int old;

	/* Cancelled only inside sd_journal_sendv(): journal_free() of a stalled journald. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&j->mu);
	for (;;) {
		struct jent *e;
		size_t off = 0;
		int r;

		while (!j->head && !j->stop)
			pthread_cond_wait(&j->cv, &j->mu);
		e = j->head;
		if (!e)
			break;	/* stopped and drained */
		j->head = e->next;
		if (!j->head)
			j->tail = NULL;
		j->queued--;
		j->queued_bytes -= e->bytes;
		pthread_mutex_unlock(&j->mu);
		for (size_t i = 0; i < e->n; i++) {
			iov[i].iov_base = e->data + off;
			iov[i].iov_len = e->lens[i];
			off += e->lens[i];
		}
		pthread_cleanup_push(free, e);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
		r = sd_journal_sendv(iov, (int)e->n);	/* may block: this thread's whole job */
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
		pthread_cleanup_pop(1);
		pthread_mutex_lock(&j->mu);
		if (r < 0)
			j->dropped++;
		else
			j->written++;
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

int journal_new(struct journal **ret)
{
	struct journal *j = calloc(1, sizeof(*j));
	int r;

	if (!j)
		return -ENOMEM;
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	r = pthread_create(&j->thread, NULL, writer, j);
	if (r) {
		pthread_mutex_destroy(&j->mu);
		pthread_cond_destroy(&j->cv);
		free(j);
		return -r;
	}
	*ret = j;
	return 0;
}

void journal_free(struct journal *j)
{
	struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };
	bool busy = true;

	if (!j)
		return;
	/* Give the writer about a second for what is queued; then drop the rest. */
	for (int i = 0; busy && i < DRAIN_MS / 10; i++) {
		pthread_mutex_lock(&j->mu);
		busy = j->head != NULL;
		pthread_mutex_unlock(&j->mu);
		if (busy)
			nanosleep(&nap, NULL);
	}
	pthread_mutex_lock(&j->mu);
	while (j->head) {
		struct jent *e = j->head;

		j->head = e->next;
		j->dropped++;
		free(e);
	}
	j->tail = NULL;
	j->stop = true;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	/* A journald that stopped reading holds the writer in sendmsg(): cut it off. */
	{
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		if (pthread_timedjoin_np(j->thread, NULL, &until) != 0) {
			pthread_cancel(j->thread);
			pthread_join(j->thread, NULL);
			j->dropped++;	/* the entry it was sending */
		}
	}
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	free(j);
}

int journal_record(struct journal *j, const json_t *rec)
{
	static char buf[JOURNAL_ENTRY_MAX + 4096];	/* the loop's thread only */
	struct iovec iov[JOURNAL_FIELDS_MAX];
	struct jent *e;
	size_t bytes = 0;
	int n;

	if (!j)
		return -EINVAL;
	n = journal_fields(rec, buf, sizeof(buf), iov, JOURNAL_FIELDS_MAX);
	if (n < 0) {
		pthread_mutex_lock(&j->mu);
		j->dropped++;
		pthread_mutex_unlock(&j->mu);
		return n;
	}
	for (int i = 0; i < n; i++)
		bytes += iov[i].iov_len;
	e = malloc(sizeof(*e) + (size_t)n * sizeof(uint32_t) + bytes);
	pthread_mutex_lock(&j->mu);
	if (!e || j->queued >= JOURNAL_QUEUE_MAX || j->queued_bytes + bytes > JOURNAL_QUEUE_BYTES) {
		j->dropped++;
		pthread_mutex_unlock(&j->mu);
		free(e);
		return e ? -ENOBUFS : -ENOMEM;
	}
	pthread_mutex_unlock(&j->mu);
	e->next = NULL;
	e->n = (size_t)n;
	e->bytes = bytes;
	e->lens = (uint32_t *)(e + 1);
	e->data = (char *)(e->lens + n);
	for (int i = 0, off = 0; i < n; i++) {
		e->lens[i] = (uint32_t)iov[i].iov_len;
		memcpy(e->data + off, iov[i].iov_base, iov[i].iov_len);
		off += (int)iov[i].iov_len;
	}
	pthread_mutex_lock(&j->mu);
	if (j->tail)
		j->tail->next = e;
	else
		j->head = e;
	j->tail = e;
	j->queued++;
	j->queued_bytes += bytes;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return 0;
}

uint64_t journal_written(struct journal *j)
{
	uint64_t v;

	if (!j)
		return 0;
	pthread_mutex_lock(&j->mu);
	v = j->written;
	pthread_mutex_unlock(&j->mu);
	return v;
}

uint64_t journal_dropped(struct journal *j)
{
	uint64_t v;

	if (!j)
		return 0;
	pthread_mutex_lock(&j->mu);
	v = j->dropped;
	pthread_mutex_unlock(&j->mu);
	return v;
}

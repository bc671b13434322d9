/*
 * gw/creds - load the gateway's secrets (files, systemd credentials,
 * inline values), check their bytes, apply each credential's format, keep
 * them in buffers wiped before they are freed.  An edge: it opens files;
 * never logs.  Not here: which request gets which credential
 * (netd/gw/req.c), where credentials are defined (netd/model/config_gw.c).
 */
#include "netd/gw/creds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

/* Wipe then free @p of @len bytes; NULL-safe. */
static void wipe_free(void *p, size_t len)
{
	if (!p)
		return;
	OPENSSL_cleanse(p, len);
	free(p);
}

/* Read all of @fd, at most @max bytes, into @buf (@max + 1 bytes of room). */
static ssize_t read_all(int fd, char *buf, size_t max)
{
	size_t n = 0;

	while (n <= max) {
		ssize_t r = read(fd, buf + n, max + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

/* Where @cr's secret source is in netd.yaml, with its name and @path: the message's head. */
#define CRED_FAIL(...) diag_set(err, yaml, cr->src_line, cr->src_col, __VA_ARGS__)

/*
 * The secret of @cr from @path into *@ret (malloc'd, wiped by the caller):
 * checks of a file (@own: owner and mode too), one trailing newline off.
 */
static int read_secret(const struct config_credential *cr, const char *yaml, const char *path,
		       bool own, char **ret, size_t *ret_len, struct diag *err)
{
	const char *key = own ? "file" : "systemd";
	char *buf = NULL;
	struct stat st;
	ssize_t n;
	int fd, r;

	/* O_NONBLOCK: a FIFO in its place must not hang the open; fstat refuses it. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == ELOOP)
		return CRED_FAIL("credentials.%s.%s: %s is a symbolic link: name the file itself",
				 cr->name, key, path);
	if (fd < 0) {
		r = -errno;
		CRED_FAIL("credentials.%s.%s: cannot open %s: %s", cr->name, key, path,
			  strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		CRED_FAIL("credentials.%s.%s: %s: %s", cr->name, key, path, strerror(-r));
		goto out;
	}
	r = -EINVAL;
	if (!S_ISREG(st.st_mode)) {
		CRED_FAIL("credentials.%s.%s: %s is not a regular file", cr->name, key, path);
		goto out;
	}
	if (own && (st.st_mode & 077)) {
		CRED_FAIL("credentials.%s.%s: %s has mode %04o: group and others must have no "
			  "access (chmod 0600 %s)", cr->name, key, path,
			  (unsigned int)(st.st_mode & 07777), path);
		goto out;
	}
	if (own && st.st_uid != 0 && st.st_uid != geteuid()) {
		CRED_FAIL("credentials.%s.%s: %s is owned by uid %u: only root or netd's own user "
			  "(uid %u) may own a secret", cr->name, key, path, (unsigned int)st.st_uid,
			  (unsigned int)geteuid());
		goto out;
	}
	if (st.st_size > GW_CREDS_FILE_MAX) {
		CRED_FAIL("credentials.%s.%s: %s is %lld bytes; the limit is %u", cr->name, key,
			  path, (long long)st.st_size, GW_CREDS_FILE_MAX);
		goto out;
	}
	buf = malloc(GW_CREDS_FILE_MAX + 2);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	n = read_all(fd, buf, GW_CREDS_FILE_MAX);
	if (n < 0) {
		r = (int)n;
		CRED_FAIL("credentials.%s.%s: cannot read %s: %s", cr->name, key, path,
			  strerror(-r));
		goto out;
	}
	if (n > GW_CREDS_FILE_MAX) {	/* it grew since fstat() */
		CRED_FAIL("credentials.%s.%s: %s is more than %u bytes", cr->name, key, path,
			  GW_CREDS_FILE_MAX);
		goto out;
	}
	/* One trailing "\n" or "\r\n": what an editor or echo leaves. */
	if (n > 0 && buf[n - 1] == '\n') {
		n--;
		if (n > 0 && buf[n - 1] == '\r')
			n--;
	}
	buf[n] = '\0';
	*ret = buf;
	*ret_len = (size_t)n;
	buf = NULL;
	r = 0;
out:
	wipe_free(buf, GW_CREDS_FILE_MAX + 2);
	close(fd);
	return r;
}

/*
 * The bytes that go into a header (RFC 9110 5.5): no CR, LF, NUL or other
 * control byte (a CR or LF would split the request), not empty, no outer
 * space (a receiver trims it).  The message gives an offset, never a byte.
 */
static int check_secret(const struct config_credential *cr, const char *yaml, const char *what,
			const char *s, size_t len, struct diag *err)
{
	if (len == 0)
		return CRED_FAIL("credentials.%s: %s is empty", cr->name, what);
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch == 0x7f)
			return CRED_FAIL("credentials.%s: %s has a CR, LF, NUL or other control "
					 "byte at byte %zu (a secret goes into a header: RFC 9110 "
					 "5.5; only one trailing newline is stripped)", cr->name,
					 what, i);
	}
	if (s[0] == ' ' || s[len - 1] == ' ')
		return CRED_FAIL("credentials.%s: %s starts or ends with a space, which a "
				 "server would trim", cr->name, what);
	return 0;
}

/*
 * @cr's format with {secret} = @s/@len into @g's value, a new wiped-on-free
 * buffer, and where the secret sits in it.
 */
static int apply_format(const struct config_credential *cr, const char *s, size_t len,
			struct gw_credential *g)
{
	const char *at = strstr(cr->format, "{secret}");
	size_t pre, post, total;
	char *v;

	if (!at)	/* config_gw.c never lets one through */
		return -EINVAL;
	pre = (size_t)(at - cr->format);
	post = strlen(at + 8);
	total = pre + len + post;
	v = malloc(total + 1);
	if (!v)
		return -ENOMEM;
	memcpy(v, cr->format, pre);
	memcpy(v + pre, s, len);
	memcpy(v + pre + len, at + 8, post);
	v[total] = '\0';
	g->value = v;
	g->value_len = total;
	g->secret_off = pre;
	g->secret_len = len;
	return 0;
}

static void cred_done(struct gw_credential *g)
{
	free(g->name);
	free(g->header);
	free(g->placeholder);
	for (size_t i = 0; i < g->n_hosts; i++)
		free(g->hosts[i]);
	free(g->hosts);
	wipe_free(g->value, g->value_len);
}

void gw_creds_free(struct gw_creds *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++)
		cred_done(&cs->v[i]);
	free(cs->v);
	free(cs);
}

/* The copies of @cr's non-secret strings into @g. */
static int copy_public(struct gw_credential *g, const struct config_credential *cr)
{
	g->name = strdup(cr->name);
	g->header = strdup(cr->header);
	g->placeholder = strdup(cr->placeholder);
	if (!g->name || !g->header || !g->placeholder)
		return -ENOMEM;
	g->hosts = calloc(cr->n_hosts ? cr->n_hosts : 1, sizeof(*g->hosts));
	if (!g->hosts)
		return -ENOMEM;
	for (size_t h = 0; h < cr->n_hosts; h++) {
		if (!(g->hosts[h] = strdup(cr->hosts[h])))
			return -ENOMEM;
		g->n_hosts++;
	}
	return 0;
}

/* One credential: its secret, checked, formatted, into @g. */
static int load_one(struct gw_credential *g, const struct config_credential *cr,
		    const char *yaml, struct diag *err)
{
	char path[PATH_MAX], *secret = NULL;
	const char *dir;
	size_t len = 0;
	int r;

	if ((r = copy_public(g, cr)) < 0)
		return r;
	switch (cr->src) {
	case CONFIG_CRED_FILE:
		r = read_secret(cr, yaml, cr->src_arg, true, &secret, &len, err);
		if (r == 0)
			r = check_secret(cr, yaml, cr->src_arg, secret, len, err);
		break;
	case CONFIG_CRED_SYSTEMD:
		dir = getenv("CREDENTIALS_DIRECTORY");
		if (!dir || !dir[0])
			return CRED_FAIL("credentials.%s.systemd: $CREDENTIALS_DIRECTORY is not set: "
					 "netd runs without systemd credentials (add "
					 "LoadCredential=%s:PATH to netd.service, or use file:)",
					 cr->name, cr->src_arg);
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, cr->src_arg) >= sizeof(path))
			return CRED_FAIL("credentials.%s.systemd: $CREDENTIALS_DIRECTORY is too long",
					 cr->name);
		r = read_secret(cr, yaml, path, false, &secret, &len, err);
		if (r == 0)
			r = check_secret(cr, yaml, path, secret, len, err);
		break;
	case CONFIG_CRED_VALUE:
		if (!cr->value)
			return CRED_FAIL("credentials.%s.value: no value", cr->name);
		r = check_secret(cr, yaml, "value:", cr->value, cr->value_len, err);
		if (r == 0)
			r = apply_format(cr, cr->value, cr->value_len, g);
		return r;
	}
	if (r == 0)
		r = apply_format(cr, secret, len, g);
	wipe_free(secret, len + 1);
	return r;
}

int gw_creds_load(const struct config *c, struct gw_creds **out, struct diag *err)
{
	const char *yaml = c->src_file ? c->src_file : "netd.yaml";
	struct gw_creds *cs;
	int r = 0;

	*out = NULL;
	cs = calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	if (c->n_creds && !(cs->v = calloc(c->n_creds, sizeof(*cs->v)))) {
		free(cs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->n_creds; i++) {
		cs->n++;	/* counted first: gw_creds_free() frees a half-built one */
		r = load_one(&cs->v[i], &c->creds[i], yaml, err);
		if (r < 0) {
			gw_creds_free(cs);
			return r;
		}
	}
	*out = cs;
	return 0;
}

const struct gw_credential *gw_creds_find(const struct gw_creds *cs, const char *name)
{
	for (size_t i = 0; cs && name && i < cs->n; i++)
		if (strcmp(cs->v[i].name, name) == 0)
			return &cs->v[i];
	return NULL;
}

bool gw_creds_host_ok(const struct gw_credential *cred, const char *name)
{
	size_t len;

	if (!cred || !name)
		return false;
	len = strlen(name);
	if (len && name[len - 1] == '.')
		len--;
	if (len == 0)
		return false;
	for (size_t i = 0; i < cred->n_hosts; i++) {
		const char *h = cred->hosts[i];

		if (h[0] == '*' && h[1] == '.') {
			size_t sl = strlen(h + 2);

			/* Strictly below: at least one label and a dot before the suffix. */
			if (len > sl + 1 && name[len - sl - 1] == '.' &&
			    strncasecmp(name + len - sl, h + 2, sl) == 0)
				return true;
		} else if (strlen(h) == len && strncasecmp(name, h, len) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * pdigest - the policy digest files, STATE_DIR/policies/NAME.digest: for
 * each policy, the digest (policyview.h) of the rules netd last applied to
 * its sandboxes.  A restore compares it with the policy as loaded now; when
 * they differ the sandboxes' pins were made under other rules and are
 * dropped.  One small file per policy, so that a reload that changes the
 * policy of 5,000 sandboxes writes one file, not 5,000 state files.
 *
 * Written after the commit it describes: a crash in between leaves the old
 * digest, and the restore then drops pins it could have kept (never keeps
 * pins it should have dropped).
 */
#include "netd/daemon/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/log.h"
#include "netd/daemon/policyview.h"

struct pdigest {
	char name[POLICY_NAME_MAX + 1];
	char digest[PVIEW_DIGEST_LEN];	/* what the file says; "" unknown */
	bool read;			/* the file was looked at */
};

static void pdigest_path(const struct daemon *d, const char *name, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s/policies/%s.digest", d->cfg.state_dir, name);
}

/* @name's cache entry, made (empty) if absent.  NULL: out of memory. */
static struct pdigest *pdigest_slot(struct daemon *d, const char *name)
{
	struct pdigest *p;

	for (size_t i = 0; i < d->n_pdigests; i++)
		if (strcmp(d->pdigests[i].name, name) == 0)
			return &d->pdigests[i];
	if (strlen(name) > POLICY_NAME_MAX)
		return NULL;
	p = reallocarray(d->pdigests, d->n_pdigests + 1, sizeof(*p));
	if (!p)
		return NULL;
	d->pdigests = p;
	p = &d->pdigests[d->n_pdigests++];
	memset(p, 0, sizeof(*p));
	memcpy(p->name, name, strlen(name) + 1);
	return p;
}

const char *daemon_pdigest_get(struct daemon *d, const char *name)
{
	struct pdigest *p = pdigest_slot(d, name);
	char path[PATH_MAX], buf[PVIEW_DIGEST_LEN + 8];
	ssize_t n = -1;
	int fd;

	if (!p)
		return "";
	if (p->read)
		return p->digest;
	p->read = true;
	pdigest_path(d, name, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	/* Exactly the 16 hex digits and a newline; anything else is unknown. */
	if (n == PVIEW_DIGEST_LEN && buf[PVIEW_DIGEST_LEN - 1] == '\n' &&
	    strspn(buf, "0123456789abcdef") == PVIEW_DIGEST_LEN - 1) {
		memcpy(p->digest, buf, PVIEW_DIGEST_LEN - 1);
		p->digest[PVIEW_DIGEST_LEN - 1] = '\0';
	} else if (fd >= 0 || errno != ENOENT) {
		log_warn("%s: unreadable policy digest; the pins of its sandboxes will be dropped",
			 path);
	}
	return p->digest;
}

int daemon_pdigest_save(struct daemon *d, const struct policy *pol)
{
	char dig[PVIEW_DIGEST_LEN], path[PATH_MAX], text[PVIEW_DIGEST_LEN + 1];
	struct pdigest *p;
	int r;

	if (!pol || !pol->file)
		return 0;	/* a deny-all stand-in: its pins are dropped anyway */
	p = pdigest_slot(d, pol->name);
	if (!p)
		return -ENOMEM;
	if (!pview_digest(pol, dig, sizeof(dig))[0])
		return -ENOMEM;
	if (p->read && strcmp(p->digest, dig) == 0)
		return 0;
	snprintf(path, sizeof(path), "%s/policies", d->cfg.state_dir);
	r = fs_mkdir_p(path, 0750);
	if (r < 0)
		return r;
	pdigest_path(d, pol->name, path, sizeof(path));
	memcpy(text, dig, PVIEW_DIGEST_LEN - 1);
	text[PVIEW_DIGEST_LEN - 1] = '\n';
	text[PVIEW_DIGEST_LEN] = '\0';
	r = fs_write_atomic(path, text, strlen(text), 0644);
	if (r < 0)
		return r;
	p->read = true;
	memcpy(p->digest, dig, sizeof(p->digest));
	return 0;
}

void daemon_pdigest_save_all(struct daemon *d)
{
	for (size_t i = 0; i < d->n_policies; i++) {
		int r = daemon_pdigest_save(d, d->policies[i]);

		if (r < 0)
			log_warn("policy %s: cannot save its digest in %s/policies: %s (a restart will drop its sandboxes' pins)",
				 d->policies[i]->name, d->cfg.state_dir, strerror(-r));
	}
}

void daemon_pdigest_free(struct daemon *d)
{
	free(d->pdigests);
	d->pdigests = NULL;
	d->n_pdigests = 0;
}

/*
 * policies - the daemon's loaded policy set: a policy_dir read whole (all
 * or nothing), lookups by name, and the deny-all stand-in for a sandbox
 * whose policy file is gone (fail closed).  Parsing is netd/model/policy.c's.
 */
#include "netd/daemon/internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/log.h"
#include "netd/daemon/reload_plan.h"

const struct policy *daemon_policy_find(const struct daemon *d, const char *name)
{
	for (size_t i = 0; i < d->n_policies; i++)
		if (strcmp(d->policies[i]->name, name) == 0)
			return d->policies[i];
	return NULL;
}


static int yaml_file(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && ((n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
				  (n > 4 && strcmp(name + n - 4, ".yml") == 0));
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Log a policy loading error and keep its text in @buf (if non-NULL). */
__attribute__((format(printf, 3, 4)))
static void policies_err(char *buf, size_t sz, const char *fmt, ...)
{
	char local[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(local, sizeof(local), fmt, ap);
	va_end(ap);
	log_err("%s", local);
	if (buf && sz)
		snprintf(buf, sz, "%s", local);
}

/*
 * Load every .yaml/.yml file in @dir into @out; all or nothing.  Errors are
 * logged with file:line:col, and the first one kept in @ebuf (may be NULL).
 */
int daemon_policies_load(const struct config *cfg, struct policy **out, size_t *n_out,
			 char *ebuf, size_t esz)
{
	const char *dir = cfg->policy_dir;
	char *names[DAEMON_MAX_POLICIES];
	size_t n_names = 0, n = 0;
	struct dirent *e;
	DIR *dh = opendir(dir);
	int r = 0;

	if (!dh) {
		r = -errno;
		policies_err(ebuf, esz, "cannot read policy_dir %s: %s", dir, strerror(-r));
		return r;
	}
	while ((e = readdir(dh))) {
		if (!yaml_file(e->d_name))
			continue;
		if (n_names == DAEMON_MAX_POLICIES) {
			policies_err(ebuf, esz, "%s: more than %d policy files", dir, DAEMON_MAX_POLICIES);
			r = -E2BIG;
			break;
		}
		names[n_names] = strdup(e->d_name);
		if (!names[n_names]) {
			r = -ENOMEM;
			break;
		}
		n_names++;
	}
	closedir(dh);
	qsort(names, n_names, sizeof(names[0]), name_cmp);
	for (size_t i = 0; r == 0 && i < n_names; i++) {
		char path[PATH_MAX], msg[1024];
		struct diag err = { 0 };
		struct policy *p;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		r = policy_load_file(path, &p, &err);
		if (r == 0 && (r = policy_gateway_check(p, cfg, &err)) < 0)
			policy_free(p);
		if (r < 0) {
			policies_err(ebuf, esz, "%s", diag_format(&err, msg, sizeof(msg)));
			break;
		}
		for (size_t j = 0; j < n; j++) {
			if (strcmp(out[j]->name, p->name) == 0) {
				policies_err(ebuf, esz, "%s:%u:%u: name: policy name '%s' is also used by %s:%u",
					     path, p->name_line, p->name_col, p->name,
					     out[j]->file ? out[j]->file : "another file",
					     out[j]->name_line);
				policy_free(p);
				r = -EEXIST;
				break;
			}
		}
		if (r == 0)
			out[n++] = p;
	}
	for (size_t i = 0; i < n_names; i++)
		free(names[i]);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			policy_free(out[i]);
		return r;
	}
	*n_out = n;
	return 0;
}


/* The deny-all stand-in for a sandbox whose policy file is gone (fail closed). */
const struct policy *daemon_policy_deny_all(struct daemon *d, const char *name)
{
	struct policy *p;

	if (d->n_policies == DAEMON_MAX_POLICIES || !(p = reload_deny_all_new(name)))
		return NULL;
	d->policies[d->n_policies++] = p;
	return p;
}

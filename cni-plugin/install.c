/*
 * install - the chained-mode installer's file work (see install.h).
 */
#include "cni-plugin/install.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cni-plugin/chain.h"
#include "common/fsutil.h"

static bool conf_name(const char *n)
{
	size_t l = strlen(n);

	/* Our own temp files start with '.' and end in ".tmp": never picked. */
	if (n[0] == '.')
		return false;
	return (l > 5 && strcmp(n + l - 5, ".conf") == 0) ||
	       (l > 9 && strcmp(n + l - 9, ".conflist") == 0) ||
	       (l > 5 && strcmp(n + l - 5, ".json") == 0);
}

/* The lexically first config file of @dir into @out (a path). -ENOENT if none. */
static int first_conf(const char *dir, char *out, size_t sz)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char best[NAME_MAX + 1] = "";

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (conf_name(e->d_name) && (!best[0] || strcmp(e->d_name, best) < 0))
			snprintf(best, sizeof(best), "%s", e->d_name);
	closedir(d);
	if (!best[0])
		return -ENOENT;
	if ((size_t)snprintf(out, sz, "%s/%s", dir, best) >= sz)
		return -ENAMETOOLONG;
	return 0;
}

static json_t *load(const char *path)
{
	json_error_t je;
	struct stat st;
	json_t *o;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "netd-cni: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (st.st_size > (off_t)INSTALL_CONF_MAX) {
		fprintf(stderr, "netd-cni: %s: over %u bytes\n", path, INSTALL_CONF_MAX);
		return NULL;
	}
	o = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		fprintf(stderr, "netd-cni: %s:%d:%d: %s\n", path, je.line, je.column, je.text);
	return o;
}

/* Replace @path by @o, atomically (fs_write_atomic()), keeping its mode. */
static int write_atomic(const char *path, const json_t *o)
{
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER), *line;
	struct stat st;
	int r;

	if (!text)
		return -ENOMEM;
	line = realloc(text, strlen(text) + 2);
	if (!line) {
		free(text);
		return -ENOMEM;
	}
	strcat(line, "\n");
	r = fs_write_atomic(path, line, strlen(line), stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644);
	free(line);
	return r;
}

static int usage(void)
{
	fprintf(stderr, "usage: netd-cni chain CONF_DIR ENTRY.json   append netd-cni to the first "
			"network config\n"
			"       netd-cni unchain CONF_DIR              take it out again\n");
	return 2;
}

int install_main(int argc, char **argv)
{
	bool chain = strcmp(argv[1], "chain") == 0;
	struct cni_err err = { 0 };
	char path[PATH_MAX];
	json_t *conf, *entry = NULL;
	int r;

	if ((chain && argc != 4) || (!chain && (strcmp(argv[1], "unchain") != 0 || argc != 3)))
		return usage();
	r = first_conf(argv[2], path, sizeof(path));
	if (r == -ENOENT) {
		fprintf(stderr, "netd-cni: no network config in %s yet: the cluster's own CNI "
				"writes one, netd-cni chains after it\n", argv[2]);
		return chain ? 1 : 0;
	}
	if (r < 0) {
		fprintf(stderr, "netd-cni: %s: %s\n", argv[2], strerror(-r));
		return 1;
	}
	conf = load(path);
	if (!conf || (chain && !(entry = load(argv[3])))) {
		json_decref(conf);
		return 1;
	}
	r = chain ? cni_chain_merge(conf, entry, &err) : cni_chain_remove(conf);
	if (r == -EINVAL)
		fprintf(stderr, "netd-cni: %s: %s\n", path,
			chain ? err.details : "not a conflist (no \"plugins\")");
	else if (r < 0)
		fprintf(stderr, "netd-cni: %s: %s\n", path, strerror(-r));
	else if (r == 0)
		printf("netd-cni: %s: %s\n", path, chain ? "netd-cni already chained" :
							   "netd-cni not in it");
	else if ((r = write_atomic(path, conf)) < 0)
		fprintf(stderr, "netd-cni: writing %s: %s\n", path, strerror(-r));
	else
		printf("netd-cni: %s: netd-cni %s\n", path, chain ? "chained" : "removed");
	json_decref(conf);
	json_decref(entry);
	return r < 0 ? 1 : 0;
}

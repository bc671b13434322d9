/*
 * box_link - see box_link.h: the host's links as files in a directory.
 */
#include "tests/unit/box_link.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>

struct box_link {
	struct link_kernel k;	/* first: the ops table's view */
	char root[PATH_MAX];
	/* The daemon's watch, while it has one. */
	const struct linkwatch_ops *wops;
	void *wctx;
	int wfd;
	struct event *wev;
};

static struct box_link *bl_of(struct link_kernel *k)
{
	return (struct box_link *)k;
}

/* Append one line to ROOT/link.log (unbuffered: the test reads it from another process). */
static void bl_log(struct box_link *b, const char *fmt, ...)
{
	char path[PATH_MAX + 16], line[512];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	snprintf(path, sizeof(path), "%s/link.log", b->root);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
		/* a lost line fails the test that looks for it */
	}
	close(fd);
}

/* ROOT/SUB/NAME into @buf; -EINVAL for a name that is not one path component. */
static int bl_path(const struct box_link *b, const char *sub, const char *name, char *buf,
		   size_t sz)
{
	if (!name || !name[0] || strchr(name, '/') || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return -EINVAL;
	if ((size_t)snprintf(buf, sz, "%s/%s/%s", b->root, sub, name) >= sz)
		return -ENAMETOOLONG;
	return 0;
}

/* Create ROOT/SUB/NAME with @text; -EEXIST if it is there. */
static int bl_make(struct box_link *b, const char *sub, const char *name, const char *text)
{
	char path[PATH_MAX];
	int fd, r = bl_path(b, sub, name, path, sizeof(path));

	if (r < 0)
		return r;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	r = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -EIO;
	close(fd);
	return r;
}

/* Remove ROOT/SUB/NAME; missing is not an error (as link_delete()). */
static int bl_remove(struct box_link *b, const char *sub, const char *name)
{
	char path[PATH_MAX];
	int r = bl_path(b, sub, name, path, sizeof(path));

	if (r < 0)
		return r;
	return unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
}

static int bl_netns_create(struct link_kernel *k, const char *name)
{
	struct box_link *b = bl_of(k);
	int r = bl_make(b, "netns", name, "netns\n");

	bl_log(b, "netns_create %s%s", name, r == -EEXIST ? " (exists)" : "");
	return r;
}

/* Op @op: log it, remove ROOT/SUB/NAME. */
static int bl_unmake(struct link_kernel *k, const char *sub, const char *op, const char *name)
{
	bl_log(bl_of(k), "%s %s", op, name);
	return bl_remove(bl_of(k), sub, name);
}

static int bl_netns_delete(struct link_kernel *k, const char *name)
{
	return bl_unmake(k, "netns", "netns_delete", name);
}

/* /run/netns/NAME is ROOT/netns/NAME; a path inside ROOT is itself; nothing else is a netns. */
static int bl_netns_open(struct link_kernel *k, const char *path)
{
	struct box_link *b = bl_of(k);
	char real[PATH_MAX];
	size_t n = strlen(NETNS_RUN_DIR "/");
	int fd;

	if (strncmp(path, NETNS_RUN_DIR "/", n) == 0) {
		int r = bl_path(b, "netns", path + n, real, sizeof(real));

		if (r < 0)
			return r;
	} else if (strncmp(path, b->root, strlen(b->root)) == 0 &&
		   path[strlen(b->root)] == '/') {
		snprintf(real, sizeof(real), "%s", path);
	} else {
		return -EINVAL;
	}
	fd = open(real, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int bl_netns_other_links(struct link_kernel *k, int netns_fd, char *first, size_t sz)
{
	return 0;	/* a box's netns has only lo */
}

static int bl_veth_setup(struct link_kernel *k, const struct link_veth *v)
{
	struct box_link *b = bl_of(k);
	const struct prefix *p[4] = { &v->host4, &v->peer4, &v->host6, &v->peer6 };
	char text[512], pb[4][PREFIX_STRLEN + 8];
	int r;

	for (int i = 0; i < 4; i++) {
		char ab[ADDR_STRLEN];

		if (p[i]->addr.family)
			snprintf(pb[i], sizeof(pb[i]), "%s/%u",
				 addr_format(&p[i]->addr, ab, sizeof(ab)), p[i]->plen);
		else
			snprintf(pb[i], sizeof(pb[i]), "-");
	}
	snprintf(text, sizeof(text), "veth %s %s %s %s %s %s", v->host_ifname, v->peer_ifname,
		 pb[0], pb[1], pb[2], pb[3]);
	if (v->peer_here) {	/* the peer stays here, for its owner to move (kind "peer") */
		if (!v->peer_mac)
			return -EINVAL;
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 " peer-here %02x:%02x:%02x:%02x:%02x:%02x", v->peer_mac[0], v->peer_mac[1],
			 v->peer_mac[2], v->peer_mac[3], v->peer_mac[4], v->peer_mac[5]);
	}
	r = bl_make(b, "links", v->host_ifname, text);
	bl_log(b, "veth_setup %s%s", text + 5, r == -EEXIST ? " (exists)" : "");
	return r;
}

static int bl_names(struct link_kernel *k, char (**ret)[16])
{
	struct box_link *b = bl_of(k);
	char dir[PATH_MAX + 8];
	char (*v)[16] = NULL;
	struct dirent *e;
	int n = 0;
	DIR *dh;

	*ret = NULL;
	snprintf(dir, sizeof(dir), "%s/links", b->root);
	dh = opendir(dir);
	if (!dh)
		return -errno;
	while ((e = readdir(dh))) {
		char (*nv)[16];

		if (e->d_name[0] == '.' || strlen(e->d_name) >= 16)
			continue;
		nv = reallocarray(v, (size_t)n + 1, sizeof(*v));
		if (!nv) {
			free(v);
			closedir(dh);
			return -ENOMEM;
		}
		v = nv;
		memcpy(v[n++], e->d_name, strlen(e->d_name) + 1);	/* < 16 bytes: checked above */
	}
	closedir(dh);
	*ret = v;
	return n;
}

static int bl_del(struct link_kernel *k, const char *ifname)
{
	return bl_unmake(k, "links", "del", ifname);
}

static int bl_exists(struct link_kernel *k, const char *ifname)
{
	char path[PATH_MAX];

	if (strcmp(ifname, BOX_LINK_EGRESS) == 0)
		return 1;
	if (bl_path(bl_of(k), "links", ifname, path, sizeof(path)) < 0)
		return 0;
	return access(path, F_OK) == 0;
}

static int bl_default_route_ifname(struct link_kernel *k, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s", BOX_LINK_EGRESS);
	return 0;
}

static int bl_local_addrs(struct link_kernel *k, struct prefix **ret)
{
	struct prefix *p = calloc(1, sizeof(*p));

	*ret = NULL;
	if (!p)
		return -ENOMEM;
	if (addr_parse(BOX_LINK_HOST_ADDR, &p->addr) < 0) {
		free(p);
		return -EINVAL;
	}
	p->plen = 32;
	*ret = p;
	return 1;
}

static int bl_default_gateways(struct link_kernel *k, struct addr *out, size_t max)
{
	if (max == 0)
		return 0;
	return addr_parse(BOX_LINK_ROUTER, &out[0]) < 0 ? -EINVAL : 1;
}

static int bl_forwarding_enable(struct link_kernel *k, int ipv6)
{
	bl_log(bl_of(k), "forwarding_enable ipv6=%d", ipv6);
	return 0;
}

/* A datagram on ROOT/linkwatch.sock: "deleted IFNAME". */
static void bl_on_watch(evutil_socket_t fd, short what, void *arg)
{
	struct box_link *b = arg;
	char msg[64];
	ssize_t n = recv(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);

	if (n <= 0)
		return;
	msg[n] = '\0';
	if (strncmp(msg, "deleted ", 8) != 0 || strlen(msg + 8) >= 16)
		return;
	bl_log(b, "event deleted %s", msg + 8);
	bl_remove(b, "links", msg + 8);
	b->wops->deleted(b->wctx, msg + 8);
}

static int bl_watch(struct link_kernel *k, struct event_base *base,
		    const struct linkwatch_ops *ops, void *ctx, struct linkwatch **ret)
{
	struct box_link *b = bl_of(k);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int r;

	*ret = NULL;	/* the events come from here, not from a struct linkwatch */
	if (b->wev)
		return -EBUSY;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/linkwatch.sock", b->root) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	unlink(sa.sun_path);
	b->wfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (b->wfd < 0)
		return -errno;
	if (bind(b->wfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto fail;
	}
	chmod(sa.sun_path, 0666);
	b->wev = event_new(base, b->wfd, EV_READ | EV_PERSIST, bl_on_watch, b);
	if (!b->wev || event_add(b->wev, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	b->wops = ops;
	b->wctx = ctx;
	return 0;
fail:
	if (b->wev)
		event_free(b->wev);
	b->wev = NULL;
	close(b->wfd);
	b->wfd = -1;
	return r;
}

static void bl_unwatch(struct link_kernel *k, struct linkwatch *w)
{
	struct box_link *b = bl_of(k);

	if (b->wev)
		event_free(b->wev);
	b->wev = NULL;
	if (b->wfd >= 0)
		close(b->wfd);
	b->wfd = -1;
}

static int bl_tap_create(struct link_kernel *k, const struct tap_spec *s)
{
	struct box_link *b = bl_of(k);
	char text[128];
	int r;

	snprintf(text, sizeof(text), "tap owner=%u queues=%u mtu=%u", (unsigned)s->owner,
		 s->queues, s->mtu);
	r = bl_make(b, "links", s->ifname, text);
	bl_log(b, "tap_create %s %s%s", s->ifname, text + 4, r == -EEXIST ? " (exists)" : "");
	return r;
}

static int bl_tap_delete(struct link_kernel *k, const char *ifname)
{
	return bl_del(k, ifname);
}

static int bl_tap_configure(struct link_kernel *k, const char *ifname, const struct prefix *host4,
			    const struct prefix *host6)
{
	char a4[ADDR_STRLEN] = "-", a6[ADDR_STRLEN] = "-";

	if (host4->addr.family)
		addr_format(&host4->addr, a4, sizeof(a4));
	if (host6->addr.family)
		addr_format(&host6->addr, a6, sizeof(a6));
	bl_log(bl_of(k), "tap_configure %s %s %s", ifname, a4, a6);
	return bl_exists(k, ifname) == 1 ? 0 : -ENODEV;
}

static int bl_tap_query(struct link_kernel *k, const char *ifname, struct tap_info *ret)
{
	char path[PATH_MAX], text[128] = "";
	unsigned owner = 0;
	ssize_t n;
	int fd, r = bl_path(bl_of(k), "links", ifname, path, sizeof(path));

	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	memset(ret, 0, sizeof(*ret));
	ret->is_tap = strncmp(text, "tap ", 4) == 0;
	ret->persist = ret->is_tap;
	ret->has_owner = ret->is_tap && sscanf(text, "tap owner=%u", &owner) == 1;
	ret->owner = (uid_t)owner;
	ret->group = TAP_NO_GROUP;
	return 0;
}

/* Shaping: logged, nothing kept (no qdisc to read back: the counters are zero). */
static int bl_shape_set(struct link_kernel *k, struct shape_req *req)
{
	bl_log(bl_of(k), "shape %s ifb %s ingress %llu egress %llu", req->ifname, req->ifb,
	       (unsigned long long)req->ingress_bps, (unsigned long long)req->egress_bps);
	req->ifindex = req->ifb_index = 0;
	return 0;
}

static int bl_shape_get(struct link_kernel *k, const char *ifname, const char *ifb,
			struct shape_stats *out)
{
	memset(out, 0, sizeof(*out));
	return 0;
}

static int bl_shape_dump(struct link_kernel *k, shape_dump_fn *fn, void *ctx)
{
	return 0;
}

/* No qdisc is kept: a restart finds none and puts each sandbox's rates on again. */
static int bl_shape_survey(struct link_kernel *k, struct shape_dev **ret)
{
	*ret = NULL;
	return 0;
}

static const struct link_kernel_ops box_link_ops = {
	.netns_create = bl_netns_create,
	.netns_delete = bl_netns_delete,
	.netns_open = bl_netns_open,
	.netns_other_links = bl_netns_other_links,
	.veth_setup = bl_veth_setup,
	.names = bl_names,
	.del = bl_del,
	.exists = bl_exists,
	.default_route_ifname = bl_default_route_ifname,
	.local_addrs = bl_local_addrs,
	.default_gateways = bl_default_gateways,
	.forwarding_enable = bl_forwarding_enable,
	.watch = bl_watch,
	.unwatch = bl_unwatch,
	.tap_create = bl_tap_create,
	.tap_delete = bl_tap_delete,
	.tap_configure = bl_tap_configure,
	.tap_query = bl_tap_query,
	.shape_set = bl_shape_set,
	.shape_get = bl_shape_get,
	.shape_dump = bl_shape_dump,
	.shape_survey = bl_shape_survey,
};

struct link_kernel *box_link_new(const char *root)
{
	struct box_link *b = calloc(1, sizeof(*b));
	char dir[PATH_MAX + 8];

	if (!b)
		return NULL;
	b->k.ops = &box_link_ops;
	b->wfd = -1;
	if ((size_t)snprintf(b->root, sizeof(b->root), "%s", root) >= sizeof(b->root)) {
		free(b);
		errno = ENAMETOOLONG;
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", root, i == 0 ? "links" : "netns");
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			free(b);
			return NULL;
		}
	}
	return &b->k;
}

void box_link_free(struct link_kernel *k)
{
	if (!k)
		return;
	bl_unwatch(k, NULL);
	free(bl_of(k));
}

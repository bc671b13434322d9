/*
 * test_daemon - the daemon in a box, as Unbound's testbound runs its real
 * worker: `netd run`'s own code (netd/daemon.c and netd/daemon/: startup,
 * the event loop, the control socket, the state dir, reload, restart) in a
 * child process as an ordinary user (as root the child drops to nobody),
 * with its kernel edges stood in (netd/daemon.h, struct daemon_box):
 *
 *   nf_tables  tests/golden/fake_nft.c, the model printed to ROOT/nft.txt
 *              after every batch it applied
 *   links      tests/unit/box_link.c: interfaces and netns as files under
 *              ROOT, every change a line of ROOT/link.log
 *   DNS        the replay seam (dnsproxy/replay.h): no socket on any
 *              network; a query reaches it as a datagram on the unix
 *              socket ROOT/dns.sock, its upstream answers at once
 *
 * The test is the control API's client (common/httpc.c, what the CLI and
 * netd-cni use) on ROOT/ctl.sock, and reads what the daemon left: the
 * model, the links, the state files, the audit log.  The scenario runs in
 * order: create, show, list, DNS, bad requests, reload (good and bad), a
 * vanished interface, restart, delete, and a startup that must fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <jansson.h>

#include "common/addr.h"
#include "common/httpc.h"
#include "dnsproxy/replay.h"
#include "dnsproxy/wire.h"
#include "netd/daemon.h"
#include "netd/fw/kernel.h"
#include "tests/golden/fake_nft.h"
#include "tests/unit/box_link.h"

#define NOBODY 65534
#define WAIT_MS 30000	/* the longest the test waits for the daemon: a bound, not a timing */

static char root[PATH_MAX];	/* the box: mkdtemp() */
static pid_t daemon_pid;

/* ---- files ----------------------------------------------------------------- */

static void path_of(char *buf, size_t sz, const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(buf, sz, "%s/%s", root, rel);
}

/* ROOT/@rel's content (caller frees), or NULL if it cannot be read. */
static char *slurp(const char *rel)
{
	char path[PATH_MAX];
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	path_of(path, sizeof(path), "%s", rel);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	buf = malloc(1 << 22);
	if (buf) {
		len = fread(buf, 1, (1 << 22) - 1, f);
		buf[len] = '\0';
	}
	fclose(f);
	return buf;
}

static bool file_exists(const char *rel)
{
	char path[PATH_MAX];

	path_of(path, sizeof(path), "%s", rel);
	return access(path, F_OK) == 0;
}

/* Write ROOT/@rel (mode 0644): the fixture's config and policies. */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	path_of(path, sizeof(path), "%s", rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* How many times @needle stands in ROOT/@rel. */
static int count_in(const char *rel, const char *needle)
{
	char *s = slurp(rel);
	int n = 0;

	for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(s);
	return n;
}

/*
 * A unix datagram socket bound at ROOT/@rel (a stale one replaced), that
 * any user may send to.  Return: the fd; -errno.
 */
static int dgram_at(const char *rel, int flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	path_of(sa.sun_path, sizeof(sa.sun_path), "%s", rel);
	unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | flags, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sa.sun_path, 0666) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/*
 * How many times @needle stands in ROOT/@rel once it stands there @n
 * times: for the audit log, which the daemon's loop writes after it
 * answered (asked again until then, within WAIT_MS).
 */
static int count_when(const char *rel, const char *needle, int n)
{
	int k = count_in(rel, needle);

	for (int i = 0; i < WAIT_MS / 20 && k < n; i++) {
		usleep(20 * 1000);
		k = count_in(rel, needle);
	}
	return k;
}

/* ---- the nf_tables model ----------------------------------------------------- */

/* @b/@len as libnftnl prints keys: 32-bit words in host order, space-separated. */
static void words(const uint8_t *b, size_t len, char *out, size_t sz)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < len && o + 10 < sz; i += 4) {
		uint32_t w = 0;

		memcpy(&w, b + i, len - i < 4 ? len - i : 4);
		o += (size_t)snprintf(out + o, sz - o, "%s%08x", i ? " " : "", w);
	}
}

/*
 * Does set @set of table inet netd in the model hold an element whose key
 * starts with @key (words())?  The model as fake_nft_print() wrote it last.
 */
static bool model_has(const char *set, const char *key)
{
	char *m = slurp("nft.txt"), head[128], want[256];
	const char *s, *end;
	bool yes = false;

	if (!m)
		return false;
	snprintf(head, sizeof(head), "\nset %s netd ", set);
	snprintf(want, sizeof(want), "element %s", key);
	s = strstr(m, head);
	if (s) {
		end = strstr(s + 1, "\n\n");
		for (const char *p = s; (p = strstr(p, want)) && (!end || p < end); p++) {
			yes = true;
			break;
		}
	}
	free(m);
	return yes;
}

/* The key words of interface @ifname (IFNAMSIZ bytes, NUL padded). */
static void ifname_key(const char *ifname, char *out, size_t sz)
{
	uint8_t b[16] = { 0 };

	memcpy(b, ifname, strnlen(ifname, 15));
	words(b, sizeof(b), out, sz);
}

/* The key words of @ifname . @ipv4 (sandbox_src4). */
static void ifname_addr_key(const char *ifname, const char *ipv4, char *out, size_t sz)
{
	uint8_t b[20] = { 0 };
	struct addr a;

	memcpy(b, ifname, strnlen(ifname, 15));
	assert_int_equal(addr_parse(ipv4, &a), 0);
	memcpy(b + 16, a.a, 4);
	words(b, sizeof(b), out, sz);
}

/* The key words of a pin4 element: @src . @dst . @proto . @port (each field 4 bytes). */
static void pin_key(const char *src, const char *dst, uint8_t proto, uint16_t port, char *out,
		    size_t sz)
{
	uint8_t b[16] = { 0 };
	struct addr s, d;

	assert_int_equal(addr_parse(src, &s), 0);
	assert_int_equal(addr_parse(dst, &d), 0);
	memcpy(b, s.a, 4);
	memcpy(b + 4, d.a, 4);
	b[8] = proto;
	b[12] = (uint8_t)(port >> 8);
	b[13] = (uint8_t)port;
	words(b, sizeof(b), out, sz);
}

/* ---- the daemon's side (the child) ---------------------------------------------- */

/* fake_nft, and its model printed to ROOT/nft.txt after every batch it applied. */
struct box_nft {
	struct fw_kernel k;
	struct fw_kernel *model;
};

static int nft_commit(struct fw_kernel *k, const struct fw_batch *b, char *err, size_t err_len)
{
	struct box_nft *bn = (struct box_nft *)k;
	char path[PATH_MAX], tmp[PATH_MAX];
	int r = bn->model->ops->commit(bn->model, b, err, err_len);
	FILE *f;

	if (r < 0)
		return r;
	path_of(tmp, sizeof(tmp), "nft.txt.tmp");
	path_of(path, sizeof(path), "nft.txt");
	f = fopen(tmp, "w");
	if (f) {
		fake_nft_print(bn->model, f);
		if (fclose(f) == 0)
			rename(tmp, path);
	}
	return r;
}

static int nft_talk(struct fw_kernel *k, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	struct box_nft *bn = (struct box_nft *)k;

	return bn->model->ops->talk(bn->model, req, cb, data);
}

static void nft_free(struct fw_kernel *k)
{
	struct box_nft *bn = (struct box_nft *)k;

	bn->model->ops->free(bn->model);
	free(bn);
}

static const struct fw_kernel_ops box_nft_ops = { nft_commit, nft_talk, nft_free };

static int box_fw_kernel_new(void *ctx, struct fw_kernel **ret)
{
	struct box_nft *bn = calloc(1, sizeof(*bn));

	if (!bn || !(bn->model = fake_nft_new())) {
		free(bn);
		return -ENOMEM;
	}
	bn->k.ops = &box_nft_ops;
	*ret = &bn->k;
	return 0;
}

/*
 * The DNS side: the replay seam's proxy, fed from ROOT/dns.sock.  A
 * datagram is a client's IPv4 address (4 bytes) and a DNS query; the
 * reply goes back to the sender.  Upstream answers every A query with
 * BOX_ANSWER_A, TTL 300.
 */
#define BOX_ANSWER_A "198.51.100.10"

struct box_dns {
	struct proxy *p;
	int fd;
	struct event *ev;	/* malloc()ed: libevent's base goes first (see box_dns_done()) */
	struct sockaddr_un peer;
	socklen_t peer_len;
	unsigned int up_id[8];
	uint8_t up_q[8][512];
	size_t up_len[8], n_up;
};

static struct box_dns bdns = { .fd = -1 };

static void dns_reply(void *ctx, uint64_t tag, bool tcp, const uint8_t *msg, size_t len)
{
	struct box_dns *b = ctx;

	sendto(b->fd, msg, len, 0, (struct sockaddr *)&b->peer, b->peer_len);
}

static void dns_upstream(void *ctx, unsigned int id, const uint8_t *msg, size_t len)
{
	struct box_dns *b = ctx;

	if (b->n_up < 8 && len <= sizeof(b->up_q[0])) {
		b->up_id[b->n_up] = id;
		memcpy(b->up_q[b->n_up], msg, len);
		b->up_len[b->n_up++] = len;
	}
}

static const struct replay_ops box_rops = { dns_reply, dns_upstream };

/* The upstream's answer to @q: its question, one A record BOX_ANSWER_A. */
static size_t upstream_answer(const uint8_t *q, size_t qlen, uint8_t *out)
{
	static const uint8_t rr[] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 198, 51, 100, 10 };
	int end = wire_question_end(q, qlen);

	if (end < 12)
		return 0;
	memcpy(out, q, (size_t)end);
	out[2] = 0x81;	/* QR RD */
	out[3] = 0x80;	/* RA, NOERROR */
	out[6] = 0, out[7] = 1;	/* ANCOUNT */
	out[8] = out[9] = out[10] = out[11] = 0;	/* no NS, no OPT */
	memcpy(out + end, rr, sizeof(rr));
	return (size_t)end + sizeof(rr);
}

static void dns_in(evutil_socket_t fd, short what, void *arg)
{
	struct box_dns *b = arg;
	uint8_t buf[1024], ans[1024];
	struct addr client = { .family = AF_INET };
	ssize_t n;

	b->peer_len = sizeof(b->peer);
	n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&b->peer, &b->peer_len);
	if (n < 4 + 12)
		return;
	memcpy(client.a, buf, 4);
	b->n_up = 0;
	replay_query(b->p, &client, false, buf + 4, (size_t)n - 4, 1);
	for (size_t i = 0; i < b->n_up; i++) {
		size_t len = upstream_answer(b->up_q[i], b->up_len[i], ans);

		replay_answer(b->p, b->up_id[i], len ? 0 : -EIO, ans, len);
	}
}

static int box_proxy_new(void *ctx, struct event_base *base, const struct proxy_config *cfg,
			 const struct proxy_ops *ops, void *ops_ctx, struct proxy **ret)
{
	struct box_dns *b = ctx;
	int r = replay_new(cfg, ops, ops_ctx, &box_rops, b, ret);

	if (r < 0)
		return r;
	b->p = *ret;
	b->fd = dgram_at("dns.sock", SOCK_NONBLOCK);
	if (b->fd < 0)
		return b->fd;
	b->ev = malloc(event_get_struct_event_size());
	if (!b->ev || event_assign(b->ev, base, b->fd, EV_READ | EV_PERSIST, dns_in, b) < 0 ||
	    event_add(b->ev, NULL) < 0)
		return -ENOMEM;
	return 0;
}

/* After daemon_run(): its event_base_free() has already removed the event. */
static void box_dns_done(struct box_dns *b)
{
	free(b->ev);
	if (b->fd >= 0)
		close(b->fd);
}

/* The child: the daemon in the box, as nobody when the test runs as root. */
static void __attribute__((noreturn)) child_run(void)
{
	char config[PATH_MAX], log[PATH_MAX], notify[PATH_MAX], etc[PATH_MAX];
	struct link_kernel *lk;
	int fd, status;

	path_of(log, sizeof(log), "daemon.log");
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	path_of(notify, sizeof(notify), "notify.sock");
	setenv("NOTIFY_SOCKET", notify, 1);
	if (geteuid() == 0 && !getenv("NETD_BOX_AS_ROOT") &&
	    (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)) {
		fprintf(stderr, "box: cannot become nobody: %s\n", strerror(errno));
		exit(3);
	}
	lk = box_link_new(root);
	if (!lk)
		exit(3);
	path_of(etc, sizeof(etc), "etc-netns");
	path_of(config, sizeof(config), "netd.yaml");
	{
		const struct daemon_box box = {
			.fw_kernel_new = box_fw_kernel_new,
			.link = lk,
			.proxy_new = box_proxy_new,
			.ctx = &bdns,
			.etc_netns_dir = etc,
		};

		status = daemon_run(config, NULL, &box);
	}
	box_dns_done(&bdns);
	box_link_free(lk);
	exit(status);
}

/* ---- the test's side --------------------------------------------------------- */

/*
 * Start the daemon; wait for READY=1 on ROOT/notify.sock, or for it to
 * exit.  Return: 0 ready; the exit status of a daemon that stopped.
 */
static int daemon_start(void)
{
	char msg[512];
	int fd = dgram_at("notify.sock", 0), status, waited = 0;

	assert_true(fd >= 0);
	fflush(NULL);
	daemon_pid = fork();
	assert_true(daemon_pid >= 0);
	if (daemon_pid == 0) {
		close(fd);
		child_run();
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (waitpid(daemon_pid, &status, WNOHANG) == daemon_pid) {
			daemon_pid = 0;
			close(fd);
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		if (poll(&pfd, 1, 100) == 1) {
			n = recv(fd, msg, sizeof(msg) - 1, 0);
			if (n > 0) {
				msg[n] = '\0';
				if (strstr(msg, "READY=1"))
					break;
			}
		}
		waited += 100;
		if (waited > WAIT_MS) {
			fail_msg("the daemon neither became ready nor stopped");
		}
	}
	close(fd);
	return 0;
}

/* SIGTERM, as systemd stops it.  Return: its exit status. */
static int daemon_stop(void)
{
	int status;

	if (daemon_pid <= 0)
		return -1;
	assert_int_equal(kill(daemon_pid, SIGTERM), 0);
	assert_int_equal(waitpid(daemon_pid, &status, 0), daemon_pid);
	daemon_pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* One API call on ROOT/ctl.sock; @body a JSON text or NULL.  Return: the HTTP status. */
static int api(const char *method, const char *path, const char *body, json_t **ret)
{
	char sock[PATH_MAX];
	json_t *b = NULL;
	int status = 0, r;

	path_of(sock, sizeof(sock), "ctl.sock");
	if (body) {
		b = json_loads(body, 0, NULL);
		assert_non_null(b);
	}
	*ret = NULL;
	r = httpc_request(sock, method, path, b, &status, ret);
	json_decref(b);
	assert_int_equal(r, 0);
	return status;
}

static const char *jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	assert_non_null(s);
	return s;
}

/* The error message of an error answer. */
static const char *jerr(json_t *o)
{
	return jstr(json_object_get(o, "error"), "message");
}

/* @name under the DNS client @client: the reply's rcode and first A record. */
static int dns_ask(const char *client, const char *name, char *a_out, size_t a_sz)
{
	struct sockaddr_un to = { .sun_family = AF_UNIX };
	uint8_t q[300], r[1024];
	struct pollfd pfd;
	struct addr c;
	size_t o = 4 + 12;
	const char *label = name;
	ssize_t n;
	int fd, rcode;

	assert_int_equal(addr_parse(client, &c), 0);
	memcpy(q, c.a, 4);
	memset(q + 4, 0, 12);
	q[4] = 0xbe, q[5] = 0xef, q[6] = 0x01, q[9] = 1;	/* ID, RD, QDCOUNT 1 */
	for (;;) {
		size_t l = strcspn(label, ".");

		q[o] = (uint8_t)l;
		memcpy(q + o + 1, label, l);
		o += l + 1;
		if (!label[l])
			break;
		label += l + 1;
	}
	memcpy(q + o, "\0\0\1\0\1", 5);	/* root, A, IN */
	o += 5;
	path_of(to.sun_path, sizeof(to.sun_path), "dns.sock");
	fd = dgram_at("client.sock", 0);
	assert_true(fd >= 0);
	assert_int_equal(sendto(fd, q, o, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)o);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, WAIT_MS), 1);
	n = recv(fd, r, sizeof(r), 0);
	close(fd);
	assert_true(n >= 12);
	assert_int_equal(r[0] << 8 | r[1], 0xbeef);	/* the client's ID back */
	rcode = r[3] & 0x0f;
	a_out[0] = '\0';
	if ((r[6] << 8 | r[7]) > 0 && n >= 4) {
		/* The last 4 bytes of a one-A answer without OPT are the address. */
		struct addr a = { .family = AF_INET };

		memcpy(a.a, r + n - 4, 4);
		addr_format(&a, a_out, a_sz);
	}
	return rcode;
}

/* ---- fixture ------------------------------------------------------------------ */

static const char deny_all[] = "name: deny-all\negress: []\n";

static const char python_dev[] =
	"name: python-dev\n"
	"egress:\n"
	"  - domains: [pypi.org, files.pythonhosted.org]\n"
	"    ports: [443]\n"
	"  - cidrs: [198.51.100.7/32]\n"
	"    ports: [8080]\n";

static void chown_tree(const char *rel)
{
	char path[PATH_MAX];

	path_of(path, sizeof(path), "%s", rel);
	if (geteuid() == 0 && !getenv("NETD_BOX_AS_ROOT"))
		assert_int_equal(chown(path, NOBODY, NOBODY), 0);
}

static int group_setup(void **state)
{
	char path[PATH_MAX], text[4 * PATH_MAX + 256];
	static const char *const dirs[] = { "", "policies", "state", "etc-netns" };

	snprintf(root, sizeof(root), "/tmp/netd-box.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	chmod(root, 0755);
	for (size_t i = 1; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		path_of(path, sizeof(path), "%s", dirs[i]);
		if (mkdir(path, 0755) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		chown_tree(dirs[i]);
	snprintf(text, sizeof(text),
		 "socket: %s/ctl.sock\n"
		 "state_dir: %s/state\n"
		 "policy_dir: %s/policies\n"
		 "audit_log: %s/audit.jsonl\n"
		 "upstream: [192.0.2.53]\n",
		 root, root, root, root);
	put("netd.yaml", text);
	put("policies/deny-all.yaml", deny_all);
	put("policies/python-dev.yaml", python_dev);
	return daemon_start() == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	if (daemon_pid > 0)
		daemon_stop();
	if (getenv("NETD_BOX_KEEP")) {
		fprintf(stderr, "box kept: %s\n", root);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- the scenario ---------------------------------------------------------------- */

static char sb1_if[16], sb1_v4[ADDR_STRLEN];

/* Create: rules in the model, the veth and netns asked for, the state file, resolv.conf. */
static void test_create(void **state)
{
	char key[256], *text;
	json_t *o;

	assert_int_equal(api("POST", "/v1/sandboxes", "{\"name\": \"sb1\", \"policy\": \"python-dev\"}",
			     &o), 201);
	assert_string_equal(jstr(o, "name"), "sb1");
	assert_string_equal(jstr(o, "policy"), "python-dev");
	assert_string_equal(jstr(o, "netns"), "/run/netns/sb1");
	assert_string_equal(jstr(o, "mode"), "enforce");
	snprintf(sb1_if, sizeof(sb1_if), "%s", jstr(o, "host_ifname"));
	snprintf(sb1_v4, sizeof(sb1_v4), "%s", jstr(o, "ipv4"));
	assert_string_equal(jstr(o, "gateway4"), "10.87.0.1");
	assert_string_equal(sb1_v4, "10.87.0.2");
	json_decref(o);

	/* nf_tables: its interface, its source, its policy's chain and CIDR set. */
	ifname_key(sb1_if, key, sizeof(key));
	assert_true(model_has("sandbox_ifs", key));
	ifname_addr_key(sb1_if, sb1_v4, key, sizeof(key));
	assert_true(model_has("sandbox_src4", key));
	assert_int_equal(count_in("nft.txt", "chain inet netd pe-python-dev "), 1);
	assert_true(model_has("pc-python-dev-cidr4", "076433c6 00000006 0000901f"));

	/* Links: the netns, then the veth with the pool's /30 (after the rules). */
	assert_int_equal(count_in("link.log", "netns_create sb1\n"), 1);
	snprintf(key, sizeof(key), "veth_setup %s eth0 10.87.0.1/30 10.87.0.2/30", sb1_if);
	assert_int_equal(count_in("link.log", key), 1);
	snprintf(key, sizeof(key), "links/%s", sb1_if);
	assert_true(file_exists(key));
	assert_true(file_exists("netns/sb1"));

	/* Files: its state, its resolv.conf, the audit record. */
	text = slurp("state/sandboxes/sb1.json");
	assert_non_null(text);
	o = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(o);
	assert_string_equal(jstr(o, "policy"), "python-dev");
	json_decref(o);
	assert_int_equal(count_in("etc-netns/sb1/resolv.conf", "nameserver 10.87.0.1\n"), 1);
	assert_int_equal(count_when("audit.jsonl", "\"action\":\"create\"", 1), 1);
}

/* Show and list: the same sandbox as the create answered. */
static void test_show_list(void **state)
{
	json_t *o, *arr;

	assert_int_equal(api("GET", "/v1/sandboxes/sb1", NULL, &o), 200);
	assert_string_equal(jstr(o, "host_ifname"), sb1_if);
	assert_string_equal(jstr(o, "ipv4"), sb1_v4);
	assert_string_equal(jstr(o, "kind"), "interface");
	json_decref(o);
	assert_int_equal(api("GET", "/v1/sandboxes", NULL, &o), 200);
	arr = json_object_get(o, "sandboxes");
	assert_int_equal(json_array_size(arr), 1);
	assert_string_equal(jstr(json_array_get(arr, 0), "name"), "sb1");
	json_decref(o);
	assert_int_equal(api("GET", "/v1/policies/python-dev", NULL, &o), 200);
	assert_string_equal(jstr(o, "name"), "python-dev");
	json_decref(o);
	assert_int_equal(api("GET", "/v1/status", NULL, &o), 200);
	assert_int_equal(json_integer_value(json_object_get(o, "sandboxes")), 1);
	json_decref(o);
}

/* DNS through the daemon's proxy ops: an allowed name is pinned before the answer; a denied one is not. */
static void test_dns(void **state)
{
	char a[ADDR_STRLEN], key[256];
	json_t *o;

	pin_key(sb1_v4, BOX_ANSWER_A, 6, 443, key, sizeof(key));
	assert_false(model_has("pin4", key));
	assert_int_equal(dns_ask(sb1_v4, "pypi.org", a, sizeof(a)), 0);
	assert_string_equal(a, BOX_ANSWER_A);
	assert_true(model_has("pin4", key));
	assert_int_equal(dns_ask(sb1_v4, "example.com", a, sizeof(a)), 3);	/* NXDOMAIN */
	assert_string_equal(a, "");
	assert_int_equal(count_when("audit.jsonl", "\"qname\":\"example.com\"", 1), 1);
	assert_int_equal(api("GET", "/v1/sandboxes/sb1", NULL, &o), 200);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "dns_queries"),
							    "allowed")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "dns_queries"),
							    "denied")), 1);
	json_decref(o);
}

/* Bad requests: clear errors, and nothing changed. */
static void test_bad_requests(void **state)
{
	char *model = slurp("nft.txt"), *links = slurp("link.log"), *after;
	json_t *o;

	assert_int_equal(api("POST", "/v1/sandboxes", "{\"name\": \"sb1\", \"policy\": \"deny-all\"}",
			     &o), 409);
	assert_non_null(strstr(jerr(o), "exists"));
	json_decref(o);
	assert_int_equal(api("POST", "/v1/sandboxes", "{\"name\": \"sb9\", \"policy\": \"nope\"}", &o),
			 404);
	assert_non_null(strstr(jerr(o), "unknown policy \"nope\""));
	json_decref(o);
	assert_int_equal(api("POST", "/v1/sandboxes", "{\"name\": \"-x\", \"policy\": \"deny-all\"}",
			     &o), 400);
	assert_non_null(strstr(jerr(o), "name"));
	json_decref(o);
	assert_int_equal(api("POST", "/v1/sandboxes", "{\"name\": \"sb9\"}", &o), 400);
	json_decref(o);
	assert_int_equal(api("POST", "/v1/sandboxes", "[1, 2]", &o), 400);
	json_decref(o);
	assert_int_equal(api("GET", "/v1/sandboxes/nope", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(api("DELETE", "/v1/sandboxes/nope", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(api("GET", "/v1/nope", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(api("DELETE", "/v1/sandboxes", NULL, &o), 405);
	json_decref(o);

	after = slurp("nft.txt");
	assert_string_equal(after, model);
	free(after);
	after = slurp("link.log");
	assert_string_equal(after, links);
	free(after);
	free(model);
	free(links);
	assert_false(file_exists("state/sandboxes/sb9.json"));
}

/* A good reload: the CIDR rule moves in the model, the answer names the sandbox. */
static void test_reload(void **state)
{
	json_t *o, *changed;

	put("policies/python-dev.yaml",
	    "name: python-dev\n"
	    "egress:\n"
	    "  - domains: [pypi.org, files.pythonhosted.org]\n"
	    "    ports: [443]\n"
	    "  - cidrs: [198.51.100.8/32]\n"
	    "    ports: [8080]\n");
	put("policies/openai-only.yaml",
	    "name: openai-only\negress:\n  - domains: [\"*.openai.com\"]\n    ports: [443]\n");
	assert_int_equal(api("POST", "/v1/policies/reload", NULL, &o), 200);
	changed = json_object_get(o, "changed");
	assert_true(json_is_array(changed));
	assert_int_equal(json_array_size(changed), 1);
	assert_string_equal(jstr(json_array_get(changed, 0), "sandbox"), "sb1");
	json_decref(o);
	assert_true(model_has("pc-python-dev-cidr4", "086433c6 00000006 0000901f"));
	assert_false(model_has("pc-python-dev-cidr4", "076433c6 00000006 0000901f"));
	assert_int_equal(api("GET", "/v1/policies/openai-only", NULL, &o), 200);
	json_decref(o);
	assert_int_equal(count_when("audit.jsonl", "\"policy_reload\"", 1), 1);
}

/* A bad reload: 400 with FILE:LINE:COL, and the last good state kept whole. */
static void test_reload_bad(void **state)
{
	char *model = slurp("nft.txt"), *after, want[PATH_MAX + 32];
	json_t *o;

	put("policies/broken.yaml", "name: broken\negress:\n  - domains: [pypi.org]\n    prots: [443]\n");
	assert_int_equal(api("POST", "/v1/policies/reload", NULL, &o), 400);
	snprintf(want, sizeof(want), "%s/policies/broken.yaml:4:5", root);
	assert_non_null(strstr(jerr(o), want));
	json_decref(o);
	after = slurp("nft.txt");
	assert_string_equal(after, model);
	free(after);
	free(model);
	assert_int_equal(api("GET", "/v1/policies/broken", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(api("GET", "/v1/policies/openai-only", NULL, &o), 200);
	json_decref(o);
	path_of(want, sizeof(want), "policies/broken.yaml");
	assert_int_equal(unlink(want), 0);
}

/* A sandbox whose interface vanishes is retired (netd/daemon/vanish.c, through the link seam). */
static void test_vanish(void **state)
{
	struct sockaddr_un to = { .sun_family = AF_UNIX };
	char msg[64], key[256], ifname[16];
	json_t *o;
	int fd, st = 200;

	assert_int_equal(api("POST", "/v1/sandboxes",
			     "{\"name\": \"gone\", \"policy\": \"openai-only\"}", &o), 201);
	snprintf(ifname, sizeof(ifname), "%s", jstr(o, "host_ifname"));
	json_decref(o);
	ifname_key(ifname, key, sizeof(key));
	assert_true(model_has("sandbox_ifs", key));
	path_of(to.sun_path, sizeof(to.sun_path), "linkwatch.sock");
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(msg, sizeof(msg), "deleted %s", ifname);
	assert_int_equal(sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)strlen(msg));
	close(fd);
	/* The event is handled on the daemon's loop: ask until it was. */
	for (int i = 0; i < WAIT_MS / 50 && st == 200; i++) {
		st = api("GET", "/v1/sandboxes/gone", NULL, &o);
		json_decref(o);
		if (st == 200)
			usleep(50 * 1000);
	}
	assert_int_equal(st, 404);
	assert_false(model_has("sandbox_ifs", key));
	assert_false(file_exists("state/sandboxes/gone.json"));
	assert_int_equal(count_when("audit.jsonl", "\"action\":\"vanished\"", 1), 1);
	assert_int_equal(count_in("link.log", "netns_delete gone\n"), 1);
}

/* Restart over the same state dir: the sandboxes come back, nothing is made again. */
static void test_restart(void **state)
{
	char key[256], sb2_if[16];
	json_t *o, *arr;

	assert_int_equal(api("POST", "/v1/sandboxes",
			     "{\"name\": \"sb2\", \"policy\": \"openai-only\", \"mode\": \"audit\"}",
			     &o), 201);
	snprintf(sb2_if, sizeof(sb2_if), "%s", jstr(o, "host_ifname"));
	json_decref(o);
	assert_int_equal(daemon_stop(), 0);
	assert_int_equal(count_when("audit.jsonl", "\"action\":\"stop\"", 1), 1);
	assert_int_equal(unlink(strcat(strcpy((char[PATH_MAX]){ 0 }, root), "/nft.txt")), 0);

	assert_int_equal(daemon_start(), 0);
	assert_int_equal(api("GET", "/v1/sandboxes", NULL, &o), 200);
	arr = json_object_get(o, "sandboxes");
	assert_int_equal(json_array_size(arr), 2);
	json_decref(o);
	assert_int_equal(api("GET", "/v1/sandboxes/sb2", NULL, &o), 200);
	assert_string_equal(jstr(o, "mode"), "audit");
	assert_string_equal(jstr(o, "host_ifname"), sb2_if);
	json_decref(o);
	assert_int_equal(api("GET", "/v1/sandboxes/sb1", NULL, &o), 200);
	assert_string_equal(jstr(o, "ipv4"), sb1_v4);
	json_decref(o);
	/* The new model got both back in the restore's one batch. */
	ifname_key(sb1_if, key, sizeof(key));
	assert_true(model_has("sandbox_ifs", key));
	ifname_key(sb2_if, key, sizeof(key));
	assert_true(model_has("sandbox_ifs", key));
	assert_int_equal(count_in("nft.txt", "chain inet netd pa-openai-only "), 1);
	/* Interfaces kept: set up once each, before the restart. */
	assert_int_equal(count_in("link.log", "veth_setup "), 3);	/* sb1, gone, sb2 */
	assert_int_equal(count_when("audit.jsonl", "\"restored\":2", 1), 1);
}

/* Delete: interface, then rules, then state; 404 afterwards. */
static void test_delete(void **state)
{
	char key[256], line[64];
	json_t *o;

	assert_int_equal(api("DELETE", "/v1/sandboxes/sb1", NULL, &o), 200);
	assert_string_equal(jstr(o, "deleted"), "sb1");
	json_decref(o);
	snprintf(line, sizeof(line), "del %s\n", sb1_if);
	assert_int_equal(count_in("link.log", line), 1);
	assert_int_equal(count_in("link.log", "netns_delete sb1\n"), 1);
	snprintf(key, sizeof(key), "links/%s", sb1_if);
	assert_false(file_exists(key));
	assert_false(file_exists("netns/sb1"));
	ifname_key(sb1_if, key, sizeof(key));
	assert_false(model_has("sandbox_ifs", key));
	ifname_addr_key(sb1_if, sb1_v4, key, sizeof(key));
	assert_false(model_has("sandbox_src4", key));
	assert_int_equal(count_in("nft.txt", "chain inet netd pe-python-dev "), 0);
	assert_false(file_exists("state/sandboxes/sb1.json"));
	assert_false(file_exists("etc-netns/sb1/resolv.conf"));
	assert_int_equal(api("GET", "/v1/sandboxes/sb1", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(count_when("audit.jsonl", "\"action\":\"delete\"", 1), 1);
}

/* A bad policy at startup: the daemon refuses to start, and says where. */
static void test_startup_bad_policy(void **state)
{
	char want[PATH_MAX + 32];

	assert_int_equal(daemon_stop(), 0);
	put("policies/broken.yaml", "name: broken\negress:\n  - domains: [pypi.org]\n    prots: [443]\n");
	assert_int_equal(daemon_start(), 1);
	snprintf(want, sizeof(want), "%s/policies/broken.yaml:4:5", root);
	assert_true(count_in("daemon.log", want) >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_show_list),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_reload_bad),
		cmocka_unit_test(test_vanish),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_delete),
		cmocka_unit_test(test_startup_bad_policy),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

/*
 * box_daemon - the daemon in a box and the test's side of it, shared by
 * the tests that drive it (see box_daemon.h): the stand-ins the daemon
 * runs on (fake_nft with its model printed after every batch, box_link,
 * the replay seam on a unix socket), starting and stopping it, the control
 * API client, the DNS client, and running the real binaries against it.
 */
#include "tests/unit/box_daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
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

#include "common/addr.h"
#include "common/httpc.h"
#include "dnsproxy/replay.h"
#include "dnsproxy/wire.h"
#include "netd/daemon.h"
#include "netd/fw/kernel.h"
#include "tests/golden/fake_nft.h"
#include "tests/unit/box_link.h"

char box_root[PATH_MAX];	/* the box: mkdtemp() */
static pid_t daemon_pid;

bool box_as_nobody(void)
{
	return geteuid() == 0 && !getenv("NETD_BOX_AS_ROOT");
}

/* ---- files ----------------------------------------------------------------- */

void box_path(char *buf, size_t sz, const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(buf, sz, "%s/%s", box_root, rel);
}

/* ROOT/@rel's content (caller frees), or NULL if it cannot be read. */
char *box_slurp(const char *rel)
{
	char path[PATH_MAX];
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	box_path(path, sizeof(path), "%s", rel);
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

bool box_file_exists(const char *rel)
{
	char path[PATH_MAX];

	box_path(path, sizeof(path), "%s", rel);
	return access(path, F_OK) == 0;
}

/* Write ROOT/@rel (mode 0644): the fixture's config and policies. */
void box_put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	box_path(path, sizeof(path), "%s", rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* How many times @needle stands in ROOT/@rel. */
int box_count_in(const char *rel, const char *needle)
{
	char *s = box_slurp(rel);
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
int box_dgram_at(const char *rel, int flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	box_path(sa.sun_path, sizeof(sa.sun_path), "%s", rel);
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
 * answered (asked again until then, within BOX_WAIT_MS).
 */
int box_count_when(const char *rel, const char *needle, int n)
{
	int k = box_count_in(rel, needle);

	for (int i = 0; i < BOX_WAIT_MS / 20 && k < n; i++) {
		usleep(20 * 1000);
		k = box_count_in(rel, needle);
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
bool box_model_has(const char *set, const char *key)
{
	char *m = box_slurp("nft.txt"), head[128], want[256];
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
void box_ifname_key(const char *ifname, char *out, size_t sz)
{
	uint8_t b[16] = { 0 };

	memcpy(b, ifname, strnlen(ifname, 15));
	words(b, sizeof(b), out, sz);
}

/* The key words of @ifname . @ipv4 (sandbox_src4). */
void box_ifname_addr_key(const char *ifname, const char *ipv4, char *out, size_t sz)
{
	uint8_t b[20] = { 0 };
	struct addr a;

	memcpy(b, ifname, strnlen(ifname, 15));
	assert_int_equal(addr_parse(ipv4, &a), 0);
	memcpy(b + 16, a.a, 4);
	words(b, sizeof(b), out, sz);
}

/* The key words of a pin4 element: @src . @dst . @proto . @port (each field 4 bytes). */
void box_pin_key(const char *src, const char *dst, uint8_t proto, uint16_t port, char *out,
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
	box_path(tmp, sizeof(tmp), "nft.txt.tmp");
	box_path(path, sizeof(path), "nft.txt");
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
	b->fd = box_dgram_at("dns.sock", SOCK_NONBLOCK);
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

	box_path(log, sizeof(log), "daemon.log");
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	box_path(notify, sizeof(notify), "notify.sock");
	setenv("NOTIFY_SOCKET", notify, 1);
	if (box_as_nobody() &&
	    (setgroups(0, NULL) < 0 || setgid(BOX_NOBODY) < 0 || setuid(BOX_NOBODY) < 0)) {
		fprintf(stderr, "box: cannot become nobody: %s\n", strerror(errno));
		exit(3);
	}
	lk = box_link_new(box_root);
	if (!lk)
		exit(3);
	box_path(etc, sizeof(etc), "etc-netns");
	box_path(config, sizeof(config), "netd.yaml");
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
int box_daemon_start(void)
{
	char msg[512];
	int fd = box_dgram_at("notify.sock", 0), status, waited = 0;

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
		if (waited > BOX_WAIT_MS) {
			fail_msg("the daemon neither became ready nor stopped");
		}
	}
	close(fd);
	return 0;
}

/* SIGTERM, as systemd stops it.  Return: its exit status. */
int box_daemon_pid(void)
{
	return daemon_pid > 0 ? daemon_pid : 0;
}

int box_daemon_stop(void)
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
int box_api(const char *method, const char *path, const char *body, json_t **ret)
{
	char sock[PATH_MAX];
	json_t *b = NULL;
	int status = 0, r;

	box_path(sock, sizeof(sock), "ctl.sock");
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

char *box_http_raw(const char *request)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ssize_t n;

	assert_non_null(buf);
	assert_true(fd >= 0);
	box_path(sa.sun_path, sizeof(sa.sun_path), "ctl.sock");
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

int box_api_until(const char *path, int want)
{
	json_t *o;
	int st = box_api("GET", path, NULL, &o);

	for (int i = 0; i < BOX_WAIT_MS / 50 && st != want; i++) {
		json_decref(o);
		usleep(50 * 1000);
		st = box_api("GET", path, NULL, &o);
	}
	json_decref(o);
	return st;
}

const char *box_jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	assert_non_null(s);
	return s;
}

/* The error message of an error answer. */
const char *box_jerr(json_t *o)
{
	return box_jstr(json_object_get(o, "error"), "message");
}

/* @name under the DNS client @client: the reply's rcode and first A record. */
int box_dns_ask(const char *client, const char *name, char *a_out, size_t a_sz)
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
	memcpy(q + o, "\0\0\1\0\1", 5);	/* box_root, A, IN */
	o += 5;
	box_path(to.sun_path, sizeof(to.sun_path), "dns.sock");
	fd = box_dgram_at("client.sock", 0);
	assert_true(fd >= 0);
	assert_int_equal(sendto(fd, q, o, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)o);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, BOX_WAIT_MS), 1);
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

	box_path(path, sizeof(path), "%s", rel);
	if (box_as_nobody())
		assert_int_equal(chown(path, BOX_NOBODY, BOX_NOBODY), 0);
}

int box_setup(const char *extra_config)
{
	char path[PATH_MAX], text[8 * PATH_MAX];
	static const char *const dirs[] = { "", "policies", "state", "etc-netns" };

	snprintf(box_root, sizeof(box_root), "/tmp/netd-box.XXXXXX");
	if (!mkdtemp(box_root))
		return -1;
	chmod(box_root, 0755);
	for (size_t i = 1; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		box_path(path, sizeof(path), "%s", dirs[i]);
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
		 "upstream: [192.0.2.53]\n%s",
		 box_root, box_root, box_root, box_root, extra_config ? extra_config : "");
	box_put("netd.yaml", text);
	box_put("policies/deny-all.yaml", deny_all);
	box_put("policies/python-dev.yaml", python_dev);
	return box_daemon_start() == 0 ? 0 : -1;
}

int box_teardown(void)
{
	char cmd[PATH_MAX + 16];

	if (daemon_pid > 0)
		box_daemon_stop();
	if (getenv("NETD_BOX_KEEP")) {
		fprintf(stderr, "box kept: %s\n", box_root);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", box_root);
	return system(cmd) == 0 ? 0 : -1;
}


/* ---- the real binaries ------------------------------------------------------- */

/* An unlinked file in ROOT, open for reading and writing.  Return: the fd. */
static int scratch_fd(void)
{
	char path[PATH_MAX];
	int fd;

	box_path(path, sizeof(path), "run.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

/* @fd's content from its start (1 MiB at most), NUL-terminated; caller frees. */
static char *fd_text(int fd)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);
	ssize_t n;

	assert_non_null(buf);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return realloc(buf, len + 1) ?: buf;
}

void box_run(const char *const argv[], const char *const env[], const char *in,
	     struct box_run *ret)
{
	int fin = scratch_fd(), fout = scratch_fd(), ferr = scratch_fd(), status;
	pid_t pid;

	if (in) {
		assert_int_equal(write(fin, in, strlen(in)), (ssize_t)strlen(in));
		assert_int_equal(lseek(fin, 0, SEEK_SET), 0);
	}
	assert_int_equal(access(argv[0], X_OK), 0);	/* built? (make asan) */
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fin, STDIN_FILENO);
		dup2(fout, STDOUT_FILENO);
		dup2(ferr, STDERR_FILENO);
		for (size_t i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		if (box_as_nobody() &&
		    (setgroups(0, NULL) < 0 || setgid(BOX_NOBODY) < 0 || setuid(BOX_NOBODY) < 0))
			_exit(125);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	ret->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	ret->out = fd_text(fout);
	ret->err = fd_text(ferr);
	close(fin);
	close(fout);
	close(ferr);
}

void box_run_done(struct box_run *r)
{
	if (!r)
		return;
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

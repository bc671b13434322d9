/*
 * gwglue - netd's gateway worker as a process (netd/gw/, docs/gateway.md):
 * started once a policy has a gateway rule, with a listening socket, a
 * channel and a pipe for what it writes; its messages handed to
 * netd/daemon/gwdecide.c; restarted with backoff when it dies.  While none
 * runs the gateway's port has no listener: steered connections are
 * refused, never passed on directly.  Its status and metrics.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "common/clock.h"
#include "common/log.h"
#include "netd/common/metrics.h"
#include "netd/daemon/internal.h"
#include "netd/gw/ipc.h"

#define GW_RESTART_MIN_MS 100	/* first restart delay; doubles to the max */
#define GW_RESTART_MAX_MS 5000
#define GW_ROOT_DIR "gateway-root"	/* under state_dir: the worker's empty chroot */

/* ---- the worker's channel ------------------------------------------------------ */

void daemon_gw_send(struct daemon *d, char *msg, size_t len)
{
	if (send(d->gw.chan, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		d->gw_stats.lost++;
	explicit_bzero(msg, len);
	free(msg);
}

static void gw_exited(struct daemon *d);

static void on_chan(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	static char buf[GW_IPC_MAX + 1];
	void *root = NULL;
	ssize_t n;

	for (int i = 0; i < 256; i++) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			gw_exited(d);
			return;
		}
		if (n < 0)
			return;
		switch (gw_ipc_type(buf, (size_t)n, &root)) {
		case GW_IPC_CONN: {
			struct gw_ipc_ask a;
			struct gw_ipc_verdict v = { .rule = -1 };
			char *msg;
			size_t len;

			if (gw_ipc_decode_ask(root, &a) < 0)
				break;
			daemon_gw_decide(d, &a, &v);
			log_debug("gateway: connection to %s: %s%s%s", a.sni,
				  v.verdict == GW_IPC_GATEWAY ? "gateway" :
				  v.verdict == GW_IPC_PASS ? "pass" : "refuse",
				  v.reason ? " " : "", v.reason ? v.reason : "");
			d->gw_stats.conns[v.verdict]++;
			if (gw_ipc_encode_verdict(&v, &msg, &len) == 0)
				daemon_gw_send(d, msg, len);
			gw_ipc_verdict_clear(&v);
			break;
		}
		case GW_IPC_HTTP: {
			struct gw_ipc_http h;

			if (gw_ipc_decode_http(root, &h) == 0)
				daemon_gw_record(d, &h);
			break;
		}
		default:
			log_warn("gateway: a message from the worker that is not one, ignored");
			break;
		}
		json_decref(root);
		root = NULL;
	}
}

/* ---- starting, supervising, stopping --------------------------------------------- */

/* The listening socket steered connections reach: every address, the configured port. */
static int gw_listener(uint16_t port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), zero = 0, one = 1, r;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1024) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* STATE_DIR/gateway-root: empty, ours, not writable by anyone else. */
static int gw_root(struct daemon *d, char *path, size_t size)
{
	struct stat st;

	if (snprintf(path, size, "%s/%s", d->cfg.state_dir, GW_ROOT_DIR) >= (int)size)
		return -ENAMETOOLONG;
	if (mkdir(path, 0555) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0222))
		return -EPERM;
	return 0;
}

static void gw_restart_cb(evutil_socket_t fd, short what, void *arg);

/* A line the worker wrote: into netd's log, quoted (the worker parses hostile bytes). */
static void err_flush(struct daemon *d)
{
	char q[4 * sizeof(d->gw.err_line) + 1];

	if (!d->gw.err_len)
		return;
	log_quote(d->gw.err_line, d->gw.err_len, q, sizeof(q));
	/* The worker's own lines say their level (common/log.h); anything else is an error. */
	log_msg(strstr(q, ": debug: ") ? LOG_LVL_DEBUG : strstr(q, ": info: ") ? LOG_LVL_INFO :
		strstr(q, ": warning: ") ? LOG_LVL_WARN : LOG_LVL_ERR, "gateway worker said: %s", q);
	d->gw.err_len = 0;
}

/* Bytes the worker wrote: whole lines to the log, the rest kept. */
static void err_take(struct daemon *d, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			err_flush(d);
			continue;
		}
		if (d->gw.err_len == sizeof(d->gw.err_line))
			err_flush(d);
		d->gw.err_line[d->gw.err_len++] = buf[i];
	}
}

/* The pipe (set with its event, in gw_spawn()), after what is left in it. */
static void err_close(struct daemon *d)
{
	char buf[4096];
	ssize_t n;

	if (!d->gw.err_ev)
		return;
	while ((n = read(d->gw.err, buf, sizeof(buf))) > 0)
		err_take(d, buf, (size_t)n);
	err_flush(d);
	event_free(d->gw.err_ev);
	d->gw.err_ev = NULL;
	close(d->gw.err);
	d->gw.err = -1;
}

/*
 * The worker's stdout and stderr are a pipe to netd, not netd's log file: a
 * worker taken over could otherwise write anything into netd's log.
 */
static void on_err(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		err_close(d);
		return;
	}
	if (n > 0)
		err_take(d, buf, (size_t)n);
}

/*
 * The child's half: /dev/null, the pipe to netd's log, the listening
 * socket as fd 3 and the channel as fd 4; nothing else of netd's.  Never
 * returns.
 */
static void __attribute__((noreturn)) gw_exec(struct daemon *d, char **argv, int err, int lfd,
					     int chan)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(err, STDOUT_FILENO) < 0 ||
	    dup2(err, STDERR_FILENO) < 0 || dup2(lfd, GW_IPC_FD_LISTEN) < 0 ||
	    dup2(chan, GW_IPC_FD_CHAN) < 0)
		_exit(127);
	close_range(GW_IPC_FD_CHAN + 1, ~0U, 0);
	signal(SIGPIPE, SIG_DFL);
	execv(d->self_exe, argv);
	_exit(127);
}

static int gw_spawn(struct daemon *d)
{
	char root[PATH_MAX], *msg;
	char *argv[12];
	int sv[2], errp[2], lfd, r, k = 0;
	size_t len;
	struct gw_ipc_config c = {
		.connect_timeout_ms = d->cfg.gw_connect_timeout_s * 1000,
		.idle_timeout_ms = d->cfg.gw_idle_timeout_s * 1000,
	};
	pid_t pid;

	if ((r = gw_root(d, root, sizeof(root))) < 0) {
		snprintf(d->gw.why, sizeof(d->gw.why), "%.100s/%s: %s", d->cfg.state_dir,
			 GW_ROOT_DIR, strerror(-r));
		log_err("gateway: %s", d->gw.why);
		return r;
	}
	if ((lfd = gw_listener(d->cfg.gw_port)) < 0) {
		snprintf(d->gw.why, sizeof(d->gw.why), "cannot listen on port %u: %s",
			 d->cfg.gw_port, strerror(-lfd));
		log_err("gateway: %s", d->gw.why);
		return lfd;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		close(lfd);
		return r;
	}
	if (pipe2(errp, O_CLOEXEC) < 0) {
		r = -errno;
		close(lfd);
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	argv[k++] = "netd";
	argv[k++] = "gateway-worker";
	argv[k++] = "--user";
	argv[k++] = d->cfg.gw_user;
	argv[k++] = "--root";
	argv[k++] = root;
	if (d->cfg.gw_upstream_ca_file) {
		argv[k++] = "--ca-file";
		argv[k++] = d->cfg.gw_upstream_ca_file;
	}
	if (d->cfg.log_level >= LOG_LVL_DEBUG)
		argv[k++] = "--debug";
	argv[k] = NULL;
	pid = fork();
	if (pid == 0)
		gw_exec(d, argv, errp[1], lfd, sv[1]);
	r = pid < 0 ? -errno : 0;
	close(lfd);	/* the worker's alone: when it dies, nothing listens */
	close(sv[1]);
	close(errp[1]);
	if (r < 0) {
		close(sv[0]);
		close(errp[0]);
		snprintf(d->gw.why, sizeof(d->gw.why), "fork: %s", strerror(-r));
		return r;
	}
	d->gw.why[0] = '\0';
	err_close(d);	/* a previous worker's last words were read by now, or are lost */
	d->gw.err = errp[0];
	evutil_make_socket_nonblocking(errp[0]);
	d->gw.err_ev = event_new(d->base, errp[0], EV_READ | EV_PERSIST, on_err, d);
	if (d->gw.err_ev)
		event_add(d->gw.err_ev, NULL);
	d->gw.pid = pid;
	d->gw.chan = sv[0];
	evutil_make_socket_nonblocking(sv[0]);
	d->gw.ev = event_new(d->base, sv[0], EV_READ | EV_PERSIST, on_chan, d);
	if (!d->gw.ev || event_add(d->gw.ev, NULL) < 0 || gw_ipc_encode_config(&c, &msg, &len) < 0)
		return -ENOMEM;
	daemon_gw_send(d, msg, len);
	d->gw.started_ms = clock_mono_ms();
	log_info("gateway: worker %d listening on port %u as %s", (int)pid, d->cfg.gw_port,
		 d->cfg.gw_user);
	return 0;
}

/* The worker's channel closed: reap it, and start another after a pause. */
static void gw_exited(struct daemon *d)
{
	int st = 0;
	struct timeval tv;

	event_free(d->gw.ev);
	d->gw.ev = NULL;
	close(d->gw.chan);
	d->gw.chan = -1;
	if (d->gw.pid > 0 && waitpid(d->gw.pid, &st, 0) > 0)
		log_err("gateway: worker %d ended (%s %d); steered connections are refused until it is back",
			(int)d->gw.pid, WIFSIGNALED(st) ? "signal" : "status",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	d->gw.pid = 0;
	d->gw_stats.restarts++;
	/* A worker that lived a while restarts at once; one that keeps dying, slower. */
	if (clock_mono_ms() - d->gw.started_ms > 10000)
		d->gw.backoff_ms = GW_RESTART_MIN_MS;
	else
		d->gw.backoff_ms = d->gw.backoff_ms ? d->gw.backoff_ms * 2 : GW_RESTART_MIN_MS;
	if (d->gw.backoff_ms > GW_RESTART_MAX_MS)
		d->gw.backoff_ms = GW_RESTART_MAX_MS;
	tv.tv_sec = d->gw.backoff_ms / 1000;
	tv.tv_usec = (d->gw.backoff_ms % 1000) * 1000;
	if (!d->gw.restart)
		d->gw.restart = evtimer_new(d->base, gw_restart_cb, d);
	if (d->gw.restart)
		evtimer_add(d->gw.restart, &tv);
}

static void gw_restart_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	if (gw_spawn(d) < 0)
		gw_exited(d);
}

/* Does a loaded policy send anything through the gateway? */
static bool gw_wanted(const struct daemon *d)
{
	for (size_t i = 0; i < d->n_policies; i++)
		for (size_t r = 0; r < d->policies[i]->n_rules; r++)
			if (d->policies[i]->rules[r].gateway)
				return true;
	return false;
}

/*
 * What the worker needs of netd to give up its privileges: chroot, then
 * setgroups/setresgid/setresuid to gateway.user.  Said once, with the fix,
 * instead of a worker that dies at start over and over.
 */
static int gw_caps_ok(struct daemon *d)
{
	static const struct { int cap; const char *name; } need[] = {
		{ CAP_SYS_CHROOT, "CAP_SYS_CHROOT" }, { CAP_SETUID, "CAP_SETUID" },
		{ CAP_SETGID, "CAP_SETGID" },
	};
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	char missing[64] = "";

	if (syscall(SYS_capget, &h, data) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!(data[need[i].cap / 32].effective & (1u << (need[i].cap % 32))))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 "%s%s", missing[0] ? " " : "", need[i].name);
	if (!missing[0])
		return 0;
	snprintf(d->gw.why, sizeof(d->gw.why), "netd lacks %s, which the worker needs to chroot "
		 "and become gateway.user", missing);
	log_err("gateway: %s; steered connections are refused. Add them to the unit's "
		"CapabilityBoundingSet= and AmbientCapabilities= (deploy/systemd/netd.service, "
		"docs/install.md)", d->gw.why);
	return -EPERM;
}

int daemon_gw_start(struct daemon *d)
{
	if (!d->gw.started) {
		d->gw.chan = -1;
		d->gw.err = -1;
	}
	/* Only once a policy uses it: no worker and no listener otherwise. */
	if (!d->cfg.gw_port || d->gw.started || !gw_wanted(d))
		return 0;
	d->gw.started = true;
	if (gw_caps_ok(d) < 0)
		return -EPERM;
	return gw_spawn(d);
}

void daemon_gw_stop(struct daemon *d)
{
	if (d->gw.restart)
		event_free(d->gw.restart);
	d->gw.restart = NULL;
	if (d->gw.ev) {
		event_free(d->gw.ev);
		close(d->gw.chan);	/* the worker sees EOF and ends */
	}
	d->gw.ev = NULL;
	d->gw.chan = -1;
	if (d->gw.pid > 0) {
		kill(d->gw.pid, SIGTERM);
		waitpid(d->gw.pid, NULL, 0);
	}
	d->gw.pid = 0;
	err_close(d);	/* its last words (a sanitizer's report, say) are in the pipe still */
}

/*
 * What the worker is doing, in words: "running"; "idle: ..." while no
 * policy has a gateway: rule (none is started, and nothing listens);
 * "restarting" between a worker's end and the next; "failed: ..." when
 * netd gave up starting one (the log says why: capabilities, the port).
 */
/* Is a worker's restart due (between a worker's end and the next)? */
static bool gw_restarting(const struct daemon *d)
{
	return d->gw.restart && evtimer_pending(d->gw.restart, NULL);
}

/* Why netd gave up starting a worker. */
static const char *gw_why(const struct daemon *d)
{
	return d->gw.why[0] ? d->gw.why : "netd's log says why";
}

static const char *gw_worker_state(const struct daemon *d, char *buf, size_t size)
{
	if (d->gw.pid > 0)
		return "running";
	if (!d->gw.started)
		return "idle: no policy has a gateway: rule";
	if (gw_restarting(d))
		return "restarting";
	snprintf(buf, size, "failed: %s", gw_why(d));
	return buf;
}

bool daemon_gw_trouble(const struct daemon *d, char *msg, size_t size)
{
	if (!d->gw.started || d->gw.pid > 0)
		return false;
	if (gw_restarting(d)) {
		if (d->gw.backoff_ms <= GW_RESTART_MIN_MS)
			return false;	/* its first pause: a worker that lived a while */
		snprintf(msg, size, "the gateway worker keeps ending (%" PRIu64 " restarts; the "
			 "next in %" PRIu64 " ms): connections steered to it are refused while it "
			 "is down; netd's log has its last words", d->gw_stats.restarts,
			 d->gw.backoff_ms);
		return true;
	}
	snprintf(msg, size, "the gateway worker is not running (%s): connections steered to it "
		 "are refused", gw_why(d));
	return true;
}

json_t *daemon_gw_status(const struct daemon *d)
{
	char state[300];

	if (!d->cfg.gw_port)
		return json_pack("{s:b}", "enabled", 0);
	return json_pack("{s:b, s:i, s:s, s:i, s:b, s:I, s:I, s:{s:I, s:I, s:I}}", "enabled", 1,
			 "port", d->cfg.gw_port, "worker", gw_worker_state(d, state, sizeof(state)), "worker_pid",
			 (int)d->gw.pid, "worker_up", d->gw.pid > 0, "restarts",
			 (json_int_t)d->gw_stats.restarts,
			 "requests", (json_int_t)d->gw_stats.requests, "connections",
			 "gateway", (json_int_t)d->gw_stats.conns[GW_IPC_GATEWAY],
			 "pass", (json_int_t)d->gw_stats.conns[GW_IPC_PASS],
			 "refuse", (json_int_t)d->gw_stats.conns[GW_IPC_REFUSE]);
}

const double gw_hist_le[GW_HIST_N] = { 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120 };

void daemon_gw_metrics(struct daemon *d, FILE *out)
{
	const struct gw_stats *s = &d->gw_stats;
	static const char *const verdicts[] = { "refuse", "pass", "gateway" };

	metrics_family(out, "netd_gateway_requests_total", "counter",
		       "Requests through the API gateway, by sandbox, host and status.");
	for (size_t i = 0; i < s->n_series; i++) {
		char st[8];
		const char *l[] = { "sandbox", s->series[i].sandbox, "host", s->series[i].host,
				    "status", st, NULL };

		snprintf(st, sizeof(st), "%u", s->series[i].status);
		metrics_u64(out, "netd_gateway_requests_total", l, s->series[i].n);
	}
	metrics_family(out, "netd_gateway_requests_unlabelled_total", "counter",
		       "Requests past the first 4096 (sandbox, host, status) series, counted here only.");
	metrics_u64(out, "netd_gateway_requests_unlabelled_total", NULL, s->dropped_series);
	metrics_family(out, "netd_gateway_connections_total", "counter",
		       "Connections steered to the gateway, by netd's verdict.");
	for (size_t i = 0; i < 3; i++) {
		const char *l[] = { "verdict", verdicts[i], NULL };

		metrics_u64(out, "netd_gateway_connections_total", l, s->conns[i]);
	}
	metrics_family(out, "netd_gateway_request_duration_seconds", "histogram",
		       "Request start to response end through the gateway.");
	metrics_histogram(out, "netd_gateway_request_duration_seconds", gw_hist_le, s->hist,
			  GW_HIST_N, (double)s->hist_sum_us / 1e6);
	metrics_family(out, "netd_gateway_worker_restarts_total", "counter",
		       "Times the gateway worker ended and was started again.");
	metrics_u64(out, "netd_gateway_worker_restarts_total", NULL, s->restarts);
	metrics_family(out, "netd_gateway_worker_wanted", "gauge",
		       "1 once a policy has a gateway: rule (netd keeps a worker running).");
	metrics_u64(out, "netd_gateway_worker_wanted", NULL, d->gw.started);
	metrics_family(out, "netd_gateway_worker_up", "gauge",
		       "1 while a gateway worker runs; 0 while wanted: steered connections are refused.");
	metrics_u64(out, "netd_gateway_worker_up", NULL, d->gw.pid > 0);
}

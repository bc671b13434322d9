/*
 * mvnet - the few network probes the microVM test guest needs that busybox
 * lacks: a chosen source address and port, UDP with exact sizes, a TCP
 * stream whose delivered bytes the receiver confirms.  Built static by
 * tests/microvm/build.sh into the initramfs.  Test code only.
 *
 *   mvnet tcp [-s SRC] [-p SPORT] ADDR PORT        connect (3 s); exit 0 if it did
 *   mvnet udp [-s SRC] [-p SPORT] ADDR PORT SIZE N send N datagrams of SIZE bytes,
 *                                       each awaiting its echo (2 s); print the
 *                                       bytes echoed; exit 0 if all came back
 *   mvnet stream [-s SRC] [-p SPORT] ADDR PORT BYTES SECONDS
 *                                       send BYTES over TCP, spread over SECONDS,
 *                                       then read the receiver's count ("sink");
 *                                       print "sent N" and "acked M"; exit 0 if
 *                                       M == BYTES, 3 if sending stalled for 3 s
 *                                       (printing "stalled after N")
 *   mvnet sink PORT                     TCP receiver on [::]:PORT (v4 and v6):
 *                                       for each connection, read to EOF, answer
 *                                       the byte count, close; runs until killed
 *   mvnet source PORT BYTES SECONDS     TCP sender on [::]:PORT: to each connection,
 *                                       BYTES spread over SECONDS, then close
 *   mvnet pull [-s SRC] [-p SPORT] ADDR PORT BYTES
 *                                       connect and read to EOF; print "got N";
 *                                       exit 0 if N == BYTES, 3 if nothing came
 *                                       for 3 s (printing "stalled after N")
 *   mvnet udpecho PORT [ADDR]           UDP echo on ADDR:PORT (default [::], which
 *                                       answers from the address the route
 *                                       picks: give ADDR to answer from it)
 * ADDR and SRC are numeric IPv4 or IPv6 addresses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int sockaddr_of(const char *s, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*len = sizeof(*a4);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a6);
		return AF_INET6;
	}
	fprintf(stderr, "mvnet: not an address: %s\n", s);
	exit(2);
}

static int sport;	/* -p: the source port; 0: any */

static int open_sock(int type, const char *src, const char *dst, int port,
		     struct sockaddr_storage *to, socklen_t *tolen)
{
	int fam = sockaddr_of(dst, port, to, tolen), fd, one = 1;

	fd = socket(fam, type, 0);
	if (fd < 0) {
		perror("mvnet: socket");
		exit(1);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (src || sport) {
		struct sockaddr_storage from;
		socklen_t flen;

		if (!src)
			src = fam == AF_INET ? "0.0.0.0" : "::";
		if (sockaddr_of(src, sport, &from, &flen) != fam) {
			fprintf(stderr, "mvnet: -s and ADDR differ in family\n");
			exit(2);
		}
		if (bind(fd, (struct sockaddr *)&from, flen) < 0) {
			perror("mvnet: bind");
			exit(1);
		}
	}
	return fd;
}

static int tcp_connect(const char *src, const char *dst, int port);

static int do_tcp(const char *src, const char *dst, int port)
{
	int fd = tcp_connect(src, dst, port);

	if (fd < 0)
		return 1;
	printf("connected\n");
	close(fd);
	return 0;
}

static int do_udp(const char *src, const char *dst, int port, int size, int n)
{
	static char buf[65536], in[65536];
	struct sockaddr_storage to;
	socklen_t len;
	long got = 0;
	int fd = open_sock(SOCK_DGRAM, src, dst, port, &to, &len), ok = 1;

	if (size < 0 || size > 65000 || n < 1) {
		fprintf(stderr, "mvnet: bad SIZE or N\n");
		return 2;
	}
	memset(buf, 'x', (size_t)size);
	if (connect(fd, (struct sockaddr *)&to, len) < 0) {
		perror("mvnet: connect");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (send(fd, buf, (size_t)size, 0) != size) {
			perror("mvnet: send");
			return 1;
		}
		if (poll(&p, 1, 2000) != 1) {
			ok = 0;
			continue;
		}
		r = recv(fd, in, sizeof(in), 0);
		if (r > 0)
			got += r;
		else
			ok = 0;
	}
	printf("%ld\n", got);
	return ok ? 0 : 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for @ev on @fd for up to @ms; 1 if ready. */
static int wait_fd(int fd, short ev, int ms)
{
	struct pollfd p = { .fd = fd, .events = ev };

	return poll(&p, 1, ms) == 1;
}

/* Send @bytes on @fd spread over @secs.  Return: 0; 3 if a send stalled for 3 s. */
static int send_paced(int fd, long long bytes, double secs, long long *ret_sent)
{
	static char buf[16384];
	double t0 = now_s();
	long long sent = 0;

	memset(buf, 'y', sizeof(buf));
	while (sent < bytes) {
		double due = secs > 0 ? (now_s() - t0) / secs * (double)bytes : (double)bytes;
		long long want = (long long)due - sent, chunk;
		ssize_t n;

		if (want <= 0) {
			usleep(10000);
			continue;
		}
		chunk = want < (long long)sizeof(buf) ? want : (long long)sizeof(buf);
		if (bytes - sent < chunk)
			chunk = bytes - sent;
		if (!wait_fd(fd, POLLOUT, 3000))
			break;
		n = send(fd, buf, (size_t)chunk, MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n <= 0)
			break;
		sent += n;
	}
	*ret_sent = sent;
	return sent == bytes ? 0 : 3;
}

/* A non-blocking TCP socket connected to @dst port @port (3 s), from @src; -1 (said why). */
static int tcp_connect(const char *src, const char *dst, int port)
{
	struct sockaddr_storage to;
	socklen_t len, elen = sizeof(int);
	int fd = open_sock(SOCK_STREAM, src, dst, port, &to, &len), err = 0;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	if ((connect(fd, (struct sockaddr *)&to, len) < 0 && errno != EINPROGRESS) ||
	    !wait_fd(fd, POLLOUT, 3000) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 ||
	    err) {
		fprintf(stderr, "mvnet: connect to %s port %d: %s\n", dst, port,
			err ? strerror(err) : "timed out");
		close(fd);
		return -1;
	}
	return fd;
}

static int do_stream(const char *src, const char *dst, int port, long long bytes, double secs)
{
	long long sent = 0;
	int fd = tcp_connect(src, dst, port);
	char ack[64];
	ssize_t n;

	if (fd < 0)
		return 1;
	if (send_paced(fd, bytes, secs, &sent) != 0) {
		printf("stalled after %lld\n", sent);
		return 3;
	}
	printf("sent %lld\n", sent);
	shutdown(fd, SHUT_WR);
	if (!wait_fd(fd, POLLIN, 10000) || (n = recv(fd, ack, sizeof(ack) - 1, 0)) <= 0) {
		printf("no count from the receiver\n");
		return 1;
	}
	ack[n] = '\0';
	printf("acked %s\n", ack);
	return atoll(ack) == bytes ? 0 : 1;
}

/* A socket on [::]:@port (IPv4 too) of @type. */
static int listen_any(int type, int port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
	int fd = socket(AF_INET6, type, 0), zero = 0, one = 1;

	if (fd < 0 || setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0)) {
		perror("mvnet: listen");
		exit(1);
	}
	return fd;
}

static _Noreturn void do_sink(int port)
{
	int lfd = listen_any(SOCK_STREAM, port);

	signal(SIGCHLD, SIG_IGN);	/* children reaped by the kernel */
	for (;;) {
		static char buf[65536];
		long long got = 0;
		int c = accept(lfd, NULL, NULL);
		ssize_t n;

		if (c < 0)
			continue;
		if (fork() != 0) {
			close(c);
			continue;
		}
		while ((n = recv(c, buf, sizeof(buf), 0)) > 0)
			got += n;
		n = snprintf(buf, sizeof(buf), "%lld", got);
		send(c, buf, (size_t)n, MSG_NOSIGNAL);
		close(c);
		_exit(0);
	}
}

static _Noreturn void do_source(int port, long long bytes, double secs)
{
	int lfd = listen_any(SOCK_STREAM, port);

	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		long long sent;
		int c = accept(lfd, NULL, NULL);

		if (c < 0)
			continue;
		if (fork() != 0) {
			close(c);
			continue;
		}
		fcntl(c, F_SETFL, O_NONBLOCK);
		send_paced(c, bytes, secs, &sent);
		close(c);
		_exit(0);
	}
}

static int do_pull(const char *src, const char *dst, int port, long long bytes)
{
	static char buf[65536];
	long long got = 0;
	int fd = tcp_connect(src, dst, port);
	ssize_t n;

	if (fd < 0)
		return 1;
	for (;;) {
		if (!wait_fd(fd, POLLIN, 3000)) {
			printf("stalled after %lld\n", got);
			return 3;
		}
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	printf("got %lld\n", got);
	return got == bytes ? 0 : 1;
}

static _Noreturn void do_udpecho(int port, const char *addr)
{
	static char buf[65536];
	struct sockaddr_storage a;
	socklen_t alen;
	int fd;

	if (addr) {
		fd = socket(sockaddr_of(addr, port, &a, &alen), SOCK_DGRAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, alen) < 0) {
			perror("mvnet: bind");
			exit(1);
		}
	} else {
		fd = listen_any(SOCK_DGRAM, port);
	}

	for (;;) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);

		if (n >= 0)
			sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, flen);
	}
}

int main(int argc, char **argv)
{
	const char *src = NULL;
	int i = 2;

	if (argc < 2)
		goto usage;
	while (argc - i >= 2 && (strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "-p") == 0)) {
		if (argv[i][1] == 's')
			src = argv[i + 1];
		else
			sport = atoi(argv[i + 1]);
		i += 2;
	}
	if (strcmp(argv[1], "tcp") == 0 && argc - i == 2)
		return do_tcp(src, argv[i], atoi(argv[i + 1]));
	if (strcmp(argv[1], "udp") == 0 && argc - i == 4)
		return do_udp(src, argv[i], atoi(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3]));
	if (strcmp(argv[1], "stream") == 0 && argc - i == 4)
		return do_stream(src, argv[i], atoi(argv[i + 1]), atoll(argv[i + 2]),
				 atof(argv[i + 3]));
	if (strcmp(argv[1], "source") == 0 && argc - i == 3)
		do_source(atoi(argv[i]), atoll(argv[i + 1]), atof(argv[i + 2]));
	if (strcmp(argv[1], "pull") == 0 && argc - i == 3)
		return do_pull(src, argv[i], atoi(argv[i + 1]), atoll(argv[i + 2]));
	if (strcmp(argv[1], "sink") == 0 && argc - i == 1)
		do_sink(atoi(argv[i]));
	if (strcmp(argv[1], "udpecho") == 0 && (argc - i == 1 || argc - i == 2))
		do_udpecho(atoi(argv[i]), argc - i == 2 ? argv[i + 1] : NULL);
usage:
	fprintf(stderr, "usage: mvnet tcp [-s SRC] [-p SPORT] ADDR PORT\n"
			"       mvnet udp [-s SRC] [-p SPORT] ADDR PORT SIZE N\n"
			"       mvnet stream [-s SRC] [-p SPORT] ADDR PORT BYTES SECONDS\n"
			"       mvnet pull [-s SRC] [-p SPORT] ADDR PORT BYTES\n"
			"       mvnet sink PORT | mvnet source PORT BYTES SECONDS | mvnet udpecho PORT [ADDR]\n");
	return 2;
}

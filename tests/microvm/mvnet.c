/*
 * mvnet - the few network probes the microVM test guest needs that busybox
 * lacks: a chosen source address, and UDP with exact sizes.  Built static
 * by tests/microvm/build.sh into the initramfs.  Test code only.
 *
 *   mvnet tcp [-s SRC] ADDR PORT        connect (3 s); exit 0 if it did
 *   mvnet udp [-s SRC] ADDR PORT SIZE N send N datagrams of SIZE bytes, each
 *                                       awaiting its echo (2 s); print the
 *                                       bytes echoed; exit 0 if all came back
 * ADDR and SRC are numeric IPv4 or IPv6 addresses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
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

static int open_sock(int type, const char *src, const char *dst, int port,
		     struct sockaddr_storage *to, socklen_t *tolen)
{
	int fam = sockaddr_of(dst, port, to, tolen), fd;

	fd = socket(fam, type, 0);
	if (fd < 0) {
		perror("mvnet: socket");
		exit(1);
	}
	if (src) {
		struct sockaddr_storage from;
		socklen_t flen;

		if (sockaddr_of(src, 0, &from, &flen) != fam) {
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

static int do_tcp(const char *src, const char *dst, int port)
{
	struct sockaddr_storage to;
	struct pollfd p;
	socklen_t len;
	int fd = open_sock(SOCK_STREAM, src, dst, port, &to, &len), err = 0;
	socklen_t elen = sizeof(err);

	fcntl(fd, F_SETFL, O_NONBLOCK);
	if (connect(fd, (struct sockaddr *)&to, len) < 0 && errno != EINPROGRESS) {
		perror("mvnet: connect");
		return 1;
	}
	p.fd = fd;
	p.events = POLLOUT;
	if (poll(&p, 1, 3000) != 1) {
		fprintf(stderr, "mvnet: connect to %s port %d: timed out\n", dst, port);
		return 1;
	}
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
	if (err) {
		fprintf(stderr, "mvnet: connect to %s port %d: %s\n", dst, port, strerror(err));
		return 1;
	}
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

int main(int argc, char **argv)
{
	const char *src = NULL;
	int i = 2;

	if (argc < 2)
		goto usage;
	if (argc > 3 && strcmp(argv[2], "-s") == 0) {
		src = argv[3];
		i = 4;
	}
	if (strcmp(argv[1], "tcp") == 0 && argc - i == 2)
		return do_tcp(src, argv[i], atoi(argv[i + 1]));
	if (strcmp(argv[1], "udp") == 0 && argc - i == 4)
		return do_udp(src, argv[i], atoi(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3]));
usage:
	fprintf(stderr, "usage: mvnet tcp [-s SRC] ADDR PORT | udp [-s SRC] ADDR PORT SIZE N\n");
	return 2;
}

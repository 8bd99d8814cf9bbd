// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tls-floor: the resident memory a verified TLS request costs a process through OpenSSL alone
 * (no libcurl, no other library of its chain): the floor under nodeprobe-devices' DRA mode,
 * whose API client is libcurl on Debian's OpenSSL (make bench, test/bench/dra.sh).
 *
 *   tls-floor IPV4 PORT CAFILE
 *
 * Loads libssl (dlopen, as pkg/kube loads libcurl), initialises it, makes a client context
 * trusting CAFILE only, connects, verifies the server's certificate (chain and IPV4 as its
 * address) and sends one HTTP/1.1 GET /, reading the answer to its end. Prints one line of
 * VmHWM, RssAnon and RssFile (KiB, /proc/self/status) at each stage:
 *   start hwm=.. anon=.. file=..        before libssl is loaded
 *   loaded hwm=.. anon=.. file=..       libssl and libcrypto mapped and relocated
 *   init hwm=.. anon=.. file=..         OPENSSL_init_ssl (as libcurl's curl_global_init)
 *   context hwm=.. anon=.. file=..      SSL_CTX with the CA loaded
 *   request hwm=.. anon=.. file=..      handshake, verification, the GET answered
 * Exit 1 (named on stderr) when a step fails, the verification included; 2 on usage.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SSL_SONAME "libssl.so.3"

static struct {
	__typeof__(OPENSSL_init_ssl) *init;
	__typeof__(TLS_client_method) *method;
	__typeof__(SSL_CTX_new) *ctx_new;
	__typeof__(SSL_CTX_free) *ctx_free;
	__typeof__(SSL_CTX_load_verify_locations) *load_ca;
	__typeof__(SSL_CTX_set_verify) *set_verify;
	__typeof__(SSL_new) *ssl_new;
	__typeof__(SSL_free) *ssl_free;
	__typeof__(SSL_set_fd) *set_fd;
	__typeof__(SSL_set1_host) *set1_host;
	__typeof__(SSL_connect) *connect;
	__typeof__(SSL_get_verify_result) *verify_result;
	__typeof__(SSL_write) *write;
	__typeof__(SSL_read) *read;
} o;

static void stage(const char *name)
{
	char l[256];
	long hwm = -1, anon = -1, file = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(l, sizeof(l), f)) {
		sscanf(l, "VmHWM: %ld", &hwm);
		sscanf(l, "RssAnon: %ld", &anon);
		sscanf(l, "RssFile: %ld", &file);
	}
	if (f)
		fclose(f);
	printf("%s hwm=%ld anon=%ld file=%ld\n", name, hwm, anon, file);
}

/* Say what failed on stderr; returns 1. */
static int fail(const char *what)
{
	fprintf(stderr, "tls-floor: %s\n", what);
	return 1;
}

/* Connect to a, verify its certificate (host its address) and GET /; returns 0 or fail's 1. */
static int request(SSL_CTX *ctx, const struct sockaddr_in *a, const char *host)
{
	char req[256], buf[4096];
	SSL *s = NULL;
	int fd, rc = 0;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)a, sizeof(*a)) < 0) {
		rc = fail("cannot connect");
		goto out;
	}
	s = o.ssl_new(ctx);
	if (!s || o.set_fd(s, fd) != 1 || o.set1_host(s, host) != 1) {
		rc = fail("SSL_new failed");
		goto out;
	}
	if (o.connect(s) != 1 || o.verify_result(s) != X509_V_OK) {
		rc = fail("TLS handshake or certificate verification failed");
		goto out;
	}
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host);
	if (o.write(s, req, (int)strlen(req)) <= 0) {
		rc = fail("cannot send the request");
		goto out;
	}
	while (o.read(s, buf, sizeof(buf)) > 0)
		;
out:
	if (s)
		o.ssl_free(s);
	if (fd >= 0)
		close(fd);
	return rc;
}

static int load(void)
{
	void *l = dlopen(SSL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!l)
		return -1;
#define SYM(f, s)                                                                                  \
	if (!(*(void **)&o.f = dlsym(l, s)))                                                       \
		return -1;
	SYM(init, "OPENSSL_init_ssl")
	SYM(method, "TLS_client_method")
	SYM(ctx_new, "SSL_CTX_new")
	SYM(ctx_free, "SSL_CTX_free")
	SYM(load_ca, "SSL_CTX_load_verify_locations")
	SYM(set_verify, "SSL_CTX_set_verify")
	SYM(ssl_new, "SSL_new")
	SYM(ssl_free, "SSL_free")
	SYM(set_fd, "SSL_set_fd")
	SYM(set1_host, "SSL_set1_host")
	SYM(connect, "SSL_connect")
	SYM(verify_result, "SSL_get_verify_result")
	SYM(write, "SSL_write")
	SYM(read, "SSL_read")
#undef SYM
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	SSL_CTX *ctx;
	int rc;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &a.sin_addr) != 1 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: tls-floor IPV4 PORT CAFILE\n");
		return 2;
	}
	a.sin_port = htons((unsigned short)atoi(argv[2]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	stage("start");
	if (load() < 0)
		return fail(dlerror());
	stage("loaded");
	if (o.init(OPENSSL_INIT_LOAD_CONFIG, NULL) != 1)
		return fail("OPENSSL_init_ssl failed");
	stage("init");
	ctx = o.ctx_new(o.method());
	if (!ctx)
		return fail("SSL_CTX_new failed");
	if (o.load_ca(ctx, argv[3], NULL) != 1) {
		o.ctx_free(ctx);
		return fail("cannot load the CA file");
	}
	o.set_verify(ctx, SSL_VERIFY_PEER, NULL);
	stage("context");
	rc = request(ctx, &a, argv[1]);
	if (rc == 0)
		stage("request");
	o.ctx_free(ctx);
	return rc;
}

/*
 * The TLS layer of the syslog_tls sink (RFC 5425; sinks/sink_impl.h), with OpenSSL
 * over the sink's TCP socket. TLS 1.2 at least; the receiver's certificate must chain to
 * ca_file (else the system's CAs) and name server_name (else the address connected
 * to); a client certificate is presented when cert_file is set. The framing above is
 * the same octet counting as over plain TCP.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>

#include "sinks/sink_impl.h"

/* Keeps OpenSSL's reason for the log (sink_last_error); returns err. */
static int tls_fail(struct sink *k, int err, const char *what)
{
	unsigned long e = ERR_get_error();
	char reason[200] = "";

	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	snprintf(k->err_detail, sizeof(k->err_detail), "TLS %s%s%s", what, reason[0] ? ": " : "",
		 reason);
	ERR_clear_error();
	return err;
}

static int ctx_new(struct sink *k)
{
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());

	if (!c)
		return tls_fail(k, -ENOMEM, "context");
	k->tls_ctx = c;
	if (SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION) != 1)
		return tls_fail(k, -EINVAL, "minimum version");
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
	if (k->ca_file ? SSL_CTX_load_verify_locations(c, k->ca_file, NULL) != 1
		       : SSL_CTX_set_default_verify_paths(c) != 1)
		return tls_fail(k, -EINVAL, "CA file");
	if (k->cert_file &&
	    (SSL_CTX_use_certificate_chain_file(c, k->cert_file) != 1 ||
	     SSL_CTX_use_PrivateKey_file(c, k->key_file, SSL_FILETYPE_PEM) != 1 ||
	     SSL_CTX_check_private_key(c) != 1))
		return tls_fail(k, -EINVAL, "client certificate or key");
	/* A session a peer's restart forgot is not worth a failed resumption (the call
	 * returns the previous mode, not a status). */
	(void)SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
	return 0;
}

/* What the receiver's certificate must name: server_name, else the IP connected to. */
static int expect_name(struct sink *k, SSL *s)
{
	char ip[64];

	if (k->server_name)
		return SSL_set_tlsext_host_name(s, k->server_name) == 1 &&
		       SSL_set1_host(s, k->server_name) == 1 ? 0 : -ENOMEM;
	if (sink_addr_str(k, ip, sizeof(ip)) != 0)
		return -EINVAL;
	return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), ip) == 1 ? 0 : -ENOMEM;
}

int sink_tls_open(struct sink *k)
{
	SSL *s;
	int ret;

	if (!k->tls_ctx && (ret = ctx_new(k)) != 0) {
		/* Made again at the next attempt: the files may be fixed by then. */
		SSL_CTX_free(k->tls_ctx);
		k->tls_ctx = NULL;
		return ret;
	}
	s = SSL_new(k->tls_ctx);
	if (!s)
		return tls_fail(k, -ENOMEM, "session");
	k->tls = s;
	if (SSL_set_fd(s, k->fd) != 1)
		return tls_fail(k, -ENOMEM, "session");
	ret = expect_name(k, s);
	if (ret)
		return tls_fail(k, ret, "peer name");
	/* The socket's SO_RCVTIMEO/SO_SNDTIMEO bound the handshake. */
	if (SSL_connect(s) != 1) {
		long v = SSL_get_verify_result(s);

		if (v != X509_V_OK) {
			snprintf(k->err_detail, sizeof(k->err_detail),
				 "TLS handshake: certificate verify failed: %s",
				 X509_verify_cert_error_string(v));
			ERR_clear_error();
			return -EKEYREJECTED;
		}
		return tls_fail(k, -ECONNREFUSED, "handshake");
	}
	return 0;
}

int sink_tls_write(struct sink *k, const char *data, size_t len)
{
	while (len) {
		size_t n = 0;

		if (SSL_write_ex(k->tls, data, len, &n) != 1) {
			int e = SSL_get_error(k->tls, 0);

			return tls_fail(k, e == SSL_ERROR_WANT_WRITE ? -ETIMEDOUT : -ECONNRESET,
					"write");
		}
		data += n;
		len -= n;
	}
	return 0;
}

/*
 * Reads what the receiver sent (TLS 1.3 session tickets, alerts) without blocking:
 * 0 while it looks alive, -ECONNRESET once it has closed the session.
 */
int sink_tls_drain(struct sink *k)
{
	char junk[512];
	size_t n;
	int flags = fcntl(k->fd, F_GETFL), ret = 0;

	if (flags < 0 || fcntl(k->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	for (;;) {
		if (SSL_read_ex(k->tls, junk, sizeof(junk), &n) == 1)
			continue;
		if (SSL_get_error(k->tls, 0) != SSL_ERROR_WANT_READ)
			ret = tls_fail(k, -ECONNRESET, "peer closed the session");
		ERR_clear_error();
		break;
	}
	if (fcntl(k->fd, F_SETFL, flags) < 0 && ret == 0)
		ret = -errno;
	return ret;
}

void sink_tls_close(struct sink *k)
{
	if (!k->tls)
		return;
	/* No close_notify: the peer may be gone, and a broken pipe must not follow. */
	SSL_free(k->tls);
	k->tls = NULL;
	ERR_clear_error();
}

void sink_tls_free(struct sink *k)
{
	sink_tls_close(k);
	SSL_CTX_free(k->tls_ctx);
	k->tls_ctx = NULL;
}

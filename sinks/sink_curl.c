/*
 * The HTTP transport of the HEC and OTLP sinks (sinks/sink_impl.h), with libcurl.
 * One easy handle per sink keeps its connection alive between batches; a 2xx answer is
 * the receiver's acknowledgement of the whole batch.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sinks/sink_impl.h"

_Static_assert(sizeof(((struct sink *)0)->err_detail) >= CURL_ERROR_SIZE,
	       "libcurl's error buffer is err_detail");

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

static int headers(struct sink *k)
{
	char auth[1024];
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

	if (h && k->s.kind == SINK_HEC && k->token) {
		snprintf(auth, sizeof(auth), "Authorization: Splunk %s", k->token);
		struct curl_slist *h2 = curl_slist_append(h, auth);

		if (!h2) {
			curl_slist_free_all(h);
			h = NULL;
		} else {
			h = h2;
		}
	}
	k->headers = h;
	return h ? 0 : -ENOMEM;
}

int sink_curl_open(struct sink *k)
{
	CURL *c;

	if (k->curl)
		return 0;
	c = curl_easy_init();
	if (!c || headers(k)) {
		curl_easy_cleanup(c);
		return -ENOMEM;
	}
	curl_easy_setopt(c, CURLOPT_URL, k->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, k->headers);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 15L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, k->err_detail);   /* CURL_ERROR_SIZE */
	/* https: the same TLS settings as syslog_tls (NULL leaves curl's defaults). */
	if (k->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, k->ca_file);
	if (k->cert_file) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, k->cert_file);
		curl_easy_setopt(c, CURLOPT_SSLKEY, k->key_file);
	}
	k->curl = c;
	return 0;
}

static int curl_err(CURLcode rc)
{
	switch (rc) {
	case CURLE_OK: return 0;
	case CURLE_COULDNT_CONNECT: return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT: return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST: return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY: return -ENOMEM;
	default: return -EIO;
	}
}

int sink_curl_post(struct sink *k, const char *data, size_t len)
{
	const char *body = data;
	long status = 0;
	int ret;

	if (k->s.kind == SINK_OTLP_HTTP) {
		buf_reset(&k->http);
		sink_otlp_wrap(&k->http, k->host, data, len);
		if (k->http.oom)
			return -ENOMEM;
		body = k->http.data;
		len = k->http.len;
	}
	curl_easy_setopt(k->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(k->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	ret = curl_err(curl_easy_perform(k->curl));
	if (ret == 0 && curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
		ret = -EIO;
	/* The receiver refused the batch (overloaded, bad token): sent again later. */
	if (ret == 0 && (status < 200 || status > 299))
		ret = -EREMOTEIO;
	return ret;
}

void sink_curl_close(struct sink *k)
{
	if (k->curl)
		curl_easy_cleanup(k->curl);
	curl_slist_free_all(k->headers);
	k->curl = NULL;
	k->headers = NULL;
}

int sink_curl_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

void sink_curl_global_cleanup(void)
{
	curl_global_cleanup();
}

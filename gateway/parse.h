/*
 * Gateway parsers: the first bytes of a flow a sandbox opens, read for the names
 * the egress policy decides on (TLS SNI, HTTP Host, HTTP/2 :authority, the SNI
 * inside a QUIC Initial). Pure functions over a byte buffer: no I/O, no logging,
 * no global state. Every length in the input is checked before it is used; the
 * work and the memory are bounded by the caps below. Details: docs/parsers.md.
 *
 * Result codes are shared: a parser returns one of enum gw_parse, or a negative
 * errno for a failure of our own (-ENOMEM, -EIO from OpenSSL, -EINVAL for NULL).
 */
#ifndef SANDGATE_GATEWAY_PARSE_H
#define SANDGATE_GATEWAY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gw_parse {
	GW_PARSE_OK = 0,          /* complete; the struct is filled */
	GW_PARSE_NEED_MORE = 1,   /* well-formed so far; call again with more bytes */
	GW_PARSE_NOT_MINE = 2,    /* not this protocol (first bytes do not match) */
	GW_PARSE_MALFORMED = 3,   /* this protocol, but broken or evasive: block it */
	GW_PARSE_TOO_BIG = 4,     /* would need more than the cap: block it */
};

/* Short name of a result ("ok", "need_more", ...), for logs and events. */
const char *gw_parse_str(int result);

/* ---- TLS ClientHello -------------------------------------------------------- */

/* Largest ClientHello handshake message accepted (body + 4-byte header). */
#define TLS_HELLO_MAX 16384
/* Largest stream prefix examined: the hello plus the headers of its records. */
#define TLS_STREAM_MAX (TLS_HELLO_MAX + 2048)
#define TLS_SNI_MAX 256
#define TLS_ALPN_KEEP 8
#define TLS_ALPN_LEN_MAX 64
#define TLS_VERSIONS_KEEP 16

struct tls_hello {
	uint16_t record_version;       /* of the first record */
	uint16_t legacy_version;       /* ClientHello.legacy_version */
	uint16_t max_version;          /* highest non-GREASE offered version */
	size_t n_versions;             /* supported_versions, GREASE included */
	uint16_t versions[TLS_VERSIONS_KEEP];
	bool has_sni;
	char sni[TLS_SNI_MAX];         /* host_name, ASCII-lowercased, as sent */
	size_t n_alpn;
	/* Protocol ids; bytes outside 0x21..0x7e appear as \xHH. Longer ones are cut. */
	char alpn[TLS_ALPN_KEEP][TLS_ALPN_LEN_MAX];
	bool alpn_truncated;           /* more ids than kept, or an id was cut */
	bool has_ech;                  /* encrypted_client_hello (0xfe0d) present */
	int ech_type;                  /* 0 outer, 1 inner, -1 when absent or empty */
	size_t hello_len;              /* handshake message length incl. its header */
	size_t stream_len;             /* stream bytes the hello's records occupy */
};

/*
 * Parses the ClientHello at the start of a TCP stream: p[0..n) are the first n
 * bytes the client sent, in order. The hello may span several TLS records and
 * segments. Returns GW_PARSE_OK; GW_PARSE_NEED_MORE with *need = the stream length
 * needed at least before the next try; GW_PARSE_NOT_MINE when the stream does not
 * start with a handshake record carrying a ClientHello; GW_PARSE_MALFORMED for any
 * inconsistent length, duplicate extension, two host_names or bad host_name bytes;
 * GW_PARSE_TOO_BIG beyond TLS_HELLO_MAX / TLS_STREAM_MAX; -EINVAL for NULL.
 * need may be NULL.
 */
int tls_hello_parse(const uint8_t *p, size_t n, struct tls_hello *out, size_t *need);

/*
 * Parses a bare ClientHello handshake message (type 1, 3-byte length, body), as
 * QUIC carries it in CRYPTO frames. Same results as tls_hello_parse; NEED_MORE
 * sets *need to the message length needed.
 */
int tls_hello_parse_handshake(const uint8_t *p, size_t n, struct tls_hello *out,
			      size_t *need);

/* ---- HTTP/1.x request head and HTTP/2 cleartext ----------------------------- */

#define HTTP_HEAD_MAX 8192
#define HTTP_HOST_MAX 256
#define HTTP_METHOD_MAX 16
#define HTTP_PATH_MAX 512

struct http_req {
	char method[HTTP_METHOD_MAX];
	uint8_t version_minor;          /* HTTP/1.<minor> */
	bool has_host;
	/* Effective host, lowercase, port and [] removed: the authority of an
	 * absolute-form or CONNECT target if there is one, else the Host header. */
	char host[HTTP_HOST_MAX];
	uint16_t port;                  /* explicit port, 0 when none */
	bool absolute_form;             /* target was "scheme://authority/..." */
	bool host_mismatch;             /* target authority and Host header differ */
	char path[HTTP_PATH_MAX];       /* target (origin form), cut to fit */
	bool path_truncated;
	size_t head_len;                /* bytes up to and including the blank line */
	/* Framing of the body that follows (RFC 9112 6): what the next request head's
	 * place depends on. Two Content-Length values, a Transfer-Encoding other than
	 * "chunked", or both headers are MALFORMED (request smuggling material). */
	bool has_clen;
	uint64_t clen;
	bool chunked;
	bool upgrade;                   /* an Upgrade header: what follows may not be HTTP/1 */
};

/*
 * Parses an HTTP/1.x request head from the start of a stream. Returns GW_PARSE_OK;
 * GW_PARSE_NEED_MORE while the blank line ending the head is missing;
 * GW_PARSE_NOT_MINE when the bytes cannot be an HTTP/1 request line;
 * GW_PARSE_MALFORMED for a bad request line, several Host headers, a bad Host
 * value or an obs-fold; GW_PARSE_TOO_BIG when no head ends within HTTP_HEAD_MAX.
 * A request without Host parses OK with has_host false.
 */
int http_req_parse(const uint8_t *p, size_t n, struct http_req *out);

/*
 * Following a cleartext HTTP/1 client stream past its first request: every request
 * head is read (its Host checked by the caller), bodies are skipped by their framing
 * (Content-Length, chunked). Feed the stream in order, from the first byte after the
 * first head (http_follow_start). Pure: no I/O.
 */
struct http_follow;

/* A follower whose next bytes are the body of request r (then the next head). 0 or
 * -ENOMEM. */
int http_follow_new(const struct http_req *r, struct http_follow **out);
void http_follow_free(struct http_follow *h);
/*
 * Reads p[0..n), the stream bytes from the follower's position on. Returns
 * GW_PARSE_OK when a complete request head lies at p[*start .. *used) (bytes before
 * *start were body or framing), *req filled: the follower then expects its body, so
 * call again with p + *used. GW_PARSE_NEED_MORE: the first *used bytes were body or
 * framing; when *used < n, p[*used..n) is the start of a head that is not complete:
 * give it again with more bytes. GW_PARSE_MALFORMED (a bad head, chunk line or a
 * byte that cannot start a request), GW_PARSE_TOO_BIG (head past HTTP_HEAD_MAX):
 * what cannot be followed with certainty. -EINVAL for NULL.
 */
int http_follow_feed(struct http_follow *h, const uint8_t *p, size_t n, size_t *start,
		     size_t *used, struct http_req *req);

#define H2_PREFACE_LEN 24
#define H2_HEADERS_MAX 16384

struct h2_req {
	bool decoded;                   /* HPACK was decoded (built with nghttp2) */
	bool has_authority;
	char authority[HTTP_HOST_MAX];  /* lowercase, port and [] removed */
	uint16_t port;
	char method[HTTP_METHOD_MAX];
	char path[HTTP_PATH_MAX];
	bool path_truncated;
	uint32_t stream_id;
	size_t consumed;                /* stream bytes up to the end of the header block */
};

/* Whether p starts with (a prefix of, when n < 24) the HTTP/2 client preface. */
bool h2_is_preface(const uint8_t *p, size_t n);

/*
 * Parses cleartext HTTP/2 with prior knowledge: the preface, the frames before
 * the first HEADERS (SETTINGS, WINDOW_UPDATE, PRIORITY, PING), and the header
 * block of the first HEADERS frame and its CONTINUATIONs, decoded with nghttp2's
 * HPACK inflater when built with SANDGATE_HAVE_NGHTTP2 (else decoded stays false).
 * Returns GW_PARSE_OK, GW_PARSE_NEED_MORE (*need = stream bytes needed at least),
 * GW_PARSE_NOT_MINE without the preface, GW_PARSE_MALFORMED for a bad frame,
 * bad padding or an HPACK error, GW_PARSE_TOO_BIG past H2_HEADERS_MAX; -ENOMEM.
 */
int h2_req_parse(const uint8_t *p, size_t n, struct h2_req *out, size_t *need);

/* ---- QUIC Initial ----------------------------------------------------------- */

#define QUIC_CID_MAX 20
#define QUIC_CRYPTO_MAX 16384
#define QUIC_V1 0x00000001u
#define QUIC_V2 0x6b3343cfu

/*
 * State for reading the client's ClientHello out of its Initial packets. A hello
 * larger than one packet (post-quantum key shares) spans several datagrams, so the
 * CRYPTO stream is reassembled here across calls. About 19 KiB; embed it in the
 * flow entry or allocate it. Initialise with quic_initial_init.
 */
struct quic_initial {
	uint32_t version;
	uint8_t dcid[QUIC_CID_MAX];
	size_t dcid_len;
	uint8_t scid[QUIC_CID_MAX];
	size_t scid_len;
	size_t packets;                 /* Initial packets decrypted so far */
	struct tls_hello hello;         /* valid once quic_initial_parse returned OK */
	/* private: keys and CRYPTO reassembly */
	bool have_keys;
	uint8_t key[16], iv[12], hp[16];
	uint8_t crypto[QUIC_CRYPTO_MAX];
	uint8_t have[QUIC_CRYPTO_MAX / 8];
};

/* Resets q to its empty state. */
void quic_initial_init(struct quic_initial *q);

/*
 * Feeds one UDP datagram the client sent (it may hold several coalesced packets;
 * the Initial ones are used, others skipped). Derives the RFC 9001 / RFC 9369
 * initial keys from the first packet's DCID, removes header protection, decrypts
 * (AES-128-GCM), collects CRYPTO frames and parses the ClientHello once it is
 * contiguous. Returns GW_PARSE_OK (q->hello filled); GW_PARSE_NEED_MORE (feed the
 * next datagram of the flow; *need = CRYPTO bytes still missing, 0 if unknown);
 * GW_PARSE_NOT_MINE for a short header, an unknown version or a non-Initial
 * first packet; GW_PARSE_MALFORMED when a length is wrong, authentication fails,
 * a frame is not allowed in Initial, CRYPTO data overlaps inconsistently, or the
 * DCID changes; GW_PARSE_TOO_BIG past QUIC_CRYPTO_MAX; -EIO when OpenSSL fails.
 */
int quic_initial_parse(struct quic_initial *q, const uint8_t *p, size_t n, size_t *need);

#endif

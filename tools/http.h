/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The exporter's HTTP server: HTTP/1.0 and HTTP/1.1 (RFC 9110, 9112),
 * GET and HEAD, one request per connection. Many connections are served at
 * once, without blocking: a connection that is slow to send its request or
 * to read its response only ever holds its own buffer, never the caller's
 * loop, and is closed at its deadline.
 */
#ifndef _STEPTIME_TOOLS_HTTP_H
#define _STEPTIME_TOOLS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define HTTP_CONN_MAX		256	/* connections at once; the oldest
					   goes for a new one past that */
#define HTTP_LINE_MAX		8192	/* request line (RFC 9112 3: 8000
					   at least); longer: 414 */
#define HTTP_FIELDS_MAX		8192	/* header section; larger: 431 */
#define HTTP_REQ_NS		5000000000ull	/* to receive a request */
#define HTTP_SEND_NS		10000000000ull	/* to send its response */

/* A request the handler answers: GET or HEAD of an origin-form path. */
struct http_req {
	const char *path;	/* without the query */
	const char *query;	/* after '?', without it; "" when none */
	bool head;		/* HEAD: the body is not sent */
	bool openmetrics;	/* Accept names application/openmetrics-text */
};

struct http_resp {
	int status;		/* 200, 404, 500 */
	const char *type;	/* Content-Type */
	const char *body;	/* copied: valid during the call only */
	size_t len;
};

typedef void (*http_handler_fn)(void *ctx, const struct http_req *req,
				struct http_resp *resp);

/* What the server did since it started. */
struct http_stats {
	__u64 accepted;
	__u64 answered;		/* responses sent whole */
	__u64 rejected;		/* of those, 4xx/5xx for a malformed request */
	__u64 timed_out;	/* closed at their deadline */
	__u64 evicted;		/* closed for a new one (HTTP_CONN_MAX) */
	size_t open;		/* connections open now */
};

struct http_server;

/* A server on the listening socket @lfd (made non-blocking). NULL: ENOMEM. */
struct http_server *http_server_new(int lfd, http_handler_fn fn, void *ctx);

/*
 * Wait at most @timeout_ns for the sockets, then do what can be done
 * without blocking: accept, read, answer, send, close what is done or past
 * its deadline. Returns early on a signal.
 */
void http_server_step(struct http_server *s, __u64 timeout_ns);

void http_server_stats(const struct http_server *s, struct http_stats *st);

/* Close every connection (not the listening socket) and free @s. */
void http_server_free(struct http_server *s);

#endif /* _STEPTIME_TOOLS_HTTP_H */

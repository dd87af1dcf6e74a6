// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The exporter's HTTP server (http.h). Every socket is non-blocking and
 * one poll() waits for all of them, so a client costs the others nothing
 * however it behaves. A connection goes READ (its request, within
 * HTTP_REQ_NS of the accept) -> WRITE (the response, within HTTP_SEND_NS)
 * -> LINGER (what the client still sends is read and dropped for a
 * second, so that closing does not reset the connection before the client
 * has read the response: an early 414 or 431) -> closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <steptime/util.h>

#include "http.h"
#include "cli.h"
#include "snapshot.h"

#define HTTP_TARGET_MAX	8000	/* request-target; longer: 414 */
#define HTTP_LINGER_NS	1000000000ull
#define HTTP_ACCEPTS	64	/* accepted per step: the rest waits one */
/* An empty line, the request line and the header section, with CRLFs. */
#define REQ_MAX		(2 + HTTP_LINE_MAX + 2 + HTTP_FIELDS_MAX + 2)

enum conn_state { CONN_READ, CONN_WRITE, CONN_LINGER };

struct conn {
	int fd;
	enum conn_state state;
	__u64 born;		/* accepted: the oldest goes first */
	__u64 deadline;
	char *out;		/* the response */
	bool out_static;	/* not malloc'd */
	size_t out_len, out_off;
	size_t got;
	char req[REQ_MAX + 1];
};

struct http_server {
	int lfd;
	http_handler_fn fn;
	void *ctx;
	struct conn *conn[HTTP_CONN_MAX];
	size_t n;
	struct pollfd pfd[HTTP_CONN_MAX + 1];
	struct http_stats st;
};

/* ---- parsing (RFC 9112) ------------------------------------------------- */

/* A request line's parts, pointers into the request buffer. */
struct req_parts {
	const char *method;
	size_t method_len;
	char *target;
	size_t target_len;
	int minor;
	unsigned int hosts;
	bool openmetrics;
};

/* RFC 9110 5.6.2: a token's characters. */
static bool tchar(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A visible character, as a request-target is made of. */
static bool vchar(char c)
{
	return c > ' ' && c < 0x7f;
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The request line at @p, @len bytes without its line end; @complete when
 * its LF came. Return: 0, -EAGAIN for more, or the status to answer.
 */
static int request_line(char *p, size_t len, bool complete,
			struct req_parts *r)
{
	size_t m = 0, t, v;

	if (!complete && len == 1 && p[0] == '\r')
		return -EAGAIN;		/* a CRLF coming */
	while (m < len && tchar(p[m]))
		m++;
	if (m == len)
		return !complete && len <= HTTP_LINE_MAX ? -EAGAIN : 400;
	if (!m || p[m] != ' ')
		return 400;
	r->method = p;
	r->method_len = m;
	for (t = m + 1; t < len && vchar(p[t]); t++)
		;
	if (t - m - 1 > HTTP_TARGET_MAX)
		return 414;
	if (!complete)
		return len > HTTP_LINE_MAX ? 400 : -EAGAIN;
	/* No target, or no version (HTTP/0.9's "GET /"): not HTTP/1.x. */
	if (t == m + 1 || t == len || p[t] != ' ')
		return 400;
	r->target = p + m + 1;
	r->target_len = t - m - 1;
	v = t + 1;
	if (len - v != 8 || memcmp(p + v, "HTTP/", 5) || !digit(p[v + 5]) ||
	    p[v + 6] != '.' || !digit(p[v + 7]))
		return 400;
	/*
	 * RFC 9110 2.5: another major version is refused (505); a later
	 * minor one of HTTP/1 is served as HTTP/1.1.
	 */
	if (p[v + 5] != '1')
		return 505;
	r->minor = p[v + 7] - '0';
	return 0;
}

/* A field line: "name:value", the name a token right before the colon. */
static int field_line(const char *p, size_t len, struct req_parts *r)
{
	size_t n = 0, i;

	while (n < len && tchar(p[n]))
		n++;
	/* Also whitespace before the colon and obs-fold: RFC 9112 5.1, 5.2. */
	if (!n || n == len || p[n] != ':')
		return 400;
	for (i = n + 1; i < len; i++)
		if (p[i] == '\r' || p[i] == '\0')
			return 400;
	if (n == 4 && !strncasecmp(p, "host", 4))
		r->hosts++;
	else if (n == 6 && !strncasecmp(p, "accept", 6) &&
		 memmem(p + n + 1, len - n - 1, "application/openmetrics-text", 28))
		r->openmetrics = true;
	return 0;
}

/* The methods RFC 9110 defines: 405 for them, 501 for others. */
static bool method_known(const char *m, size_t len)
{
	static const char *const known[] = { "POST", "PUT", "DELETE",
		"CONNECT", "OPTIONS", "TRACE", "PATCH", NULL };
	const char *const *k;

	for (k = known; *k; k++)
		if (strlen(*k) == len && !memcmp(*k, m, len))
			return true;
	return false;
}

/*
 * The path of an origin-form or absolute-form target (RFC 9112 3.2),
 * NUL-terminated in place, without query or fragment; @query its query
 * (without '?', "" when none). NULL: another form.
 */
static const char *target_path(char *t, size_t len, const char **query)
{
	char *auth, *q;

	*query = "";
	t[len] = '\0';
	if (!strncasecmp(t, "http://", 7) || !strncasecmp(t, "https://", 8)) {
		auth = strstr(t, "//") + 2;
		t = auth + strcspn(auth, "/?#");
		if (*t != '/')
			return "/";
	}
	if (*t != '/')
		return NULL;
	t[strcspn(t, "#")] = '\0';
	q = strchr(t, '?');
	if (q) {
		*q = '\0';
		*query = q + 1;
	}
	return t;
}

/* The line end of the line at @p, or NULL while its LF has not come. */
static char *line_of(char *p, const char *end, size_t *len)
{
	char *nl = memchr(p, '\n', (size_t)(end - p));

	*len = (size_t)((nl ? nl : end) - p);
	if (nl && *len && p[*len - 1] == '\r')
		(*len)--;
	return nl;
}

/*
 * The request in @buf[0, @len). Return: 0 with @req filled (a GET or
 * HEAD), -EAGAIN when it is not whole yet, or the status to answer.
 */
static int http_parse(char *buf, size_t len, struct http_req *req)
{
	struct req_parts r = {};
	char *p = buf, *end = buf + len, *nl, *fields;
	size_t ll;
	int err;

	/* RFC 9112 2.2: one empty line before the request line is ignored. */
	if (len && p[0] == '\n')
		p++;
	else if (len > 1 && p[0] == '\r' && p[1] == '\n')
		p += 2;
	nl = line_of(p, end, &ll);
	err = request_line(p, ll, nl != NULL, &r);
	/* Whatever the answer, none has a body for a HEAD. */
	req->head = r.method_len == 4 && !memcmp(r.method, "HEAD", 4);
	if (err)
		return err;
	fields = nl + 1;
	for (p = fields;; p = nl + 1) {
		nl = line_of(p, end, &ll);
		if ((size_t)(p + ll - fields) > HTTP_FIELDS_MAX)
			return 431;
		if (!nl)
			return -EAGAIN;
		if (!ll)
			break;
		err = field_line(p, ll, &r);
		if (err)
			return err;
	}
	/* RFC 9112 3.2: one Host in HTTP/1.1, at most one in HTTP/1.0. */
	if (r.hosts > 1 || (r.minor && !r.hosts))
		return 400;
	if (!req->head && (r.method_len != 3 || memcmp(r.method, "GET", 3)))
		return method_known(r.method, r.method_len) ? 405 : 501;
	req->path = target_path(r.target, r.target_len, &req->query);
	req->openmetrics = r.openmetrics;
	return req->path ? 0 : 400;
}

/* ---- connections -------------------------------------------------------- */

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 505: return "HTTP Version Not Supported";
	default: return "Internal Server Error";
	}
}

/* Send what the socket takes. Return: false to close the connection. */
static bool conn_write(struct http_server *s, struct conn *c)
{
	ssize_t n;

	while (c->out_off < c->out_len) {
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN;
		c->out_off += (size_t)n;
	}
	s->st.answered++;
	if (!c->out_static)
		free(c->out);
	c->out = NULL;
	shutdown(c->fd, SHUT_WR);
	c->state = CONN_LINGER;
	c->deadline = st_mono_ns() + HTTP_LINGER_NS;
	return true;
}

/*
 * Answer @status with @body (@len bytes; not sent for HEAD), the
 * connection closed afterwards. Return: false to close it now.
 */
static bool conn_respond(struct http_server *s, struct conn *c, int status,
			 const char *type, const char *body, size_t len,
			 bool head)
{
	static const char oom[] = "HTTP/1.1 500 Internal Server Error\r\n"
		"Content-Length: 0\r\nConnection: close\r\n\r\n";
	char hdr[320];
	int n;

	n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
		     "Content-Length: %zu\r\n%sConnection: close\r\n\r\n",
		     status, reason(status), type, len,
		     status == 405 || status == 501 ? "Allow: GET, HEAD\r\n" : "");
	if (head)
		len = 0;
	c->out = malloc((size_t)n + len);
	c->out_static = !c->out;
	if (c->out_static) {
		/* Answered all the same; the next request may find memory. */
		c->out = (char *)oom;
		c->out_len = sizeof(oom) - 1;
	} else {
		memcpy(c->out, hdr, (size_t)n);
		if (len)
			memcpy(c->out + n, body, len);
		c->out_len = (size_t)n + len;
	}
	c->out_off = 0;
	c->state = CONN_WRITE;
	c->deadline = st_mono_ns() + HTTP_SEND_NS;
	return conn_write(s, c);
}

/* A malformed or refused request: its status, as text. */
static bool conn_reject(struct http_server *s, struct conn *c, int status,
			bool head)
{
	char msg[64];

	s->st.rejected++;
	snprintf(msg, sizeof(msg), "%d %s\n", status, reason(status));
	return conn_respond(s, c, status, "text/plain; charset=utf-8", msg,
			    strlen(msg), head);
}

/* Read the request; answer it once whole. Return: false to close. */
static bool conn_read(struct http_server *s, struct conn *c)
{
	struct http_req req = {};
	struct http_resp resp = {};
	ssize_t n;
	int st;

	do {
		n = recv(c->fd, c->req + c->got, REQ_MAX - c->got, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN;
	c->got += (size_t)n;
	c->req[c->got] = '\0';
	st = http_parse(c->req, c->got, &req);
	if (st == -EAGAIN && (n == 0 || c->got == REQ_MAX)) {
		if (!c->got)
			return false;	/* connected, sent nothing, left */
		st = n ? 431 : 400;	/* cut short: half a request */
	}
	if (st == -EAGAIN)
		return true;
	if (st)
		return conn_reject(s, c, st, req.head);
	s->fn(s->ctx, &req, &resp);
	return conn_respond(s, c, resp.status, resp.type, resp.body, resp.len,
			    req.head);
}

/* Read and drop until the client closes. Return: false to close. */
static bool conn_drain(struct conn *c)
{
	ssize_t n;

	do {
		n = recv(c->fd, c->req, REQ_MAX, 0);
	} while (n > 0 || (n < 0 && errno == EINTR));
	return n < 0 && errno == EAGAIN;
}

static bool conn_io(struct http_server *s, struct conn *c)
{
	switch (c->state) {
	case CONN_READ:
		return conn_read(s, c);
	case CONN_WRITE:
		return conn_write(s, c);
	default:
		return conn_drain(c);
	}
}

/* Past its deadline: a request begun gets a 408. Return: false to close. */
static bool conn_expire(struct http_server *s, struct conn *c)
{
	if (c->state == CONN_LINGER)
		return false;
	s->st.timed_out++;
	if (c->state == CONN_WRITE || !c->got)
		return false;
	return conn_reject(s, c, 408, false);
}

static void conn_close(struct http_server *s, size_t i)
{
	struct conn *c = s->conn[i];

	close(c->fd);
	if (!c->out_static)
		free(c->out);
	free(c);
	s->conn[i] = s->conn[--s->n];
}

/* Room for a new connection: the oldest goes. */
static void conn_evict(struct http_server *s)
{
	size_t i, old = 0;

	for (i = 1; i < s->n; i++)
		if (s->conn[i]->born < s->conn[old]->born)
			old = i;
	s->st.evicted++;
	conn_close(s, old);
}

static void accept_some(struct http_server *s)
{
	struct conn *c;
	int i, fd;

	for (i = 0; i < HTTP_ACCEPTS; i++) {
		fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE) && s->n) {
			conn_evict(s);	/* out of descriptors: same rule */
			continue;
		}
		if (fd < 0)
			return;
		if (s->n == HTTP_CONN_MAX)
			conn_evict(s);
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		memset(c, 0, offsetof(struct conn, req));
		c->fd = fd;
		c->born = st_mono_ns();
		c->deadline = c->born + HTTP_REQ_NS;
		s->conn[s->n++] = c;
		s->st.accepted++;
		/* Its request has usually come with it. */
		if (!conn_read(s, c))
			conn_close(s, s->n - 1);
	}
}

void http_server_step(struct http_server *s, __u64 timeout_ns)
{
	__u64 now = st_mono_ns(), wake = now + timeout_ns;
	size_t i, n = s->n;

	s->pfd[0] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
	for (i = 0; i < n; i++) {
		s->pfd[i + 1] = (struct pollfd){ .fd = s->conn[i]->fd,
			.events = s->conn[i]->state == CONN_WRITE ? POLLOUT : POLLIN };
		if (s->conn[i]->deadline < wake)
			wake = s->conn[i]->deadline;
	}
	if (poll(s->pfd, n + 1, wake > now ? (int)((wake - now + 999999) / 1000000) : 0) < 0)
		return;
	/* Backwards: conn_close() moves the last connection to @i. */
	for (i = n; i-- > 0;)
		if (s->pfd[i + 1].revents && !conn_io(s, s->conn[i]))
			conn_close(s, i);
	now = st_mono_ns();
	for (i = s->n; i-- > 0;)
		if (now >= s->conn[i]->deadline && !conn_expire(s, s->conn[i]))
			conn_close(s, i);
	if (s->pfd[0].revents & POLLIN)
		accept_some(s);
}

struct http_server *http_server_new(int lfd, http_handler_fn fn, void *ctx)
{
	struct http_server *s;
	int fl = fcntl(lfd, F_GETFL);

	if (fl < 0 || fcntl(lfd, F_SETFL, fl | O_NONBLOCK))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->lfd = lfd;
	s->fn = fn;
	s->ctx = ctx;
	return s;
}

void http_server_stats(const struct http_server *s, struct http_stats *st)
{
	*st = s->st;
	st->open = s->n;
}

void http_server_free(struct http_server *s)
{
	if (!s)
		return;
	while (s->n)
		conn_close(s, s->n - 1);
	free(s);
}

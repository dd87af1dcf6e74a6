// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Phases: ranges and marks inside the step that is open (see lib/phase_write.h).
 *
 * The step marks tell this file which step is open (st_tx_step(), a store
 * at START; at END the step's phases, if it has any, are written out). A
 * range adds its host time to the phase named by its message, in the step
 * open when it ends. A range on a stream also records two timeline events
 * (aclrtCreateEventWithFlag(ACL_EVENT_TIME_LINE) + aclrtRecordEvent,
 * looked up at run time like every CANN call of the app library): their
 * elapsed time is the range's device time. Events are read without
 * waiting when the step ends; those not complete yet are waited for at the
 * end of the next step (or at aclprofStop/Finalize, or exit), so the step's
 * record is written one step late instead of stalling the host.
 *
 * Phase file: <dir>/<euid>/<pidns>.<pid>.phases, <dir> STEPTIME_PHASE_DIR
 * or /dev/shm/steptime, one line per phase of a finished step:
 *	index_id count host_ns device_ns device_count name
 * (name percent-escaped). Written with one write(2) per step that has
 * phases; steps without ranges or marks cost nothing. It holds the last
 * FILE_STEPS to 2 * FILE_STEPS steps with phases: a reader can only ask
 * for the steps whose records the BPF side still keeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <steptime/steptime.h>
#include <steptime/util.h>
#include "cann.h"
#include "phase_write.h"

#define PHASES		STEPTIME_PHASES_MAX	/* distinct names per step */
#define OTHER		PHASES			/* the rest: "(other)" */
#define PENDING		256			/* ranges awaiting device time */
#define LOG_MAX		(1u << 16)		/* session records kept */
#define FILE_STEPS	STEPTIME_PROC_STEPS	/* steps a phase file keeps */
#define ACL_EVENT_TIME_LINE	0x8u
#define ACL_EVENT_RECORDED_STATUS_COMPLETE	1

struct step_phases {
	__u64 index_id;			/* 0: none */
	__u32 n;
	__u32 waiting;			/* ranges whose device time is unread */
	struct steptime_phase ph[STEPTIME_PHASES_PER_STEP];
};

struct pending {
	void *ev_start, *ev_end;
	__u64 index_id;			/* step the range belongs to, or 0 */
	int phase;			/* index in that step, or -1 */
	__u32 rec;			/* session record + 1, or 0 */
	__u32 session;			/* session of that record */
};

struct tx_rec {
	__u64 start_ns, end_ns;
	__u64 dev_start, dev_end;	/* runtime timestamps; 0: none */
	__u32 tid;
	__u8 type;
	char domain[32];
	char msg[ST_TX_MSG];
};

static struct {
	pthread_mutex_t lock;
	__u64 open;			/* index id of the open step, or 0 */
	struct step_phases cur, late;	/* late: waits for device time */
	struct pending pend[PENDING];
	__u32 npend;
	int fd;				/* phase file, -1: not open */
	int dfd;			/* the directory it is in */
	int fd_pid;			/* process that opened it */
	bool fd_failed;
	__u64 size;			/* bytes in the file */
	__u64 start[FILE_STEPS];	/* where its last steps begin */
	__u32 nsteps;			/* steps in the file */
	mode_t fmode;			/* its mode and group (phase_access()) */
	gid_t fgid;
	bool atexit_set;
	/* session log */
	bool logging;
	__u32 session;
	__u32 device_id;
	struct tx_rec *log;
	__u32 nlog, cap;
	__u64 log_dropped;
} tx = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .dfd = -1 };

/* A timeline event recorded on @stream now, or NULL (no runtime, error). */
static void *event_on(void *stream)
{
	void *ev = NULL;

	if (!stream)
		return NULL;
	st_cann_lookup();
	if (!st_cann.range_events ||
	    st_cann.ev_create(&ev, ACL_EVENT_TIME_LINE) || !ev)
		return NULL;
	if (st_cann.ev_record(ev, stream)) {
		st_cann.ev_destroy(ev);
		return NULL;
	}
	return ev;
}

static void event_drop(void *ev)
{
	if (ev)
		st_cann.ev_destroy(ev);
}

/* ---- phase tables ------------------------------------------------------ */

static struct step_phases *table_of(__u64 index_id)
{
	if (!index_id)
		return NULL;
	if (tx.cur.index_id == index_id)
		return &tx.cur;
	if (tx.late.index_id == index_id)
		return &tx.late;
	return NULL;
}

static int phase_get(struct step_phases *t, const char *name)
{
	__u32 i;

	for (i = 0; i < t->n; i++)
		if (!strncmp(t->ph[i].name, name, sizeof(t->ph[i].name)))
			return (int)i;
	if (t->n > PHASES)
		return OTHER;
	if (t->n == PHASES) {
		/* Full: the rest is counted under one name, never lost. */
		memset(&t->ph[OTHER], 0, sizeof(t->ph[OTHER]));
		snprintf(t->ph[OTHER].name, sizeof(t->ph[OTHER].name), "(other)");
		t->n++;
		return OTHER;
	}
	i = t->n++;
	memset(&t->ph[i], 0, sizeof(t->ph[i]));
	memcpy(t->ph[i].name, name,
	       strnlen(name, sizeof(t->ph[i].name) - 1));
	return (int)i;
}

static void name_escape(char *out, size_t len, const char *name)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *name && o + 4 < len; name++) {
		unsigned char c = (unsigned char)*name;

		if (c <= ' ' || c == '%' || c >= 0x7f) {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
}

/* Where /dev/shm is missing (minimal containers, initramfs): /tmp. */
#define PHASE_DIR_FALLBACK	"/tmp/steptime"

const char *st_phase_dir(void)
{
	const char *dir = getenv("STEPTIME_PHASE_DIR");
	struct stat st;

	if (dir && *dir)
		return dir;
	if (stat("/dev/shm", &st) || !S_ISDIR(st.st_mode))
		return PHASE_DIR_FALLBACK;
	return STEPTIME_PHASE_DIR;
}

/*
 * Directory @name under @at (made with @mode if missing), opened without
 * following a symbolic link. @own: this user's, and writable by nobody
 * else; else shared: writable by all only if sticky (like /tmp: an entry
 * only its owner removes or renames).
 * Return: its fd, or -errno (-EPERM: not a directory we may trust).
 */
static int dir_open(int at, const char *name, mode_t mode, bool own)
{
	struct stat st;
	int fd;

	if (mkdirat(at, name, mode) == 0)
		fchmodat(at, name, mode, 0);	/* past the umask */
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) ||
	    (own ? st.st_uid != geteuid() || (st.st_mode & 022) :
		   (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/*
 * Who may read this user's phase files: whom the maps' mode lets read the
 * steps (the pinned "steps" map's read bits, and its group), else the
 * user alone. Return: the files' mode; *@dmode, their directory's; *@gid,
 * the maps' group when it may read, else -1.
 */
static mode_t phase_access(mode_t *dmode, gid_t *gid)
{
	char path[4096];
	struct stat st;
	mode_t m = 0600;

	*gid = (gid_t)-1;
	snprintf(path, sizeof(path), "%s/steps", steptime__pin_dir(NULL));
	if (stat(path, &st) == 0) {
		m |= st.st_mode & 0044;
		if (st.st_mode & 0040)
			*gid = st.st_gid;
	}
	*dmode = 0700 | (m & 0040 ? 0050 : 0) | (m & 0004 ? 0005 : 0);
	return m;
}

/*
 * @fd (the directory or a file) given @mode and group @gid: group access
 * only when the group is the maps' (a user outside it cannot chown to it).
 */
static void phase_chmod(int fd, mode_t mode, gid_t gid)
{
	if (gid != (gid_t)-1 && fchown(fd, (uid_t)-1, gid))
		mode &= ~(mode_t)0070;
	fchmod(fd, mode);
}

/*
 * Open this process's phase file, emptied: <dir>/<euid>/<name>, readable
 * as the maps are (phase_access()), by its owner alone when unloaded. Each user
 * writes in a directory of its own, which nobody else can write to, so
 * that neither a file another user planted nor one that an earlier
 * process of the same pid left behind stands in the way, and no symbolic
 * link on the path is followed: a write can never be redirected to another
 * file. Readers also check who owns it (lib/phase_read.c).
 */
static int phase_open(const char *name)
{
	char uid[16];
	mode_t dmode;
	int top, fd;

	tx.fmode = phase_access(&dmode, &tx.fgid);
	top = dir_open(AT_FDCWD, st_phase_dir(), 01777, false);
	if (top < 0)
		return top;
	snprintf(uid, sizeof(uid), "%u", (unsigned int)geteuid());
	tx.dfd = dir_open(top, uid, dmode, true);
	close(top);
	if (tx.dfd < 0)
		return tx.dfd;
	/* Made by an earlier process, under other maps' mode (or 0755). */
	phase_chmod(tx.dfd, dmode, tx.fgid);
	fd = openat(tx.dfd, name, O_RDWR | O_CREAT | O_TRUNC | O_APPEND |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		fd = -errno;
		close(tx.dfd);	/* not kept open for a file never written */
		tx.dfd = -1;
		return fd;
	}
	phase_chmod(fd, tx.fmode, tx.fgid);
	return fd;
}

static void phase_name(char *buf, size_t len)
{
	snprintf(buf, len, "%u.%d.phases", st_pidns_ino(), (int)getpid());
}

/* Under tx.lock: the phase file, opened at this process's first write. */
static int phase_fd(void)
{
	char name[64];
	int pid = (int)getpid(), fd;

	if (tx.fd >= 0 && tx.fd_pid == pid)
		return tx.fd;
	if (tx.fd >= 0)
		close(tx.fd);		/* a forked child writes its own */
	if (tx.dfd >= 0)
		close(tx.dfd);
	tx.fd = tx.dfd = -1;
	tx.size = 0;
	tx.nsteps = 0;
	if (tx.fd_failed && tx.fd_pid == pid)
		return -1;
	tx.fd_pid = pid;
	phase_name(name, sizeof(name));
	fd = phase_open(name);
	if (fd < 0) {
		tx.fd_failed = true;
		st_warn("steptime: cannot write phases to %s/%u/%s: %s\n",
			st_phase_dir(), (unsigned int)geteuid(), name,
			strerror(-fd));
		return -1;
	}
	tx.fd = fd;
	return fd;
}

/*
 * Under tx.lock: the file's last FILE_STEPS steps go to a new file that
 * takes its name (a reader opens either, whole). Where that fails, the
 * file starts empty: bounded either way.
 */
static void phase_rotate(void)
{
	__u64 off = tx.start[tx.nsteps % FILE_STEPS], len = tx.size - off;
	char name[64], tmp[72];
	char *buf = malloc(len + 1);
	int fd = -1;
	__u32 i;

	phase_name(name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.new", name);
	if (buf && pread(tx.fd, buf, len, (off_t)off) == (ssize_t)len)
		fd = openat(tx.dfd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_APPEND |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		phase_chmod(fd, tx.fmode, tx.fgid);
	if (fd >= 0 && (write(fd, buf, len) != (ssize_t)len ||
			renameat(tx.dfd, tmp, tx.dfd, name))) {
		unlinkat(tx.dfd, tmp, 0);
		close(fd);
		fd = -1;
	}
	free(buf);
	if (fd < 0) {
		st_warn("steptime: phases of steps before %u dropped: %m\n",
			tx.nsteps);
		if (ftruncate(tx.fd, 0) == 0) {
			tx.size = 0;
			tx.nsteps = 0;
		}
		return;
	}
	close(tx.fd);
	tx.fd = fd;
	for (i = 0; i < FILE_STEPS; i++)
		tx.start[i] -= off;
	tx.size = len;
	tx.nsteps = FILE_STEPS;
}

/* Under tx.lock: append one step's phases, @len bytes at @buf. */
static void phase_append(const char *buf, size_t len)
{
	if (phase_fd() < 0)
		return;
	if (tx.nsteps >= 2 * FILE_STEPS)
		phase_rotate();
	tx.start[tx.nsteps % FILE_STEPS] = tx.size;
	/* One write: a reader sees a step's phases whole or not at all. */
	if (write(tx.fd, buf, len) != (ssize_t)len) {
		st_warn("steptime: writing phases: %m\n");
		return;
	}
	tx.size += len;
	tx.nsteps++;
}

static void table_write(struct step_phases *t)
{
	char buf[STEPTIME_PHASES_PER_STEP * (3 * STEPTIME_PHASE_NAME + 5 * 24)];
	char name[3 * STEPTIME_PHASE_NAME];
	size_t o = 0;
	__u32 i;

	if (!t->index_id || !t->n)
		goto out;
	for (i = 0; i < t->n; i++) {
		const struct steptime_phase *p = &t->ph[i];

		name_escape(name, sizeof(name), p->name);
		o += (size_t)snprintf(buf + o, sizeof(buf) - o,
				      "%llu %llu %llu %llu %llu %s\n",
				      (unsigned long long)t->index_id,
				      (unsigned long long)p->count,
				      (unsigned long long)p->host_ns,
				      (unsigned long long)p->device_ns,
				      (unsigned long long)p->device_count, name);
		if (o >= sizeof(buf))
			o = sizeof(buf) - 1;
	}
	phase_append(buf, o);
out:
	memset(t, 0, sizeof(*t));
}

/* ---- device time ------------------------------------------------------- */

static void pend_resolve(struct pending *p)
{
	struct step_phases *t = table_of(p->index_id);
	float ms = 0;

	if (!st_cann.ev_elapsed(&ms, p->ev_start, p->ev_end) && t && p->phase >= 0) {
		t->ph[p->phase].device_ns += (__u64)((double)ms * 1e6 + 0.5);
		t->ph[p->phase].device_count++;
	}
	if (p->rec && p->session == tx.session && p->rec <= tx.nlog && st_cann.ev_ts) {
		struct tx_rec *r = &tx.log[p->rec - 1];

		if (st_cann.ev_ts(p->ev_start, &r->dev_start) ||
		    st_cann.ev_ts(p->ev_end, &r->dev_end))
			r->dev_start = r->dev_end = 0;
	}
	if (t)
		t->waiting--;
	event_drop(p->ev_start);
	event_drop(p->ev_end);
}

#define ALL_STEPS	(~0ull)

/*
 * Read the device time of pending ranges of step @index_id (0: ranges
 * outside steps; ALL_STEPS: all), waiting for their events when @wait,
 * else only those complete.
 */
static void pend_collect(__u64 index_id, bool wait)
{
	__u32 i = 0;
	int status;

	while (i < tx.npend) {
		struct pending *p = &tx.pend[i];

		if (index_id != ALL_STEPS && p->index_id != index_id) {
			i++;
			continue;
		}
		if (wait) {
			st_cann.ev_sync(p->ev_end);
		} else if (st_cann.ev_query(p->ev_end, &status) ||
			   status != ACL_EVENT_RECORDED_STATUS_COMPLETE) {
			i++;
			continue;
		}
		pend_resolve(p);
		*p = tx.pend[--tx.npend];
	}
}

/* Under tx.lock: everything still open is written out (stop, exit). */
static void tx_flush_all(void)
{
	pend_collect(ALL_STEPS, true);
	table_write(&tx.late);
}

static void tx_atexit(void)
{
	pthread_mutex_lock(&tx.lock);
	tx_flush_all();
	pthread_mutex_unlock(&tx.lock);
}

/* ---- steps -------------------------------------------------------------- */

static void step_end(__u64 index_id)
{
	pthread_mutex_lock(&tx.lock);
	if (tx.cur.index_id != index_id)
		goto out;
	/* The previous step's device times are due now. */
	if (tx.late.index_id) {
		pend_collect(tx.late.index_id, true);
		table_write(&tx.late);
	}
	pend_collect(0, false);
	if (tx.cur.waiting)
		pend_collect(index_id, false);
	if (tx.cur.waiting) {
		tx.late = tx.cur;
		memset(&tx.cur, 0, sizeof(tx.cur));
	} else {
		table_write(&tx.cur);
	}
out:
	pthread_mutex_unlock(&tx.lock);
}

void st_tx_step(__u64 index_id, unsigned int tag)
{
	if (tag == STEPTIME_TAG_START) {
		__atomic_store_n(&tx.open, index_id, __ATOMIC_RELAXED);
		return;
	}
	if (__atomic_load_n(&tx.open, __ATOMIC_RELAXED) != index_id)
		return;
	__atomic_store_n(&tx.open, 0, __ATOMIC_RELAXED);
	/* Only steps that had ranges or marks take the lock. */
	if (__atomic_load_n(&tx.cur.index_id, __ATOMIC_RELAXED) == index_id)
		step_end(index_id);
}

/* Under tx.lock: the phase @name of the open step, or -1. */
static int open_phase(const char *name)
{
	__u64 open = __atomic_load_n(&tx.open, __ATOMIC_RELAXED);

	if (!open)
		return -1;
	if (tx.cur.index_id != open) {
		if (tx.cur.index_id)	/* END not seen (another API's step) */
			table_write(&tx.cur);
		tx.cur.index_id = open;
		if (!tx.atexit_set) {
			atexit(tx_atexit);
			tx.atexit_set = true;
		}
	}
	return phase_get(&tx.cur, name);
}

/* ---- session log -------------------------------------------------------- */

static __u32 log_add(const struct st_tx_range *r, __u64 end, enum st_tx_event type)
{
	struct tx_rec *rec;

	if (!tx.logging)
		return 0;
	if (tx.nlog == tx.cap) {
		__u32 cap = tx.cap ? tx.cap * 2 : 256;
		void *p;

		if (cap > LOG_MAX || !(p = realloc(tx.log, cap * sizeof(*tx.log)))) {
			tx.log_dropped++;
			return 0;
		}
		tx.log = p;
		tx.cap = cap;
	}
	rec = &tx.log[tx.nlog++];
	memset(rec, 0, sizeof(*rec));
	rec->start_ns = r->start_ns;
	rec->end_ns = end;
	rec->tid = (__u32)syscall(SYS_gettid);
	rec->type = (__u8)type;
	memcpy(rec->domain, r->domain, sizeof(rec->domain));
	memcpy(rec->msg, r->msg, sizeof(rec->msg));
	return tx.nlog;
}

void st_tx_session_start(__u32 device_id)
{
	pthread_mutex_lock(&tx.lock);
	tx.logging = true;
	tx.session++;
	tx.device_id = device_id;
	tx.nlog = 0;
	tx.log_dropped = 0;
	pthread_mutex_unlock(&tx.lock);
}

static const char *event_name(__u8 type)
{
	static const char *const names[] = {
		[ST_TX_MARKER] = "marker",
		[ST_TX_PUSH_POP] = "push/pop",
		[ST_TX_START_END] = "start/end",
		[ST_TX_MARKER_EX] = "marker_ex",
	};

	return type < 4 ? names[type] : "marker";
}

/* A CSV cell: quoted, quotes doubled. */
static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int st_tx_session_write(FILE *f)
{
	__u32 i;
	int pid = (int)getpid();

	pthread_mutex_lock(&tx.lock);
	tx_flush_all();
	tx.logging = false;
	if (f) {
		fputs("Device_id,pid,tid,category,event_type,payload_type,"
		      "payload_value,Start_time(us),End_time(us),message_type,"
		      "message,domain,Device Start_time(us),Device End_time(us)\n",
		      f);
		for (i = 0; i < tx.nlog; i++) {
			const struct tx_rec *r = &tx.log[i];

			fprintf(f, "%u,%d,%u,0,%s,0,0,%.3f,%.3f,0,", tx.device_id,
				pid, r->tid, event_name(r->type),
				r->start_ns / 1e3, r->end_ns / 1e3);
			csv_str(f, r->msg);
			fputc(',', f);
			csv_str(f, r->domain);
			if (r->dev_start || r->dev_end)
				fprintf(f, ",%llu,%llu\n",
					(unsigned long long)r->dev_start,
					(unsigned long long)r->dev_end);
			else
				fputs(",,\n", f);
		}
		if (tx.log_dropped)
			st_warn("steptime: %llu msproftx records past %u not "
				"written\n", (unsigned long long)tx.log_dropped,
				LOG_MAX);
	}
	tx.nlog = 0;
	pthread_mutex_unlock(&tx.lock);
	return f && ferror(f) ? -EIO : 0;
}

/* ---- ranges and marks --------------------------------------------------- */

void st_tx_begin(struct st_tx_range *r, void *stream)
{
	r->stream = stream;
	r->ev_start = event_on(stream);
	r->start_ns = st_mono_ns();
}

static void range_done(struct st_tx_range *r, __u64 end, enum st_tx_event type,
		       bool count)
{
	void *ev_end = r->ev_start ? event_on(r->stream) : NULL;
	int ph;
	__u32 rec;

	pthread_mutex_lock(&tx.lock);
	ph = r->no_phase ? -1 : open_phase(r->msg);
	if (ph >= 0) {
		tx.cur.ph[ph].count += count;
		tx.cur.ph[ph].host_ns += end - r->start_ns;
	}
	rec = log_add(r, end, type);
	if (ev_end && tx.npend < PENDING) {
		struct pending *p = &tx.pend[tx.npend++];

		p->ev_start = r->ev_start;
		p->ev_end = ev_end;
		p->index_id = ph >= 0 ? tx.cur.index_id : 0;
		p->phase = ph;
		p->rec = rec;
		p->session = tx.session;
		if (ph >= 0)
			tx.cur.waiting++;
	} else {
		event_drop(r->ev_start);
		event_drop(ev_end);
	}
	r->ev_start = NULL;
	pthread_mutex_unlock(&tx.lock);
}

void st_tx_end(struct st_tx_range *r, enum st_tx_event type)
{
	range_done(r, st_mono_ns(), type, true);
}

void st_tx_cancel(struct st_tx_range *r)
{
	if (r->ev_start) {
		event_drop(r->ev_start);
		r->ev_start = NULL;
	}
}

void st_tx_mark(const char *msg, const char *domain, void *stream,
		enum st_tx_event type)
{
	struct st_tx_range r;

	snprintf(r.msg, sizeof(r.msg), "%s", msg);
	snprintf(r.domain, sizeof(r.domain), "%s", domain ? domain : "default");
	r.stream = NULL;	/* an instant has no device duration */
	r.no_phase = false;
	r.ev_start = NULL;
	r.start_ns = st_mono_ns();
	range_done(&r, r.start_ns, type, true);
}

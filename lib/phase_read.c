// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reading a step's phases back from its process's phase file (format in
 * lib/phase_write.c). Files read are kept, parsed and sorted by step.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <steptime/steptime.h>
#include <steptime/util.h>
#include "st_stat.h"
#include "phase_write.h"

struct phase_rec {
	__u64 index_id;
	__u32 order;		/* line number: first-seen order */
	struct steptime_phase ph;
};

/*
 * One entry per phase file read, so that a reader walking the steps of
 * several processes in time order (interleaved) parses each file once.
 * Within one reader snapshot (st_phases_snapshot(), called by
 * steptime_reader__open()) a file is checked (stat) once: a step's phases
 * are those on file when its process's file was first asked for after the
 * snapshot. Without a snapshot every call checks its file.
 */
#define FILES		64

struct phase_file {
	char *path;		/* NULL: free entry */
	__u32 pidns_ino, tgid, uid;	/* whose file */
	struct stat st;
	int err;		/* 0, or -errno of the last stat/open */
	__u64 checked;		/* snapshot it was checked in; 0: none */
	__u64 used;		/* for eviction */
	struct phase_rec *recs;
	size_t n;
};

static struct {
	pthread_mutex_t lock;
	__u64 snapshot, clock;
	__u64 dir_checked;	/* snapshot the directory was chosen in */
	char dir[4000];
	struct phase_file files[FILES];
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

void st_phases_snapshot(void)
{
	pthread_mutex_lock(&cache.lock);
	cache.snapshot++;
	pthread_mutex_unlock(&cache.lock);
}

static int rec_cmp(const void *a, const void *b)
{
	const struct phase_rec *x = a, *y = b;

	if (x->index_id != y->index_id)
		return x->index_id < y->index_id ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static void name_unescape(char *out, size_t len, const char *in)
{
	size_t o = 0;

	for (; *in && o + 1 < len; in++) {
		if (in[0] == '%' && hexval(in[1]) >= 0 && hexval(in[2]) >= 0) {
			out[o++] = (char)(hexval(in[1]) << 4 | hexval(in[2]));
			in += 2;
		} else {
			out[o++] = *in;
		}
	}
	out[o] = '\0';
}

/* Under cache.lock: parse the file open at @fd (closed) into @f. */
static int file_parse(struct phase_file *f, int fd)
{
	struct phase_rec *recs = NULL, *p;
	size_t n = 0, cap = 0;
	char line[512], name[3 * STEPTIME_PHASE_NAME + 1];
	FILE *fp;

	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		return -errno;
	}
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long id, cnt, host, dev, devn;

		if (sscanf(line, "%llu %llu %llu %llu %llu %192s", &id, &cnt,
			   &host, &dev, &devn, name) != 6)
			continue;	/* a torn last line: skipped */
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			p = realloc(recs, cap * sizeof(*recs));
			if (!p) {
				free(recs);
				fclose(fp);
				return -ENOMEM;
			}
			recs = p;
		}
		p = &recs[n];
		memset(p, 0, sizeof(*p));
		p->index_id = id;
		p->order = (__u32)n++;
		p->ph.count = cnt;
		p->ph.host_ns = host;
		p->ph.device_ns = dev;
		p->ph.device_count = devn;
		name_unescape(p->ph.name, sizeof(p->ph.name), name);
	}
	fclose(fp);
	if (n)
		qsort(recs, n, sizeof(*recs), rec_cmp);
	free(f->recs);
	f->recs = recs;
	f->n = n;
	return 0;
}

/* Under cache.lock: @path's entry (the least recently used one if new). */
static struct phase_file *file_get(const char *path)
{
	struct phase_file *f, *lru = &cache.files[0];
	int i;

	for (i = 0; i < FILES; i++) {
		f = &cache.files[i];
		if (f->path && !strcmp(f->path, path))
			return f;
		if (!f->path || (lru->path && f->used < lru->used))
			lru = f;
	}
	f = lru;
	free(f->path);
	free(f->recs);
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	f->err = -ENOENT;
	return f;
}

/*
 * Open @path for reading if it is what its writer (lib/phase_write.c) leaves there:
 * a regular file, not a symbolic link (not followed), with no other name
 * (a hard link to someone's file), owned by @uid, the user of the process
 * whose phases it holds. Not a FIFO planted to stall the reader: opened
 * without waiting. Return: the fd, with its status in @st, or -errno
 * (-EPERM: not a phase file to trust).
 */
static int file_open(const char *path, __u32 uid, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_nlink != 1 ||
	    st->st_uid != uid) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Under cache.lock: @path's entry, of user @uid, read again if it changed. */
static struct phase_file *file_load(const char *path, __u32 uid)
{
	struct phase_file *f = file_get(path);
	struct stat st;
	int fd;

	if (!f)
		return NULL;
	f->used = ++cache.clock;
	if (cache.snapshot && f->checked == cache.snapshot)
		return f;
	f->checked = cache.snapshot;
	fd = file_open(path, uid, &st);
	if (fd < 0) {
		f->err = fd;
		return f;
	}
	if (!f->err && st.st_ino == f->st.st_ino && st.st_dev == f->st.st_dev &&
	    st.st_size == f->st.st_size &&
	    st.st_mtim.tv_sec == f->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == f->st.st_mtim.tv_nsec) {
		close(fd);
		return f;
	}
	f->err = file_parse(f, fd);
	f->st = st;
	return f;
}

/* Under cache.lock: the process's file if already checked in this snapshot. */
static struct phase_file *file_find(__u32 pidns_ino, __u32 tgid, __u32 uid)
{
	struct phase_file *f;
	int i;

	if (!cache.snapshot)
		return NULL;
	for (i = 0; i < FILES; i++) {
		f = &cache.files[i];
		if (f->path && f->checked == cache.snapshot &&
		    f->pidns_ino == pidns_ino && f->tgid == tgid &&
		    f->uid == uid) {
			f->used = ++cache.clock;
			return f;
		}
	}
	return NULL;
}

/* Under cache.lock: the phase directory, chosen once per snapshot. */
static const char *phase_dir(void)
{
	if (!cache.snapshot || cache.dir_checked != cache.snapshot) {
		snprintf(cache.dir, sizeof(cache.dir), "%s", st_phase_dir());
		cache.dir_checked = cache.snapshot;
	}
	return cache.dir;
}

/* Under cache.lock: steptime_phases__get(). */
static int phases_get(const struct steptime_step_stats *s,
		      struct steptime_phase *out, size_t n)
{
	struct phase_file *f;
	char path[4096];
	size_t lo = 0, hi, i;
	int found = 0;

	f = file_find(s->pidns_ino, s->ns_tgid, s->uid);
	if (!f) {
		snprintf(path, sizeof(path), "%s/%u/%u.%u.phases", phase_dir(),
			 s->uid, s->pidns_ino, s->ns_tgid);
		f = file_load(path, s->uid);
	}
	if (f) {
		f->pidns_ino = s->pidns_ino;
		f->tgid = s->ns_tgid;
		f->uid = s->uid;
	}
	if (!f || f->err)
		goto out;
	hi = f->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->recs[mid].index_id < s->index_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < f->n && f->recs[i].index_id == s->index_id; i++) {
		if ((size_t)found < n)
			out[found] = f->recs[i].ph;
		found++;
	}
out:
	return found;
}

int steptime_phases__get(const struct steptime_step_stats *s,
			 struct steptime_phase *out, size_t n)
{
	int found;

	if (!s || (!out && n))
		return -EINVAL;
	pthread_mutex_lock(&cache.lock);
	found = phases_get(s, out, n);
	pthread_mutex_unlock(&cache.lock);
	return found;
}

void st_phases_get_many(const struct steptime_step_stats *const *s, size_t n,
			struct steptime_phase (*out)[STEPTIME_PHASES_PER_STEP],
			int *found)
{
	size_t i;

	pthread_mutex_lock(&cache.lock);
	for (i = 0; i < n; i++)
		found[i] = phases_get(s[i], out[i], STEPTIME_PHASES_PER_STEP);
	pthread_mutex_unlock(&cache.lock);
}

/* ---- removing the files of processes gone ------------------------------ */

struct live {
	__u32 pidns_ino, pid;		/* a process as it sees itself */
};

static int live_cmp(const void *a, const void *b)
{
	const struct live *x = a, *y = b;

	if (x->pidns_ino != y->pidns_ino)
		return x->pidns_ino < y->pidns_ino ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Process @pid of /proc as it sees itself (its last NSpid). Return: 0 or -1. */
static int live_read(const char *pid, struct live *l)
{
	char path[64], line[256], *p;
	struct stat st;
	int found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", pid);
	if (stat(path, &st))
		return -1;
	l->pidns_ino = (__u32)st.st_ino;
	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		p = strrchr(line, '\t');
		if (p)
			found = sscanf(p, "%u", &l->pid) == 1 ? 0 : -1;
		break;
	}
	fclose(f);
	return found;
}

/* Every process /proc shows, sorted. Return: how many, or -errno. */
static long live_all(struct live **out)
{
	struct live *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		if (live_read(e->d_name, &v[n]) == 0)
			n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), live_cmp);
	*out = v;
	return (long)n;
}

/* The initial PID namespace's inode (PROC_PID_INIT_INO). */
#define PIDNS_INIT_INO	0xeffffffcu

/*
 * Whether any process of PID namespace @ino is in @v. From the initial
 * namespace every process is seen; from another, a namespace none of whose
 * processes is seen may be one outside ours, still running: left alone.
 */
static bool ns_seen(__u32 ino, const struct live *v, size_t n)
{
	size_t lo = 0, hi = n;

	if (st_pidns_ino() == PIDNS_INIT_INO)
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].pidns_ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].pidns_ino == ino;
}

/*
 * What a sweep removes: the files of processes @live does not hold; when
 * @keep is set, only those of processes it does not hold either, last
 * written before @before.
 */
struct sweep {
	struct live *live;		/* processes /proc shows, sorted */
	size_t nlive;
	struct live *keep;		/* processes with records left, sorted */
	size_t nkeep;
	time_t before;
};

/* Whether file @name (of user directory @dfd), of process @key, goes. */
static bool sweep_takes(int dfd, const char *name, const struct live *key,
			const struct sweep *sw)
{
	struct stat st;

	if (bsearch(key, sw->live, sw->nlive, sizeof(*key), live_cmp) ||
	    !ns_seen(key->pidns_ino, sw->live, sw->nlive))
		return false;
	if (!sw->keep)
		return true;
	if (bsearch(key, sw->keep, sw->nkeep, sizeof(*key), live_cmp))
		return false;
	return !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	       st.st_mtime < sw->before;
}

/* In user directory @dfd: the files (NS.PID.phases[.new]) of processes gone. */
static int sweep_dir(int dfd, const struct sweep *sw)
{
	struct live key;
	struct dirent *e;
	int removed = 0, end;
	DIR *d = fdopendir(dfd);

	if (!d) {
		close(dfd);
		return 0;
	}
	while ((e = readdir(d))) {
		end = 0;
		if (sscanf(e->d_name, "%u.%u.phases%n", &key.pidns_ino,
			   &key.pid, &end) != 2 || !end ||
		    (e->d_name[end] && strcmp(e->d_name + end, ".new")) ||
		    !sweep_takes(dirfd(d), e->d_name, &key, sw))
			continue;
		removed += unlinkat(dirfd(d), e->d_name, 0) == 0;
	}
	closedir(d);
	return removed;
}

/* Every user's directory as root, else the caller's. */
static int sweep_all(struct sweep *sw)
{
	struct dirent *e;
	int top, fd, removed = 0;
	char uid[16];
	long n;
	DIR *d;

	top = open(st_phase_dir(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top < 0)
		return errno == ENOENT ? 0 : -errno;
	n = live_all(&sw->live);
	if (n < 0) {
		close(top);
		return (int)n;
	}
	sw->nlive = (size_t)n;
	if (geteuid()) {
		/* Only this user's processes and files: /proc shows them. */
		snprintf(uid, sizeof(uid), "%u", (unsigned int)geteuid());
		fd = openat(top, uid, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			removed = sweep_dir(fd, sw);
		close(top);
		free(sw->live);
		return removed;
	}
	d = fdopendir(top);
	if (!d) {
		close(top);
		free(sw->live);
		return -ENOMEM;
	}
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		fd = openat(dirfd(d), e->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			removed += sweep_dir(fd, sw);
	}
	closedir(d);
	free(sw->live);
	return removed;
}

int st_phases_sweep(void)
{
	struct sweep sw = {};

	return sweep_all(&sw);
}

/*
 * While loaded, a process's phase file is read only for its step records:
 * once the process is gone and the map has dropped its last record (evicted
 * by newer steps), nothing reads it again. A reader of every record removes
 * such files when they have not been written for REAP_IDLE seconds (a
 * process's last marks may reach the map after it exits); at most once per
 * REAP_EVERY seconds, listing /proc being the cost (export polls 4 times a
 * second).
 */
#define REAP_IDLE	60
#define REAP_EVERY	60

int st_phases_reap(const struct steptime_step_stats *s, size_t n)
{
	static __u64 last;
	struct sweep sw = {};
	__u64 now = st_mono_ns() / 1000000000ull;
	size_t i;
	int ret;

	pthread_mutex_lock(&cache.lock);
	if (last && now - last < REAP_EVERY) {
		pthread_mutex_unlock(&cache.lock);
		return 0;
	}
	last = now;
	pthread_mutex_unlock(&cache.lock);
	sw.keep = malloc((n ? n : 1) * sizeof(*sw.keep));
	if (!sw.keep)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		sw.keep[i].pidns_ino = s[i].pidns_ino;
		sw.keep[i].pid = s[i].ns_tgid;
	}
	qsort(sw.keep, n, sizeof(*sw.keep), live_cmp);
	sw.nkeep = n;
	sw.before = time(NULL) - REAP_IDLE;
	ret = sweep_all(&sw);
	free(sw.keep);
	return ret;
}

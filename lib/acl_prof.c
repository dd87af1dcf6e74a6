// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CANN's profiling step API (acl/acl_prof.h) on top of steptime's marks.
 *
 * Step objects come from an arena of our own so that a destroyed or bogus
 * pointer is recognised instead of corrupting the heap: every object has a
 * state byte, and a destroyed object is quarantined (its address is not
 * handed out again before QUARANTINE later destroys), so a double destroy
 * is caught even when the program keeps creating steps.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <acl/acl_prof.h>
#include <steptime/steptime.h>
#include <steptime/util.h>
#include "forward.h"
#include "st_internal.h"
#include "phase_write.h"

/*
 * Chunk i holds ARENA_BASE << i objects. Chunks are mapped MAP_NORESERVE:
 * a page is backed when an object on it is first handed out, so the first
 * chunk (16 MiB of address space, 1 MiB of states) costs what the objects
 * used cost. A million live step objects fit in it, and obj_state(), on
 * every mark, finds each at its first test.
 */
#define ARENA_CHUNKS	20
#define ARENA_BASE	(1ul << 20)
#define QUARANTINE	4096	/* destroys before an address is reused */
#define MAX_DEVS	64

enum { OBJ_UNUSED = 0, OBJ_LIVE, OBJ_FREE };

/* PROFILING_FAILED: what CANN's msproftx calls return for most errors. */
#define PROF_FAILED	(-1)

ST_FORWARD_DECL(aclprofInit, aclError, (const char *, size_t));
ST_FORWARD_DECL(aclprofFinalize, aclError, (void));
ST_FORWARD_DECL(aclprofCreateConfig, aclprofConfig *, (uint32_t *, uint32_t,
		aclprofAicoreMetrics, const aclprofAicoreEvents *, uint64_t));
ST_FORWARD_DECL(aclprofDestroyConfig, aclError, (const aclprofConfig *));
ST_FORWARD_DECL(aclprofStart, aclError, (const aclprofConfig *));
ST_FORWARD_DECL(aclprofStop, aclError, (const aclprofConfig *));
ST_FORWARD_DECL(aclprofCreateStepInfo, aclprofStepInfo *, (void));
ST_FORWARD_DECL(aclprofDestroyStepInfo, void, (aclprofStepInfo *));
ST_FORWARD_DECL(aclprofGetStepTimestamp, aclError, (aclprofStepInfo *,
		aclprofStepTag, aclrtStream));

struct chunk {
	struct aclprofStepInfo *objs;
	unsigned char *state;
	size_t n;
};

static struct {
	pthread_mutex_t lock;
	struct chunk chunks[ARENA_CHUNKS];
	unsigned int nchunks;		/* published with release */
	size_t used;			/* objects handed out of the last chunk */
	struct aclprofStepInfo **quar;	/* FIFO of destroyed objects */
	size_t qcap, qhead, qlen;
} arena = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The state of step object @p, or NULL when @p is not one of the arena's.
 * Lock-free: chunks are never freed and only appended.
 */
static inline __attribute__((always_inline)) unsigned char *
obj_state(const void *p)
{
	unsigned int n = __atomic_load_n(&arena.nchunks, __ATOMIC_ACQUIRE);
	const struct chunk *ch;
	unsigned int i;
	size_t off;

	for (i = 0; i < n; i++) {
		ch = &arena.chunks[i];
		/* Unsigned: an address below the chunk is far past its end. */
		off = (uintptr_t)p - (uintptr_t)ch->objs;
		if (off >= ch->n * sizeof(*ch->objs))
			continue;
		if (off % sizeof(*ch->objs))
			return NULL;
		return &ch->state[off / sizeof(*ch->objs)];
	}
	return NULL;
}

static void *arena_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int chunk_add(void)
{
	unsigned int i = arena.nchunks;
	struct chunk *ch = &arena.chunks[i];
	size_t n = ARENA_BASE << i;
	void *objs;

	if (i == ARENA_CHUNKS)
		return -ENOMEM;
	objs = arena_map(n * sizeof(*ch->objs));
	if (!objs)
		return -ENOMEM;
	ch->state = arena_map(n);
	if (!ch->state) {
		munmap(objs, n * sizeof(*ch->objs));
		return -ENOMEM;
	}
	ch->objs = objs;
	ch->n = n;
	arena.used = 0;
	__atomic_store_n(&arena.nchunks, i + 1, __ATOMIC_RELEASE);
	return 0;
}

static struct aclprofStepInfo *obj_alloc(void)
{
	struct aclprofStepInfo *obj;
	struct chunk *ch;

	if (arena.qlen > QUARANTINE) {
		obj = arena.quar[arena.qhead];
		arena.qhead = (arena.qhead + 1) % arena.qcap;
		arena.qlen--;
		return obj;
	}
	ch = arena.nchunks ? &arena.chunks[arena.nchunks - 1] : NULL;
	if (!ch || arena.used == ch->n) {
		if (chunk_add())
			return NULL;
		ch = &arena.chunks[arena.nchunks - 1];
	}
	return &ch->objs[arena.used++];
}

static int quarantine_push(struct aclprofStepInfo *obj)
{
	struct aclprofStepInfo **q;
	size_t i, cap;

	if (arena.qlen == arena.qcap) {
		cap = arena.qcap ? arena.qcap * 2 : QUARANTINE * 2;
		q = malloc(cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		for (i = 0; i < arena.qlen; i++)
			q[i] = arena.quar[(arena.qhead + i) % arena.qcap];
		free(arena.quar);
		arena.quar = q;
		arena.qcap = cap;
		arena.qhead = 0;
	}
	arena.quar[(arena.qhead + arena.qlen) % arena.qcap] = obj;
	arena.qlen++;
	return 0;
}

aclprofStepInfo *aclprofCreateStepInfo(void)
{
	struct aclprofStepInfo *obj;

	/* The ring registered now: the first START costs what others do. */
	st_marks_prepare();
	/* Forwarding: the real library's objects (marked through their id). */
	if (ST_FORWARD(aclprofCreateStepInfo))
		return ST_FORWARD(aclprofCreateStepInfo)();

	pthread_mutex_lock(&arena.lock);
	obj = obj_alloc();
	if (obj) {
		obj->startFlag = false;
		obj->endFlag = false;
		/* CANN: one id per object, from 1. */
		obj->indexId = st_next_index_id();
		__atomic_store_n(obj_state(obj), OBJ_LIVE, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&arena.lock);
	if (!obj)
		errno = ENOMEM;
	return obj;
}

void aclprofDestroyStepInfo(aclprofStepInfo *info)
{
	unsigned char *st;

	if (!info) {
		st_warn("steptime: aclprofDestroyStepInfo(NULL) ignored\n");
		if (ST_FORWARD(aclprofDestroyStepInfo))
			ST_FORWARD(aclprofDestroyStepInfo)(info);
		return;
	}
	if (!obj_state(info) && ST_FORWARD(aclprofDestroyStepInfo)) {
		ST_FORWARD(aclprofDestroyStepInfo)(info);
		return;
	}
	pthread_mutex_lock(&arena.lock);
	st = obj_state(info);
	if (!st || *st != OBJ_LIVE) {
		pthread_mutex_unlock(&arena.lock);
		st_warn("steptime: aclprofDestroyStepInfo(%p): %s, ignored\n",
			(void *)info, st && *st == OBJ_FREE ?
			"already destroyed" : "not a step object");
		return;
	}
	if (quarantine_push(info)) {
		/* Out of memory: leak the object rather than reuse it early. */
		st_warn("steptime: aclprofDestroyStepInfo: out of memory\n");
	}
	__atomic_store_n(st, OBJ_FREE, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&arena.lock);
}

/* ---- sessions ---------------------------------------------------------- */

struct aclprofConfig {
	struct aclprofConfig *next;	/* live configs */
	uint32_t devs[MAX_DEVS];
	uint32_t ndevs;
	aclprofAicoreMetrics metrics;
	uint64_t types;
	const aclprofConfig *real;	/* the forwarded library's config */
};

static struct {
	pthread_mutex_t lock;
	bool inited;
	char path[PATH_MAX];
	const struct aclprofConfig *started;
	int running;			/* read by marks without the lock */
	unsigned int sessions;		/* numbers the result files */
	__u64 start_ns;
	struct aclprofConfig *configs;
	int warned;
} sess = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* One message per kind of failure: a training loop marks every step. */
static void warn_once(int bit, const char *msg)
{
	if (__atomic_fetch_or(&sess.warned, bit, __ATOMIC_RELAXED) & bit)
		return;
	st_warn("steptime: %s\n", msg);
}

/*
 * The tag a mark carries: START for 0 and MindSpore's 60000
 * (AscendProfiler::StepStart); END for 60001 (StepStop) and every other
 * tag, as CANN treats any tag but 0.
 */
#define MINDSPORE_STEP_START	60000u

static unsigned int steptime_tag(aclprofStepTag tag)
{
	unsigned int t = (unsigned int)tag;

	return t == ACL_STEP_START || t == MINDSPORE_STEP_START ?
	       STEPTIME_TAG_START : STEPTIME_TAG_END;
}

/*
 * Report the mark of a step object whose checks passed. A NULL @stream is
 * the default stream, as in CANN (ApiImpl::ProfilerTraceEx() takes the
 * current context's default stream): with an ACL runtime loaded the mark
 * goes to rtProfilerTraceEx(NULL), its timeline event to
 * aclrtRecordEvent(NULL) and its stream id from rtGetStreamId(NULL), which
 * all resolve NULL so. @flags: ST_MARK_NO_TASK when CANN's own library has
 * submitted the place-holder already.
 */
static aclError step_report(__u64 index_id, aclprofStepTag tag,
			    aclrtStream stream, unsigned int flags)
{
	int err;

	if (!__atomic_load_n(&sess.running, __ATOMIC_ACQUIRE)) {
		warn_once(1, "aclprofGetStepTimestamp outside aclprofStart/"
			  "aclprofStop: not reported (ACL_ERROR_GE_FAILURE)");
		return ACL_ERROR_GE_FAILURE;
	}
	err = st_mark_stream(index_id, steptime_tag(tag), stream,
			     ST_MARK_NULL_DEFAULT | ST_MARK_DROP_OK | flags);
	/* Only the runtime's own failure (its place-holder) fails the call. */
	return err ? ACL_ERROR_GE_FAILURE : ACL_SUCCESS;
}

/*
 * The real library's object, after its answer @ret (the app's): steptime
 * marks the step whatever that was, in a session or not, so steps are
 * recorded without an msprof session too (CANN's call fails unless one
 * is reporting). Only a call CANN refused as misuse (a repeated tag) is
 * not a mark. Where CANN succeeded its place-holder is on the stream (NULL:
 * the default stream) and steptime adds the host mark with the stream's id
 * and the timeline event after it (device time); where it failed, steptime
 * submits the place-holder itself, as it does without CANN. indexId is at
 * offset 8 in CANN's layout (MindSpore writes it there).
 */
static void forwarded_mark(aclprofStepInfo *info, aclprofStepTag tag,
			   aclrtStream stream, aclError ret)
{
	if (ret == ACL_ERROR_INVALID_PARAM)
		return;
	st_mark_stream(__atomic_load_n(&info->indexId, __ATOMIC_RELAXED),
		       steptime_tag(tag), stream,
		       ST_MARK_NULL_DEFAULT | ST_MARK_DROP_OK |
		       (ret == ACL_SUCCESS ? ST_MARK_NO_TASK : 0));
}

aclError aclprofGetStepTimestamp(aclprofStepInfo *info, aclprofStepTag tag,
				 aclrtStream stream)
{
	unsigned char *st = info ? obj_state(info) : NULL;
	bool *flag;
	aclError ret;

	if (info && !st && ST_FORWARD(aclprofGetStepTimestamp)) {
		ret = ST_FORWARD(aclprofGetStepTimestamp)(info, tag, stream);
		forwarded_mark(info, tag, stream, ret);
		return ret;
	}
	if (!info)
		return ACL_ERROR_INVALID_PARAM;
	if (!st || __atomic_load_n(st, __ATOMIC_ACQUIRE) != OBJ_LIVE) {
		st_warn("steptime: aclprofGetStepTimestamp(%p): not a live "
			"step object\n", (void *)info);
		return ACL_ERROR_INVALID_PARAM;
	}
	/*
	 * CANN's check and set, with a plain load and store as CANN's own (no
	 * locked instruction on the mark path). CANN checks only tag 1
	 * against endFlag; 60001 passes.
	 */
	flag = tag == ACL_STEP_START ? &info->startFlag : &info->endFlag;
	if (__atomic_load_n(flag, __ATOMIC_RELAXED) &&
	    (tag == ACL_STEP_START || tag == ACL_STEP_END))
		return ACL_ERROR_INVALID_PARAM;
	__atomic_store_n(flag, true, __ATOMIC_RELAXED);
	/* Frameworks overwrite indexId after creation: read it now. */
	return step_report(__atomic_load_n(&info->indexId, __ATOMIC_RELAXED),
			   tag, stream, 0);
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t i, len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i])
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		buf[i] = path[i];
	}
	return access(path, W_OK | X_OK) ? -errno : 0;
}

static aclError prof_init(const char *path, size_t length)
{
	aclError ret = ACL_SUCCESS;

	if (!path || !length || length >= PATH_MAX ||
	    strnlen(path, length + 1) != length)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&sess.lock);
	if (sess.inited) {
		ret = ACL_ERROR_REPEAT_INITIALIZE;
	} else if (mkdir_p(path)) {
		st_warn("steptime: aclprofInit: cannot write to %s: %m\n", path);
		ret = ACL_ERROR_INVALID_PARAM;
	} else {
		memcpy(sess.path, path, length + 1);
		sess.inited = true;
	}
	pthread_mutex_unlock(&sess.lock);
	return ret;
}

static struct aclprofConfig *prof_create_config(uint32_t *devs,
		uint32_t ndevs, aclprofAicoreMetrics metrics,
		const aclprofAicoreEvents *events, uint64_t types)
{
	struct aclprofConfig *cfg;

	if ((ndevs && !devs) || events || ndevs > MAX_DEVS ||
	    (!ndevs && !(types & ACL_PROF_MSPROFTX))) {
		errno = EINVAL;
		return NULL;
	}
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg) {
		errno = ENOMEM;
		return NULL;
	}
	if (ndevs)
		memcpy(cfg->devs, devs, ndevs * sizeof(*devs));
	cfg->ndevs = ndevs;
	cfg->metrics = metrics;
	cfg->types = types;
	pthread_mutex_lock(&sess.lock);
	cfg->next = sess.configs;
	sess.configs = cfg;
	pthread_mutex_unlock(&sess.lock);
	return cfg;
}

/* Under sess.lock: the link pointing at @cfg, NULL when not live. */
static struct aclprofConfig **config_link(const aclprofConfig *cfg)
{
	struct aclprofConfig **p;

	for (p = &sess.configs; *p; p = &(*p)->next)
		if (*p == cfg || (cfg && (*p)->real == cfg))
			return p;
	return NULL;
}

static aclError prof_destroy_config(const aclprofConfig *cfg)
{
	struct aclprofConfig **link, *found;

	if (!cfg)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&sess.lock);
	link = config_link(cfg);
	if (!link || sess.started == cfg) {
		pthread_mutex_unlock(&sess.lock);
		st_warn("steptime: aclprofDestroyConfig(%p): %s\n",
			(const void *)cfg, link ? "profiling is running" :
			"not a live config");
		return ACL_ERROR_INVALID_PARAM;
	}
	found = *link;
	*link = found->next;
	pthread_mutex_unlock(&sess.lock);
	free(found);
	return ACL_SUCCESS;
}

/*
 * What Start and Stop check first, in CANN's order: a live config, then an
 * initialised session. Called with sess.lock held.
 */
static aclError session_check(const aclprofConfig *cfg)
{
	if (!config_link(cfg))
		return ACL_ERROR_INVALID_PARAM;
	if (!sess.inited)
		return ACL_ERROR_UNINITIALIZE;
	return ACL_SUCCESS;
}

static void session_tx_start(const struct aclprofConfig *cfg);
static void stamps_teardown(void);

static aclError prof_start(const aclprofConfig *cfg)
{
	aclError ret;
	int err;

	if (!cfg)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&sess.lock);
	ret = session_check(cfg);
	if (!ret && sess.started)
		ret = ACL_ERROR_PROF_ALREADY_RUN;
	if (ret) {
		pthread_mutex_unlock(&sess.lock);
		return ret;
	}
	sess.started = cfg;
	sess.start_ns = st_mono_ns();
	sess.sessions++;
	session_tx_start(*config_link(cfg));
	__atomic_store_n(&sess.running, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sess.lock);
	/* Say now, not at the first mark, why marks will fail. */
	err = st_marks_ready();
	if (err)
		st_marks_warn(err);
	return ACL_SUCCESS;
}

/*
 * The BPF program consumes marks at the process's ioctls: one more makes it
 * consume the last step's marks before this returns.
 */
static void marks_drain(void)
{
	st_marks_sync();
}

static bool in_session(const struct steptime_step_stats *s, __u64 from)
{
	if ((s->flags & STEPTIME_F_HOST_START) && s->host_start_ns >= from)
		return true;
	return (s->flags & STEPTIME_F_HOST_END) && s->host_end_ns >= from;
}

static FILE *result_open(const char *kind, const char *ext, unsigned int n,
			 char *path, size_t len)
{
	snprintf(path, len, "%s/steptime_%s_%d_%u.%s", sess.path, kind,
		 (int)getpid(), n, ext);
	return fopen(path, "w");
}

/* Under sess.lock: this process's steps of the session, CSV and JSON. */
static int results_write(void)
{
	struct steptime_reader_opts ro = {
		.sz = sizeof(ro),
		.pid = getpid(),
		.pidns_ino = st_pidns_ino(),
	};
	char csv_path[PATH_MAX + 64], json_path[PATH_MAX + 64], hdr[1024];
	struct steptime_step_stats s;
	struct steptime_reader *r;
	char tx_path[PATH_MAX + 64];
	FILE *csv, *json, *txf = NULL;
	int err = 0, n = 0;

	marks_drain();
	r = steptime_reader__open(&ro);
	if (!r && errno != ENOENT) {
		/* Not permitted (0600 maps): the files say what can be said. */
		err = -errno;
		warn_once(16, "aclprofStop: cannot read steps (no permission "
			  "to steptime's maps?): result files without steps");
	}
	csv = result_open("step_trace", "csv", sess.sessions, csv_path,
			  sizeof(csv_path));
	json = result_open("steps", "json", sess.sessions, json_path,
			   sizeof(json_path));
	if (!csv || !json) {
		err = -errno;
		st_warn("steptime: aclprofStop: cannot write under %s: %m\n",
			sess.path);
		st_tx_session_write(NULL);
		goto out;
	}
	steptime_stats__snprintf_header(hdr, sizeof(hdr), STEPTIME_FMT_CSV);
	fputs(hdr, csv);
	fputs("[", json);
	while (r && !steptime_reader__next(r, &s)) {
		if (!in_session(&s, sess.start_ns))
			continue;
		steptime_stats__fprint(csv, STEPTIME_FMT_CSV, &s);
		fputs(n++ ? ",\n " : "\n ", json);
		steptime_stats__fprint(json, STEPTIME_FMT_JSON, &s);
	}
	fputs(n ? "\n]\n" : "]\n", json);
	if (ferror(csv) || ferror(json))
		err = -EIO;
	txf = result_open("msprof_tx", "csv", sess.sessions, tx_path,
			  sizeof(tx_path));
	if (!txf || st_tx_session_write(txf)) {
		err = err ? err : -EIO;
		st_warn("steptime: aclprofStop: cannot write %s: %m\n", tx_path);
	}
	if (txf && fclose(txf) && !err)
		err = -errno;
out:
	if (csv && fclose(csv) && !err)
		err = -errno;
	if (json && fclose(json) && !err)
		err = -errno;
	steptime_reader__free(r);
	return err;
}

/*
 * The session ends whatever could be written: what is missing is said and
 * counted, never CANN's ACL_ERROR_PROFILING_FAILURE (apps exit on it).
 */
static aclError session_stop(void)
{
	__atomic_store_n(&sess.running, 0, __ATOMIC_RELEASE);
	sess.started = NULL;
	if (results_write())
		ST_COUNT(stops_incomplete);
	return ACL_SUCCESS;
}

static aclError prof_stop(const aclprofConfig *cfg)
{
	aclError ret;

	if (!cfg)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&sess.lock);
	ret = session_check(cfg);
	if (!ret && !sess.started)
		ret = ACL_ERROR_PROF_NOT_RUN;
	if (!ret && sess.started != cfg)
		ret = ACL_ERROR_INVALID_PARAM;
	if (!ret)
		ret = session_stop();
	pthread_mutex_unlock(&sess.lock);
	return ret;
}

static aclError prof_finalize(void)
{
	aclError ret = ACL_SUCCESS;

	pthread_mutex_lock(&sess.lock);
	if (!sess.inited) {
		ret = ACL_ERROR_UNINITIALIZE;
	} else {
		if (sess.started)
			session_stop();
		sess.inited = false;
		stamps_teardown();
	}
	pthread_mutex_unlock(&sess.lock);
	return ret;
}

/* ---- msproftx: stamps, marks, the Push/Pop stack, ranges ---------------- */

#define STAMPS		100	/* CANN's pool (CURRENT_STAMP_SIZE) */
#define STAMP_MSG	128	/* aclprofSetStampTraceMessage: msgLen < 128 */

struct stamp {
	bool used;
	bool ranging;		/* between RangeStart and RangeStop */
	__u32 real_range;	/* the forwarded library's range id */
	void *real;		/* the forwarded library's stamp */
	char msg[STAMP_MSG];
	struct st_tx_range range;
};

ST_FORWARD_DECL(aclprofCreateStamp, void *, (void));
ST_FORWARD_DECL(aclprofDestroyStamp, void, (void *));
ST_FORWARD_DECL(aclprofSetStampTraceMessage, aclError, (void *, const char *,
		uint32_t));
ST_FORWARD_DECL(aclprofMark, aclError, (void *));
ST_FORWARD_DECL(aclprofMarkEx, aclError, (const char *, size_t, aclrtStream));
ST_FORWARD_DECL(aclprofPush, aclError, (void *));
ST_FORWARD_DECL(aclprofPop, aclError, (void));
ST_FORWARD_DECL(aclprofRangeStart, aclError, (void *, uint32_t *));
ST_FORWARD_DECL(aclprofRangeStop, aclError, (uint32_t));

/*
 * One process-wide state, as CANN's: valid from an aclprofStart() whose
 * config has ACL_PROF_MSPROFTX until aclprofFinalize(). The Push/Pop stack
 * holds ranges (a stamp pushed twice is two ranges).
 */
static struct {
	pthread_mutex_t lock;
	bool enabled;
	struct stamp pool[STAMPS];
	struct st_tx_range *stack;
	size_t depth, cap;
} tx = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void session_tx_start(const struct aclprofConfig *cfg)
{
	if (!(cfg->types & ACL_PROF_MSPROFTX))
		return;
	pthread_mutex_lock(&tx.lock);
	tx.enabled = true;
	pthread_mutex_unlock(&tx.lock);
	st_tx_session_start(cfg->ndevs ? cfg->devs[0] : 0);
}

static void stamps_teardown(void)
{
	size_t i;

	pthread_mutex_lock(&tx.lock);
	for (i = 0; i < STAMPS; i++)
		if (tx.pool[i].ranging)
			st_tx_cancel(&tx.pool[i].range);
	for (i = 0; i < tx.depth; i++)
		st_tx_cancel(&tx.stack[i]);
	memset(tx.pool, 0, sizeof(tx.pool));
	tx.depth = 0;
	tx.enabled = false;
	pthread_mutex_unlock(&tx.lock);
}

/*
 * Under tx.lock: our stamp for @p (ours, or the twin of a forwarded
 * library's stamp), NULL for anything else.
 */
static struct stamp *stamp_of(const void *p)
{
	const struct stamp *s = p;
	size_t i;

	if (!p)
		return NULL;
	if (s >= tx.pool && s < tx.pool + STAMPS) {
		size_t off = (size_t)((const char *)p - (const char *)tx.pool);

		if (off % sizeof(*s))
			return NULL;
		i = off / sizeof(*s);
		return tx.pool[i].used ? &tx.pool[i] : NULL;
	}
	for (i = 0; i < STAMPS; i++)
		if (tx.pool[i].used && tx.pool[i].real == p)
			return &tx.pool[i];
	return NULL;
}

static void range_init(struct stamp *st, struct st_tx_range *r)
{
	snprintf(r->msg, sizeof(r->msg), "%s", st->msg);
	snprintf(r->domain, sizeof(r->domain), "msproftx");
	r->no_phase = false;
}

void *aclprofCreateStamp(void)
{
	struct stamp *st = NULL;
	void *real = NULL;
	size_t i;

	pthread_mutex_lock(&tx.lock);
	for (i = 0; tx.enabled && i < STAMPS; i++) {
		if (!tx.pool[i].used) {
			st = &tx.pool[i];
			memset(st, 0, sizeof(*st));
			st->used = true;
			break;
		}
	}
	pthread_mutex_unlock(&tx.lock);
	if (!ST_FORWARD(aclprofCreateStamp)) {
		if (!st)
			st_warn("steptime: aclprofCreateStamp: %s\n", tx.enabled ?
				"all 100 stamps in use" :
				"not after aclprofStart with ACL_PROF_MSPROFTX");
		return st;
	}
	real = ST_FORWARD(aclprofCreateStamp)();
	pthread_mutex_lock(&tx.lock);
	if (st && real)
		st->real = real;
	else if (st)
		st->used = false;
	pthread_mutex_unlock(&tx.lock);
	return real;
}

void aclprofDestroyStamp(void *stamp)
{
	struct stamp *st;

	pthread_mutex_lock(&tx.lock);
	st = stamp_of(stamp);
	if (st) {
		if (st->ranging)
			st_tx_cancel(&st->range);
		st->used = false;
	}
	pthread_mutex_unlock(&tx.lock);
	if (ST_FORWARD(aclprofDestroyStamp))
		ST_FORWARD(aclprofDestroyStamp)(stamp);
	else if (!st)
		st_warn("steptime: aclprofDestroyStamp(%p): not a live stamp\n",
			stamp);
}

/* The answer of the forwarded call when there is one, else ours. */
#define FORWARDED(name, ours, ...)					\
	(ST_FORWARD(name) ? ST_FORWARD(name)(__VA_ARGS__) : (ours))

aclError aclprofSetStampTraceMessage(void *stamp, const char *msg,
				     uint32_t msgLen)
{
	struct stamp *st;
	aclError ret = PROF_FAILED;

	pthread_mutex_lock(&tx.lock);
	st = stamp_of(stamp);
	if (st && msg && msgLen < STAMP_MSG) {
		memset(st->msg, 0, sizeof(st->msg));
		memcpy(st->msg, msg, strnlen(msg, msgLen));
		ret = ACL_SUCCESS;
	}
	pthread_mutex_unlock(&tx.lock);
	return FORWARDED(aclprofSetStampTraceMessage, ret, stamp, msg, msgLen);
}

aclError aclprofMark(void *stamp)
{
	struct stamp *st;
	char msg[STAMP_MSG];
	aclError ret = PROF_FAILED;

	pthread_mutex_lock(&tx.lock);
	st = tx.enabled ? stamp_of(stamp) : NULL;
	if (st) {
		memcpy(msg, st->msg, sizeof(msg));
		ret = ACL_SUCCESS;
	}
	pthread_mutex_unlock(&tx.lock);
	if (!ret)
		st_tx_mark(msg, "msproftx", NULL, ST_TX_MARKER);
	return FORWARDED(aclprofMark, ret, stamp);
}

aclError aclprofMarkEx(const char *msg, size_t msgLen, aclrtStream stream)
{
	bool enabled = __atomic_load_n(&tx.enabled, __ATOMIC_RELAXED);
	aclError ret = PROF_FAILED;

	/*
	 * CANN (MsprofTxManager::MarkEx): a stream is required, NULL is
	 * refused, not taken as the default stream; 1 .. 155 bytes,
	 * msgLen == strlen.
	 */
	if (enabled && msg && stream && msgLen >= 1 && msgLen < ST_TX_MSG &&
	    strnlen(msg, msgLen + 1) == msgLen) {
		st_tx_mark(msg, "msproftx", stream, ST_TX_MARKER_EX);
		ret = ACL_SUCCESS;
	}
	return FORWARDED(aclprofMarkEx, ret, msg, msgLen, stream);
}

aclError aclprofPush(void *stamp)
{
	struct st_tx_range *stack;
	struct stamp *st;
	aclError ret = PROF_FAILED;

	if (!stamp)
		return FORWARDED(aclprofPush, ACL_ERROR_INVALID_PARAM, stamp);
	pthread_mutex_lock(&tx.lock);
	st = tx.enabled ? stamp_of(stamp) : NULL;
	if (st && tx.depth == tx.cap) {
		size_t cap = tx.cap ? tx.cap * 2 : 16;

		stack = realloc(tx.stack, cap * sizeof(*stack));
		if (stack) {
			tx.stack = stack;
			tx.cap = cap;
		}
	}
	if (st && tx.depth < tx.cap) {
		struct st_tx_range *r = &tx.stack[tx.depth++];

		range_init(st, r);
		st_tx_begin(r, NULL);
		ret = ACL_SUCCESS;
	}
	pthread_mutex_unlock(&tx.lock);
	return FORWARDED(aclprofPush, ret, stamp);
}

aclError aclprofPop(void)
{
	struct st_tx_range r;
	aclError ret = PROF_FAILED;

	pthread_mutex_lock(&tx.lock);
	if (tx.enabled && tx.depth) {
		r = tx.stack[--tx.depth];
		ret = ACL_SUCCESS;
	}
	pthread_mutex_unlock(&tx.lock);
	if (!ret)
		st_tx_end(&r, ST_TX_PUSH_POP);
	return FORWARDED(aclprofPop, ret);
}

aclError aclprofRangeStart(void *stamp, uint32_t *rangeId)
{
	struct stamp *st;
	uint32_t real_id = 0;
	aclError ret = ACL_SUCCESS;

	if (!stamp || !rangeId)
		return FORWARDED(aclprofRangeStart, ACL_ERROR_INVALID_PARAM,
				 stamp, rangeId);
	if (ST_FORWARD(aclprofRangeStart)) {
		/*
		 * Recorded whatever the answer; a range CANN refused has no id
		 * the app can stop (it ends with its stamp or the session).
		 */
		ret = ST_FORWARD(aclprofRangeStart)(stamp, rangeId);
		real_id = ret ? UINT32_MAX : *rangeId;
	}
	pthread_mutex_lock(&tx.lock);
	st = tx.enabled ? stamp_of(stamp) : NULL;
	if (st) {
		if (st->ranging)	/* restarted: CANN keeps the last start */
			st_tx_cancel(&st->range);
		range_init(st, &st->range);
		st_tx_begin(&st->range, NULL);
		st->ranging = true;
		st->real_range = real_id;
		/* A range id is the stamp's pool slot, from 0 (as CANN's). */
		if (!ST_FORWARD(aclprofRangeStart))
			*rangeId = (uint32_t)(st - tx.pool);
	}
	pthread_mutex_unlock(&tx.lock);
	if (ST_FORWARD(aclprofRangeStart))
		return ret;
	return st ? ACL_SUCCESS : PROF_FAILED;
}

aclError aclprofRangeStop(uint32_t rangeId)
{
	struct stamp *st = NULL;
	struct st_tx_range r;
	aclError ret = PROF_FAILED;
	size_t i;

	pthread_mutex_lock(&tx.lock);
	for (i = 0; tx.enabled && i < STAMPS; i++) {
		struct stamp *s = &tx.pool[i];

		if (!s->used || !s->ranging)
			continue;
		if (ST_FORWARD(aclprofRangeStop) ? s->real_range == rangeId :
		    i == rangeId) {
			st = s;
			break;
		}
	}
	if (st) {
		r = st->range;
		st->ranging = false;
		ret = ACL_SUCCESS;
	}
	pthread_mutex_unlock(&tx.lock);
	if (!ret)
		st_tx_end(&r, ST_TX_START_END);
	return FORWARDED(aclprofRangeStop, ret, rangeId);
}

/* ---- the session calls, forwarded -------------------------------------- */

/*
 * With a real library (LD_PRELOAD), its answer is the app's, and steptime
 * keeps its own session whatever that answer was (its own checks still
 * apply): CANN refuses a session while no msprof is reporting, steptime
 * records it all the same.
 */
aclError aclprofInit(const char *path, size_t length)
{
	aclError ret;

	if (!ST_FORWARD(aclprofInit))
		return prof_init(path, length);
	ret = ST_FORWARD(aclprofInit)(path, length);
	prof_init(path, length);
	return ret;
}

aclprofConfig *aclprofCreateConfig(uint32_t *devs, uint32_t ndevs,
				   aclprofAicoreMetrics metrics,
				   const aclprofAicoreEvents *events,
				   uint64_t types)
{
	struct aclprofConfig *ours;
	aclprofConfig *real;

	if (!ST_FORWARD(aclprofCreateConfig))
		return prof_create_config(devs, ndevs, metrics, events, types);
	real = ST_FORWARD(aclprofCreateConfig)(devs, ndevs, metrics, events,
					       types);
	/* No config the app could name: nothing to keep. */
	if (!real)
		return NULL;
	ours = prof_create_config(devs, ndevs, metrics, events, types);
	if (ours)
		ours->real = real;	/* found by the real pointer */
	return real;
}

aclError aclprofDestroyConfig(const aclprofConfig *cfg)
{
	aclError ret;

	if (!ST_FORWARD(aclprofDestroyConfig))
		return prof_destroy_config(cfg);
	ret = ST_FORWARD(aclprofDestroyConfig)(cfg);
	prof_destroy_config(cfg);
	return ret;
}

aclError aclprofStart(const aclprofConfig *cfg)
{
	aclError ret;

	if (!ST_FORWARD(aclprofStart))
		return prof_start(cfg);
	ret = ST_FORWARD(aclprofStart)(cfg);
	prof_start(cfg);
	return ret;
}

aclError aclprofStop(const aclprofConfig *cfg)
{
	aclError ret;

	if (!ST_FORWARD(aclprofStop))
		return prof_stop(cfg);
	ret = ST_FORWARD(aclprofStop)(cfg);
	prof_stop(cfg);
	return ret;
}

aclError aclprofFinalize(void)
{
	aclError ret;

	if (!ST_FORWARD(aclprofFinalize))
		return prof_finalize();
	ret = ST_FORWARD(aclprofFinalize)();
	prof_finalize();
	return ret;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The journal of this process's own sends: no trap per task.
 *
 * A uprobe on halSqTaskSend() costs a trap per task (an int3 on x86, a BRK
 * and an out-of-line step on arm64), and slows every NPU process on the
 * node, profiled or not. Instead, where libsteptime is in the process, it
 * takes the calls to libascend_hal.so's halSqTaskSend(), halSqCqQuery(),
 * halSqCqAllocate() and halSqCqFree() itself: it patches the GOT entries
 * (JUMP_SLOT and GLOB_DAT relocations against those names) of every loaded
 * object but the HAL, found with dl_iterate_phdr(), so linked callers,
 * LD_PRELOAD and RTLD_LOCAL (Python ctypes) and the runtime's own
 * dlopen()ed libraries alike call through it. Per SQ it keeps cumulative
 * task and SQE counts, and writes them into the mark ring (steptime/abi.h,
 * STEPTIME_TAG_SQ_*) in program order with the marks: before each mark,
 * with each stream mark's place-holder, and when a SQ_HEAD query finds the
 * head moved (drained, or short of the tail by a known count). The BPF
 * program (bpf/journal.bpf.h) attributes the counts to steps and completes
 * them per step, not per task, and checks them against the driver's own
 * count (send_ok): a send the journal did not see (a dlsym() caller, a
 * second copy of the HAL) flags the process's steps.
 *
 * Counting is always on (a task sent on from where the last one left its
 * SQ: a few loads, the tail and one atomic add, no search, no division),
 * so a load mid-job sees cumulative values; ring entries are written only
 * while the ring is registered with a live load.
 */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <ascend_trs.h>
#include "st_internal.h"

#if defined(__x86_64__)
#define R_JUMP_SLOT	R_X86_64_JUMP_SLOT
#define R_GLOB_DAT	R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT	R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT	R_AARCH64_GLOB_DAT
#endif

#define HAL_NAME	"libascend_hal.so"
#define JSQ_SLOTS	256	/* SQs journaled per process (2^n) */
#define JSQ_USED	(1ull << 63)	/* in jsq.key: the slot is taken */

/* The HAL's structs, as far as the journal reads them (the ioctls' own). */
struct hal_alloc_in {
	__u32 type, tsId, sqeSize, cqeSize, sqeDepth, cqeDepth, grpId, flag;
};

struct hal_alloc_out {
	__u32 sqId, cqId;
};

struct hal_free_in {
	__u32 type, tsId, sqId, cqId;
};

/* halSqCqAllocate()'s; the others take one argument after the devId. */
typedef int (*hal_fn2)(__u32 dev, void *a, void *b);
typedef int (*hal_fn)(__u32 dev, void *a);

/* One SQ's journal: a cache line, so that a send touches one. */
struct jsq {
	__u64 key;		/* STEPTIME_SQ_KEY | JSQ_USED, 0: free */
	/*
	 * Cumulative since its ALLOC, (tasks << 32 | SQEs) mod 2^64: one
	 * atomic add per send; @snap: its value at the last snapshot;
	 * @drained: at the last head said, its low word the head's SQE.
	 */
	__u64 cnt;
	__u64 snap;
	__u64 drained;
	__u32 tail;		/* the raw tail after the last send */
	/* The depth from its ALLOC; UINT32_MAX: allocated unseen. */
	__u32 lim;
	__u32 gap;		/* STEPTIME_SNAP_GAP for the next snapshot */
	/*
	 * What a send's fast path compares, as the send's struct has them:
	 * @dev1 its devId + 1 (0: the slot is not yet ready for it) and
	 * @ts_sq its tsId and sqId in one load; @bit, the slot's bit in
	 * st_sends_dirty.
	 */
	__u32 dev1;
	__u64 ts_sq;
	__u64 bit;
};
_Static_assert(sizeof(struct jsq) == 64, "one journal, one cache line");

static struct jsq jsqs[JSQ_SLOTS] __attribute__((aligned(64)));

/* Bit (slot % 64): an SQ of those slots sent since its last snapshot. */
unsigned long st_sends_dirty;

/* The HAL's functions: what a patched entry calls. */
enum { F_SEND, F_QUERY, F_ALLOC, F_FREE, F_N };

static const char *const fn_names[F_N] = {
	"halSqTaskSend", "halSqCqQuery", "halSqCqAllocate", "halSqCqFree",
};

static void *real[F_N];

static struct {
	pthread_mutex_t lock;
	unsigned long long adds;	/* dlpi_adds at the last scan */
	bool scanned;
} scan = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The slot an SQ is looked for first: a send finds it there from its own
 * fields with a few instructions, no hash. A process's SQs are numbered
 * from 0 on each device, mostly on one TS: the device spreads them, the TS
 * is left to the search.
 */
static inline __u32 jsq_slot(__u32 dev, __u32 sq)
{
	return (sq + dev * 32) & (JSQ_SLOTS - 1);
}

static inline __u32 jsq_home(__u64 key)
{
	return jsq_slot(STEPTIME_SQ_KEY_DEV(key), STEPTIME_SQ_KEY_SQ(key));
}

/* @j, just taken for @key: its send fast path may find it from now on. */
static void jsq_ready(struct jsq *j, __u64 key)
{
	j->bit = 1ull << ((j - jsqs) % 64);
	j->lim = UINT32_MAX;
	__atomic_store_n(&j->ts_sq, STEPTIME_SQ_KEY_TS(key) | key << 32,
			 __ATOMIC_RELAXED);
	/* Last: a send that sees its dev1 sees its ts_sq. */
	__atomic_store_n(&j->dev1, STEPTIME_SQ_KEY_DEV(key) + 1, __ATOMIC_RELEASE);
}

/* The journal of SQ @key; made when @make. NULL: none, or the table full. */
static struct jsq *jsq_get(__u64 key, bool make)
{
	__u32 h = jsq_home(key), i;
	__u64 k, want = key | JSQ_USED;
	struct jsq *j;

	for (i = 0; i < JSQ_SLOTS; i++) {
		j = &jsqs[(h + i) & (JSQ_SLOTS - 1)];
		k = __atomic_load_n(&j->key, __ATOMIC_ACQUIRE);
		if (k == want)
			return j;
		if (k)
			continue;
		if (!make)
			return NULL;
		if (__atomic_compare_exchange_n(&j->key, &k, want, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			jsq_ready(j, key);
			return j;
		}
		if (k == want)
			return j;
	}
	return NULL;
}

static inline void jsq_dirty(const struct jsq *j)
{
	unsigned long bit = j->bit;

	if (__builtin_expect(!(__atomic_load_n(&st_sends_dirty,
					       __ATOMIC_RELAXED) & bit), 0))
		__atomic_fetch_or(&st_sends_dirty, bit, __ATOMIC_RELAXED);
}

static void snap_ent(struct st_ring_ent *e, struct jsq *j, __u64 c,
		     __u32 flags)
{
	e->index_id = j->key & ~JSQ_USED;
	e->time = c;
	e->tag = STEPTIME_TAG_SQ_SNAP;
	e->stream = flags | __atomic_load_n(&j->gap, __ATOMIC_RELAXED);
}

/* The snapshot @e of @j is in the ring: its gap is said. */
static void snap_said(struct jsq *j, const struct st_ring_ent *e, __u64 c)
{
	if (e->stream & STEPTIME_SNAP_GAP)
		__atomic_store_n(&j->gap, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&j->snap, c, __ATOMIC_RELAXED);
}

/*
 * The depth of @j's SQ, its ALLOC unseen: asked of the HAL once (a read of
 * the mapping, or the driver's QUERY where the library keeps none:
 * trs_sqcq.c:1365, 1480-1489), so that its sends' gaps and its runtime's
 * heads short of the tail can be told. Not known, they are not.
 */
static void jsq_learn_depth(struct jsq *j)
{
	__u64 key = j->key & ~JSQ_USED;
	struct trs_sqcq_query_info q = {
		.type = TRS_SQCQ_TYPE_NORMAL,
		.tsId = STEPTIME_SQ_KEY_TS(key),
		.sqId = STEPTIME_SQ_KEY_SQ(key),
		.prop = TRS_SQCQ_PROP_SQ_DEPTH,
	};

	if (!real[F_QUERY] ||
	    ((hal_fn)real[F_QUERY])(STEPTIME_SQ_KEY_DEV(key), &q) ||
	    !q.value[0] || q.value[0] == UINT32_MAX)
		return;
	/* The first send's tail, stored with no depth to wrap it. */
	__atomic_store_n(&j->tail, __atomic_load_n(&j->tail,
			 __ATOMIC_RELAXED) % q.value[0], __ATOMIC_RELAXED);
	j->lim = q.value[0];
}

/*
 * @j's first send, its ALLOC unseen: this library patched its caller after
 * the SQ was made (loaded before the runtime, as Python's `import steptime`
 * is, and patched at the first mark). Said at once and consumed at once,
 * in this thread, so that the program reads the driver's count of SQEs
 * sent (send_ok) right after this send: what it counted before is no send
 * the journal missed. Only then: a later reading would take in any send
 * made around the journal meanwhile, so without a ring the journal's
 * first drain finds the difference and flags the steps, as before.
 */
static void jsq_begin(struct jsq *j)
{
	__u64 c = __atomic_load_n(&j->cnt, __ATOMIC_ACQUIRE);
	struct st_ring_ent e;

	jsq_learn_depth(j);
	st_ring_check();
	snap_ent(&e, j, c, STEPTIME_SNAP_BEGIN);
	if (st_ring_put(&e, 1)) {
		jsq_dirty(j);
		return;
	}
	snap_said(j, &e, c);
	st_ring_flush();
}

/* A snapshot of @j, if it changed since the last one. */
static void jsq_snap(struct jsq *j)
{
	__u64 c = __atomic_load_n(&j->cnt, __ATOMIC_ACQUIRE);
	struct st_ring_ent e;

	if (c == __atomic_load_n(&j->snap, __ATOMIC_RELAXED))
		return;
	snap_ent(&e, j, c, 0);
	if (!st_ring_put(&e, 1))
		snap_said(j, &e, c);
	else
		jsq_dirty(j);	/* said once the ring is registered */
}

void st_sends_snap_slow(void)
{
	unsigned long d = __atomic_exchange_n(&st_sends_dirty, 0,
					      __ATOMIC_ACQUIRE);
	int b, i;

	while (d) {
		b = __builtin_ctzl(d);
		d &= d - 1;
		for (i = b; i < JSQ_SLOTS; i += 64)
			if (__atomic_load_n(&jsqs[i].key, __ATOMIC_RELAXED))
				jsq_snap(&jsqs[i]);
	}
}

/*
 * What the first SQE of a send is: 0, a task; else a place-holder, the
 * runtime's own (1) or a stream step mark (2, its step in *@index_id, its
 * tag in *@tag). The task type sits at @2 on STARS v1, @12 on v2; the
 * other layout has a reserved zero there (ascend_trs.h).
 */
static int sqe_kind(const __u8 *sqe, __u64 *index_id, __u16 *tag)
{
	struct trs_sqe_v2 s;

	memcpy(&s, sqe, 40);
	if ((s.type & TRS_SQE_TYPE_MASK) != TRS_SQE_PLACE_HOLDER)
		return 0;
	if (s.block_dim != TRS_TASK_PROFILER_TRACE_EX &&
	    s.place_holder.task_type != TRS_TASK_PROFILER_TRACE_EX)
		return 1;
	*index_id = s.place_holder.profiler_trace_id;
	*tag = s.place_holder.tag_id;
	return 2;
}

/* A stream mark sent on @j: after a snapshot of what came before it. */
static void jsq_place(struct jsq *j, __u64 index_id, __u16 tag)
{
	struct st_ring_ent e[2];
	__u64 c;

	st_ring_check();
	c = __atomic_load_n(&j->cnt, __ATOMIC_ACQUIRE);
	snap_ent(&e[0], j, c, 0);
	e[1].index_id = index_id;
	e[1].time = j->key & ~JSQ_USED;
	e[1].tag = tag == STEPTIME_TAG_START || tag == STEPTIME_TAG_MS_START ?
		   STEPTIME_TAG_SQ_START : STEPTIME_TAG_SQ_END;
	e[1].stream = (__u32)c;
	if (!st_ring_put(e, 2))
		snap_said(j, &e[0], c);
}

/* Any send the fast path leaves: the whole of what a send may be. 0. */
static __attribute__((noinline)) int
send_slow(__u32 dev, const struct trs_task_send_info *si)
{
	__u64 index_id = 0;
	struct jsq *j;
	__u16 tag = 0;
	__u32 n, gap, depth;
	int kind;

	if (!si->sqe_addr || !si->sqe_num)
		return 0;
	n = si->sqe_num;
	j = jsq_get(STEPTIME_SQ_KEY(dev, si->tsId, si->sqId), true);
	if (!j) {
		ST_COUNT(journal_full);
		return 0;
	}
	/*
	 * Not where the last send left the tail: SQEs sent around the
	 * journal. Counted as SQEs (what the driver's send_ok counts), and
	 * said with the next snapshot: their steps are flagged.
	 */
	depth = j->lim != UINT32_MAX ? j->lim : 0;
	gap = depth && si->pos < depth ?
	      (si->pos + depth - j->tail) % depth : 0;
	if (gap) {
		__atomic_store_n(&j->gap, STEPTIME_SNAP_GAP, __ATOMIC_RELAXED);
		__atomic_fetch_add(&j->cnt, gap, __ATOMIC_RELEASE);
	}
	kind = sqe_kind((const __u8 *)(unsigned long)si->sqe_addr, &index_id,
			&tag);
	if (kind == 2)
		jsq_place(j, index_id, tag);
	/* The tail first: a reader that sees the count sees its tail. */
	__atomic_store_n(&j->tail, depth ? (si->pos + n) % depth :
			 si->pos + n, __ATOMIC_RELAXED);
	if (!__atomic_fetch_add(&j->cnt, (kind ? 0 : 1ull << 32) + n,
				__ATOMIC_RELEASE) && j->lim == UINT32_MAX)
		jsq_begin(j);
	else
		jsq_dirty(j);
	return 0;
}

/*
 * A send the HAL took. Its fast path (table 8 of bench/hal.c: at most
 * 1.2x the HAL's own call) is a task sent where the last send left the
 * SQ's tail, on an SQ in its home slot, not wrapping the SQ: a few loads,
 * the tail, one atomic add. Anything else (a place-holder, a gap, a wrap,
 * a new SQ, a slot another SQ took) is send_slow()'s.
 */
static inline __attribute__((always_inline)) int
send_seen(__u32 dev, const struct trs_task_send_info *si)
{
	struct jsq *j = &jsqs[jsq_slot(dev, si->sqId)];
	const __u8 *sqe = (const __u8 *)(unsigned long)si->sqe_addr;
	__u64 ts_sq = (__u64)si->sqId << 32 | si->tsId;
	__u32 n = si->sqe_num, pos = si->pos;

	/* One register for the slot (not its offset and the table's). */
	__asm__("" : "+r"(j));
	if (__builtin_expect(__atomic_load_n(&j->dev1, __ATOMIC_ACQUIRE) !=
			     dev + 1 || j->ts_sq != ts_sq ||
			     pos != __atomic_load_n(&j->tail, __ATOMIC_RELAXED) ||
			     !n || pos + n >= j->lim ||
			     (*sqe & TRS_SQE_TYPE_MASK) == TRS_SQE_PLACE_HOLDER,
			     0))
		return send_slow(dev, si);
	/* The tail first: a reader that sees the count sees its tail. */
	__atomic_store_n(&j->tail, pos + n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&j->cnt, 1ull << 32 | n, __ATOMIC_RELEASE);
	jsq_dirty(j);
	return 0;
}

static int hal_send(__u32 dev, void *a)
{
	int ret = ((hal_fn)real[F_SEND])(dev, a);

	/*
	 * A send it took has its position written back and its SQEs read:
	 * neither @a nor its sqe_addr is NULL.
	 */
	if (__builtin_expect(ret, 0))
		return ret;
	return send_seen(dev, a);
}

/*
 * How many of @j's SQEs counted in @c the head @head is behind the tail
 * (0: drained), or -1 when that cannot be told: a depth not seen at the
 * ALLOC (a journal begun late), a head off the SQ, or too far for a
 * snapshot to say. A tail newer than @c (a send in another thread) only
 * makes it more: fewer SQEs taken as complete, never more.
 */
static long jsq_behind(const struct jsq *j, __u32 head)
{
	__u32 tail = __atomic_load_n(&j->tail, __ATOMIC_RELAXED);
	__u32 d = j->lim, n;

	if (head == tail)
		return 0;
	if (d == UINT32_MAX || !d || head >= d)
		return -1;
	n = (tail + d - head) % d;
	return n <= STEPTIME_SNAP_BEHIND_MAX ? (long)n : -1;
}

/*
 * SQ_HEAD moved: the SQEs before it are complete. Said once per position
 * (j->drained: the count with the head's SQE position in its low word).
 * Drained (the head at the tail of the last send), it is consumed now, the
 * process's own sync point, where the driver's count is checked; short of
 * the tail (the runtime's recycling), it waits in the ring for the next
 * consumer, costing no kick.
 */
static int hal_query(__u32 dev, void *a)
{
	struct trs_sqcq_query_info *q = a;
	struct st_ring_ent e;
	struct jsq *j;
	__u64 c, at;
	long behind;
	int ret;

	ret = ((hal_fn)real[F_QUERY])(dev, a);
	if (ret || !q || q->type != TRS_SQCQ_TYPE_NORMAL ||
	    q->prop != TRS_SQCQ_PROP_SQ_HEAD || st_ring_unjournaled())
		return ret;
	j = jsq_get(STEPTIME_SQ_KEY(dev, q->tsId, q->sqId), false);
	if (!j)
		return ret;
	c = __atomic_load_n(&j->cnt, __ATOMIC_ACQUIRE);
	behind = jsq_behind(j, q->value[0]);
	if (behind < 0 || (__u32)behind > (__u32)c)
		return ret;
	/* The head's SQE: unmoved, nothing new to say, sends since or not. */
	at = (c & ~0xffffffffull) | (__u32)((__u32)c - behind);
	if ((__u32)at == (__u32)__atomic_load_n(&j->drained, __ATOMIC_RELAXED))
		return ret;
	st_ring_check();
	snap_ent(&e, j, c, behind ? STEPTIME_SNAP_HEAD | (__u32)behind << 16 :
			    STEPTIME_SNAP_DRAINED);
	if (st_ring_put(&e, 1))
		return ret;
	__atomic_store_n(&j->drained, at, __ATOMIC_RELAXED);
	snap_said(j, &e, c);
	if (!behind)
		st_ring_flush();
	return ret;
}

/* A new SQ starts from zero, as the BPF program's record of it. */
static int hal_alloc(__u32 dev, void *a, void *b)
{
	const struct hal_alloc_in *in = a;
	const struct hal_alloc_out *out = b;
	struct jsq *j;
	int ret;

	ret = ((hal_fn2)real[F_ALLOC])(dev, a, b);
	if (ret || !in || !out || in->type != TRS_SQCQ_TYPE_NORMAL ||
	    (in->flag & (TSDRV_FLAG_REUSE_SQ | TSDRV_FLAG_ONLY_SQCQ_ID)) ||
	    out->sqId == 0xffffffffu)
		return ret;
	j = jsq_get(STEPTIME_SQ_KEY(dev, in->tsId, out->sqId), true);
	if (!j) {
		ST_COUNT(journal_full);
		return ret;
	}
	/* A process that marks on its streams alone registers here. */
	st_ring_check();
	j->lim = in->sqeDepth ?: UINT32_MAX;
	__atomic_store_n(&j->tail, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&j->snap, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&j->drained, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&j->gap, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&j->cnt, 0, __ATOMIC_RELEASE);
	return ret;
}

/* What was sent on an SQ being freed: said before the FREE. */
static int hal_free(__u32 dev, void *a)
{
	const struct hal_free_in *f = a;
	struct jsq *j = NULL;

	if (f && f->type == TRS_SQCQ_TYPE_NORMAL)
		j = jsq_get(STEPTIME_SQ_KEY(dev, f->tsId, f->sqId), false);
	if (j)
		jsq_snap(j);
	return ((hal_fn)real[F_FREE])(dev, a);
}

static void *const wrappers[F_N] = {
	[F_SEND] = (void *)hal_send,
	[F_QUERY] = (void *)hal_query,
	[F_ALLOC] = (void *)hal_alloc,
	[F_FREE] = (void *)hal_free,
};

/* ---------------------------------------------------------------------- */
/* The GOT entries                                                        */
/* ---------------------------------------------------------------------- */

#ifdef R_JUMP_SLOT
struct dyn {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Rela) *rela, *jmprel;
	size_t relasz, jmprelsz;
	const __u32 *gnu_hash, *hash;
	bool plt_rela;
};

/* glibc relocates these in place on most targets, musl never. */
static const void *dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return (const void *)(p < info->dlpi_addr ? p + info->dlpi_addr : p);
}

static bool dyn_read(const struct dl_phdr_info *info, struct dyn *d)
{
	const ElfW(Dyn) *dy = NULL;
	int i;

	memset(d, 0, sizeof(*d));
	d->plt_rela = true;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dy = (const void *)(info->dlpi_addr +
					    info->dlpi_phdr[i].p_vaddr);
	if (!dy)
		return false;
	for (; dy->d_tag != DT_NULL; dy++) {
		switch (dy->d_tag) {
		case DT_SYMTAB:
			d->symtab = dyn_ptr(info, dy->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab = dyn_ptr(info, dy->d_un.d_ptr);
			break;
		case DT_RELA:
			d->rela = dyn_ptr(info, dy->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->relasz = dy->d_un.d_val;
			break;
		case DT_JMPREL:
			d->jmprel = dyn_ptr(info, dy->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->jmprelsz = dy->d_un.d_val;
			break;
		case DT_PLTREL:
			d->plt_rela = dy->d_un.d_val == DT_RELA;
			break;
		case DT_GNU_HASH:
			d->gnu_hash = dyn_ptr(info, dy->d_un.d_ptr);
			break;
		case DT_HASH:
			d->hash = dyn_ptr(info, dy->d_un.d_ptr);
			break;
		}
	}
	return d->symtab && d->strtab;
}

static __u32 gnu_hash(const char *s)
{
	__u32 h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static __u32 elf_hash(const char *s)
{
	__u32 h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000;
		h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static bool sym_defines(const struct dyn *d, __u32 i, const char *name)
{
	const ElfW(Sym) *s = &d->symtab[i];

	return s->st_shndx != SHN_UNDEF && s->st_value &&
	       ELF64_ST_TYPE(s->st_info) == STT_FUNC &&
	       !strcmp(d->strtab + s->st_name, name);
}

/* The symbol @name defines, looked up as the dynamic linker does. */
static const ElfW(Sym) *sym_find(const struct dyn *d, const char *name)
{
	const unsigned int w = 8 * sizeof(ElfW(Addr));
	const __u32 *ht = d->gnu_hash, *buckets, *chain;
	const ElfW(Addr) *bloom;
	ElfW(Addr) mask;
	__u32 h, i, h2;

	if (!ht && d->hash) {
		h = elf_hash(name);
		for (i = d->hash[2 + h % d->hash[0]]; i;
		     i = d->hash[2 + d->hash[0] + i])
			if (sym_defines(d, i, name))
				return &d->symtab[i];
		return NULL;
	}
	if (!ht || !ht[0] || !ht[2])
		return NULL;
	bloom = (const void *)&ht[4];
	buckets = (const void *)&bloom[ht[2]];
	chain = &buckets[ht[0]];
	h = gnu_hash(name);
	mask = (ElfW(Addr))1 << (h % w) | (ElfW(Addr))1 << ((h >> ht[3]) % w);
	if ((bloom[(h / w) % ht[2]] & mask) != mask)
		return NULL;
	i = buckets[h % ht[0]];
	if (i < ht[1])
		return NULL;
	for (;; i++) {
		h2 = chain[i - ht[1]];
		if ((h | 1) == (h2 | 1) && sym_defines(d, i, name))
			return &d->symtab[i];
		if (h2 & 1)
			return NULL;
	}
}

static bool is_hal(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, HAL_NAME, strlen(HAL_NAME)) &&
	       (!base[strlen(HAL_NAME)] || base[strlen(HAL_NAME)] == '.');
}

/* Whether @a is inside one of @info's loaded segments. */
static bool in_object(const struct dl_phdr_info *info, ElfW(Addr) a)
{
	const ElfW(Phdr) *ph;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD &&
		    a >= info->dlpi_addr + ph->p_vaddr &&
		    a < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
			return true;
	}
	return false;
}

/*
 * Whether @a, inside its object, is a lazy PLT stub (a JUMP_SLOT not bound
 * yet), not a function of the object's own: another libsteptime linked
 * into it has its journal there (st_sends_scan() of a second copy, as the
 * loader's dlopen() of libsteptime.so.1 makes, must leave it alone).
 */
static bool plt_stub(ElfW(Addr) a)
{
	const unsigned char *p = (const unsigned char *)a;

#if defined(__x86_64__)
	/* endbr64 (IBT PLTs), then push $index; jmp PLT0 (bnd or not) */
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		p += 4;
	return p[0] == 0x68 && (p[5] == 0xe9 || (p[5] == 0xf2 && p[6] == 0xe9));
#else
	/* PLT0: stp x16, x30, [sp, #-16]! */
	return *(const __u32 *)p == 0xa9bf7bf0;
#endif
}

/* Whether the page of @a is one the loader made read-only (RELRO). */
static bool in_relro(const struct dl_phdr_info *info, ElfW(Addr) a)
{
	ElfW(Addr) pg = (ElfW(Addr))sysconf(_SC_PAGESIZE), start, end;
	const ElfW(Phdr) *ph;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_GNU_RELRO)
			continue;
		/* As the dynamic linker protects it: whole pages only. */
		start = (info->dlpi_addr + ph->p_vaddr) & ~(pg - 1);
		end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(pg - 1);
		if ((a & ~(pg - 1)) >= start && (a & ~(pg - 1)) < end)
			return true;
	}
	return false;
}

static void got_store(const struct dl_phdr_info *info, void **slot, void *v)
{
	ElfW(Addr) pg = (ElfW(Addr))sysconf(_SC_PAGESIZE);
	void *page = (void *)((ElfW(Addr))slot & ~(pg - 1));
	bool ro = in_relro(info, (ElfW(Addr))slot);

	if (ro && mprotect(page, pg, PROT_READ | PROT_WRITE))
		return;
	__atomic_store_n(slot, v, __ATOMIC_RELEASE);
	if (ro)
		mprotect(page, pg, PROT_READ);
	ST_COUNT(got_patched);
}

static int fn_index(const char *name)
{
	int f;

	if (name[0] != 'h' || name[1] != 'a' || name[2] != 'l')
		return -1;
	for (f = 0; f < F_N; f++)
		if (!strcmp(name, fn_names[f]))
			return f;
	return -1;
}

/*
 * The relocations @r[0, @sz): each HAL call bound to the HAL's function
 * (or not bound yet: lazily, to the object's own PLT) goes through the
 * journal. A weak one never bound (NULL) stays NULL; one bound elsewhere
 * (another interposer, another copy of the HAL) stays as it is, and its
 * sends show against the driver's count.
 */
static void relas_patch(const struct dl_phdr_info *info, const struct dyn *d,
			const ElfW(Rela) *r, size_t sz)
{
	size_t i, n = sz / sizeof(*r);
	void **slot, *v;
	__u32 type;
	int f;

	for (i = 0; r && i < n; i++) {
		type = ELF64_R_TYPE(r[i].r_info);
		if ((type != R_JUMP_SLOT && type != R_GLOB_DAT) ||
		    !ELF64_R_SYM(r[i].r_info))
			continue;
		f = fn_index(d->strtab +
			     d->symtab[ELF64_R_SYM(r[i].r_info)].st_name);
		if (f < 0 || !real[f])
			continue;
		slot = (void **)(info->dlpi_addr + r[i].r_offset);
		v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (!v || v == wrappers[f])
			continue;
		if (v != real[f] && (!in_object(info, (ElfW(Addr))v) ||
				     !plt_stub((ElfW(Addr))v))) {
			ST_COUNT(got_foreign);
			continue;
		}
		got_store(info, slot, wrappers[f]);
	}
}

static int phdr_patch(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct dyn d;

	(void)size;
	(void)arg;
	if (is_hal(info->dlpi_name) || !dyn_read(info, &d))
		return 0;
	if (d.plt_rela)
		relas_patch(info, &d, d.jmprel, d.jmprelsz);
	relas_patch(info, &d, d.rela, d.relasz);
	return 0;
}

/* The first libascend_hal.so's functions: what the patched entries call. */
static int phdr_hal(struct dl_phdr_info *info, size_t size, void *arg)
{
	const ElfW(Sym) *s;
	struct dyn d;
	int f;

	if (size >= offsetofend(struct dl_phdr_info, dlpi_adds))
		*(unsigned long long *)arg = info->dlpi_adds;
	if (real[F_SEND] || !is_hal(info->dlpi_name) || !dyn_read(info, &d))
		return 0;
	for (f = 0; f < F_N; f++) {
		s = sym_find(&d, fn_names[f]);
		if (s)
			real[f] = (void *)(info->dlpi_addr + s->st_value);
	}
	/* Half a HAL is none: nothing is patched. */
	for (f = 0; f < F_N; f++)
		if (!real[f])
			memset(real, 0, sizeof(real));
	return 0;
}

/*
 * Patch the objects loaded since the last scan. From the library's
 * constructor, the marks' once-a-second check and each step's creation;
 * never waits (another thread scanning does it), never dlopen()s (its
 * caller may be inside the dynamic linker's lock).
 */
void st_sends_scan(void)
{
	unsigned long long adds = 0;

	if (pthread_mutex_trylock(&scan.lock))
		return;
	dl_iterate_phdr(phdr_hal, &adds);
	if (real[F_SEND] && (!scan.scanned || adds != scan.adds)) {
		dl_iterate_phdr(phdr_patch, NULL);
		scan.scanned = true;
		scan.adds = adds;
	}
	pthread_mutex_unlock(&scan.lock);
}
#else
void st_sends_scan(void)
{
}
#endif

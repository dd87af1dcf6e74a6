/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * SQ slots, owners (bound manager files) and SQ creation.
 */
#ifndef __QUEUES_BPF_H
#define __QUEUES_BPF_H

#include "common.bpf.h"
#include "types.bpf.h"
#include "maps.bpf.h"
#include "thread.bpf.h"

/* ---------------------------------------------------------------------- */
/* SQ slots                                                                */
/* ---------------------------------------------------------------------- */

static __always_inline bool qkey_eq(const struct st_qkey *a,
				    const struct st_qkey *b)
{
	return a->owner == b->owner && a->ts == b->ts && a->id == b->id;
}

/* The SQ of @key, or NULL. */
static __always_inline struct st_sq *sq_find(const struct st_qkey *key)
{
	__u32 *slot = bpf_map_lookup_elem(&sq_index, key);

	return slot ? bpf_map_lookup_elem(&sqs, slot) : NULL;
}

/* The slot of the SQ of @key; STEPTIME_MAX_SQS when it has none. */
static __always_inline __u32 sq_slot(const struct st_qkey *key)
{
	__u32 *slot = bpf_map_lookup_elem(&sq_index, key);

	return slot ? *slot : STEPTIME_MAX_SQS;
}

/*
 * The slot of the SQ of @key, for an ioctl of thread @id: the one in the
 * thread's cache while it holds the same SQ; STEPTIME_MAX_SQS when none.
 */
static __always_inline __u32 sq_slot_cached(const struct st_qkey *key,
					    __u64 id)
{
	struct st_cache_way *w = thread_way(id, key->id);
	struct st_sq *sq;
	__u32 *slot;

	if (w && qkey_eq(&w->sq, key)) {
		sq = bpf_map_lookup_elem(&sqs, &w->sq_slot);
		if (sq && READ_ONCE(sq->live) && qkey_eq(&sq->key, key))
			return w->sq_slot;
	}
	slot = bpf_map_lookup_elem(&sq_index, key);
	if (!slot)
		return STEPTIME_MAX_SQS;
	if (w) {
		w->sq = *key;
		w->sq_slot = *slot;
	}
	return *slot;
}

/* The SQ of @key, for an ioctl of thread @id (sq_slot_cached()). */
static __always_inline struct st_sq *sq_find_cached(const struct st_qkey *key,
						    __u64 id)
{
	__u32 slot = sq_slot_cached(key, id);

	return slot < STEPTIME_MAX_SQS ? bpf_map_lookup_elem(&sqs, &slot) :
					 NULL;
}

static long slot_take(struct bpf_map *map, __u32 *idx, __u32 *claim,
		      __u32 *slot)
{
	if (__sync_val_compare_and_swap(claim, 0, 1))
		return 0;
	*slot = *idx;
	return 1;
}

/* Take a free slot of sqs: its index, or STEPTIME_MAX_SQS when none. */
static __always_inline __u32 sq_slot_take(void)
{
	/* Unknown to the verifier: 6.8+ verifiers converge on it. */
	__u32 slot = STEPTIME_MAX_SQS + (__u32)opaque_zero;

	bpf_for_each_map_elem(&sq_claims, slot_take, &slot, 0);
	return slot;
}

static __always_inline void sq_slot_put(__u32 slot)
{
	struct st_sq *sq = bpf_map_lookup_elem(&sqs, &slot);
	__u32 *c = bpf_map_lookup_elem(&sq_claims, &slot);

	if (sq)
		WRITE_ONCE(sq->live, 0);
	if (c)
		__sync_lock_test_and_set(c, 0);
	/* Its channel, cached as the HAL's, may be the next SQ's. */
	chans_changed();
}

/* The HAL's name for the SQ in @slot (hal.bpf.h), if it has one. */
static __always_inline void sq_hal_forget(__u32 slot)
{
	struct st_sq *sq = bpf_map_lookup_elem(&sqs, &slot);
	struct st_hkey hk = {};

	if (!sq || !(sq->flags & ST_SQ_HAL))
		return;
	hk.tgid = sq->tgid;
	hk.dev = sq->hal_dev;
	hk.ts = sq->key.ts;
	hk.id = sq->key.id;
	bpf_map_delete_elem(&hal_sqs, &hk);
}

/*
 * The binding of SQ @key's channel (chan_sq()): gone with the SQ, unless
 * the channel's memory already names another SQ.
 */
static __always_inline void sq_chan_drop(__u32 slot, const struct st_qkey *key)
{
	struct st_chan *ch;
	struct st_sq *sq;
	__u64 chan;

	/* Known at load: the modes without the hooks verify none of this. */
	if (!chan_hook)
		return;
	sq = bpf_map_lookup_elem(&sqs, &slot);
	if (!sq || !sq->chan)
		return;
	chan = sq->chan;
	ch = bpf_map_lookup_elem(&chans, &chan);
	if (ch && qkey_eq(&ch->key, key))
		bpf_map_delete_elem(&chans, &chan);
}

/* The SQ of @key is gone: its index entry, then its slot. */
static __always_inline void sq_delete(const struct st_qkey *key)
{
	__u32 *sp = bpf_map_lookup_elem(&sq_index, key), slot;

	if (!sp)
		return;
	slot = *sp;
	/* Of two CPUs deleting it, one frees the slot. */
	if (!bpf_map_delete_elem(&sq_index, key)) {
		sq_hal_forget(slot);
		sq_chan_drop(slot, key);
		sq_slot_put(slot);
	}
}

/* ---------------------------------------------------------------------- */
/* Owners: the bound manager file each queue belongs to                    */
/* ---------------------------------------------------------------------- */

static long drop_owner_sq(struct bpf_map *map, __u32 *slot, struct st_sq *sq,
			  __u64 *owner)
{
	if (sq->live && sq->key.owner == *owner)
		sq_delete(&sq->key);
	return 0;
}

static long drop_owner_cq(struct bpf_map *map, struct st_ckey *key,
			  struct st_cq *cq, __u64 *owner)
{
	if (key->owner == *owner)
		bpf_map_delete_elem(map, key);
	return 0;
}

/*
 * OPEN bound @file to device @dev. A struct file is reused once closed: the
 * queues of whatever file held the pointer before are gone with it.
 */
static __always_inline void file_bind(__u64 file, __u32 dev, __u32 tgid)
{
	struct st_file *old, f = { .dev = dev, .tgid = tgid };
	__u64 prev;

	old = bpf_map_lookup_elem(&files, &file);
	if (old) {
		prev = old->owner;
		bpf_for_each_map_elem(&sqs, drop_owner_sq, &prev, 0);
		bpf_for_each_map_elem(&cqs, drop_owner_cq, &prev, 0);
	}
	f.owner = __sync_add_and_fetch(&owner_seq, 1);
	if (bpf_map_update_elem(&files, &file, &f, BPF_ANY))
		CNT_INC(file_map_full);
	if (old) {
		__sync_fetch_and_add(&files_gen, 1);
		__sync_fetch_and_add(&cqs_gen, 1);
	}
}

/*
 * The owner of a TRS command's file. A file with no OPEN seen was bound
 * before load: its device is unknown, and counted. @id: the thread, for
 * its cache.
 */
static __always_inline struct st_file *file_get(__u64 file, __u32 tgid,
						__u64 id)
{
	struct st_cache *tc = thread_cache(id);
	struct st_file *f, nf = {
		.dev = ST_DEV_UNKNOWN,
		.tgid = tgid,
		.flags = ST_FILE_PREEXISTING,
	};
	/* Read before the lookup: a change after it invalidates the copy. */
	__u64 gen = READ_ONCE(files_gen);

	if (tc && tc->file == file && tc->files_gen == gen)
		return &tc->f;
	f = bpf_map_lookup_elem(&files, &file);
	if (f) {
		if (tc) {
			tc->f = *f;
			tc->files_gen = gen;
			tc->file = file;
		}
		return f;
	}
	nf.owner = __sync_add_and_fetch(&owner_seq, 1);
	if (bpf_map_update_elem(&files, &file, &nf, BPF_NOEXIST) == 0)
		CNT_INC(files_preexisting);
	f = bpf_map_lookup_elem(&files, &file);
	if (!f)
		CNT_INC(file_map_full);
	return f;
}

/* ---------------------------------------------------------------------- */
/* SQs and tasks                                                           */
/* ---------------------------------------------------------------------- */

static __always_inline struct st_sq *sq_create(struct st_qkey *key,
					       struct st_file *f, __u32 tgid,
					       __u32 depth, __u32 flags)
{
	struct st_skey ik = {};
	__u32 zero = 0, slot, *sp;
	struct st_sq *sq;
	void *img;

	img = bpf_map_lookup_elem(&zero_sq, &zero);
	if (!img)
		return NULL;
	/* A new ALLOC of the id replaces whatever a lost FREE left behind. */
	sp = bpf_map_lookup_elem(&sq_index, key);
	slot = sp ? *sp : sq_slot_take();
	if (slot >= STEPTIME_MAX_SQS) {
		CNT_INC(sq_map_full);
		return NULL;
	}
	bpf_map_update_elem(&sqs, &slot, img, BPF_ANY);
	sq = bpf_map_lookup_elem(&sqs, &slot);
	if (!sq)
		return NULL;
	sq->key = *key;
	sq->slot = slot;
	sq->tgid = tgid;
	sq->dev = f->dev;
	if (depth && depth <= ST_SQ_DEPTH) {
		sq->depth = depth;
		flags |= ST_SQ_KNOWN_DEPTH;
	} else {
		sq->depth = ST_SQ_DEPTH;
	}
	sq->flags = flags;
	sq->created_ns = bpf_ktime_get_ns();
	WRITE_ONCE(sq->live, 1);
	/* Another exit's ALLOC of the id got there first (as sq_raced()). */
	if (!sp && bpf_map_update_elem(&sq_index, key, &slot, BPF_NOEXIST)) {
		sq_slot_put(slot);
		CNT_INC(sqs_raced);
		return NULL;
	}
	if (f->dev != ST_DEV_UNKNOWN) {
		ik.dev = f->dev;
		ik.ts = key->ts;
		ik.id = key->id;
		bpf_map_update_elem(&sq_ids, &ik, key, BPF_ANY);
	}
	return sq;
}

/*
 * Take @t from VALID to complete. Two contexts can walk one SQ at once
 * (the driver's CQ hook and the owner's RECV or QUERY): only the one that
 * clears VALID completes the task.
 */
static __always_inline bool task_claim(struct st_task *t)
{
	__u32 valid = ST_TASK_WORD(ST_TASK_VALID);

	return __sync_fetch_and_and(&t->word, ~valid) & valid;
}

static __always_inline __u32 lat_bucket(__u64 ns)
{
	__u32 b = 0, shift;

	/* log2 by halving: six steps, unrolled by the compiler */
	for (shift = 32; shift; shift >>= 1) {
		if (ns >> shift) {
			b += shift;
			ns >>= shift;
		}
	}
	return b < STEPTIME_LAT_BUCKETS ? b : STEPTIME_LAT_BUCKETS - 1;
}

#endif /* __QUEUES_BPF_H */

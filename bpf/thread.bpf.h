/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Threads: each thread's slot, its queue cache, its call in flight.
 */
#ifndef __THREAD_BPF_H
#define __THREAD_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"

/* Thread @id's slot in the per-thread arrays (threads, hal_threads). */
static __always_inline __u32 thread_key(__u64 id)
{
	return (__u32)id & (ST_THREAD_SLOTS - 1);
}

static __always_inline struct st_thread *thread_slot(__u64 id)
{
	__u32 k = thread_key(id);

	return bpf_map_lookup_elem(&threads, &k);
}

/*
 * The cache of thread @id while it holds its slot (thread_get()), else
 * NULL. Looked up where it is used: a pointer or NULL kept live across an
 * exit's work would double the states the verifier walks.
 */
static __always_inline struct st_cache *thread_cache(__u64 id)
{
	struct st_thread *th = thread_slot(id);

	return th && READ_ONCE(th->busy) == id ? &th->cache : NULL;
}

/*
 * Way @way of thread @id's queue cache while it holds its slot, else NULL.
 * thread_cache()'s test, written out: one key on the stack serves both
 * lookups (the combined stack of a call chain is at most 512 bytes).
 */
static __always_inline struct st_cache_way *thread_way(__u64 id, __u32 way)
{
	__u32 k = thread_key(id);
	struct st_thread *th = bpf_map_lookup_elem(&threads, &k);

	if (!th || READ_ONCE(th->busy) != id)
		return NULL;
	k = k * ST_CACHE_WAYS + (way & (ST_CACHE_WAYS - 1));
	return bpf_map_lookup_elem(&queue_cache, &k);
}

#endif /* __THREAD_BPF_H */

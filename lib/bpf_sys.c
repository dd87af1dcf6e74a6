// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbpf's semantics for the calls in lib/bpf_sys.h: return the result or
 * a negative errno, with errno set too (libbpf 1.x).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "st_internal.h"

static int sys_bpf(enum bpf_cmd cmd, union bpf_attr *attr, unsigned int size)
{
	long ret = syscall(__NR_bpf, cmd, attr, size);

	return ret < 0 ? -errno : (int)ret;
}

int bpf_obj_get_opts(const char *pathname,
			       const struct bpf_obj_get_opts *opts)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (__u64)(unsigned long)pathname;
	if (opts && opts->sz >= offsetofend(struct bpf_obj_get_opts, file_flags))
		attr.file_flags = opts->file_flags;
	return sys_bpf(BPF_OBJ_GET, &attr, sizeof(attr));
}

int bpf_obj_get_info_by_fd(int fd, void *info, __u32 *info_len)
{
	union bpf_attr attr;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = *info_len;
	attr.info.info = (__u64)(unsigned long)info;
	err = sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr));
	if (!err)
		*info_len = attr.info.info_len;
	return err;
}

static int map_elem(enum bpf_cmd cmd, int fd, const void *key, void *out)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = fd;
	attr.key = (__u64)(unsigned long)key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		attr.next_key = (__u64)(unsigned long)out;
	else
		attr.value = (__u64)(unsigned long)out;
	return sys_bpf(cmd, &attr, sizeof(attr));
}

int bpf_map_get_next_key(int fd, const void *key, void *next_key)
{
	return map_elem(BPF_MAP_GET_NEXT_KEY, fd, key, next_key);
}

int bpf_map_lookup_elem(int fd, const void *key, void *value)
{
	return map_elem(BPF_MAP_LOOKUP_ELEM, fd, key, value);
}

int bpf_map_lookup_batch(int fd, void *in_batch, void *out_batch, void *keys,
			 void *values, __u32 *count,
			 const struct bpf_map_batch_opts *opts)
{
	union bpf_attr attr;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.batch.map_fd = fd;
	attr.batch.in_batch = (__u64)(unsigned long)in_batch;
	attr.batch.out_batch = (__u64)(unsigned long)out_batch;
	attr.batch.keys = (__u64)(unsigned long)keys;
	attr.batch.values = (__u64)(unsigned long)values;
	attr.batch.count = *count;
	if (opts && opts->sz >= offsetofend(struct bpf_map_batch_opts, flags)) {
		attr.batch.elem_flags = opts->elem_flags;
		attr.batch.flags = opts->flags;
	}
	err = sys_bpf(BPF_MAP_LOOKUP_BATCH, &attr, sizeof(attr));
	/* The kernel says how many it copied, also with -ENOENT at the end. */
	*count = attr.batch.count;
	return err;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a load pinned, read back: its info, the programs its links run and
 * its counters (steptime status, doctor and the tests).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader_int.h"

/* The id of the program that link @name, pinned in @dir, runs. */
static int link_prog_id(const char *dir, const char *name, __u32 *id)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	int fd, err;

	fd = pinned_open(dir, name, 0);
	if (fd < 0)
		return fd;
	err = bpf_obj_get_info_by_fd(fd, &li, &len) ? -errno : 0;
	close(fd);
	*id = li.prog_id;
	return err;
}

/* The value size of map @fd; 0 when it cannot be read. */
static __u32 map_value_size(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.value_size;
}

int pinned_open(const char *pin_dir, const char *name, int flags)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = flags);
	char path[PATH_MAX];
	int fd;

	if (pin_path(path, sizeof(path), steptime__pin_dir(pin_dir), name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get_opts(path, &o);
	return fd < 0 ? -errno : fd;
}

int steptime__read_info(const char *pin_dir, struct steptime_info *inf)
{
	__u32 zero = 0;
	int fd, err;

	fd = pinned_open(pin_dir, "info", BPF_F_RDONLY);
	if (fd < 0)
		return fd;
	err = map_value_size(fd) == sizeof(*inf) ? 0 : -EPROTO;
	if (!err)
		err = bpf_map_lookup_elem(fd, &zero, inf) ? -errno : 0;
	close(fd);
	if (!err && inf->magic != STEPTIME_MAGIC)
		err = -EPROTO;
	return err;
}

int steptime__read_progs(const char *pin_dir, struct steptime_prog *progs,
			 int max)
{
	struct bpf_prog_info pi;
	char dir[PATH_MAX];
	struct dirent *de;
	__u32 len, id;
	int n = 0, pfd, err = 0;
	DIR *d;

	if (!progs || max < 0)
		return -EINVAL;
	if (pin_path(dir, sizeof(dir), steptime__pin_dir(pin_dir), "links"))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == max) {		/* one more than there is room for */
			err = -E2BIG;
			break;
		}
		err = link_prog_id(dir, de->d_name, &id);
		if (err)
			break;
		pfd = bpf_prog_get_fd_by_id(id);
		if (pfd < 0) {
			err = -errno;
			break;
		}
		memset(&pi, 0, sizeof(pi));
		len = sizeof(pi);
		err = bpf_obj_get_info_by_fd(pfd, &pi, &len) ? -errno : 0;
		close(pfd);
		if (err)
			break;
		memset(&progs[n], 0, sizeof(progs[n]));
		snprintf(progs[n].name, sizeof(progs[n].name), "%.63s",
			 de->d_name);
		progs[n].id = id;
		progs[n].verified_insns = pi.verified_insns;
		progs[n].xlated_bytes = pi.xlated_prog_len;
		progs[n].run_cnt = pi.run_cnt;
		progs[n].run_time_ns = pi.run_time_ns;
		n++;
	}
	closedir(d);
	return err ?: n;
}

int steptime__read_counters(const char *pin_dir, struct steptime_counters *cnt)
{
	size_t n = sizeof(*cnt) / sizeof(__u64), i;
	int ncpu = libbpf_num_possible_cpus(), fd, err, cpu;
	__u64 *vals, *sum = (__u64 *)cnt;
	__u32 zero = 0;

	if (ncpu < 0)
		return ncpu;
	fd = pinned_open(pin_dir, "counters", BPF_F_RDONLY);
	if (fd < 0)
		return fd;
	vals = calloc((size_t)ncpu, sizeof(*cnt));
	if (!vals) {
		close(fd);
		return -ENOMEM;
	}
	err = bpf_map_lookup_elem(fd, &zero, vals) ? -errno : 0;
	memset(cnt, 0, sizeof(*cnt));
	for (cpu = 0; !err && cpu < ncpu; cpu++)
		for (i = 0; i < n; i++)
			sum[i] += vals[cpu * n + i];
	free(vals);
	close(fd);
	return err;
}

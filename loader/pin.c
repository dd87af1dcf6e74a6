// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A load's pins: filled in a private directory beside the pin directory,
 * its info written, published by one rename; and taken away again by
 * unload, which also clears what dead loaders and unloaders left.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader_int.h"

int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Maps the step API and readers open; the rest stay private. */
static struct bpf_map *const *public_maps(struct steptime_bpf *s, int *n)
{
	static struct bpf_map *m[5];

	m[0] = s->maps.marks;
	m[1] = s->maps.steps;
	m[2] = s->maps.events;
	m[3] = s->maps.counters;
	m[4] = s->maps.info;
	*n = 5;
	return m;
}

int pin_all(struct load_ctx *c)
{
	const struct steptime_load_opts *o = c->opts;
	unsigned int mode = o && o->map_mode ? o->map_mode : 0600;
	int gid = o && o->map_mode ? o->map_gid : -1;
	struct bpf_map *const *maps;
	char path[PATH_MAX];
	int i, n, err;

	maps = public_maps(c->skel, &n);
	for (i = 0; i < n; i++) {
		err = pin_path(path, sizeof(path), c->tmp_dir,
			       bpf_map__name(maps[i]));
		if (!err)
			err = bpf_map__pin(maps[i], path);
		if (err)
			return err;
		checkpoint(c);
		/*
		 * Read-only for everyone but root, marks included: each
		 * process's marks are in its own memory (steptime/abi.h).
		 */
		if (chmod(path, (mode & 0444) | 0600))
			return -errno;
		if (gid >= 0 && chown(path, -1, gid))
			return -errno;
	}
	err = pin_path(path, sizeof(path), c->tmp_dir, "links");
	if (err)
		return err;
	if (mkdir(path, 0700))
		return -errno;
	for (i = 0; i < c->nlinks; i++) {
		char lp[PATH_MAX];

		err = pin_path(lp, sizeof(lp), path, c->link_names[i]);
		if (!err)
			err = bpf_link__pin(c->links[i], lp);
		if (err)
			return err;
		checkpoint(c);
	}
	/* Others must be able to walk to the maps their mode grants. */
	if (chmod(c->tmp_dir, 0755))
		return -errno;
	if (c->bpffs_after && chmod(BPFFS_ROOT, c->bpffs_after))
		return -errno;
	return 0;
}

/*
 * Users that --mode/--group lets read the pins must be able to walk the
 * bpffs root: decide now what pin_all() changes there, so that the info
 * map records it and unload reverts it.
 */
void bpffs_plan(struct load_ctx *c)
{
	const struct steptime_load_opts *o = c->opts;
	unsigned int mode = o && o->map_mode ? o->map_mode : 0600;
	struct stat st;

	c->bpffs_before = c->bpffs_after = 0;
	if (!(mode & 0066) || stat(BPFFS_ROOT, &st) || (st.st_mode & 0001))
		return;
	c->bpffs_before = st.st_mode & 07777;
	c->bpffs_after = c->bpffs_before | 0011;
}

/* Undo bpffs_plan()'s change, unless someone changed the mode since. */
static void bpffs_revert(const struct steptime_info *inf)
{
	struct stat st;

	if (!inf->bpffs_mode_after || stat(BPFFS_ROOT, &st) ||
	    (st.st_mode & 07777) != inf->bpffs_mode_after)
		return;
	chmod(BPFFS_ROOT, inf->bpffs_mode_before);
}

/*
 * @why into the info map's @len bytes: whole "; "-separated reasons, and
 * "..." where the rest does not fit, never a reason cut mid-word.
 */
static void reason_fit(char *dst, size_t len, const char *why)
{
	size_t n = strlen(why);

	if (n < len) {
		memcpy(dst, why, n + 1);
		return;
	}
	n = len - 4;		/* room for "..." */
	while (n > 0 && strncmp(why + n, "; ", 2))
		n--;
	snprintf(dst, len, "%.*s...", (int)n, why);
}

int write_info(struct load_ctx *c, int mode)
{
	struct steptime_marks_hdr hdr = {
		.magic = STEPTIME_MAGIC,
		.version = STEPTIME_ABI_VERSION,
		.dev_rdev = c->rdev,
	};
	struct steptime_info inf = {
		.magic = STEPTIME_MAGIC,
		.version = STEPTIME_ABI_VERSION,
		.attach_mode = mode,
		.dev_rdev = c->rdev,
		.counter_freq_hz = c->freq,
		.bpffs_mode_before = c->bpffs_before,
		.bpffs_mode_after = c->bpffs_after,
		.stars_version = c->stars,
		.stars_from = c->stars_from,
	};
	struct timespec ts;
	__u32 zero = 0;
	int err, i;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	inf.loaded_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	snprintf(inf.device, sizeof(inf.device), "%s", c->device);
	snprintf(inf.chip, sizeof(inf.chip), "%s", c->chip);
	for (i = 0; i < c->hal.n; i++) {
		if (!c->hal_on[i])
			continue;
		inf.hal[inf.nhal].dev = c->hal.st[i].st_dev;
		inf.hal[inf.nhal].ino = c->hal.st[i].st_ino;
		snprintf(inf.hal[inf.nhal].path, sizeof(inf.hal[0].path), "%s",
			 c->hal.path[i]);
		inf.nhal++;
	}
	/* The setting as asked (a second load compares it), in effect once a
	 * HAL library is probed. */
	if (c->journal)
		inf.hal_flags |= STEPTIME_HAL_JOURNAL;
	snprintf(inf.profile, sizeof(inf.profile), "%s%s", c->prof->name,
		 c->raw_tp ? " (raw_tp)" : "");
	if (mode == STEPTIME_ATTACH_FENTRY || mode == STEPTIME_ATTACH_KPROBE)
		why_add(c, "completion hook %s, SQE trace hook %s, channel binding %s",
			c->hooks & 1 ? "on" : "off", c->hooks & 2 ? "on" : "off",
			c->hooks & 4 ? "on" :
			"off (uio_t SQEs by stream id; ambiguous ones flagged)");
	reason_fit(inf.reason, sizeof(inf.reason), c->why[0] ? c->why :
		   OPT(c->opts, attach_mode) ? "requested" : "best mode available");
	err = bpf_map__update_elem(c->skel->maps.info, &zero, sizeof(zero),
				   &inf, sizeof(inf), BPF_ANY);
	if (err)
		return err;
	snprintf(hdr.device, sizeof(hdr.device), "%s", c->device);
	if ((inf.hal_flags & STEPTIME_HAL_JOURNAL) && inf.nhal)
		hdr.flags |= STEPTIME_MARKS_F_JOURNAL;
	for (i = 0; i < c->nkicked; i++) {
		hdr.kick[i].dev = c->kicked[i].st_dev;
		hdr.kick[i].ino = c->kicked[i].st_ino;
	}
	return bpf_map__update_elem(c->skel->maps.marks, &zero, sizeof(zero),
				    &hdr, sizeof(hdr), BPF_ANY);
}

/* Start time of @pid in clock ticks after boot; 0 when it is not running. */
static unsigned long long proc_start_time(int pid)
{
	unsigned long long start = 0;
	char path[64], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* Field 22; the command (field 2) may hold spaces and parentheses. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
	    sscanf(p + 1, " %*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
		   &start) != 1)
		start = 0;
	fclose(f);
	return start;
}

/*
 * The private directory of a load or unload in progress, beside @pin_dir
 * on the same bpffs: "<parent>/<name>-tmp-<pid>-<start time>" (bpffs
 * refuses names with dots). @pid -1: only the prefix, "<parent>/<name>-tmp-".
 */
int private_dir(char *buf, size_t len, const char *pin_dir, int pid)
{
	const char *slash = strrchr(pin_dir, '/');
	int plen = slash ? (int)(slash - pin_dir) : 0, n;

	if (!slash)
		return -EINVAL;
	n = snprintf(buf, len, "%.*s/%s-tmp-", plen, pin_dir, slash + 1);
	if (n >= 0 && (size_t)n < len && pid >= 0)
		n += snprintf(buf + n, len - n, "%d-%llu", pid,
			      proc_start_time(pid));
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * Private directories of loaders and unloaders that died (SIGKILL, power
 * cut of the process): count them, and remove them when @remove. Their
 * pinned links keep programs attached until then.
 */
int leftovers(const char *pin_dir, bool remove)
{
	char prefix[PATH_MAX], path[PATH_MAX], *base;
	unsigned long long start;
	struct dirent *e;
	int n = 0, pid;
	size_t blen;
	DIR *d;

	if (private_dir(prefix, sizeof(prefix), pin_dir, -1))
		return 0;
	base = strrchr(prefix, '/');
	*base++ = '\0';
	blen = strlen(base);
	d = opendir(prefix[0] ? prefix : "/");
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, base, blen) ||
		    sscanf(e->d_name + blen, "%d-%llu", &pid, &start) != 2 ||
		    (pid > 0 && proc_start_time(pid) == start))
			continue;
		n++;
		if (remove && snprintf(path, sizeof(path), "%s/%s", prefix,
				       e->d_name) < (int)sizeof(path))
			unlink_dir(path);
	}
	closedir(d);
	return n;
}

int steptime__load_leftovers(const char *pin_dir)
{
	return leftovers(steptime__pin_dir(pin_dir), false);
}

/* The private directory becomes the pin directory, unless one exists. */
int publish(struct load_ctx *c)
{
	char path[PATH_MAX];

	if (renameat2(AT_FDCWD, c->tmp_dir, AT_FDCWD, c->pin_dir,
		      RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EEXIST && errno != ENOTEMPTY)
		return -errno;
	if (pin_path(path, sizeof(path), c->pin_dir, "info") == 0 &&
	    access(path, F_OK) == 0)
		fprintf(stderr, "steptime: already loaded at %s by a concurrent load\n",
			c->pin_dir);
	else
		fprintf(stderr, "steptime: %s exists but holds no load (steptime unload removes it)\n",
			c->pin_dir);
	return -EEXIST;
}

int unlink_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (pin_path(path, sizeof(path), dir, e->d_name))
			continue;
		if (e->d_type == DT_DIR)
			err = unlink_dir(path) ?: err;
		else if (unlink(path))
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir))
		err = -errno;
	return err;
}

/*
 * Processes keep their mapping of the marks map after it is unpinned: a
 * zero magic tells their step API to reopen (a later load's map).
 */
static void marks_retire(const char *pin_dir)
{
	struct steptime_marks_hdr hdr;
	__u32 zero = 0;
	int fd = pinned_open(pin_dir, "marks", 0);

	if (fd < 0)
		return;
	if (bpf_map_lookup_elem(fd, &zero, &hdr) == 0) {
		memset(&hdr, 0, sizeof(hdr));
		bpf_map_update_elem(fd, &zero, &hdr, BPF_ANY);
	}
	close(fd);
}

/*
 * Whether @dir holds only names a steptime load pins (or nothing): what
 * unload may remove without "info" there (`unload --pin /sys/fs/bpf` must
 * not wipe other tools' pins).
 */
static bool only_ours(const char *dir)
{
	static const char *const ours[] = {
		"marks", "steps", "events", "counters", "info", "links",
	};
	struct dirent *e;
	bool ok = true;
	size_t i;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (ok && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
			if (!strcmp(e->d_name, ours[i]))
				break;
		ok = i < sizeof(ours) / sizeof(ours[0]);
	}
	closedir(d);
	return ok;
}

#define UNLOAD_WAIT_MS	5000

/*
 * Wait until the kernel has freed the @n @progs (none when @n is an error,
 * steptime__read_progs()'s return). An unpinned link drops
 * its last reference from a workqueue, and a program attached to a
 * module (the driver's handler, its tracepoints) keeps the module in use
 * until it is freed: `steptime unload && rmmod` must not fail for that.
 * Bounded: a program someone else still holds (by fd) is not waited for.
 */
static void progs_wait_freed(const struct steptime_prog *progs, int n)
{
	int i, fd, live, ms;

	for (ms = 0; ms < UNLOAD_WAIT_MS; ms++) {
		for (i = live = 0; i < n; i++) {
			fd = bpf_prog_get_fd_by_id(progs[i].id);
			if (fd >= 0) {
				close(fd);
				live++;
			}
		}
		if (!live)
			return;
		usleep(1000);
	}
}

int steptime__unload(const char *pin_dir)
{
	struct steptime_prog progs[LOAD_MAX_LINKS];
	char path[PATH_MAX], tmp[PATH_MAX];
	struct steptime_info inf;
	const char *dir;
	bool loaded;
	int stale, err, n;

	pin_dir = steptime__pin_dir(pin_dir);
	if (pin_path(path, sizeof(path), pin_dir, "info") ||
	    private_dir(tmp, sizeof(tmp), pin_dir, getpid()))
		return -ENAMETOOLONG;
	stale = leftovers(pin_dir, true);
	if (access(pin_dir, F_OK))
		return stale ? 0 : -ENOENT;
	loaded = access(path, F_OK) == 0;
	if (!loaded && !only_ours(pin_dir)) {
		fprintf(stderr, "steptime: %s holds no steptime load but other files: not removed\n",
			pin_dir);
		return stale ? 0 : -ENOTEMPTY;
	}
	if (loaded && !steptime__read_info(pin_dir, &inf))
		bpffs_revert(&inf);
	marks_retire(pin_dir);
	n = steptime__read_progs(pin_dir, progs, LOAD_MAX_LINKS);
	/*
	 * Out of the way first, in one step: readers and a new load see it
	 * loaded or not, never half removed; a killed unload leaves a
	 * private directory like a killed load's.
	 */
	dir = renameat2(AT_FDCWD, pin_dir, AT_FDCWD, tmp, RENAME_NOREPLACE) ?
	      pin_dir : tmp;
	err = unlink_dir(dir);
	progs_wait_freed(progs, n);
	return err ?: loaded || stale ? 0 : -ENOENT;
}

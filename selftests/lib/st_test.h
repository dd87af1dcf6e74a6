/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers for libsteptime's host tests: a private pin directory with maps
 * of steptime's layout, so marks and the reader are tested without the
 * BPF program (root only; tests SKIP otherwise).
 */
#ifndef _STEPTIME_ST_TEST_H
#define _STEPTIME_ST_TEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <steptime/steptime.h>

#define ST_BPFFS	"/sys/fs/bpf"

struct st_pins {
	char dir[256];
	int marks_fd, steps_fd;
	struct steptime_marks_hdr *hdr;	/* mapping of marks, or NULL */
	size_t map_sz;
};

static inline __u64 st_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline __u32 st_test_pidns_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0 : (__u32)st.st_ino;
}

/* bpffs at /sys/fs/bpf, mounted if needed. Return: 0 or -errno. */
static inline int st_bpffs(void)
{
	struct statfs sfs;

	if (!statfs(ST_BPFFS, &sfs) && sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", ST_BPFFS, "bpf", 0, NULL))
		return -errno;
	return 0;
}

static inline int st_pin_path(const struct st_pins *p, const char *name,
			      char *buf, size_t len)
{
	return snprintf(buf, len, "%s/%s", p->dir, name) >= (int)len ?
	       -ENAMETOOLONG : 0;
}

/*
 * A marks map of @value_size (sizeof(struct steptime_marks_hdr) for the
 * real layout), its header written (the "device" is /dev/null: the ring
 * registration's ioctl fails there, as on a driver, and nothing sees it),
 * pinned as <dir>/marks and mapped.
 */
static inline int st_marks_create(struct st_pins *p, __u32 value_size,
				  __u32 magic)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char path[320];
	void *map;

	p->marks_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "st_marks", 4,
				     value_size, 1, &o);
	if (p->marks_fd < 0)
		return -errno;
	p->map_sz = ((size_t)value_size + page - 1) & ~(page - 1);
	map = mmap(NULL, p->map_sz, PROT_READ | PROT_WRITE, MAP_SHARED,
		   p->marks_fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	p->hdr = map;
	p->hdr->magic = magic;
	p->hdr->version = STEPTIME_ABI_VERSION;
	p->hdr->dev_rdev = 1 << 20 | 3;		/* /dev/null, 1:3 */
	snprintf(p->hdr->device, sizeof(p->hdr->device), "/dev/null");
	st_pin_path(p, "marks", path, sizeof(path));
	return bpf_obj_pin(p->marks_fd, path) ? -errno : 0;
}

static inline int st_steps_create(struct st_pins *p)
{
	char path[320];

	p->steps_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "st_steps",
				     sizeof(struct steptime_step_key),
				     sizeof(struct steptime_step_stats), 4096,
				     NULL);
	if (p->steps_fd < 0)
		return -errno;
	st_pin_path(p, "steps", path, sizeof(path));
	return bpf_obj_pin(p->steps_fd, path) ? -errno : 0;
}

static inline int st_steps_add(struct st_pins *p,
			       const struct steptime_step_stats *s)
{
	struct steptime_step_key k = { .tgid = s->tgid, .index_id = s->index_id };

	return bpf_map_update_elem(p->steps_fd, &k, s, BPF_ANY) ? -errno : 0;
}

/* A fresh pin directory, exported as STEPTIME_PIN_DIR. */
static inline int st_pins_init(struct st_pins *p)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->marks_fd = p->steps_fd = -1;
	err = st_bpffs();
	if (err)
		return err;
	snprintf(p->dir, sizeof(p->dir), ST_BPFFS "/steptime-test-%d",
		 (int)getpid());
	if (mkdir(p->dir, 0755) && errno != EEXIST)
		return -errno;
	chmod(p->dir, 0755);
	setenv("STEPTIME_PIN_DIR", p->dir, 1);
	return 0;
}

/*
 * A pin directory with a marks map of steptime's layout. Return: 0; 1 with
 * @skip set when not root; a negative errno.
 */
static inline int st_pins_with_marks(struct st_pins *p, char *skip, size_t len)
{
	int err;

	if (geteuid()) {
		snprintf(skip, len, "needs root (bpffs, maps)");
		return 1;
	}
	err = st_pins_init(p);
	if (!err)
		err = st_marks_create(p, sizeof(struct steptime_marks_hdr),
				      STEPTIME_MAGIC);
	return err;
}

/*
 * st_pins_with_marks() and a steps map: what the library's marks and its
 * reader need. Return: 0; 1 with @skip set when not root, or when this
 * user may not create BPF maps; a negative errno.
 */
static inline int st_pins_with_steps(struct st_pins *p, char *skip, size_t len)
{
	int err = st_pins_with_marks(p, skip, len);

	if (err == 1)
		return 1;
	if (!err)
		err = st_steps_create(p);
	if (err == -EPERM || err == -EACCES) {
		snprintf(skip, len, "cannot create BPF maps: %s", strerror(-err));
		return 1;
	}
	return err;
}

/* In a TEST_F whose fixture has skip[]: SKIP with its reason, if any. */
#define NEED_PINS() do {					\
	if (self->skip[0])					\
		SKIP(return, "%s", self->skip);			\
} while (0)

static inline void st_pins_fini(struct st_pins *p)
{
	char path[320];

	if (!p->dir[0])
		return;
	st_pin_path(p, "marks", path, sizeof(path));
	unlink(path);
	st_pin_path(p, "steps", path, sizeof(path));
	unlink(path);
	rmdir(p->dir);
	if (p->hdr)
		munmap(p->hdr, p->map_sz);
	if (p->marks_fd >= 0)
		close(p->marks_fd);
	if (p->steps_fd >= 0)
		close(p->steps_fd);
}

/* Capture stderr into a temporary file while @body runs. */
static inline int st_stderr_begin(void)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);

	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	return saved;
}

static inline char *st_stderr_end(int saved)
{
	static char buf[4096];
	ssize_t n;

	fflush(stderr);
	lseek(STDERR_FILENO, 0, SEEK_SET);
	n = read(STDERR_FILENO, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	dup2(saved, STDERR_FILENO);
	close(saved);
	return buf;
}

#endif /* _STEPTIME_ST_TEST_H */

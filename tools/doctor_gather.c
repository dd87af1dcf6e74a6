// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime doctor: what it reads. The programs attached, the program's
 * private maps (sqs, procs: root), the pinned marks header and steps, and
 * of each process its /proc maps (the libraries), its ring's head (its
 * memory) and the driver's hw_sq counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include <bpf/bpf.h>
#include <steptime/steptime.h>
#include <steptime/loader.h>
#include "snapshot.h"
#include "hw_sq.h"
#include "doctor.h"

static const char *const lib_prefix[] = {
	"libsteptime.so", "libascendcl.so", "libruntime.so", "libnpuhal.so",
	"libascend_hal.so",
};

/* ---------------------------------------------------------------------- */
/* The hooks, from the programs attached                                  */
/* ---------------------------------------------------------------------- */

static enum hook prog_hook(const char *name)
{
	if (!strncmp(name, "uprobe_hal_", 11) ||
	    !strncmp(name, "uretprobe_hal_", 14))
		return H_HAL;
	if (strstr(name, "ring_kick"))
		return H_KICK;
	if (strstr(name, "cq_enque"))
		return H_CQ;
	if (strstr(name, "trace_sqe"))
		return H_SQE;
	if (strstr(name, "chan_add") || strstr(name, "chan_del"))
		return H_CHAN;
	if (strstr(name, "do_exit") || strstr(name, "process_exit") ||
	    strstr(name, "exit_group"))
		return H_EXIT;
	return H_IOCTL;
}

int hook_count(const struct doctor *d, enum hook h)
{
	int i, n = 0;

	for (i = 0; i < d->nprogs; i++)
		n += prog_hook(d->progs[i].name) == h;
	return n;
}

/* ---------------------------------------------------------------------- */
/* The program's private maps (root)                                      */
/* ---------------------------------------------------------------------- */

/* The map named @name among those of the program of link @link_fd. */
static int link_map(int link_fd, const char *name)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	struct bpf_map_info mi;
	__u32 len = sizeof(li), ids[64], i;
	int pfd, fd, err;

	if (bpf_obj_get_info_by_fd(link_fd, &li, &len))
		return -errno;
	pfd = bpf_prog_get_fd_by_id(li.prog_id);
	if (pfd < 0)
		return -errno;
	pi.nr_map_ids = 64;
	pi.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pi);
	err = bpf_obj_get_info_by_fd(pfd, &pi, &len) ? -errno : 0;
	close(pfd);
	if (err)
		return err;
	for (i = 0; i < pi.nr_map_ids && i < 64; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			return -errno;
		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (!bpf_obj_get_info_by_fd(fd, &mi, &len) &&
		    !strcmp(mi.name, name))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* The private map @name, through any pinned link's program. */
static int private_map(const char *pin, const char *name, __u32 value_size)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	char path[PATH_MAX];
	int i, lfd, fd = -ENOENT;
	struct steptime_prog progs[PROGS_MAX];
	int n = steptime__read_progs(pin, progs, PROGS_MAX);

	if (n < 0)
		return n;
	for (i = 0; i < n && fd == -ENOENT; i++) {
		snprintf(path, sizeof(path), "%.4000s/links/%.63s", pin,
			 progs[i].name);
		lfd = bpf_obj_get(path);
		if (lfd < 0)
			return -errno;
		fd = link_map(lfd, name);
		close(lfd);
	}
	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len) || mi.value_size != value_size) {
		close(fd);
		return -EPROTO;	/* another build's layout */
	}
	return fd;
}

static __u32 map_entries(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.max_entries;
}

static struct proc *proc_get(struct doctor *d, __u32 tgid)
{
	struct proc *p;
	size_t i;

	for (i = 0; i < d->nprocs; i++)
		if (d->procs[i].tgid == tgid)
			return &d->procs[i];
	p = realloc(d->procs, (d->nprocs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	d->procs = p;
	p = &d->procs[d->nprocs++];
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	p->ring_read = -ENOENT;
	return p;
}

static void modes_add(struct sq_modes *m, __u32 flags)
{
	if (!(flags & ST_SQ_UIO))
		m->kio++;
	else if (flags & ST_SQ_SOFT)
		m->uio_t++;
	else
		m->uio_d++;
	m->hal += !!(flags & ST_SQ_HAL);
	m->preexisting += !!(flags & ST_SQ_PREEXISTING);
}

static struct sq_modes *dev_get(struct doctor *d, __u32 dev)
{
	int i;

	for (i = 0; i < d->ndevs; i++)
		if (d->devs[i].dev == dev)
			return &d->devs[i];
	if (d->ndevs == DEVS_MAX)
		return NULL;
	d->devs[d->ndevs].dev = dev;
	return &d->devs[d->ndevs++];
}

/* The live SQs, by device and by owner. Return: 0 or -errno. */
static int read_sqs(struct doctor *d)
{
	int fd = private_map(d->pin, "sqs", sizeof(struct st_sq));
	struct sq_modes *m;
	struct st_sq *sq;
	struct proc *p;
	__u32 i, n;

	if (fd < 0)
		return fd;
	sq = malloc(sizeof(*sq));
	d->sqs = calloc(SQS_MAX, sizeof(*d->sqs));
	n = map_entries(fd);
	for (i = 0; sq && i < n; i++) {
		if (bpf_map_lookup_elem(fd, &i, sq) || !sq->live)
			continue;
		m = dev_get(d, sq->dev);
		if (m)
			modes_add(m, sq->flags);
		p = proc_get(d, sq->tgid);
		if (p)
			modes_add(&p->sq, sq->flags);
		if (d->nsqs < SQS_MAX && d->sqs)
			d->sqs[d->nsqs++] = (struct sq_count){
				.dev = sq->dev, .ts = sq->key.ts,
				.id = sq->key.id, .tgid = sq->tgid,
				.flags = sq->flags, .sqes = sq->tail };
	}
	close(fd);
	if (!sq)
		return -ENOMEM;
	free(sq);
	return 0;
}

/* The tracked processes: ring, marks consumed, taints. */
static int read_procs(struct doctor *d)
{
	int fd = private_map(d->pin, "procs", sizeof(struct st_proc));
	struct st_proc sp;
	struct proc *p;
	__u32 i, n;

	if (fd < 0)
		return fd;
	n = map_entries(fd);
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &i, &sp) || !sp.tgid)
			continue;
		p = proc_get(d, sp.tgid);
		if (!p)
			break;
		p->tracked = true;
		p->ns_tgid = sp.ns_tgid;
		p->ring = sp.ring;
		p->seen = sp.seen;
		p->taint = sp.taint;
		p->host_taint = sp.host_taint;
		p->journal = sp.journal;
	}
	close(fd);
	return i < n ? -ENOMEM : 0;
}

/* ---------------------------------------------------------------------- */
/* What each process shows                                                */
/* ---------------------------------------------------------------------- */

/* How far the process wrote its ring: its header, from its memory (root). */
static void read_ring_head(struct proc *p)
{
	struct steptime_ring h;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/mem", p->tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		p->ring_read = -errno;
		return;
	}
	if (pread(fd, &h, offsetof(struct steptime_ring, res),
		  (off_t)p->ring) != (ssize_t)offsetof(struct steptime_ring, res))
		p->ring_read = -EIO;
	else if (h.magic != STEPTIME_RING_MAGIC)
		p->ring_read = -EPROTO;
	else
		p->ring_read = 0;
	p->head = h.head;
	close(fd);
}

/* The kick files of the load: is @dev:@ino (of /proc/PID/maps) one? */
static bool kick_file(const struct doctor *d, unsigned int maj,
		      unsigned int min, __u64 ino)
{
	int i;

	for (i = 0; d->hdr_ok && i < STEPTIME_KICK_LIBS; i++)
		if (d->hdr.kick[i].ino && d->hdr.kick[i].ino == ino &&
		    major(d->hdr.kick[i].dev) == maj &&
		    minor(d->hdr.kick[i].dev) == min)
			return true;
	return false;
}

/* The libraries that decide what the process can show. */
static void read_libs(const struct doctor *d, struct proc *p)
{
	char path[64], line[PATH_MAX + 128], *file, *base;
	unsigned int maj, min;
	unsigned long long ino;
	int l, off;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", p->tgid);
	f = fopen(path, "re");
	if (!f) {
		p->maps_err = -errno;
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		off = 0;
		if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &ino,
			   &off) < 3 || !off)
			continue;
		file = line + off;
		file[strcspn(file, "\n")] = '\0';
		base = strrchr(file, '/');
		base = base ? base + 1 : file;
		for (l = 0; l < L_NUM; l++) {
			if (strncmp(base, lib_prefix[l], strlen(lib_prefix[l])) ||
			    p->lib[l][0])
				continue;
			snprintf(p->lib[l], sizeof(p->lib[l]), "%s", file);
			if (l == L_STEPTIME)
				p->kicked = kick_file(d, maj, min, ino);
		}
	}
	fclose(f);
}

static void read_steps(struct doctor *d)
{
	const struct steptime_step_stats *s;
	struct snap snap;
	struct proc *p;
	size_t i;

	d->steps_err = snap_read(d->pin, &snap);
	if (d->steps_err)
		return;
	for (i = 0; i < snap.n; i++) {
		s = &snap.steps[i];
		if (d->pid && s->tgid != (__u32)d->pid &&
		    s->ns_tgid != (__u32)d->pid)
			continue;
		p = proc_get(d, s->tgid);
		if (!p)
			break;
		p->ns_tgid = s->ns_tgid;
		p->recs++;
		p->done += s->state == STEPTIME_STEP_DONE;
		p->ended += s->state == STEPTIME_STEP_ENDED;
		p->open += s->state == STEPTIME_STEP_OPEN;
		p->incomplete += s->state == STEPTIME_STEP_INCOMPLETE;
		p->rec_flags |= s->flags;
		if ((s->flags & STEPTIME_F_DEV_START) &&
		    (s->flags & STEPTIME_F_DEV_END)) {
			p->dev_steps++;
			p->dev_event_steps += !!(s->flags & STEPTIME_F_DEV_EVENT);
		}
		p->stream_steps += !!(s->flags & STEPTIME_F_STREAM);
		/* A journal's completions have no reports to compare. */
		if (!(s->flags & (STEPTIME_F_UIO | STEPTIME_F_JOURNAL))) {
			p->completions += s->completions;
			p->reported += s->reported;
		}
	}
	snap_free(&snap);
}

static void examine(struct doctor *d, struct proc *p)
{
	struct proc_labels l;

	p->exited = proc_exited(p->tgid);
	if (!proc_labels_read(p->tgid, &l))
		memcpy(p->comm, l.comm, sizeof(p->comm));
	if (!p->exited) {
		read_libs(d, p);
		if (p->ring)
			read_ring_head(p);
	} else {
		p->maps_err = -ESRCH;	/* its libraries went with it */
	}
	judge_marks(d, p);
	judge_device(p);
	judge_tasks(d, p);
}

static int proc_cmp(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

static void read_marks_hdr(struct doctor *d)
{
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, i;

	snprintf(path, sizeof(path), "%s/marks", d->pin);
	fd = bpf_obj_get_opts(path, &(struct bpf_obj_get_opts){
		.sz = sizeof(struct bpf_obj_get_opts),
		.file_flags = BPF_F_RDONLY });
	if (fd < 0)
		return;
	d->hdr_ok = !bpf_map_lookup_elem(fd, &zero, &d->hdr);
	close(fd);
	for (i = 0; d->hdr_ok && i < STEPTIME_KICK_LIBS; i++)
		d->kick_files += !!d->hdr.kick[i].ino;
}

/*
 * The driver's count of each mapped SQ (its /proc hw_sq files) beside
 * steptime's: what the first user of a real host checks the counts with.
 */
static void read_driver_counts(struct doctor *d)
{
	struct hw_sq *drv = calloc(SQS_MAX, sizeof(*drv));
	int i, n, k;

	n = drv ? hw_sq_read(HW_SQ_ROOT, drv, SQS_MAX) : -ENOMEM;
	if (n > SQS_MAX)
		n = SQS_MAX;
	if (n > 0) {
		d->checks = calloc((size_t)n, sizeof(*d->checks));
		if (!d->checks)
			n = -ENOMEM;
	}
	d->nchecks = n < 0 ? n : 0;
	for (i = 0; i < n; i++) {
		struct sq_check *c;

		if (!drv[i].counted || (d->pid && drv[i].pid != d->pid))
			continue;
		c = &d->checks[d->nchecks++];
		c->drv = drv[i];
		for (k = 0; k < (int)d->nsqs; k++)
			if (d->sqs[k].dev == drv[i].dev &&
			    d->sqs[k].ts == drv[i].ts &&
			    d->sqs[k].id == drv[i].id &&
			    d->sqs[k].tgid == (__u32)drv[i].pid)
				c->st = &d->sqs[k];
	}
	free(drv);
}

/* Everything, once steptime__read_info() succeeded. Return: 0 or -ENOMEM. */
int gather(struct doctor *d)
{
	size_t i, keep = 0;

	read_marks_hdr(d);
	steptime__read_counters(d->pin, &d->cnt);
	d->nprogs = steptime__read_progs(d->pin, d->progs, PROGS_MAX);
	d->priv_err = d->nprogs < 0 ? d->nprogs : read_procs(d);
	if (!d->priv_err)
		d->priv_err = read_sqs(d);
	if (d->priv_err == -ENOMEM)
		return -ENOMEM;
	read_steps(d);
	if (!d->priv_err)
		read_driver_counts(d);
	/* -p: that process alone, by its kernel or namespace pid. */
	for (i = 0; i < d->nprocs; i++) {
		struct proc *p = &d->procs[i];

		if (!d->pid || p->tgid == (__u32)d->pid ||
		    p->ns_tgid == (__u32)d->pid)
			d->procs[keep++] = *p;
	}
	d->nprocs = keep;
	/* One steptime never met: what it has (its libraries) says why. */
	if (d->pid && !d->nprocs && !proc_get(d, (__u32)d->pid))
		return -ENOMEM;
	qsort(d->procs, d->nprocs, sizeof(*d->procs), proc_cmp);
	for (i = 0; i < d->nprocs; i++)
		examine(d, &d->procs[i]);
	return 0;
}

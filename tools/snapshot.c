// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the steptime commands read: the steps map as a snapshot grouped by
 * process, each process's identity and job labels from /proc, counters by
 * name and the list of those that are losses.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "snapshot.h"

#define LOSS_NAME(f) #f,
const char *const loss_names[] = { STEPTIME_LOSSES(LOSS_NAME) };
#undef LOSS_NAME
const size_t loss_count = sizeof(loss_names) / sizeof(loss_names[0]);

#define COUNTER_CASE(field)				\
	if (!strcmp(name, #field))			\
		return c->field;

__u64 counter_get(const struct steptime_counters *c, const char *name)
{
	STEPTIME_COUNTERS(COUNTER_CASE)
	return 0;
}

/* Read a /proc file of @tgid into @buf (NUL-terminated). Return: length or -errno. */
static ssize_t proc_read(__u32 tgid, const char *what, char *buf, size_t len)
{
	char path[64];
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/%s", tgid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - (size_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

__u64 proc_start(__u32 tgid)
{
	char buf[1024], *p;
	int field;

	if (proc_read(tgid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	/* comm may hold spaces and parentheses: fields start after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

bool proc_exited(__u32 tgid)
{
	char buf[1024], *p;

	if (proc_read(tgid, "stat", buf, sizeof(buf)) <= 0)
		return true;
	/* The state, after "pid (comm) ": a zombie has exited, unreaped. */
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

/* Copy a label value: printable ASCII only, cut to @len - 1 bytes. */
static void label_set(char *dst, size_t len, const char *v)
{
	size_t i;

	for (i = 0; v[i] && i < len - 1; i++)
		dst[i] = v[i] >= 0x20 && v[i] < 0x7f ? v[i] : '_';
	dst[i] = '\0';
}

/*
 * The first of @names present in the environment block @env of @n bytes,
 * other than @unset: a launcher's placeholder for "no value".
 */
static const char *env_find(const char *env, size_t n, const char *const *names,
			    const char *unset)
{
	const char *p, *v;
	size_t len;

	for (; *names; names++) {
		len = strlen(*names);
		for (p = env; p < env + n; p += strlen(p) + 1) {
			if (strncmp(p, *names, len) || p[len] != '=' || !p[len + 1])
				continue;
			v = p + len + 1;
			if (!unset || strcmp(v, unset))
				return v;
		}
	}
	return NULL;
}

int proc_labels_read(__u32 tgid, struct proc_labels *l)
{
	/*
	 * The schedulers' job before torchrun's run id: every torchrun job
	 * started without --rdzv-id has the run id "none" (never a job), and
	 * one scheduler job may hold several torchrun runs.
	 */
	static const char *const job[] = { "STEPTIME_JOB_ID", "JOB_ID",
		"SLURM_JOB_ID", "VC_JOB_NAME", "PBS_JOBID", "LSB_JOBID",
		"TORCHELASTIC_RUN_ID", NULL };
	static const char *const rank[] = { "RANK", "RANK_ID", "SLURM_PROCID",
		"OMPI_COMM_WORLD_RANK", NULL };
	static const char *const local[] = { "LOCAL_RANK", "SLURM_LOCALID",
		"OMPI_COMM_WORLD_LOCAL_RANK", NULL };
	static const char *const world[] = { "WORLD_SIZE", "RANK_SIZE",
		"SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", NULL };
	static const char *const device[] = { "STEPTIME_DEVICE",
		"ASCEND_DEVICE_ID", "DEVICE_ID", NULL };
	struct {
		char *dst;
		size_t len;
		const char *const *names;
		const char *unset;
	} map[] = {
		{ l->job, sizeof(l->job), job, "none" },
		{ l->rank, sizeof(l->rank), rank, NULL },
		{ l->local_rank, sizeof(l->local_rank), local, NULL },
		{ l->world_size, sizeof(l->world_size), world, NULL },
		{ l->device, sizeof(l->device), device, NULL },
	};
	static char env[64 * 1024];	/* a bounded prefix of the environment */
	const char *v;
	ssize_t n;
	size_t i;

	memset(l, 0, sizeof(*l));
	n = proc_read(tgid, "comm", l->comm, sizeof(l->comm));
	if (n < 0)
		return (int)n;
	l->comm[strcspn(l->comm, "\n")] = '\0';
	label_set(l->comm, sizeof(l->comm), l->comm);
	n = proc_read(tgid, "environ", env, sizeof(env));
	if (n <= 0)
		return 0;	/* not ours to read: no job labels */
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		v = env_find(env, (size_t)n, map[i].names, map[i].unset);
		if (v)
			label_set(map[i].dst, map[i].len, v);
	}
	return 0;
}

int proc_filter_opt(const char *cmd, int c, const char *arg,
		    struct proc_filter *f)
{
	unsigned long long v;
	int err;

	switch (c) {
	case 'p':
		err = cli_opt_ull(cmd, "--pid", arg, 1, INT_MAX, &v);
		f->pid = (__u32)v;
		return err;
	case 'R':
		err = cli_opt_ull(cmd, "--rank", arg, 0, INT_MAX, &v);
		f->rank = arg;
		return err;
	case 'D':
		err = cli_opt_ull(cmd, "--device", arg, 0, INT_MAX, &v);
		f->device = arg;
		return err;
	case 'J':
		if (!*arg || strlen(arg) >= LABEL_MAX)
			return cli_usage_error(cmd, "--job: '%s' is not a job id (1 to %d bytes)",
					       arg, LABEL_MAX - 1);
		f->job = arg;
		return 0;
	}
	return cli_usage_error(cmd, NULL);
}

/* Label @have equals @want (NULL: any); "007" is rank 7. */
static bool label_is(const char *have, const char *want, bool number)
{
	unsigned long long a, b;

	if (!want)
		return true;
	if (!number)
		return !strcmp(have, want);
	return !cli_parse_ull(have, 10, 0, ULLONG_MAX, &a) &&
	       !cli_parse_ull(want, 10, 0, ULLONG_MAX, &b) && a == b;
}

bool proc_filter_match(const struct proc_filter *f, __u32 tgid,
		       __u32 ns_tgid, const struct proc_labels *l)
{
	struct proc_labels own;

	if (f->pid && tgid != f->pid && ns_tgid != f->pid)
		return false;
	if (!proc_filter_labels(f))
		return true;
	if (!l) {
		if (proc_labels_read(tgid, &own))
			return false;
		l = &own;
	}
	return label_is(l->rank, f->rank, true) &&
	       label_is(l->job, f->job, false) &&
	       label_is(l->device, f->device, true);
}

static int step_cmp_proc(const void *a, const void *b)
{
	const struct steptime_step_stats *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->index_id != y->index_id)
		return x->index_id < y->index_id ? -1 : 1;
	return 0;
}

int snap_read_ns(const char *pin, __u32 pidns_ino, struct snap *snap)
{
	struct steptime_reader_opts ro = {
		.sz = sizeof(ro), .pin_dir = pin, .pidns_ino = pidns_ino,
	};
	struct steptime_reader *r;
	size_t i = 0, n;

	memset(snap, 0, sizeof(*snap));
	r = steptime_reader__open(&ro);
	if (!r)
		return -errno;
	n = steptime_reader__count(r);
	snap->steps = calloc(n ? n : 1, sizeof(*snap->steps));
	if (!snap->steps) {
		steptime_reader__free(r);
		return -ENOMEM;
	}
	while (i < n && !steptime_reader__next(r, &snap->steps[i]))
		i++;
	snap->n = i;
	steptime_reader__free(r);
	qsort(snap->steps, snap->n, sizeof(*snap->steps), step_cmp_proc);
	return 0;
}

int snap_read(const char *pin, struct snap *snap)
{
	return snap_read_ns(pin, 0, snap);
}

void snap_free(struct snap *snap)
{
	free(snap->steps);
	memset(snap, 0, sizeof(*snap));
}

size_t snap_group_end(const struct snap *snap, size_t i)
{
	__u32 tgid = snap->steps[i].tgid;

	while (i < snap->n && snap->steps[i].tgid == tgid)
		i++;
	return i;
}

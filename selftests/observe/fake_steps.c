// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test and bench fixture: pins maps shaped like steptime's (steps, counters,
 * info) under a directory, filled with known step records, so that
 * `steptime stat|trace|export|top` can be checked on the host, where
 * npusim cannot run, against values the test knows independently.
 *
 *   fake_steps PIN [--entries N] [--open] [--incomplete] [--uio] [--slow TGID]
 *              [--keep K] [--nodev K] [--exited K] [--run SECS --rate HZ]
 *              [--counter NAME=V]... [--json FILE] TGID:STEPS...
 *
 * Step k (1..STEPS) of the j-th process (from 0): index id k, START at
 * T0 + k * 10 ms, host time 2 ms + ((k * 7919 + j * 104729) mod 5000) us,
 * device time 3/4 of it (3x for --slow's process), k mod 7 + 1 tasks all
 * complete, an error every 11th step, 1.5 us per submit ioctl. --open adds
 * an open step STEPS + 1 (START only); --incomplete makes the last step
 * incomplete; --uio makes step STEPS - 1 one of a process with uio_d SQs
 * (STEPTIME_F_UIO, ended, the kernel's partial task counts). --nodev K:
 * step K is done, stream-marked, its device time not yet read back. --json writes what was pinned, one object per step, with
 * this program's own field names (not libsteptime's formatter). --keep K:
 * only the last K steps of each process are pinned (steptime keeps 16).
 * --exited K: before each process's steps, steps 1..K of an exited process
 * that had the same pid (STEPTIME_F_EXITED, 100 + k tasks, other times),
 * which the live process's steps 1..STEPS then replace, as the BPF program
 * does (steps_pid_reused). --run SECS --rate HZ: after pinning (and
 * printing "pinned"), each process finishes HZ more steps a second for SECS
 * seconds, keeping its last STEPTIME_PROC_STEPS records as the BPF program
 * does (steps_recycled), the counters updated after each record; --json
 * is written at the end, with every step pinned. JSON records carry
 * "exited" (0, 1).
 * FAKE_STEPS_LRU=1: an LRU hash, like steptime's map before ABI 2.
 * Creates the directory; removes nothing (rm -rf PIN afterwards).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <steptime/abi.h>

#define FREQ_HZ		100000000ull
#define PERIOD_NS	10000000ull

static int pin_map(const char *dir, const char *name, enum bpf_map_type type,
		   __u32 key, __u32 value, __u32 entries)
{
	char path[4096];
	int fd;

	fd = bpf_map_create(type, name, key, value, entries, NULL);
	if (fd < 0) {
		fprintf(stderr, "fake_steps: create %s: %s\n", name, strerror(errno));
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (bpf_obj_pin(fd, path)) {
		fprintf(stderr, "fake_steps: pin %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/*
 * The PID namespace the process runs in and its pid there, as the BPF
 * program records them (export --pidns filters on them); the initial
 * namespace's when /proc does not tell.
 */
static void pidns_of(__u32 tgid, struct steptime_step_stats *s)
{
	static __u32 last_tgid, last_ino, last_ns_tgid;	/* fill() asks per step */
	char path[64], line[256];
	struct stat st;
	FILE *f;

	if (tgid && tgid == last_tgid) {
		s->pidns_ino = last_ino;
		s->ns_tgid = last_ns_tgid;
		return;
	}
	s->ns_tgid = tgid;
	s->pidns_ino = 0xeffffffc;
	snprintf(path, sizeof(path), "/proc/%u/ns/pid", tgid);
	if (!stat(path, &st))
		s->pidns_ino = (__u32)st.st_ino;
	snprintf(path, sizeof(path), "/proc/%u/status", tgid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6))
			s->ns_tgid = (__u32)strtoul(strrchr(line, '\t') + 1, NULL, 10);
	fclose(f);
	last_tgid = tgid;
	last_ino = s->pidns_ino;
	last_ns_tgid = s->ns_tgid;
}

static void fill(struct steptime_step_stats *s, __u32 tgid, unsigned int j,
		 __u64 k, __u64 t0, bool slow)
{
	__u64 host = 2000000ull + (k * 7919 + j * 104729ull) % 5000 * 1000;
	__u64 dev = host * 3 / 4 * (slow ? 4 : 1);

	memset(s, 0, sizeof(*s));
	s->tgid = tgid;
	pidns_of(tgid, s);
	s->uid = (__u32)geteuid();	/* whose phase files are trusted */
	s->index_id = k;
	s->stream = 3;
	s->state = STEPTIME_STEP_DONE;
	s->flags = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END |
		   STEPTIME_F_DEV_START | STEPTIME_F_DEV_END | STEPTIME_F_STREAM;
	s->host_start_ns = t0 + k * PERIOD_NS;
	s->host_end_ns = s->host_start_ns + host;
	if (k > 1) {
		s->flags |= STEPTIME_F_GAP;
		s->gap_ns = PERIOD_NS - (2000000ull + ((k - 1) * 7919 + j * 104729ull) % 5000 * 1000);
	}
	s->dev_start_ticks = 5000000ull + k * (PERIOD_NS / 10);
	s->dev_end_ticks = s->dev_start_ticks + dev / 10;
	s->device_time_ns = dev;
	s->tasks = k % 7 + 1;
	s->completions = s->tasks;
	s->reported = 1;
	s->errors = k % 11 == 0;
	s->submit_ioctls = s->tasks;
	s->submit_ioctl_ns = s->tasks * 1500;
	s->first_submit_ns = s->host_start_ns + 100000;
	s->last_submit_ns = s->first_submit_ns + s->tasks * 10000;
	s->last_complete_ns = s->host_end_ns - 50000;
	s->lat_sum_ns = s->tasks * 20000;
	s->lat_hist[14] = (__u32)s->tasks;
}

static void json(FILE *f, const struct steptime_step_stats *s, bool *first)
{
	fprintf(f, "%s{\"tgid\": %u, \"index\": %llu, \"state\": %u, "
		"\"start\": %llu, \"end\": %llu, \"device_ns\": %llu, "
		"\"has_device\": %d, \"tasks\": %llu, \"completions\": %llu, "
		"\"errors\": %llu, \"submits\": %llu, \"submit_ns\": %llu, "
		"\"exited\": %d}",
		*first ? "[\n" : ",\n", s->tgid, (unsigned long long)s->index_id,
		s->state, (unsigned long long)s->host_start_ns,
		(unsigned long long)s->host_end_ns,
		(unsigned long long)s->device_time_ns,
		!!(s->flags & STEPTIME_F_DEV_END), (unsigned long long)s->tasks,
		(unsigned long long)s->completions,
		(unsigned long long)s->errors,
		(unsigned long long)s->submit_ioctls,
		(unsigned long long)s->submit_ioctl_ns,
		!!(s->flags & STEPTIME_F_EXITED));
	*first = false;
}

#define SET_COUNTER(field) if (!strcmp(name, #field)) { c->field = v; return 0; }

static int counter_set(struct steptime_counters *c, const char *arg)
{
	char name[64];
	unsigned long long v;

	if (sscanf(arg, "%63[a-z_]=%llu", name, &v) != 2)
		return -EINVAL;
	STEPTIME_COUNTERS(SET_COUNTER)
	return -ENOENT;
}

/* What is pinned, and its record. */
struct fake {
	int steps_fd, cnt_fd;
	struct steptime_counters cnt;
	FILE *jf;
	bool first;
};

static void step_put(struct fake *f, const struct steptime_step_stats *s)
{
	struct steptime_step_key key = { .tgid = s->tgid, .index_id = s->index_id };

	if (bpf_map_update_elem(f->steps_fd, &key, s, BPF_ANY)) {
		fprintf(stderr, "fake_steps: update: %s\n", strerror(errno));
		exit(1);
	}
	f->cnt.steps++;
	f->cnt.steps_done += s->state == STEPTIME_STEP_DONE;
	f->cnt.steps_incomplete += s->state == STEPTIME_STEP_INCOMPLETE;
	f->cnt.steps_ended += s->state == STEPTIME_STEP_ENDED;
	if (f->jf)
		json(f->jf, s, &f->first);
}

/* All of a counter on CPU 0: the reader sums the CPUs. */
static void counters_put(struct fake *f)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 zero = 0;
	void *percpu;

	percpu = calloc((size_t)ncpu, sizeof(f->cnt));
	if (!percpu)
		exit(1);
	memcpy(percpu, &f->cnt, sizeof(f->cnt));
	if (bpf_map_update_elem(f->cnt_fd, &zero, percpu, BPF_ANY)) {
		fprintf(stderr, "fake_steps: counters: %s\n", strerror(errno));
		exit(1);
	}
	free(percpu);
}

/* An exited process's steps 1..@n under @tgid: the live one's replace them. */
static void exited_put(struct fake *f, __u32 tgid, unsigned int j, __u64 n,
		       __u64 t0)
{
	struct steptime_step_stats s;
	__u64 k;

	for (k = 1; k <= n; k++) {
		fill(&s, tgid, j + 1000, k, t0 - 100 * PERIOD_NS, false);
		s.flags |= STEPTIME_F_EXITED;
		s.tasks = s.completions = s.submit_ioctls = 100 + k;
		step_put(f, &s);
	}
}

/*
 * --run: each of @ntgid processes finishes @rate steps a second for @secs
 * seconds after its step @last[j], its oldest record deleted past
 * STEPTIME_PROC_STEPS.
 */
static void run_steps(struct fake *f, const __u32 *tgid, __u64 *last,
		      unsigned int ntgid, double secs, double rate, __u64 t0)
{
	__u64 period = (__u64)(1e9 / rate), end = now_ns() + (__u64)(secs * 1e9);
	struct steptime_step_key key = {};
	struct steptime_step_stats s;
	struct timespec ts;
	__u64 next = now_ns();
	unsigned int j;

	while (next < end) {
		next += period;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		for (j = 0; j < ntgid; j++) {
			fill(&s, tgid[j], j, ++last[j], t0, false);
			step_put(f, &s);
			key.tgid = tgid[j];
			if (last[j] <= STEPTIME_PROC_STEPS)
				continue;
			key.index_id = last[j] - STEPTIME_PROC_STEPS;
			if (!bpf_map_delete_elem(f->steps_fd, &key))
				f->cnt.steps_recycled++;
		}
		counters_put(f);
	}
}

#define MAX_PROCS	1024

int main(int argc, char **argv)
{
	static __u32 tgids[MAX_PROCS];
	static __u64 lasts[MAX_PROCS];
	struct fake f = { .first = true };
	struct steptime_info info = {};
	struct steptime_step_stats s;
	unsigned int entries = 8192, j = 0, slow = 0;
	__u64 keep = 0, nodev = 0, exited = 0;
	double run_secs = 0, rate = 0;
	bool open_step = false, incomplete = false, uio = false;
	const char *dir, *json_file = NULL;
	int info_fd, i;
	__u64 t0 = 0, k, n;
	__u32 zero = 0;
	unsigned int tgid;

	if (argc < 2) {
		fprintf(stderr, "usage: fake_steps PIN [options] TGID:STEPS...\n");
		return 2;
	}
	dir = argv[1];
	mkdir(dir, 0700);
	for (i = 2; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--entries") && i + 1 < argc)
			entries = (unsigned int)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--open"))
			open_step = true;
		else if (!strcmp(argv[i], "--incomplete"))
			incomplete = true;
		else if (!strcmp(argv[i], "--uio"))
			uio = true;
		else if (!strcmp(argv[i], "--slow") && i + 1 < argc)
			slow = (unsigned int)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
			keep = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--nodev") && i + 1 < argc)
			nodev = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--exited") && i + 1 < argc)
			exited = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--run") && i + 1 < argc)
			run_secs = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
			rate = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json_file = argv[++i];
		else if (!strcmp(argv[i], "--counter") && i + 1 < argc) {
			if (counter_set(&f.cnt, argv[++i])) {
				fprintf(stderr, "fake_steps: bad counter '%s'\n", argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "fake_steps: bad option '%s'\n", argv[i]);
			return 2;
		}
	}
	if ((run_secs > 0) != (rate > 0) || argc - i > MAX_PROCS) {
		fprintf(stderr, "fake_steps: --run needs --rate; at most %d processes\n",
			MAX_PROCS);
		return 2;
	}
	f.steps_fd = pin_map(dir, "steps", getenv("FAKE_STEPS_LRU") ? BPF_MAP_TYPE_LRU_HASH : BPF_MAP_TYPE_HASH, sizeof(struct steptime_step_key),
			     sizeof(s), entries);
	f.cnt_fd = pin_map(dir, "counters", BPF_MAP_TYPE_PERCPU_ARRAY, 4,
			   sizeof(f.cnt), 1);
	info_fd = pin_map(dir, "info", BPF_MAP_TYPE_ARRAY, 4, sizeof(info), 1);
	if (json_file && !(f.jf = fopen(json_file, "w"))) {
		perror(json_file);
		return 1;
	}
	for (; i < argc; i++, j++) {
		if (sscanf(argv[i], "%u:%llu", &tgid, (unsigned long long *)&n) != 2) {
			fprintf(stderr, "fake_steps: bad TGID:STEPS '%s'\n", argv[i]);
			return 2;
		}
		t0 = now_ns() - (n + 2) * PERIOD_NS - 1000000000ull;
		exited_put(&f, tgid, j, exited, t0);
		for (k = keep && keep < n ? n - keep + 1 : 1; k <= n + open_step; k++) {
			fill(&s, tgid, j, k, t0, tgid == slow);
			if (k + 1 == n && uio) {
				s.state = STEPTIME_STEP_ENDED;
				s.flags |= STEPTIME_F_UIO;
				s.completions = s.tasks - 1;
			}
			if (k == nodev) {
				s.flags &= ~(__u32)(STEPTIME_F_DEV_START |
						    STEPTIME_F_DEV_END);
				s.dev_start_ticks = 0;
				s.dev_end_ticks = 0;
				s.device_time_ns = 0;
			}
			if (k == n && incomplete) {
				s.state = STEPTIME_STEP_INCOMPLETE;
				s.flags &= ~(__u32)(STEPTIME_F_HOST_END | STEPTIME_F_DEV_END);
			}
			if (k == n + 1) {
				s.state = STEPTIME_STEP_OPEN;
				s.flags &= ~(__u32)(STEPTIME_F_HOST_END | STEPTIME_F_DEV_END);
				s.completions = 0;
			}
			step_put(&f, &s);
		}
		tgids[j] = tgid;
		lasts[j] = n;
	}
	counters_put(&f);
	info.magic = STEPTIME_MAGIC;
	info.version = STEPTIME_ABI_VERSION;
	info.counter_freq_hz = FREQ_HZ;
	info.loaded_ns = now_ns();
	snprintf(info.device, sizeof(info.device), "/dev/fake");
	snprintf(info.profile, sizeof(info.profile), "fake");
	if (bpf_map_update_elem(info_fd, &zero, &info, BPF_ANY)) {
		fprintf(stderr, "fake_steps: info: %s\n", strerror(errno));
		return 1;
	}
	if (run_secs > 0) {
		printf("pinned\n");
		fflush(stdout);
		run_steps(&f, tgids, lasts, j, run_secs, rate, t0);
	}
	if (f.jf) {
		fputs(f.first ? "[]\n" : "\n]\n", f.jf);
		fclose(f.jf);
	}
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Footprint (host): the kernel memory of every map of a loaded steptime at
 * its default limits (memlock from fdinfo, maps found through the pinned
 * links' programs), per 1000 steps, and how long `steptime stat` takes over
 * 100,000 steps.
 *
 * The default steps map (LRU) holds 8192 steps; for 100,000 a private
 * steps map is made from steptime's own BPF object (same key/value BTF,
 * max_entries raised, no program loaded), pinned alone in a directory of
 * its own: `steptime stat` opens nothing else. Its times are compared with
 * a bare walk of the same map (get_next_key + lookup, no sort, no output),
 * timed in the same rounds, and with another build's CLI when
 * STEPTIME_CLI_BASE names one (`stat -o json`, before or after this one's
 * in turn).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <steptime/steptime.h>
#include <steptime/loader.h>
#include "bench.h"
#include "steptime.skel.h"

#define STAT_STEPS	100000
#define STAT_MAP_MAX	131072
#define STAT_DIR	BENCH_PIN_DIR "_100k"
#define MAX_IDS		64

extern char **environ;

static long long fd_memlock(int fd)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int add_id(__u32 *ids, int n, __u32 id)
{
	int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return n;
	if (n < MAX_IDS)
		ids[n++] = id;
	return n;
}

/* The maps the load's programs use. */
static int steptime_maps(__u32 *map_ids)
{
	struct steptime_prog progs[MAX_IDS];
	int nprogs, nmaps = 0, fd, i, k;
	__u32 ids[MAX_IDS];

	nprogs = steptime__read_progs(BENCH_PIN_DIR, progs, MAX_IDS);
	for (i = 0; i < nprogs; i++) {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);

		pi.nr_map_ids = MAX_IDS;
		pi.map_ids = (__u64)(unsigned long)ids;
		fd = bpf_prog_get_fd_by_id(progs[i].id);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &pi, &len))
			for (k = 0; k < (int)pi.nr_map_ids && k < MAX_IDS; k++)
				nmaps = add_id(map_ids, nmaps, ids[k]);
		close(fd);
	}
	return nmaps;
}

static void footprint(const struct bench_opts *o)
{
	struct steptime_load_opts lo = {
		.sz = sizeof(lo), .device = "/dev/null",
		.counter_freq_hz = BENCH_NULL_FREQ_HZ, .stars_version = 1,
		.attach_mode = STEPTIME_ATTACH_TP_BTF,
		.pin_dir = BENCH_PIN_DIR, .map_gid = -1,
	};
	long long total = 0, steps_mem = -1, mem;
	__u32 ids[MAX_IDS], steps_max = 0;
	char what[128], val[64], note[160];
	const char *why = bench_cannot_load();
	int n, i, fd, err;

	bench_section(o, "5a. Footprint: kernel memory of the maps",
		      "steptime loaded at its default limits (tp_btf on "
		      "/dev/null); memlock of each map from fdinfo.", "-");
	if (!why) {
		steptime__unload(BENCH_PIN_DIR);
		err = steptime__load(&lo);
		if (err)
			why = strerror(-err);
	}
	if (why) {
		snprintf(note, sizeof(note), "not run: %s", why);
		bench_row_text("maps", "-", note);
		bench_end();
		return;
	}
	n = steptime_maps(ids);
	for (i = 0; i < n; i++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);

		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		mem = fd_memlock(fd);
		close(fd);
		total += mem > 0 ? mem : 0;
		if (!strcmp(mi.name, "steps")) {
			steps_mem = mem;
			steps_max = mi.max_entries;
		}
		snprintf(what, sizeof(what), "map %s", mi.name);
		snprintf(val, sizeof(val), "%.1f KiB", mem / 1024.0);
		snprintf(note, sizeof(note), "type %u, %u x %u-byte values",
			 mi.type, mi.max_entries, mi.value_size);
		bench_row_text(what, val, note);
	}
	snprintf(val, sizeof(val), "%.2f MiB", total / 1048576.0);
	snprintf(note, sizeof(note), "%d maps", n);
	bench_row_text("all maps", val, note);
	if (steps_mem > 0 && steps_max) {
		snprintf(val, sizeof(val), "%.1f KiB",
			 steps_mem * 1000.0 / steps_max / 1024);
		snprintf(note, sizeof(note), "steps map memlock / %u entries x 1000 "
			 "(record %zu bytes + key %zu)", steps_max,
			 sizeof(struct steptime_step_stats),
			 sizeof(struct steptime_step_key));
		bench_row_text("per 1000 steps (steps map)", val, note);
	}
	snprintf(val, sizeof(val), "%zu bytes", sizeof(struct steptime_step_stats) + 8);
	bench_row_text("per finished step in the events ring", val,
		       "record + 8-byte ring header; the ring is 256 KiB");
	bench_end();
	steptime__unload(BENCH_PIN_DIR);
}

/* A private steps map of STAT_MAP_MAX entries, pinned at STAT_DIR/steps. */
static int stat_map(struct steptime_bpf **skelp)
{
	struct steptime_bpf *skel = steptime_bpf__open();
	struct bpf_program *p;
	char path[PATH_MAX];
	int err;

	if (!skel)
		return -errno;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, false);
	bpf_map__set_max_entries(skel->maps.steps, STAT_MAP_MAX);
	err = steptime_bpf__load(skel);
	if (err)
		goto fail;
	mkdir(STAT_DIR, 0700);
	snprintf(path, sizeof(path), "%s/steps", STAT_DIR);
	unlink(path);
	err = bpf_map__pin(skel->maps.steps, path);
	if (err)
		goto fail;
	*skelp = skel;
	return bpf_map__fd(skel->maps.steps);
fail:
	steptime_bpf__destroy(skel);
	return err;
}

/* Plausible done steps: 4 processes, 1 ms steps with 20 tasks each. */
static int stat_fill(int fd)
{
	struct steptime_step_stats v = {};
	struct steptime_step_key k = {};
	__u64 t = 1000000000ull;
	int i, j;

	for (i = 0; i < STAT_STEPS; i++) {
		k.tgid = 1000 + i % 4;
		k.index_id = i / 4 + 1;
		v.tgid = v.ns_tgid = k.tgid;
		v.index_id = k.index_id;
		v.stream = 3;
		v.state = STEPTIME_STEP_DONE;
		v.flags = STEPTIME_F_HOST_START | STEPTIME_F_HOST_END |
			  STEPTIME_F_DEV_START | STEPTIME_F_DEV_END |
			  STEPTIME_F_STREAM | STEPTIME_F_GAP;
		v.pidns_ino = 4026531836u;
		v.host_start_ns = t + (__u64)i * 250000;
		v.host_end_ns = v.host_start_ns + 990000;
		v.gap_ns = 10000;
		v.dev_start_ticks = 0x1000000000000ull + v.host_start_ns / 20;
		v.dev_end_ticks = v.dev_start_ticks + 49000 + i % 97;
		v.device_time_ns = (v.dev_end_ticks - v.dev_start_ticks) * 20;
		v.tasks = v.completions = 20;
		v.reported = 1;
		v.submit_ioctls = 20;
		v.submit_ioctl_ns = 20 * 3000;
		v.first_submit_ns = v.host_start_ns + 1000;
		v.last_submit_ns = v.host_start_ns + 900000;
		v.last_complete_ns = v.host_start_ns + 985000;
		v.lat_sum_ns = 20 * 50000;
		for (j = 14; j < 18; j++)
			v.lat_hist[j] = 5;
		if (bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST))
			return -errno;
	}
	return 0;
}

static double walk_ms(int fd, size_t *count)
{
	struct steptime_step_key key, next;
	struct steptime_step_stats v;
	__u64 t0 = bench_now_ns();
	void *prev = NULL;
	size_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &v))
			n++;
	}
	*count = n;
	return (bench_now_ns() - t0) / 1e6;
}

/* What one syscall per batch of entries could do instead. */
static double batch_ms(int fd, size_t *count)
{
	static struct steptime_step_key keys[1024];
	static struct steptime_step_stats vals[1024];
	struct steptime_step_key in, out;
	__u64 t0 = bench_now_ns();
	bool first = true;
	size_t n = 0;
	__u32 cnt;
	int err;

	do {
		cnt = 1024;
		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys,
					   vals, &cnt, NULL);
		if (err && errno != ENOENT)
			return -1;
		n += cnt;
		in = out;
		first = false;
	} while (!err);
	*count = n;
	return (bench_now_ns() - t0) / 1e6;
}

/*
 * Wall time of `@cli stat -o @fmt` (NULL: $STEPTIME_CLI, else the build's);
 * its CPU time (user + sys) in @cpu.
 */
static double stat_ms(const char *cli, const char *fmt, int *status,
		      double *cpu)
{
	const char *env = getenv("STEPTIME_CLI");
	char *argv[] = { (char *)(cli ? cli : env ? env : "build/steptime"),
			 "stat", "-o", (char *)fmt, "--pin", STAT_DIR, NULL };
	posix_spawn_file_actions_t fa;
	__u64 t0 = bench_now_ns();
	struct rusage ru;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	*status = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (*status)
		return -1;
	if (wait4(pid, status, 0, &ru) < 0)
		return -1;
	*cpu = ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
	       ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
	return (bench_now_ns() - t0) / 1e6;
}

static double reader_ms(size_t *count)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pin_dir = STAT_DIR };
	__u64 t0 = bench_now_ns();
	struct steptime_reader *r = steptime_reader__open(&ro);

	*count = steptime_reader__count(r);
	steptime_reader__free(r);
	return (bench_now_ns() - t0) / 1e6;
}

static void stat_time(const struct bench_opts *o)
{
	static const char *const fmts[] = { "json", "table", "csv" };
	/* Another build's CLI, timed in the same rounds (order alternating). */
	const char *base_cli = getenv("STEPTIME_CLI_BASE");
	struct series v[9] = {}, ratio[9] = {};
	double base_cpu = 0, base_t = 0;
	struct steptime_bpf *skel = NULL;
	char what[128], note[256], path[PATH_MAX];
	const char *why = bench_cannot_load();
	size_t walked = 0, read = 0, batched = 0;
	double base, t, cpu = 0;
	int fd = -1, r, i, st, bad = 0;

	snprintf(note, sizeof(note), "Wall time over %d steps (a private steps "
		 "map of %d entries with steptime's BTF); baseline: a bare "
		 "get_next_key + lookup walk of the same map in-process.",
		 STAT_STEPS, STAT_MAP_MAX);
	bench_section(o, "5b. Footprint: reading 100,000 steps", note,
		      "ratio to the bare walk: median [min, max]");
	if (!why) {
		fd = stat_map(&skel);
		st = fd < 0 ? fd : stat_fill(fd);
		if (st)
			why = strerror(-st);
	}
	if (why) {
		snprintf(note, sizeof(note), "not run: %s", why);
		bench_row_text("steptime stat over 100k steps", "-", note);
		goto out;
	}
	for (r = 0; r < o->rounds; r++) {
		base = walk_ms(fd, &walked);
		series_add(&v[0], base);
		if (base_cli && r % 2) {
			base_t = stat_ms(base_cli, "json", &st, &base_cpu);
			bad += st != 0;
		}
		for (i = 0; i < 3; i++) {
			t = stat_ms(NULL, fmts[i], &st, &cpu);
			bad += st != 0;
			series_add(&v[1 + i], t);
			series_add(&ratio[1 + i], t / base);
			if (i == 0)
				series_add(&v[6], cpu);
		}
		if (base_cli && !(r % 2)) {
			base_t = stat_ms(base_cli, "json", &st, &base_cpu);
			bad += st != 0;
		}
		if (base_cli) {
			series_add(&v[7], base_t);
			series_add(&ratio[7], v[1].v[v[1].n - 1] / base_t);
			series_add(&v[8], base_cpu);
			series_add(&ratio[8], v[6].v[v[6].n - 1] / base_cpu);
		}
		t = reader_ms(&read);
		series_add(&v[4], t);
		series_add(&ratio[4], t / base);
		t = batch_ms(fd, &batched);
		if (t > 0) {
			series_add(&v[5], t);
			series_add(&ratio[5], t / base);
		}
	}
	snprintf(note, sizeof(note), "%zu steps walked", walked);
	bench_row("bare map walk (baseline)", &v[0], "ms", NULL, note);
	for (i = 0; i < 3; i++) {
		snprintf(what, sizeof(what), "`steptime stat -o %s --pin DIR > /dev/null`",
			 fmts[i]);
		bench_row(what, &v[1 + i], "ms", &ratio[1 + i],
			  bad ? "SOME RUNS FAILED" : "process start included");
	}
	bench_row("`steptime stat -o json`: its CPU time (user + sys)", &v[6],
		  "ms", NULL, "a loaded machine inflates it less than the wall time");
	if (base_cli) {
		snprintf(note, sizeof(note), "STEPTIME_CLI_BASE=%s; ratio: "
			 "this CLI's / the base's, per round", base_cli);
		bench_row("base CLI: `stat -o json` wall", &v[7], "ms",
			  &ratio[7], note);
		bench_row("base CLI: `stat -o json` CPU", &v[8], "ms",
			  &ratio[8], "ratio: this CLI's CPU / the base's");
	}
	snprintf(note, sizeof(note), "%zu steps read", read);
	bench_row("steptime_reader__open() (snapshot + sort, in-process)", &v[4],
		  "ms", &ratio[4], note);
	snprintf(note, sizeof(note), "%zu steps; reference: what a batched "
		 "reader could reach", batched);
	if (v[5].n)
		bench_row("bpf_map_lookup_batch() walk, 1024 per call", &v[5],
			  "ms", &ratio[5], note);
	else
		bench_row_text("bpf_map_lookup_batch() walk", "-",
			       "not run: batch lookup failed on this map");
out:
	bench_end();
	snprintf(path, sizeof(path), "%s/steps", STAT_DIR);
	unlink(path);
	rmdir(STAT_DIR);
	steptime_bpf__destroy(skel);
}

int main(int argc, char **argv)
{
	struct bench_opts o;

	bench_parse(argc, argv, &o, "");
	setenv("STEPTIME_QUIET", "1", 1);
	libbpf_set_print(NULL);
	footprint(&o);
	stat_time(&o);
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The mark as an application pays it, apart from the bench's own code: a
 * process of its own, linked with libsteptime.so (the file the load's ring
 * kick probes, as `steptime load` probes the installed one), marking
 * through CANN's step API inside a session on objects made in advance,
 * against a bare clock_gettime(CLOCK_MONOTONIC) in the same process.
 *
 *   holdout MARKS ROUNDS    (steptime loaded, STEPTIME_PIN_DIR set)
 *
 * Prints one line per round, "CLOCK_NS MARK_NS" (ns per call, each the
 * best of SLICES slices; the two alternate, order swapped every round).
 * bench_mark runs it and prints the row and its verdict's ratio.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <acl/acl_prof.h>

#define SLICES	5

static volatile unsigned long sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double clock_slice(long n)
{
	struct timespec ts;
	double t0 = now_ns();
	long i;

	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
	return (now_ns() - t0) / n;
}

/* START and END on n / 2 objects made before the timing. */
static double mark_slice(long n)
{
	long i, steps = n / 2;
	aclprofStepInfo **s = calloc(steps, sizeof(*s));
	double t0, ns;

	if (!s)
		return 0;
	for (i = 0; i < steps; i++)
		s[i] = aclprofCreateStepInfo();
	t0 = now_ns();
	for (i = 0; i < steps; i++) {
		sink += aclprofGetStepTimestamp(s[i], ACL_STEP_START, NULL);
		sink += aclprofGetStepTimestamp(s[i], ACL_STEP_END, NULL);
	}
	ns = (now_ns() - t0) / (steps * 2);
	for (i = 0; i < steps; i++)
		aclprofDestroyStepInfo(s[i]);
	free(s);
	return ns;
}

static double best(double (*fn)(long), long n)
{
	double b = 0, v;
	int k;

	for (k = 0; k < SLICES; k++) {
		v = fn(n);
		if (v > 0 && (b == 0 || v < b))
			b = v;
	}
	return b;
}

/* aclprofStop() wrote the session's result file: not ours to keep. */
static void rm_dir(const char *dir)
{
	char path[4096];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/steptime_holdout.XXXXXX";
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, r;
	aclprofConfig *cfg;
	uint32_t dev = 0;
	double c, m;

	if (n < 2 * SLICES || rounds < 1 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: holdout MARKS ROUNDS\n");
		return 2;
	}
	cfg = aclprofInit(dir, strlen(dir)) == ACL_SUCCESS ?
	      aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE, NULL,
				  ACL_PROF_TRAINING_TRACE) : NULL;
	if (!cfg || aclprofStart(cfg) != ACL_SUCCESS) {
		fprintf(stderr, "holdout: aclprofInit/CreateConfig/Start failed\n");
		rm_dir(dir);
		return 1;
	}
	/* The first mark registers the ring: not timed, as in a long run. */
	mark_slice(2);
	for (r = 0; r < rounds; r++) {
		if (r % 2) {
			m = best(mark_slice, n / SLICES);
			c = best(clock_slice, n / SLICES);
		} else {
			c = best(clock_slice, n / SLICES);
			m = best(mark_slice, n / SLICES);
		}
		printf("%.3f %.3f\n", c, m);
		fflush(stdout);
	}
	aclprofStop(cfg);
	aclprofDestroyConfig(cfg);
	aclprofFinalize();
	rm_dir(dir);
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What an application pays to load steptime: the bytes it maps and the
 * time of a process start that loads it, against a process that loads
 * nothing (the baseline, timed in the same rounds), for
 *   - libsteptime.so.1, the app library (libc only), and
 *   - the app library with the loader linked in (libbpf, libelf, zlib and
 *     the embedded BPF object), as apps loaded it before the split:
 *     $(O)/bench/libsteptime-full.so, built for this benchmark only.
 * Each round starts BENCH_STARTS processes of each kind, interleaved; a
 * process is bench/appload_child.c (linked with libc alone), which
 * dlopen()s LIB (RTLD_NOW) and reports the file-backed bytes LIB and its
 * dependencies added to its maps.
 *
 * usage: bench_appload [-r ROUNDS] [-o FILE] [-e TEXT] DIR
 *   DIR holds libsteptime.so.1, bench/libsteptime-full.so and
 *   bench/appload_child ($(O)).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bench.h"

#define BENCH_STARTS	40

extern char **environ;

/* Start @n children loading @lib; ns per start. *@bytes: what one maps. */
static double starts(const char *self, const char *lib, int n, long long *bytes)
{
	char *argv[] = { (char *)self, (char *)lib, NULL };
	posix_spawn_file_actions_t fa;
	int i, p[2], st;
	__u64 t0, t = 0;
	pid_t pid;
	char buf[64];
	ssize_t len;

	for (i = 0; i < n; i++) {
		if (pipe(p))
			return -1;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, p[1], 1);
		posix_spawn_file_actions_addclose(&fa, p[0]);
		t0 = bench_now_ns();
		if (posix_spawn(&pid, self, &fa, NULL, argv, environ))
			return -1;
		close(p[1]);
		waitpid(pid, &st, 0);
		t += bench_now_ns() - t0;
		posix_spawn_file_actions_destroy(&fa);
		len = read(p[0], buf, sizeof(buf) - 1);
		close(p[0]);
		if (len <= 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return -1;
		buf[len] = '\0';
		*bytes = atoll(buf);
	}
	return (double)t / n;
}

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long long)st.st_size;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct series base = {}, v[2] = {}, ratio[2] = {};
	char self[PATH_MAX], libs[2][PATH_MAX], text[128];
	long long bytes[2] = { 0, 0 }, none_bytes;
	const char *names[2] = { "app library (libsteptime.so.1)",
				 "app library + loader (before the split)" };
	int first, r, k;
	double b;

	first = bench_parse(argc, argv, &o, "DIR");
	if (first >= argc)
		return 2;
	snprintf(self, sizeof(self), "%s/bench/appload_child", argv[first]);
	snprintf(libs[0], sizeof(libs[0]), "%s/libsteptime.so.1", argv[first]);
	snprintf(libs[1], sizeof(libs[1]), "%s/bench/libsteptime-full.so",
		 argv[first]);
	for (r = 0; r < o.rounds; r++) {
		b = starts(self, "none", BENCH_STARTS, &none_bytes);
		if (b < 0)
			return 1;
		series_add(&base, b / 1e3);
		for (k = 0; k < 2; k++) {
			double x = starts(self, libs[k], BENCH_STARTS, &bytes[k]);

			if (x < 0) {
				fprintf(stderr, "cannot load %s\n", libs[k]);
				return 1;
			}
			series_add(&v[k], x / 1e3);
			series_add(&ratio[k], x / b);
		}
	}
	bench_section(&o, "App load cost",
		      "A process that dlopen()s the library, against one that "
		      "loads nothing (process start to exit, us), and the "
		      "file-backed bytes the library adds to the process's maps.",
		      "vs. no library");
	bench_row("process start, no library (baseline)", &base, "us", NULL,
		  NULL);
	for (k = 0; k < 2; k++) {
		snprintf(text, sizeof(text), "maps %lld KiB (file %lld KiB)",
			 bytes[k] / 1024, file_size(libs[k]) / 1024);
		bench_row(names[k], &v[k], "us", &ratio[k], text);
	}
	bench_note("The app library's NEEDED entries are libc.so.6 alone "
		   "(`make check-host`); the loader lives in the steptime "
		   "command (libsteptime-loader.a).");
	bench_end();
	return 0;
}

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench_appload's child: a process linked with libc alone that dlopen()s
 * argv[1] ("none": nothing) and prints the file-backed bytes that added
 * to its mappings.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Sum of file-backed mappings of this process (bytes). */
static long long mapped_file_bytes(void)
{
	char line[4096];
	long long sum = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, ino;
		char path[4096] = "";

		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu %4095s", &lo, &hi, &ino,
			   path) >= 3 && ino && path[0] == '/')
			sum += (long long)(hi - lo);
	}
	fclose(f);
	return sum;
}

int main(int argc, char **argv)
{
	long long before = mapped_file_bytes(), after;
	const char *lib = argc > 1 ? argv[1] : "none";
	void *h;

	if (strcmp(lib, "none")) {
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
	}
	after = mapped_file_bytes();
	printf("%lld\n", after - before);
	return 0;
}


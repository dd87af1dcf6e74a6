// SPDX-License-Identifier: GPL-2.0
/*
 * A process that marks N steps and makes no ioctl of its own: linked with
 * libsteptime.so, so that the ring kick's uprobe sees it.
 *
 *   kick_marker N
 */
#include <stdio.h>
#include <stdlib.h>
#include <steptime/steptime.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0, i;
	struct steptime_step *s;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		s = steptime_step__new();
		if (!s)
			return 3;
		err = steptime_step__mark(s, STEPTIME_TAG_START, NULL) ?:
		      steptime_step__mark(s, STEPTIME_TAG_END, NULL);
		steptime_step__free(s);
	}
	if (err) {
		fprintf(stderr, "kick_marker: mark %ld: %d\n", i, err);
		return 2;
	}
	return 0;
}

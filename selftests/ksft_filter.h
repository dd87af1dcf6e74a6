/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test selection for the kselftest harness this project builds with (6.1's,
 * from Debian's linux-source-6.1), which runs every test: the options of
 * the 6.2 harness, so that the same command lines keep working on a newer
 * one.
 *
 *   -f FIXTURE  -v VARIANT  -t TEST  -r FIXTURE[.VARIANT].TEST
 *               run those (any of the options may repeat)
 *   -F, -V, -T, -R          skip those
 *   -l                      list the tests, run none
 *
 * Options are read in order and the first that names a test decides; with
 * no option naming it, a test runs unless some option selects (lower
 * case). e.g. `loader -r slow.npusim_auto_mode -t info` runs that test and
 * the info test of every variant of its fixture.
 *
 * A selection that keeps no test is an error: the harness would print
 * "1..0" and exit 0, a run that tested nothing passing.
 *
 * Include after kselftest_harness.h; TEST_HARNESS_MAIN then selects, and
 * a program with its own main() calls ksft_filter() first.
 */
#ifndef _STEPTIME_KSFT_FILTER_H
#define _STEPTIME_KSFT_FILTER_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KSFT_FILTER_OPTS	"lf:F:v:V:t:T:r:R:"

/* Whether "@f[.@v].@t" is @name. */
static inline bool ksft_filter_is(const char *name, const char *f,
				  const char *v, const char *t)
{
	char full[512];

	snprintf(full, sizeof(full), "%s%s%s.%s", f, v[0] ? "." : "", v, t);
	return !strcmp(full, name);
}

static inline bool ksft_filter_wants(int argc, char **argv, const char *f,
				     const char *v, const char *t)
{
	bool selecting = false, hit;
	int opt;

	optind = 1;
	while ((opt = getopt(argc, argv, KSFT_FILTER_OPTS)) != -1) {
		selecting |= islower(opt) && opt != 'l';
		switch (tolower(opt)) {
		case 'f':
			hit = !strcmp(optarg, f);
			break;
		case 'v':
			hit = !strcmp(optarg, v);
			break;
		case 't':
			hit = !strcmp(optarg, t);
			break;
		case 'r':
			hit = ksft_filter_is(optarg, f, v, t);
			break;
		default:
			hit = false;
		}
		if (hit)
			return islower(opt);
	}
	return !selecting;
}

/*
 * Rebuild the harness's lists with only the selected tests: one copy of a
 * fixture per variant that keeps any, with copies of its kept tests (the
 * harness runs every test of a fixture for each of its variants). 0, or
 * -1 after a usage message or when nothing is selected; with -l, lists
 * (maybe nothing) and exits.
 */
static inline int ksft_filter(int argc, char **argv)
{
	static struct __fixture_variant_metadata no_variant = { .name = "" };
	struct __fixture_metadata *f, *nf, *head = NULL, *tail = NULL;
	struct __fixture_variant_metadata *v, *nv;
	struct __test_metadata *t, *nt, *last;
	bool list = false;
	int opt;

	opterr = 1;
	optind = 1;
	while ((opt = getopt(argc, argv, KSFT_FILTER_OPTS)) != -1) {
		if (opt == '?') {
			fprintf(stderr, "usage: %s [-l] [-f|-F FIXTURE] [-v|-V VARIANT] [-t|-T TEST] [-r|-R FIXTURE[.VARIANT].TEST]...\n",
				argv[0]);
			return -1;
		}
		list |= opt == 'l';
	}
	for (f = __fixture_list; f; f = f->next) {
		for (v = f->variant ?: &no_variant; v; v = v->next) {
			nf = NULL;
			last = NULL;
			for (t = f->tests; t; t = t->next) {
				if (!ksft_filter_wants(argc, argv, f->name,
						       v->name, t->name))
					continue;
				if (list)
					printf("%s%s%s.%s\n", f->name,
					       v->name[0] ? "." : "", v->name,
					       t->name);
				if (!nf) {
					nf = calloc(1, sizeof(*nf));
					nv = calloc(1, sizeof(*nv));
					if (!nf || !nv)
						return -1;
					*nv = *v;
					nv->next = NULL;
					nv->prev = nv;
					nf->name = f->name;
					nf->variant = f->variant ? nv : NULL;
					nf->prev = nf;
				}
				nt = malloc(sizeof(*nt));
				if (!nt)
					return -1;
				*nt = *t;
				nt->fixture = nf;
				nt->next = NULL;
				if (last) {
					last->next = nt;
					nt->prev = last;
				} else {
					nf->tests = nt;
				}
				nf->tests->prev = nt;
				last = nt;
			}
			if (!nf)
				continue;
			if (tail) {
				tail->next = nf;
				nf->prev = tail;
			} else {
				head = nf;
			}
			head->prev = nf;
			tail = nf;
		}
	}
	if (list)
		exit(0);
	if (!head) {
		fprintf(stderr, "%s: no test matches the selection\n", argv[0]);
		return -1;
	}
	__fixture_list = head;
	optind = 1;
	return 0;
}

#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN						\
	int main(int argc, char **argv)					\
	{								\
		if (ksft_filter(argc, argv))				\
			return KSFT_FAIL;				\
		return test_harness_run(argc, argv);			\
	}

#endif

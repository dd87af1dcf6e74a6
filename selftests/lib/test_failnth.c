// SPDX-License-Identifier: GPL-2.0
/*
 * Fail-nth for libsteptime and the loader (iommufd's fail_nth, in user
 * space): the Nth allocation, open or bpf() syscall of an operation fails,
 * for N = 1, 2, ... until the operation no longer reaches an Nth call.
 * Every failing run must return a negative errno (or NULL with errno) and
 * leave no more allocations and fds than it found (fewer: a cache that a
 * failure emptied); a failed load leaves nothing pinned and no partial
 * load behind, and a load that got past a failure is whole: a clean
 * load's programs and steptime_info, but for what its reason says it
 * left out.
 *
 * The interposer is this program's own malloc, calloc, realloc,
 * posix_memalign, free, open, openat, fopen, opendir and syscall (libbpf's
 * bpf()): an executable's definitions come before libc's for every
 * library, libsteptime.a and libbpf included. Each run is a fork()ed
 * child: what one run leaks or breaks stays there.
 *
 * A load makes about 2,000 allocations, so by default N walks the first
 * FAILNTH_DENSE (64) of them one by one, then FAILNTH_RUNS (64) spread
 * evenly over the rest; FAILNTH_ALL=1 tries every one. Opens and bpf()
 * calls are tried at every N.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <steptime/loader.h>
#include <steptime/steptime.h>

#include "kselftest_harness.h"
#include "ksft_filter.h"

/* This run's own: bpffs is the host's, which other runs share. */
static char pin_dir[64];
#define PIN_DIR		pin_dir

__attribute__((constructor)) static void pin_dir_init(void)
{
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/steptime_failnth_%d",
		 (int)getpid());
}
#define TEST_DEV	"/dev/full"

/* ---------------------------------------------------------------------- */
/* The interposer                                                          */

enum fn_site { FN_MALLOC, FN_OPEN, FN_BPF, FN_SITES };
static const char *const site_name[FN_SITES] = { "malloc", "open", "bpf" };

static struct {
	bool armed;
	enum fn_site site;
	unsigned long nth;	/* fail this call of @site (1: the first); 0: none */
	unsigned long calls[FN_SITES];
	bool fired;
	long live;		/* allocations not freed */
} fn;

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

/* Whether this call of @site is the one to fail. */
static bool fn_fail(enum fn_site site)
{
	if (!fn.armed)
		return false;
	fn.calls[site]++;
	if (site != fn.site || fn.calls[site] != fn.nth)
		return false;
	fn.fired = true;
	return true;
}

void *malloc(size_t n)
{
	void *p;

	if (fn_fail(FN_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	p = __libc_malloc(n);
	fn.live += !!p;
	return p;
}

void *calloc(size_t a, size_t b)
{
	void *p;

	if (fn_fail(FN_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	p = __libc_calloc(a, b);
	fn.live += !!p;
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p;

	if (fn_fail(FN_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	p = __libc_realloc(old, n);
	if (!old)
		fn.live += !!p;
	else if (!n)
		fn.live--;
	return p;
}

void free(void *p)
{
	fn.live -= !!p;
	__libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	static int (*real)(void **, size_t, size_t);

	if (fn_fail(FN_MALLOC))
		return ENOMEM;
	if (!real)
		real = (int (*)(void **, size_t, size_t))
			dlsym(RTLD_NEXT, "posix_memalign");
	if (real(out, align, n))
		return ENOMEM;
	fn.live++;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	void *p;

	return posix_memalign(&p, align, n) ? NULL : p;
}

static int fn_open(int dirfd, const char *path, int flags, va_list ap)
{
	mode_t mode = flags & (O_CREAT | O_TMPFILE) ? va_arg(ap, mode_t) : 0;

	if (fn_fail(FN_OPEN)) {
		errno = EMFILE;
		return -1;
	}
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = fn_open(AT_FDCWD, path, flags, ap);
	va_end(ap);
	return fd;
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = fn_open(dirfd, path, flags, ap);
	va_end(ap);
	return fd;
}

/* libbpf reads its files (the kernel's BTF, kallsyms) through stdio. */
FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*real)(const char *, const char *);

	if (fn_fail(FN_OPEN)) {
		errno = EMFILE;
		return NULL;
	}
	if (!real)
		real = (FILE *(*)(const char *, const char *))
			dlsym(RTLD_NEXT, "fopen");
	return real(path, mode);
}

FILE *fopen64(const char *path, const char *mode) __attribute__((alias("fopen")));

DIR *opendir(const char *path)
{
	static DIR *(*real)(const char *);

	if (fn_fail(FN_OPEN)) {
		errno = EMFILE;
		return NULL;
	}
	if (!real)
		real = (DIR *(*)(const char *))dlsym(RTLD_NEXT, "opendir");
	return real(path);
}

/* libbpf's bpf(2) goes through syscall(); the others pass through. */
long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	/*
	 * Not EAGAIN, which libbpf retries (five times on BPF_PROG_LOAD): the
	 * loader would never see most failures. ENOMEM is what any bpf()
	 * command can return, and nothing reads it as a policy's refusal.
	 */
	if (nr == SYS_bpf && fn_fail(FN_BPF)) {
		errno = ENOMEM;
		return -1;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* ---------------------------------------------------------------------- */
/* The operations                                                          */

static int fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

struct fn_op {
	const char *name;
	bool needs_load;	/* runs against a load made beforehand */
	bool keeps;		/* success keeps state (fds, memory) for later */
	/* Return: 0, or a negative errno */
	int (*run)(void);
	/* undo a successful run (not counted) */
	void (*undo)(void);
};

static int op_load(void)
{
	struct steptime_load_opts o = {
		.sz = sizeof(o), .device = TEST_DEV,
		.attach_mode = STEPTIME_ATTACH_TRACEPOINT, .pin_dir = PIN_DIR,
		.map_gid = -1, .counter_freq_hz = 1000000000,
		.stars_version = 1,
		/* no HAL probes: what other processes map is not the load's */
		.hal = "",
	};

	return steptime__load(&o);
}

static void op_unload(void)
{
	steptime__unload(PIN_DIR);
}

static int op_reader(void)
{
	struct steptime_reader_opts ro = { .sz = sizeof(ro), .pin_dir = PIN_DIR };
	struct steptime_step_stats s;
	struct steptime_reader *r;

	errno = 0;
	r = steptime_reader__open(&ro);
	if (!r)		/* without errno: 1, which is no negative errno */
		return errno > 0 ? -errno : 1;
	while (!steptime_reader__next(r, &s))
		;
	steptime_reader__free(r);
	return 0;
}

static int op_counters(void)
{
	struct steptime_counters c;
	struct steptime_info inf;
	int err = steptime__read_counters(PIN_DIR, &c);

	return err ?: steptime__read_info(PIN_DIR, &inf);
}

static int op_progs(void)
{
	struct steptime_prog p[64];
	int n = steptime__read_progs(PIN_DIR, p, 64);

	return n < 0 ? n : 0;
}

/* The first mark of a process: it finds and registers its ring. */
static int op_mark(void)
{
	return steptime__mark(1, STEPTIME_TAG_START, NULL);
}

static const struct fn_op ops[] = {
	{ "load", false, false, op_load, op_unload },
	{ "reader", true, false, op_reader, NULL },
	{ "counters", true, false, op_counters, NULL },
	{ "progs", true, false, op_progs, NULL },
	{ "mark", true, true, op_mark, NULL },
};

#define FN_PROGS	64

/* What a load made: compared with a clean load's. */
struct fn_load {
	struct steptime_info info;	/* loaded_ns zeroed */
	int nprogs;			/* or a negative errno */
	char progs[FN_PROGS][64];	/* names, sorted */
};

/* What a child saw, through shared memory. */
struct fn_result {
	int rc;
	int err;		/* errno after the run */
	bool fired;
	unsigned long calls;	/* of the site, in the whole armed run */
	long leaked;		/* allocations */
	int fds;		/* fds left open */
	bool pinned;		/* a failed load left PIN_DIR */
	int leftovers;		/* partial loads beside PIN_DIR */
	struct fn_load load;	/* a successful load's */
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* What is loaded at PIN_DIR, as steptime__read_info() and _read_progs() see it. */
static void fn_read_load(struct fn_load *l)
{
	struct steptime_prog p[FN_PROGS];
	int i, err;

	memset(l, 0, sizeof(*l));
	err = steptime__read_info(PIN_DIR, &l->info);
	l->info.loaded_ns = 0;
	l->nprogs = err ?: steptime__read_progs(PIN_DIR, p, FN_PROGS);
	for (i = 0; i < l->nprogs; i++)
		snprintf(l->progs[i], sizeof(l->progs[i]), "%.63s", p[i].name);
	if (l->nprogs > 0)
		qsort(l->progs, l->nprogs, sizeof(l->progs[0]), name_cmp);
}

static void fn_retry(const struct fn_op *op)
{
	struct timespec ts;
	int i;

	for (i = 0; i < 300 && op->run(); i++) {
		ts = (struct timespec){ .tv_nsec = 10000000 };
		nanosleep(&ts, NULL);
	}
}

static bool fn_has_prog(const struct fn_load *l, const char *name)
{
	int i;

	for (i = 0; i < l->nprogs; i++)
		if (!strcmp(l->progs[i], name))
			return true;
	return false;
}

/*
 * How load @l differs from clean load @c ("" when it does not): a program
 * of its own, one left out that its reason does not name (the loader
 * leaves optional ones out, and says so), another attach mode, device,
 * profile, ... (all of steptime_info but the time and the reason).
 */
static const char *fn_load_diff(const struct fn_load *c, const struct fn_load *l)
{
	struct steptime_info ci = c->info, li = l->info;
	static char why[192];
	int i;

	if (l->nprogs < 0)
		return "its programs cannot be read";
	for (i = 0; i < l->nprogs; i++)
		if (!fn_has_prog(c, l->progs[i])) {
			snprintf(why, sizeof(why), "program %s, which a clean load has not",
				 l->progs[i]);
			return why;
		}
	for (i = 0; i < c->nprogs; i++)
		if (!fn_has_prog(l, c->progs[i]) &&
		    !strstr(l->info.reason, c->progs[i])) {
			snprintf(why, sizeof(why), "no %s, and its reason does not say why: %.100s",
				 c->progs[i], l->info.reason);
			return why;
		}
	memset(ci.reason, 0, sizeof(ci.reason));
	memset(li.reason, 0, sizeof(li.reason));
	if (li.attach_mode != ci.attach_mode) {
		snprintf(why, sizeof(why), "attach mode %u where a clean load has %u",
			 li.attach_mode, ci.attach_mode);
		return why;
	}
	if (memcmp(&li, &ci, sizeof(li)))
		return "its steptime_info differs from a clean load's";
	return "";
}

/*
 * In a child: warm up (a run and its undo, so that caches are filled;
 * not for an operation whose first run is the point), then the armed run,
 * then what it left.
 */
static void fn_child(const struct fn_op *op, enum fn_site site,
		     unsigned long nth, struct fn_result *res)
{
	long live;
	int fds, rc;

	setenv("STEPTIME_PIN_DIR", PIN_DIR, 1);
	if (!op->needs_load) {
		rc = op->run();
		if (rc)
			_exit(3);
		op->undo();
	} else if (!op->keeps && op->run()) {
		_exit(3);
	}
	fds = fds_open();
	live = fn.live;
	fn.site = site;
	fn.nth = nth;
	memset(fn.calls, 0, sizeof(fn.calls));
	fn.fired = false;
	fn.armed = true;
	rc = op->run();
	fn.armed = false;
	res->rc = rc;
	res->err = errno;
	res->fired = fn.fired;
	res->calls = fn.calls[site];
	if (!rc && !op->needs_load)
		fn_read_load(&res->load);
	if (!rc && op->undo)
		op->undo();
	/*
	 * What a first mark keeps (its ring's map and device fds) is kept by
	 * design, also for the retry after a failure: once the retry (at
	 * most one a second) succeeds, exactly what a clean run keeps.
	 */
	if (rc && op->keeps)
		fn_retry(op);
	res->leaked = fn.live - live;
	res->fds = fds_open() - fds;
	res->pinned = !op->needs_load && rc && !access(PIN_DIR, F_OK);
	_exit(0);
}

static int fn_run(const struct fn_op *op, enum fn_site site, unsigned long nth,
		  struct fn_result *res)
{
	int status;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		fn_child(op, site, nth, res);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	/*
	 * Counted once the child is gone: leftovers() passes over the private
	 * folder of a loader that is still alive, which a failed load's own
	 * folder would be in the child.
	 */
	if (!op->needs_load)
		res->leftovers = steptime__load_leftovers(PIN_DIR);
	if (!WIFEXITED(status))
		return -EINTR;
	return WEXITSTATUS(status) ? -EIO : 0;
}

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *s = getenv(name);

	return s && *s ? strtoul(s, NULL, 0) : def;
}

/* The Ns to try of a site with @total calls in a run that fails none. */
static unsigned long next_nth(enum fn_site site, unsigned long nth,
			      unsigned long total)
{
	unsigned long dense = env_ul("FAILNTH_DENSE", 64);
	unsigned long runs = env_ul("FAILNTH_RUNS", 64), step;

	if (site != FN_MALLOC || env_ul("FAILNTH_ALL", 0) || nth < dense)
		return nth + 1;
	step = total > dense ? (total - dense) / runs : 1;
	return nth + (step ? step : 1);
}

static void fail_nth(struct __test_metadata *_metadata, const struct fn_op *op,
		     enum fn_site site)
{
	struct fn_result *res, clean;
	unsigned long nth, total, runs = 0, failed = 0;

	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	/* N = 0: nothing fails; how many calls the operation makes. */
	ASSERT_EQ(0, fn_run(op, site, 0, res));
	clean = *res;
	ASSERT_EQ(0, clean.rc) TH_LOG("%s fails with nothing injected: %s",
				      op->name, strerror(-clean.rc));
	/* an operation that keeps state must keep the same after a failure */
	if (!op->keeps) {
		EXPECT_EQ(0, clean.leaked);
		EXPECT_EQ(0, clean.fds);
		clean.leaked = 0;
		clean.fds = 0;
	}
	EXPECT_EQ(0, clean.leftovers);
	if (!op->needs_load)
		ASSERT_LT(0, clean.load.nprogs)
			TH_LOG("a clean load's programs: %d", clean.load.nprogs);
	total = clean.calls;
	for (nth = 1; nth <= total; nth = next_nth(site, nth, total)) {
		ASSERT_EQ(0, fn_run(op, site, nth, res))
			TH_LOG("%s, %s %lu: the child died", op->name,
			       site_name[site], nth);
		runs++;
		if (!res->fired)
			break;
		/* Not every failure fails the operation (retries, fallbacks). */
		failed += res->rc != 0;
		if (res->rc) {
			EXPECT_GT(0, res->rc)
				TH_LOG("%s, %s %lu: failed with %d, no negative errno (1: NULL, errno 0)",
				       op->name, site_name[site], nth, res->rc);
			EXPECT_LT(-4096, res->rc);
		}
		EXPECT_GE(clean.leaked, res->leaked)
			TH_LOG("%s, %s %lu: %ld allocations leaked (rc %d)",
			       op->name, site_name[site], nth, res->leaked,
			       res->rc);
		EXPECT_GE(clean.fds, res->fds)
			TH_LOG("%s, %s %lu: %d fds leaked (rc %d)", op->name,
			       site_name[site], nth, res->fds, res->rc);
		EXPECT_FALSE(res->pinned)
			TH_LOG("%s, %s %lu: failed (%d) but left %s", op->name,
			       site_name[site], nth, res->rc, PIN_DIR);
		EXPECT_EQ(0, res->leftovers)
			TH_LOG("%s, %s %lu: a partial load left", op->name,
			       site_name[site], nth);
		/* a failure it got past: then the load is whole */
		if (!res->rc && !op->needs_load)
			EXPECT_STREQ("", fn_load_diff(&clean.load, &res->load))
				TH_LOG("%s, %s %lu: succeeded, but not as a clean load",
				       op->name, site_name[site], nth);
		if (!_metadata->passed)
			break;	/* the first failing site says it */
	}
	TH_LOG("%s, %s: %lu calls, %lu runs, %lu failed", op->name,
	       site_name[site], total, runs, failed);
	munmap(res, sizeof(*res));
}

FIXTURE(nth) {
	int dummy;
};

FIXTURE_VARIANT(nth) {
	const struct fn_op *op;
};

FIXTURE_VARIANT_ADD(nth, load) { .op = &ops[0] };
FIXTURE_VARIANT_ADD(nth, reader) { .op = &ops[1] };
FIXTURE_VARIANT_ADD(nth, counters) { .op = &ops[2] };
FIXTURE_VARIANT_ADD(nth, progs) { .op = &ops[3] };
FIXTURE_VARIANT_ADD(nth, mark) { .op = &ops[4] };

FIXTURE_SETUP(nth)
{
	if (geteuid())
		SKIP(return, "needs root (loads steptime)");
	steptime__unload(PIN_DIR);
	if (variant->op->needs_load)
		ASSERT_EQ(0, op_load());
}

FIXTURE_TEARDOWN(nth)
{
	if (!geteuid())
		steptime__unload(PIN_DIR);
}

TEST_F_TIMEOUT(nth, malloc, 3600)
{
	fail_nth(_metadata, variant->op, FN_MALLOC);
}

TEST_F_TIMEOUT(nth, open, 3600)
{
	fail_nth(_metadata, variant->op, FN_OPEN);
}

TEST_F_TIMEOUT(nth, bpf, 3600)
{
	fail_nth(_metadata, variant->op, FN_BPF);
}

TEST_HARNESS_MAIN

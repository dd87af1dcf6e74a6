// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test shim (LD_PRELOAD): counts the allocations a process holds (made
 * and not freed), in a shared file that a test reads while the process
 * runs: the 8 bytes of $COUNT_ALLOCS_FILE, a native-endian long. A leak
 * of one allocation per request shows as one per request, where the
 * process's RSS hides it in the heap's free pages.
 *
 * glibc's internal allocations come here too (it calls malloc through
 * its PLT); the real allocator is glibc's __libc_* entry points, so that
 * no dlsym() (which allocates) is needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static long early;		/* before the file is mapped */
static long *live = &early;

__attribute__((constructor)) static void count_allocs_init(void)
{
	const char *path = getenv("COUNT_ALLOCS_FILE");
	long *m;
	int fd;

	if (!path)
		return;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (!ftruncate(fd, sizeof(*m))) {
		m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		if (m != MAP_FAILED) {
			/* still one thread: constructors run before main() */
			*m = early;
			live = m;
		}
	}
	close(fd);
}

static void *counted(void *p)
{
	if (p)
		__atomic_add_fetch(live, 1, __ATOMIC_RELAXED);
	return p;
}

void *malloc(size_t n)
{
	return counted(__libc_malloc(n));
}

void *calloc(size_t a, size_t b)
{
	return counted(__libc_calloc(a, b));
}

void *realloc(void *old, size_t n)
{
	void *p;

	if (!old)
		return counted(__libc_realloc(old, n));
	p = __libc_realloc(old, n);
	if (!n)		/* glibc's realloc(p, 0) frees p */
		__atomic_sub_fetch(live, 1, __ATOMIC_RELAXED);
	return p;
}

void free(void *p)
{
	if (p)
		__atomic_sub_fetch(live, 1, __ATOMIC_RELAXED);
	__libc_free(p);
}

void *memalign(size_t align, size_t n)
{
	return counted(__libc_memalign(align, n));
}

void *aligned_alloc(size_t align, size_t n)
{
	return counted(__libc_memalign(align, n));
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (!align || align % sizeof(void *) || align & (align - 1))
		return EINVAL;
	p = counted(__libc_memalign(align, n));
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

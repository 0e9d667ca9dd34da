/*
 * alloc_api.c - heapmpi integration test: the malloc family's contract at
 * the edges, as glibc implements it (what unmodified programs rely on).
 *
 *  - malloc(0) / calloc(0, 0) / realloc(NULL, 0) return unique, freeable
 *    non-NULL pointers;
 *  - impossible sizes return NULL with errno == ENOMEM and never crash:
 *    malloc(SIZE_MAX), calloc overflow, realloc(p, SIZE_MAX) (p stays valid),
 *    reallocarray overflow, posix_memalign / aligned_alloc / memalign of huge
 *    sizes;
 *  - posix_memalign with a bad alignment returns EINVAL (and leaves the
 *    output pointer alone);
 *  - big alignments (64 KiB, 1 MiB) are honoured, pvalloc / valloc are
 *    page-aligned, malloc_usable_size(NULL) == 0;
 *  - 20000 small live blocks do not overlap;
 *  - a 320 MiB block maps no memory until it is written (at most 32 MiB
 *    more resident set after malloc, at least 300 MiB more once every page
 *    is written), as glibc's is: a window or buffer sized for the worst
 *    case costs nothing where the program never writes.
 *
 * Output (stdout, rank 0 only, rank order): "rank N: alloc api ok".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define NSMALL 20000

/* Sizes are read through volatiles so the compiler neither warns about nor
 * folds the impossible requests. */
static volatile size_t v_max = SIZE_MAX;
static volatile size_t v_half = SIZE_MAX / 2 + 1;
static volatile size_t v_zero = 0;

static void zero_size(void)
{
    void *a = launder(malloc(v_zero));
    void *b = launder(malloc(v_zero));
    EXPECT(a != NULL && b != NULL, "malloc(0) returned NULL");
    EXPECT(a != b || a == NULL, "two malloc(0) returned the same pointer %p", a);
    free(a);
    free(b);
    void *c = launder(calloc(v_zero, v_zero));
    EXPECT(c != NULL, "calloc(0, 0) returned NULL");
    free(c);
    void *r = launder(realloc(NULL, v_zero));
    EXPECT(r != NULL, "realloc(NULL, 0) returned NULL");
    free(r);
    free(NULL);
    EXPECT(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL) != 0");
}

static void impossible_sizes(void)
{
    errno = 0;
    void *p = launder(malloc(v_max));
    EXPECT(p == NULL && errno == ENOMEM,
           "malloc(SIZE_MAX) = %p, errno %d (want NULL, ENOMEM)", p, errno);
    errno = 0;
    p = launder(malloc(v_half));
    EXPECT(p == NULL && errno == ENOMEM,
           "malloc(SIZE_MAX/2+1) = %p, errno %d (want NULL, ENOMEM)", p, errno);
    errno = 0;
    p = launder(calloc(v_half, 2));
    EXPECT(p == NULL && errno == ENOMEM,
           "calloc overflow = %p, errno %d (want NULL, ENOMEM)", p, errno);
    errno = 0;
    p = launder(calloc(v_max / 3, 4));
    EXPECT(p == NULL && errno == ENOMEM,
           "calloc overflow (2) = %p, errno %d (want NULL, ENOMEM)", p, errno);

    char *q = malloc(100);
    EXPECT(q != NULL, "malloc(100) returned NULL");
    if (q != NULL) {
        memset(q, 'q', 100);
        errno = 0;
        char *r = launder(realloc(launder(q), v_max));
        EXPECT(r == NULL && errno == ENOMEM,
               "realloc(p, SIZE_MAX) = %p, errno %d (want NULL, ENOMEM)",
               (void *)r, errno);
        if (r == NULL) {
            for (int i = 0; i < 100; i++)
                if (q[i] != 'q') {
                    FAIL("failed realloc damaged the original block");
                    break;
                }
            errno = 0;
            r = launder(reallocarray(launder(q), v_half, 2));
            EXPECT(r == NULL && errno == ENOMEM,
                   "reallocarray overflow = %p, errno %d", (void *)r, errno);
            if (r == NULL)
                free(q);
        }
    }

    void *m = (void *)0x1;
    errno = 0;
    int rc = posix_memalign(&m, 64, v_max);
    EXPECT(rc == ENOMEM, "posix_memalign(64, SIZE_MAX) returned %d", rc);
    EXPECT(m == (void *)0x1, "failed posix_memalign changed the out pointer");
    errno = 0;
    p = launder(aligned_alloc(4096, (v_max / 4096) * 4096));
    EXPECT(p == NULL && errno == ENOMEM,
           "aligned_alloc(4096, huge) = %p, errno %d", p, errno);
    errno = 0;
    p = launder(memalign(64, v_half));
    EXPECT(p == NULL && errno == ENOMEM, "memalign(64, huge) = %p, errno %d",
           p, errno);
}

static void alignment(void)
{
    void *m = (void *)0x1;
    int rc = posix_memalign(&m, 3, 10);
    EXPECT(rc == EINVAL, "posix_memalign(3) returned %d, want EINVAL", rc);
    EXPECT(m == (void *)0x1, "failed posix_memalign changed the out pointer");
    rc = posix_memalign(&m, sizeof(void *) / 2, 10);
    EXPECT(rc == EINVAL, "posix_memalign(sizeof(void*)/2) returned %d", rc);
    rc = posix_memalign(&m, 0, 10);
    EXPECT(rc == EINVAL, "posix_memalign(0) returned %d, want EINVAL", rc);

    static const size_t aligns[] = {8, 16, 32, 4096, 65536, 1u << 20};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        size_t a = aligns[i];
        char what[64];
        void *p = NULL;
        snprintf(what, sizeof what, "posix_memalign(%zu, 5 MiB)", a);
        rc = posix_memalign(&p, a, 5u << 20);
        EXPECT(rc == 0, "%s returned %d", what, rc);
        if (rc == 0) {
            check_aligned(p, a, what);
            memset(p, 1, 5u << 20);
            EXPECT(malloc_usable_size(p) >= (5u << 20), "%s: usable too small",
                   what);
            free(p);
        }
        snprintf(what, sizeof what, "posix_memalign(%zu, 1)", a);
        rc = posix_memalign(&p, a, 1);
        EXPECT(rc == 0, "%s returned %d", what, rc);
        if (rc == 0) {
            check_aligned(p, a, what);
            *(char *)p = 1;
            free(p);
        }
        snprintf(what, sizeof what, "memalign(%zu, 1000)", a);
        p = memalign(a, 1000);
        check_aligned(p, a, what);
        if (p) {
            memset(p, 2, 1000);
            /* realloc of an aligned block keeps the contents */
            char *r = realloc(p, 300000);
            EXPECT(r != NULL, "realloc of %s returned NULL", what);
            if (r) {
                for (int k = 0; k < 1000; k++)
                    if (r[k] != 2) {
                        FAIL("realloc of %s lost byte %d", what, k);
                        break;
                    }
                p = r;
            }
            free(p);
        }
        snprintf(what, sizeof what, "aligned_alloc(%zu, %zu)", a, 2 * a);
        p = aligned_alloc(a, 2 * a);
        check_aligned(p, a, what);
        if (p)
            memset(p, 3, 2 * a);
        free(p);
    }
    long page = sysconf(_SC_PAGESIZE);
    void *p = valloc(1);
    check_aligned(p, (size_t)page, "valloc(1)");
    free(p);
    p = pvalloc(100);
    check_aligned(p, (size_t)page, "pvalloc(100)");
    if (p) {
        EXPECT(malloc_usable_size(p) >= (size_t)page,
               "pvalloc(100): usable size %zu < page", malloc_usable_size(p));
        memset(p, 4, (size_t)page);
    }
    free(p);
}

static void many_small(void)
{
    uint32_t **b = calloc(NSMALL, sizeof *b);
    if (b == NULL) {
        FAIL("calloc of the pointer table failed");
        return;
    }
    for (uint32_t i = 0; i < NSMALL; i++) {
        size_t n = 8 + (i % 7) * 8;
        b[i] = malloc(n);
        if (b[i] == NULL) {
            FAIL("malloc(%zu) #%u returned NULL", n, i);
            break;
        }
        for (size_t k = 0; k < n / 4; k++)
            b[i][k] = i;
    }
    for (uint32_t i = 0; i < NSMALL && b[i]; i++) {
        size_t n = 8 + (i % 7) * 8;
        for (size_t k = 0; k < n / 4; k++)
            if (b[i][k] != i) {
                FAIL("small block %u overwritten (overlapping allocations?)", i);
                break;
            }
    }
    /* free every other, reallocate, check again */
    for (uint32_t i = 0; i < NSMALL; i += 2) {
        free(b[i]);
        b[i] = reallocarray(NULL, 5, 4);
        if (b[i] == NULL) {
            FAIL("reallocarray(NULL, 5, 4) returned NULL");
            break;
        }
        for (int k = 0; k < 5; k++)
            b[i][k] = ~i;
    }
    for (uint32_t i = 0; i < NSMALL && b[i]; i++) {
        size_t n = (i % 2 == 0) ? 20 : 8 + (i % 7) * 8;
        uint32_t want = (i % 2 == 0) ? ~i : i;
        for (size_t k = 0; k < n / 4; k++)
            if (b[i][k] != want) {
                FAIL("small block %u overwritten after reuse", i);
                break;
            }
    }
    for (uint32_t i = 0; i < NSMALL; i++)
        free(b[i]);
    free(b);
}

/* VmRSS of this process in KiB (-1 if unreadable). */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

static void large_block_lazy(void)
{
    const size_t n = 320u << 20;
    long before = rss_kib();
    char *p = launder(malloc(n));
    long allocated = rss_kib();
    EXPECT(p != NULL, "malloc(320 MiB) returned NULL");
    if (p == NULL)
        return;
    for (size_t i = 0; i < n; i += 4096)
        p[i] = (char)i;
    long written = rss_kib();
    EXPECT(before >= 0 && allocated >= 0 && written >= 0, "VmRSS unreadable");
    EXPECT(allocated - before < (32 << 10),
           "malloc(320 MiB) made %ld KiB resident before any write", allocated - before);
    EXPECT(written - allocated >= (300 << 10),
           "writing 320 MiB made only %ld KiB resident", written - allocated);
    free(launder(p));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);

    zero_size();
    impossible_sizes();
    alignment();
    many_small();
    large_block_lazy();

    print_result("alloc api", rank, size);
    int total = job_failures();
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

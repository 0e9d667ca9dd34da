/*
 * realloc_boundary.c - heapmpi integration test: memory that crosses the
 * MPI_Init / MPI_Finalize boundaries, and memory that libc itself
 * (re)allocates.
 *
 *  - Before MPI_Init: malloc blocks of many sizes (1 B .. 3 MiB, so both
 *    glibc heap and glibc mmap chunks) and strdup a string.
 *  - After MPI_Init: verify them; realloc some bigger (private glibc memory
 *    -> shared heap), smaller and bigger again, verifying contents each
 *    time; free the others; malloc_usable_size >= requested everywhere.
 *  - libc-internal allocation: getline()/getdelim() growing a buffer that
 *    the program malloc'd (libc calls realloc on it internally),
 *    open_memstream, asprintf, strdup/strndup.
 *  - Allocate before MPI_Finalize and free/realloc after it; allocate and
 *    free after MPI_Finalize; free a pre-MPI_Init block after MPI_Finalize.
 *
 * Output (stdout, rank 0 only, rank order): "rank N: realloc boundary ok".
 * Problems after MPI_Finalize are reported on stderr with exit status 1.
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

#define NPRE 10

/* The pattern of block idx. Blocks are filled before MPI_Init too, where
 * the rank is not known yet: every rank uses owner 0. */
static void fill(unsigned char *p, size_t from, size_t to, int idx)
{
    pattern_fill(p, from, to, 0, idx);
}

static int check(const unsigned char *p, size_t from, size_t to, int idx,
                 const char *what)
{
    return pattern_check(p, from, to, 0, idx, what);
}

static void check_usable(const void *p, size_t size, const char *what)
{
    size_t u = malloc_usable_size((void *)p);
    if (u < size)
        FAIL("%s: malloc_usable_size(%p) = %zu < %zu", what, p, u, size);
}

/* realloc + verify the preserved prefix + fill the rest. */
static unsigned char *grow(unsigned char *p, size_t old, size_t size, int idx,
                           const char *what)
{
    unsigned char *np = must(realloc(p, size), "realloc", size);
    size_t keep = old < size ? old : size;
    check(np, 0, keep, idx, what);
    fill(np, keep, size, idx);
    check_usable(np, size, what);
    return np;
}

static char line_char(size_t line_no, size_t i)
{
    return (char)('a' + (line_no * 7 + i) % 26);
}

/* Write a file with lines of awkward lengths, read it back with getline()
 * into `buf` (which libc reallocs internally). Returns the (possibly moved)
 * buffer. */
static const size_t k_line_lens[] = {0,    1,     15,     16,     17,  100,
                                     4095, 4096,  70000,  300000, 5,
                                     1u << 20, 0, 2000000, 3};
#define NLINES (sizeof k_line_lens / sizeof k_line_lens[0])

static char *getline_test(char *buf, size_t cap, const char *what)
{
    char path[] = "/tmp/heapmpi-test-getline-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        FAIL("mkstemp: %s", strerror(errno));
        return buf;
    }
    FILE *f = fdopen(fd, "w+");
    if (f == NULL) {
        FAIL("fdopen: %s", strerror(errno));
        close(fd);
        unlink(path);
        return buf;
    }
    for (size_t l = 0; l < NLINES; l++) {
        for (size_t i = 0; i < k_line_lens[l]; i++)
            fputc(line_char(l, i), f);
        fputc('\n', f);
    }
    fflush(f);
    rewind(f);
    for (size_t l = 0; l < NLINES; l++) {
        errno = 0;
        ssize_t n = getline(&buf, &cap, f);
        if (n != (ssize_t)k_line_lens[l] + 1) {
            FAIL("%s: getline line %zu returned %zd, expected %zu (errno %d)",
                 what, l, n, k_line_lens[l] + 1, errno);
            break;
        }
        if (cap < (size_t)n + 1)
            FAIL("%s: getline capacity %zu < %zd", what, cap, n + 1);
        check_usable(buf, cap, "getline buffer");
        for (size_t i = 0; i < k_line_lens[l]; i++) {
            if (buf[i] != line_char(l, i)) {
                FAIL("%s: line %zu char %zu is 0x%02x", what, l, i,
                     (unsigned char)buf[i]);
                break;
            }
        }
        if (buf[n - 1] != '\n' || buf[n] != '\0')
            FAIL("%s: line %zu not terminated", what, l);
    }
    if (getline(&buf, &cap, f) != -1)
        FAIL("%s: getline did not report EOF", what);
    /* getdelim with a different delimiter over the whole file. */
    rewind(f);
    ssize_t n = getdelim(&buf, &cap, '\0', f);
    size_t want = 0;
    for (size_t l = 0; l < NLINES; l++)
        want += k_line_lens[l] + 1;
    if (n != (ssize_t)want)
        FAIL("%s: getdelim read %zd bytes, expected %zu", what, n, want);
    fclose(f);
    unlink(path);
    return buf;
}

static void libc_alloc_tests(void)
{
    /* getline into a program-malloc'd (shared-heap) buffer. */
    char *buf = must(malloc(16), "malloc", 16);
    buf = getline_test(buf, 16, "getline(malloc'd buffer)");
    free(buf);

    /* getline that allocates the buffer itself. */
    buf = getline_test(NULL, 0, "getline(NULL buffer)");
    free(buf);

    /* open_memstream: libc reallocs the buffer as the stream grows. */
    char *ms = NULL;
    size_t ms_len = 0;
    FILE *m = open_memstream(&ms, &ms_len);
    if (m == NULL) {
        FAIL("open_memstream: %s", strerror(errno));
    } else {
        for (int i = 0; i < 20000; i++)
            fprintf(m, "%08d|", i);
        fclose(m);
        if (ms_len != 20000u * 9)
            FAIL("open_memstream length %zu, expected %u", ms_len, 20000u * 9);
        for (int i = 0; i < 20000 && ms != NULL; i += 997) {
            char want[16];
            snprintf(want, sizeof want, "%08d|", i);
            if (memcmp(ms + (size_t)i * 9, want, 9) != 0) {
                FAIL("open_memstream content wrong at record %d", i);
                break;
            }
        }
        /* The program may realloc a buffer that libc allocated. */
        ms = must(realloc(ms, ms_len * 2), "realloc", ms_len * 2);
        if (memcmp(ms, "00000000|00000001|", 18) != 0)
            FAIL("realloc of the open_memstream buffer lost its contents");
        free(ms);
    }

    /* asprintf, strdup, strndup: allocated inside libc, freed by us. */
    char *a = NULL;
    if (asprintf(&a, "rank=%d %s %d", g_rank, "asprintf", 42) < 0 || !a) {
        FAIL("asprintf failed");
    } else {
        char want[64];
        snprintf(want, sizeof want, "rank=%d %s %d", g_rank, "asprintf", 42);
        if (strcmp(a, want) != 0)
            FAIL("asprintf produced '%s'", a);
        free(a);
    }
    char *d = must(strdup("post-init strdup"), "strdup", 17);
    char *nd = must(strndup("post-init strndup-truncated", 17), "strndup", 17);
    if (strcmp(d, "post-init strdup") != 0 || strcmp(nd, "post-init strndup") != 0)
        FAIL("strdup/strndup contents wrong: '%s' '%s'", d, nd);
    d = must(realloc(d, 100000), "realloc", 100000);
    if (strcmp(d, "post-init strdup") != 0)
        FAIL("realloc of a strdup'd string lost its contents");
    free(d);
    free(nd);
}

int main(int argc, char **argv)
{
    static const size_t sz[NPRE] = {1,     24,      100,       1000,
                                    4096,  65536,   200000,    1u << 20,
                                    3u << 20, 777};
    unsigned char *pre[NPRE];
    size_t cur[NPRE];

    /* ---- before MPI_Init: private (glibc) memory ---- */
    for (int i = 0; i < NPRE; i++) {
        pre[i] = must(malloc(sz[i]), "malloc", sz[i]);
        fill(pre[i], 0, sz[i], i);
        cur[i] = sz[i];
    }
    char *early = must(strdup("allocated before MPI_Init by strdup"), "strdup",
                       36);
    char *early_line = must(malloc(8), "malloc", 8); /* getline target */

    int rank, size;
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);

    /* ---- after MPI_Init ---- */
    for (int i = 0; i < NPRE; i++) {
        check(pre[i], 0, sz[i], i, "pre-init block after MPI_Init");
        check_usable(pre[i], sz[i], "pre-init block");
    }
    /* Even blocks: bigger (crosses into the shared heap), smaller, bigger.
     * Odd blocks: freed after MPI_Init (except the last, freed after
     * MPI_Finalize). Block 8 (3 MiB) is a glibc mmap chunk. */
    for (int i = 0; i < NPRE; i += 2) {
        size_t big = sz[i] * 3 + 1000;
        pre[i] = grow(pre[i], cur[i], big, i, "realloc pre-init -> bigger");
        cur[i] = big;
        size_t small = sz[i] / 2 + 1;
        pre[i] = grow(pre[i], cur[i], small, i, "realloc shared -> smaller");
        cur[i] = small;
        size_t bigger = sz[i] * 5 + 7;
        pre[i] = grow(pre[i], cur[i], bigger, i, "realloc shared -> bigger");
        cur[i] = bigger;
    }
    /* A tiny pre-init block grown to 2 MiB: the copy must be bounded by the
     * old block's real size, not by the new size. */
    pre[1] = grow(pre[1], cur[1], 2u << 20, 1, "realloc 24 B pre-init -> 2 MiB");
    cur[1] = 2u << 20;
    /* A pre-init block shrunk after init. */
    pre[7] = grow(pre[7], cur[7], 5000, 7, "realloc 1 MiB pre-init -> smaller");
    cur[7] = 5000;
    for (int i = 3; i < NPRE - 1; i += 2) {
        if (i == 7)
            continue;
        check(pre[i], 0, cur[i], i, "pre-init block before free");
        free(pre[i]);
        pre[i] = NULL;
    }

    if (strcmp(early, "allocated before MPI_Init by strdup") != 0)
        FAIL("pre-init strdup string changed: '%s'", early);
    early = must(realloc(early, 4000), "realloc", 4000);
    strcat(early, " and grown after MPI_Init");
    if (strcmp(early,
               "allocated before MPI_Init by strdup and grown after MPI_Init") != 0)
        FAIL("realloc'd strdup string wrong: '%s'", early);
    check_usable(early, 4000, "grown strdup string");

    /* getline growing a pre-init (glibc) buffer after MPI_Init. */
    early_line = getline_test(early_line, 8, "getline(pre-init buffer)");
    free(early_line);

    libc_alloc_tests();

    unsigned char *r0 = must(realloc(NULL, 100), "realloc(NULL)", 100);
    fill(r0, 0, 100, 42);
    check(r0, 0, 100, 42, "realloc(NULL, 100)");
    free(r0);
    free(NULL);
    if (malloc_usable_size(NULL) != 0)
        FAIL("malloc_usable_size(NULL) != 0");

    /* Allocated before MPI_Finalize, used and freed after it. */
    unsigned char *late[4];
    size_t late_sz[4] = {10, 5000, 300000, 2u << 20};
    for (int i = 0; i < 4; i++) {
        late[i] = must(malloc(late_sz[i]), "malloc", late_sz[i]);
        fill(late[i], 0, late_sz[i], 20 + i);
    }

    print_result("realloc boundary", rank, size);
    int total = job_failures();
    MPI_Finalize();

    /* ---- after MPI_Finalize ---- */
    for (int i = 0; i < 4; i++)
        check(late[i], 0, late_sz[i], 20 + i, "block allocated before MPI_Finalize");
    late[1] = grow(late[1], late_sz[1], 80000, 21, "realloc after MPI_Finalize");
    late_sz[1] = 80000;
    for (int i = 0; i < 4; i++) {
        check(late[i], 0, late_sz[i], 20 + i, "block before free after MPI_Finalize");
        free(late[i]);
    }
    for (int i = 0; i < NPRE; i++) {
        if (pre[i] != NULL) {
            check(pre[i], 0, cur[i], i, "block freed after MPI_Finalize");
            free(pre[i]);
        }
    }
    free(early);
    for (int round = 0; round < 3; round++) {
        size_t n = (size_t)1000 << (round * 5); /* 1000, 32000, 1 MiB-ish */
        unsigned char *p = must(malloc(n), "malloc after MPI_Finalize", n);
        fill(p, 0, n, 30 + round);
        p = grow(p, n, n * 2, 30 + round, "realloc after MPI_Finalize");
        check(p, 0, n * 2, 30 + round, "block allocated after MPI_Finalize");
        free(p);
    }
    char *s = must(strdup("after finalize"), "strdup", 15);
    free(s);

    if (g_failures != 0) {
        fprintf(stderr, "rank %d: realloc_boundary: %d failure(s)\n", rank,
                g_failures);
        return 1;
    }
    return total == 0 ? 0 : 1;
}

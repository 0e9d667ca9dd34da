/*
 * testutil.h - helpers shared by the heapmpi integration test programs.
 *
 * Include it after `#define _GNU_SOURCE` (before any system header). A
 * program may `#define LINE <n>` first to get longer output lines.
 *
 * - g_rank / g_failures: this rank (set by get_rank_and_size) and the number
 *   of failed checks, which FAIL() counts (thread-safe);
 * - FAIL(fmt, ...), EXPECT(cond, fmt, ...): "rank N: FAIL: ..." on stderr;
 * - must(p, what, size): p, or a report and exit(1) if p is NULL;
 * - launder(p): hides a pointer's provenance from the optimiser;
 * - check_aligned(p, align, what): p is non-NULL and aligned;
 * - pattern_*(): a per-(rank, block) byte pattern to fill and verify;
 * - get_rank_and_size(), print_ordered(), print_result(), job_failures():
 *   the MPI side.
 */
#ifndef HEAPMPI_TESTUTIL_H
#define HEAPMPI_TESTUTIL_H

#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Width of one rank's output line in print_ordered(). */
#ifndef LINE
#define LINE 128
#endif

static int g_rank = -1;
static int g_failures; /* atomic */

/* Reports a failed check on stderr ("rank N: FAIL: ...") and counts it. */
#define FAIL(...)                                                   \
    do {                                                            \
        flockfile(stderr);                                          \
        fprintf(stderr, "rank %d: FAIL: ", g_rank);                 \
        fprintf(stderr, __VA_ARGS__);                               \
        fputc('\n', stderr);                                        \
        fflush(stderr);                                             \
        funlockfile(stderr);                                        \
        __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);       \
    } while (0)

#define EXPECT(cond, ...)                                           \
    do {                                                            \
        if (!(cond))                                                \
            FAIL(__VA_ARGS__);                                      \
    } while (0)

/* Hide a pointer's provenance from the optimiser (e.g. so that it cannot
 * assume calloc'd memory is zero and fold the check away, or fold an
 * impossible request). */
static inline void *launder(void *p)
{
    __asm__ volatile("" : "+r"(p) : : "memory");
    return p;
}

/* p, or (p == NULL) a report and exit(1). Usable outside MPI_Init ..
 * MPI_Finalize too. */
static inline void *must(void *p, const char *what, size_t size)
{
    if (p == NULL) {
        fprintf(stderr, "rank %d: FAIL: %s(%zu) returned NULL (errno %d)\n",
                g_rank, what, size, errno);
        exit(1);
    }
    return p;
}

static inline void check_aligned(const void *p, size_t align,
                                 const char *what)
{
    EXPECT(p != NULL, "%s returned NULL", what);
    EXPECT((uintptr_t)p % align == 0, "%s returned %p, not aligned to %zu",
           what, p, align);
}

/* Byte i of the test pattern of block `idx` of rank `owner`: a hash, so that
 * shifted, stale or another block's bytes are noticed. */
static inline unsigned char pattern_byte(int owner, int idx, size_t i)
{
    uint32_t x = (uint32_t)owner * 2654435761u;
    x ^= (uint32_t)idx * 40503u + 0x9e3779b9u;
    x ^= (uint32_t)i * 2246822519u;
    x ^= (uint32_t)(i >> 32);
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return (unsigned char)x;
}

/* Writes the pattern into bytes [from, to) of p. */
static inline void pattern_fill(void *p, size_t from, size_t to, int owner,
                                int idx)
{
    unsigned char *c = p;
    for (size_t i = from; i < to; i++)
        c[i] = pattern_byte(owner, idx, i);
}

/* The offset of the first byte in [from, to) of p that does not hold the
 * pattern, or `to` if they all do. */
static inline size_t pattern_mismatch(const void *p, size_t from, size_t to,
                                      int owner, int idx)
{
    const unsigned char *c = p;
    size_t i = from;
    while (i < to && c[i] == pattern_byte(owner, idx, i))
        i++;
    return i < to ? i : to;
}

/* 1 if bytes [from, to) of p hold the pattern; else FAIL (naming `what` and
 * the first wrong byte) and 0. */
static inline int pattern_check(const void *p, size_t from, size_t to,
                                int owner, int idx, const char *what)
{
    const unsigned char *c = p;
    size_t i = pattern_mismatch(p, from, to, owner, idx);
    if (i == to)
        return 1;
    FAIL("%s (block %d at %p): byte %zu is 0x%02x, expected 0x%02x", what,
         idx, p, i, c[i], pattern_byte(owner, idx, i));
    return 0;
}

/* After MPI_Init / MPI_Init_thread: this rank and the job size. The rank is
 * also kept in g_rank (for FAIL). */
static inline void get_rank_and_size(int *rank, int *size)
{
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    g_rank = *rank;
}

/* Gather one line per rank to rank 0 and print them in rank order. */
static inline void print_ordered(const char *line, int rank, int size)
{
    char mine[LINE];
    memset(mine, 0, sizeof mine);
    snprintf(mine, sizeof mine, "%s", line);
    char *all = NULL;
    if (rank == 0) {
        size_t n = (size_t)size * LINE;
        all = malloc(n);
        if (all == NULL) {
            fprintf(stderr, "rank %d: FAIL: malloc(%zu) returned NULL "
                    "(errno %d)\n", rank, n, errno);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gather(mine, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            printf("%s\n", all + (size_t)r * LINE);
        fflush(stdout);
        free(all);
    }
}

/* print_ordered() of "rank N: <what> ok", or "rank N: <what> FAILED" on a
 * rank where a check failed. */
static inline void print_result(const char *what, int rank, int size)
{
    char line[LINE];
    snprintf(line, sizeof line, "rank %d: %s%s%s", rank, what,
             what[0] != '\0' ? " " : "", g_failures == 0 ? "ok" : "FAILED");
    print_ordered(line, rank, size);
}

/* The failures of every rank together (collective). */
static inline int job_failures(void)
{
    int total = 0;
    MPI_Allreduce(&g_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

#endif /* HEAPMPI_TESTUTIL_H */

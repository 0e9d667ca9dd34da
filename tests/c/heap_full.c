/*
 * heap_full.c - heapmpi integration test: exhausting the shared heap.
 *
 * Meant to run with a tiny heap (HEAPMPI_HEAP_SIZE=4M): allocates 64 MiB in
 * alternating 1 MiB and 100 KiB chunks, fills and verifies all of them,
 * exchanges chunks (which cannot all be in the shared heap) around a ring
 * of ranks with MPI_Sendrecv, frees everything, allocates it all again and
 * reallocs part of it. Every step must succeed: heapmpi falls back to glibc
 * when its heap is full.
 *
 * Output (stdout, rank 0 only, rank order): "rank N: allocated 64 MiB ok".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define TOTAL (64u << 20)
#define BIG (1u << 20)
#define SMALL (100u << 10)
#define MAXCHUNKS 256

static uint64_t word(int rank, int round, int idx, size_t w)
{
    uint64_t x = ((uint64_t)rank << 56) ^ ((uint64_t)round << 48) ^
                 ((uint64_t)idx << 32) ^ (uint64_t)w;
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

static void fill(void *p, size_t size, int rank, int round, int idx)
{
    uint64_t *q = p;
    for (size_t w = 0; w < size / 8; w++)
        q[w] = word(rank, round, idx, w);
}

static int check(const void *p, size_t size, int rank, int round, int idx,
                 const char *what)
{
    const uint64_t *q = p;
    for (size_t w = 0; w < size / 8; w++) {
        if (q[w] != word(rank, round, idx, w)) {
            FAIL("%s: chunk %d (%p) word %zu is 0x%016llx, expected 0x%016llx",
                 what, idx, p, w, (unsigned long long)q[w],
                 (unsigned long long)word(rank, round, idx, w));
            return 0;
        }
    }
    return 1;
}

struct chunk {
    void *p;
    size_t size;
};

static int alloc_all(struct chunk *c, int round)
{
    size_t total = 0;
    int n = 0;
    while (total < TOTAL && n < MAXCHUNKS) {
        size_t size = (n % 2 == 0) ? BIG : SMALL;
        void *p = malloc(size);
        if (p == NULL) {
            FAIL("round %d: malloc(%zu) #%d returned NULL after %zu bytes "
                 "(errno %d)", round, size, n, total, errno);
            break;
        }
        if (malloc_usable_size(p) < size)
            FAIL("malloc_usable_size(%p) = %zu < %zu", p,
                 malloc_usable_size(p), size);
        c[n].p = p;
        c[n].size = size;
        fill(p, size, g_rank, round, n);
        total += size;
        n++;
    }
    return n;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);

    static struct chunk c[MAXCHUNKS];
    int n = alloc_all(c, 0);
    for (int i = 0; i < n; i++)
        check(c[i].p, c[i].size, rank, 0, i, "first round");

    /* Ring exchange through MPI using chunks from the end of the list
     * (certainly beyond a 4 MiB heap) and from the start. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int pairs[2][2] = {{n - 2, n - 1}, {0, 1}}; /* {send chunk, recv chunk} */
    for (int k = 0; k < 2; k++) {
        int si = pairs[k][0], ri = pairs[k][1];
        size_t len = c[si].size < c[ri].size ? c[si].size : c[ri].size;
        MPI_Sendrecv(c[si].p, (int)len, MPI_BYTE, right, 7 + k, c[ri].p,
                     (int)len, MPI_BYTE, left, 7 + k, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        /* The received bytes are the left neighbour's chunk si prefix. */
        const uint64_t *q = c[ri].p;
        for (size_t w = 0; w < len / 8; w++)
            if (q[w] != word(left, 0, si, w)) {
                FAIL("ring exchange %d: word %zu wrong", k, w);
                break;
            }
        fill(c[ri].p, c[ri].size, rank, 0, ri);
    }
    for (int i = 0; i < n; i++)
        check(c[i].p, c[i].size, rank, 0, i, "after ring exchange");
    for (int i = 0; i < n; i++)
        free(c[i].p);

    /* Everything again: the heap (and the fallback) must be reusable. */
    int n2 = alloc_all(c, 1);
    if (n2 != n)
        FAIL("second round allocated %d chunks, first %d", n2, n);
    for (int i = 0; i < n2; i++)
        check(c[i].p, c[i].size, rank, 1, i, "second round");
    for (int i = 0; i < n2; i += 3) {
        void *p = realloc(c[i].p, c[i].size + 300000);
        if (p == NULL) {
            FAIL("realloc grow returned NULL");
            continue;
        }
        check(p, c[i].size, rank, 1, i, "realloc'd (grown) chunk");
        c[i].p = p;
        p = realloc(c[i].p, 4096);
        if (p == NULL) {
            FAIL("realloc shrink returned NULL");
            continue;
        }
        check(p, 4096, rank, 1, i, "realloc'd (shrunk) chunk");
        c[i].p = p;
    }
    for (int i = 0; i < n2; i++)
        free(c[i].p);
    MPI_Barrier(MPI_COMM_WORLD);

    char line[LINE];
    if (g_failures == 0)
        snprintf(line, sizeof line, "rank %d: allocated %u MiB ok", rank,
                 TOTAL >> 20);
    else
        snprintf(line, sizeof line, "rank %d: FAILED", rank);
    print_ordered(line, rank, size);
    int total = job_failures();
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

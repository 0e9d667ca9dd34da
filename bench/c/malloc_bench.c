/* malloc/free throughput, single thread, per size.
 *
 * Two patterns per size: "pair" (malloc then free at once: the allocator's
 * hottest path) and "batch" (allocate 1024 blocks, then free them all: bins
 * and coalescing). Each pattern runs in rounds until a time budget is spent
 * (after a warm-up of a tenth of it), so every measurement lasts long
 * enough to be stable however fast or slow the allocator is at that size.
 * Measured after MPI_Init: under heapmpi the blocks come from the shared
 * heap, in a stock run from glibc. Prints one line per size:
 * `size pair_Mops batch_Mops`. The driver runs it both ways and reports
 * the ratio.
 *
 * usage: malloc_bench [scale]   (time budget = 50 ms x scale per pattern
 *                                and size; default 1)
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define BATCH 1024
#define PAIRS_PER_ROUND 4096
static void *slots[BATCH];
static volatile char sink;

/* One round of each pattern; returns the number of malloc+free pairs. */
static long round_pair(size_t sz)
{
    for (int i = 0; i < PAIRS_PER_ROUND; i++) {
        char *p = malloc(sz);
        p[0] = (char)i;
        sink += p[0];
        free(p);
    }
    return PAIRS_PER_ROUND;
}

static long round_batch(size_t sz)
{
    for (int i = 0; i < BATCH; i++) {
        slots[i] = malloc(sz);
        ((char *)slots[i])[0] = (char)i;
    }
    for (int i = 0; i < BATCH; i++) {
        sink += ((char *)slots[i])[0];
        free(slots[i]);
    }
    return BATCH;
}

/* Millions of malloc+free pairs per second over `budget` seconds. */
static double measure(long (*round)(size_t), size_t sz, double budget)
{
    double t0 = now();
    while (now() - t0 < budget / 10)
        round(sz);
    long ops = 0;
    t0 = now();
    double t;
    do {
        ops += round(sz);
        t = now() - t0;
    } while (t < budget);
    return ops / t / 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    if (scale <= 0)
        scale = 1.0;
    double budget = 0.05 * scale;
    static const size_t sizes[] = {16, 64, 256, 1024, 4096, 16384, 65536};
    if (rank == 0)
        printf("# size pair_Mops batch_Mops\n");
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t sz = sizes[s];
        double pair = measure(round_pair, sz, budget);
        double batch = measure(round_batch, sz, budget);
        if (rank == 0)
            printf("%zu %.2f %.2f\n", sz, pair, batch);
    }
    MPI_Finalize();
    return 0;
}

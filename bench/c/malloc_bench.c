/* malloc/free throughput, single thread, per size class.
 *
 * Two patterns per size: "pair" (malloc then free at once: the allocator's
 * hottest path) and "batch" (allocate 1024 blocks, then free them all: bins
 * and coalescing). Measured after MPI_Init, so under heapmpi the blocks come
 * from the shared heap and in a stock run from glibc. Prints one line per
 * size: `size pair_Mops batch_Mops`. The driver runs it both ways and reports
 * the ratio.
 *
 * usage: malloc_bench [iterations-scale]   (1 = default, larger = longer)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define BATCH 1024
static void *slots[BATCH];

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    static const size_t sizes[] = {16, 64, 256, 1024, 4096, 16384, 65536};
    volatile char sink = 0;
    if (rank == 0) printf("# size pair_Mops batch_Mops\n");
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t sz = sizes[s];
        long n = (long)(2000000 * scale);
        /* warm-up */
        for (long i = 0; i < n / 10; i++) { char *p = malloc(sz); p[0] = (char)i; sink += p[0]; free(p); }
        double t0 = now();
        for (long i = 0; i < n; i++) { char *p = malloc(sz); p[0] = (char)i; sink += p[0]; free(p); }
        double pair = n / (now() - t0) / 1e6;
        long rounds = n / BATCH;
        t0 = now();
        for (long r = 0; r < rounds; r++) {
            for (int i = 0; i < BATCH; i++) { slots[i] = malloc(sz); ((char *)slots[i])[0] = (char)i; }
            for (int i = 0; i < BATCH; i++) { sink += ((char *)slots[i])[0]; free(slots[i]); }
        }
        double batch = (double)rounds * BATCH / (now() - t0) / 1e6;
        if (rank == 0) printf("%zu %.2f %.2f\n", sz, pair, batch);
    }
    MPI_Finalize();
    return sink == 42 ? 0 : 0;
}

/*
 * sleep_after_init.c - heapmpi integration test helper: a job that stays
 * alive with the shared heap mapped, so that a test can kill one rank and
 * check what is left in /dev/shm.
 *
 * usage: sleep_after_init [seconds]   (default 30)
 *
 * After MPI_Init every rank allocates and touches a block, all ranks meet in
 * a barrier, rank 0 prints "ready" (flushed), then every rank sleeps. If
 * nobody is killed, the ranks meet again and rank 0 prints "done".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);
    double seconds = argc > 1 ? atof(argv[1]) : 30.0;

    size_t n = 1u << 20;
    char *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "rank %d: malloc failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(p, rank + 1, n);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("ready\n");
        fflush(stdout);
    }

    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
        ;

    for (size_t i = 0; i < n; i += 4096)
        if (p[i] != rank + 1) {
            fprintf(stderr, "rank %d: block changed while sleeping\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    free(p);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("done\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

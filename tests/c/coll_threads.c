/*
 * coll_threads.c - collective conformance: MPI_THREAD_MULTIPLE, two threads
 * per rank running collectives at the same time, each on its own
 * communicator.
 *
 * Why: MPI allows concurrent collectives on different communicators from
 * different threads. heapmpi keeps per-communicator node state (made by the
 * first collective, under a once-cell) and per-thread caches of
 * communicator infos; two threads of a rank using two communicators at
 * once must neither share a collective's state nor wait for each other.
 *
 * Each rank duplicates MPI_COMM_WORLD twice (in the main thread, in the
 * same order everywhere), then NT = 2 threads each run NIT rounds on their
 * own duplicate: an Allreduce (MPI_SUM of one int, and every 50th round of
 * 3000 doubles, past the inline size), a Bcast of 4 ints from root
 * (round % size), and a Barrier; every result is checked. NIT is 500 at
 * 1 and 2 ranks and 30 at more: two threads per rank spinning in
 * collectives oversubscribe a 2-core machine already at 2 ranks (stock
 * Open MPI takes about 8 ms per round there, stock MPICH about 100 ms at 4
 * ranks).
 *
 * If the MPI does not provide MPI_THREAD_MULTIPLE, the two loops run one
 * after the other in the main thread; the output is the same lines (the
 * provided level is printed and compared with the stock run's).
 *
 * Output (stdout, rank 0, rank order): the provided thread level, per
 * thread the number of right rounds, then "rank N: threads ok". Exit
 * status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

#define NT 2
#define ND 3000

static int g_me, g_n, g_nit;
static MPI_Comm g_comm[NT];

struct targ {
    int t;
    int good;
};

static void *worker(void *arg)
{
    struct targ *a = arg;
    const int t = a->t, me = g_me, n = g_n;
    MPI_Comm c = g_comm[t];
    double *dx = must(malloc(ND * sizeof(double)), "malloc", 0);
    double *dy = must(malloc(ND * sizeof(double)), "malloc", 0);
    for (int it = 0; it < g_nit; it++) {
        int ok = 1;
        /* Allreduce of one int: sum over ranks of (rank * 1000 + t * 100000 + it) */
        int x = me * 1000 + t * 100000 + it, s = -1;
        MPI_OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, c));
        ok &= s == 1000 * (n * (n - 1) / 2) + n * (t * 100000 + it);
        if (it % 50 == 0) {
            for (int i = 0; i < ND; i++)
                dx[i] = (double)((i + me + t + it) % 1000);
            MPI_OK(MPI_Allreduce(dx, dy, ND, MPI_DOUBLE, MPI_SUM, c));
            for (int i = 0; i < ND; i++) {
                double w = 0;
                for (int r = 0; r < n; r++)
                    w += (double)((i + r + t + it) % 1000);
                if (dy[i] != w) {
                    ok = 0;
                    break;
                }
            }
        }
        /* Bcast of 4 ints from root it % n */
        int root = it % n;
        int b[4] = {-1, -1, -1, -1};
        if (me == root)
            for (int i = 0; i < 4; i++)
                b[i] = root * 7 + t * 13 + it + i;
        MPI_OK(MPI_Bcast(b, 4, MPI_INT, root, c));
        for (int i = 0; i < 4; i++)
            ok &= b[i] == root * 7 + t * 13 + it + i;
        MPI_OK(MPI_Barrier(c));
        CHECK(ok, "thread %d round %d: Allreduce %d or Bcast {%d %d %d %d} wrong", t, it, s,
              b[0], b[1], b[2], b[3]);
        a->good += ok;
    }
    free(dx);
    free(dy);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size;
    int provided = coll_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &rank, &size);
    g_me = rank;
    g_n = size;
    g_nit = size > 2 ? 30 : 500;
    out("thread level provided: %s", level_name(provided));
    section("threads");
    for (int t = 0; t < NT; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &g_comm[t]));
    struct targ args[NT];
    memset(args, 0, sizeof args);
    for (int t = 0; t < NT; t++)
        args[t].t = t;
    if (provided < MPI_THREAD_MULTIPLE) {
        for (int t = 0; t < NT; t++)
            worker(&args[t]);
    } else {
        pthread_t th[NT];
        int started = 0;
        for (int t = 0; t < NT; t++) {
            int rc = pthread_create(&th[t], NULL, worker, &args[t]);
            if (rc != 0) {
                FAIL("pthread_create: %s", strerror(rc));
                worker(&args[t]);
                continue;
            }
            started |= 1 << t;
        }
        for (int t = 0; t < NT; t++)
            if (started & (1 << t))
                pthread_join(th[t], NULL);
    }
    for (int t = 0; t < NT; t++) {
        out("thread %d on its own Comm_dup: %d of %d rounds of Allreduce, Bcast, Barrier "
            "right", t, args[t].good, g_nit);
        MPI_OK(MPI_Comm_free(&g_comm[t]));
    }
    return coll_finish("threads", rank, size);
}

/*
 * p2p_threads.c - point-to-point conformance: MPI_THREAD_MULTIPLE with
 * several threads sending and receiving at once.
 *
 * Why: under MPI_THREAD_MULTIPLE heapmpi's queues, request pool and
 * progress engine are used by several threads of a rank at the same time,
 * on the same communicator. Matching must stay exact (each thread has its
 * own tags, so every message has exactly one possible receiver) and no data
 * may be lost or mixed up. heapmpi must also keep providing
 * MPI_THREAD_MULTIPLE (the provided level is printed and compared with the
 * stock run).
 *
 * Every rank runs NT threads; thread t exchanges NIT rounds with both ring
 * neighbours on MPI_COMM_WORLD (tag 10 + 2t to the right, 11 + 2t to the
 * left), sizes 8 B .. 300 KB, cycling through four ways of communicating:
 * Irecv/Isend/Waitall; two Sendrecv; Irecv(MPI_ANY_SOURCE) + blocking Send
 * + Wait; Isend + Probe(MPI_ANY_SOURCE) / Mprobe + Recv / Mrecv + Waitall.
 * Every message is fully checked.
 *
 * If the MPI does not provide MPI_THREAD_MULTIPLE, the program says so and
 * only checks that a single thread works.
 *
 * Output (stdout, rank 0, rank order): the provided thread level and the
 * per-rank counts, then "rank N: threads ok". Exit status 0 on success, 1
 * on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define NT 4
#define NIT 32

static int g_left, g_right, g_me;
static const size_t SIZES[4] = {8, 1000, 40000, 300000};

static uint64_t seed_of(int src, int t, int dir, int it)
{
    return ((uint64_t)src << 40) ^ ((uint64_t)t << 32) ^ ((uint64_t)dir << 24) ^
           (uint64_t)it;
}

struct targ {
    int t;
    int good;
    int total;
};

static int check_msg(const unsigned char *b, const MPI_Status *st, size_t n, int src,
                     int tag, uint64_t seed, const char *what)
{
    int c = -1;
    MPI_Get_count(st, MPI_BYTE, &c);
    int ok = st->MPI_SOURCE == src && st->MPI_TAG == tag && c == (int)n;
    CHECK(ok, "%s: status source %d tag %d count %d, expected %d %d %zu", what,
          st->MPI_SOURCE, st->MPI_TAG, c, src, tag, n);
    return ok && wpattern_check(b, n, seed, what);
}

static void *worker(void *arg)
{
    struct targ *a = arg;
    int t = a->t;
    size_t cap = SIZES[3];
    unsigned char *sb[2], *rb[2];
    for (int d = 0; d < 2; d++) {
        sb[d] = must(malloc(cap), "malloc", cap);
        rb[d] = must(malloc(cap), "malloc", cap);
    }
    /* direction 0: to the right (tag 10+2t), from the left;
     * direction 1: to the left (tag 11+2t), from the right */
    int to[2] = {g_right, g_left}, from[2] = {g_left, g_right};
    int tag[2] = {10 + 2 * t, 11 + 2 * t};
    for (int it = 0; it < NIT; it++) {
        size_t n = SIZES[(it + t) % 4];
        int mode = (it / 4 + t) % 4;
        for (int d = 0; d < 2; d++)
            wpattern_fill(sb[d], n, seed_of(g_me, t, d, it));
        MPI_Status st[2];
        MPI_Request r[4];
        char what[64];
        snprintf(what, sizeof what, "thread %d round %d mode %d", t, it, mode);
        switch (mode) {
        case 0:
            for (int d = 0; d < 2; d++)
                MPI_OK(MPI_Irecv(rb[d], (int)n, MPI_BYTE, from[d], tag[d],
                                 MPI_COMM_WORLD, &r[d]));
            for (int d = 0; d < 2; d++)
                MPI_OK(MPI_Isend(sb[d], (int)n, MPI_BYTE, to[d], tag[d],
                                 MPI_COMM_WORLD, &r[2 + d]));
            {
                MPI_Status all[4];
                MPI_OK(MPI_Waitall(4, r, all));
                st[0] = all[0];
                st[1] = all[1];
            }
            break;
        case 1:
            for (int d = 0; d < 2; d++)
                MPI_OK(MPI_Sendrecv(sb[d], (int)n, MPI_BYTE, to[d], tag[d], rb[d],
                                    (int)n, MPI_BYTE, from[d], tag[d],
                                    MPI_COMM_WORLD, &st[d]));
            break;
        case 2:
            for (int d = 0; d < 2; d++) {
                MPI_OK(MPI_Irecv(rb[d], (int)n, MPI_BYTE, MPI_ANY_SOURCE, tag[d],
                                 MPI_COMM_WORLD, &r[0]));
                MPI_OK(MPI_Send(sb[d], (int)n, MPI_BYTE, to[d], tag[d],
                                MPI_COMM_WORLD));
                MPI_OK(MPI_Wait(&r[0], &st[d]));
            }
            break;
        default:
            for (int d = 0; d < 2; d++)
                MPI_OK(MPI_Isend(sb[d], (int)n, MPI_BYTE, to[d], tag[d],
                                 MPI_COMM_WORLD, &r[d]));
            {
                MPI_Status ps;
                int c = -1;
                MPI_OK(MPI_Probe(MPI_ANY_SOURCE, tag[0], MPI_COMM_WORLD, &ps));
                MPI_Get_count(&ps, MPI_BYTE, &c);
                CHECK(c == (int)n && ps.MPI_SOURCE == from[0], "%s: Probe count %d "
                      "source %d", what, c, ps.MPI_SOURCE);
                MPI_OK(MPI_Recv(rb[0], (int)n, MPI_BYTE, ps.MPI_SOURCE, tag[0],
                                MPI_COMM_WORLD, &st[0]));
                MPI_Message m;
                MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, tag[1], MPI_COMM_WORLD, &m, &ps));
                MPI_OK(MPI_Mrecv(rb[1], (int)n, MPI_BYTE, &m, &st[1]));
            }
            MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
            break;
        }
        for (int d = 0; d < 2; d++) {
            a->good += check_msg(rb[d], &st[d], n, from[d], tag[d],
                                 seed_of(from[d], t, d, it), what);
            a->total++;
        }
    }
    for (int d = 0; d < 2; d++) {
        free(sb[d]);
        free(rb[d]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size;
    int provided = p2p_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &rank, &size);
    g_me = rank;
    g_left = (rank - 1 + size) % size;
    g_right = (rank + 1) % size;
    int query = -1;
    MPI_Query_thread(&query);
    CHECK(query == provided, "MPI_Query_thread %d, MPI_Init_thread provided %d",
          query, provided);
    out("thread level provided: %s", level_name(provided));
    section("threads");
    struct targ args[NT];
    memset(args, 0, sizeof args);
    if (provided < MPI_THREAD_MULTIPLE) {
        args[0].t = 0;
        worker(&args[0]);
        out("MPI_THREAD_MULTIPLE not provided: one thread only: %d of %d messages "
            "right", args[0].good, args[0].total);
    } else {
        pthread_t th[NT];
        int started = 0;
        for (int t = 0; t < NT; t++) {
            args[t].t = t;
            int rc = pthread_create(&th[t], NULL, worker, &args[t]);
            if (rc != 0) {
                FAIL("pthread_create: %s", strerror(rc));
                break;
            }
            started++;
        }
        for (int t = 0; t < started; t++)
            pthread_join(th[t], NULL);
        int good = 0, total = 0;
        for (int t = 0; t < NT; t++) {
            good += args[t].good;
            total += args[t].total;
        }
        out("%d threads x %d rounds x 2 neighbours: %d of %d messages right", NT, NIT,
            good, total);
    }
    return p2p_finish("threads", rank, size);
}

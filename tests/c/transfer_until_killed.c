/*
 * transfer_until_killed.c - heapmpi integration test helper: a job whose
 * ranks keep exchanging messages, so that a test can SIGKILL one rank in
 * the middle of a transfer and check that the job ends and nothing is left
 * in /dev/shm (tests/common/mod.rs, kill_one_rank).
 *
 * usage: transfer_until_killed [seconds]   (default 30)
 *
 * Why: sleep_after_init.c is killed while every rank sleeps. Here the
 * victim dies while heapmpi is moving data: a peer may be blocked in a
 * receive from it, copying out of its part of the shared heap, or waiting
 * for it to take a synchronous or large message. The surviving ranks must
 * not keep the job alive (the launcher must be able to end them), and the
 * shared heap object must not outlive the job.
 *
 * Every rank exchanges with its ring neighbours (to the right, from the
 * left) round after round, from buffers malloc'd each round (in the shared
 * heap under heapmpi):
 *  - small (8 .. 256 B): blocking Sendrecv;
 *  - medium (64 KiB and 64 KiB + 1 B, either side of heapmpi's eager
 *    limit): Irecv + Isend + Waitall;
 *  - large (4 MiB): even rounds blocking (even ranks Send or Ssend then
 *    Recv, odd ranks Recv then Send), odd rounds Irecv + Isend + Waitall.
 * Every received message is checked against a pattern keyed by (source,
 * round, kind). After the first round all ranks meet in a barrier and rank
 * 0 prints "ready" (flushed): every rank is past MPI_Init and traffic has
 * started. The ranks then go on until `seconds` have passed since
 * MPI_Init on rank 0 (rank 0 decides; its decision reaches every rank by an
 * MPI_Bcast each round). If nobody is killed, the ranks meet again and rank
 * 0 prints "done" if every check passed on every rank, else "FAILED".
 *
 * Output (stdout, rank 0): "ready", then "done" or "FAILED"; rounds and
 * bytes per rank on stderr. Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define MEDIUM (64 * 1024)
#define LARGE (4 * 1024 * 1024)

static int g_me, g_size, g_left, g_right;
static long long g_bytes;

static uint64_t seed_of(int src, long round, int kind)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)round << 8) ^ (uint64_t)kind;
}

static void check(const void *b, const MPI_Status *st, size_t n, long round, int kind,
                  const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(st->MPI_SOURCE == g_left && count == (int)n,
          "round %ld %s: source %d count %d, expected %d %zu", round, what,
          st->MPI_SOURCE, count, g_left, n);
    if (count == (int)n) {
        char w[64];
        snprintf(w, sizeof w, "round %ld %s", round, what);
        wpattern_check(b, n, seed_of(g_left, round, kind), w);
    }
    g_bytes += (long long)n;
}

static void round_trip(long round)
{
    MPI_Status st[4];
    MPI_Request r[4];

    /* small, blocking */
    size_t n = 8 + (size_t)(round * 37 % 249);
    char *s = must(malloc(n), "malloc", n), *d = must(malloc(n), "malloc", n);
    wpattern_fill(s, n, seed_of(g_me, round, 0));
    MPI_OK(MPI_Sendrecv(s, (int)n, MPI_BYTE, g_right, 0, d, (int)n, MPI_BYTE, g_left,
                        0, MPI_COMM_WORLD, &st[0]));
    check(d, &st[0], n, round, 0, "small");
    free(s);
    free(d);

    /* medium, nonblocking */
    n = MEDIUM + (size_t)(round % 2);
    s = must(malloc(n), "malloc", n);
    d = must(malloc(n), "malloc", n);
    wpattern_fill(s, n, seed_of(g_me, round, 1));
    MPI_OK(MPI_Irecv(d, (int)n, MPI_BYTE, g_left, 1, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Isend(s, (int)n, MPI_BYTE, g_right, 1, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Waitall(2, r, st));
    check(d, &st[0], n, round, 1, "medium");
    free(s);
    free(d);

    /* large, blocking or nonblocking */
    n = LARGE;
    s = must(malloc(n), "malloc", n);
    d = must(malloc(n), "malloc", n);
    wpattern_fill(s, n, seed_of(g_me, round, 2));
    if (round % 2 == 0 && g_size > 1) {
        int ssend = round % 4 == 0;
        if (g_me % 2 == 0) {
            if (ssend)
                MPI_OK(MPI_Ssend(s, (int)n, MPI_BYTE, g_right, 2, MPI_COMM_WORLD));
            else
                MPI_OK(MPI_Send(s, (int)n, MPI_BYTE, g_right, 2, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(d, (int)n, MPI_BYTE, g_left, 2, MPI_COMM_WORLD, &st[0]));
        } else {
            MPI_OK(MPI_Recv(d, (int)n, MPI_BYTE, g_left, 2, MPI_COMM_WORLD, &st[0]));
            if (ssend)
                MPI_OK(MPI_Ssend(s, (int)n, MPI_BYTE, g_right, 2, MPI_COMM_WORLD));
            else
                MPI_OK(MPI_Send(s, (int)n, MPI_BYTE, g_right, 2, MPI_COMM_WORLD));
        }
    } else {
        MPI_OK(MPI_Irecv(d, (int)n, MPI_BYTE, g_left, 2, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Isend(s, (int)n, MPI_BYTE, g_right, 2, MPI_COMM_WORLD, &r[1]));
        MPI_OK(MPI_Waitall(2, r, st));
    }
    check(d, &st[0], n, round, 2, "large");
    free(s);
    free(d);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    double t0 = MPI_Wtime();
    get_rank_and_size(&rank, &size);
    double seconds = argc > 1 ? atof(argv[1]) : 30.0;
    g_me = rank;
    g_size = size;
    g_left = (rank - 1 + size) % size;
    g_right = (rank + 1) % size;

    section("first round");
    long round = 0;
    round_trip(round++);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        printf("ready\n");
        fflush(stdout);
    }

    section("transfers");
    for (;;) {
        int go = rank == 0 ? MPI_Wtime() - t0 < seconds : 0;
        MPI_OK(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (!go)
            break;
        round_trip(round++);
    }

    section("finish");
    fprintf(stderr, "rank %d: %ld rounds, %lld bytes received\n", rank, round,
            g_bytes);
    int total = job_failures();
    if (rank == 0) {
        printf("%s\n", total == 0 ? "done" : "FAILED");
        fflush(stdout);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

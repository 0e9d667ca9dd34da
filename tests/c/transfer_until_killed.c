/*
 * transfer_until_killed.c - heapmpi integration test helper: a job whose
 * ranks keep exchanging messages, so that a test can SIGKILL one rank in
 * the middle of a transfer and check that the job ends and nothing is left
 * in /dev/shm (tests/common/mod.rs, kill_one_rank).
 *
 * usage: transfer_until_killed [seconds] [p2p|coll|rma]
 *        (default 30 seconds of p2p traffic; any other mode, or a third
 *        argument, is a usage error: message on stderr, exit status 2)
 *
 * Why: sleep_after_init.c is killed while every rank sleeps. Here the
 * victim dies while heapmpi is moving data: a peer may be blocked in a
 * receive from it, copying out of its part of the shared heap, or waiting
 * for it to take a synchronous or large message, to arrive in a collective
 * or to end an RMA epoch. The surviving ranks must not keep the job alive
 * (the launcher must be able to end them), and the shared heap object must
 * not outlive the job.
 *
 * The traffic of one round, by mode. Messages and buffers are malloc'd
 * each round (in the shared heap under heapmpi); every check is against
 * values that follow from (rank, round), so any wrong, stale or misplaced
 * data is reported.
 *
 * p2p (the default): every rank exchanges with its ring neighbours (to the
 * right, from the left):
 *  - small (8 .. 256 B): blocking Sendrecv;
 *  - medium (64 KiB and 64 KiB + 1 B, either side of heapmpi's eager
 *    limit): Irecv + Isend + Waitall;
 *  - large (4 MiB): even rounds blocking (even ranks Send or Ssend then
 *    Recv, odd ranks Recv then Send), odd rounds Irecv + Isend + Waitall.
 *  Every received message is checked against a pattern keyed by (source,
 *  round, kind), and its source and size.
 *
 * coll: collectives over MPI_COMM_WORLD:
 *  - MPI_Allreduce (MPI_SUM) of 1 double (8 B) and of 1 MiB of doubles:
 *    every rank contributes integers below 2^20 computed from (rank, index,
 *    round), so the sum is exact in any order and checked element by
 *    element;
 *  - MPI_Bcast of 1 MiB, root rank (round % size), checked against the
 *    root's pattern;
 *  - MPI_Alltoall of 4 KiB per peer, each block checked against a pattern
 *    keyed by (source, destination, round);
 *  - MPI_Barrier.
 *
 * rma: one window of 1 MiB per rank (MPI_Win_allocate, displacement unit 1)
 * for the whole run, freed at the end. Each round:
 *  - a fence epoch (MPI_Win_fence(0) .. MPI_Win_fence(MPI_MODE_NOSUCCEED)):
 *    MPI_Put of 64 KiB from a malloc'd buffer to the right neighbour's
 *    window (bytes 0 .. 64 Ki) and MPI_Get of 64 KiB from the left
 *    neighbour's window (bytes 64 Ki .. 128 Ki, which its owner filled with
 *    its pattern for the round before the fence). After the closing fence
 *    the put data from the left neighbour (in this rank's window) and the
 *    data got from it are checked;
 *  - a passive epoch: MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right),
 *    MPI_Accumulate(MPI_SUM) of 8 doubles (integers from (rank, round))
 *    into bytes 128 Ki .. 128 Ki + 64 of the right neighbour's window, then
 *    by round % 5: MPI_Win_flush + MPI_Get of those 8 doubles back;
 *    MPI_Win_flush_local (then the origin buffer is overwritten);
 *    MPI_Win_flush_all + MPI_Get back; MPI_Win_flush_local_all (origin
 *    overwritten); nothing. Then MPI_Win_unlock. A rank is the only one to
 *    accumulate into its right neighbour, so the values got back are the
 *    exact running sums and are checked; after the last round (and a
 *    barrier) every rank checks the totals in its own window (under a lock
 *    on itself).
 *
 * After the first round all ranks meet in a barrier and rank 0 prints
 * "ready" (flushed): every rank is past MPI_Init and traffic has started.
 * The ranks then go on until `seconds` have passed since MPI_Init on rank
 * 0 (rank 0 decides; its decision reaches every rank by an MPI_Bcast each
 * round). If nobody is killed, the ranks meet again and rank 0 prints
 * "done" if every check passed on every rank, else "FAILED".
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

/* ---- coll ---- */

#define COLL_N (1024 * 1024 / sizeof(double)) /* doubles in the 1 MiB Allreduce */
#define BCAST_N (1024 * 1024)
#define A2A_N 4096

/* Rank r's contribution to element i of round `round`'s Allreduce: an
 * integer below 2^20, so sums over any number of ranks are exact. */
static double coll_value(int r, size_t i, long round)
{
    return (double)(((uint64_t)i * 7 + (uint64_t)round * 13 + (uint64_t)r * 1000003) &
                    0xfffff);
}

static double coll_sum(size_t i, long round)
{
    double sum = 0;
    for (int r = 0; r < g_size; r++)
        sum += coll_value(r, i, round);
    return sum;
}

static uint64_t a2a_seed(int src, int dst, long round)
{
    return seed_of(src, round, 4) ^ ((uint64_t)dst << 32);
}

static void coll_round(long round)
{
    /* Allreduce, 1 double (8 B); index COLL_N: not one of the large one's */
    double *s = must(malloc(sizeof(double)), "malloc", sizeof(double));
    double *d = must(malloc(sizeof(double)), "malloc", sizeof(double));
    s[0] = coll_value(g_me, COLL_N, round);
    d[0] = -1;
    MPI_OK(MPI_Allreduce(s, d, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    CHECK(d[0] == coll_sum(COLL_N, round), "round %ld allreduce 8 B: %.1f, expected %.1f",
          round, d[0], coll_sum(COLL_N, round));
    g_bytes += (long long)sizeof(double);
    free(s);
    free(d);

    /* Allreduce, 1 MiB of doubles */
    size_t n = COLL_N * sizeof(double);
    s = must(malloc(n), "malloc", n);
    d = must(malloc(n), "malloc", n);
    for (size_t i = 0; i < COLL_N; i++) {
        s[i] = coll_value(g_me, i, round);
        d[i] = -1;
    }
    MPI_OK(MPI_Allreduce(s, d, (int)COLL_N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    for (size_t i = 0; i < COLL_N; i++) {
        double want = coll_sum(i, round);
        if (d[i] != want) {
            CHECK(0, "round %ld allreduce 1 MiB: element %zu of %zu is %.1f, expected %.1f",
                  round, i, (size_t)COLL_N, d[i], want);
            break;
        }
    }
    g_bytes += (long long)n;
    free(s);
    free(d);

    /* Bcast, 1 MiB, rotating root */
    int root = (int)(round % g_size);
    unsigned char *b = must(malloc(BCAST_N), "malloc", BCAST_N);
    if (g_me == root)
        wpattern_fill(b, BCAST_N, seed_of(root, round, 3));
    else
        memset(b, 0, BCAST_N);
    MPI_OK(MPI_Bcast(b, BCAST_N, MPI_BYTE, root, MPI_COMM_WORLD));
    char w[64];
    snprintf(w, sizeof w, "round %ld bcast from %d", round, root);
    wpattern_check(b, BCAST_N, seed_of(root, round, 3), w);
    if (g_me != root)
        g_bytes += BCAST_N;
    free(b);

    /* Alltoall, 4 KiB per peer */
    n = (size_t)g_size * A2A_N;
    unsigned char *as = must(malloc(n), "malloc", n);
    unsigned char *ad = must(malloc(n), "malloc", n);
    for (int j = 0; j < g_size; j++)
        wpattern_fill(as + (size_t)j * A2A_N, A2A_N, a2a_seed(g_me, j, round));
    memset(ad, 0, n);
    MPI_OK(MPI_Alltoall(as, A2A_N, MPI_BYTE, ad, A2A_N, MPI_BYTE, MPI_COMM_WORLD));
    for (int j = 0; j < g_size; j++) {
        snprintf(w, sizeof w, "round %ld alltoall from %d", round, j);
        wpattern_check(ad + (size_t)j * A2A_N, A2A_N, a2a_seed(j, g_me, round), w);
    }
    g_bytes += (long long)n;
    free(as);
    free(ad);

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---- rma ---- */

#define WIN_SIZE (1024 * 1024)
#define RMA_N (64 * 1024)   /* bytes put and got per round */
#define PUT_AT 0            /* the left neighbour puts here */
#define GET_AT RMA_N        /* the right neighbour gets from here */
#define ACC_AT (2 * RMA_N)  /* the left neighbour accumulates here */
#define ACC_N 8             /* doubles */

static MPI_Win g_win = MPI_WIN_NULL;
static unsigned char *g_base;

/* What rank src accumulates into element k in round `round`. */
static double acc_value(int src, int k, long round)
{
    return (double)((long long)(src + 1) * (k + 1) + round);
}

/* Element k of the accumulate area of src's right neighbour after `rounds`
 * rounds (exact: small integers). */
static double acc_total(int src, int k, long rounds)
{
    long long r = rounds;
    return (double)(r * (src + 1) * (k + 1) + r * (r - 1) / 2);
}

static void rma_init(void)
{
    MPI_OK(MPI_Win_allocate(WIN_SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &g_base, &g_win));
    /* Zero the accumulate area (and the rest) under a lock on ourselves, so
     * that the public copy holds the zeros before any neighbour locks. */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_me, 0, g_win));
    memset(g_base, 0, WIN_SIZE);
    MPI_OK(MPI_Win_unlock(g_me, g_win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void rma_round(long round)
{
    char w[64];

    /* fence epoch: Put to the right, Get from the left */
    unsigned char *s = must(malloc(RMA_N), "malloc", RMA_N);
    unsigned char *d = must(malloc(RMA_N), "malloc", RMA_N);
    wpattern_fill(s, RMA_N, seed_of(g_me, round, 6));
    memset(d, 0, RMA_N);
    wpattern_fill(g_base + GET_AT, RMA_N, seed_of(g_me, round, 5));
    MPI_OK(MPI_Win_fence(0, g_win));
    MPI_OK(MPI_Put(s, RMA_N, MPI_BYTE, g_right, PUT_AT, RMA_N, MPI_BYTE, g_win));
    MPI_OK(MPI_Get(d, RMA_N, MPI_BYTE, g_left, GET_AT, RMA_N, MPI_BYTE, g_win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, g_win));
    snprintf(w, sizeof w, "round %ld put from %d", round, g_left);
    wpattern_check(g_base + PUT_AT, RMA_N, seed_of(g_left, round, 6), w);
    snprintf(w, sizeof w, "round %ld get from %d", round, g_left);
    wpattern_check(d, RMA_N, seed_of(g_left, round, 5), w);
    g_bytes += 2 * RMA_N;
    free(s);
    free(d);

    /* passive epoch: Accumulate into the right neighbour, a flush variant */
    size_t n = ACC_N * sizeof(double);
    double *a = must(malloc(n), "malloc", n);
    double *back = must(malloc(n), "malloc", n);
    for (int k = 0; k < ACC_N; k++) {
        a[k] = acc_value(g_me, k, round);
        back[k] = -1;
    }
    int variant = (int)(round % 5), readback = 0;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_right, 0, g_win));
    MPI_OK(MPI_Accumulate(a, ACC_N, MPI_DOUBLE, g_right, ACC_AT, ACC_N, MPI_DOUBLE,
                          MPI_SUM, g_win));
    switch (variant) {
    case 0:
        MPI_OK(MPI_Win_flush(g_right, g_win));
        readback = 1;
        break;
    case 1:
        MPI_OK(MPI_Win_flush_local(g_right, g_win));
        for (int k = 0; k < ACC_N; k++)
            a[k] = 1e9; /* the origin buffer is free again */
        break;
    case 2:
        MPI_OK(MPI_Win_flush_all(g_win));
        readback = 1;
        break;
    case 3:
        MPI_OK(MPI_Win_flush_local_all(g_win));
        for (int k = 0; k < ACC_N; k++)
            a[k] = 1e9;
        break;
    default:
        break;
    }
    if (readback)
        MPI_OK(MPI_Get(back, ACC_N, MPI_DOUBLE, g_right, ACC_AT, ACC_N, MPI_DOUBLE, g_win));
    MPI_OK(MPI_Win_unlock(g_right, g_win));
    if (readback) {
        for (int k = 0; k < ACC_N; k++) {
            double want = acc_total(g_me, k, round + 1);
            if (back[k] != want) {
                CHECK(0, "round %ld accumulate (flush variant %d) read back from %d: "
                      "element %d is %.1f, expected %.1f",
                      round, variant, g_right, k, back[k], want);
                break;
            }
        }
        g_bytes += (long long)n;
    }
    free(a);
    free(back);
}

/* After the last of `rounds` rounds: check what the left neighbour
 * accumulated here, free the window. */
static void rma_finish(long rounds)
{
    double acc[ACC_N];
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every unlock has returned */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, g_me, 0, g_win));
    memcpy(acc, g_base + ACC_AT, sizeof acc);
    MPI_OK(MPI_Win_unlock(g_me, g_win));
    for (int k = 0; k < ACC_N; k++) {
        double want = acc_total(g_left, k, rounds);
        if (acc[k] != want) {
            CHECK(0, "after %ld rounds: accumulated from %d: element %d is %.1f, "
                  "expected %.1f",
                  rounds, g_left, k, acc[k], want);
            break;
        }
    }
    MPI_OK(MPI_Win_free(&g_win));
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"p2p", "coll", "rma"};
    static void (*const round_fns[])(long) = {round_trip, coll_round, rma_round};
    int rank, size;
    MPI_Init(&argc, &argv);
    double t0 = MPI_Wtime();
    get_rank_and_size(&rank, &size);
    double seconds = argc > 1 ? atof(argv[1]) : 30.0;
    int mode = 0;
    if (argc > 2) {
        mode = -1;
        for (int m = 0; m < 3; m++)
            if (strcmp(argv[2], modes[m]) == 0)
                mode = m;
    }
    if (mode < 0 || argc > 3) {
        if (rank == 0)
            fprintf(stderr, "usage: transfer_until_killed [seconds] [p2p|coll|rma]\n");
        MPI_Finalize();
        return 2;
    }
    void (*one_round)(long) = round_fns[mode];
    g_me = rank;
    g_size = size;
    g_left = (rank - 1 + size) % size;
    g_right = (rank + 1) % size;

    if (one_round == rma_round) {
        section("window");
        rma_init();
    }

    section("first round");
    long round = 0;
    one_round(round++);
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
        one_round(round++);
    }

    section("finish");
    if (one_round == rma_round)
        rma_finish(round);
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

/*
 * coll_nbfirst.c - collective conformance: a nonblocking collective as a
 * communicator's first collective.
 *
 * Why: heapmpi's collectives share a control block per communicator in the
 * heap, made in a call every member makes. A blocking collective can make
 * it (all members are in it), a nonblocking one cannot: it may not wait
 * for the others, who may be anywhere (here: one rank posts and waits
 * while another sends it a message first). So MPI_COMM_WORLD gets its
 * block in MPI_Init, and a new communicator whose members share a node in
 * the call that creates it. This program makes no blocking collective
 * before its report: every collective below is the first of its kind, or
 * the very first, on its communicator.
 *
 * Sections (every request waited for, every result checked exactly):
 *  A. MPI_COMM_WORLD straight after MPI_Init: Iallreduce (SUM of rank+1),
 *     then Ibcast of 5 ints from the last rank; rank 0 receives a message
 *     from the last rank (Recv) between its post and its Wait.
 *  B. Comm_dup(WORLD): Ibcast of 3 ints from rank 0 first, then Iallreduce
 *     (MAX).
 *  C. Comm_split(WORLD, one colour, keys reversed): Igather of 2 ints at
 *     its rank 0 first, then Ialltoall of 1 int per block.
 *  D. Comm_create(WORLD, the world group): Iscatter of 2 ints from its
 *     last rank first; Comm_create_group of the same group (tag 7):
 *     Iallgather first.
 *  E. Cart_create (1-D, periodic, no reorder): Ibarrier first, then
 *     Ireduce (SUM) at rank 0.
 *  F. Comm_split_type(WORLD, MPI_COMM_TYPE_SHARED): Iallreduce first.
 *
 * Output (stdout, rank 0, rank order): the results, the number of
 * nonblocking collectives each rank posted ("nonblocking calls per rank:
 * N"; heapmpi's tests compare it with the nonblocking= count of its
 * report, where the whole communicator shares a node), then "rank N:
 * nbfirst ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

static int g_calls;

/* Every request of `q` completes, by MPI_Waitall. */
static void wait_all(int n, MPI_Request *q)
{
    MPI_OK(MPI_Waitall(n, q, MPI_STATUSES_IGNORE));
}

static void world_first(int rank, int size)
{
    section("A world");
    int mine = rank + 1, sum = -1;
    int b[5];
    MPI_Request q[2];
    MPI_OK(MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[0]));
    g_calls++;
    for (int i = 0; i < 5; i++)
        b[i] = rank == size - 1 ? 1000 + 7 * i : -1;
    MPI_OK(MPI_Ibcast(b, 5, MPI_INT, size - 1, MPI_COMM_WORLD, &q[1]));
    g_calls++;
    /* The last rank's message reaches rank 0 while its collectives are
     * pending: rank 0 sits in Recv, the others in their Wait. */
    int token = 0;
    if (size > 1 && rank == size - 1) {
        token = 4242;
        MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
    } else if (size > 1 && rank == 0) {
        MPI_OK(MPI_Recv(&token, 1, MPI_INT, size - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == 4242, "token %d", token);
    }
    wait_all(2, q);
    CHECK(sum == size * (size + 1) / 2, "Iallreduce SUM: %d", sum);
    int ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= b[i] == 1000 + 7 * i;
    CHECK(ok, "Ibcast from the last rank: wrong elements");
    out("A world: Iallreduce %d, Ibcast %s", sum, ok ? "right" : "wrong");
}

static void dup_first(int rank, int size)
{
    section("B dup");
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int b[3] = {-1, -1, -1}, mx = -1, mine = 3 * rank + 1;
    if (rank == 0)
        b[0] = 11, b[1] = 22, b[2] = 33;
    MPI_Request q[2];
    MPI_OK(MPI_Ibcast(b, 3, MPI_INT, 0, d, &q[0]));
    MPI_OK(MPI_Iallreduce(&mine, &mx, 1, MPI_INT, MPI_MAX, d, &q[1]));
    g_calls += 2;
    wait_all(2, q);
    CHECK(b[0] == 11 && b[1] == 22 && b[2] == 33, "Ibcast on the dup: %d %d %d", b[0], b[1],
          b[2]);
    CHECK(mx == 3 * (size - 1) + 1, "Iallreduce MAX on the dup: %d", mx);
    out("B dup: Ibcast %d %d %d, Iallreduce MAX %d", b[0], b[1], b[2], mx);
    MPI_OK(MPI_Comm_free(&d));
}

static void split_first(int rank, int size)
{
    section("C split");
    MPI_Comm s;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &s));
    int r;
    MPI_Comm_rank(s, &r);
    int mine[2] = {100 * r, 100 * r + 1};
    int *all = must(malloc((size_t)size * 2 * sizeof(int)), "malloc", (size_t)size * 8);
    int *sb = must(malloc((size_t)size * sizeof(int)), "malloc", (size_t)size * 4);
    int *rb = must(malloc((size_t)size * sizeof(int)), "malloc", (size_t)size * 4);
    for (int i = 0; i < 2 * size; i++)
        all[i] = -1;
    for (int i = 0; i < size; i++)
        sb[i] = 1000 * r + i, rb[i] = -1;
    MPI_Request q[2];
    MPI_OK(MPI_Igather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, s, &q[0]));
    MPI_OK(MPI_Ialltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, s, &q[1]));
    g_calls += 2;
    wait_all(2, q);
    int ok = 1;
    if (r == 0)
        for (int i = 0; i < size; i++)
            ok &= all[2 * i] == 100 * i && all[2 * i + 1] == 100 * i + 1;
    CHECK(ok, "Igather on the split: wrong blocks");
    int ok2 = 1;
    for (int i = 0; i < size; i++)
        ok2 &= rb[i] == 1000 * i + r;
    CHECK(ok2, "Ialltoall on the split: wrong blocks");
    out("C split (rank %d there): Igather %s, Ialltoall %s", r, ok ? "right" : "wrong",
        ok2 ? "right" : "wrong");
    free(all);
    free(sb);
    free(rb);
    MPI_OK(MPI_Comm_free(&s));
}

static void create_first(int rank, int size)
{
    section("D create");
    MPI_Group g;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    MPI_Comm c, cg;
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    int *src = must(malloc((size_t)size * 2 * sizeof(int)), "malloc", (size_t)size * 8);
    for (int i = 0; i < 2 * size; i++)
        src[i] = rank == size - 1 ? 5000 + i : -1;
    int got[2] = {-1, -1};
    MPI_Request q;
    MPI_OK(MPI_Iscatter(src, 2, MPI_INT, got, 2, MPI_INT, size - 1, c, &q));
    g_calls++;
    wait_all(1, &q);
    CHECK(got[0] == 5000 + 2 * rank && got[1] == 5001 + 2 * rank, "Iscatter: %d %d", got[0],
          got[1]);
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &cg));
    int mine = rank * rank, *all = must(malloc((size_t)size * sizeof(int)), "malloc",
                                        (size_t)size * 4);
    MPI_OK(MPI_Iallgather(&mine, 1, MPI_INT, all, 1, MPI_INT, cg, &q));
    g_calls++;
    wait_all(1, &q);
    int ok = 1;
    for (int i = 0; i < size; i++)
        ok &= all[i] == i * i;
    CHECK(ok, "Iallgather on Comm_create_group: wrong blocks");
    out("D create: Iscatter %d %d, Iallgather %s", got[0], got[1], ok ? "right" : "wrong");
    free(src);
    free(all);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_free(&cg));
    MPI_OK(MPI_Group_free(&g));
}

static void cart_first(int rank, int size)
{
    section("E cart");
    MPI_Comm cart;
    int dims[1] = {size}, periods[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    MPI_Request q[2];
    long long mine = 1LL << (rank % 40), sum = -1;
    MPI_OK(MPI_Ibarrier(cart, &q[0]));
    MPI_OK(MPI_Ireduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, 0, cart, &q[1]));
    g_calls += 2;
    wait_all(2, q);
    long long want = 0;
    for (int i = 0; i < size; i++)
        want += 1LL << (i % 40);
    if (rank == 0)
        CHECK(sum == want, "Ireduce SUM on the grid: %lld, want %lld", sum, want);
    out("E cart: Ireduce %lld", rank == 0 ? sum : want);
    MPI_OK(MPI_Comm_free(&cart));
}

static void shared_first(int rank, int size)
{
    section("F split_type");
    MPI_Comm sh;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &sh));
    int n, one = 1, cnt = -1;
    MPI_Comm_size(sh, &n);
    MPI_Request q;
    MPI_OK(MPI_Iallreduce(&one, &cnt, 1, MPI_INT, MPI_SUM, sh, &q));
    g_calls++;
    wait_all(1, &q);
    CHECK(cnt == n, "Iallreduce on the shared-memory split: %d of %d", cnt, n);
    out("F split_type: Iallreduce counts %s", cnt == n ? "right" : "wrong");
    (void)size;
    MPI_OK(MPI_Comm_free(&sh));
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    world_first(rank, size);
    dup_first(rank, size);
    split_first(rank, size);
    create_first(rank, size);
    cart_first(rank, size);
    shared_first(rank, size);
    out("nonblocking calls per rank: %d", g_calls);
    return coll_finish("nbfirst", rank, size);
}

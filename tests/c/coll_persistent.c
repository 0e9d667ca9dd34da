/*
 * coll_persistent.c - collective conformance: MPI-4 persistent collectives
 * (MPI_Barrier_init, Bcast_init, Reduce_init, Allreduce_init, Gather_init,
 * Allgather_init, Alltoall_init, Scatter_init, Scan_init, Exscan_init,
 * Reduce_scatter_block_init, Neighbor_allgather_init,
 * Neighbor_alltoall_init, and the v forms Gatherv_init, Scatterv_init,
 * Allgatherv_init, Alltoallv_init, Reduce_scatter_init).
 *
 * Why: a persistent collective binds its arguments once and runs at every
 * MPI_Start, reading the send buffer as it is then; heapmpi runs those it
 * can as nonblocking collectives over the heap under the persistent
 * request, and the rest through the real MPI's nonblocking collective. Its
 * request must go inactive (not freed) at every completion, survive
 * Startall, Test and Request_get_status, and be freed by
 * MPI_Request_free; a derived datatype freed after the
 * initialisation must still describe the buffer at every start.
 *
 * Sections (every result checked exactly, at every round):
 *  A. on MPI_COMM_WORLD, then on Comm_dup(WORLD) and on
 *     Comm_split(WORLD, one colour, keys reversed): the eight routines
 *     (Bcast and Reduce/Gather/Scatter from the last rank, Reduce SUM and
 *     Allreduce MAX of ints, 1-3 ints per block), initialised once,
 *     started ROUNDS times with new data each time: by MPI_Startall and
 *     MPI_Waitall, then one by one with MPI_Start and a loop of MPI_Test;
 *     a blocking MPI_Allreduce and an MPI_Ibcast between rounds.
 *  C. Scan_init (SUM), Exscan_init (MAX) and Reduce_scatter_block_init
 *     (SUM, 2 ints per block) on MPI_COMM_WORLD, started ROUNDS times by
 *     Startall with new data (Exscan's result on rank 0 is undefined and
 *     not looked at).
 *  D. Neighbor_allgather_init (1 int) and Neighbor_alltoall_init (2 ints
 *     per block), Neighbor_allgatherv_init, Neighbor_alltoallv_init and
 *     Neighbor_alltoallw_init (the same blocks at reversed displacements
 *     with gaps; alltoallw's second receive block and first send block as
 *     derived types freed after the initialisation) on a periodic
 *     ring (MPI_Cart_create) and on a distributed graph where rank r sends
 *     to r+1 and r+2, started ROUNDS times by Startall with new data: the
 *     all-gathers' blocks checked against the sources' values, the
 *     all-to-alls' against an MPI_Ineighbor_alltoall(v) of the same data
 *     (the MPIs pair ambiguous neighbourhoods, a ring of 1 or 2, alike in
 *     persistent and nonblocking forms; MPICH 4.0 pairs v forms otherwise
 *     than Neighbor_alltoall).
 *  E. the v forms on MPI_COMM_WORLD, counts that differ per member and pair,
 *     displacements in reverse member order with gaps (guards checked):
 *     Gatherv_init and Scatterv_init at the last rank, Allgatherv_init,
 *     Alltoallv_init, Reduce_scatter_init (SUM, m + 1 ints to member m),
 *     and Alltoallw_init of Alltoallv's blocks (byte displacements; the
 *     blocks from odd members received as a derived type, a contiguous
 *     int, freed after the initialisation), started ROUNDS times by
 *     Startall with new data. Not under stock MPICH 4.0 (as A's gathers).
 *  F. Starts in different orders (MPI-4.0 §6.13 lets members start a
 *     communicator's persistent collectives in any order unless it asserts
 *     mpi_assert_strict_persistent_collective_ordering): Bcast_init,
 *     Allreduce_init (SUM), Barrier_init and Reduce_init (MAX) on a
 *     duplicate of MPI_COMM_WORLD, all four in flight at once, each rank
 *     starting them in an order rotated by its rank (reversed on odd
 *     rounds), with an MPI_Ibcast of the communicator after the second
 *     start, ROUNDS times (in one order on every rank under Intel MPI,
 *     whose stock fails otherwise). Then, on another duplicate, 300
 *     Allreduce_init one after the other, each started once, checked and
 *     freed (heapmpi gives each a control block of its own and takes it
 *     back); then 3 times 40 Allreduce_init made at once (ranks run ahead
 *     of each other through initialisations, which need no other member)
 *     and started in rank-dependent orders.
 *  B. Bcast_init of 2 elements of a strided Type_vector freed right after
 *     the initialisation (holes untouched at every round); Allreduce_init
 *     of 4096 ints (beyond heapmpi's inline cells: read in place) and of
 *     3 ints with a user-defined operation (the real MPI's path);
 *     Request_get_status of an inactive request (flag set at once); an
 *     Allreduce_init started, a blocking Allreduce, then its Wait.
 *
 * Stock MPICH 4.0 (Debian 12's 4.0.2) gets the persistent gathers,
 * all-to-all and scatter wrong (the root of a Gather_init receives
 * nothing; later rounds of Allgather_init, Alltoall_init and Scatter_init
 * deliver stale blocks) and says an inactive persistent collective request
 * is not complete (Request_get_status flag 0): there the program uses the
 * four routines it gets right (Barrier, Bcast, Reduce, Allreduce) and
 * skips that check, so that stock and heapmpi print the same.
 *
 * Output (stdout, rank 0, rank order): the results, the number of starts
 * heapmpi can run on the heap when the communicator shares a node
 * ("heap-eligible starts per rank: N", compared by heapmpi's tests with
 * its report's nonblocking= count), then "rank N: persistent ok". Exit
 * status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

#define ROUNDS 20
#define NQ 8

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define STOCK_PERSISTENT_BROKEN 1
#else
#define STOCK_PERSISTENT_BROKEN 0
#endif
/* Stock Intel MPI 2021 fails starts in different orders ("Invalid
 * communicator" from its schedule's progress): there F starts them in one
 * order on every rank. */
#ifdef I_MPI_NUMVERSION
#define STOCK_UNORDERED_BROKEN 1
#else
#define STOCK_UNORDERED_BROKEN 0
#endif
/* The routines used: all eight, or the four stock MPICH 4.0 gets right. */
static const int g_nq = STOCK_PERSISTENT_BROKEN ? 4 : NQ;

static int g_eligible;

typedef struct {
    int bc[3], red_s[2], red_r[2], ar_s[2], ar_r[2];
    int g_s[2], *g_r, ag_s, *ag_r, *a2a_s, *a2a_r, *sc_s, sc_r[2];
} bufs;

static void fill(bufs *b, int rank, int size, int round, int root)
{
    for (int i = 0; i < 3; i++)
        b->bc[i] = rank == root ? 1000 * round + i : -1;
    for (int i = 0; i < 2; i++) {
        b->red_s[i] = rank + round + i;
        b->red_r[i] = -1;
        b->ar_s[i] = (rank * 7 + round * 3 + i) % 11;
        b->ar_r[i] = -1;
        b->g_s[i] = 100 * rank + round + i;
        b->sc_r[i] = -1;
    }
    b->ag_s = rank * round + 5;
    for (int i = 0; i < 2 * size; i++) {
        b->g_r[i] = -1;
        b->sc_s[i] = rank == root ? 10 * round + i : -1;
    }
    for (int i = 0; i < size; i++) {
        b->ag_r[i] = -1;
        b->a2a_s[i] = 1000 * rank + 10 * i + round;
        b->a2a_r[i] = -1;
    }
}

static int check(const bufs *b, int rank, int size, int round, int root)
{
    int ok = 1;
    for (int i = 0; i < 3; i++)
        ok &= b->bc[i] == 1000 * round + i;
    CHECK(ok, "Bcast, round %d", round);
    int good = ok;
    if (rank == root) {
        for (int i = 0; i < 2; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += r + round + i;
            CHECK(b->red_r[i] == want, "Reduce SUM[%d] round %d: %d want %d", i, round,
                  b->red_r[i], want);
            good &= b->red_r[i] == want;
            for (int r = 0; r < size && g_nq > 4; r++) {
                int gok = b->g_r[2 * r + i] == 100 * r + round + i;
                CHECK(gok, "Gather block %d[%d] round %d", r, i, round);
                good &= gok;
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        int want = -1;
        for (int r = 0; r < size; r++) {
            int v = (r * 7 + round * 3 + i) % 11;
            want = v > want ? v : want;
        }
        CHECK(b->ar_r[i] == want, "Allreduce MAX[%d] round %d", i, round);
        good &= b->ar_r[i] == want;
        if (g_nq == 4)
            continue;
        int sok = b->sc_r[i] == 10 * round + 2 * rank + i;
        CHECK(sok, "Scatter[%d] round %d: %d", i, round, b->sc_r[i]);
        good &= sok;
    }
    for (int r = 0; r < size && g_nq > 4; r++) {
        int aok = b->ag_r[r] == r * round + 5 && b->a2a_r[r] == 1000 * r + 10 * rank + round;
        CHECK(aok, "Allgather/Alltoall block %d round %d", r, round);
        good &= aok;
    }
    return good;
}

static void eight(MPI_Comm c, const char *label)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int root = size - 1;
    bufs b;
    b.g_r = must(malloc((size_t)size * 8), "malloc", (size_t)size * 8);
    b.sc_s = must(malloc((size_t)size * 8), "malloc", (size_t)size * 8);
    b.ag_r = must(malloc((size_t)size * 4), "malloc", (size_t)size * 4);
    b.a2a_s = must(malloc((size_t)size * 4), "malloc", (size_t)size * 4);
    b.a2a_r = must(malloc((size_t)size * 4), "malloc", (size_t)size * 4);
    MPI_Request q[NQ];
    MPI_OK(MPI_Barrier_init(c, MPI_INFO_NULL, &q[0]));
    MPI_OK(MPI_Bcast_init(b.bc, 3, MPI_INT, root, c, MPI_INFO_NULL, &q[1]));
    MPI_OK(MPI_Reduce_init(b.red_s, b.red_r, 2, MPI_INT, MPI_SUM, root, c, MPI_INFO_NULL, &q[2]));
    MPI_OK(MPI_Allreduce_init(b.ar_s, b.ar_r, 2, MPI_INT, MPI_MAX, c, MPI_INFO_NULL, &q[3]));
    for (int k = 4; k < NQ; k++)
        q[k] = MPI_REQUEST_NULL;
    if (g_nq > 4) {
    MPI_OK(MPI_Gather_init(b.g_s, 2, MPI_INT, b.g_r, 2, MPI_INT, root, c, MPI_INFO_NULL, &q[4]));
    MPI_OK(MPI_Allgather_init(&b.ag_s, 1, MPI_INT, b.ag_r, 1, MPI_INT, c, MPI_INFO_NULL, &q[5]));
    MPI_OK(MPI_Alltoall_init(b.a2a_s, 1, MPI_INT, b.a2a_r, 1, MPI_INT, c, MPI_INFO_NULL, &q[6]));
    MPI_OK(MPI_Scatter_init(b.sc_s, 2, MPI_INT, b.sc_r, 2, MPI_INT, root, c, MPI_INFO_NULL, &q[7]));
    }
    int good = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        fill(&b, rank, size, round, root);
        if (round % 2) {
            MPI_OK(MPI_Startall(g_nq, q));
            MPI_OK(MPI_Waitall(g_nq, q, MPI_STATUSES_IGNORE));
        } else {
            for (int k = 0; k < g_nq; k++) {
                MPI_OK(MPI_Start(&q[k]));
                int flag = 0;
                while (!flag)
                    MPI_OK(MPI_Test(&q[k], &flag, MPI_STATUS_IGNORE));
            }
        }
        g_eligible += g_nq;
        for (int k = 0; k < g_nq; k++)
            CHECK(q[k] != MPI_REQUEST_NULL, "%s: request %d freed by its completion", label, k);
        good += check(&b, rank, size, round, root);
        /* Other collectives between the rounds. */
        int one = 1, n = 0;
        MPI_OK(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, c));
        CHECK(n == size, "Allreduce between rounds: %d", n);
        MPI_Request ib;
        int tok = rank == 0 ? round : -1;
        MPI_OK(MPI_Ibcast(&tok, 1, MPI_INT, 0, c, &ib));
        MPI_OK(MPI_Wait(&ib, MPI_STATUS_IGNORE));
        g_eligible++;
        CHECK(tok == round, "Ibcast between rounds: %d", tok);
    }
    for (int k = 0; k < g_nq; k++)
        MPI_OK(MPI_Request_free(&q[k]));
    out("A %s: %d of %d rounds right", label, good, ROUNDS);
    free(b.g_r);
    free(b.sc_s);
    free(b.ag_r);
    free(b.a2a_s);
    free(b.a2a_r);
}

/* A user-defined sum: heapmpi leaves it to the real MPI. */
static void usersum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void lifetimes(int rank, int size)
{
    section("B lifetimes");
    /* 2 blocks of 2 ints with a stride of 3: elements 0,1 and 3,4. */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(2, 2, 3, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    int v[2 * 5];
    MPI_Request q[4];
    MPI_OK(MPI_Bcast_init(v, 2, vec, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
    MPI_OK(MPI_Type_free(&vec));
    enum { BIG = 4096 };
    int *bs = must(malloc(BIG * 4), "malloc", BIG * 4);
    int *br = must(malloc(BIG * 4), "malloc", BIG * 4);
    MPI_OK(MPI_Allreduce_init(bs, br, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
    MPI_Op user;
    MPI_OK(MPI_Op_create(usersum, 1, &user));
    int us[3], ur[3];
    MPI_OK(MPI_Allreduce_init(us, ur, 3, MPI_INT, user, MPI_COMM_WORLD, MPI_INFO_NULL, &q[2]));
    int flag = 0;
    MPI_Status st;
    MPI_OK(MPI_Request_get_status(q[1], &flag, &st));
    if (!STOCK_PERSISTENT_BROKEN)
        CHECK(flag, "Request_get_status of an inactive persistent collective: flag 0");
    int good = 0;
    for (int round = 1; round <= 5; round++) {
        for (int i = 0; i < 10; i++)
            v[i] = rank == 0 ? 50 * round + i : -7;
        for (int i = 0; i < BIG; i++)
            bs[i] = (i + round) % 5, br[i] = -1;
        for (int i = 0; i < 3; i++)
            us[i] = rank * round + i, ur[i] = -1;
        MPI_OK(MPI_Startall(3, q));
        MPI_OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
        g_eligible += 2; /* the broadcast and the large Allreduce */
        int ok = 1;
        /* The type covers elements 0,1,3,4 of each 5 (extent 5 ints). */
        for (int i = 0; i < 10; i++) {
            int covered = (i % 5) != 2;
            int want = covered || rank == 0 ? 50 * round + i : -7;
            ok &= v[i] == want;
        }
        CHECK(ok, "Bcast of a freed vector type, round %d", round);
        for (int i = 0; i < BIG; i++)
            ok &= br[i] == size * ((i + round) % 5);
        CHECK(ok, "Allreduce of %d ints, round %d", BIG, round);
        for (int i = 0; i < 3; i++)
            ok &= ur[i] == round * size * (size - 1) / 2 + size * i;
        CHECK(ok, "Allreduce with a user operation, round %d", round);
        good += ok;
    }
    /* Started, a blocking collective, then the Wait (freeing an active
     * collective request is erroneous: MPI-4.0 6.12, 6.13). */
    int x = rank, y = -1, z = -1;
    MPI_OK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[3]));
    MPI_OK(MPI_Start(&q[3]));
    g_eligible++;
    MPI_OK(MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&q[3], MPI_STATUS_IGNORE));
    CHECK(y == z && z == size * (size - 1) / 2, "Allreduce_init then Allreduce: %d %d", y, z);
    MPI_OK(MPI_Request_free(&q[3]));
    CHECK(q[3] == MPI_REQUEST_NULL, "Request_free left the handle");
    MPI_OK(MPI_Request_free(&q[0]));
    MPI_OK(MPI_Request_free(&q[1]));
    MPI_OK(MPI_Request_free(&q[2]));
    MPI_OK(MPI_Op_free(&user));
    out("B lifetimes: %d of 5 rounds right, Allreduce %d", good, z);
    free(bs);
    free(br);
}

static void folds(int rank, int size)
{
    section("C scans");
    int sc_s[2], sc_r[2], ex_s[2], ex_r[2], *rs_s, rs_r[2];
    rs_s = must(malloc((size_t)size * 8), "malloc", (size_t)size * 8);
    MPI_Request q[3];
    MPI_OK(MPI_Scan_init(sc_s, sc_r, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
    MPI_OK(MPI_Exscan_init(ex_s, ex_r, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
    MPI_OK(MPI_Reduce_scatter_block_init(rs_s, rs_r, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                         MPI_INFO_NULL, &q[2]));
    int good = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < 2; i++) {
            sc_s[i] = rank + round + i;
            ex_s[i] = (rank * 5 + round + i) % 7;
            sc_r[i] = ex_r[i] = rs_r[i] = -1;
        }
        for (int i = 0; i < 2 * size; i++)
            rs_s[i] = rank * 100 + i + round;
        MPI_OK(MPI_Startall(3, q));
        MPI_OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
        g_eligible += 3;
        int ok = 1;
        for (int i = 0; i < 2; i++) {
            int sum = 0, mx = -1, rs = 0;
            for (int r = 0; r <= rank; r++)
                sum += r + round + i;
            for (int r = 0; r < rank; r++) {
                int v = (r * 5 + round + i) % 7;
                mx = v > mx ? v : mx;
            }
            for (int r = 0; r < size; r++)
                rs += r * 100 + 2 * rank + i + round;
            ok &= sc_r[i] == sum && rs_r[i] == rs && (rank == 0 || ex_r[i] == mx);
        }
        CHECK(ok, "Scan/Exscan/Reduce_scatter_block round %d", round);
        good += ok;
    }
    for (int k = 0; k < 3; k++)
        MPI_OK(MPI_Request_free(&q[k]));
    free(rs_s);
    out("C Scan_init, Exscan_init, Reduce_scatter_block_init: %d of %d rounds right", good,
        ROUNDS);
}

/* E: value k of what `from` sends `to` in round r. */
static int ev(int r, int from, int to, int k)
{
    return r * 100000 + from * 1000 + to * 100 + k;
}

static void vforms(int rank, int size)
{
    section("E v forms");
    enum { G = -99 };
    const int root = size - 1, n = size;
    int *gc = calloc((size_t)n, sizeof(int)), *gd = calloc((size_t)n, sizeof(int));
    int *sc = calloc((size_t)n, sizeof(int)), *sd = calloc((size_t)n, sizeof(int));
    int *ac = calloc((size_t)n, sizeof(int)), *ad = calloc((size_t)n, sizeof(int));
    int *tsc = calloc((size_t)n, sizeof(int)), *tsd = calloc((size_t)n, sizeof(int));
    int *trc = calloc((size_t)n, sizeof(int)), *trd = calloc((size_t)n, sizeof(int));
    int *rsc = calloc((size_t)n, sizeof(int));
    CHECK(gc && gd && sc && sd && ac && ad && tsc && tsd && trc && trd && rsc, "calloc");
    /* Reverse member order, a gap of one int before each block. */
    int gat = 1, sat = 1, aat = 1, tsat = 1, trat = 1, rstot = 0;
    for (int m = n - 1; m >= 0; m--) {
        gc[m] = m + 1, gd[m] = gat, gat += gc[m] + 1;
        sc[m] = m + 2, sd[m] = sat, sat += sc[m] + 1;
        ac[m] = m + 1, ad[m] = aat, aat += ac[m] + 1;
        tsc[m] = (rank + m) % 3 + 1, tsd[m] = tsat, tsat += tsc[m] + 1;
        trc[m] = (m + rank) % 3 + 1, trd[m] = trat, trat += trc[m] + 1;
    }
    for (int m = 0; m < n; m++)
        rsc[m] = m + 1, rstot += m + 1;
    const int rsfirst = rank * (rank + 1) / 2;
    int gs[64], gr[4096], ss[4096], sr[64], as[64], ar[4096], ts[4096], tr[4096];
    int rss[4096], rsr[64], tw[4096];
    CHECK(n <= 32, "E: at most 32 ranks, not %d", n);
    MPI_Request q[6];
    MPI_OK(MPI_Gatherv_init(gs, rank + 1, MPI_INT, gr, gc, gd, MPI_INT, root, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &q[0]));
    MPI_OK(MPI_Scatterv_init(ss, sc, sd, MPI_INT, sr, rank + 2, MPI_INT, root, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &q[1]));
    MPI_OK(MPI_Allgatherv_init(as, rank + 1, MPI_INT, ar, ac, ad, MPI_INT, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &q[2]));
    MPI_OK(MPI_Alltoallv_init(ts, tsc, tsd, MPI_INT, tr, trc, trd, MPI_INT, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q[3]));
    MPI_OK(MPI_Reduce_scatter_init(rss, rsr, rsc, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, &q[4]));
    int *wsd = calloc((size_t)n, sizeof(int)), *wrd = calloc((size_t)n, sizeof(int));
    MPI_Datatype *wst = calloc((size_t)n, sizeof(MPI_Datatype));
    MPI_Datatype *wrt = calloc((size_t)n, sizeof(MPI_Datatype));
    CHECK(wsd && wrd && wst && wrt, "calloc");
    MPI_Datatype one_int;
    MPI_OK(MPI_Type_contiguous(1, MPI_INT, &one_int));
    MPI_OK(MPI_Type_commit(&one_int));
    for (int m = 0; m < n; m++) {
        wsd[m] = tsd[m] * (int)sizeof(int), wrd[m] = trd[m] * (int)sizeof(int);
        wst[m] = MPI_INT, wrt[m] = m % 2 ? one_int : MPI_INT;
    }
    MPI_OK(MPI_Alltoallw_init(ts, tsc, wsd, wst, tw, trc, wrd, wrt, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q[5]));
    MPI_OK(MPI_Type_free(&one_int));
    int *arrs[11] = {gc, gd, sc, sd, ac, ad, tsc, tsd, trc, trd, rsc};
    int good = 0;
    uint64_t h = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        for (int k = 0; k <= rank; k++)
            gs[k] = ev(round, rank, root, k), as[k] = ev(round, rank, 0, k);
        for (int i = 0; i < 4096; i++)
            gr[i] = ss[i] = ar[i] = ts[i] = tr[i] = tw[i] = G;
        for (int i = 0; i < 64; i++)
            sr[i] = rsr[i] = G;
        if (rank == root)
            for (int m = 0; m < n; m++)
                for (int k = 0; k < sc[m]; k++)
                    ss[sd[m] + k] = ev(round, root, m, k);
        for (int m = 0; m < n; m++)
            for (int k = 0; k < tsc[m]; k++)
                ts[tsd[m] + k] = ev(round, rank, m, k);
        for (int i = 0; i < rstot; i++)
            rss[i] = rank * 1000 + i + round;
        MPI_OK(MPI_Startall(6, q));
        MPI_OK(MPI_Waitall(6, q, MPI_STATUSES_IGNORE));
        g_eligible += 6 * (size > 1);
        int ok = 1;
        if (rank == root) {
            int want[4096];
            for (int i = 0; i < gat; i++)
                want[i] = G;
            for (int m = 0; m < n; m++)
                for (int k = 0; k < gc[m]; k++)
                    want[gd[m] + k] = ev(round, m, root, k);
            ok &= memcmp(want, gr, (size_t)gat * sizeof(int)) == 0 && gr[gat] == G;
        }
        for (int k = 0; k < rank + 2; k++)
            ok &= sr[k] == ev(round, root, rank, k);
        ok &= sr[rank + 2] == G;
        for (int m = 0; m < n; m++) {
            for (int k = 0; k < ac[m]; k++)
                ok &= ar[ad[m] + k] == ev(round, m, 0, k);
            ok &= ar[ad[m] - 1] == G;
            for (int k = 0; k < trc[m]; k++)
                ok &= tr[trd[m] + k] == ev(round, m, rank, k);
            ok &= tr[trd[m] - 1] == G;
        }
        for (int j = 0; j <= rank; j++) {
            int sum = 0;
            for (int m = 0; m < n; m++)
                sum += m * 1000 + rsfirst + j + round;
            ok &= rsr[j] == sum;
        }
        ok &= rsr[rank + 1] == G;
        ok &= memcmp(tw, tr, (size_t)trat * sizeof(int)) == 0;
        CHECK(ok, "v forms round %d", round);
        good += ok;
        h = hash_bytes(h, tr, (size_t)trat * sizeof(int));
    }
    for (int k = 0; k < 6; k++)
        MPI_OK(MPI_Request_free(&q[k]));
    for (int k = 0; k < 11; k++)
        free(arrs[k]);
    free(wsd), free(wrd), free(wst), free(wrt);
    out("E Gatherv_init, Scatterv_init, Allgatherv_init, Alltoallv_init, Reduce_scatter_init, "
        "Alltoallw_init: "
        "%d of %d rounds right, checksum %016llx", good, ROUNDS, (unsigned long long)h);
}

static void neighbours(int rank, int size)
{
    section("D neighbourhoods");
    MPI_Comm cs[2];
    int d1[1] = {size}, p1[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &cs[0]));
    int gsrc[2] = {(rank + size - 1) % size, (rank + size - 2) % size};
    int gdst[2] = {(rank + 1) % size, (rank + 2) % size};
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, gsrc, MPI_UNWEIGHTED, 2, gdst,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cs[1]));
    static const char *names[2] = {"periodic ring", "dist graph"};
    for (int t = 0; t < 2; t++) {
        MPI_Comm c = cs[t];
        /* The sources, in MPI's order: a 1-D grid's are -1 then +1. */
        int src[2] = {(rank + size - 1) % size, (rank + 1) % size};
        if (t == 1)
            src[0] = gsrc[0], src[1] = gsrc[1];
        int ag_s = 0, ag_r[2], a2a_s[4], a2a_r[4], ref[4];
        /* The v forms: blocks in reverse order, a gap of one int. */
        int one[2] = {1, 1}, gvd[2] = {2, 0}, two[2] = {2, 2}, vsd[2] = {3, 0}, vrd[2] = {3, 0};
        int gv_r[3], v_s[5], v_r[5], refv[5], w_r[5];
        MPI_Aint wsd[2] = {3 * sizeof(int), 0}, wrd[2] = {3 * sizeof(int), 0};
        MPI_Datatype pair, one_int, wst[2] = {MPI_INT, MPI_INT}, wrt[2];
        MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
        MPI_OK(MPI_Type_commit(&pair));
        /* A second derived type (the first send block's), so that the
         * request holds two duplicates. */
        MPI_OK(MPI_Type_contiguous(1, MPI_INT, &one_int));
        MPI_OK(MPI_Type_commit(&one_int));
        wst[0] = one_int;
        int wrc[2] = {2, 1};
        wrt[0] = MPI_INT, wrt[1] = pair;
        MPI_Request q[5];
        MPI_OK(MPI_Neighbor_allgather_init(&ag_s, 1, MPI_INT, ag_r, 1, MPI_INT, c, MPI_INFO_NULL,
                                           &q[0]));
        MPI_OK(MPI_Neighbor_alltoall_init(a2a_s, 2, MPI_INT, a2a_r, 2, MPI_INT, c, MPI_INFO_NULL,
                                          &q[1]));
        MPI_OK(MPI_Neighbor_allgatherv_init(&ag_s, 1, MPI_INT, gv_r, one, gvd, MPI_INT, c,
                                            MPI_INFO_NULL, &q[2]));
        MPI_OK(MPI_Neighbor_alltoallv_init(v_s, two, vsd, MPI_INT, v_r, two, vrd, MPI_INT, c,
                                           MPI_INFO_NULL, &q[3]));
        MPI_OK(MPI_Neighbor_alltoallw_init(v_s, two, wsd, wst, w_r, wrc, wrd, wrt, c,
                                           MPI_INFO_NULL, &q[4]));
        MPI_OK(MPI_Type_free(&pair));
        MPI_OK(MPI_Type_free(&one_int));
        int good = 0;
        uint64_t h = 0;
        for (int round = 1; round <= ROUNDS; round++) {
            ag_s = rank * 1000 + round;
            for (int k = 0; k < 4; k++) {
                a2a_s[k] = rank * 1000 + round * 10 + k;
                a2a_r[k] = ref[k] = -1;
            }
            ag_r[0] = ag_r[1] = -1;
            for (int k = 0; k < 5; k++)
                v_r[k] = refv[k] = w_r[k] = gv_r[k % 3] = -1;
            /* v_s: block 0 (to the first destination) at 3, block 1 at 0. */
            v_s[3] = a2a_s[0], v_s[4] = a2a_s[1], v_s[0] = a2a_s[2], v_s[1] = a2a_s[3];
            v_s[2] = -5;
            MPI_OK(MPI_Startall(5, q));
            MPI_OK(MPI_Waitall(5, q, MPI_STATUSES_IGNORE));
            MPI_Request r;
            MPI_OK(MPI_Ineighbor_alltoall(a2a_s, 2, MPI_INT, ref, 2, MPI_INT, c, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Ineighbor_alltoallv(v_s, two, vsd, MPI_INT, refv, two, vrd, MPI_INT, c, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            g_eligible += 7 * (size > 1); /* heapmpi leaves one member alone */
            int ok = memcmp(a2a_r, ref, sizeof ref) == 0;
            /* The v forms: the same blocks, reversed, the gaps untouched. */
            ok &= gv_r[2] == ag_r[0] && gv_r[0] == ag_r[1] && gv_r[1] == -1;
            ok &= memcmp(v_r, refv, sizeof v_r) == 0 && v_r[2] == -1;
            ok &= memcmp(w_r, refv, sizeof w_r) == 0;
            for (int i = 0; i < 2; i++) /* block i of refv: from a source */
                ok &= refv[vrd[i]] / 1000 == src[i] && refv[vrd[i] + 1] == refv[vrd[i]] + 1;
            for (int i = 0; i < 2; i++) {
                ok &= ag_r[i] == src[i] * 1000 + round;
                ok &= ref[2 * i] % 10 < 4 && ref[2 * i] / 1000 == src[i] &&
                      ref[2 * i + 1] == ref[2 * i] + 1;
            }
            CHECK(ok, "%s round %d", names[t], round);
            good += ok;
            h = hash_bytes(h, a2a_r, sizeof a2a_r);
            h = hash_bytes(h, v_r, sizeof v_r);
        }
        for (int k = 0; k < 5; k++)
            MPI_OK(MPI_Request_free(&q[k]));
        MPI_OK(MPI_Comm_free(&c));
        out("D %s: Neighbor_allgather(v)_init, Neighbor_alltoall(v/w)_init: %d of %d rounds right, "
            "checksum %016llx", names[t], good, ROUNDS, (unsigned long long)h);
    }
}

/* Persistent all-reductions initialised, started once and freed on one
 * communicator, one after the other; then BATCH initialised at once (a
 * rank may run ahead of the others through the initialisations, which
 * need no other member) and started in a rank-dependent order. */
#define MANY 300
#define BATCH 40

static void orders(int rank, int size)
{
    section("F orders");
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int bc[2], ar_s, ar_r, rd_s, rd_r, tok;
    MPI_Request q[4];
    MPI_OK(MPI_Bcast_init(bc, 2, MPI_INT, size - 1, c, MPI_INFO_NULL, &q[0]));
    MPI_OK(MPI_Allreduce_init(&ar_s, &ar_r, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &q[1]));
    MPI_OK(MPI_Barrier_init(c, MPI_INFO_NULL, &q[2]));
    MPI_OK(MPI_Reduce_init(&rd_s, &rd_r, 1, MPI_INT, MPI_MAX, 0, c, MPI_INFO_NULL, &q[3]));
    int good = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        bc[0] = rank == size - 1 ? round : -1;
        bc[1] = rank == size - 1 ? -round : -1;
        ar_s = rank + round, ar_r = -1;
        rd_s = rank * round, rd_r = -1;
        tok = rank == 0 ? round : -1;
        MPI_Request ib;
        for (int k = 0; k < 4; k++) {
            int i = ((STOCK_UNORDERED_BROKEN ? 0 : rank) + (round % 2 ? 4 - k : k)) % 4;
            MPI_OK(MPI_Start(&q[i]));
            if (k == 1)
                MPI_OK(MPI_Ibcast(&tok, 1, MPI_INT, 0, c, &ib));
        }
        MPI_OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        MPI_OK(MPI_Wait(&ib, MPI_STATUS_IGNORE));
        g_eligible += 5 * (size > 1);
        int ok = bc[0] == round && bc[1] == -round && tok == round;
        ok &= ar_r == size * (size - 1) / 2 + size * round;
        ok &= rank != 0 || rd_r == (size - 1) * round;
        CHECK(ok, "orders round %d: bcast %d %d, allreduce %d, reduce %d, ibcast %d", round, bc[0],
              bc[1], ar_r, rd_r, tok);
        good += ok;
    }
    for (int k = 0; k < 4; k++)
        MPI_OK(MPI_Request_free(&q[k]));
    MPI_OK(MPI_Comm_free(&c));
    out("F Bcast_init, Allreduce_init, Barrier_init, Reduce_init started in %s orders: %d of %d "
        "rounds right",
        STOCK_UNORDERED_BROKEN ? "the same" : "rank-dependent", good, ROUNDS);

    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    good = 0;
    for (int i = 0; i < MANY; i++) {
        int x = rank + i, y = -1;
        MPI_Request r;
        MPI_OK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r));
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Request_free(&r));
        good += y == size * (size - 1) / 2 + size * i;
        g_eligible += size > 1;
    }
    CHECK(good == MANY, "%d of %d persistent all-reductions right", good, MANY);
    out("F %d Allreduce_init on one communicator, each started once: %d right", MANY, good);
    int xs[BATCH], ys[BATCH];
    MPI_Request rs[BATCH];
    good = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < BATCH; i++) {
            xs[i] = rank * i + round, ys[i] = -1;
            MPI_OK(MPI_Allreduce_init(&xs[i], &ys[i], 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL,
                                      &rs[i]));
        }
        for (int k = 0; k < BATCH; k++)
            MPI_OK(MPI_Start(&rs[((STOCK_UNORDERED_BROKEN ? 0 : rank) * 7 + k) % BATCH]));
        MPI_OK(MPI_Waitall(BATCH, rs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < BATCH; i++) {
            MPI_OK(MPI_Request_free(&rs[i]));
            good += ys[i] == i * size * (size - 1) / 2 + size * round;
        }
        g_eligible += BATCH * (size > 1);
    }
    CHECK(good == 3 * BATCH, "%d of %d batched persistent all-reductions right", good, 3 * BATCH);
    MPI_OK(MPI_Comm_free(&c));
    out("F 3 x %d Allreduce_init at once, started in %s orders: %d right", BATCH,
        STOCK_UNORDERED_BROKEN ? "the same" : "rank-dependent", good);
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    section("A world");
    eight(MPI_COMM_WORLD, "world");
    section("A dup");
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    eight(d, "dup");
    MPI_OK(MPI_Comm_free(&d));
    section("A split");
    MPI_Comm s;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &s));
    eight(s, "split");
    MPI_OK(MPI_Comm_free(&s));
    folds(rank, size);
    neighbours(rank, size);
    if (!STOCK_PERSISTENT_BROKEN)
        vforms(rank, size);
    lifetimes(rank, size);
    orders(rank, size);
    out("heap-eligible starts per rank: %d", g_eligible);
    return coll_finish("persistent", rank, size);
}

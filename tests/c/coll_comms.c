/*
 * coll_comms.c - collective conformance: communicators.
 *
 * Why: heapmpi decides per communicator whether a collective runs over the
 * shared heap (all members on this node and known to heapmpi) or through
 * the real MPI, and keeps per-communicator node state made by the first
 * collective. Ranks of a derived communicator are not world ranks (a split
 * with reversed keys), some communicators span (pretend) nodes, some hold
 * one rank, some heapmpi never saw being made (MPI_Comm_idup) or are
 * intercommunicators; communicators come and go by the hundred; and
 * point-to-point traffic, including MPI_ANY_SOURCE receives, may be in
 * flight on the same communicator while a collective runs. None of this may
 * change a result or mix up messages.
 *
 * Sections:
 *  A. a battery of collectives on each of: MPI_COMM_WORLD; Comm_split
 *     (one color, key size-rank: ranks reversed); Comm_split (the even
 *     world ranks first, then the odd ones: with pretend nodes of 2 the
 *     members of a node are not consecutive); Comm_dup of WORLD;
 *     Comm_split(color rank) (one rank each); Comm_split(color rank%2)
 *     (the odd and the even world ranks: with pretend nodes of 2 they span
 *     both nodes); Comm_split by pretend node (node-local with
 *     HEAPMPI_TEST_NODE_SIZE, else everyone); Comm_create from the group of
 *     the even ranks in reversed order (the others get MPI_COMM_NULL);
 *     Comm_idup of WORLD (unknown to heapmpi); MPI_COMM_SELF; and, without
 *     the large payloads: Comm_create_group of the odd ranks reversed
 *     (collective over its members only), Cart_create (reorder) and
 *     Cart_sub, Graph_create (reorder) and Dist_graph_create_adjacent of a
 *     ring, Intercomm_merge with the lower half high. The battery:
 *     Barrier, Bcast from every root, Reduce (to the last rank) with a
 *     non-commutative user operation that spells the members' world ranks
 *     in the order it combined them, Allreduce, Gather, Gatherv, Allgather,
 *     Allgatherv, Scatter, Alltoall, Reduce_scatter_block, Scan, Exscan,
 *     and a 1 MiB Bcast and an Allreduce of 100000 doubles (not inline;
 *     at more than 2 ranks only on WORLD, the reversed split, the
 *     single-rank, odd/even and per-node splits and MPI_COMM_SELF).
 *  B. an intercommunicator between the lower and upper halves of the
 *     world (at least 2 ranks): Bcast with MPI_ROOT / MPI_PROC_NULL,
 *     Allreduce, Barrier (heapmpi must leave them to the real MPI).
 *  C. collectives interleaved with point-to-point on the same
 *     communicator: Irecv(MPI_ANY_SOURCE) and Isend posted before a Bcast,
 *     an Allreduce and a Barrier, completed after, with an Ibcast, an
 *     Iallreduce and an Ibarrier (left to the real MPI) started around them
 *     and completed after; then Isend before and the matching Recv after
 *     an Allgather; on WORLD and on a reordered split.
 *  D. 100 cycles (15 at more than 2 ranks) of Comm_dup / Allreduce (+ Bcast
 *     every 10th) / Comm_free right after the collective; then 20 splits
 *     kept alive at once, each used, then freed in creation order.
 *  E. a slow member: the others run ahead (3 rounds in a row, a member
 *     30 ms late to the first) and overwrite their send and receive buffers
 *     as soon as each call returns: Bcast and Scatter with a slow
 *     non-root, Reduce and Gather with a slow root, Alltoall; 8 ints
 *     (inline) and 200000 (50000 at more than 2 ranks; read in place);
 *     then a Bcast on a duplicate
 *     freed right after it, before the slow member has read it, and a new
 *     duplicate.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: comms ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

static int g_wrank, g_wsize;

/* ---- the non-commutative digit concatenation: (digits, length) ---- */

static MPI_Datatype T_CAT;
static MPI_Op OP_CAT;

static void fn_cat(void *in, void *io, int *len, MPI_Datatype *dt)
{
    CHECK(*dt == T_CAT, "concatenation called with another datatype");
    uint64_t *a = in, *b = io;
    for (int i = 0; i < *len; i++) {
        uint64_t d = a[2 * i], l = a[2 * i + 1], e = b[2 * i], m = b[2 * i + 1];
        b[2 * i] = m >= 16 ? e : (d << (4 * m)) | e;
        b[2 * i + 1] = l + m;
    }
}

/* ---- the world ranks of a communicator's members ---- */

static int *members(MPI_Comm comm, int *n)
{
    MPI_Comm_size(comm, n);
    MPI_Group g, wg;
    MPI_OK(MPI_Comm_group(comm, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int *in = must(malloc((size_t)*n * sizeof(int)), "malloc", 0);
    int *out_ = must(malloc((size_t)*n * sizeof(int)), "malloc", 0);
    for (int i = 0; i < *n; i++)
        in[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, *n, in, wg, out_));
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(in);
    return out_;
}

static void list(char *s, size_t cap, const int *v, int n)
{
    size_t len = 0;
    s[0] = '\0';
    for (int i = 0; i < n && len + 16 < cap; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s%d", i ? "," : "", v[i]);
}

/* ---- A: the battery ---- */

/* large: also a 1 MiB Bcast and an Allreduce of 100000 doubles */
static void battery_(MPI_Comm comm, const char *label, int large)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    int *wr = members(comm, &n);
    const int me = g_wrank;
    CHECK(wr[r] == me, "%s: member %d is world rank %d, not me (%d)", label, r, wr[r], me);
    char s1[256], s2[256];
    int bad = 0;

    MPI_OK(MPI_Barrier(comm));

    /* Bcast from every root */
    for (int root = 0; root < n; root++) {
        int b[3] = {-1, -1, -1};
        if (r == root) {
            b[0] = me;
            b[1] = r;
            b[2] = 7 * root + 1;
        }
        MPI_OK(MPI_Bcast(b, 3, MPI_INT, root, comm));
        if (b[0] != wr[root] || b[1] != root || b[2] != 7 * root + 1)
            bad++;
    }
    CHECK(bad == 0, "%s: Bcast from some root wrong", label);

    /* Reduce with the non-commutative concatenation, to the last rank */
    uint64_t cat[2] = {(uint64_t)me, 1}, catr[2] = {0, 0};
    MPI_OK(MPI_Reduce(cat, catr, 1, T_CAT, OP_CAT, n - 1, comm));
    uint64_t want = 0;
    for (int i = 0; i < n; i++)
        want = (want << 4) | (uint64_t)wr[i];
    if (r == n - 1)
        CHECK(catr[0] == want && catr[1] == (uint64_t)n,
              "%s: Reduce(concatenation) gave %llx/%llu, expected %llx/%d", label,
              (unsigned long long)catr[0], (unsigned long long)catr[1],
              (unsigned long long)want, n);

    /* Allreduce: sum and max of world ranks, and the concatenation */
    int x[2] = {me, me}, sum[2] = {0, 0};
    MPI_OK(MPI_Allreduce(&x[0], &sum[0], 1, MPI_INT, MPI_SUM, comm));
    MPI_OK(MPI_Allreduce(&x[1], &sum[1], 1, MPI_INT, MPI_MAX, comm));
    uint64_t cata[2] = {0, 0};
    MPI_OK(MPI_Allreduce(cat, cata, 1, T_CAT, OP_CAT, comm));
    int wsum = 0, wmax = -1;
    for (int i = 0; i < n; i++) {
        wsum += wr[i];
        wmax = wr[i] > wmax ? wr[i] : wmax;
    }
    CHECK(sum[0] == wsum && sum[1] == wmax && cata[0] == want,
          "%s: Allreduce sum %d max %d concatenation %llx", label, sum[0], sum[1],
          (unsigned long long)cata[0]);

    /* Gather / Allgather of world ranks */
    int *g = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int *ag = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    MPI_OK(MPI_Gather(&me, 1, MPI_INT, r == 0 ? g : NULL, 1, MPI_INT, 0, comm));
    MPI_OK(MPI_Allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, comm));
    for (int i = 0; i < n; i++) {
        if (r == 0 && g[i] != wr[i])
            bad++;
        if (ag[i] != wr[i])
            bad++;
    }
    CHECK(bad == 0, "%s: Gather / Allgather of world ranks wrong", label);

    /* Gatherv / Allgatherv: member i gives i+1 copies of its world rank,
     * placed in reverse order */
    int *cnt = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int *dsp = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int tot = 0;
    for (int i = n - 1; i >= 0; i--) {
        cnt[i] = i + 1;
        dsp[i] = tot;
        tot += i + 1;
    }
    int *mine = must(calloc((size_t)r + 1, sizeof(int)), "calloc", 0);
    for (int i = 0; i <= r; i++)
        mine[i] = me;
    int *gv = must(calloc((size_t)tot, sizeof(int)), "calloc", 0);
    int *agv = must(calloc((size_t)tot, sizeof(int)), "calloc", 0);
    int root_v = n / 2;
    MPI_OK(MPI_Gatherv(mine, r + 1, MPI_INT, gv, cnt, dsp, MPI_INT, root_v, comm));
    MPI_OK(MPI_Allgatherv(mine, r + 1, MPI_INT, agv, cnt, dsp, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < cnt[i]; k++) {
            if (r == root_v && gv[dsp[i] + k] != wr[i])
                bad++;
            if (agv[dsp[i] + k] != wr[i])
                bad++;
        }
    CHECK(bad == 0, "%s: Gatherv / Allgatherv wrong", label);

    /* Scatter from the last rank: 100 * i + its world rank */
    int *sc = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    for (int i = 0; i < n; i++)
        sc[i] = 100 * i + me;
    int got_sc = -1;
    MPI_OK(MPI_Scatter(sc, 1, MPI_INT, &got_sc, 1, MPI_INT, n - 1, comm));
    CHECK(got_sc == 100 * r + wr[n - 1], "%s: Scatter gave %d", label, got_sc);

    /* Alltoall: to member i, 10 * my world rank + i */
    int *a2a = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int *a2b = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    for (int i = 0; i < n; i++)
        a2a[i] = 10 * me + i;
    MPI_OK(MPI_Alltoall(a2a, 1, MPI_INT, a2b, 1, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        if (a2b[i] != 10 * wr[i] + r)
            bad++;
    CHECK(bad == 0, "%s: Alltoall wrong", label);

    /* Reduce_scatter_block: element i of member j is j*n + i; block r sums
     * to sum_j (j*n + r) */
    int *rsb = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    for (int i = 0; i < n; i++)
        rsb[i] = r * n + i;
    int rsb_out = -1;
    MPI_OK(MPI_Reduce_scatter_block(rsb, &rsb_out, 1, MPI_INT, MPI_SUM, comm));
    int rsb_want = 0;
    for (int j = 0; j < n; j++)
        rsb_want += j * n + r;
    CHECK(rsb_out == rsb_want, "%s: Reduce_scatter_block gave %d, expected %d", label,
          rsb_out, rsb_want);

    /* Scan / Exscan: prefix concatenations (rank order) */
    uint64_t scan[2] = {0, 0}, exscan[2] = {0, 0};
    MPI_OK(MPI_Scan(cat, scan, 1, T_CAT, OP_CAT, comm));
    MPI_OK(MPI_Exscan(cat, exscan, 1, T_CAT, OP_CAT, comm));
    uint64_t pre = 0;
    for (int i = 0; i < r; i++)
        pre = (pre << 4) | (uint64_t)wr[i];
    CHECK(scan[0] == ((pre << 4) | (uint64_t)me) && scan[1] == (uint64_t)r + 1,
          "%s: Scan gave %llx/%llu", label, (unsigned long long)scan[0],
          (unsigned long long)scan[1]);
    if (r > 0)
        CHECK(exscan[0] == pre && exscan[1] == (uint64_t)r, "%s: Exscan gave %llx/%llu",
              label, (unsigned long long)exscan[0], (unsigned long long)exscan[1]);

    /* large: 1 MiB Bcast from rank 0, Allreduce of 100000 doubles */
    int big_ok = 1;
    if (large) {
    unsigned char *big = must(malloc(MIB), "malloc", MIB);
    if (r == 0)
        wpattern_fill(big, MIB, (uint64_t)wr[0] + 1000);
    else
        memset(big, 0, MIB);
    MPI_OK(MPI_Bcast(big, MIB, MPI_BYTE, 0, comm));
    big_ok = wpattern_check(big, MIB, (uint64_t)wr[0] + 1000, label);
    free(big);
    const int nd = 100000;
    double *dx = must(malloc((size_t)nd * 8), "malloc", 0);
    double *dy = must(malloc((size_t)nd * 8), "malloc", 0);
    for (int i = 0; i < nd; i++)
        dx[i] = (double)((i + me) % 97);
    MPI_OK(MPI_Allreduce(dx, dy, nd, MPI_DOUBLE, MPI_SUM, comm));
    for (int i = 0; i < nd; i++) {
        double w = 0;
        for (int j = 0; j < n; j++)
            w += (double)((i + wr[j]) % 97);
        if (dy[i] != w) {
            big_ok = 0;
            CHECK(0, "%s: Allreduce of doubles: element %d is %g, expected %g", label, i,
                  dy[i], w);
            break;
        }
    }
    free(dx);
    free(dy);
    }

    list(s1, sizeof s1, wr, n);
    list(s2, sizeof s2, ag, n);
    out("A %s: rank %d of %d, members (world ranks) %s; Bcast from every root %s; "
        "Reduce(concatenation) %s; Allreduce sum %d max %d concatenation %llx; "
        "Allgather %s; Gatherv/Allgatherv %s; Scatter %d; Alltoall %s; "
        "Reduce_scatter_block %d; Scan %llx; Exscan %s; 1 MiB Bcast and "
        "100000-double Allreduce %s",
        label, r, n, s1, bad ? "WRONG" : "right",
        r == n - 1 ? (catr[0] == want ? "right" : "WRONG") : "-", sum[0], sum[1],
        (unsigned long long)cata[0], s2, bad ? "WRONG" : "right", got_sc,
        bad ? "WRONG" : "right", rsb_out, (unsigned long long)scan[0],
        r > 0 ? (exscan[0] == pre ? "right" : "WRONG") : "-",
        large ? (big_ok ? "right" : "WRONG") : "not run");
    free(wr);
    free(g);
    free(ag);
    free(cnt);
    free(dsp);
    free(mine);
    free(gv);
    free(agv);
    free(sc);
    free(a2a);
    free(a2b);
    free(rsb);
}

static void battery(MPI_Comm comm, const char *label)
{
    battery_(comm, label, 1);
}

/* With the large payloads up to 2 ranks only (time: oversubscribed). */
static void battery_mid(MPI_Comm comm, const char *label)
{
    battery_(comm, label, g_wsize <= 2);
}

static void battery_small(MPI_Comm comm, const char *label)
{
    battery_(comm, label, 0);
}

/* Communicators made by the other constructors (collectives without the
 * large payloads). */
static void more_constructors(void)
{
    const int me = g_wrank, n = g_wsize;
    MPI_Comm c;

    section("A create_group");
    {
        MPI_Group wg, og;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        int no = n / 2;
        if (no > 0) {
            int *ranks = must(calloc((size_t)no, sizeof(int)), "calloc", 0);
            for (int i = 0; i < no; i++)
                ranks[i] = 2 * (no - 1 - i) + 1;
            MPI_OK(MPI_Group_incl(wg, no, ranks, &og));
            if (me % 2 == 1) {
                /* collective over the group's members only */
                MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, og, 5, &c));
                battery_small(c, "create_group(odd ranks reversed)");
                MPI_OK(MPI_Comm_free(&c));
            } else {
                out("A create_group(odd ranks reversed): not a member");
            }
            MPI_Group_free(&og);
            free(ranks);
        } else {
            out("A create_group(odd ranks reversed): no odd rank");
        }
        MPI_Group_free(&wg);
    }

    section("A cart");
    {
        int dims[2] = {0, 0}, periods[2] = {1, 0};
        MPI_OK(MPI_Dims_create(n, 2, dims));
        MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c));
        battery_small(c, "cart_create(2 dims, reorder)");
        int keep[2] = {0, 1};
        MPI_Comm row;
        MPI_OK(MPI_Cart_sub(c, keep, &row));
        battery_small(row, "cart_sub(second dim)");
        MPI_OK(MPI_Comm_free(&row));
        MPI_OK(MPI_Comm_free(&c));
    }

    section("A graph");
    {
        /* a ring; every node lists its two neighbours (one for n = 2, none
         * for n = 1) */
        int *index = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
        int *edges = must(calloc((size_t)(2 * n), sizeof(int)), "calloc", 0);
        int ne = 0;
        for (int i = 0; i < n; i++) {
            if (n > 1)
                edges[ne++] = (i + 1) % n;
            if (n > 2)
                edges[ne++] = (i - 1 + n) % n;
            index[i] = ne;
        }
        MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 1, &c));
        battery_small(c, "graph_create(ring, reorder)");
        MPI_OK(MPI_Comm_free(&c));
        int src = (me - 1 + n) % n, dst = (me + 1) % n;
        MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1,
                                              &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
        battery_small(c, "dist_graph_create_adjacent(ring)");
        MPI_OK(MPI_Comm_free(&c));
        free(index);
        free(edges);
    }

    section("A intercomm_merge");
    if (n >= 2) {
        int half = n / 2, low = me < half;
        MPI_Comm local, inter;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, me, &local));
        MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 78, &inter));
        /* the lower half asks to come last */
        MPI_OK(MPI_Intercomm_merge(inter, low, &c));
        battery_small(c, "intercomm_merge(lower half high)");
        MPI_OK(MPI_Comm_free(&c));
        MPI_OK(MPI_Comm_free(&inter));
        MPI_OK(MPI_Comm_free(&local));
    } else {
        out("A intercomm_merge(lower half high): needs 2 ranks, skipped");
    }
}

static void communicators(void)
{
    const int me = g_wrank, n = g_wsize;
    MPI_Comm c;

    section("A world");
    battery(MPI_COMM_WORLD, "MPI_COMM_WORLD");

    section("A split reversed");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &c));
    battery(c, "split(key size-rank)");
    MPI_OK(MPI_Comm_free(&c));

    section("A split interleaved");
    /* world ranks in the order 0, 2, 4, ..., 1, 3, 5, ...: with pretend
     * nodes of 2 the nodes alternate along the ranks */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, (me % 2) * n + me / 2, &c));
    battery_mid(c, "split(key even ranks first)");
    MPI_OK(MPI_Comm_free(&c));

    section("A dup");
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    battery_mid(c, "dup(WORLD)");
    MPI_OK(MPI_Comm_free(&c));

    section("A single");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me, 0, &c));
    battery(c, "split(color rank): one rank");
    MPI_OK(MPI_Comm_free(&c));

    section("A odd/even");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &c));
    battery(c, me % 2 ? "split(color rank%2): the odd ranks" : "split(color rank%2): the even ranks");
    MPI_OK(MPI_Comm_free(&c));

    section("A node");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, coll_node_of(me), n - me, &c));
    battery(c, "split(color pretend node, key size-rank)");
    MPI_OK(MPI_Comm_free(&c));

    section("A create");
    {
        MPI_Group wg, eg;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        int ne = (n + 1) / 2;
        int *ranks = must(calloc((size_t)ne, sizeof(int)), "calloc", 0);
        for (int i = 0; i < ne; i++)
            ranks[i] = 2 * (ne - 1 - i);
        MPI_OK(MPI_Group_incl(wg, ne, ranks, &eg));
        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, eg, &c));
        if (me % 2 == 0) {
            CHECK(c != MPI_COMM_NULL, "Comm_create: even rank got MPI_COMM_NULL");
            if (c != MPI_COMM_NULL) {
                battery_mid(c, "create(even ranks reversed)");
                MPI_OK(MPI_Comm_free(&c));
            }
        } else {
            CHECK(c == MPI_COMM_NULL, "Comm_create: odd rank got a communicator");
            out("A create(even ranks reversed): not a member, MPI_COMM_NULL %s",
                c == MPI_COMM_NULL ? "right" : "WRONG");
        }
        MPI_Group_free(&eg);
        MPI_Group_free(&wg);
        free(ranks);
    }

    section("A idup");
    {
        MPI_Request rq;
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        battery_mid(c, "idup(WORLD)");
        MPI_OK(MPI_Comm_free(&c));
    }

    section("A self");
    battery(MPI_COMM_SELF, "MPI_COMM_SELF");

    more_constructors();
}

/* ---- B: intercommunicator ---- */

static void intercomm(void)
{
    section("B intercommunicator");
    const int me = g_wrank, n = g_wsize;
    if (n < 2) {
        out("B intercommunicator: needs 2 ranks, skipped");
        return;
    }
    int half = n / 2, low = me < half;
    MPI_Comm local, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, me, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 77, &inter));
    int lr;
    MPI_Comm_rank(local, &lr);
    /* Bcast from the lower group's rank 0 to the upper group */
    int b[2] = {-1, -1};
    if (low) {
        if (lr == 0) {
            b[0] = 4242;
            b[1] = me;
        }
        MPI_OK(MPI_Bcast(b, 2, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    } else {
        MPI_OK(MPI_Bcast(b, 2, MPI_INT, 0, inter));
        CHECK(b[0] == 4242 && b[1] == 0, "intercomm Bcast gave %d %d", b[0], b[1]);
    }
    /* Allreduce: each side gets the sum over the other group */
    int x = me + 1, s = 0;
    MPI_OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, inter));
    int want = 0;
    for (int i = 0; i < n; i++)
        if ((i < half) != low)
            want += i + 1;
    CHECK(s == want, "intercomm Allreduce gave %d, expected %d", s, want);
    MPI_OK(MPI_Barrier(inter));
    out("B intercommunicator (%s group): Bcast %s, Allreduce over the other group %d "
        "(%s), Barrier done", low ? "lower" : "upper",
        low ? "sent" : (b[0] == 4242 ? "right" : "WRONG"), s, s == want ? "right" : "WRONG");
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&local));
}

/* ---- C: collectives among point-to-point traffic ---- */

static void interleaved_on(MPI_Comm comm, const char *label)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    enum { NM = 4 };
    int sb[NM][4], rb[NM][4];
    MPI_Request rq[2 * NM];
    /* receives from anyone, posted before the collectives */
    for (int k = 0; k < NM; k++) {
        for (int i = 0; i < 4; i++) {
            sb[k][i] = 1000 * r + 10 * k + i;
            rb[k][i] = -1;
        }
        MPI_OK(MPI_Irecv(rb[k], 4, MPI_INT, MPI_ANY_SOURCE, 50 + k, comm, &rq[k]));
    }
    for (int k = 0; k < NM / 2; k++)
        MPI_OK(MPI_Isend(sb[k], 4, MPI_INT, right, 50 + k, comm, &rq[NM + k]));
    /* nonblocking collectives (the real MPI's) in flight around the
     * blocking ones */
    MPI_Request nb[3];
    int ib[2] = {r == n - 1 ? 555 : -1, r == n - 1 ? 556 : -1};
    int ia = r + 1, iar = -1;
    MPI_OK(MPI_Ibcast(ib, 2, MPI_INT, n - 1, comm, &nb[0]));
    MPI_OK(MPI_Iallreduce(&ia, &iar, 1, MPI_INT, MPI_SUM, comm, &nb[1]));
    int b = r == 0 ? 31337 : -1;
    MPI_OK(MPI_Bcast(&b, 1, MPI_INT, 0, comm));
    int one = 1, cnt = 0;
    MPI_OK(MPI_Allreduce(&one, &cnt, 1, MPI_INT, MPI_SUM, comm));
    MPI_OK(MPI_Ibarrier(comm, &nb[2]));
    MPI_OK(MPI_Barrier(comm));
    for (int k = NM / 2; k < NM; k++)
        MPI_OK(MPI_Isend(sb[k], 4, MPI_INT, right, 50 + k, comm, &rq[NM + k]));
    MPI_Status st[2 * NM];
    MPI_OK(MPI_Waitall(2 * NM, rq, st));
    MPI_OK(MPI_Waitall(3, nb, MPI_STATUSES_IGNORE));
    int ok = b == 31337 && cnt == n && ib[0] == 555 && ib[1] == 556 &&
             iar == n * (n + 1) / 2;
    for (int k = 0; k < NM; k++) {
        ok &= st[k].MPI_SOURCE == left && st[k].MPI_TAG == 50 + k;
        for (int i = 0; i < 4; i++)
            ok &= rb[k][i] == 1000 * left + 10 * k + i;
    }
    /* a send before an Allgather, its receive after */
    MPI_Request s;
    int v = 77 + r, w = -1;
    MPI_OK(MPI_Isend(&v, 1, MPI_INT, right, 60, comm, &s));
    int *ag = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    MPI_OK(MPI_Allgather(&r, 1, MPI_INT, ag, 1, MPI_INT, comm));
    MPI_Status st2;
    MPI_OK(MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st2));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    ok &= w == 77 + left && st2.MPI_SOURCE == left && st2.MPI_TAG == 60;
    for (int i = 0; i < n; i++)
        ok &= ag[i] == i;
    free(ag);
    CHECK(ok, "%s: collectives among point-to-point traffic: Bcast %d, Allreduce %d, "
          "wildcard receive got %d from %d tag %d", label, b, cnt, w, st2.MPI_SOURCE,
          st2.MPI_TAG);
    out("C %s: Bcast, Allreduce, Barrier, Allgather among wildcard receives and "
        "sends and among Ibcast, Iallreduce, Ibarrier: %s", label, ok ? "right" : "WRONG");
}

static void interleaved(void)
{
    section("C interleaved");
    interleaved_on(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    MPI_Comm c;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, g_wsize - g_wrank, &c));
    interleaved_on(c, "split(key size-rank)");
    MPI_OK(MPI_Comm_free(&c));
}

/* ---- D: many communicators ---- */

static void churn(void)
{
    section("D churn");
    const int me = g_wrank, n = g_wsize;
    /* 100 cycles; 15 at more than 2 ranks (oversubscribed, stock MPICH
     * takes 35 ms per cycle there) */
    const int cycles = n > 2 ? 15 : 100;
    int good = 0;
    for (int i = 0; i < cycles; i++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int x = me + i, s = -1;
        MPI_OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, c));
        int ok = s == n * i + n * (n - 1) / 2;
        if (i % 10 == 0) {
            int b = me == i % n ? i : -1;
            MPI_OK(MPI_Bcast(&b, 1, MPI_INT, i % n, c));
            ok &= b == i;
        }
        MPI_OK(MPI_Comm_free(&c));
        good += ok;
    }
    CHECK(good == cycles, "dup/collective/free: %d of %d right", good, cycles);
    enum { NS = 20 };
    MPI_Comm cs[NS];
    for (int i = 0; i < NS; i++)
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, (me + i) % 2, i % 2 ? me : n - me, &cs[i]));
    int good2 = 0;
    for (int i = NS - 1; i >= 0; i--) {
        int r, m;
        MPI_Comm_rank(cs[i], &r);
        MPI_Comm_size(cs[i], &m);
        int s = -1;
        MPI_OK(MPI_Allreduce(&r, &s, 1, MPI_INT, MPI_SUM, cs[i]));
        good2 += s == m * (m - 1) / 2;
    }
    for (int i = 0; i < NS; i++)
        MPI_OK(MPI_Comm_free(&cs[i]));
    CHECK(good2 == NS, "%d splits alive at once: %d right", NS, good2);
    out("D %d x (Comm_dup, Allreduce, Comm_free): %d right; %d splits alive at once: "
        "%d right", cycles, good, NS, good2);
}

/* ---- E: a slow member, buffers reused at once ---- */

static int32_t sval(int coll, int round, int src, int dst, size_t j)
{
    return (int32_t)mix64(seed6(55, (uint64_t)coll, (uint64_t)round, (uint64_t)src,
                                (uint64_t)dst, 0), j);
}

static void slow_member(void)
{
    section("E slow member");
    const int me = g_wrank, n = g_wsize;
    if (n < 2) {
        out("E slow member: needs 2 ranks, skipped");
        return;
    }
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    enum { BCAST, SCATTER, REDUCE, GATHER, ALLTOALL, NC };
    static const char *name[NC] = {"Bcast", "Scatter", "Reduce", "Gather", "Alltoall"};
    enum { ROUNDS = 3 };
    for (int big = 0; big < 2; big++) {
        /* ints per piece: inline, or read in place (fewer at more than 2
         * ranks: time) */
        const size_t m = big ? (n > 2 ? 50000 : 200000) : 8;
        int32_t *sb = must(malloc(m * (size_t)n * 4), "malloc", 0);
        int32_t *rb = must(malloc(m * (size_t)n * 4), "malloc", 0);
        for (int k = 0; k < NC; k++) {
            const int root = k % n;
            /* the member the others may run ahead of */
            const int slow = k == BCAST || k == SCATTER ? (root + 1) % n
                             : k == ALLTOALL           ? n - 1
                                                       : root;
            int good = 0;
            for (int round = 0; round < ROUNDS; round++) {
                if (me == slow && round == 0)
                    usleep(30000);
                const size_t ns = k == SCATTER || k == ALLTOALL ? m * (size_t)n : m;
                for (size_t j = 0; j < ns; j++)
                    sb[j] = k == SCATTER || k == ALLTOALL
                                ? sval(k, round, me, (int)(j / m), j % m)
                                : sval(k, round, me, 0, j);
                for (size_t j = 0; j < m * (size_t)n; j++)
                    rb[j] = -1;
                int ok = 1;
                switch (k) {
                case BCAST:
                    MPI_OK(MPI_Bcast(sb, (int)m, MPI_INT, root, c));
                    for (size_t j = 0; j < m; j++)
                        ok &= sb[j] == sval(k, round, root, 0, j);
                    break;
                case SCATTER:
                    MPI_OK(MPI_Scatter(sb, (int)m, MPI_INT, rb, (int)m, MPI_INT, root, c));
                    for (size_t j = 0; j < m; j++)
                        ok &= rb[j] == sval(k, round, root, me, j);
                    break;
                case REDUCE:
                    MPI_OK(MPI_Reduce(sb, rb, (int)m, MPI_INT, MPI_BXOR, root, c));
                    if (me == root)
                        for (size_t j = 0; j < m; j++) {
                            int32_t w = 0;
                            for (int r = 0; r < n; r++)
                                w ^= sval(k, round, r, 0, j);
                            ok &= rb[j] == w;
                        }
                    break;
                case GATHER:
                    MPI_OK(MPI_Gather(sb, (int)m, MPI_INT, rb, (int)m, MPI_INT, root, c));
                    if (me == root)
                        for (size_t j = 0; j < m * (size_t)n; j++)
                            ok &= rb[j] == sval(k, round, (int)(j / m), 0, j % m);
                    break;
                case ALLTOALL:
                    MPI_OK(MPI_Alltoall(sb, (int)m, MPI_INT, rb, (int)m, MPI_INT, c));
                    for (size_t j = 0; j < m * (size_t)n; j++)
                        ok &= rb[j] == sval(k, round, (int)(j / m), me, j % m);
                    break;
                }
                /* reuse both buffers at once */
                memset(sb, 0xAB, m * (size_t)n * 4);
                memset(rb, 0xCD, m * (size_t)n * 4);
                CHECK(ok, "%s of %zu ints, round %d, slow rank %d: wrong data", name[k], m,
                      round, slow);
                good += ok;
            }
            out("E %s of %zu ints, rank %d slow, buffers overwritten on return: %d of %d "
                "rounds right", name[k], m, slow, good, ROUNDS);
        }
        free(sb);
        free(rb);
    }
    /* the communicator freed right after a Bcast the slow member has not
     * read yet */
    int v[4] = {-1, -1, -1, -1};
    if (me == 0)
        for (int i = 0; i < 4; i++)
            v[i] = 900 + i;
    if (me == 1)
        usleep(30000);
    MPI_OK(MPI_Bcast(v, 4, MPI_INT, 0, c));
    MPI_OK(MPI_Comm_free(&c));
    /* new allocations and a new communicator that may reuse what it held */
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int x = 1, y = 0;
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d));
    MPI_OK(MPI_Comm_free(&d));
    int ok = y == n;
    for (int i = 0; i < 4; i++)
        ok &= v[i] == 900 + i;
    CHECK(ok, "Bcast then Comm_free before the slow member read: %d %d %d %d", v[0], v[1],
          v[2], v[3]);
    out("E Bcast, then Comm_free before a slow member read it: %s", ok ? "right" : "WRONG");
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_wrank = rank;
    g_wsize = size;
    MPI_OK(MPI_Type_contiguous(2, MPI_UINT64_T, &T_CAT));
    MPI_OK(MPI_Type_commit(&T_CAT));
    MPI_OK(MPI_Op_create(fn_cat, 0, &OP_CAT));
    communicators();
    intercomm();
    interleaved();
    churn();
    slow_member();
    MPI_Op_free(&OP_CAT);
    MPI_Type_free(&T_CAT);
    return coll_finish("comms", rank, size);
}

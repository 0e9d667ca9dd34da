/*
 * coll_nbvector.c - collective conformance: the nonblocking "v"
 * collectives, MPI_Igatherv, MPI_Iscatterv, MPI_Iallgatherv and
 * MPI_Ialltoallv, and MPI_Ialltoallw with its blocking form.
 *
 * Why: heapmpi runs them by having every sending member publish a table
 * of where its block for each member lies (its own buffer when that is a
 * dense run in the shared heap, else a packed copy in the heap, else,
 * with the heap full, a private copy read through cross-memory attach);
 * receivers look up their entry and copy once. Counts differ per member
 * and per pair (zeros included), displacements leave gaps and run in
 * reverse, datatypes may be derived and freed while the call is pending,
 * the calls may be in place, several are pending at once on one
 * communicator among other nonblocking collectives, and the results must
 * be the stock MPI's.
 *
 * For each payload class (counts of 0..40 ints, of 0..20000 ints, and of
 * 0.5-0.6 M ints, i.e. about 2.2 MiB), on MPI_COMM_WORLD, then on a
 * duplicate and on a split by parity (reversed keys):
 *   A. Igatherv (root rotating), Iscatterv (root rotating), Iallgatherv,
 *      Ialltoallv, an Ibcast, an Iallreduce and an Ireduce_scatter (m + 1
 *      ints to member m), all posted, then one MPI_Waitall;
 *   B. the same four in place (Igatherv and Iscatterv at the root), each
 *      waited for with MPI_Wait in reverse order (Ialltoallv not in place
 *      under Open MPI 4.1, whose own in-place Ialltoallv is wrong);
 *   C. Igatherv and Iallgatherv receiving into a resized type (ints 8
 *      bytes apart) and Ialltoallv sending from it, the types freed before
 *      the Waitall (the holes stay untouched);
 *   D. Alltoallw and Ialltoallw, the counts of Ialltoallv, byte
 *      displacements (the send blocks in reverse member order), receive
 *      blocks of MPI_INT from even members and of the resized type from
 *      odd ones (freed before the Wait), then the same in place (one
 *      count per pair; not the nonblocking one under Open MPI 4.1, as B;
 *      not the blocking ones on one member under Open MPI).
 * Every receive buffer has guard ints around and between the blocks that
 * must stay untouched; send buffers must be unchanged.
 *
 * Output (stdout, rank 0, rank order): per-rank checksums of the exact
 * results, the number of nonblocking collectives posted per rank on
 * communicators of more than one member (every one of them heapmpi can
 * run on the heap on a node-local communicator: compared with its
 * report's nonblocking= count), then
 * "rank N: nbvector ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

#define GUARDV (-7777)

/* Stock Open MPI 4.1 (libnbc) gets an in-place MPI_Ialltoallv of ~80 KB
 * blocks wrong at 4 ranks (one rank's blocks, 10 of 11 cases right; MPICH
 * and heapmpi right): there case B runs it with a send buffer. */
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
#define STOCK_A2AV_IN_PLACE_BROKEN 1
#else
#define STOCK_A2AV_IN_PLACE_BROKEN 0
#endif

/* Stock Open MPI's MPI_Alltoallw on a one-member communicator (4.1 and
 * 5.0, its coll/self) scales the byte displacements by the datatype's
 * extent, reading and writing the wrong bytes: D leaves it out there. */
#if defined(OPEN_MPI)
#define STOCK_A2AW_SELF_BROKEN 1
#else
#define STOCK_A2AW_SELF_BROKEN 0
#endif

static int g_calls;

/* Ints member `from` sends to member `to` (class z, seed s). */
static int cnt(int z, uint64_t s, int from, int to)
{
    static const int lo[] = {0, 0, 500000}, span[] = {41, 20001, 100000};
    uint64_t h = mix64(s, (uint64_t)(from * 131 + to));
    if (z < 2 && h % 5 == 0)
        return 0;
    return lo[z] + (int)(h % (uint64_t)span[z]);
}

/* Element k of what `from` sends to `to`. */
static int val(uint64_t s, int from, int to, int k)
{
    return (int)(mix64(s * 7 + (uint64_t)from, (uint64_t)to * 1000003u + (uint64_t)k) & 0x7fffffff);
}

/* Displacements in reverse member order with `gap` elements between
 * blocks; returns the extent in elements. counts[m] for each m. */
static int layout(int n, const int *counts, int gap, int *displs)
{
    /* Stock MPICH 4.0.2 ignores the displacement of (I)allgatherv on a
     * one-member communicator: none there. */
    int at = n > 1 ? gap : 0;
    for (int m = n - 1; m >= 0; m--) {
        displs[m] = at;
        at += counts[m] + gap;
    }
    return at;
}

static int *ints(size_t n)
{
    int *p = must(malloc((n + 1) * sizeof(int)), "malloc", n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        p[i] = GUARDV;
    return p;
}

typedef struct vcase {
    const char *what;
    int kind; /* 0 gatherv, 1 scatterv, 2 allgatherv, 3 alltoallv */
    int root, inplace, stride; /* stride: element spacing (1, or 2 for the resized type) */
    uint64_t s;
    int *sb, *rb;
    int rext; /* receive buffer extent in elements (of the stride) */
    int *rcounts, *rdispls, *scounts, *sdispls;
    MPI_Request rq;
} vcase;

/* Posts one case on `comm`. */
static void post(vcase *c, MPI_Comm comm, int z)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    const uint64_t s = c->s;
    c->rcounts = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    c->rdispls = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    c->scounts = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    c->sdispls = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    MPI_Datatype rt = MPI_INT, st = MPI_INT;
    if (c->stride == 2) {
        MPI_Datatype t;
        MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &t));
        MPI_OK(MPI_Type_commit(&t));
        if (c->kind == 3)
            st = t;
        else
            rt = t;
    }
    const int root = c->root;
    switch (c->kind) {
    case 0: { /* Igatherv: member m sends cnt(m, root) */
        for (int m = 0; m < n; m++)
            c->rcounts[m] = cnt(z, s, m, root);
        c->rext = layout(n, c->rcounts, 3, c->rdispls);
        c->rb = ints((size_t)c->rext * (size_t)c->stride);
        const int mine = cnt(z, s, me, root);
        c->sb = ints((size_t)mine);
        for (int k = 0; k < mine; k++)
            c->sb[k] = val(s, me, root, k);
        const int ip = c->inplace && me == root;
        if (ip)
            for (int k = 0; k < mine; k++)
                c->rb[(size_t)(c->rdispls[me] + k) * (size_t)c->stride] = val(s, me, root, k);
        MPI_OK(MPI_Igatherv(ip ? MPI_IN_PLACE : c->sb, mine, MPI_INT, c->rb, c->rcounts, c->rdispls,
                            rt, root, comm, &c->rq));
        break;
    }
    case 1: { /* Iscatterv: root sends cnt(root, m) to m */
        for (int m = 0; m < n; m++)
            c->scounts[m] = cnt(z, s, root, m);
        const int sext = layout(n, c->scounts, 2, c->sdispls);
        c->sb = ints((size_t)sext);
        if (me == root)
            for (int m = 0; m < n; m++)
                for (int k = 0; k < c->scounts[m]; k++)
                    c->sb[c->sdispls[m] + k] = val(s, root, m, k);
        c->rext = cnt(z, s, root, me);
        c->rb = ints((size_t)c->rext);
        const int ip = c->inplace && me == root;
        MPI_OK(MPI_Iscatterv(c->sb, c->scounts, c->sdispls, MPI_INT, ip ? MPI_IN_PLACE : c->rb,
                             c->rext, MPI_INT, root, comm, &c->rq));
        break;
    }
    case 2: { /* Iallgatherv: member m contributes cnt(m, m) */
        for (int m = 0; m < n; m++)
            c->rcounts[m] = cnt(z, s, m, m);
        c->rext = layout(n, c->rcounts, 1, c->rdispls);
        c->rb = ints((size_t)c->rext * (size_t)c->stride);
        const int mine = c->rcounts[me];
        c->sb = ints((size_t)mine);
        for (int k = 0; k < mine; k++)
            c->sb[k] = val(s, me, me, k);
        if (c->inplace)
            for (int k = 0; k < mine; k++)
                c->rb[(size_t)(c->rdispls[me] + k) * (size_t)c->stride] = val(s, me, me, k);
        MPI_OK(MPI_Iallgatherv(c->inplace ? MPI_IN_PLACE : c->sb, mine, MPI_INT, c->rb,
                               c->rcounts, c->rdispls, rt, comm, &c->rq));
        break;
    }
    default: { /* Ialltoallv: i sends cnt(i, j) to j */
        for (int m = 0; m < n; m++) {
            c->scounts[m] = cnt(z, s, me, m);
            c->rcounts[m] = cnt(z, s, m, me);
            if (c->inplace) /* one count per pair: sent = received */
                c->scounts[m] = c->rcounts[m] = cnt(z, s, me < m ? me : m, me < m ? m : me);
        }
        c->rext = layout(n, c->rcounts, 1, c->rdispls);
        c->rb = ints((size_t)c->rext);
        if (c->inplace) {
            for (int m = 0; m < n; m++)
                for (int k = 0; k < c->scounts[m]; k++)
                    c->rb[c->rdispls[m] + k] = val(s, me, m, k);
        } else {
            const int sext = layout(n, c->scounts, 2, c->sdispls);
            c->sb = ints((size_t)sext * (size_t)c->stride);
            for (int m = 0; m < n; m++)
                for (int k = 0; k < c->scounts[m]; k++)
                    c->sb[(size_t)(c->sdispls[m] + k) * (size_t)c->stride] = val(s, me, m, k);
        }
        MPI_OK(MPI_Ialltoallv(c->inplace ? MPI_IN_PLACE : c->sb, c->scounts, c->sdispls, st, c->rb,
                              c->rcounts, c->rdispls, MPI_INT, comm, &c->rq));
        break;
    }
    }
    g_calls += n > 1; /* heapmpi leaves one-member communicators alone */
    if (rt != MPI_INT)
        MPI_OK(MPI_Type_free(&rt));
    if (st != MPI_INT)
        MPI_OK(MPI_Type_free(&st));
}

/* Checks one completed case; folds the result into *h. */
static int check(vcase *c, MPI_Comm comm, uint64_t *h)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    const uint64_t s = c->s;
    int ok = c->rq == MPI_REQUEST_NULL;
    /* want[i]: the expected value of rb[i] (GUARDV where nothing lands). */
    /* The resized type is the receive type of Igatherv and Iallgatherv and
     * the send type of Ialltoallv. */
    const int rstride = c->kind == 0 || c->kind == 2 ? c->stride : 1;
    const size_t len = (size_t)c->rext * (size_t)rstride;
    int receives = c->kind >= 2 || me == c->root || c->kind == 1;
    if (c->kind == 1 && c->inplace && me == c->root)
        receives = 0; /* the root's block stays in its send buffer */
    if (receives) {
        int *want = ints(len);
        for (int m = 0; m < n; m++) {
            int from = m, to = me, count = 0, at = 0;
            switch (c->kind) {
            case 0: from = m, to = c->root, count = c->rcounts[m], at = c->rdispls[m]; break;
            case 1: from = c->root, to = me, count = m == 0 ? c->rext : 0, at = 0; break;
            case 2: from = m, to = m, count = c->rcounts[m], at = c->rdispls[m]; break;
            default: from = m, to = me, count = c->rcounts[m], at = c->rdispls[m]; break;
            }
            for (int k = 0; k < count; k++)
                want[(size_t)(at + k) * (size_t)rstride] = val(s, from, to, k);
        }
        ok &= memcmp(want, c->rb, len * sizeof(int)) == 0;
        *h = hash_bytes(*h, c->rb, len * sizeof(int));
        free(want);
    }
    CHECK(ok, "%s (kind %d, root %d%s, stride %d): wrong", c->what, c->kind, c->root,
          c->inplace ? ", in place" : "", c->stride);
    free(c->sb);
    free(c->rb);
    free(c->rcounts);
    free(c->rdispls);
    free(c->scounts);
    free(c->sdispls);
    return ok;
}

static const char *NAME[] = {"Igatherv", "Iscatterv", "Iallgatherv", "Ialltoallv"};

/* D: an (I)alltoallw of the Ialltoallv counts (class z, seed s); receive
 * block m is MPI_INT for even m, ints 8 bytes apart for odd m. Returns
 * whether the result, the holes and the guards are right. */
static int alltoallw(MPI_Comm comm, int z, uint64_t s, int inplace, int blocking, uint64_t *h)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *sc = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int *rc = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int *sd = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int *rd = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    MPI_Datatype *st = must(calloc((size_t)n, sizeof(MPI_Datatype)), "calloc", 0);
    MPI_Datatype *rt = must(calloc((size_t)n, sizeof(MPI_Datatype)), "calloc", 0);
    MPI_Datatype apart;
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &apart));
    MPI_OK(MPI_Type_commit(&apart));
    for (int m = 0; m < n; m++) {
        sc[m] = cnt(z, s, me, m);
        rc[m] = cnt(z, s, m, me);
        if (inplace) /* one count per pair: sent = received */
            sc[m] = rc[m] = cnt(z, s, me < m ? me : m, me < m ? m : me);
        st[m] = MPI_INT;
        rt[m] = m % 2 ? apart : MPI_INT;
    }
    size_t rat = 1, sat = 2; /* ints; a guard before the first block */
    for (int m = 0; m < n; m++) {
        rd[m] = (int)(rat * sizeof(int));
        rat += (size_t)rc[m] * (m % 2 ? 2 : 1) + 1;
    }
    for (int m = n - 1; m >= 0; m--) {
        sd[m] = (int)(sat * sizeof(int));
        sat += (size_t)sc[m] + 2;
    }
    int *rb = ints(rat), *sb = inplace ? NULL : ints(sat);
    for (int m = 0; m < n; m++)
        for (int k = 0; k < sc[m]; k++) {
            if (inplace)
                rb[(size_t)rd[m] / sizeof(int) + (size_t)k * (m % 2 ? 2 : 1)] = val(s, me, m, k);
            else
                sb[(size_t)sd[m] / sizeof(int) + (size_t)k] = val(s, me, m, k);
        }
    const void *sp = inplace ? MPI_IN_PLACE : (const void *)sb;
    if (blocking) {
        MPI_OK(MPI_Alltoallw(sp, sc, sd, st, rb, rc, rd, rt, comm));
        MPI_OK(MPI_Type_free(&apart));
    } else {
        MPI_Request rq;
        MPI_OK(MPI_Ialltoallw(sp, sc, sd, st, rb, rc, rd, rt, comm, &rq));
        MPI_OK(MPI_Type_free(&apart));
        g_calls += n > 1;
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    int *want = ints(rat);
    for (int m = 0; m < n; m++)
        for (int k = 0; k < rc[m]; k++)
            want[(size_t)rd[m] / sizeof(int) + (size_t)k * (m % 2 ? 2 : 1)] = val(s, m, me, k);
    int ok = memcmp(want, rb, rat * sizeof(int)) == 0;
    for (int m = 0; m < n && !inplace; m++)
        for (int k = 0; k < sc[m]; k++)
            ok &= sb[(size_t)sd[m] / sizeof(int) + (size_t)k] == val(s, me, m, k);
    *h = hash_bytes(*h, rb, rat * sizeof(int));
    CHECK(ok, "%s%s: wrong", blocking ? "Alltoallw" : "Ialltoallw", inplace ? ", in place" : "");
    free(want), free(rb), free(sb), free(sc), free(rc), free(sd), free(rd), free(st), free(rt);
    return ok;
}

static void on(MPI_Comm comm, const char *label, int z, uint64_t seed)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int good = 0, total = 0;
    uint64_t h = 0;

    /* A: all four with an Ibcast, an Iallreduce and an Ireduce_scatter,
     * one Waitall. */
    vcase a[4];
    MPI_Request rq[7];
    for (int k = 0; k < 4; k++) {
        a[k] = (vcase){.what = NAME[k], .kind = k, .root = (int)((seed + (uint64_t)k) % (uint64_t)n),
                       .stride = 1, .s = seed * 10 + (uint64_t)k};
        post(&a[k], comm, z);
        rq[k] = a[k].rq;
    }
    int bc[3] = {me, me, me}, ar = 1, sum = 0;
    MPI_OK(MPI_Ibcast(bc, 3, MPI_INT, n - 1, comm, &rq[4]));
    MPI_OK(MPI_Iallreduce(&ar, &sum, 1, MPI_INT, MPI_SUM, comm, &rq[5]));
    /* An Ireduce_scatter of m + 1 ints to member m: element i of member
     * m's contribution is m * 1000 + i. */
    int *rsc = must(malloc((size_t)n * sizeof *rsc), "malloc", n);
    const int rtot = n * (n + 1) / 2, first = me * (me + 1) / 2;
    int *rss = must(malloc((size_t)rtot * sizeof *rss), "malloc", rtot);
    int rsr[65];
    CHECK(n <= 64, "at most 64 ranks, not %d", n);
    for (int m = 0; m < n; m++)
        rsc[m] = m + 1;
    for (int i = 0; i < rtot; i++)
        rss[i] = me * 1000 + i;
    for (int j = 0; j <= me + 1; j++)
        rsr[j] = GUARDV;
    MPI_OK(MPI_Ireduce_scatter(rss, rsr, rsc, MPI_INT, MPI_SUM, comm, &rq[6]));
    g_calls += 3 * (n > 1);
    MPI_OK(MPI_Waitall(7, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 4; k++) {
        a[k].rq = rq[k];
        good += check(&a[k], comm, &h), total++;
    }
    CHECK(bc[0] == n - 1 && bc[2] == n - 1 && sum == n, "Ibcast/Iallreduce among them");
    for (int j = 0; j <= me; j++)
        CHECK(rsr[j] == 1000 * n * (n - 1) / 2 + n * (first + j),
              "Ireduce_scatter element %d: %d", j, rsr[j]);
    CHECK(rsr[me + 1] == GUARDV, "Ireduce_scatter wrote past its %d ints", me + 1);
    free(rsc);
    free(rss);

    /* B: in place, waited for one by one in reverse (Ialltoallv in place
     * sends and receives one count per pair). */
    vcase b[4];
    for (int k = 0; k < 4; k++) {
        b[k] = (vcase){.what = NAME[k], .kind = k, .root = (int)((seed + 2 + (uint64_t)k) % (uint64_t)n),
                       .inplace = k != 3 || !STOCK_A2AV_IN_PLACE_BROKEN, .stride = 1,
                       .s = seed * 10 + 5 + (uint64_t)k};
        post(&b[k], comm, z);
    }
    for (int k = 3; k >= 0; k--) {
        MPI_OK(MPI_Wait(&b[k].rq, MPI_STATUS_IGNORE));
        good += check(&b[k], comm, &h), total++;
    }

    /* C: a resized type (ints 8 bytes apart), freed before the Waitall. */
    vcase c[3];
    static const int ck[3] = {0, 2, 3};
    MPI_Request cq[3];
    for (int k = 0; k < 3; k++) {
        c[k] = (vcase){.what = NAME[ck[k]], .kind = ck[k], .root = (int)(seed % (uint64_t)n),
                       .stride = 2, .s = seed * 10 + 9 + (uint64_t)k};
        post(&c[k], comm, z);
        cq[k] = c[k].rq;
    }
    MPI_OK(MPI_Waitall(3, cq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 3; k++) {
        c[k].rq = cq[k];
        good += check(&c[k], comm, &h), total++;
    }

    /* D: (I)alltoallw, then in place. */
    for (int inplace = 0; inplace < 2; inplace++)
        for (int blocking = 1; blocking >= 0; blocking--) {
            if (blocking && n == 1 && STOCK_A2AW_SELF_BROKEN)
                continue;
            const int ip = inplace && (blocking || !STOCK_A2AV_IN_PLACE_BROKEN);
            good += alltoallw(comm, z, seed * 10 + 20 + (uint64_t)(2 * inplace + blocking), ip,
                              blocking, &h);
            total++;
        }
    out("%s, counts class %d: %d of %d right, checksum %016llx", label, z, good, total,
        (unsigned long long)h);
}

int main(int argc, char **argv)
{
    int me, n;
    coll_init(&argc, &argv, &me, &n);
    for (int z = 0; z < 3; z++) {
        section("world");
        on(MPI_COMM_WORLD, "world", z, 100 + (uint64_t)z);
        if (z == 2)
            break; /* the large class once, on the world */
        section("dup");
        MPI_Comm d, p;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        on(d, "dup", z, 200 + (uint64_t)z);
        MPI_OK(MPI_Comm_free(&d));
        section("split");
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, n - me, &p));
        on(p, "split", z, 300 + (uint64_t)z);
        MPI_OK(MPI_Comm_free(&p));
    }
    out("nonblocking calls per rank: %d", g_calls);
    return coll_finish("nbvector", me, n);
}

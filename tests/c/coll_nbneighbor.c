/*
 * coll_nbneighbor.c - collective conformance: the nonblocking
 * neighbourhood collectives, MPI_Ineighbor_allgather, _allgatherv,
 * _alltoall, _alltoallv and _alltoallw.
 *
 * Why: heapmpi runs them over the shared heap when it knows the
 * communicator's neighbourhood, read when the communicator was created,
 * so that they may be its first collectives; each receive block must come
 * from the send block the served MPI pairs it with (where one rank is a
 * neighbour more than once, as on a periodic ring of 2, the MPIs differ),
 * several may be pending at once among other work, and the results must
 * be the stock MPI's.
 *
 * Topologies, created then used at once with nonblocking calls only: a
 * periodic ring (MPI_Cart_create, 1-D), a 2-D grid periodic in one
 * dimension only (MPI_PROC_NULL neighbours), a graph ring (MPI_Graph_create)
 * and a distributed graph where rank r sends to r+1 and r+2
 * (MPI_Dist_graph_create_adjacent). On each, for 3 and 1000 and 300001
 * ints per block: Ineighbor_allgather (also into a resized receive type,
 * ints 8 bytes apart, freed while pending: its holes untouched),
 * Ineighbor_allgatherv (counts per in-neighbour, reversed displacements
 * with gaps), Ineighbor_alltoall, Ineighbor_alltoallv and
 * Ineighbor_alltoallw (the alltoallv's blocks, received as b ints into
 * even blocks and, into odd ones, as one vector of b ints two apart,
 * its datatype freed while pending: the holes untouched), all posted,
 * some arithmetic, then one MPI_Waitall.
 * The all-gathers' blocks are checked against the in-neighbours' known
 * values; every result's checksum is printed (and must equal stock's).
 *
 * Output (stdout, rank 0, rank order): per-rank checksums, the number of
 * nonblocking collectives posted per rank that heapmpi runs on the heap
 * (compared with its report's nonblocking= count), then
 * "rank N: nbneighbor ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

#define GUARDV (-5555)

static int g_me, g_n, g_calls;

static int val(uint64_t s, int rank, int block, size_t j)
{
    return (int)(mix64(s * 1315423911u + (uint64_t)rank * 977 + (uint64_t)block, j) & 0x3fffffff);
}

static int *ints(size_t n)
{
    int *p = must(malloc((n + 1) * sizeof(int)), "malloc", n * sizeof(int));
    for (size_t i = 0; i <= n; i++)
        p[i] = GUARDV;
    return p;
}

/* The in-neighbours (sources) of `comm`, in MPI's order. */
static int sources(MPI_Comm comm, int *src, int max)
{
    int kind, k = 0;
    MPI_OK(MPI_Topo_test(comm, &kind));
    if (kind == MPI_CART) {
        int nd;
        MPI_OK(MPI_Cartdim_get(comm, &nd));
        for (int d = 0; d < nd && k + 2 <= max; d++) {
            int a, b;
            MPI_OK(MPI_Cart_shift(comm, d, 1, &a, &b));
            src[k++] = a;
            src[k++] = b;
        }
    } else if (kind == MPI_GRAPH) {
        MPI_OK(MPI_Graph_neighbors_count(comm, g_me, &k));
        MPI_OK(MPI_Graph_neighbors(comm, g_me, max, src));
    } else {
        int in, out, w;
        MPI_OK(MPI_Dist_graph_neighbors_count(comm, &in, &out, &w));
        int *dst = must(malloc(sizeof(int) * (size_t)(out + 1)), "malloc", 0);
        MPI_OK(MPI_Dist_graph_neighbors(comm, in, src, MPI_UNWEIGHTED, out, dst, MPI_UNWEIGHTED));
        free(dst);
        k = in;
    }
    return k;
}

static void degrees(MPI_Comm comm, int *in, int *out)
{
    int kind;
    MPI_OK(MPI_Topo_test(comm, &kind));
    if (kind == MPI_DIST_GRAPH) {
        int w;
        MPI_OK(MPI_Dist_graph_neighbors_count(comm, in, out, &w));
    } else {
        int src[64];
        *in = *out = sources(comm, src, 64);
    }
}

/* One round of every call on `comm` with `b` ints per block. */
static void round_on(MPI_Comm comm, const char *label, size_t b, uint64_t s)
{
    int in, outd, src[64];
    degrees(comm, &in, &outd);
    const int ns = sources(comm, src, 64);
    CHECK(ns == in, "%s: %d sources, in-degree %d", label, ns, in);
    const size_t io = (size_t)(in > 0 ? in : 1), oo = (size_t)(outd > 0 ? outd : 1);
    MPI_Request rq[6];
    int nrq = 0;

    /* allgather */
    int *ag_s = ints(b), *ag_r = ints(io * b);
    for (size_t j = 0; j < b; j++)
        ag_s[j] = val(s, g_me, 0, j);
    MPI_OK(MPI_Ineighbor_allgather(ag_s, (int)b, MPI_INT, ag_r, (int)b, MPI_INT, comm, &rq[nrq++]));

    /* allgather into a resized type (ints 8 bytes apart), freed now */
    MPI_Datatype rs;
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &rs));
    MPI_OK(MPI_Type_commit(&rs));
    int *ar_r = ints(2 * io * b);
    MPI_OK(MPI_Ineighbor_allgather(ag_s, (int)b, MPI_INT, ar_r, (int)b, rs, comm, &rq[nrq++]));
    MPI_OK(MPI_Type_free(&rs));

    /* allgatherv: block i of count c_i at reversed displacements, gaps 2 */
    int *rc = must(calloc(io, sizeof(int)), "calloc", 0), *rd = must(calloc(io, sizeof(int)), "calloc", 0);
    size_t at = 2;
    for (int i = in - 1; i >= 0; i--) {
        rc[i] = (int)b;
        rd[i] = (int)at;
        at += b + 2;
    }
    int *av_r = ints(at);
    MPI_OK(MPI_Ineighbor_allgatherv(ag_s, (int)b, MPI_INT, av_r, rc, rd, MPI_INT, comm, &rq[nrq++]));

    /* alltoall: send block k is val(me, k + 1) */
    int *aa_s = ints(oo * b), *aa_r = ints(io * b);
    for (int k = 0; k < outd; k++)
        for (size_t j = 0; j < b; j++)
            aa_s[(size_t)k * b + j] = val(s, g_me, k + 1, j);
    MPI_OK(MPI_Ineighbor_alltoall(aa_s, (int)b, MPI_INT, aa_r, (int)b, MPI_INT, comm, &rq[nrq++]));

    /* alltoallv: send block k has b - k ints (at least 1), reversed, gap 1 */
    int *sc = must(calloc(oo, sizeof(int)), "calloc", 0), *sd = must(calloc(oo, sizeof(int)), "calloc", 0);
    int *vc = must(calloc(io, sizeof(int)), "calloc", 0), *vd = must(calloc(io, sizeof(int)), "calloc", 0);
    size_t sat = 1, vat = 1;
    for (int k = outd - 1; k >= 0; k--) {
        sc[k] = (int)b;
        sd[k] = (int)sat;
        sat += b + 1;
    }
    for (int i = 0; i < in; i++) {
        vc[i] = (int)b;
        vd[i] = (int)vat;
        vat += b + 1;
    }
    int *vv_s = ints(sat), *vv_r = ints(vat);
    for (int k = 0; k < outd; k++)
        for (int j = 0; j < sc[k]; j++)
            vv_s[sd[k] + j] = val(s, g_me, 100 + k, (size_t)j);
    MPI_OK(MPI_Ineighbor_alltoallv(vv_s, sc, sd, MPI_INT, vv_r, vc, vd, MPI_INT, comm, &rq[nrq++]));

    /* alltoallw: the alltoallv's blocks (the MPIs pair the two alike),
     * byte displacements; receive block i is b ints (i even) or one vector
     * of b ints two apart (i odd) */
    MPI_Aint *wsd = must(calloc(oo, sizeof(MPI_Aint)), "calloc", 0), *wrd = must(calloc(io, sizeof(MPI_Aint)), "calloc", 0);
    int *wsc = must(calloc(oo, sizeof(int)), "calloc", 0), *wrc = must(calloc(io, sizeof(int)), "calloc", 0);
    MPI_Datatype *wst = must(calloc(oo, sizeof(MPI_Datatype)), "calloc", 0), *wrt = must(calloc(io, sizeof(MPI_Datatype)), "calloc", 0);
    MPI_Datatype two_apart;
    MPI_OK(MPI_Type_vector((int)b, 1, 2, MPI_INT, &two_apart));
    MPI_OK(MPI_Type_commit(&two_apart));
    for (int k = 0; k < outd; k++)
        wsc[k] = sc[k], wsd[k] = (MPI_Aint)((size_t)sd[k] * sizeof(int)), wst[k] = MPI_INT;
    size_t wat = 0; /* ints of the receive area */
    for (int i = 0; i < in; i++) {
        wrd[i] = (MPI_Aint)(wat * sizeof(int));
        if (i % 2) {
            wrc[i] = 1, wrt[i] = two_apart;
            wat += 2 * b;
        } else {
            wrc[i] = (int)b, wrt[i] = MPI_INT;
            wat += b;
        }
    }
    int *aw_r = ints(wat);
    MPI_OK(MPI_Ineighbor_alltoallw(vv_s, wsc, wsd, wst, aw_r, wrc, wrd, wrt, comm, &rq[nrq++]));
    MPI_OK(MPI_Type_free(&two_apart));
    g_calls += 6;

    /* some work while they are pending */
    volatile double x = 1.0;
    for (int i = 0; i < 20000; i++)
        x = x * 1.0000001 + 1e-9;
    MPI_OK(MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE));

    int ok = 1;
    for (int i = 0; i < in; i++)
        for (size_t j = 0; j < b; j++) {
            const int want = src[i] == MPI_PROC_NULL ? GUARDV : val(s, src[i], 0, j);
            ok &= ag_r[(size_t)i * b + j] == want;
            ok &= ar_r[2 * ((size_t)i * b + j)] == want && ar_r[2 * ((size_t)i * b + j) + 1] == GUARDV;
            ok &= av_r[(size_t)rd[i] + j] == want;
        }
    ok &= ag_r[io * b] == GUARDV && aa_r[io * b] == GUARDV && aw_r[wat] == GUARDV;
    /* alltoallw's blocks are alltoallv's, the odd ones two ints apart */
    for (int i = 0; i < in; i++)
        for (size_t j = 0; j < b; j++) {
            const size_t at_w = (size_t)wrd[i] / sizeof(int) + (i % 2 ? 2 * j : j);
            ok &= aw_r[at_w] == vv_r[(size_t)vd[i] + j];
            if (i % 2)
                ok &= aw_r[at_w + 1] == GUARDV;
        }
    for (int k = 0; k < outd; k++)
        for (size_t j = 0; j < b; j++)
            ok &= aa_s[(size_t)k * b + j] == val(s, g_me, k + 1, j);
    CHECK(ok, "%s, %zu ints per block: wrong", label, b);
    uint64_t h = 0;
    h = hash_bytes(h, ag_r, io * b * sizeof(int));
    h = hash_bytes(h, ar_r, 2 * io * b * sizeof(int));
    h = hash_bytes(h, av_r, at * sizeof(int));
    h = hash_bytes(h, aa_r, io * b * sizeof(int));
    h = hash_bytes(h, vv_r, vat * sizeof(int));
    h = hash_bytes(h, aw_r, wat * sizeof(int));
    out("%s, %zu ints per block: %s, checksum %016llx", label, b, ok ? "right" : "WRONG",
        (unsigned long long)h);
    free(ag_s), free(ag_r), free(ar_r), free(rc), free(rd), free(av_r), free(aa_s), free(aa_r);
    free(sc), free(sd), free(vc), free(vd), free(vv_s), free(vv_r);
    free(wsd), free(wrd), free(wsc), free(wrc), free(wst), free(wrt), free(aw_r);
}

static void on(MPI_Comm comm, const char *label, uint64_t s)
{
    static const size_t sizes[] = {3, 1000, 300001};
    for (int z = 0; z < 3; z++)
        round_on(comm, label, sizes[z], s + (uint64_t)z);
    MPI_OK(MPI_Comm_free(&comm));
}

int main(int argc, char **argv)
{
    coll_init(&argc, &argv, &g_me, &g_n);
    MPI_Comm c;

    section("ring");
    int dims1[1] = {g_n}, per1[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, per1, 0, &c));
    on(c, "periodic ring", 10);

    section("grid");
    int dims2[2] = {0, 0}, per2[2] = {1, 0};
    MPI_OK(MPI_Dims_create(g_n, 2, dims2));
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, per2, 0, &c));
    on(c, "2-D grid", 20);

    section("graph");
    int *index = must(malloc(sizeof(int) * (size_t)g_n), "malloc", 0);
    int *edges = must(malloc(sizeof(int) * 2 * (size_t)g_n), "malloc", 0);
    for (int r = 0; r < g_n; r++) {
        index[r] = 2 * (r + 1);
        edges[2 * r] = (r + 1) % g_n;
        edges[2 * r + 1] = (r + g_n - 1) % g_n;
    }
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, g_n, index, edges, 0, &c));
    free(index);
    free(edges);
    on(c, "graph ring", 30);

    section("dist graph");
    int srcs[2] = {(g_me + g_n - 1) % g_n, (g_me + g_n - 2) % g_n};
    int dsts[2] = {(g_me + 1) % g_n, (g_me + 2) % g_n};
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
    on(c, "dist graph", 40);

    out("nonblocking calls per rank: %d", g_n > 1 ? g_calls : 0);
    return coll_finish("nbneighbor", g_me, g_n);
}

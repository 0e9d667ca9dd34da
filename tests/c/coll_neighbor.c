/*
 * coll_neighbor.c - collective conformance: the neighbourhood collectives.
 *
 * Why: heapmpi runs MPI_Neighbor_allgather(v) and MPI_Neighbor_alltoall(v)
 * of a node-local communicator with a process topology over its shared
 * heap: every member offers its send blocks, every member copies each of
 * its receive blocks from the block its source offered for it. Which
 * block that is must be what the stock MPI does, and the corner cases are
 * where MPIs differ: a periodic dimension of 2 (the
 * same rank is the -1 and the +1 neighbour) or of 1 (a rank is its own
 * neighbour twice), MPI_PROC_NULL neighbours off a non-periodic edge
 * (their receive blocks must not be touched), a graph that lists a
 * neighbour several times and itself, and a directed distributed graph
 * (sources and destinations differ). The results must be the stock MPI's.
 *
 * Sections, on MPI_COMM_WORLD and on the communicator of this rank's
 * (pretend) node:
 *  A. topologies: a periodic ring (Cart 1-D), a non-periodic line, a 2-D
 *     grid periodic in one dimension (MPI_Dims_create), a 3-D grid of
 *     n x 1 x 1 periodic in the two dimensions of 1, an undirected graph
 *     whose every rank lists [next, prev, itself, next, prev]
 *     (MPI_Graph_create), a directed ring with self-loops
 *     (MPI_Dist_graph_create_adjacent: sources [prev, self], destinations
 *     [next, self]), and one with weights and no self-loop.
 *  B. on each: Neighbor_allgather, Neighbor_allgatherv (uneven counts,
 *     blocks in reverse order with gaps), Neighbor_alltoall,
 *     Neighbor_alltoallv (uneven counts, reverse order, gaps) and
 *     Neighbor_alltoallw (the same, odd receive blocks through a derived
 *     type of the same signature),
 *     with 0, 1, 3, 1000 and 20000 ints per block (fewer at 4 ranks), send
 *     and receive buffers from malloc (in the shared heap under heapmpi)
 *     or static arrays (outside it), alternating; once with a strided
 *     receive type (a vector of ints with stride 2) against plain ints.
 *     Every receive buffer starts filled with a sentinel: the checksum of
 *     the whole buffer (blocks, gaps, untouched blocks of MPI_PROC_NULL
 *     neighbours) is printed, and the program checks each received block
 *     against the pattern its source must have sent and every send buffer
 *     for being unchanged. Which send block lands in which receive block
 *     where a rank is a neighbour more than once differs between the stock
 *     MPIs and their versions (see rule_of); the program expects each
 *     MPI's own.
 */
#define _GNU_SOURCE
#include "coll_util.h"

#define BIG 20000
#define MAXNB 8
/* Static buffers: outside the shared heap under heapmpi. */
static int s_send[MAXNB * (BIG + 64)];
static int s_recv[2 * MAXNB * (BIG + 64)];

static int value(int src, int block, int i)
{
    return src * 1000003 + block * 7919 + i;
}

/* A communicator with a topology, and what the program expects: for
 * each receive block, (source, the source's send block) or source -1. */
enum rule { DIRECTION, IN_ORDER, REVERSE };
struct topo {
    const char *name;
    MPI_Comm comm;
    int cart;
    int indeg, outdeg;
    int src[MAXNB];
    /* The source's send block, by rule. */
    int block[3][MAXNB];
};

/* Which send block lands in which receive block where one rank is a
 * neighbour more than once: what the stock MPIs do (measured, and in their
 * trackers: mpi-forum/mpi-issues#153, pmodels/mpich#7945). MPI-4.1 (Open
 * MPI 4.1 and 5.0, MPICH from 5.0.2): on a Cartesian grid what goes +1
 * arrives from -1, also where -1 and +1 are one rank; on graphs messages
 * between two ranks match in order. MPICH 4.0: Neighbor_alltoall pairs the
 * o-th occurrence of a source with the o-th occurrence from the end of its
 * destinations, on every topology; Neighbor_alltoallv and _alltoallw match
 * in order. Any other MPI: g_loose, where a block may be any of the three
 * candidates (receive counts then fit the largest). */
enum lib { MPI41, MPICH40, OTHER };
static enum lib g_lib;
static int g_loose;

static enum rule rule_of(const struct topo *t, int alltoall)
{
    if (g_lib == MPICH40)
        return alltoall ? REVERSE : IN_ORDER;
    return t->cart ? DIRECTION : IN_ORDER;
}

static void detect_lib(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, a = 0, b = 0, c = 0;
    MPI_OK(MPI_Get_library_version(lib, &len));
    g_lib = OTHER;
    if (sscanf(lib, "Open MPI v%d.%d.%d", &a, &b, &c) >= 2) {
        if ((a == 4 && b >= 1) || a == 5)
            g_lib = MPI41;
    } else if (sscanf(lib, "MPICH Version: %d.%d.%d", &a, &b, &c) >= 2) {
        if (a == 4 && b == 0)
            g_lib = MPICH40;
        else if (a > 5 || (a == 5 && (b > 0 || c >= 2)))
            g_lib = MPI41;
    }
    g_loose = g_lib == OTHER;
}

/* The o-th time `me` appears in `list` (from the end with `rev`), or
 * -1. */
static int nth(const int *list, int len, int me, int o, int rev)
{
    for (int j = 0; j < len; j++) {
        int i = rev ? len - 1 - j : j;
        if (list[i] == me && o-- == 0)
            return i;
    }
    return -1;
}

/* The order rules for receive block k of `me` from source s, given s's
 * destination list. */
static void by_order(struct topo *t, int me, const int *srcs, int k,
                     const int *dests, int len)
{
    int s = srcs[k], o = 0;
    for (int j = 0; j < k; j++)
        o += srcs[j] == s;
    t->block[IN_ORDER][k] = nth(dests, len, me, o, 0);
    t->block[REVERSE][k] = nth(dests, len, me, o, 1);
    CHECK(t->block[IN_ORDER][k] >= 0 && t->block[REVERSE][k] >= 0,
          "%s: no matching edge", t->name);
}

/* Rank r's Cartesian neighbours, [-1, +1] per dimension (-1 for
 * MPI_PROC_NULL), from its coordinates. */
static int cart_list(MPI_Comm comm, int r, int *out)
{
    int nd, dims[3], per[3], coords[3], c[3], n = 0;
    MPI_OK(MPI_Cartdim_get(comm, &nd));
    MPI_OK(MPI_Cart_get(comm, nd, dims, per, coords));
    MPI_OK(MPI_Cart_coords(comm, r, nd, coords));
    for (int d = 0; d < nd; d++)
        for (int dir = -1; dir <= 1; dir += 2) {
            memcpy(c, coords, sizeof c);
            c[d] += dir;
            if ((c[d] < 0 || c[d] >= dims[d]) && !per[d]) {
                out[n++] = -1;
                continue;
            }
            c[d] = (c[d] + dims[d]) % dims[d];
            MPI_OK(MPI_Cart_rank(comm, c, &out[n++]));
        }
    return n;
}

static void expect_cart(struct topo *t)
{
    int me, nd;
    MPI_Comm_rank(t->comm, &me);
    MPI_OK(MPI_Cartdim_get(t->comm, &nd));
    t->cart = 1;
    t->indeg = t->outdeg = 2 * nd;
    for (int d = 0; d < nd; d++) {
        int s, r;
        MPI_OK(MPI_Cart_shift(t->comm, d, 1, &s, &r));
        t->src[2 * d] = s == MPI_PROC_NULL ? -1 : s;
        t->src[2 * d + 1] = r == MPI_PROC_NULL ? -1 : r;
    }
    int mine[MAXNB];
    CHECK(cart_list(t->comm, me, mine) == t->indeg && !memcmp(mine, t->src, sizeof(int) * t->indeg),
          "%s: Cart_shift and Cart_coords disagree", t->name);
    for (int k = 0; k < t->indeg; k++) {
        t->block[DIRECTION][k] = k ^ 1;
        if (t->src[k] < 0)
            continue;
        int theirs[MAXNB];
        int len = cart_list(t->comm, t->src[k], theirs);
        by_order(t, me, t->src, k, theirs, len);
    }
}

/* Graphs: sources `srcs`, and each source's destinations (`dests_of`). */
static void expect_graph(struct topo *t, int me, const int *srcs,
                         void (*dests_of)(int r, int n, int *out, int *len),
                         int n)
{
    t->cart = 0;
    for (int k = 0; k < t->indeg; k++) {
        int d[MAXNB], len;
        t->src[k] = srcs[k];
        dests_of(srcs[k], n, d, &len);
        by_order(t, me, srcs, k, d, len);
        t->block[DIRECTION][k] = t->block[IN_ORDER][k];
    }
}

static void graph_list(int r, int n, int *out, int *len)
{
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    int l[5] = {next, prev, r, next, prev};
    memcpy(out, l, sizeof l);
    *len = 5;
}

static void ring_dests(int r, int n, int *out, int *len)
{
    out[0] = (r + 1) % n;
    out[1] = r;
    *len = 2;
}

static void ring_dests_noself(int r, int n, int *out, int *len)
{
    out[0] = (r + 1) % n;
    out[1] = (r + 2) % n;
    *len = 2;
}

static int make_topos(MPI_Comm base, struct topo *t)
{
    int n, me, k = 0;
    MPI_Comm_size(base, &n);
    MPI_Comm_rank(base, &me);
    {
        int dims[1] = {n}, per[1] = {1};
        t[k].name = "ring";
        MPI_OK(MPI_Cart_create(base, 1, dims, per, 0, &t[k].comm));
        expect_cart(&t[k++]);
    }
    {
        int dims[1] = {n}, per[1] = {0};
        t[k].name = "line";
        MPI_OK(MPI_Cart_create(base, 1, dims, per, 0, &t[k].comm));
        expect_cart(&t[k++]);
    }
    {
        int dims[2] = {0, 0}, per[2] = {1, 0};
        MPI_OK(MPI_Dims_create(n, 2, dims));
        t[k].name = "grid2d";
        MPI_OK(MPI_Cart_create(base, 2, dims, per, 0, &t[k].comm));
        expect_cart(&t[k++]);
    }
    {
        int dims[3] = {n, 1, 1}, per[3] = {0, 1, 1};
        t[k].name = "grid3d";
        MPI_OK(MPI_Cart_create(base, 3, dims, per, 0, &t[k].comm));
        expect_cart(&t[k++]);
    }
    {
        int *index = malloc(sizeof(int) * n), *edges = malloc(sizeof(int) * 5 * n);
        for (int r = 0; r < n; r++) {
            int len;
            graph_list(r, n, edges + 5 * r, &len);
            index[r] = 5 * (r + 1);
        }
        t[k].name = "graph";
        MPI_OK(MPI_Graph_create(base, n, index, edges, 0, &t[k].comm));
        t[k].indeg = t[k].outdeg = 5;
        int mine[5], len;
        graph_list(me, n, mine, &len);
        expect_graph(&t[k++], me, mine, graph_list, n);
        free(index);
        free(edges);
    }
    {
        int srcs[2] = {(me + n - 1) % n, me}, dsts[2];
        int len;
        ring_dests(me, n, dsts, &len);
        t[k].name = "distgraph";
        MPI_OK(MPI_Dist_graph_create_adjacent(base, 2, srcs, MPI_UNWEIGHTED, 2,
                                              dsts, MPI_UNWEIGHTED,
                                              MPI_INFO_NULL, 0, &t[k].comm));
        t[k].indeg = t[k].outdeg = 2;
        expect_graph(&t[k++], me, srcs, ring_dests, n);
    }
    {
        int srcs[2] = {(me + n - 1) % n, (me + n - 2 + 2 * n) % n}, dsts[2];
        int w[2] = {3, 1}, len;
        ring_dests_noself(me, n, dsts, &len);
        t[k].name = "weighted";
        MPI_OK(MPI_Dist_graph_create_adjacent(base, 2, srcs, w, 2, dsts, w,
                                              MPI_INFO_NULL, 0, &t[k].comm));
        t[k].indeg = t[k].outdeg = 2;
        expect_graph(&t[k++], me, srcs, ring_dests_noself, n);
    }
    return k;
}

enum call { ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW, NCALLS };
static const char *call_name[NCALLS] = {"allgather", "allgatherv", "alltoall",
                                        "alltoallv", "alltoallw"};

/* Uneven counts of the v forms: block k gets count + k (count 0 stays 0
 * for even k), placed in reverse order with a gap of 5 ints. */
static int vcount(int count, int k)
{
    return count == 0 ? (k % 2) : count + k;
}

static void run(struct topo *t, enum call c, int count, int round,
                int strided)
{
    int me;
    MPI_Comm_rank(t->comm, &me);
    int sblocks = (c == ALLGATHER || c == ALLGATHERV) ? 1 : t->outdeg;
    const int *blk = t->block[rule_of(t, c == ALLTOALL)];
    int scounts[MAXNB], sdispls[MAXNB], rcounts[MAXNB], rdispls[MAXNB];
    int v = c == ALLGATHERV || c == ALLTOALLV || c == ALLTOALLW;
    size_t stotal = 0, rtotal = 0;
    for (int k = 0; k < sblocks; k++)
        scounts[k] = v && c != ALLGATHERV ? vcount(count, k) : count;
    /* The v forms: send blocks in reverse order with gaps. */
    for (int k = v ? sblocks - 1 : 0; v ? k >= 0 : k < sblocks; k += v ? -1 : 1) {
        sdispls[k] = (int)stotal;
        stotal += (size_t)scounts[k] + (v ? 5 : 0);
    }
    for (int k = 0; k < t->indeg; k++) {
        int s = t->src[k];
        if (c == ALLGATHER || c == ALLTOALL)
            rcounts[k] = count;
        else if (c == ALLGATHERV)
            rcounts[k] = count; /* every source sends count */
        else
            rcounts[k] = s < 0 ? 0 : vcount(count, blk[k]);
        if (g_loose && s >= 0 && (c == ALLTOALLV || c == ALLTOALLW))
            for (int r = 0; r < 3; r++)
                if (vcount(count, t->block[r][k]) > rcounts[k])
                    rcounts[k] = vcount(count, t->block[r][k]);
    }
    for (int k = v ? t->indeg - 1 : 0; v ? k >= 0 : k < t->indeg; k += v ? -1 : 1) {
        rdispls[k] = (int)rtotal;
        rtotal += (size_t)rcounts[k] + (v ? 5 : 0);
    }
    int stride = strided ? 2 : 1;
    int heap = (round + me) % 2 == 0;
    int *sb = heap ? malloc(sizeof(int) * (stotal + 1)) : s_send;
    size_t rints = rtotal * stride + 1;
    int *rb = heap ? malloc(sizeof(int) * rints) : s_recv;
    CHECK(sb && rb, "malloc");
    for (size_t i = 0; i < stotal + 1; i++)
        sb[i] = -7;
    for (int k = 0; k < sblocks; k++)
        for (int i = 0; i < scounts[k]; i++)
            sb[sdispls[k] + i] = value(me, k, i);
    for (size_t i = 0; i < rints; i++)
        rb[i] = -3;
    uint64_t shash = hash_bytes(0, sb, sizeof(int) * (stotal + 1));
    MPI_Datatype rt = MPI_INT;
    if (strided) {
        MPI_Datatype vec;
        MPI_OK(MPI_Type_vector(1, 1, 2, MPI_INT, &vec));
        MPI_OK(MPI_Type_create_resized(vec, 0, 2 * sizeof(int), &rt));
        MPI_OK(MPI_Type_commit(&rt));
        MPI_Type_free(&vec);
    }
    /* Displacements of the strided type are in its extent (2 ints). */
    switch (c) {
    case ALLGATHER:
        MPI_OK(MPI_Neighbor_allgather(sb, count, MPI_INT, rb, count, rt, t->comm));
        break;
    case ALLGATHERV:
        MPI_OK(MPI_Neighbor_allgatherv(sb + sdispls[0], count, MPI_INT, rb,
                                       rcounts, rdispls, rt, t->comm));
        break;
    case ALLTOALL:
        MPI_OK(MPI_Neighbor_alltoall(sb, count, MPI_INT, rb, count, rt, t->comm));
        break;
    case ALLTOALLV:
        MPI_OK(MPI_Neighbor_alltoallv(sb, scounts, sdispls, MPI_INT, rb, rcounts,
                                      rdispls, rt, t->comm));
        break;
    case ALLTOALLW: {
        MPI_Aint sd[MAXNB], rd[MAXNB];
        MPI_Datatype st[MAXNB], rts[MAXNB];
        for (int k = 0; k < sblocks; k++) {
            sd[k] = (MPI_Aint)sdispls[k] * sizeof(int);
            st[k] = MPI_INT;
        }
        /* Odd receive blocks through a derived type of the same
         * signature (a type per block). */
        MPI_Datatype one;
        MPI_OK(MPI_Type_contiguous(1, rt, &one));
        MPI_OK(MPI_Type_commit(&one));
        for (int k = 0; k < t->indeg; k++) {
            rd[k] = (MPI_Aint)rdispls[k] * stride * sizeof(int);
            rts[k] = k % 2 ? one : rt;
        }
        MPI_OK(MPI_Neighbor_alltoallw(sb, scounts, sd, st, rb, rcounts, rd, rts,
                                      t->comm));
        MPI_Type_free(&one);
        break;
    }
    default:
        break;
    }
    /* Check every block against what its source must have sent. */
    int bad = 0;
    for (int k = 0; k < t->indeg && !bad; k++) {
        int s = t->src[k];
        int base = (c == ALLGATHER || c == ALLTOALL) ? k * count : rdispls[k];
        for (int i = 0; i < rcounts[k] && !bad; i++) {
            int want = s < 0 ? -3
                       : (c == ALLGATHER || c == ALLGATHERV)
                           ? value(s, 0, i)
                           : value(s, blk[k], i);
            int got = rb[(size_t)(base + i) * stride];
            if (got != want && g_loose && s >= 0 && c != ALLGATHER && c != ALLGATHERV)
                for (int r = 0; r < 3; r++)
                    if (got == value(s, t->block[r][k], i))
                        want = got;
            if (got != want) {
                CHECK(0, "%s %s count %d: block %d (from %d) element %d is %d, want %d",
                      t->name, call_name[c], count, k, s, i,
                      rb[(size_t)(base + i) * stride], want);
                bad = 1;
            }
        }
    }
    CHECK(hash_bytes(0, sb, sizeof(int) * (stotal + 1)) == shash,
          "%s %s count %d: send buffer changed", t->name, call_name[c], count);
    out("%s %s count %d%s: %016llx", t->name, call_name[c], count,
        strided ? " strided" : "",
        (unsigned long long)hash_bytes(0, rb, sizeof(int) * rints));
    if (strided)
        MPI_Type_free(&rt);
    if (heap) {
        free(sb);
        free(rb);
    }
}

static void on(MPI_Comm base, const char *what, int size)
{
    struct topo t[8];
    section(what);
    int nt = make_topos(base, t);
    int counts[] = {0, 1, 3, 1000, BIG};
    int ncounts = size > 2 ? 4 : 5;
    int round = 0;
    for (int i = 0; i < nt; i++) {
        for (int c = 0; c < NCALLS; c++)
            for (int j = 0; j < ncounts; j++)
                run(&t[i], (enum call)c, counts[j], round++, 0);
        run(&t[i], ALLTOALL, 100, round++, 1);
        run(&t[i], ALLGATHERV, 7, round++, 1);
        run(&t[i], ALLTOALLW, 50, round++, 1);
    }
    /* Twice on one communicator, back to back (steps reuse cells). */
    for (int j = 0; j < 6; j++)
        run(&t[0], ALLTOALLV, 3 + j, round++, 0);
    for (int i = 0; i < nt; i++)
        MPI_OK(MPI_Comm_free(&t[i].comm));
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    detect_lib();
    on(MPI_COMM_WORLD, "world", size);
    MPI_Comm node;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, coll_node_of(rank), rank, &node));
    on(node, "node", size);
    MPI_OK(MPI_Comm_free(&node));
    return coll_finish("neighbor", rank, size);
}

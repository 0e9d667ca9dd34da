/*
 * comm_distgraph.c - MPI_Dist_graph_create on communicators whose
 * nonblocking-collective tag counters stand at every point around
 * Open MPI's window (src/comm/quirks.rs).
 *
 * Why: Open MPI up to 4.1.8 and 5.0.10 exchanges a distributed graph's
 * edges on the parent communicator with internal tags -50 and -51, which
 * its nonblocking collectives also take (the parent's 24th and 25th). When
 * the all-reduce by which the call agrees on the new communicator's id
 * gets one of them, a rank still receiving edges can take it for an
 * edge, and the job hangs in ompi_comm_nextcid (open-mpi/ompi#13918).
 * Stock Open MPI hangs on this program in most runs (4 ranks); heapmpi
 * moves every parent's counter past the window before its first
 * MPI_Dist_graph_create, so under heapmpi it must never hang. On MPICH it
 * is a plain conformance program.
 *
 * What it does, ROUNDS times (argv[1], default 8) for each PRE in 0..11:
 * duplicates MPI_COMM_WORLD (a parent with a fresh counter), moves the
 * parent's counter by duplicating it PRE times (each duplicate's id
 * agreement makes nonblocking all-reduces on the parent, inside the real
 * MPI under heapmpi as stock: heapmpi serves the program's own
 * nonblocking collectives itself, so those would not move it), then twice
 * (reorder 0 and 1) MPI_Dist_graph_create with rank 0 giving the whole
 * complete graph, edge (s, d) of weight (s+2)*(d+1); each new
 * communicator's neighbours and weights are checked (as sets: their order
 * is the library's) and it is freed.
 *
 * Output (stdout): "graphs per rank: N" and "rank N: distgraph ok".
 * Exit status 0 on success, 1 on a failed check; the watchdog ends a hung
 * run after 60 s.
 */
#define _GNU_SOURCE
#define P2P_WATCHDOG_SECONDS 60
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll_util.h"

#define MAXR 64

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* The neighbours of `g` are every rank, with the weights of the complete
 * graph (source s to destination d: (s+2)*(d+1)), in terms of g's ranks. */
static void check_graph(MPI_Comm g, int pre, int reorder)
{
    int me, n, indeg = -1, outdeg = -1, weighted = -1;
    MPI_Comm_rank(g, &me);
    MPI_Comm_size(g, &n);
    MPI_OK(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(indeg == n && outdeg == n && weighted,
          "pre=%d reorder=%d: degrees in=%d out=%d weighted=%d, size %d", pre,
          reorder, indeg, outdeg, weighted, n);
    if (indeg != n || outdeg != n)
        return;
    int src[MAXR], sw[MAXR], dst[MAXR], dw[MAXR];
    MPI_OK(MPI_Dist_graph_neighbors(g, n, src, sw, n, dst, dw));
    /* Encode (rank, weight) pairs as one int to compare them as sets. */
    int in[MAXR], out_[MAXR];
    for (int i = 0; i < n; i++) {
        in[i] = src[i] * 10000 + sw[i];
        out_[i] = dst[i] * 10000 + dw[i];
    }
    qsort(in, n, sizeof in[0], cmp_int);
    qsort(out_, n, sizeof out_[0], cmp_int);
    for (int r = 0; r < n; r++) {
        CHECK(in[r] == r * 10000 + (r + 2) * (me + 1),
              "pre=%d reorder=%d: in-edge %d is %d", pre, reorder, r, in[r]);
        CHECK(out_[r] == r * 10000 + (me + 2) * (r + 1),
              "pre=%d reorder=%d: out-edge %d is %d", pre, reorder, r, out_[r]);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    if (size > 8) {
        fprintf(stderr, "at most 8 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    section("graphs");
    int src[MAXR], w[MAXR], deg[MAXR], dst[MAXR], p = 0;
    for (int s = 0; s < size; s++)
        for (int d = 0; d < size; d++) {
            src[p] = s;
            deg[p] = 1;
            dst[p] = d;
            w[p++] = (s + 2) * (d + 1);
        }
    int rounds = argc > 1 ? atoi(argv[1]) : 8, graphs = 0;
    for (int round = 0; round < rounds; round++)
        for (int pre = 0; pre <= 11; pre++) {
            MPI_Comm parent;
            MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
            for (int b = 0; b < pre; b++) {
                MPI_Comm d;
                MPI_OK(MPI_Comm_dup(parent, &d));
                MPI_OK(MPI_Comm_free(&d));
            }
            for (int reorder = 0; reorder <= 1; reorder++) {
                MPI_Comm g;
                MPI_OK(MPI_Dist_graph_create(parent, rank == 0 ? p : 0, src, deg,
                                             dst, w, MPI_INFO_NULL, reorder, &g));
                check_graph(g, pre, reorder);
                MPI_OK(MPI_Comm_free(&g));
                graphs++;
            }
            MPI_OK(MPI_Comm_free(&parent));
        }
    out("graphs per rank: %d", graphs);
    return coll_finish("distgraph", rank, size);
}

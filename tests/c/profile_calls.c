/*
 * profile_calls.c - a known set of MPI calls, for HEAPMPI_PROFILE.
 *
 * Why: the profile must count exactly what a program does (calls and
 * bytes per routine) and say how each call was served. tests/profile.rs
 * runs this program with HEAPMPI_PROFILE=<file> and compares the CSV with
 * the counts below (an even number of ranks, paired r and r ^ 1):
 *  - even ranks: 10 x MPI_Send of 100 doubles to the odd peer, and one
 *    MPI_Send of 5 ints to MPI_PROC_NULL (left to the real MPI: "args");
 *    odd ranks: 10 x MPI_Recv of 100 doubles;
 *  - every rank: 3 x (MPI_Irecv and MPI_Isend of 7 ints with the peer,
 *    MPI_Waitall of the 2 requests);
 *  - every rank: 5 x MPI_Allreduce of 1000 doubles, 4 x MPI_Bcast of 10
 *    ints, 2 x MPI_Barrier;
 *  - at 4 ranks or more: rank 0 sends 3 ints to rank 2 (MPI_Send,
 *    MPI_Recv), in another pretend node with HEAPMPI_TEST_NODE_SIZE=2;
 *  - every rank: MPI_Win_allocate of 64 bytes, MPI_Win_fence, 3 x MPI_Put
 *    of 2 doubles into the peer, MPI_Win_fence, MPI_Win_free;
 *  - every rank, n ranks: 2 x MPI_Alltoallv sending i + 1 ints to rank i
 *    (2n(n+1) bytes each), one in place receiving 2 doubles from each
 *    (16n bytes), MPI_Ialltoallv as the first (2n(n+1) bytes), one
 *    MPI_Alltoallw of one int to even ranks and one double to odd ones
 *    (4 ceil(n/2) + 8 floor(n/2) bytes);
 *  - every rank, on a periodic 1-D Cartesian communicator of all ranks:
 *    MPI_Neighbor_alltoall of 2 ints (8 bytes), MPI_Neighbor_alltoallv of 1
 *    and 3 doubles to the left and right neighbours (32 bytes).
 * It prints nothing; it exits non-zero if the data is wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC 12 flags
 * in MPI_Waitall(..., MPI_STATUSES_IGNORE). */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    double a[1000], b[1000];
    for (int i = 0; i < 1000; i++)
        a[i] = rank + i;
    for (int i = 0; i < 10; i++) {
        if (rank % 2 == 0) {
            MPI_Send(a, 100, MPI_DOUBLE, peer, i, MPI_COMM_WORLD);
        } else {
            MPI_Recv(b, 100, MPI_DOUBLE, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad |= b[99] != peer + 99;
        }
    }
    int x[7] = {1, 2, 3, 4, 5, 6, 7}, y[7];
    if (rank % 2 == 0)
        MPI_Send(x, 5, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++) {
        MPI_Request r[2];
        MPI_Irecv(y, 7, MPI_INT, peer, 100 + i, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(x, 7, MPI_INT, peer, 100 + i, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        bad |= y[6] != 7;
    }
    if (size >= 4 && rank == 0)
        MPI_Send(x, 3, MPI_INT, 2, 77, MPI_COMM_WORLD);
    if (size >= 4 && rank == 2) {
        MPI_Recv(y, 3, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad |= y[2] != 3;
    }
    for (int i = 0; i < 5; i++)
        MPI_Allreduce(a, b, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int z[10] = {0};
    for (int i = 0; i < 4; i++)
        MPI_Bcast(z, 10, MPI_INT, i % size, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double *w;
    MPI_Win win;
    MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 3; i++)
        MPI_Put(a, 2, MPI_DOUBLE, peer, 2 * i, 2, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    bad |= w[5] != peer + 1;
    MPI_Win_free(&win);

    /* all-to-all v and w: bytes are the sums of this rank's send counts */
    int sc[64], sd[64], rc[64], rd[64], ia[64 * 64], ib[64 * 64];
    for (int i = 0; i < size; i++) {
        sc[i] = i + 1;
        sd[i] = 64 * i;
        rc[i] = rank + 1;
        rd[i] = 64 * i;
        for (int j = 0; j < 64; j++)
            ia[64 * i + j] = 1000 * rank + i;
    }
    for (int k = 0; k < 2; k++) {
        MPI_Alltoallv(ia, sc, sd, MPI_INT, ib, rc, rd, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++)
            bad |= ib[64 * i + rank] != 1000 * i + rank;
    }
    MPI_Request q;
    MPI_Ialltoallv(ia, sc, sd, MPI_INT, ib, rc, rd, MPI_INT, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    bad |= ib[64 * (size - 1) + rank] != 1000 * (size - 1) + rank;
    double da[128];
    int two[64], d2[64];
    for (int i = 0; i < size; i++) {
        two[i] = 2;
        d2[i] = 2 * i;
        da[2 * i] = da[2 * i + 1] = 10 * rank + i;
    }
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, da, two, d2, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        bad |= da[2 * i + 1] != 10 * i + rank;
    int wc[64], wd[64], wrd[64];
    MPI_Datatype wt[64];
    char wa[64 * 8], wb[64 * 8];
    for (int i = 0; i < size; i++) {
        wc[i] = 1;
        wd[i] = 8 * i;
        wrd[i] = 8 * i;
        wt[i] = i % 2 ? MPI_DOUBLE : MPI_INT;
    }
    memset(wa, rank + 1, sizeof wa);
    MPI_Datatype rt[64];
    int rcw[64];
    for (int i = 0; i < size; i++) {
        rt[i] = rank % 2 ? MPI_DOUBLE : MPI_INT;
        rcw[i] = 1;
    }
    MPI_Alltoallw(wa, wc, wd, wt, wb, rcw, wrd, rt, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        bad |= wb[8 * i] != i + 1;

    /* neighbourhood: a ring */
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int na[4] = {rank, rank, rank, rank}, nb[4];
    MPI_Neighbor_alltoall(na, 2, MPI_INT, nb, 2, MPI_INT, ring);
    bad |= nb[0] != (rank + size - 1) % size || nb[2] != (rank + 1) % size;
    double nd[4] = {rank, rank, rank, rank}, ne[8];
    int nsc[2] = {1, 3}, nsd[2] = {0, 1}, nrc[2] = {3, 1}, nrd[2] = {0, 4};
    MPI_Neighbor_alltoallv(nd, nsc, nsd, MPI_DOUBLE, ne, nrc, nrd, MPI_DOUBLE, ring);
    bad |= ne[0] != (rank + size - 1) % size || ne[4] != (rank + 1) % size;
    MPI_Comm_free(&ring);
    if (bad)
        fprintf(stderr, "rank %d: FAIL: wrong data\n", rank);
    MPI_Finalize();
    return bad;
}

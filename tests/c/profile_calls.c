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
 *    of 2 doubles into the peer, MPI_Win_fence, MPI_Win_free.
 * It prints nothing; it exits non-zero if the data is wrong.
 */
#include <mpi.h>
#include <stdio.h>

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
    if (bad)
        fprintf(stderr, "rank %d: FAIL: wrong data\n", rank);
    MPI_Finalize();
    return bad;
}

/* The program of tests/stack.rs (PMPI tool stacking): a fixed number of
 * each of the calls the tool fixtures watch (MPI_Send, Recv, Isend, Irecv,
 * Wait, Allreduce, Bcast) between ranks in a ring, with small and large
 * messages, checked; prints one line per rank ("rank R: ok <sum>"). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int sizes[3] = {1, 1000, 100000};
    long sum = 0;
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        int n = sizes[k];
        int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++) out[i] = rank * 7 + i + k;
        if (size > 1) {
            /* blocking, ordered so that it cannot deadlock */
            if (rank % 2 == 0) {
                MPI_Send(out, n, MPI_INT, right, k, MPI_COMM_WORLD);
                MPI_Recv(in, n, MPI_INT, left, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(in, n, MPI_INT, left, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(out, n, MPI_INT, right, k, MPI_COMM_WORLD);
            }
            for (int i = 0; i < n; i++) ok &= in[i] == left * 7 + i + k;
            MPI_Request r[2];
            MPI_Irecv(in, n, MPI_INT, left, 10 + k, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(out, n, MPI_INT, right, 10 + k, MPI_COMM_WORLD, &r[1]);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
            MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++) ok &= in[i] == left * 7 + i + k;
        }
        long part = in[n - 1], tot;
        MPI_Allreduce(&part, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        sum += tot;
        MPI_Bcast(out, n, MPI_INT, k % size, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) ok &= out[i] == (k % size) * 7 + i + k;
        free(out);
        free(in);
    }
    printf("rank %d: %s %ld\n", rank, ok ? "ok" : "WRONG", sum);
    MPI_Finalize();
    return 0;
}

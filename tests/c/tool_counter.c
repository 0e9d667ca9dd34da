/* A minimal mpiP-style profiler, a test fixture for tests/stack.rs (PMPI
 * tool stacking): a shared library that defines nine MPI routines, counts
 * each call and forwards it through the profiling interface (PMPI_*). In
 * MPI_Finalize it sums the counts over the job with PMPI_Reduce (a
 * collective made inside the tool, as profilers do) and rank 0 prints one
 * line per routine on stdout:
 *     tool_counter: MPI_Send 6
 * Build: mpicc -shared -fPIC -o libtool_counter.so tool_counter.c */
#include <mpi.h>
#include <stdio.h>

enum { INIT, SEND, RECV, ISEND, IRECV, WAIT, ALLREDUCE, BCAST, FINALIZE, N };
static const char *names[N] = {"MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv",
                               "MPI_Wait", "MPI_Allreduce", "MPI_Bcast", "MPI_Finalize"};
static long long counts[N];

int MPI_Init(int *argc, char ***argv) {
    counts[INIT]++;
    return PMPI_Init(argc, argv);
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    counts[SEND]++;
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *st) {
    counts[RECV]++;
    return PMPI_Recv(buf, count, dt, src, tag, comm, st);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *req) {
    counts[ISEND]++;
    return PMPI_Isend(buf, count, dt, dest, tag, comm, req);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Request *req) {
    counts[IRECV]++;
    return PMPI_Irecv(buf, count, dt, src, tag, comm, req);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st) {
    counts[WAIT]++;
    return PMPI_Wait(req, st);
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    counts[ALLREDUCE]++;
    return PMPI_Allreduce(s, r, count, dt, op, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    counts[BCAST]++;
    return PMPI_Bcast(buf, count, dt, root, comm);
}

int MPI_Finalize(void) {
    counts[FINALIZE]++;
    long long total[N];
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(counts, total, N, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < N; i++) printf("tool_counter: %s %lld\n", names[i], total[i]);
        fflush(stdout);
    }
    return PMPI_Finalize();
}

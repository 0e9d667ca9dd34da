/* A Darshan-style tool, a test fixture for tests/stack.rs (PMPI tool
 * stacking): it defines both MPI_X and PMPI_X for the routines it watches
 * and reaches the next layer with dlsym(RTLD_NEXT, "PMPI_X"), as Darshan
 * does. It counts calls and bytes sent; in MPI_Finalize it sums them over
 * the job with the next PMPI_Allreduce and rank 0 prints them on stdout:
 *     tool_forward: sends 6 bytes 1234
 * Build: mpicc -shared -fPIC -o libtool_forward.so tool_forward.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long long sends, recvs, colls, bytes;

/* The next definition of `name` after this library, or exit. */
static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "tool_forward: no next %s\n", name);
        exit(3);
    }
    return f;
}

#define NEXT(name, type) static type real; if (!real) real = (type)next(#name)

static long long size_of(int count, MPI_Datatype dt) {
    int sz;
    PMPI_Type_size(dt, &sz);
    return (long long)count * sz;
}

typedef int (*send_t)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
static int do_send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    NEXT(PMPI_Send, send_t);
    sends++;
    bytes += size_of(count, dt);
    return real(buf, count, dt, dest, tag, comm);
}
int MPI_Send(const void *b, int c, MPI_Datatype d, int t, int g, MPI_Comm m) { return do_send(b, c, d, t, g, m); }
int PMPI_Send(const void *b, int c, MPI_Datatype d, int t, int g, MPI_Comm m) { return do_send(b, c, d, t, g, m); }

typedef int (*isend_t)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
static int do_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *r) {
    NEXT(PMPI_Isend, isend_t);
    sends++;
    bytes += size_of(count, dt);
    return real(buf, count, dt, dest, tag, comm, r);
}
int MPI_Isend(const void *b, int c, MPI_Datatype d, int t, int g, MPI_Comm m, MPI_Request *r) { return do_isend(b, c, d, t, g, m, r); }
int PMPI_Isend(const void *b, int c, MPI_Datatype d, int t, int g, MPI_Comm m, MPI_Request *r) { return do_isend(b, c, d, t, g, m, r); }

typedef int (*recv_t)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
static int do_recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                   MPI_Status *st) {
    NEXT(PMPI_Recv, recv_t);
    recvs++;
    return real(buf, count, dt, src, tag, comm, st);
}
int MPI_Recv(void *b, int c, MPI_Datatype d, int s, int g, MPI_Comm m, MPI_Status *st) { return do_recv(b, c, d, s, g, m, st); }
int PMPI_Recv(void *b, int c, MPI_Datatype d, int s, int g, MPI_Comm m, MPI_Status *st) { return do_recv(b, c, d, s, g, m, st); }

typedef int (*bcast_t)(void *, int, MPI_Datatype, int, MPI_Comm);
static int do_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    NEXT(PMPI_Bcast, bcast_t);
    colls++;
    return real(buf, count, dt, root, comm);
}
int MPI_Bcast(void *b, int c, MPI_Datatype d, int r, MPI_Comm m) { return do_bcast(b, c, d, r, m); }
int PMPI_Bcast(void *b, int c, MPI_Datatype d, int r, MPI_Comm m) { return do_bcast(b, c, d, r, m); }

typedef int (*allreduce_t)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
static int do_allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    NEXT(PMPI_Allreduce, allreduce_t);
    colls++;
    return real(s, r, count, dt, op, comm);
}
int MPI_Allreduce(const void *s, void *r, int c, MPI_Datatype d, MPI_Op o, MPI_Comm m) { return do_allreduce(s, r, c, d, o, m); }
int PMPI_Allreduce(const void *s, void *r, int c, MPI_Datatype d, MPI_Op o, MPI_Comm m) { return do_allreduce(s, r, c, d, o, m); }

typedef int (*finalize_t)(void);
static int do_finalize(void) {
    NEXT(PMPI_Finalize, finalize_t);
    allreduce_t allreduce = (allreduce_t)next("PMPI_Allreduce");
    long long mine[4] = {sends, recvs, colls, bytes}, all[4];
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    allreduce(mine, all, 4, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("tool_forward: sends %lld recvs %lld collectives %lld bytes %lld\n", all[0], all[1],
               all[2], all[3]);
        fflush(stdout);
    }
    return real();
}
int MPI_Finalize(void) { return do_finalize(); }
int PMPI_Finalize(void) { return do_finalize(); }

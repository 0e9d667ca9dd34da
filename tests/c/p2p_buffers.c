/*
 * p2p_buffers.c - MPI-4.1's buffers for buffered sends attached to a
 * communicator or a session, and MPI_BUFFER_AUTOMATIC, with MPI_Bsend
 * between the two ranks of each pair.
 *
 * Why: heapmpi runs a buffered send to a local peer itself (the message
 * goes to the shared heap at once) and refuses one the real MPI would
 * refuse for lack of room. It knew only the process's buffer
 * (MPI_Buffer_attach): a program whose only buffer was its
 * communicator's got MPI_ERR_BUFFER from heapmpi, where stock MPICH 5
 * sends.
 *
 * Sections (even ranks send to their odd partner, which receives and
 * checks every value):
 *  A. a buffer attached to a duplicate of MPI_COMM_WORLD, none to the
 *     process: 5 sends of 1000 ints, then MPI_Comm_flush_buffer; the
 *     detach returns the buffer and its size.
 *  B. a buffer of MPI_BSEND_OVERHEAD + 100 bytes (the least an attach
 *     takes, plus a little) attached to the duplicate and a large one to
 *     the process: a send of 1000 ints on the duplicate must fail with
 *     MPI_ERR_BUFFER (MPI_ERRORS_RETURN), its own buffer being the one it
 *     uses; on MPI_COMM_WORLD it goes.
 *  C. MPI_BUFFER_AUTOMATIC attached to the duplicate: a send of 40000
 *     ints.
 *  D. MPI_BUFFER_AUTOMATIC attached to the process: a send of 40000 ints
 *     on MPI_COMM_WORLD.
 *  E. a session (MPI_Session_init, the group of "mpi://WORLD",
 *     MPI_Comm_create_from_group) with a buffer attached to the session:
 *     a send of 1000 ints on the session's communicator.
 *
 * Needs MPI-4.1 (MPICH 5, Intel MPI 2021.1x) and an even number of ranks.
 * Output (stdout, rank 0, rank order): per-rank results, then "rank N:
 * buffers ok". Exits non-zero when a check fails.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int rank, size;

/* Sends (even rank) or receives and checks (odd rank) `k` messages of `n`
 * ints on `comm` with tag base `tag`; the sender's first error class, or
 * 0. */
static int exchange(MPI_Comm comm, int n, int k, int tag)
{
    const int peer = rank ^ 1;
    int *x = malloc((size_t)n * sizeof *x), cls = 0;
    for (int m = 0; m < k; m++) {
        if (rank % 2 == 0) {
            for (int i = 0; i < n; i++)
                x[i] = i * 3 + m + tag;
            int rc = MPI_Bsend(x, n, MPI_INT, peer, tag + m, comm);
            if (rc != MPI_SUCCESS && cls == 0)
                MPI_Error_class(rc, &cls);
            /* Tell the receiver whether this one went. */
            int went = rc == MPI_SUCCESS;
            MPI_Send(&went, 1, MPI_INT, peer, 1000 + tag + m, comm);
        } else {
            int went = 0;
            MPI_Recv(&went, 1, MPI_INT, peer, 1000 + tag + m, comm, MPI_STATUS_IGNORE);
            if (!went)
                continue;
            memset(x, 0xff, (size_t)n * sizeof *x);
            MPI_Recv(x, n, MPI_INT, peer, tag + m, comm, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++)
                EXPECT(x[i] == i * 3 + m + tag, "tag %d: element %d is %d", tag + m, i, x[i]);
        }
    }
    free(x);
    return cls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);
    if (size % 2) {
        if (rank == 0)
            fprintf(stderr, "p2p_buffers: needs an even number of ranks\n");
        MPI_Finalize();
        return 1;
    }
    char line[LINE];
    int pos = snprintf(line, sizeof line, "rank %d:", rank);
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int big = 5 * (4000 + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)big);
    void *back;
    int bsize = -1;

    /* A */
    EXPECT(MPI_Comm_attach_buffer(d, buf, big) == MPI_SUCCESS, "A: attach");
    int a = exchange(d, 1000, 5, 10);
    EXPECT(MPI_Comm_flush_buffer(d) == MPI_SUCCESS, "A: flush");
    EXPECT(MPI_Comm_detach_buffer(d, &back, &bsize) == MPI_SUCCESS, "A: detach");
    EXPECT(back == buf && bsize == big, "A: detach gave %p %d", back, bsize);
    pos += snprintf(line + pos, sizeof line - (size_t)pos, " A=%d", a);

    /* B */
    char *small = malloc(MPI_BSEND_OVERHEAD + 100);
    char *pbuf = malloc((size_t)big);
    MPI_Buffer_attach(pbuf, big);
    EXPECT(MPI_Comm_attach_buffer(d, small, MPI_BSEND_OVERHEAD + 100) == MPI_SUCCESS, "B: attach");
    int b1 = exchange(d, 1000, 1, 20);
    int b2 = exchange(MPI_COMM_WORLD, 1000, 1, 30);
    MPI_Comm_detach_buffer(d, &back, &bsize);
    MPI_Buffer_detach(&back, &bsize);
    pos += snprintf(line + pos, sizeof line - (size_t)pos, " B=%d/%d", b1, b2);
    if (rank % 2 == 0)
        EXPECT(b1 == MPI_ERR_BUFFER && b2 == 0, "B: classes %d %d", b1, b2);

    /* C */
    MPI_Comm_attach_buffer(d, MPI_BUFFER_AUTOMATIC, 0);
    int c = exchange(d, 40000, 1, 40);
    MPI_Comm_detach_buffer(d, &back, &bsize);
    pos += snprintf(line + pos, sizeof line - (size_t)pos, " C=%d", c);

    /* D */
    MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);
    int dd = exchange(MPI_COMM_WORLD, 40000, 1, 50);
    MPI_Buffer_detach(&back, &bsize);
    pos += snprintf(line + pos, sizeof line - (size_t)pos, " D=%d", dd);

    /* E */
    MPI_Session s;
    MPI_Group g;
    MPI_Comm sc;
    EXPECT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "E: session");
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    MPI_Comm_create_from_group(g, "heapmpi.p2p_buffers", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc);
    EXPECT(MPI_Session_attach_buffer(s, buf, big) == MPI_SUCCESS, "E: attach");
    int e = exchange(sc, 1000, 1, 60);
    MPI_Session_detach_buffer(s, &back, &bsize);
    EXPECT(back == buf && bsize == big, "E: detach gave %p %d", back, bsize);
    MPI_Comm_free(&sc);
    MPI_Group_free(&g);
    MPI_Session_finalize(&s);
    pos += snprintf(line + pos, sizeof line - (size_t)pos, " E=%d", e);

    /* Every rank sends something through heapmpi (the tests require each
     * rank's point-to-point counter to move). */
    int x = -1, me = rank;
    MPI_Sendrecv(&me, 1, MPI_INT, rank ^ 1, 11, &x, 1, MPI_INT, rank ^ 1, 11, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    EXPECT(x == (rank ^ 1), "Sendrecv: %d", x);
    MPI_Comm_free(&d);
    free(buf);
    free(pbuf);
    free(small);
    print_ordered(line, rank, size);
    print_result("buffers", rank, size);
    int bad = job_failures();
    MPI_Finalize();
    return bad != 0;
}

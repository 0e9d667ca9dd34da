/*
 * p2p_getstatus.c - MPI-4.1's nondestructive array tests,
 * MPI_Request_get_status_all, _any and _some, over arrays mixing requests
 * heapmpi serves (receives from the other rank, an inactive persistent
 * send) with the real MPI's (a generalized request) and MPI_REQUEST_NULL.
 *
 * Why: handed heapmpi's requests, the real MPI's own calls reject them
 * (mpi4py's suite met that under MPICH 5: an error, then a hang on the
 * messages the failed test left behind). None of the calls may free or
 * deactivate a request: the same request is looked at again, then
 * completed by MPI_Waitall.
 *
 * The receive's handle also goes through MPI-5.0's MPI_Request_toint and
 * MPI_Request_fromint first, which heapmpi's handles must survive.
 *
 * Needs MPI-4.1 (MPICH 5, Intel MPI 2021.1x) and an even number of ranks;
 * even ranks receive from their odd partner.
 *
 * Output (stdout, rank 0, rank order): per-rank results (flags, indices,
 * counts, sources and tags), then "rank N: getstatus ok". Exits non-zero
 * when a check fails.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "testutil.h"

static int rank, size;

static int query(void *x, MPI_Status *st)
{
    (void)x;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int gfree(void *x)
{
    (void)x;
    return MPI_SUCCESS;
}
static int gcancel(void *x, int done)
{
    (void)x, (void)done;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);
    if (size % 2) {
        if (rank == 0)
            fprintf(stderr, "p2p_getstatus: needs an even number of ranks\n");
        MPI_Finalize();
        return 1;
    }
    const int peer = rank ^ 1, recv = rank % 2 == 0;
    char line[LINE];
    int pos = snprintf(line, sizeof line, "rank %d:", rank);
    int rb[2] = {-1, -1}, sb = rank, pb = 7;
    MPI_Request q[4];
    /* 0: a receive (or send) with the partner; 1: the real MPI's
     * generalized request; 2: null; 3: an inactive persistent send. */
    if (recv)
        MPI_Irecv(&rb[0], 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &q[0]);
    else
        q[0] = MPI_REQUEST_NULL;
    MPI_Grequest_start(query, gfree, gcancel, NULL, &q[1]);
    q[2] = MPI_REQUEST_NULL;
    MPI_Send_init(&pb, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &q[3]);

    /* MPI-5.0's handle-to-integer conversion and back: the same request. */
    MPI_Request back = MPI_Request_fromint(MPI_Request_toint(q[0]));
    EXPECT(back == q[0], "MPI_Request_fromint(MPI_Request_toint(q)) is another handle");
    q[0] = back;

    int flag = -1, index = -2, out = -2, idx[4];
    MPI_Status st[4];
    MPI_Request_get_status_all(4, q, &flag, MPI_STATUSES_IGNORE);
    EXPECT(flag == 0, "get_status_all before anything: flag %d", flag);
    MPI_Request_get_status_any(4, q, &index, &flag, &st[0]);
    EXPECT(flag == 0 && index == MPI_UNDEFINED, "get_status_any before: flag %d index %d", flag, index);
    MPI_Request_get_status_some(4, q, &out, idx, st);
    EXPECT(out == 0, "get_status_some before: outcount %d", out);
    pos += snprintf(line + pos, sizeof line - (size_t)pos, " before: all=%d any=%d some=%d;", flag, index == MPI_UNDEFINED ? -1 : index, out);

    MPI_Barrier(MPI_COMM_WORLD);
    if (!recv)
        MPI_Send(&sb, 1, MPI_INT, peer, 5, MPI_COMM_WORLD);
    if (recv) {
        /* The receive completes: any finds it, again and again. */
        flag = 0;
        while (!flag)
            MPI_Request_get_status_any(4, q, &index, &flag, &st[0]);
        EXPECT(index == 0 && st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 5,
               "get_status_any: index %d source %d tag %d", index, st[0].MPI_SOURCE, st[0].MPI_TAG);
        MPI_Request_get_status_any(4, q, &index, &flag, &st[0]);
        EXPECT(flag && index == 0, "get_status_any again: flag %d index %d", flag, index);
        MPI_Request_get_status_some(4, q, &out, idx, st);
        EXPECT(out == 1 && idx[0] == 0 && st[0].MPI_SOURCE == peer, "get_status_some: %d %d", out, idx[0]);
        MPI_Request_get_status_all(4, q, &flag, st);
        EXPECT(flag == 0, "get_status_all with the generalized request pending: %d", flag);
        pos += snprintf(line + pos, sizeof line - (size_t)pos, " received: any=%d some=%d all=%d;", index, out, flag);
    }
    MPI_Grequest_complete(q[1]);
    MPI_Request_get_status_all(4, q, &flag, st);
    EXPECT(flag == 1, "get_status_all with everything done: %d", flag);
    if (recv)
        EXPECT(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 5, "get_status_all status: %d %d",
               st[0].MPI_SOURCE, st[0].MPI_TAG);
    MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
    EXPECT(rb[0] == (recv ? peer : -1), "received %d", rb[0]);
    pos += snprintf(line + pos, sizeof line - (size_t)pos, " all done: %d, value %d;", flag, rb[0]);

    /* Nothing active: null requests and the inactive persistent send. */
    MPI_Request_get_status_any(4, q, &index, &flag, &st[0]);
    EXPECT(flag == 1 && index == MPI_UNDEFINED, "get_status_any, none active: %d %d", flag, index);
    MPI_Request_get_status_some(4, q, &out, idx, st);
    EXPECT(out == MPI_UNDEFINED, "get_status_some, none active: %d", out);
    MPI_Request_get_status_all(4, q, &flag, MPI_STATUSES_IGNORE);
    EXPECT(flag == 1, "get_status_all, none active: %d", flag);
    pos += snprintf(line + pos, sizeof line - (size_t)pos, " none active: any=%d some=%d all=%d",
                    index == MPI_UNDEFINED ? -1 : index, out == MPI_UNDEFINED ? -1 : out, flag);
    MPI_Request_free(&q[3]);
    /* Every rank sends something through heapmpi (the tests require each
     * rank's point-to-point counter to move). */
    int x = -1;
    MPI_Sendrecv(&sb, 1, MPI_INT, peer, 11, &x, 1, MPI_INT, peer, 11, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    EXPECT(x == peer, "Sendrecv: %d", x);
    print_ordered(line, rank, size);
    print_result("getstatus", rank, size);
    int bad = job_failures();
    MPI_Finalize();
    return bad != 0;
}

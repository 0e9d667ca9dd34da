/*
 * p2p_handles.c - point-to-point conformance: request and message handles
 * through every conversion and call MPI allows.
 *
 * Why: heapmpi hands out request and message handles of its own. Language
 * bindings convert them (MPI_Request_c2f / f2c: mpi4py, Fortran), programs
 * compare them with MPI_REQUEST_NULL, inspect them without freeing
 * (MPI_Request_get_status), free them while active (MPI_Request_free) and
 * wait for them together with generalized requests. Each must behave as
 * the real MPI's own handles do.
 *
 * Sections (peer: the pair rank s^1, or the rank itself when alone; with
 * pretend nodes, also a rank on the other node):
 *  A. c2f/f2c round trips of Isend, Irecv, Issend, persistent and
 *     matched-probe message handles, the converted handle then used to
 *     complete the operation; MPI_REQUEST_NULL converts to the Fortran
 *     null, before and after completion;
 *  B. MPI_Request_get_status on pending and completed requests, then the
 *     request still completes normally (and is then MPI_REQUEST_NULL);
 *  C. MPI_Request_free of active sends and receives (local, and with
 *     pretend nodes a wildcard receive the real MPI serves and a persistent
 *     receive from the other node): later traffic is matched as MPI says
 *     (the freed receive took the first message);
 *  D. generalized requests mixed with heapmpi requests and real ones in
 *     Waitall, Waitany, Waitsome and Testall.
 *
 * Output (stdout, rank 0, rank order): one line per rank and section, then
 * "rank N: handles ok".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

static int g_me, g_size;

/* ---- generalized requests ---- */

static int gq_query(void *extra, MPI_Status *st)
{
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    ++*(int *)extra;
    return MPI_SUCCESS;
}
static int gq_free(void *extra)
{
    ++*((int *)extra + 1);
    return MPI_SUCCESS;
}
static int gq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* Section A with peer p. Returns checks passed. */
static int conversions(int p)
{
    int good = 0, v[4] = {1, 2, 3, 4}, w[4];
    MPI_Fint fnull = MPI_Request_c2f(MPI_REQUEST_NULL);
    for (int kind = 0; kind < 4; kind++) {
        MPI_Request s, r, s2, r2;
        MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 10 + kind, MPI_COMM_WORLD, &r));
        if (kind == 2) /* ready mode: the peer's receive is posted */
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        switch (kind) {
        case 0: MPI_OK(MPI_Isend(v, 4, MPI_INT, p, 10, MPI_COMM_WORLD, &s)); break;
        case 1: MPI_OK(MPI_Issend(v, 4, MPI_INT, p, 11, MPI_COMM_WORLD, &s)); break;
        case 2: MPI_OK(MPI_Irsend(v, 4, MPI_INT, p, 12, MPI_COMM_WORLD, &s)); break;
        default:
            MPI_OK(MPI_Send_init(v, 4, MPI_INT, p, 13, MPI_COMM_WORLD, &s));
            MPI_OK(MPI_Start(&s));
            break;
        }
        MPI_Fint fs = MPI_Request_c2f(s), fr = MPI_Request_c2f(r);
        s2 = MPI_Request_f2c(fs);
        r2 = MPI_Request_f2c(fr);
        int same = s2 == s && r2 == r && fs != fnull && fr != fnull;
        MPI_OK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&s2, MPI_STATUS_IGNORE));
        int nulls = r2 == MPI_REQUEST_NULL && MPI_Request_c2f(r2) == fnull;
        if (kind == 3) {
            nulls &= s2 != MPI_REQUEST_NULL; /* persistent: stays */
            MPI_OK(MPI_Request_free(&s2));
        } else {
            nulls &= s2 == MPI_REQUEST_NULL;
        }
        CHECK(same && nulls && w[3] == 4, "kind %d: same %d nulls %d", kind, same, nulls);
        good += same && nulls && w[3] == 4;
    }
    /* A matched-probe message handle. */
    MPI_Request s;
    MPI_Message m;
    MPI_OK(MPI_Isend(v, 4, MPI_INT, p, 20, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Mprobe(p, 20, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE));
    MPI_Fint fm = MPI_Message_c2f(m);
    MPI_Message m2 = MPI_Message_f2c(fm);
    int same = m2 == m && fm != MPI_Message_c2f(MPI_MESSAGE_NULL);
    MPI_OK(MPI_Mrecv(w, 4, MPI_INT, &m2, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    same &= m2 == MPI_MESSAGE_NULL;
    CHECK(same, "message handle");
    return good + same;
}

/* Section B with peer p. */
static int get_status(int p)
{
    int v = 5, w = 0, flag = -1, good = 0;
    MPI_Request r, s;
    MPI_Status st;
    MPI_OK(MPI_Irecv(&w, 1, MPI_INT, p, 30, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    good += flag == 0; /* nothing sent yet */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isend(&v, 1, MPI_INT, p, 30, MPI_COMM_WORLD, &s));
    do
        MPI_OK(MPI_Request_get_status(r, &flag, &st));
    while (!flag);
    good += st.MPI_TAG == 30 && r != MPI_REQUEST_NULL;
    MPI_OK(MPI_Request_get_status(r, &flag, &st)); /* again: still complete */
    good += flag == 1;
    MPI_OK(MPI_Wait(&r, &st));
    good += r == MPI_REQUEST_NULL && w == 5;
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    return good;
}

/* Section C, local: freed sends and receives with peer p. */
static int freed_local(int p)
{
    enum { N = 200 };
    static int big[1 << 16];
    int good = 0;
    for (int i = 0; i < N; i++) {
        MPI_Request s;
        int v = i;
        /* Small and large sends, freed at once (they complete on their own;
         * the buffer is not touched again until the peer has replied). */
        if (i % 2)
            MPI_OK(MPI_Isend(&v, 1, MPI_INT, p, 40, MPI_COMM_WORLD, &s));
        else
            MPI_OK(MPI_Isend(big, 1 << 16, MPI_INT, p, 41, MPI_COMM_WORLD, &s));
        MPI_OK(MPI_Request_free(&s));
        if (i % 2) {
            int w = -1;
            MPI_OK(MPI_Recv(&w, 1, MPI_INT, p, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            good += w == i;
        } else {
            static int rbig[1 << 16];
            MPI_OK(MPI_Recv(rbig, 1 << 16, MPI_INT, p, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            good++;
        }
    }
    /* A receive freed while posted takes the first message; the next
     * receive the second. */
    static int first = -1;
    int second = -1, a = 1, b = 2;
    MPI_Request r;
    MPI_OK(MPI_Irecv(&first, 1, MPI_INT, p, 42, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Request_free(&r));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Send(&a, 1, MPI_INT, p, 42, MPI_COMM_WORLD));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request s2;
    MPI_OK(MPI_Isend(&b, 1, MPI_INT, p, 42, MPI_COMM_WORLD, &s2));
    MPI_OK(MPI_Recv(&second, 1, MPI_INT, p, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&s2, MPI_STATUS_IGNORE));
    CHECK(second == 2, "the freed receive did not take the first message (got %d)", second);
    return good + (second == 2);
}

/* Section C with pretend nodes: ranks 0 and 2 are on different nodes. A
 * wildcard receive on rank 0 (the real MPI may serve it) and a persistent
 * receive from rank 2, both freed while active. */
static void freed_remote(void)
{
    static int w1 = -1, w2 = -1;
    int got = -1;
    if (g_me == 0) {
        MPI_Request r, pr;
        MPI_OK(MPI_Irecv(&w1, 1, MPI_INT, MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Request_free(&r));
        MPI_OK(MPI_Recv_init(&w2, 1, MPI_INT, 2, 51, MPI_COMM_WORLD, &pr));
        MPI_OK(MPI_Start(&pr));
        MPI_OK(MPI_Request_free(&pr));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        /* The second wildcard message goes to this receive, the first to
         * the freed one. */
        MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        out("C remote: next wildcard receive got message %d", got);
    } else if (g_me == 2) {
        int a = 1, b = 2, c = 3;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&a, 1, MPI_INT, 0, 50, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&c, 1, MPI_INT, 0, 51, MPI_COMM_WORLD));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&b, 1, MPI_INT, 0, 50, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/* Section D with peer p (and a remote peer q, or -1). */
static int generalized(int p, int q)
{
    int extra[2] = {0, 0}, v = 7, w[3] = {0, 0, 0}, good = 0;
    for (int call = 0; call < 4; call++) {
        MPI_Request rq[4];
        int n = 0;
        MPI_OK(MPI_Grequest_start(gq_query, gq_free, gq_cancel, extra, &rq[n++]));
        MPI_OK(MPI_Irecv(&w[0], 1, MPI_INT, p, 60 + call, MPI_COMM_WORLD, &rq[n++]));
        MPI_OK(MPI_Isend(&v, 1, MPI_INT, p, 60 + call, MPI_COMM_WORLD, &rq[n++]));
        if (q >= 0)
            MPI_OK(MPI_Irecv(&w[1], 1, MPI_INT, q, 70 + call, MPI_COMM_WORLD, &rq[n++]));
        MPI_Request sq = MPI_REQUEST_NULL;
        if (q >= 0)
            MPI_OK(MPI_Isend(&v, 1, MPI_INT, q, 70 + call, MPI_COMM_WORLD, &sq));
        MPI_OK(MPI_Grequest_complete(rq[0]));
        int left = n, idx, outc, ind[4], flag;
        switch (call) {
        case 0:
            MPI_OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
            left = 0;
            break;
        case 1:
            while (left > 0) {
                MPI_OK(MPI_Waitany(n, rq, &idx, MPI_STATUS_IGNORE));
                left--;
            }
            break;
        case 2:
            while (left > 0) {
                MPI_OK(MPI_Waitsome(n, rq, &outc, ind, MPI_STATUSES_IGNORE));
                left -= outc;
            }
            break;
        default:
            do
                MPI_OK(MPI_Testall(n, rq, &flag, MPI_STATUSES_IGNORE));
            while (!flag);
            left = 0;
            break;
        }
        MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
        int nulls = 1;
        for (int k = 0; k < n; k++)
            nulls &= rq[k] == MPI_REQUEST_NULL;
        good += nulls && w[0] == 7 && (q < 0 || w[1] == 7);
    }
    /* How often query_fn runs is the MPI's business (MPICH polls it);
     * free_fn runs once per request. */
    CHECK(extra[0] >= 4 && extra[1] == 4, "generalized query %d free %d", extra[0], extra[1]);
    return good + (extra[0] >= 4 && extra[1] == 4);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv, &g_me, &g_size);
    int pair = g_me ^ 1;
    int p = pair < g_size ? pair : g_me;
    int pretend = p2p_node_size() == 2 && g_size >= 4;

    section("A conversions");
    out("A: %d of 5 handles round-tripped", conversions(p));
    section("B get_status");
    out("B: %d of 4 checks", get_status(p));
    section("C freed requests");
    out("C local: %d of 201 checks", freed_local(p));
    if (pretend)
        freed_remote();
    section("D generalized requests");
    /* With pretend nodes the remote peer is the rank two away (same
     * parity pairs: 0<->2, 1<->3). */
    int q = pretend && (g_me ^ 2) < g_size ? g_me ^ 2 : -1;
    out("D: %d of 5 checks", generalized(p, q));
    return p2p_finish("handles", g_me, g_size);
}

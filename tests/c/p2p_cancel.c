/*
 * p2p_cancel.c - point-to-point conformance: MPI_Cancel.
 *
 * Why: a posted receive lives in heapmpi's queues (and, for a wildcard
 * receive on a communicator that spans nodes, possibly also in the real
 * MPI). Cancelling it must take it out everywhere: MPI_Wait then returns
 * at once, MPI_Test_cancelled says true, and a message sent afterwards goes
 * to the next matching receive instead of into the cancelled buffer. A
 * receive that already matched cannot be cancelled. Cancelling a send may
 * or may not succeed (both MPIs here never cancel sends), but whatever it
 * says must be true: if cancelled, the message never arrives; if not, it
 * arrives intact. Afterwards ordinary traffic works.
 *
 * Sections:
 *  A. Irecv from the left neighbour, from rank^2 (a remote peer with pretend
 *     nodes), from MPI_ANY_SOURCE and with MPI_ANY_TAG, 8 B and 1 MiB
 *     buffers, nothing sent: Cancel, then Wait (or a Test loop): cancelled,
 *     request freed, buffer untouched; then the same (source, tag) gets a
 *     real message through a new receive;
 *  B. a receive that has matched (Request_get_status said complete) is
 *     cancelled: not cancelled, data intact;
 *  C. a started persistent receive is cancelled, then started again and
 *     receives normally;
 *  D. Isend / Issend (8 B and 1 MiB) cancelled at once: the sender tells the
 *     receiver whether MPI_Test_cancelled said true, and the receiver
 *     checks that the message is absent, or present and intact (the outcome
 *     itself is not printed: MPI leaves it open);
 *  E. no stray message is left, and a ring exchange works.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: cancel ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define MIB (1 << 20)

static int g_left, g_right, g_me, g_size;

static uint64_t seed_of(int src, int dst, int tag)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 36) ^ (uint64_t)tag;
}

/* Cancel a fresh receive that nothing can match; 1 if all is as MPI says. */
static int cancel_pending(int src, int tag, size_t n, int use_test)
{
    unsigned char *b = must(malloc(n), "malloc", n);
    memset(b, 0x5c, n);
    MPI_Request r;
    MPI_OK(MPI_Irecv(b, (int)n, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_Status st;
    if (use_test) {
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Test(&r, &flag, &st));
    } else {
        MPI_OK(MPI_Wait(&r, &st));
    }
    int cancelled = 0;
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    int untouched = 1;
    for (size_t i = 0; i < n; i++)
        untouched &= b[i] == 0x5c;
    CHECK(cancelled, "receive (source %d tag %d, %zu B) not cancelled", src, tag, n);
    CHECK(r == MPI_REQUEST_NULL, "cancelled receive not freed");
    CHECK(untouched, "cancelled receive wrote its buffer");
    free(b);
    return cancelled && r == MPI_REQUEST_NULL && untouched;
}

static void cancel_receives(void)
{
    section("A cancel pending receives");
    int far = g_size >= 4 ? g_me ^ 2 : g_left;
    int srcs[4] = {g_left, far, MPI_ANY_SOURCE, g_left};
    int tags[4] = {100, 101, 102, MPI_ANY_TAG};
    int good = 0, total = 0;
    for (int k = 0; k < 4; k++)
        for (int big = 0; big < 2; big++) {
            good += cancel_pending(srcs[k], tags[k], big ? MIB : 8, (k + big) % 2);
            total++;
        }
    /* The cancelled receives are gone: a message with their (source, tag)
     * goes to a new receive. Everybody sends one to the right (tag 100) and
     * one to rank^2 (tag 101), once every rank is done cancelling (an
     * early message would match the MPI_ANY_TAG receive). */
    MPI_Barrier(MPI_COMM_WORLD);
    int sfar = g_size >= 4 ? g_me ^ 2 : g_right;
    int v[2] = {g_me, g_me + 1000}, got[2] = {-1, -1};
    MPI_Request s[2];
    MPI_OK(MPI_Isend(&v[0], 1, MPI_INT, g_right, 100, MPI_COMM_WORLD, &s[0]));
    MPI_OK(MPI_Isend(&v[1], 1, MPI_INT, sfar, 101, MPI_COMM_WORLD, &s[1]));
    MPI_OK(MPI_Recv(&got[0], 1, MPI_INT, g_left, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Recv(&got[1], 1, MPI_INT, far, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));
    int after = got[0] == g_left && got[1] == far + 1000;
    CHECK(after, "message after the cancels: got %d %d", got[0], got[1]);
    out("A cancelled pending receives: %d of %d right (cancelled, freed, buffer "
        "untouched); later messages %s", good, total, after ? "delivered" : "LOST");
}

static void cancel_matched(void)
{
    section("B cancel a matched receive");
    unsigned char sb[64], rb[64];
    wpattern_fill(sb, 64, seed_of(g_me, g_right, 200));
    MPI_Request r, s;
    MPI_OK(MPI_Irecv(rb, 64, MPI_BYTE, g_left, 200, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Isend(sb, 64, MPI_BYTE, g_right, 200, MPI_COMM_WORLD, &s));
    int flag = 0;
    MPI_Status st;
    while (!flag)
        MPI_OK(MPI_Request_get_status(r, &flag, &st));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    int cancelled = 1;
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    int c = -1;
    MPI_Get_count(&st, MPI_BYTE, &c);
    int ok = !cancelled && st.MPI_SOURCE == g_left && st.MPI_TAG == 200 && c == 64 &&
             wpattern_check(rb, 64, seed_of(g_left, g_me, 200), "matched receive");
    CHECK(!cancelled, "a completed receive was cancelled");
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    out("B cancel after the receive completed: %s", ok ? "not cancelled, data intact"
                                                       : "WRONG");
}

static void cancel_persistent(void)
{
    section("C cancel a persistent receive");
    int rv = -1, sv = g_me;
    MPI_Request r;
    MPI_OK(MPI_Recv_init(&rv, 1, MPI_INT, g_left, 300, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Cancel(&r));
    MPI_Status st;
    MPI_OK(MPI_Wait(&r, &st));
    int c1 = 0;
    MPI_OK(MPI_Test_cancelled(&st, &c1));
    CHECK(c1 && r != MPI_REQUEST_NULL && rv == -1,
          "cancelled persistent receive: cancelled %d value %d", c1, rv);
    /* nobody sends before every rank has cancelled */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Send(&sv, 1, MPI_INT, g_right, 300, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    int c2 = 1;
    MPI_OK(MPI_Test_cancelled(&st, &c2));
    CHECK(!c2 && rv == g_left, "restarted persistent receive: cancelled %d value %d",
          c2, rv);
    MPI_Request_free(&r);
    out("C persistent receive: cancel %s, restart %s", c1 ? "cancelled" : "NOT CANCELLED",
        !c2 && rv == g_left ? "received" : "WRONG");
}

/* The sender cancels at once; then tells the receiver the outcome. */
static void cancel_sends(void)
{
    section("D cancel sends");
    int good = 0, total = 0;
    for (int sync = 0; sync < 2; sync++)
        for (int big = 0; big < 2; big++) {
            size_t n = big ? MIB : 8;
            int tag = 400 + 2 * sync + big;
            unsigned char *sb = must(malloc(n), "malloc", n);
            unsigned char *rb = must(malloc(n), "malloc", n);
            wpattern_fill(sb, n, seed_of(g_me, g_right, (uint64_t)tag));
            memset(rb, 0, n);
            /* The receive for our left neighbour's message is posted first
             * (so an uncancelled send can always complete), then we send,
             * cancel and wait. */
            MPI_Request r, s;
            MPI_OK(MPI_Irecv(rb, (int)n, MPI_BYTE, g_left, tag, MPI_COMM_WORLD, &r));
            if (sync)
                MPI_OK(MPI_Issend(sb, (int)n, MPI_BYTE, g_right, tag, MPI_COMM_WORLD, &s));
            else
                MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, g_right, tag, MPI_COMM_WORLD, &s));
            MPI_OK(MPI_Cancel(&s));
            MPI_Status st;
            MPI_OK(MPI_Wait(&s, &st));
            int mine = 0, theirs = -1;
            MPI_OK(MPI_Test_cancelled(&st, &mine));
            MPI_OK(MPI_Sendrecv(&mine, 1, MPI_INT, g_right, 450, &theirs, 1, MPI_INT,
                                g_left, 450, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            int ok;
            if (theirs) {
                /* cancelled: our receive must never match */
                MPI_OK(MPI_Cancel(&r));
                MPI_OK(MPI_Wait(&r, &st));
                int rc = 0;
                MPI_OK(MPI_Test_cancelled(&st, &rc));
                ok = rc;
                CHECK(rc, "the sender's send was cancelled, yet our receive "
                      "matched (%zu B, %s)", n, sync ? "Issend" : "Isend");
            } else {
                MPI_OK(MPI_Wait(&r, &st));
                ok = wpattern_check(rb, n, seed_of(g_left, g_me, (uint64_t)tag),
                                    "uncancelled send");
            }
            good += ok;
            total++;
            free(sb);
            free(rb);
        }
    out("D cancel Isend/Issend (8 B, 1 MiB): %d of %d outcomes consistent", good,
        total);
}

static void afterwards(void)
{
    section("E afterwards");
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 0;
    MPI_Status st;
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "stray message from %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    /* nobody sends before every rank has looked */
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char *sb = must(malloc(MIB), "malloc", MIB), *rb = must(malloc(MIB), "malloc", MIB);
    wpattern_fill(sb, MIB, seed_of(g_me, g_right, 500));
    MPI_OK(MPI_Sendrecv(sb, MIB, MPI_BYTE, g_right, 500, rb, MIB, MPI_BYTE, g_left,
                        500, MPI_COMM_WORLD, &st));
    int ok = wpattern_check(rb, MIB, seed_of(g_left, g_me, 500), "exchange afterwards");
    out("E afterwards: stray message %s, exchange %s", flag ? "FOUND" : "none",
        ok ? "right" : "WRONG");
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_size = size;
    g_left = (rank - 1 + size) % size;
    g_right = (rank + 1) % size;
    cancel_receives();
    MPI_Barrier(MPI_COMM_WORLD);
    cancel_matched();
    MPI_Barrier(MPI_COMM_WORLD);
    cancel_persistent();
    MPI_Barrier(MPI_COMM_WORLD);
    cancel_sends();
    afterwards();
    return p2p_finish("cancel", rank, size);
}

/*
 * p2p_comms.c - point-to-point conformance: communicators.
 *
 * Why: heapmpi matches on (source, tag, communicator) and translates
 * communicator ranks to node-local peers through a per-communicator cache
 * (an attribute with a delete callback). Ranks in a derived communicator are
 * not world ranks (MPI_Comm_split with reversed keys), messages on a
 * duplicate must never match receives on its parent (and the other way
 * round), a communicator may be freed while its messages are still in
 * flight, and communicators that hold only some ranks, MPI_COMM_SELF and
 * intercommunicators must all work.
 *
 * Sections:
 *  A. Comm_split(color 0, key size-rank): ranks reversed; a ring exchange in
 *     the new numbering, with a specific source and with MPI_ANY_SOURCE;
 *     status MPI_SOURCE is a rank of the new communicator;
 *  B. Comm_split(color rank%2): communicators of some ranks (at 2 ranks: one
 *     rank each, so the ring is a message to oneself);
 *  C. Comm_dup: the same (peer, tag) on the world and on the duplicate; the
 *     receives are posted in the opposite order (and with wildcards) and
 *     each gets its own communicator's message; 8 B and 1 MiB;
 *  D. Comm_create from a group of the even ranks in reversed order; the
 *     others get MPI_COMM_NULL;
 *  E. Comm_free while an Isend and an Irecv on the communicator are
 *     outstanding (legal: they complete normally), 8 B and 1 MiB;
 *  F. an intercommunicator between the lower and upper halves;
 *  G. MPI_COMM_SELF: Isend + Recv, Sendrecv;
 *  H. 16 duplicates at once: sent on in reverse order, received in order.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: comms ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define MIB (1 << 20)

/* A ring exchange in comm: payload {world rank, comm rank, tag}; returns 1
 * if the message from the left neighbour (in comm's numbering) is right. */
static int ring(MPI_Comm comm, int tag, int wildcard, int *from_world)
{
    int r, n, wr;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    int left = (r - 1 + n) % n, right = (r + 1) % n;
    int sb[3] = {wr, r, tag}, rb[3] = {-1, -1, -1};
    MPI_Request req;
    MPI_OK(MPI_Isend(sb, 3, MPI_INT, right, tag, comm, &req));
    MPI_Status st;
    MPI_OK(MPI_Recv(rb, 3, MPI_INT, wildcard ? MPI_ANY_SOURCE : left, tag, comm, &st));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    *from_world = rb[0];
    int ok = st.MPI_SOURCE == left && st.MPI_TAG == tag && rb[1] == left &&
             rb[2] == tag;
    CHECK(ok, "ring on a communicator: status source %d (expected %d), payload "
          "(%d,%d,%d)", st.MPI_SOURCE, left, rb[0], rb[1], rb[2]);
    return ok;
}

static void split_reordered(int rank, int size)
{
    section("A split reordered");
    MPI_Comm c;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c));
    int r;
    MPI_Comm_rank(c, &r);
    CHECK(r == size - 1 - rank, "split rank %d", r);
    int w1 = -1, w2 = -1;
    int ok1 = ring(c, 1, 0, &w1);
    int ok2 = ring(c, 2, 1, &w2);
    CHECK(w1 == (rank + 1) % size && w2 == w1, "left neighbour in the split "
          "communicator is world rank %d/%d", w1, w2);
    out("A split(key=size-rank): rank %d, received from world rank %d (%s), "
        "with ANY_SOURCE from %d (%s)", r, w1, ok1 ? "right" : "WRONG", w2,
        ok2 ? "right" : "WRONG");
    MPI_OK(MPI_Comm_free(&c));
}

static void split_some(int rank, int size)
{
    section("B split some ranks");
    (void)size;
    MPI_Comm c;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c));
    int r, n, w = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    int ok = ring(c, 3, 0, &w);
    out("B split(color=rank%%2): rank %d of %d, received from world rank %d (%s)",
        r, n, w, ok ? "right" : "WRONG");
    MPI_OK(MPI_Comm_free(&c));
}

static void dup_isolation(int rank, int size)
{
    section("C dup");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    static const size_t sizes[2] = {8, MIB};
    int good = 0;
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k];
        unsigned char *sw = must(malloc(n), "malloc", n), *sd = must(malloc(n), "malloc", n);
        unsigned char *rw = must(malloc(n), "malloc", n), *rd = must(malloc(n), "malloc", n);
        wpattern_fill(sw, n, 100 + (uint64_t)rank);
        wpattern_fill(sd, n, 200 + (uint64_t)rank);
        MPI_Request s[2];
        /* world first, then the dup, same peer and tag */
        MPI_OK(MPI_Isend(sw, (int)n, MPI_BYTE, right, 5, MPI_COMM_WORLD, &s[0]));
        MPI_OK(MPI_Isend(sd, (int)n, MPI_BYTE, right, 5, d, &s[1]));
        MPI_Status st;
        /* dup first (wildcards in the second round), then world */
        MPI_OK(MPI_Recv(rd, (int)n, MPI_BYTE, k ? MPI_ANY_SOURCE : left,
                        k ? MPI_ANY_TAG : 5, d, &st));
        int ok = st.MPI_SOURCE == left && st.MPI_TAG == 5;
        ok &= wpattern_check(rd, n, 200 + (uint64_t)left, "message on the dup");
        MPI_OK(MPI_Recv(rw, (int)n, MPI_BYTE, k ? MPI_ANY_SOURCE : left,
                        k ? MPI_ANY_TAG : 5, MPI_COMM_WORLD, &st));
        ok &= st.MPI_SOURCE == left && st.MPI_TAG == 5;
        ok &= wpattern_check(rw, n, 100 + (uint64_t)left, "message on the world");
        MPI_OK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));
        good += ok;
        free(sw);
        free(sd);
        free(rw);
        free(rd);
    }
    /* The other way round: a receive posted on the world first must not
     * take the dup's message that arrives first. */
    int rw = -1, rd = -1, v = rank;
    MPI_Request r[2];
    MPI_OK(MPI_Irecv(&rw, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Irecv(&rd, 1, MPI_INT, left, 6, d, &r[1]));
    MPI_Barrier(MPI_COMM_WORLD);
    int vd = rank + 1000;
    MPI_OK(MPI_Send(&vd, 1, MPI_INT, right, 6, d));
    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 6, MPI_COMM_WORLD));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    int ok3 = rw == left && rd == left + 1000;
    CHECK(ok3, "preposted world/dup receives got %d/%d", rw, rd);
    out("C dup vs world, same peer and tag: %d of 2 sizes right, preposted "
        "receives %s", good, ok3 ? "right" : "WRONG");
    MPI_OK(MPI_Comm_free(&d));
}

static void create_even_reversed(int rank, int size)
{
    section("D Comm_create");
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int ne = (size + 1) / 2, ranks[64];
    for (int i = 0; i < ne; i++)
        ranks[i] = 2 * (ne - 1 - i);
    MPI_OK(MPI_Group_incl(wg, ne, ranks, &g));
    MPI_Comm c;
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    if (rank % 2 == 1) {
        CHECK(c == MPI_COMM_NULL, "non-member got a communicator");
        out("D Comm_create(even ranks reversed): not a member, %s",
            c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "NOT NULL");
    } else {
        int r, w = -1;
        MPI_Comm_rank(c, &r);
        CHECK(r == ne - 1 - rank / 2, "Comm_create rank %d", r);
        int ok = ring(c, 7, 0, &w);
        out("D Comm_create(even ranks reversed): rank %d, received from world "
            "rank %d (%s)", r, w, ok ? "right" : "WRONG");
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
}

static void free_with_pending(int rank, int size)
{
    section("E Comm_free with pending messages");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    static const size_t sizes[2] = {8, MIB};
    int good = 0;
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k];
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        unsigned char *sb = must(malloc(n), "malloc", n), *rb = must(malloc(n), "malloc", n);
        wpattern_fill(sb, n, 300 + (uint64_t)rank);
        MPI_Request r[2];
        MPI_OK(MPI_Irecv(rb, (int)n, MPI_BYTE, left, 8, d, &r[0]));
        MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, right, 8, d, &r[1]));
        MPI_OK(MPI_Comm_free(&d));
        CHECK(d == MPI_COMM_NULL, "Comm_free did not null the handle");
        MPI_Status st[2];
        MPI_OK(MPI_Waitall(2, r, st));
        int ok = st[0].MPI_SOURCE == left && st[0].MPI_TAG == 8 &&
                 wpattern_check(rb, n, 300 + (uint64_t)left, "after Comm_free");
        good += ok;
        free(sb);
        free(rb);
    }
    out("E Comm_free with an Isend and an Irecv outstanding: %d of 2 sizes right",
        good);
}

static void intercomm(int rank, int size)
{
    section("F intercommunicator");
    int half = size / 2, low = rank < half;
    MPI_Comm local, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 99, &inter));
    int lr, rsize;
    MPI_Comm_rank(local, &lr);
    MPI_Comm_remote_size(inter, &rsize);
    int peer = lr % rsize;
    /* Everybody sends to remote rank lr % rsize and receives from every
     * remote rank that sends to it. */
    int sb[2] = {rank, lr}, rb[2];
    MPI_Request s;
    MPI_OK(MPI_Isend(sb, 2, MPI_INT, peer, 9, inter, &s));
    /* remote ranks q with q % (my local size) == lr send to me */
    int expect = 0, lsize;
    MPI_Comm_size(local, &lsize);
    for (int q = 0; q < rsize; q++)
        expect += q % lsize == lr;
    int ok = 1;
    for (int m = 0; m < expect; m++) {
        MPI_Status st;
        MPI_OK(MPI_Recv(rb, 2, MPI_INT, MPI_ANY_SOURCE, 9, inter, &st));
        int world_of_src = (low ? half : 0) + st.MPI_SOURCE;
        ok &= rb[1] == st.MPI_SOURCE && rb[0] == world_of_src;
    }
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK(ok, "intercommunicator messages wrong");
    out("F intercommunicator (%s half): %d message(s) from the remote group %s",
        low ? "lower" : "upper", expect, ok ? "right" : "WRONG");
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&local));
}

static void self(int rank)
{
    section("G COMM_SELF");
    int sb[4] = {rank, 1, 2, 3}, rb[4] = {-1, -1, -1, -1};
    MPI_Request s;
    MPI_OK(MPI_Isend(sb, 4, MPI_INT, 0, 10, MPI_COMM_SELF, &s));
    MPI_Status st;
    MPI_OK(MPI_Recv(rb, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    int ok = st.MPI_SOURCE == 0 && st.MPI_TAG == 10 && memcmp(sb, rb, sizeof sb) == 0;
    unsigned char *big = must(malloc(MIB), "malloc", MIB), *bigr = must(malloc(MIB), "malloc", MIB);
    wpattern_fill(big, MIB, 400 + (uint64_t)rank);
    MPI_OK(MPI_Sendrecv(big, MIB, MPI_BYTE, 0, 11, bigr, MIB, MPI_BYTE, 0, 11,
                        MPI_COMM_SELF, &st));
    ok &= wpattern_check(bigr, MIB, 400 + (uint64_t)rank, "Sendrecv on COMM_SELF");
    CHECK(ok, "COMM_SELF messages wrong");
    out("G MPI_COMM_SELF: %s", ok ? "right" : "WRONG");
    free(big);
    free(bigr);
}

#define NDUP 16
static void many_dups(int rank, int size)
{
    section("H many dups");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    MPI_Comm d[NDUP];
    for (int i = 0; i < NDUP; i++)
        MPI_OK(MPI_Comm_dup(i == 0 ? MPI_COMM_WORLD : d[i - 1], &d[i]));
    int sb[NDUP], rb[NDUP];
    MPI_Request s[NDUP];
    for (int i = NDUP - 1; i >= 0; i--) {
        sb[i] = rank * 100 + i;
        MPI_OK(MPI_Isend(&sb[i], 1, MPI_INT, right, 12, d[i], &s[i]));
    }
    int bad = 0;
    for (int i = 0; i < NDUP; i++) {
        rb[i] = -1;
        MPI_OK(MPI_Recv(&rb[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d[i],
                        MPI_STATUS_IGNORE));
        bad += rb[i] != left * 100 + i;
    }
    MPI_OK(MPI_Waitall(NDUP, s, MPI_STATUSES_IGNORE));
    CHECK(bad == 0, "%d of %d duplicates got another one's message", bad, NDUP);
    for (int i = NDUP - 1; i >= 0; i--)
        MPI_OK(MPI_Comm_free(&d[i]));
    out("H %d duplicates, sent in reverse order: %d wrong", NDUP, bad);
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    split_reordered(rank, size);
    split_some(rank, size);
    dup_isolation(rank, size);
    create_even_reversed(rank, size);
    free_with_pending(rank, size);
    intercomm(rank, size);
    self(rank);
    many_dups(rank, size);
    return p2p_finish("comms", rank, size);
}

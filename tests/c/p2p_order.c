/*
 * p2p_order.c - point-to-point conformance: MPI's matching and ordering
 * rules, status fields and counts, PROC_NULL, and buffers that are not in
 * the shared heap.
 *
 * Why: heapmpi replaces the MPI library's matching engine for node-local
 * peers. Its queues must give exactly MPI's answers: messages from one sender
 * never overtake each other (even when a 0-byte message follows a 1 MiB one
 * and the two travel by different protocols), receives match in the order
 * they were posted, wildcards see every sender, and statuses read through the
 * real MPI's MPI_Get_count / MPI_Get_elements. Send and receive buffers are
 * malloc'd (in the shared heap under heapmpi) and static or on the stack (not
 * in the shared heap: the copy path must cope).
 *
 * Sections (each separated by a barrier; every message carries a pattern
 * keyed by (source, destination, tag, sequence) that the receiver checks):
 *  A. same tag, receives posted after the sends (Isend from malloc'd buffers,
 *     barrier, blocking Recv into a static buffer): 10 messages per ordered
 *     pair with sizes 0 B .. 1 MiB mixed, received in sending order, nothing
 *     written past the message;
 *  B. same tag, receives posted before the sends (Irecv into malloc'd
 *     buffers, barrier, blocking Send from a static buffer);
 *  C. stack buffers (0 B .. 64 KiB), same tag, Isend + Recv;
 *  D. MPI_ANY_SOURCE + MPI_ANY_TAG with every rank (itself included) sending
 *     to every rank: per-sender order preserved (the tag is the sequence
 *     number), counts per source printed in source order;
 *  E. MPI_ANY_SOURCE with a specific tag that skips earlier messages of
 *     another tag, and a specific source with MPI_ANY_TAG;
 *  F. posting order: two receives that both match (wildcard and specific in
 *     both orders, 8 B and 1 MiB): the first posted gets the first message;
 *  G. status MPI_SOURCE / MPI_TAG, MPI_Get_count / MPI_Get_elements with
 *     several datatypes, zero-count messages (NULL buffers included);
 *  H. MPI_PROC_NULL sends and receives, blocking and not: source
 *     MPI_PROC_NULL, tag MPI_ANY_TAG, count 0, buffer untouched (MPICH
 *     4.0.2 leaves source and tag of a nonblocking one unset: see
 *     proc_null_nb_status_ok);
 *  I. MPI_STATUS_IGNORE;
 *  J. a long stream to one neighbour, same tag, sizes on both sides of the
 *     fast-box and inline limits and some Issends, received while the
 *     sending goes on: heapmpi carries it partly through the per-pair fast
 *     box and partly (fast box full, larger or synchronous messages)
 *     through the global queue, and must merge the two in sending order.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: order ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define NMSG 10
#define MIB (1 << 20)
#define GUARD 64

static const size_t SIZES[NMSG] = {8, MIB, 0, 65536, 8, 1024, MIB, 0, 8, 65536};

static int g_size;

/* Size of message k from src in sections A and B. */
static size_t msg_size(int src, int k)
{
    return SIZES[(k + src) % NMSG];
}

static uint64_t seed_of(int src, int dst, int tag, int k)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 36) ^
           ((uint64_t)tag << 20) ^ (uint64_t)k;
}

static unsigned char s_rbuf[MIB + GUARD]; /* static: not in the shared heap */
static unsigned char s_sbuf[MIB];

static void check_status(const MPI_Status *st, int src, int tag, size_t n,
                         const char *what)
{
    int cnt = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &cnt));
    CHECK(st->MPI_SOURCE == src, "%s: MPI_SOURCE %d, expected %d", what,
          st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: MPI_TAG %d, expected %d", what,
          st->MPI_TAG, tag);
    CHECK(cnt == (int)n, "%s: count %d bytes, expected %zu", what, cnt, n);
}

static int guard_ok(const unsigned char *p, const char *what)
{
    for (int i = 0; i < GUARD; i++)
        if (p[i] != 0xA5) {
            CHECK(0, "%s: byte %d past the message was overwritten", what, i);
            return 0;
        }
    return 1;
}

/* A: Isend everything, barrier, then receive in a fixed order. */
static void same_tag_recv_after_send(int rank, int size)
{
    section("A same tag, recv after send");
    const int tag = 7;
    int nreq = 0;
    MPI_Request *reqs = must(calloc((size_t)size * NMSG, sizeof *reqs), "calloc", 0);
    unsigned char **bufs = must(calloc((size_t)size * NMSG, sizeof *bufs), "calloc", 0);
    for (int i = 1; i < size; i++) {
        int dst = (rank + i) % size;
        for (int k = 0; k < NMSG; k++) {
            size_t n = msg_size(rank, k);
            unsigned char *b = must(malloc(n + 1), "malloc", n + 1);
            wpattern_fill(b, n, seed_of(rank, dst, tag, k));
            bufs[nreq] = b;
            MPI_OK(MPI_Isend(b, (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD,
                             &reqs[nreq]));
            nreq++;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int good = 0;
    for (int i = 1; i < size; i++) {
        int src = (rank - i + size) % size;
        for (int k = 0; k < NMSG; k++) {
            size_t n = msg_size(src, k);
            memset(s_rbuf + n, 0xA5, GUARD);
            MPI_Status st;
            MPI_OK(MPI_Recv(s_rbuf, MIB, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
            char what[64];
            snprintf(what, sizeof what, "message %d from %d", k, src);
            check_status(&st, src, tag, n, what);
            if (wpattern_check(s_rbuf, n, seed_of(src, rank, tag, k), what) &&
                guard_ok(s_rbuf + n, what))
                good++;
        }
    }
    MPI_OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < nreq; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    out("A same tag, receives after sends: %d of %d messages in order", good,
        (size - 1) * NMSG);
}

/* B: Irecv everything, barrier, then blocking sends from a static buffer. */
static void same_tag_recv_before_send(int rank, int size)
{
    section("B same tag, recv before send");
    const int tag = 8;
    int nreq = 0;
    MPI_Request *reqs = must(calloc((size_t)size * NMSG, sizeof *reqs), "calloc", 0);
    MPI_Status *sts = must(calloc((size_t)size * NMSG, sizeof *sts), "calloc", 0);
    unsigned char **bufs = must(calloc((size_t)size * NMSG, sizeof *bufs), "calloc", 0);
    for (int i = 1; i < size; i++) {
        int src = (rank - i + size) % size;
        for (int k = 0; k < NMSG; k++) {
            unsigned char *b = must(malloc(MIB + GUARD), "malloc", MIB + GUARD);
            memset(b, 0xA5, MIB + GUARD);
            bufs[nreq] = b;
            MPI_OK(MPI_Irecv(b, MIB, MPI_BYTE, src, tag, MPI_COMM_WORLD,
                             &reqs[nreq]));
            nreq++;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 1; i < size; i++) {
        int dst = (rank + i) % size;
        for (int k = 0; k < NMSG; k++) {
            size_t n = msg_size(rank, k);
            wpattern_fill(s_sbuf, n, seed_of(rank, dst, tag, k));
            MPI_OK(MPI_Send(s_sbuf, (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD));
        }
    }
    MPI_OK(MPI_Waitall(nreq, reqs, sts));
    int good = 0, r = 0;
    for (int i = 1; i < size; i++) {
        int src = (rank - i + size) % size;
        for (int k = 0; k < NMSG; k++, r++) {
            size_t n = msg_size(src, k);
            char what[64];
            snprintf(what, sizeof what, "message %d from %d", k, src);
            check_status(&sts[r], src, tag, n, what);
            if (wpattern_check(bufs[r], n, seed_of(src, rank, tag, k), what) &&
                guard_ok(bufs[r] + n, what))
                good++;
            free(bufs[r]);
        }
    }
    free(bufs);
    free(sts);
    free(reqs);
    out("B same tag, receives before sends: %d of %d messages in order", good,
        (size - 1) * NMSG);
}

/* C: buffers on the stack. */
static void stack_buffers(int rank, int size)
{
    section("C stack buffers");
    static const size_t sz[5] = {0, 8, 1024, 65536, 100};
    const int tag = 9;
    unsigned char sbuf[65536];
    unsigned char rbuf[65536 + GUARD];
    int good = 0;
    for (int i = 1; i < size; i++) {
        int dst = (rank + i) % size, src = (rank - i + size) % size;
        MPI_Request req[5];
        /* Message k: Isend it, receive message k from src, then wait for
         * our send (everybody sends first: no cycle of waits) before the
         * stack buffer is rewritten for message k + 1. */
        for (int k = 0; k < 5; k++) {
            wpattern_fill(sbuf, sz[k], seed_of(rank, dst, tag, k));
            MPI_OK(MPI_Isend(sbuf, (int)sz[k], MPI_BYTE, dst, tag,
                             MPI_COMM_WORLD, &req[k]));
            /* Receive the k-th message from src before waiting on our send:
             * everybody sends first, so no cycle of waits. */
            memset(rbuf, 0xA5, sizeof rbuf);
            MPI_Status st;
            MPI_OK(MPI_Recv(rbuf, 65536, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
            char what[64];
            snprintf(what, sizeof what, "stack message %d from %d", k, src);
            check_status(&st, src, tag, sz[k], what);
            if (wpattern_check(rbuf, sz[k], seed_of(src, rank, tag, k), what) &&
                guard_ok(rbuf + sz[k], what))
                good++;
            MPI_OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
        }
    }
    out("C stack buffers: %d of %d messages ok", good, (size - 1) * 5);
}

/* D: every rank sends NW messages (tag = sequence number) to every rank,
 * itself included; receives are all MPI_ANY_SOURCE + MPI_ANY_TAG. */
#define NW 12
static size_t wild_size(int src, int k)
{
    static const size_t sz[6] = {0, 8, 1024, 65536, 8, 1024};
    return sz[(k + src) % 6];
}

static void any_source_any_tag(int rank, int size)
{
    section("D ANY_SOURCE ANY_TAG");
    int nreq = 0;
    MPI_Request *reqs = must(calloc((size_t)size * NW, sizeof *reqs), "calloc", 0);
    unsigned char **bufs = must(calloc((size_t)size * NW, sizeof *bufs), "calloc", 0);
    for (int k = 0; k < NW; k++) {
        for (int i = 0; i < size; i++) {
            int dst = (rank + i) % size;
            size_t n = wild_size(rank, k);
            unsigned char *b = must(malloc(n + 1), "malloc", n + 1);
            wpattern_fill(b, n, seed_of(rank, dst, k, k));
            bufs[nreq] = b;
            MPI_OK(MPI_Isend(b, (int)n, MPI_BYTE, dst, k, MPI_COMM_WORLD,
                             &reqs[nreq]));
            nreq++;
        }
    }
    int *next = must(calloc((size_t)size, sizeof *next), "calloc", 0);
    unsigned char *rb = must(malloc(65536 + GUARD), "malloc", 0);
    int good = 0;
    for (int m = 0; m < size * NW; m++) {
        memset(rb, 0xA5, 65536 + GUARD);
        MPI_Status st;
        MPI_OK(MPI_Recv(rb, 65536, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        MPI_COMM_WORLD, &st));
        int src = st.MPI_SOURCE;
        if (src < 0 || src >= size) {
            CHECK(0, "MPI_SOURCE %d out of range", src);
            continue;
        }
        int k = next[src]++;
        char what[64];
        snprintf(what, sizeof what, "wildcard receive %d (from %d)", m, src);
        size_t n = wild_size(src, k);
        check_status(&st, src, k, n, what);
        if (st.MPI_TAG == k &&
            wpattern_check(rb, n, seed_of(src, rank, k, k), what) &&
            guard_ok(rb + n, what))
            good++;
    }
    MPI_OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    for (int src = 0; src < size; src++)
        out("D ANY_SOURCE+ANY_TAG: from %d: %d messages", src, next[src]);
    out("D ANY_SOURCE+ANY_TAG: %d of %d in per-sender order", good, size * NW);
    for (int i = 0; i < nreq; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    free(next);
    free(rb);
}

/* E: tags 21/22 alternate from every peer; all of tag 22 is received first
 * with MPI_ANY_SOURCE, then tag 21. Then a specific source with ANY_TAG. */
#define NE 8
static void wildcard_skips(int rank, int size)
{
    section("E wildcard skips");
    int nreq = 0;
    MPI_Request *reqs = must(calloc((size_t)size * NE * 2, sizeof *reqs), "calloc", 0);
    int (*pay)[2] = must(calloc((size_t)size * NE * 2, sizeof *pay), "calloc", 0);
    for (int i = 1; i < size; i++) {
        int dst = (rank + i) % size;
        for (int k = 0; k < NE; k++) {
            pay[nreq][0] = rank;
            pay[nreq][1] = k;
            MPI_OK(MPI_Isend(pay[nreq], 2, MPI_INT, dst, 21 + k % 2,
                             MPI_COMM_WORLD, &reqs[nreq]));
            nreq++;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int *next = must(calloc((size_t)size, sizeof *next), "calloc", 0);
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        int tag = pass == 0 ? 22 : 21;
        for (int s = 0; s < size; s++)
            next[s] = tag == 22 ? 1 : 0;
        for (int m = 0; m < (size - 1) * NE / 2; m++) {
            int got[2] = {-1, -1};
            MPI_Status st;
            MPI_OK(MPI_Recv(got, 2, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE;
            if (src < 0 || src >= size || src == rank || got[0] != src ||
                got[1] != next[src] || st.MPI_TAG != tag) {
                CHECK(0, "tag %d receive %d: source %d tag %d payload (%d,%d), "
                      "expected seq %d", tag, m, src, st.MPI_TAG, got[0], got[1],
                      src >= 0 && src < size ? next[src] : -1);
                bad++;
                continue;
            }
            next[src] += 2;
        }
    }
    MPI_OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    out("E ANY_SOURCE with tag 22 before tag 21: %d out of order", bad);

    /* Specific source, MPI_ANY_TAG: tags 30, 31, 32 in turn, received from
     * the peers in descending order after a barrier. */
    nreq = 0;
    for (int i = 1; i < size; i++) {
        int dst = (rank + i) % size;
        for (int k = 0; k < NE; k++) {
            pay[nreq][0] = rank;
            pay[nreq][1] = k;
            MPI_OK(MPI_Isend(pay[nreq], 2, MPI_INT, dst, 30 + k % 3,
                             MPI_COMM_WORLD, &reqs[nreq]));
            nreq++;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad = 0;
    for (int src = size - 1; src >= 0; src--) {
        if (src == rank)
            continue;
        for (int k = 0; k < NE; k++) {
            int got[2] = {-1, -1};
            MPI_Status st;
            MPI_OK(MPI_Recv(got, 2, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            if (st.MPI_SOURCE != src || st.MPI_TAG != 30 + k % 3 ||
                got[0] != src || got[1] != k) {
                CHECK(0, "ANY_TAG from %d, message %d: source %d tag %d "
                      "payload (%d,%d)", src, k, st.MPI_SOURCE, st.MPI_TAG,
                      got[0], got[1]);
                bad++;
            }
        }
    }
    MPI_OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    out("E specific source with ANY_TAG: %d out of order", bad);
    free(next);
    free(pay);
    free(reqs);
}

/* F: two receives that both match the two messages that follow: the first
 * posted gets the first. */
static void posting_order(int rank, int size)
{
    section("F posting order");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    /* (source, tag) of the first and second receive; T = this case's tag. */
    enum { SPEC, ANYSRC, ANYTAG, ANYANY };
    static const int kinds[3][2] = {{ANYANY, SPEC}, {SPEC, ANYSRC}, {ANYTAG, ANYANY}};
    static const size_t sizes[2] = {8, MIB};
    int c = 0;
    for (int si = 0; si < 2; si++) {
        size_t n = sizes[si];
        unsigned char *sb = must(malloc(n), "malloc", n);
        unsigned char *rb[2] = {must(malloc(n), "malloc", n),
                                must(malloc(n), "malloc", n)};
        for (int ki = 0; ki < 3; ki++, c++) {
            int tag = 40 + c;
            MPI_Request req[2];
            for (int j = 0; j < 2; j++) {
                int kind = kinds[ki][j];
                int src = (kind == ANYSRC || kind == ANYANY) ? MPI_ANY_SOURCE : left;
                int t = (kind == ANYTAG || kind == ANYANY) ? MPI_ANY_TAG : tag;
                memset(rb[j], 0, n);
                MPI_OK(MPI_Irecv(rb[j], (int)n, MPI_BYTE, src, t, MPI_COMM_WORLD,
                                 &req[j]));
            }
            MPI_Barrier(MPI_COMM_WORLD);
            for (int j = 0; j < 2; j++) {
                wpattern_fill(sb, n, seed_of(rank, right, tag, j));
                MPI_OK(MPI_Send(sb, (int)n, MPI_BYTE, right, tag, MPI_COMM_WORLD));
            }
            MPI_Status st[2];
            MPI_OK(MPI_Waitall(2, req, st));
            int ok = 1;
            for (int j = 0; j < 2; j++) {
                char what[80];
                snprintf(what, sizeof what, "case %d (%zu B): receive posted %s",
                         c, n, j == 0 ? "first" : "second");
                check_status(&st[j], left, tag, n, what);
                ok &= wpattern_check(rb[j], n, seed_of(left, rank, tag, j), what);
            }
            out("F posting order case %d (%zu B): %s", c, n,
                ok ? "first posted got first message" : "WRONG");
        }
        free(sb);
        free(rb[0]);
        free(rb[1]);
    }
}

static const char *count_str(int c, char *buf, size_t n)
{
    if (c == MPI_UNDEFINED)
        snprintf(buf, n, "undefined");
    else
        snprintf(buf, n, "%d", c);
    return buf;
}

/* G: status fields and counts. */
static void status_and_counts(int rank, int size)
{
    section("G status and counts");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int sb[37], rb[100];
    for (int i = 0; i < 37; i++)
        sb[i] = rank * 1000 + i;
    MPI_Request req;
    MPI_OK(MPI_Isend(sb, 37, MPI_INT, right, 50, MPI_COMM_WORLD, &req));
    MPI_Status st;
    memset(rb, 0, sizeof rb);
    MPI_OK(MPI_Recv(rb, 100, MPI_INT, left, 50, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int c_int, c_byte, c_double, c_short, e_int, e_byte, e_double;
    MPI_Count ex = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &c_int));
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &c_byte));
    MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &c_double));
    MPI_OK(MPI_Get_count(&st, MPI_SHORT, &c_short));
    MPI_OK(MPI_Get_elements(&st, MPI_INT, &e_int));
    MPI_OK(MPI_Get_elements(&st, MPI_BYTE, &e_byte));
    MPI_OK(MPI_Get_elements(&st, MPI_DOUBLE, &e_double));
    MPI_OK(MPI_Get_elements_x(&st, MPI_INT, &ex));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 50, "status (%d,%d)",
          st.MPI_SOURCE, st.MPI_TAG);
    CHECK(c_int == 37 && c_byte == 148 && e_int == 37 && ex == 37,
          "counts int %d byte %d elements %d/%lld", c_int, c_byte, e_int,
          (long long)ex);
    int bad = 0;
    for (int i = 0; i < 37; i++)
        bad += rb[i] != left * 1000 + i;
    for (int i = 37; i < 100; i++)
        bad += rb[i] != 0;
    CHECK(bad == 0, "%d wrong ints", bad);
    char b1[16], b2[16];
    out("G 37 ints: source=left tag=50 count int=%d byte=%d double=%s short=%d "
        "elements int=%d byte=%d double=%s elements_x=%lld wrong=%d",
        c_int, c_byte, count_str(c_double, b1, sizeof b1), c_short, e_int,
        e_byte, count_str(e_double, b2, sizeof b2), (long long)ex, bad);

    /* Zero-count messages, with a real and with a NULL buffer at both ends,
     * and one received with MPI_ANY_TAG. */
    MPI_Request r2[3];
    MPI_OK(MPI_Isend(sb, 0, MPI_INT, right, 51, MPI_COMM_WORLD, &r2[0]));
    MPI_OK(MPI_Isend(NULL, 0, MPI_INT, right, 52, MPI_COMM_WORLD, &r2[1]));
    MPI_OK(MPI_Isend(NULL, 0, MPI_BYTE, right, 53, MPI_COMM_WORLD, &r2[2]));
    for (int i = 0; i < 100; i++)
        rb[i] = -7;
    int cs[3] = {-1, -1, -1}, tags[3] = {-1, -1, -1}, srcs[3] = {-1, -1, -1};
    MPI_OK(MPI_Recv(rb, 100, MPI_INT, left, 51, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cs[0]));
    tags[0] = st.MPI_TAG;
    srcs[0] = st.MPI_SOURCE;
    MPI_OK(MPI_Recv(NULL, 0, MPI_INT, left, 52, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cs[1]));
    tags[1] = st.MPI_TAG;
    srcs[1] = st.MPI_SOURCE;
    MPI_OK(MPI_Recv(rb, 4, MPI_BYTE, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cs[2]));
    tags[2] = st.MPI_TAG;
    srcs[2] = st.MPI_SOURCE;
    MPI_OK(MPI_Waitall(3, r2, MPI_STATUSES_IGNORE));
    int touched = 0;
    for (int i = 0; i < 100; i++)
        touched += rb[i] != -7;
    for (int j = 0; j < 3; j++)
        CHECK(cs[j] == 0 && tags[j] == 51 + j && srcs[j] == left,
              "zero-count message %d: count %d tag %d source %d", j, cs[j],
              tags[j], srcs[j]);
    CHECK(touched == 0, "zero-count receives wrote %d ints", touched);
    out("G zero-count: counts %d %d %d tags %d %d %d source=%s buffer %s",
        cs[0], cs[1], cs[2], tags[0], tags[1], tags[2],
        srcs[0] == left && srcs[1] == left && srcs[2] == left ? "left" : "WRONG",
        touched ? "WRITTEN" : "untouched");
}

static int proc_null_status_ok(const MPI_Status *st, const char *what)
{
    int c = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &c));
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && c == 0,
          "%s: status source %d tag %d count %d, expected PROC_NULL/ANY_TAG/0",
          what, st->MPI_SOURCE, st->MPI_TAG, c);
    return st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && c == 0;
}

/* A nonblocking receive from MPI_PROC_NULL: count 0 always. MPICH 4.0.2
 * does not fill in source and tag (its statuses then hold whatever its
 * shared completed-request object last held: source 0, tag 0 in a fresh
 * program, PROC_NULL after a Sendrecv with PROC_NULL), so source and tag are
 * only checked under Open MPI, which gives MPI_PROC_NULL / MPI_ANY_TAG. */
static int proc_null_nb_status_ok(const MPI_Status *st, const char *what)
{
#ifdef OPEN_MPI
    return proc_null_status_ok(st, what);
#else
    int c = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &c));
    CHECK(c == 0, "%s: status count %d, expected 0", what, c);
    return c == 0;
#endif
}

/* H: MPI_PROC_NULL. The status of a send request is undefined in MPI (only
 * MPI_Test_cancelled may be asked), so only receive statuses are looked at. */
static void proc_null(void)
{
    section("H PROC_NULL");
    int buf[10], ok = 0;
    for (int i = 0; i < 10; i++)
        buf[i] = 123 + i;
    MPI_Status st;
    MPI_OK(MPI_Send(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Ssend(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Rsend(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Bsend(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Recv(buf, 10, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    ok += proc_null_status_ok(&st, "Recv");
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Sendrecv(buf, 10, MPI_INT, MPI_PROC_NULL, 3, buf, 10, MPI_INT,
                        MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    ok += proc_null_status_ok(&st, "Sendrecv");
    MPI_Request req[3];
    MPI_OK(MPI_Irecv(buf, 10, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD,
                     &req[0]));
    MPI_OK(MPI_Isend(buf, 10, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Irecv(buf, 10, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &req[2]));
    MPI_Status sts[3];
    memset(sts, 0x4d, sizeof sts);
    MPI_OK(MPI_Waitall(3, req, sts));
    for (int i = 0; i < 3; i++)
        CHECK(req[i] == MPI_REQUEST_NULL, "request %d not freed by Waitall", i);
    MPI_Request r;
    MPI_OK(MPI_Irecv(buf, 10, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &r));
    int flag = 0;
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag, "Test of a PROC_NULL receive: not complete");
    int touched = 0;
    for (int i = 0; i < 10; i++)
        touched += buf[i] != 123 + i;
    CHECK(touched == 0, "PROC_NULL receive wrote %d ints", touched);
    ok += proc_null_nb_status_ok(&sts[0], "Irecv+Waitall");
    ok += proc_null_nb_status_ok(&sts[2], "Irecv+Waitall");
    ok += proc_null_nb_status_ok(&st, "Irecv+Test");
    out("H PROC_NULL: %d of 5 receive statuses empty, buffer %s", ok,
        touched ? "WRITTEN" : "untouched");
}

/* I: MPI_STATUS_IGNORE on blocking and nonblocking receives. */
static void status_ignore(int rank, int size)
{
    section("I STATUS_IGNORE");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int sb[2][64], rb[2][64];
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 64; i++) {
            sb[j][i] = rank * 100000 + j * 1000 + i;
            rb[j][i] = -1;
        }
    MPI_Request s[2], r;
    MPI_OK(MPI_Isend(sb[0], 64, MPI_INT, right, 70, MPI_COMM_WORLD, &s[0]));
    MPI_OK(MPI_Isend(sb[1], 64, MPI_INT, right, 70, MPI_COMM_WORLD, &s[1]));
    MPI_OK(MPI_Recv(rb[0], 64, MPI_INT, left, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Irecv(rb[1], 64, MPI_INT, left, 70, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "Wait did not set the request to MPI_REQUEST_NULL");
    MPI_OK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));
    int bad = 0;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 64; i++)
            bad += rb[j][i] != left * 100000 + j * 1000 + i;
    CHECK(bad == 0, "%d wrong ints", bad);
    out("I STATUS_IGNORE: %d wrong ints", bad);
}

/* J: one stream, two paths. */
#define NJ 3000
static const size_t J_SIZES[] = {0, 8, 100, 480, 512, 513, 1000, 2100, 8, 64, 4000, 1};
static void stream_two_paths(int rank, int size)
{
    section("J fast box and global queue interleaved");
    const int tag = 11;
    const int nsz = (int)(sizeof J_SIZES / sizeof J_SIZES[0]);
    int dst = (rank + 1) % size, src = (rank - 1 + size) % size;
    MPI_Request *reqs = must(calloc(NJ, sizeof *reqs), "calloc", 0);
    unsigned char **bufs = must(calloc(NJ, sizeof *bufs), "calloc", 0);
    static unsigned char rbuf[8192];
    int got = 0, good = 0;
    for (int k = 0; k < NJ; k++) {
        size_t n = J_SIZES[k % nsz];
        bufs[k] = must(malloc(n + 1), "malloc", n + 1);
        wpattern_fill(bufs[k], n, seed_of(rank, dst, tag, k));
        if (k % 37 == 5)
            MPI_OK(MPI_Issend(bufs[k], (int)n, MPI_BYTE, dst, tag,
                              MPI_COMM_WORLD, &reqs[k]));
        else
            MPI_OK(MPI_Isend(bufs[k], (int)n, MPI_BYTE, dst, tag,
                             MPI_COMM_WORLD, &reqs[k]));
        /* Receive now and then while sending goes on (more often late in
         * the stream, so the backlog first grows, then shrinks). */
        int take = (k % 7 == 0) + (k > NJ / 2 && k % 3 == 0);
        while (take-- > 0 || (k == NJ - 1 && got < NJ)) {
            size_t m = J_SIZES[got % nsz];
            MPI_Status st;
            MPI_OK(MPI_Recv(rbuf, (int)sizeof rbuf, MPI_BYTE, src, tag,
                            MPI_COMM_WORLD, &st));
            char what[64];
            snprintf(what, sizeof what, "stream message %d from %d", got, src);
            check_status(&st, src, tag, m, what);
            if (wpattern_check(rbuf, m, seed_of(src, rank, tag, got), what))
                good++;
            got++;
        }
    }
    MPI_OK(MPI_Waitall(NJ, reqs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NJ; k++)
        free(bufs[k]);
    free(bufs);
    free(reqs);
    out("J one stream over two paths: %d of %d messages in order", good, NJ);
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    g_size = size;
    same_tag_recv_after_send(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    same_tag_recv_before_send(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    stack_buffers(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    any_source_any_tag(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    wildcard_skips(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    posting_order(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    status_and_counts(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    proc_null();
    status_ignore(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    stream_two_paths(rank, size);
    return p2p_finish("order", rank, size);
}

/*
 * p2p_persistent.c - point-to-point conformance: persistent requests.
 *
 * Why: persistent requests are started many times over the same buffer, so
 * heapmpi must re-read the buffer at every start (never reuse data from an
 * earlier start), keep the request alive and inactive between starts, give
 * an inactive request the "empty" answers (Wait returns at once with an
 * empty status, Test says flag=1, Waitany skips it), and honour each mode's
 * semantics (synchronous, buffered, ready).
 *
 * Sections (every rank sends to both ring neighbours, tags per direction):
 *  A. Send_init / Recv_init, Startall + Waitall 100 times with 64-byte
 *     messages and 20 times with 256 KiB ones, the send buffers rewritten
 *     before every start;
 *  B. Ssend_init: 100 starts; and once, the started Ssend is not complete
 *     (MPI_Test) before the receiver starts its receive after a barrier;
 *  C. Bsend_init with an attached buffer: 100 starts of 64 bytes, and
 *     (MPICH only: stock Open MPI 4.1.4 corrupts them) 20 of 256 KiB;
 *  D. Rsend_init: 50 starts, each after the receiver said (0-byte message)
 *     that its receive is started;
 *  E. inactive persistent requests, before the first start and after a
 *     completion: Wait (empty status, handle kept), Test (flag 1),
 *     Request_get_status, Waitany / Testany (MPI_UNDEFINED), Testall;
 *  F. Waitany over a mix of persistent, ordinary and null requests, 20
 *     times;
 *  G. MPI_Request_free on an inactive and on an active persistent send;
 *  H. persistent sends and receives with MPI_PROC_NULL, and a persistent
 *     MPI_ANY_SOURCE / MPI_ANY_TAG receive restarted 20 times.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: persistent ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2p_util.h"

static int g_left, g_right, g_me;

static uint64_t seed_of(int src, int dst, int tag, int it)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 40) ^ ((uint64_t)tag << 24) ^
           (uint64_t)it;
}

static int is_empty_status(const MPI_Status *st)
{
    int c = -1;
    MPI_Get_count(st, MPI_BYTE, &c);
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && c == 0;
}

enum { STD, SYNC, BUF };
static const char *mode_name[3] = {"Send_init", "Ssend_init", "Bsend_init"};

/* Two receives (from left with tag t, from right with tag t+1) and two sends
 * (to right with t, to left with t+1) of n bytes, started iters times. */
static void ring_persistent(int mode, size_t n, int iters, int tag)
{
    unsigned char *sb[2], *rb[2];
    MPI_Request r[4];
    int to[2] = {g_right, g_left}, from[2] = {g_left, g_right};
    for (int d = 0; d < 2; d++) {
        sb[d] = must(malloc(n), "malloc", n);
        rb[d] = must(malloc(n), "malloc", n);
        MPI_OK(MPI_Recv_init(rb[d], (int)n, MPI_BYTE, from[d], tag + d,
                             MPI_COMM_WORLD, &r[d]));
        switch (mode) {
        case STD:
            MPI_OK(MPI_Send_init(sb[d], (int)n, MPI_BYTE, to[d], tag + d,
                                 MPI_COMM_WORLD, &r[2 + d]));
            break;
        case SYNC:
            MPI_OK(MPI_Ssend_init(sb[d], (int)n, MPI_BYTE, to[d], tag + d,
                                  MPI_COMM_WORLD, &r[2 + d]));
            break;
        default:
            MPI_OK(MPI_Bsend_init(sb[d], (int)n, MPI_BYTE, to[d], tag + d,
                                  MPI_COMM_WORLD, &r[2 + d]));
            break;
        }
    }
    int good = 0;
    for (int it = 0; it < iters; it++) {
        for (int d = 0; d < 2; d++) {
            wpattern_fill(sb[d], n, seed_of(g_me, to[d], tag + d, it));
            memset(rb[d], 0, n);
        }
        MPI_OK(MPI_Startall(4, r));
        MPI_Status st[4];
        MPI_OK(MPI_Waitall(4, r, st));
        int ok = 1;
        for (int d = 0; d < 2; d++) {
            int c = -1;
            MPI_Get_count(&st[d], MPI_BYTE, &c);
            ok &= st[d].MPI_SOURCE == from[d] && st[d].MPI_TAG == tag + d &&
                  c == (int)n;
            ok &= wpattern_check(rb[d], n, seed_of(from[d], g_me, tag + d, it),
                                 "persistent receive");
        }
        for (int q = 0; q < 4; q++)
            CHECK(r[q] != MPI_REQUEST_NULL, "Waitall freed persistent request %d", q);
        good += ok;
    }
    for (int q = 0; q < 4; q++) {
        MPI_OK(MPI_Request_free(&r[q]));
        CHECK(r[q] == MPI_REQUEST_NULL, "Request_free did not null the handle");
    }
    for (int d = 0; d < 2; d++) {
        free(sb[d]);
        free(rb[d]);
    }
    out("%c %s %zu B: %d of %d starts right", mode == STD ? 'A' : mode == SYNC ? 'B' : 'C',
        mode_name[mode], n, good, iters);
}

static void ssend_init_not_early(void)
{
    section("B Ssend_init not early");
    int sv = g_me, rv = -1;
    MPI_Request s, r;
    MPI_OK(MPI_Ssend_init(&sv, 1, MPI_INT, g_right, 30, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Recv_init(&rv, 1, MPI_INT, g_left, 30, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Start(&s));
    int early = 0;
    for (int it = 0; it < 50 && !early; it++) {
        int flag = 0;
        MPI_OK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
        early |= flag;
        usleep(200);
    }
    CHECK(!early, "a started Ssend_init request completed before the receive");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Start(&r));
    if (!early)
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(rv == g_left, "Ssend_init message %d", rv);
    out("B Ssend_init started: %s before the receive was started, message %s",
        early ? "COMPLETE" : "not complete", rv == g_left ? "right" : "WRONG");
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void rsend_init(void)
{
    section("D Rsend_init");
    const int iters = 50;
    int sv[64] = {0}, rv[64] = {0};
    MPI_Request s, r;
    MPI_OK(MPI_Rsend_init(sv, 64, MPI_INT, g_right, 40, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Recv_init(rv, 64, MPI_INT, g_left, 40, MPI_COMM_WORLD, &r));
    int good = 0;
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < 64; i++) {
            sv[i] = g_me * 100000 + it * 100 + i;
            rv[i] = -1;
        }
        MPI_OK(MPI_Start(&r));
        /* "my receive is started" to the left (who sends to me), and wait
         * for the same from the right before the ready send */
        MPI_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, g_left, 41, NULL, 0, MPI_BYTE,
                            g_right, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Start(&s));
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int ok = 1;
        for (int i = 0; i < 64; i++)
            ok &= rv[i] == g_left * 100000 + it * 100 + i;
        CHECK(ok, "Rsend_init start %d: wrong data", it);
        good += ok;
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    out("D Rsend_init: %d of %d starts right", good, iters);
}

/* Every way of asking an inactive persistent request; 1 if all right. */
static int inactive_answers(MPI_Request *r, const char *when)
{
    MPI_Request keep = *r;
    MPI_Status st;
    int ok = 1, flag = -1, idx = -5;
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Wait(r, &st));
    ok &= is_empty_status(&st) && *r == keep;
    CHECK(is_empty_status(&st) && *r == keep, "%s: Wait: status not empty or "
          "handle changed", when);
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Test(r, &flag, &st));
    ok &= flag == 1 && is_empty_status(&st) && *r == keep;
    CHECK(flag == 1 && is_empty_status(&st) && *r == keep, "%s: Test: flag %d",
          when, flag);
    memset(&st, 0x4d, sizeof st);
    flag = -1;
    MPI_OK(MPI_Request_get_status(*r, &flag, &st));
    ok &= flag == 1 && is_empty_status(&st);
    CHECK(flag == 1 && is_empty_status(&st), "%s: Request_get_status: flag %d",
          when, flag);
    MPI_Request arr[3] = {MPI_REQUEST_NULL, *r, MPI_REQUEST_NULL};
    MPI_OK(MPI_Waitany(3, arr, &idx, &st));
    ok &= idx == MPI_UNDEFINED;
    CHECK(idx == MPI_UNDEFINED, "%s: Waitany index %d", when, idx);
    flag = -1;
    idx = -5;
    MPI_OK(MPI_Testany(3, arr, &idx, &flag, &st));
    ok &= idx == MPI_UNDEFINED && flag == 1;
    CHECK(idx == MPI_UNDEFINED && flag == 1, "%s: Testany index %d flag %d", when,
          idx, flag);
    flag = -1;
    MPI_Status sts[3];
    MPI_OK(MPI_Testall(3, arr, &flag, sts));
    ok &= flag == 1 && is_empty_status(&sts[1]) && arr[1] == keep;
    CHECK(flag == 1 && is_empty_status(&sts[1]) && arr[1] == keep,
          "%s: Testall flag %d", when, flag);
    int outc = -5, idxs[3];
    MPI_OK(MPI_Waitsome(3, arr, &outc, idxs, sts));
    ok &= outc == MPI_UNDEFINED;
    CHECK(outc == MPI_UNDEFINED, "%s: Waitsome outcount %d", when, outc);
    return ok;
}

static void inactive(void)
{
    section("E inactive");
    int sv = g_me, rv = -1;
    MPI_Request s, r;
    MPI_OK(MPI_Send_init(&sv, 1, MPI_INT, g_right, 50, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Recv_init(&rv, 1, MPI_INT, g_left, 50, MPI_COMM_WORLD, &r));
    int before = inactive_answers(&r, "receive before start") &
                 inactive_answers(&s, "send before start");
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Start(&s));
    MPI_Request both[2] = {r, s};
    MPI_OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    CHECK(both[0] == r && both[1] == s, "Waitall changed persistent handles");
    int after = inactive_answers(&r, "receive after completion") &
                inactive_answers(&s, "send after completion");
    CHECK(rv == g_left, "message %d", rv);
    out("E inactive persistent requests: before the first start %s, after "
        "completion %s", before ? "empty answers" : "WRONG",
        after ? "empty answers" : "WRONG");
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void mixed_waitany(void)
{
    section("F mixed Waitany");
    const int iters = 20;
    int psv = 0, prv = -1, osv = 0, orv = -1;
    MPI_Request ps, pr;
    MPI_OK(MPI_Send_init(&psv, 1, MPI_INT, g_right, 60, MPI_COMM_WORLD, &ps));
    MPI_OK(MPI_Recv_init(&prv, 1, MPI_INT, g_left, 60, MPI_COMM_WORLD, &pr));
    int good = 0;
    for (int it = 0; it < iters; it++) {
        psv = g_me * 1000 + it;
        osv = g_me * 1000 + 500 + it;
        MPI_Request a[6];
        a[0] = MPI_REQUEST_NULL;
        a[1] = pr;
        MPI_OK(MPI_Irecv(&orv, 1, MPI_INT, g_left, 61, MPI_COMM_WORLD, &a[2]));
        a[3] = MPI_REQUEST_NULL;
        a[4] = ps;
        MPI_OK(MPI_Isend(&osv, 1, MPI_INT, g_right, 61, MPI_COMM_WORLD, &a[5]));
        MPI_OK(MPI_Startall(1, &a[1]));
        MPI_OK(MPI_Start(&a[4]));
        int seen = 0, dup = 0;
        for (;;) {
            int k = -1;
            MPI_Status st;
            MPI_OK(MPI_Waitany(6, a, &k, &st));
            if (k == MPI_UNDEFINED)
                break;
            if (k < 0 || k >= 6) {
                CHECK(0, "Waitany index %d", k);
                break;
            }
            dup += (seen >> k) & 1;
            seen |= 1 << k;
        }
        int ok = seen == 0x36 && !dup && a[1] == pr && a[4] == ps &&
                 a[2] == MPI_REQUEST_NULL && a[5] == MPI_REQUEST_NULL &&
                 prv == g_left * 1000 + it && orv == g_left * 1000 + 500 + it;
        CHECK(ok, "iteration %d: completed set 0x%x, data %d %d", it, seen, prv, orv);
        good += ok;
    }
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);
    out("F Waitany over persistent + ordinary + null requests: %d of %d "
        "iterations right", good, iters);
}

static void request_free(void)
{
    section("G Request_free");
    int sv = g_me, rv = -1;
    MPI_Request s;
    MPI_OK(MPI_Send_init(&sv, 1, MPI_INT, g_right, 70, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Request_free(&s));
    int ok1 = s == MPI_REQUEST_NULL;
    /* nothing may have been sent by the freed inactive request */
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 1;
    MPI_OK(MPI_Iprobe(g_left, 70, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    ok1 &= !flag;
    CHECK(ok1, "Request_free of an inactive persistent send: handle %s, "
          "message %s", s == MPI_REQUEST_NULL ? "null" : "kept",
          flag ? "SENT" : "none");
    /* an active one: started, freed, the message still arrives */
    int big = 100000;
    unsigned char *bs = must(malloc((size_t)big), "malloc", (size_t)big);
    unsigned char *br = must(malloc((size_t)big), "malloc", (size_t)big);
    wpattern_fill(bs, (size_t)big, seed_of(g_me, g_right, 71, 0));
    MPI_OK(MPI_Send_init(bs, big, MPI_BYTE, g_right, 71, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Start(&s));
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Recv(br, big, MPI_BYTE, g_left, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int ok2 = wpattern_check(br, (size_t)big, seed_of(g_left, g_me, 71, 0),
                             "freed active persistent send");
    /* acknowledgement before the send buffer goes */
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, g_left, 72, NULL, 0, MPI_BYTE, g_right,
                        72, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    free(bs);
    free(br);
    (void)rv;
    out("G Request_free: inactive %s, active (message still delivered) %s",
        ok1 ? "right" : "WRONG", ok2 ? "right" : "WRONG");
}

static void proc_null_and_wildcard(void)
{
    section("H PROC_NULL and wildcard");
    int buf[4] = {1, 2, 3, 4};
    MPI_Request r[2];
    MPI_OK(MPI_Send_init(buf, 4, MPI_INT, MPI_PROC_NULL, 80, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Recv_init(buf, 4, MPI_INT, MPI_PROC_NULL, 80, MPI_COMM_WORLD, &r[1]));
    int ok = 1;
    for (int it = 0; it < 3; it++) {
        MPI_Status st[2];
        memset(st, 0x4d, sizeof st);
        MPI_OK(MPI_Startall(2, r));
        MPI_OK(MPI_Waitall(2, r, st));
        int c = -1;
        MPI_Get_count(&st[1], MPI_INT, &c);
#ifdef OPEN_MPI
        ok &= st[1].MPI_SOURCE == MPI_PROC_NULL && st[1].MPI_TAG == MPI_ANY_TAG;
#endif
        ok &= c == 0;
    }
    ok &= buf[0] == 1 && buf[3] == 4;
    CHECK(ok, "persistent PROC_NULL requests");
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);

    const int iters = 20;
    int sv = 0, rv = -1, good = 0;
    MPI_Request w, s;
    MPI_OK(MPI_Recv_init(&rv, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                         &w));
    for (int it = 0; it < iters; it++) {
        MPI_OK(MPI_Start(&w));
        sv = g_me * 1000 + it;
        MPI_OK(MPI_Isend(&sv, 1, MPI_INT, g_right, 90 + it, MPI_COMM_WORLD, &s));
        MPI_Status st;
        MPI_OK(MPI_Wait(&w, &st));
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        int k = st.MPI_SOURCE == g_left && st.MPI_TAG == 90 + it &&
                rv == g_left * 1000 + it;
        CHECK(k, "wildcard persistent receive %d: source %d tag %d value %d", it,
              st.MPI_SOURCE, st.MPI_TAG, rv);
        good += k;
    }
    MPI_Request_free(&w);
    out("H persistent PROC_NULL %s; persistent ANY_SOURCE/ANY_TAG receive: %d of "
        "%d starts right", ok ? "right" : "WRONG", good, iters);
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_left = (rank - 1 + size) % size;
    g_right = (rank + 1) % size;
    /* room for two buffered 256 KiB messages per direction in flight */
    int bsize = 4 * (256 * 1024 + 64) + 16 * MPI_BSEND_OVERHEAD;
    void *bbuf = must(malloc((size_t)bsize), "malloc", (size_t)bsize);
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));

    section("A Send_init");
    ring_persistent(STD, 64, 100, 10);
    ring_persistent(STD, 256 * 1024, 20, 12);
    section("B Ssend_init");
    ring_persistent(SYNC, 64, 100, 14);
    ring_persistent(SYNC, 256 * 1024, 20, 16);
    ssend_init_not_early();
    section("C Bsend_init");
    ring_persistent(BUF, 64, 100, 18);
#ifndef OPEN_MPI
    /* Stock Open MPI 4.1.4 delivers wrong data (the receive completes with
     * the buffer unwritten) for restarted Bsend_init requests above its
     * ~4 KiB eager limit, so large persistent buffered sends only run under
     * MPICH. */
    ring_persistent(BUF, 256 * 1024, 20, 20);
#endif
    rsend_init();
    inactive();
    mixed_waitany();
    request_free();
    proc_null_and_wildcard();

    void *det = NULL;
    int dsize = 0;
    MPI_OK(MPI_Buffer_detach(&det, &dsize));
    free(bbuf);
    return p2p_finish("persistent", rank, size);
}

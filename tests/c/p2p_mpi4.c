/*
 * p2p_mpi4.c - the MPI-4.0 point-to-point and one-sided routines mixed
 * with their classic twins on one communicator.
 *
 * Why: a message sent with a routine heapmpi does not intercept goes
 * through the real MPI's matching, which a receive posted through heapmpi
 * never sees: under MPICH, MPI_Send_c against MPI_Recv hung forever, and so
 * did mpi4py (which sends with the _c routines and probes with MPI_Probe).
 * Every routine of a pair must reach the same matching, whatever the mix.
 *
 * Ranks are paired (r, r ^ 1); the job size must be even. Sections:
 *  A. each send routine of both families (Send, Ssend, Rsend, Bsend, the
 *     I forms, the persistent forms started with MPI_Start) against each
 *     receive of the other family (Recv, Irecv, Recv_init + Start, Mprobe +
 *     Mrecv, Improbe + Imrecv, Sendrecv, Isendrecv), in both directions,
 *     sizes 8 B, 4 KiB and 300 KiB + 4 B, the receive by specific source
 *     and tag or by MPI_ANY_SOURCE / MPI_ANY_TAG; every message found first
 *     by MPI_Probe or MPI_Iprobe (alternating), MPI_Get_count and
 *     MPI_Get_count_c checked against the size sent.
 *  B. order: 40 messages on one (source, tag), sent alternately with
 *     MPI_Send and MPI_Send_c (and MPI_Isend / MPI_Isend_c), received
 *     alternately with MPI_Recv_c and MPI_Recv: they must arrive in order.
 *  C. MPI_Isendrecv and MPI_Isendrecv_replace (and their _c forms) against
 *     MPI_Sendrecv and MPI_Sendrecv_replace_c, completed by MPI_Wait,
 *     MPI_Test loops and MPI_Waitall, 3 and 5000 ints.
 *  D. one-sided _c routines on windows of every flavour (Win_allocate_c,
 *     Win_create_c over MPI_Alloc_mem memory, Win_allocate_shared_c with
 *     Win_shared_query_c): Put_c, Get_c, Accumulate_c, Get_accumulate_c
 *     and their R forms, under fence and under lock, mixed with the
 *     classic calls on the same window; the window contents afterwards.
 *  E. (2 ranks, P2P_MPI4_LARGE=1: it takes seconds) a count beyond INT_MAX: 2^31 + 24 bytes with
 *     MPI_Send_c of MPI_BYTE, received with MPI_Recv_c; MPI_Get_count gives
 *     MPI_UNDEFINED and MPI_Get_count_c the count; sampled bytes checked.
 *
 * Stock MPICH 4.0.2 leaves the status of a completed MPI_Isendrecv
 * request untouched (source and tag are what the status held before), so
 * the program prints neither.
 *
 * Output: one "rank N: <section> <checksum>" line per section and rank, and
 * "rank N: mpi4 ok". Exits non-zero when a check fails.
 */
#define _GNU_SOURCE
#include "testutil.h"

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC 12 flags
 * in every MPI_Waitall(..., MPI_STATUSES_IGNORE) (see p2p_util.h). */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

#define BIG (300 * 1024 + 4)
#define TAG_A 100

static int rank, size, peer;
static unsigned long long sum_a, sum_b, sum_c, sum_d, sum_e;

static void fill(unsigned char *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
}

static unsigned long long digest(const unsigned char *p, size_t n)
{
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static void check_counts(MPI_Status *st, size_t n, const char *what)
{
    int c = -1;
    MPI_Count cc = -1;
    MPI_Get_count(st, MPI_BYTE, &c);
    MPI_Get_count_c(st, MPI_BYTE, &cc);
    EXPECT(c == (int)n && cc == (MPI_Count)n, "%s: counts %d / %lld, sent %zu", what, c,
           (long long)cc, n);
}

/* ---------------------------------------------------------------- A */

enum { S_SEND, S_SSEND, S_RSEND, S_BSEND, S_ISEND, S_ISSEND, S_IRSEND, S_IBSEND, S_INIT,
       S_SSEND_INIT, S_BSEND_INIT, S_RSEND_INIT, S_COUNT };
static const char *send_names[] = {"send",  "ssend",  "rsend",  "bsend",      "isend",      "issend",
                                   "irsend", "ibsend", "send_init", "ssend_init", "bsend_init", "rsend_init"};
enum { R_RECV, R_IRECV, R_INIT, R_MRECV, R_IMRECV, R_SENDRECV, R_ISENDRECV, R_COUNT };

/* One send of `n` bytes with routine `s`, the MPI-4 form when `c`. */
static void do_send(int s, int c, const void *buf, size_t n, int dest, int tag)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Count cn = (MPI_Count)n;
    int in = (int)n;
    switch (s) {
    case S_SEND: c ? MPI_Send_c(buf, cn, MPI_BYTE, dest, tag, w) : MPI_Send(buf, in, MPI_BYTE, dest, tag, w); return;
    case S_SSEND: c ? MPI_Ssend_c(buf, cn, MPI_BYTE, dest, tag, w) : MPI_Ssend(buf, in, MPI_BYTE, dest, tag, w); return;
    case S_RSEND: c ? MPI_Rsend_c(buf, cn, MPI_BYTE, dest, tag, w) : MPI_Rsend(buf, in, MPI_BYTE, dest, tag, w); return;
    case S_BSEND: c ? MPI_Bsend_c(buf, cn, MPI_BYTE, dest, tag, w) : MPI_Bsend(buf, in, MPI_BYTE, dest, tag, w); return;
    case S_ISEND: c ? MPI_Isend_c(buf, cn, MPI_BYTE, dest, tag, w, &r) : MPI_Isend(buf, in, MPI_BYTE, dest, tag, w, &r); break;
    case S_ISSEND: c ? MPI_Issend_c(buf, cn, MPI_BYTE, dest, tag, w, &r) : MPI_Issend(buf, in, MPI_BYTE, dest, tag, w, &r); break;
    case S_IRSEND: c ? MPI_Irsend_c(buf, cn, MPI_BYTE, dest, tag, w, &r) : MPI_Irsend(buf, in, MPI_BYTE, dest, tag, w, &r); break;
    case S_IBSEND: c ? MPI_Ibsend_c(buf, cn, MPI_BYTE, dest, tag, w, &r) : MPI_Ibsend(buf, in, MPI_BYTE, dest, tag, w, &r); break;
    case S_INIT: c ? MPI_Send_init_c(buf, cn, MPI_BYTE, dest, tag, w, &r) : MPI_Send_init(buf, in, MPI_BYTE, dest, tag, w, &r); break;
    case S_SSEND_INIT: c ? MPI_Ssend_init_c(buf, cn, MPI_BYTE, dest, tag, w, &r) : MPI_Ssend_init(buf, in, MPI_BYTE, dest, tag, w, &r); break;
    case S_BSEND_INIT: c ? MPI_Bsend_init_c(buf, cn, MPI_BYTE, dest, tag, w, &r) : MPI_Bsend_init(buf, in, MPI_BYTE, dest, tag, w, &r); break;
    case S_RSEND_INIT: c ? MPI_Rsend_init_c(buf, cn, MPI_BYTE, dest, tag, w, &r) : MPI_Rsend_init(buf, in, MPI_BYTE, dest, tag, w, &r); break;
    }
    if (s >= S_INIT)
        MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (s >= S_INIT)
        MPI_Request_free(&r);
}

/* One receive of up to `cap` bytes with routine `k`, the MPI-4 form when
 * `c`; the message was found first by a probe (blocking when `blocking`).
 * A Sendrecv or Isendrecv also sends `back` (n bytes) to the source. */
static void do_recv(int k, int c, void *buf, size_t cap, int src, int tag, int wild, int blocking,
                    const void *back, size_t nback, size_t want)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Status st, pst;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Message m = MPI_MESSAGE_NULL;
    int psrc = wild ? MPI_ANY_SOURCE : src, ptag = wild ? MPI_ANY_TAG : tag;
    MPI_Count ccap = (MPI_Count)cap;
    int icap = (int)cap;
    if (k == R_MRECV || k == R_IMRECV) {
        if (k == R_MRECV) {
            MPI_Mprobe(psrc, ptag, w, &m, &pst);
        } else {
            int flag = 0;
            while (!flag)
                MPI_Improbe(psrc, ptag, w, &flag, &m, &pst);
        }
    } else if (k != R_SENDRECV && k != R_ISENDRECV) {
        if (blocking) {
            MPI_Probe(psrc, ptag, w, &pst);
        } else {
            int flag = 0;
            while (!flag)
                MPI_Iprobe(psrc, ptag, w, &flag, &pst);
        }
    }
    if (k != R_SENDRECV && k != R_ISENDRECV) {
        EXPECT(pst.MPI_SOURCE == src && pst.MPI_TAG == tag, "probe: source %d tag %d, want %d %d",
               pst.MPI_SOURCE, pst.MPI_TAG, src, tag);
        check_counts(&pst, want, "probe");
    }
    switch (k) {
    case R_RECV:
        c ? MPI_Recv_c(buf, ccap, MPI_BYTE, psrc, ptag, w, &st) : MPI_Recv(buf, icap, MPI_BYTE, psrc, ptag, w, &st);
        break;
    case R_IRECV:
        c ? MPI_Irecv_c(buf, ccap, MPI_BYTE, psrc, ptag, w, &r) : MPI_Irecv(buf, icap, MPI_BYTE, psrc, ptag, w, &r);
        MPI_Wait(&r, &st);
        break;
    case R_INIT:
        c ? MPI_Recv_init_c(buf, ccap, MPI_BYTE, psrc, ptag, w, &r) : MPI_Recv_init(buf, icap, MPI_BYTE, psrc, ptag, w, &r);
        MPI_Start(&r);
        MPI_Wait(&r, &st);
        MPI_Request_free(&r);
        break;
    case R_MRECV:
        c ? MPI_Mrecv_c(buf, ccap, MPI_BYTE, &m, &st) : MPI_Mrecv(buf, icap, MPI_BYTE, &m, &st);
        break;
    case R_IMRECV:
        c ? MPI_Imrecv_c(buf, ccap, MPI_BYTE, &m, &r) : MPI_Imrecv(buf, icap, MPI_BYTE, &m, &r);
        MPI_Wait(&r, &st);
        break;
    case R_SENDRECV:
        if (c)
            MPI_Sendrecv_c(back, (MPI_Count)nback, MPI_BYTE, src, tag + 1, buf, ccap, MPI_BYTE, psrc, ptag, w, &st);
        else
            MPI_Sendrecv(back, (int)nback, MPI_BYTE, src, tag + 1, buf, icap, MPI_BYTE, psrc, ptag, w, &st);
        break;
    case R_ISENDRECV:
        if (c)
            MPI_Isendrecv_c(back, (MPI_Count)nback, MPI_BYTE, src, tag + 1, buf, ccap, MPI_BYTE, src, tag, w, &r);
        else
            MPI_Isendrecv(back, (int)nback, MPI_BYTE, src, tag + 1, buf, icap, MPI_BYTE, src, tag, w, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        return; /* stock MPICH leaves the status alone (see the header) */
    }
    EXPECT(st.MPI_SOURCE == src && st.MPI_TAG == tag, "recv %d/%d: source %d tag %d, want %d %d", k, c,
           st.MPI_SOURCE, st.MPI_TAG, src, tag);
    check_counts(&st, want, "recv");
}

static void section_a(void)
{
    static const size_t sizes[] = {8, 4096, BIG};
    unsigned char *sbuf = must(malloc(BIG), "malloc", BIG);
    unsigned char *rbuf = must(malloc(BIG), "malloc", BIG);
    unsigned char *back = must(malloc(BIG), "malloc", BIG);
    int bsize = 32 * (BIG + MPI_BSEND_OVERHEAD);
    void *battach = must(malloc(bsize), "malloc", bsize);
    MPI_Buffer_attach(battach, bsize);
    int step = 0;
    int nsend = size > 2 ? S_COUNT / 2 : S_COUNT; /* fewer at 4 ranks */
    for (int dir = 0; dir < 2; dir++) {
        int sender = (rank & 1) == dir;
        for (int s0 = 0; s0 < nsend; s0++) {
            int s = size > 2 ? (s0 * 2 + dir) % S_COUNT : s0;
            for (int k = 0; k < R_COUNT; k++) {
                for (int c = 0; c < 2; c++) {
                    size_t n = sizes[step % 3];
                    int tag = TAG_A + (step % 7) * 2;
                    int wild = step % 2;
                    int ready = (s == S_RSEND || s == S_IRSEND || s == S_RSEND_INIT);
                    step++;
                    /* A ready send needs its receive posted first, which only
                     * the receiving call itself does: run those with a plain
                     * receive posted before a barrier instead. */
                    if (ready) {
                        MPI_Request r = MPI_REQUEST_NULL;
                        MPI_Status st;
                        if (!sender) {
                            if (c)
                                MPI_Irecv_c(rbuf, BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r);
                            else
                                MPI_Irecv(rbuf, BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r);
                        }
                        MPI_Barrier(MPI_COMM_WORLD);
                        if (sender) {
                            fill(sbuf, n, step);
                            do_send(s, !c, sbuf, n, peer, tag);
                        } else {
                            MPI_Wait(&r, &st);
                            check_counts(&st, n, "ready");
                            unsigned char want[64];
                            fill(want, 64, step);
                            EXPECT(memcmp(rbuf, want, n < 64 ? n : 64) == 0, "ready send data");
                            sum_a = sum_a * 31 + digest(rbuf, n);
                        }
                        continue;
                    }
                    if (sender) {
                        fill(sbuf, n, step);
                        if (k == R_SENDRECV || k == R_ISENDRECV) {
                            /* The receiver sends `n` bytes back on tag + 1. */
                            MPI_Request r;
                            MPI_Irecv(back, BIG, MPI_BYTE, peer, tag + 1, MPI_COMM_WORLD, &r);
                            do_send(s, !c, sbuf, n, peer, tag);
                            MPI_Wait(&r, MPI_STATUS_IGNORE);
                            sum_a = sum_a * 31 + digest(back, n);
                        } else {
                            do_send(s, !c, sbuf, n, peer, tag);
                        }
                    } else {
                        fill(back, n, step + 1000);
                        do_recv(k, c, rbuf, BIG, peer, tag, wild, step % 4 < 2, back, n, n);
                        unsigned char want[64];
                        fill(want, 64, step);
                        EXPECT(memcmp(rbuf, want, n < 64 ? n : 64) == 0, "data of send %s/%d recv %d/%d",
                               send_names[s], !c, k, c);
                        sum_a = sum_a * 31 + digest(rbuf, n);
                    }
                }
            }
        }
    }
    void *det;
    int dsize;
    MPI_Buffer_detach(&det, &dsize);
    free(battach);
    free(sbuf);
    free(rbuf);
    free(back);
}

/* ---------------------------------------------------------------- B */

static void section_b(void)
{
    enum { N = 40 };
    int v[N], got[N];
    MPI_Request reqs[N];
    if (rank & 1) {
        for (int i = 0; i < N; i++) {
            v[i] = i * 3 + rank;
            switch (i % 4) {
            case 0: MPI_Send(&v[i], 1, MPI_INT, peer, 7, MPI_COMM_WORLD); reqs[i] = MPI_REQUEST_NULL; break;
            case 1: MPI_Send_c(&v[i], 1, MPI_INT, peer, 7, MPI_COMM_WORLD); reqs[i] = MPI_REQUEST_NULL; break;
            case 2: MPI_Isend(&v[i], 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &reqs[i]); break;
            case 3: MPI_Isend_c(&v[i], 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &reqs[i]); break;
            }
        }
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
    } else {
        for (int i = 0; i < N; i++) {
            if (i % 2)
                MPI_Recv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Recv_c(&got[i], 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            EXPECT(got[i] == i * 3 + peer, "order: message %d is %d", i, got[i]);
            sum_b = sum_b * 31 + (unsigned)got[i];
        }
    }
}

/* ---------------------------------------------------------------- C */

static void section_c(void)
{
    enum { N = 5000 };
    int *a = must(malloc(N * sizeof(int)), "malloc", N * sizeof(int));
    int *b = must(malloc(N * sizeof(int)), "malloc", N * sizeof(int));
    MPI_Request r[2];
    MPI_Status st;
    for (int round = 0; round < 6; round++) {
        int n = round % 2 ? N : 3;
        for (int i = 0; i < n; i++)
            a[i] = rank * 100000 + round * 1000 + i;
        memset(b, 0, N * sizeof(int));
        int odd = rank & 1;
        switch (round) {
        case 0: /* Isendrecv against Sendrecv, Wait */
        case 1:
            if (odd) {
                MPI_Isendrecv(a, n, MPI_INT, peer, 20, b, n, MPI_INT, peer, 21, MPI_COMM_WORLD, &r[0]);
                MPI_Wait(&r[0], MPI_STATUS_IGNORE);
            } else {
                MPI_Sendrecv(a, n, MPI_INT, peer, 21, b, n, MPI_INT, peer, 20, MPI_COMM_WORLD, &st);
            }
            break;
        case 2: /* Isendrecv_c against Isendrecv_c, Test loop */
        case 3: {
            int flag = 0;
            MPI_Isendrecv_c(a, n, MPI_INT, peer, 22, b, n, MPI_INT, MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &r[0]);
            while (!flag)
                MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
            break;
        }
        case 4: /* Isendrecv_replace against Sendrecv_replace_c, Waitall */
        case 5:
            memcpy(b, a, n * sizeof(int));
            if (odd) {
                MPI_Isendrecv_replace(b, n, MPI_INT, peer, 23, peer, 24, MPI_COMM_WORLD, &r[0]);
                r[1] = MPI_REQUEST_NULL;
                MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            } else {
                MPI_Sendrecv_replace_c(b, n, MPI_INT, peer, 24, peer, 23, MPI_COMM_WORLD, &st);
            }
            break;
        }
        for (int i = 0; i < n; i++)
            EXPECT(b[i] == peer * 100000 + round * 1000 + i, "isendrecv round %d: b[%d] = %d", round, i, b[i]);
        sum_c = sum_c * 31 + digest((unsigned char *)b, n * sizeof(int));
    }
    free(a);
    free(b);
}

/* ---------------------------------------------------------------- D */

static void section_d(void)
{
    enum { N = 64 };
    for (int flavour = 0; flavour < 3; flavour++) {
        int *base = NULL;
        MPI_Win win;
        MPI_Aint bytes = N * sizeof(int);
        if (flavour == 0) {
            MPI_Win_allocate_c(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        } else if (flavour == 1) {
            MPI_Alloc_mem(bytes, MPI_INFO_NULL, &base);
            MPI_Win_create_c(base, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else {
            MPI_Win_allocate_shared_c(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
            MPI_Aint qs = -1, qu = -1;
            int *qb = NULL;
            MPI_Win_shared_query_c(win, rank, &qs, &qu, &qb);
            EXPECT(qs == bytes && qu == (MPI_Aint)sizeof(int) && qb == base,
                   "shared_query_c: size %ld unit %ld base %p (mine %p)", (long)qs, (long)qu, (void *)qb,
                   (void *)base);
        }
        for (int i = 0; i < N; i++)
            base[i] = rank * 1000 + i;
        int src[N], res[N], got[N];
        for (int i = 0; i < N; i++)
            src[i] = rank + i;
        MPI_Win_fence(0, win);
        MPI_Put_c(src, 8, MPI_INT, peer, 0, 8, MPI_INT, win);
        MPI_Put(src + 8, 8, MPI_INT, peer, 8, 8, MPI_INT, win);
        MPI_Accumulate_c(src, 8, MPI_INT, peer, 16, 8, MPI_INT, MPI_SUM, win);
        MPI_Accumulate(src, 8, MPI_INT, peer, 16, 8, MPI_INT, MPI_SUM, win);
        MPI_Win_fence(0, win);
        MPI_Get_c(got, 24, MPI_INT, peer, 0, 24, MPI_INT, win);
        MPI_Win_fence(0, win);
        for (int i = 0; i < 16; i++)
            EXPECT(got[i] == rank + i, "put_c flavour %d: %d", flavour, got[i]);
        for (int i = 16; i < 24; i++)
            EXPECT(got[i] == peer * 1000 + i + 2 * (rank + i - 16), "acc_c flavour %d: [%d]=%d", flavour, i, got[i]);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
        MPI_Get_accumulate_c(src, 4, MPI_INT, res, 4, MPI_INT, peer, 32, 4, MPI_INT, MPI_SUM, win);
        MPI_Request rq[4];
        MPI_Rput_c(src, 4, MPI_INT, peer, 40, 4, MPI_INT, win, &rq[0]);
        MPI_Raccumulate_c(src, 4, MPI_INT, peer, 44, 4, MPI_INT, MPI_MAX, win, &rq[1]);
        MPI_Rget_accumulate_c(src, 4, MPI_INT, res + 4, 4, MPI_INT, peer, 48, 4, MPI_INT, MPI_NO_OP, win, &rq[2]);
        MPI_Rget_c(got + 24, 4, MPI_INT, peer, 52, 4, MPI_INT, win, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        MPI_Win_unlock(peer, win);
        for (int i = 0; i < 4; i++) {
            EXPECT(res[i] == peer * 1000 + 32 + i, "get_acc_c flavour %d: %d", flavour, res[i]);
            EXPECT(res[4 + i] == peer * 1000 + 48 + i, "rget_acc_c flavour %d: %d", flavour, res[4 + i]);
            EXPECT(got[24 + i] == peer * 1000 + 52 + i, "rget_c flavour %d: %d", flavour, got[24 + i]);
        }
        MPI_Win_fence(0, win);
        sum_d = sum_d * 31 + digest((unsigned char *)base, bytes);
        MPI_Win_fence(0, win);
        MPI_Win_free(&win);
        if (flavour == 1)
            MPI_Free_mem(base);
    }
}

/* ---------------------------------------------------------------- E */

static void section_e(void)
{
    const char *e = getenv("P2P_MPI4_LARGE");
    if (size != 2 || e == NULL || strcmp(e, "1") != 0)
        return;
    MPI_Count n = (MPI_Count)INT32_MAX + 25;
    unsigned char *p = must(malloc((size_t)n), "malloc", (size_t)n);
    static const size_t at[] = {0, 1, 4096, 1u << 30, (size_t)INT32_MAX - 1, (size_t)INT32_MAX,
                                (size_t)INT32_MAX + 24};
    if (rank == 0) {
        memset(p, 0x5a, (size_t)n);
        for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
            p[at[i]] = (unsigned char)(i + 1);
        MPI_Send_c(p, n, MPI_BYTE, 1, 30, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        memset(p, 0, (size_t)n);
        MPI_Recv_c(p, n, MPI_BYTE, 0, 30, MPI_COMM_WORLD, &st);
        int c = 0;
        MPI_Count cc = 0;
        MPI_Get_count(&st, MPI_BYTE, &c);
        MPI_Get_count_c(&st, MPI_BYTE, &cc);
        EXPECT(c == MPI_UNDEFINED && cc == n, "large: counts %d / %lld", c, (long long)cc);
        for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
            EXPECT(p[at[i]] == (unsigned char)(i + 1), "large: byte %zu is %d", at[i], p[at[i]]);
            sum_e = sum_e * 31 + p[at[i]];
        }
        EXPECT(p[12345] == 0x5a && p[(size_t)n - 2] == 0x5a, "large: filler bytes");
    }
    free(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);
    if (size % 2) {
        if (rank == 0)
            fprintf(stderr, "p2p_mpi4: needs an even number of ranks\n");
        MPI_Finalize();
        return 1;
    }
    peer = rank ^ 1;
    char line[LINE];
    section_a();
    MPI_Barrier(MPI_COMM_WORLD);
    section_b();
    section_c();
    section_d();
    section_e();
    unsigned long long sums[] = {sum_a, sum_b, sum_c, sum_d, sum_e};
    const char *names[] = {"A", "B", "C", "D", "E"};
    for (int i = 0; i < 5; i++) {
        snprintf(line, sizeof line, "rank %d: %s %016llx", rank, names[i], sums[i]);
        print_ordered(line, rank, size);
    }
    print_result("mpi4", rank, size);
    int bad = job_failures();
    MPI_Finalize();
    return bad != 0;
}

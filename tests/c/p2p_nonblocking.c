/*
 * p2p_nonblocking.c - point-to-point conformance: nonblocking sends and
 * receives in every mode, every Wait/Test call over arrays that mix
 * node-local and remote peers with MPI_REQUEST_NULL entries, Request_free,
 * Request_get_status, Sendrecv(_replace), synchronous-send semantics, and
 * 10 000 outstanding requests.
 *
 * Why: heapmpi keeps its own requests for node-local peers and must never
 * hand them to the real MPI, while arrays passed to MPI_Waitany & co. can
 * hold both kinds (with pretend nodes, HEAPMPI_TEST_NODE_SIZE=2 at 4 ranks,
 * some peers are remote and go to the real MPI). Every completion call must
 * complete each request exactly once, fill the statuses of exactly the
 * completed ones, and answer MPI_UNDEFINED / flag=true once nothing is
 * active. A synchronous send must not complete before its receive is posted.
 *
 * Sections:
 *  A. one round per completion call (Waitall with statuses and with
 *     MPI_STATUSES_IGNORE, Waitany, Waitsome, Testall, Testany, Testsome,
 *     Test): every rank posts 4 Irecv per peer (REQUEST_NULL entries between
 *     the peers), a barrier, then Isend, Issend, Ibsend (MPI_Buffer_attach)
 *     and Irsend to every peer (0 B .. 300 KB, different per round);
 *     completions counted and statuses and contents checked; then the call
 *     on the now all-null array (MPI_UNDEFINED, flag true, empty statuses);
 *  B. MPI_Request_free on active sends (8 B and 256 KiB): the message still
 *     arrives intact; the buffer is freed after an acknowledgement;
 *  C. MPI_Request_get_status: flag 0 while the sender cannot have sent
 *     (it waits for a barrier), then 1 with the right status without freeing
 *     the request; on MPI_REQUEST_NULL: flag 1;
 *  D. Sendrecv and Sendrecv_replace around the ring in both directions
 *     (8 B .. 1 MiB), with MPI_ANY_SOURCE, and with oneself;
 *  E. synchronous sends: an Issend (8 B and 1 MiB) polled with MPI_Test for
 *     a while is not complete until the receiver posts its receive after a
 *     barrier; a blocking Ssend does not return (the sender's next message
 *     is not there to MPI_Iprobe) until the receive is posted; pairs
 *     rank^1 and (4+ ranks) rank^2;
 *  F. 10 000 outstanding Irecv + Isend pairs (half the receives posted
 *     before the sends, half after) completed by one Waitall.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: nonblocking ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2p_util.h"

#define MIB (1 << 20)
#define NMODE 4 /* Isend, Issend, Ibsend, Irsend */

static uint64_t seed_of(int src, int dst, int tag)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 36) ^ (uint64_t)tag;
}

static int is_empty_status(const MPI_Status *st)
{
    int c = -1;
    MPI_Get_count(st, MPI_BYTE, &c);
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG &&
           c == 0;
}

/* ---- A: completion calls over mixed arrays ---- */

enum {
    M_WAITALL,
    M_WAITALL_IGNORE,
    M_WAITANY,
    M_WAITSOME,
    M_TESTALL,
    M_TESTANY,
    M_TESTSOME,
    M_TEST,
    NMETHOD
};
static const char *method_name[NMETHOD] = {
    "Waitall", "Waitall(STATUSES_IGNORE)", "Waitany", "Waitsome",
    "Testall", "Testany", "Testsome", "Test"};

static const size_t ROUND_SIZES[5] = {0, 8, 1000, 40000, 300000};

struct entry {
    int is_recv;
    int peer;
    int tag;
    size_t size;
    unsigned char *buf;
    int done;       /* times completed */
    int status_ok;  /* receive status checked and right */
};

/* The request at index i completed with status st (NULL: not available). */
static void completed(struct entry *e, int i, const MPI_Status *st,
                      const char *how)
{
    e[i].done++;
    CHECK(e[i].done == 1, "%s: request %d completed %d times", how, i, e[i].done);
    if (!e[i].is_recv || st == NULL)
        return;
    int c = -1;
    MPI_Get_count(st, MPI_BYTE, &c);
    e[i].status_ok = st->MPI_SOURCE == e[i].peer && st->MPI_TAG == e[i].tag &&
                     c == (int)e[i].size;
    CHECK(e[i].status_ok, "%s: request %d: status source %d tag %d count %d, "
          "expected %d %d %zu", how, i, st->MPI_SOURCE, st->MPI_TAG, c,
          e[i].peer, e[i].tag, e[i].size);
}

static void complete_all(int method, int n, MPI_Request *reqs, struct entry *e)
{
    const char *how = method_name[method];
    MPI_Status *sts = must(calloc((size_t)n, sizeof *sts), "calloc", 0);
    int *idx = must(calloc((size_t)n, sizeof *idx), "calloc", 0);
    int active = 0;
    for (int i = 0; i < n; i++)
        active += reqs[i] != MPI_REQUEST_NULL;
    switch (method) {
    case M_WAITALL:
        memset(sts, 0x4d, (size_t)n * sizeof *sts);
        MPI_OK(MPI_Waitall(n, reqs, sts));
        for (int i = 0; i < n; i++) {
            if (e[i].peer >= 0)
                completed(e, i, &sts[i], how);
            else
                CHECK(is_empty_status(&sts[i]),
                      "Waitall: status of null entry %d not empty (source %d "
                      "tag %d)", i, sts[i].MPI_SOURCE, sts[i].MPI_TAG);
        }
        break;
    case M_WAITALL_IGNORE:
        MPI_OK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++)
            if (e[i].peer >= 0)
                completed(e, i, NULL, how);
        break;
    case M_WAITANY:
        for (;;) {
            int k = -1;
            MPI_Status st;
            MPI_OK(MPI_Waitany(n, reqs, &k, &st));
            if (k == MPI_UNDEFINED)
                break;
            if (k < 0 || k >= n || e[k].peer < 0) {
                CHECK(0, "Waitany returned index %d", k);
                break;
            }
            CHECK(reqs[k] == MPI_REQUEST_NULL, "Waitany left request %d", k);
            completed(e, k, &st, how);
        }
        break;
    case M_WAITSOME:
        for (;;) {
            int out = -1;
            MPI_OK(MPI_Waitsome(n, reqs, &out, idx, sts));
            if (out == MPI_UNDEFINED)
                break;
            CHECK(out >= 1 && out <= n, "Waitsome outcount %d", out);
            if (out < 1 || out > n)
                break;
            for (int j = 0; j < out; j++) {
                int k = idx[j];
                if (k < 0 || k >= n || e[k].peer < 0) {
                    CHECK(0, "Waitsome returned index %d", k);
                    continue;
                }
                completed(e, k, &sts[j], how);
            }
        }
        break;
    case M_TESTALL:
        for (;;) {
            int flag = 0;
            MPI_OK(MPI_Testall(n, reqs, &flag, sts));
            if (flag) {
                for (int i = 0; i < n; i++)
                    if (e[i].peer >= 0)
                        completed(e, i, &sts[i], how);
                break;
            }
            for (int i = 0; i < n; i++)
                CHECK(e[i].peer < 0 || reqs[i] != MPI_REQUEST_NULL,
                      "Testall with flag 0 freed request %d", i);
        }
        break;
    case M_TESTANY:
        for (;;) {
            int k = -1, flag = 0;
            MPI_Status st;
            MPI_OK(MPI_Testany(n, reqs, &k, &flag, &st));
            if (!flag) {
                CHECK(k == MPI_UNDEFINED, "Testany flag 0 with index %d", k);
                continue;
            }
            if (k == MPI_UNDEFINED)
                break;
            if (k < 0 || k >= n || e[k].peer < 0) {
                CHECK(0, "Testany returned index %d", k);
                break;
            }
            completed(e, k, &st, how);
        }
        break;
    case M_TESTSOME:
        for (;;) {
            int out = -1;
            MPI_OK(MPI_Testsome(n, reqs, &out, idx, sts));
            if (out == MPI_UNDEFINED)
                break;
            CHECK(out >= 0 && out <= n, "Testsome outcount %d", out);
            if (out < 0 || out > n)
                break;
            for (int j = 0; j < out; j++) {
                int k = idx[j];
                if (k < 0 || k >= n || e[k].peer < 0) {
                    CHECK(0, "Testsome returned index %d", k);
                    continue;
                }
                completed(e, k, &sts[j], how);
            }
        }
        break;
    case M_TEST:
        for (int left = active; left > 0;) {
            for (int i = 0; i < n; i++) {
                if (reqs[i] == MPI_REQUEST_NULL)
                    continue;
                int flag = 0;
                MPI_Status st;
                MPI_OK(MPI_Test(&reqs[i], &flag, &st));
                if (flag) {
                    CHECK(reqs[i] == MPI_REQUEST_NULL, "Test left request %d", i);
                    completed(e, i, &st, how);
                    left--;
                }
            }
        }
        break;
    }
    free(sts);
    free(idx);
}

/* The answers of the completion calls for an array with nothing active. */
static void all_null_answers(int n, MPI_Request *reqs)
{
    MPI_Status *sts = must(calloc((size_t)n, sizeof *sts), "calloc", 0);
    int *idx = must(calloc((size_t)n, sizeof *idx), "calloc", 0);
    int k = -5, flag = -5, outc = -5, empty = 0;
    MPI_Status st;
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Waitany(n, reqs, &k, &st));
    CHECK(k == MPI_UNDEFINED, "Waitany on nothing active: index %d", k);
    empty += is_empty_status(&st);
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Testany(n, reqs, &k, &flag, &st));
    CHECK(k == MPI_UNDEFINED && flag, "Testany on nothing active: index %d flag %d",
          k, flag);
    empty += is_empty_status(&st);
    MPI_OK(MPI_Waitsome(n, reqs, &outc, idx, sts));
    CHECK(outc == MPI_UNDEFINED, "Waitsome on nothing active: outcount %d", outc);
    outc = -5;
    MPI_OK(MPI_Testsome(n, reqs, &outc, idx, sts));
    CHECK(outc == MPI_UNDEFINED, "Testsome on nothing active: outcount %d", outc);
    flag = -5;
    memset(sts, 0x4d, (size_t)n * sizeof *sts);
    MPI_OK(MPI_Testall(n, reqs, &flag, sts));
    CHECK(flag == 1, "Testall on nothing active: flag %d", flag);
    int all_empty = 1;
    for (int i = 0; i < n; i++)
        all_empty &= is_empty_status(&sts[i]);
    memset(sts, 0x4d, (size_t)n * sizeof *sts);
    MPI_OK(MPI_Waitall(n, reqs, sts));
    for (int i = 0; i < n; i++)
        all_empty &= is_empty_status(&sts[i]);
    CHECK(all_empty, "Testall/Waitall on nothing active: a status is not empty");
    memset(&st, 0x4d, sizeof st);
    flag = -5;
    MPI_OK(MPI_Test(&reqs[0], &flag, &st));
    CHECK(flag == 1, "Test on MPI_REQUEST_NULL: flag %d", flag);
    empty += is_empty_status(&st);
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Wait(&reqs[0], &st));
    empty += is_empty_status(&st);
    CHECK(empty == 4, "%d of 4 single statuses empty on nothing active", empty);
    out("A nothing active: Waitany/Testany index %s, Waitsome/Testsome outcount "
        "%s, Testall flag %d, statuses %s",
        k == MPI_UNDEFINED ? "MPI_UNDEFINED" : "WRONG",
        outc == MPI_UNDEFINED ? "MPI_UNDEFINED" : "WRONG", flag,
        empty == 4 && all_empty ? "empty" : "NOT EMPTY");
    free(sts);
    free(idx);
}

static void completion_rounds(int rank, int size)
{
    int npeer = size - 1;
    /* per peer: 4 receives + 1 null + 4 sends */
    int cap = npeer * (2 * NMODE + 1) + 1;
    MPI_Request *reqs = must(calloc((size_t)cap, sizeof *reqs), "calloc", 0);
    struct entry *e = must(calloc((size_t)cap, sizeof *e), "calloc", 0);
    for (int method = 0; method < NMETHOD; method++) {
        section(method_name[method]);
        int n = 0;
        memset(e, 0, (size_t)cap * sizeof *e);
        reqs[n] = MPI_REQUEST_NULL;
        e[n++].peer = -1;
        for (int i = 1; i < size; i++) {
            int src = (rank - i + size) % size;
            for (int m = 0; m < NMODE; m++) {
                struct entry *x = &e[n];
                x->is_recv = 1;
                x->peer = src;
                x->tag = 1000 * method + m;
                x->size = ROUND_SIZES[(method + m + src) % 5];
                x->buf = must(malloc(x->size + 1), "malloc", x->size + 1);
                MPI_OK(MPI_Irecv(x->buf, (int)x->size, MPI_BYTE, src, x->tag,
                                 MPI_COMM_WORLD, &reqs[n]));
                n++;
            }
            reqs[n] = MPI_REQUEST_NULL;
            e[n++].peer = -1;
        }
        /* Irsend needs the receives posted everywhere. */
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 1; i < size; i++) {
            int dst = (rank + i) % size;
            for (int m = 0; m < NMODE; m++) {
                struct entry *x = &e[n];
                x->peer = dst;
                x->tag = 1000 * method + m;
                x->size = ROUND_SIZES[(method + m + rank) % 5];
                x->buf = must(malloc(x->size + 1), "malloc", x->size + 1);
                wpattern_fill(x->buf, x->size, seed_of(rank, dst, x->tag));
                int cnt = (int)x->size;
                switch (m) {
                case 0:
                    MPI_OK(MPI_Isend(x->buf, cnt, MPI_BYTE, dst, x->tag,
                                     MPI_COMM_WORLD, &reqs[n]));
                    break;
                case 1:
                    MPI_OK(MPI_Issend(x->buf, cnt, MPI_BYTE, dst, x->tag,
                                      MPI_COMM_WORLD, &reqs[n]));
                    break;
                case 2:
                    MPI_OK(MPI_Ibsend(x->buf, cnt, MPI_BYTE, dst, x->tag,
                                      MPI_COMM_WORLD, &reqs[n]));
                    break;
                default:
                    MPI_OK(MPI_Irsend(x->buf, cnt, MPI_BYTE, dst, x->tag,
                                      MPI_COMM_WORLD, &reqs[n]));
                    break;
                }
                n++;
            }
        }
        complete_all(method, n, reqs, e);
        int nonnull = 0, done = 0, recvs = 0, good = 0;
        for (int i = 0; i < n; i++) {
            if (e[i].peer < 0)
                continue;
            nonnull++;
            done += e[i].done == 1;
            CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not freed", i);
            if (e[i].is_recv) {
                recvs++;
                char what[64];
                snprintf(what, sizeof what, "receive %d from %d tag %d", i,
                         e[i].peer, e[i].tag);
                if (wpattern_check(e[i].buf, e[i].size,
                                   seed_of(e[i].peer, rank, e[i].tag), what) &&
                    (method == M_WAITALL_IGNORE || e[i].status_ok))
                    good++;
            }
            free(e[i].buf);
        }
        out("A %s: %d of %d requests completed once (%d null entries), "
            "%d of %d receives right", method_name[method], done, nonnull,
            n - nonnull, good, recvs);
        if (method == NMETHOD - 1)
            all_null_answers(n, reqs);
    }
    free(reqs);
    free(e);
}

/* ---- B: Request_free on active sends ---- */

static void request_free_active(int rank, int size)
{
    section("B Request_free");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    static const size_t sizes[2] = {8, 256 * 1024};
    int good = 0;
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k];
        int tag = 2000 + k;
        unsigned char *sb = must(malloc(n), "malloc", n);
        unsigned char *rb = must(malloc(n), "malloc", n);
        wpattern_fill(sb, n, seed_of(rank, right, tag));
        MPI_Request r;
        MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "Request_free did not null the handle");
        MPI_Status st;
        MPI_OK(MPI_Recv(rb, (int)n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st));
        if (wpattern_check(rb, n, seed_of(left, rank, tag), "freed send's message"))
            good++;
        /* The acknowledgement: our message arrived, the sender may reuse
         * its buffer. */
        MPI_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, left, tag + 10, NULL, 0, MPI_BYTE,
                            right, tag + 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        free(sb);
        free(rb);
    }
    out("B Request_free on active sends: %d of 2 messages arrived intact", good);
}

/* ---- C: Request_get_status ---- */

static void request_get_status(int rank, int size)
{
    section("C Request_get_status");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int sb[16], rb[16];
    for (int i = 0; i < 16; i++) {
        sb[i] = rank * 100 + i;
        rb[i] = -1;
    }
    MPI_Request r;
    MPI_OK(MPI_Irecv(rb, 16, MPI_INT, left, 3000, MPI_COMM_WORLD, &r));
    int flag = -1;
    MPI_Status st;
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    int early = flag;
    CHECK(flag == 0, "Request_get_status says complete before anything was sent");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request s;
    MPI_OK(MPI_Isend(sb, 16, MPI_INT, right, 3000, MPI_COMM_WORLD, &s));
    do {
        memset(&st, 0x4d, sizeof st);
        MPI_OK(MPI_Request_get_status(r, &flag, &st));
    } while (!flag);
    CHECK(r != MPI_REQUEST_NULL, "Request_get_status freed the request");
    int c = -1;
    MPI_Get_count(&st, MPI_INT, &c);
    int ok1 = st.MPI_SOURCE == left && st.MPI_TAG == 3000 && c == 16;
    CHECK(ok1, "Request_get_status status source %d tag %d count %d",
          st.MPI_SOURCE, st.MPI_TAG, c);
    MPI_Status st2;
    MPI_OK(MPI_Wait(&r, &st2));
    MPI_Get_count(&st2, MPI_INT, &c);
    int ok2 = st2.MPI_SOURCE == left && st2.MPI_TAG == 3000 && c == 16;
    CHECK(ok2, "Wait after Request_get_status: source %d tag %d count %d",
          st2.MPI_SOURCE, st2.MPI_TAG, c);
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    int bad = 0;
    for (int i = 0; i < 16; i++)
        bad += rb[i] != left * 100 + i;
    CHECK(bad == 0, "%d wrong ints", bad);
    MPI_Request nul = MPI_REQUEST_NULL;
    flag = -1;
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Request_get_status(nul, &flag, &st));
    CHECK(flag == 1 && is_empty_status(&st),
          "Request_get_status(MPI_REQUEST_NULL): flag %d source %d tag %d", flag,
          st.MPI_SOURCE, st.MPI_TAG);
    out("C Request_get_status: before send flag %d, then status %s, Wait %s, "
        "data %s; on REQUEST_NULL flag %d status %s", early,
        ok1 ? "right" : "WRONG", ok2 ? "right" : "WRONG",
        bad ? "WRONG" : "right", flag, is_empty_status(&st) ? "empty" : "NOT EMPTY");
}

/* ---- D: Sendrecv, Sendrecv_replace ---- */

static void sendrecv(int rank, int size)
{
    section("D Sendrecv");
    static const size_t sizes[3] = {8, 65536, MIB};
    int good = 0, total = 0;
    for (int k = 0; k < 3; k++) {
        size_t n = sizes[k];
        unsigned char *sb = must(malloc(n), "malloc", n);
        unsigned char *rb = must(malloc(n), "malloc", n);
        for (int dir = 0; dir < 3; dir++) {
            /* dir 0: to the right, 1: to the left, 2: to oneself */
            int dst = dir == 0 ? (rank + 1) % size
                    : dir == 1 ? (rank - 1 + size) % size : rank;
            int src = dir == 0 ? (rank - 1 + size) % size
                    : dir == 1 ? (rank + 1) % size : rank;
            int tag = 4000 + 10 * k + dir;
            wpattern_fill(sb, n, seed_of(rank, dst, tag));
            MPI_Status st;
            /* the receive side uses MPI_ANY_SOURCE in the first direction */
            MPI_OK(MPI_Sendrecv(sb, (int)n, MPI_BYTE, dst, tag, rb, (int)n,
                                MPI_BYTE, dir == 0 ? MPI_ANY_SOURCE : src, tag,
                                MPI_COMM_WORLD, &st));
            int c = -1;
            MPI_Get_count(&st, MPI_BYTE, &c);
            CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag && c == (int)n,
                  "Sendrecv %zu B dir %d: status %d %d %d", n, dir, st.MPI_SOURCE,
                  st.MPI_TAG, c);
            total++;
            if (wpattern_check(rb, n, seed_of(src, rank, tag), "Sendrecv") &&
                st.MPI_SOURCE == src)
                good++;
            /* Sendrecv_replace: the same exchange in place. */
            wpattern_fill(sb, n, seed_of(rank, dst, tag + 5));
            MPI_OK(MPI_Sendrecv_replace(sb, (int)n, MPI_BYTE, dst, tag + 5, src,
                                        tag + 5, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &c);
            CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag + 5 && c == (int)n,
                  "Sendrecv_replace %zu B dir %d: status %d %d %d", n, dir,
                  st.MPI_SOURCE, st.MPI_TAG, c);
            total++;
            if (wpattern_check(sb, n, seed_of(src, rank, tag + 5),
                               "Sendrecv_replace"))
                good++;
        }
        free(sb);
        free(rb);
    }
    out("D Sendrecv/Sendrecv_replace: %d of %d exchanges right", good, total);
}

/* ---- E: synchronous sends complete only once matched ---- */

static void issend_not_early(int rank, int size)
{
    section("E Issend");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    size_t n[2] = {8, MIB};
    unsigned char *sb[2], *rb[2];
    MPI_Request r[2];
    for (int k = 0; k < 2; k++) {
        sb[k] = must(malloc(n[k]), "malloc", n[k]);
        rb[k] = must(malloc(n[k]), "malloc", n[k]);
        wpattern_fill(sb[k], n[k], seed_of(rank, right, 5000 + k));
        MPI_OK(MPI_Issend(sb[k], (int)n[k], MPI_BYTE, right, 5000 + k,
                          MPI_COMM_WORLD, &r[k]));
    }
    int early = 0;
    for (int it = 0; it < 100; it++) {
        for (int k = 0; k < 2; k++) {
            int flag = 0;
            MPI_Status st;
            MPI_Request q = r[k];
            MPI_OK(MPI_Request_get_status(q, &flag, &st));
            early += flag;
            if (!flag && it % 2 == 0) {
                MPI_OK(MPI_Test(&r[k], &flag, &st));
                early += flag;
            }
        }
        usleep(200);
        if (early)
            break;
    }
    CHECK(early == 0, "an Issend completed before its receive was posted");
    MPI_Barrier(MPI_COMM_WORLD);
    int good = 0;
    for (int k = 0; k < 2; k++) {
        MPI_OK(MPI_Recv(rb[k], (int)n[k], MPI_BYTE, left, 5000 + k,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        good += wpattern_check(rb[k], n[k], seed_of(left, rank, 5000 + k),
                               "Issend message");
    }
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 2; k++) {
        free(sb[k]);
        free(rb[k]);
    }
    out("E Issend 8 B and 1 MiB: %s before the receive was posted, %d of 2 "
        "delivered", early ? "COMPLETED" : "not complete", good);
}

/* In the pair (a, b), a < b: a does a blocking Ssend and then a plain Send;
 * b polls with MPI_Iprobe for the plain one for a while (it must not be
 * there: a is still inside MPI_Ssend), then receives both. Then the roles
 * swap. */
static void ssend_blocks(int rank, int size)
{
    section("E Ssend");
    int masks[2] = {1, 2};
    int nmask = size >= 4 ? 2 : 1;
    for (int mi = 0; mi < nmask; mi++) {
        int partner = rank ^ masks[mi];
        int seen = 0, good = 0, active = partner < size;
        for (int swap = 0; swap < 2; swap++) {
            int sender = active && ((rank < partner) ^ swap);
            int tag = 5100 + 10 * mi + 2 * swap;
            unsigned char *buf = must(malloc(MIB), "malloc", MIB);
            if (!active) {
                /* no partner (odd size): nothing */
            } else if (sender) {
                wpattern_fill(buf, MIB, seed_of(rank, partner, tag));
                MPI_OK(MPI_Ssend(buf, MIB, MPI_BYTE, partner, tag, MPI_COMM_WORLD));
                int after = 77;
                MPI_OK(MPI_Send(&after, 1, MPI_INT, partner, tag + 1, MPI_COMM_WORLD));
            } else {
                for (int it = 0; it < 100 && !seen; it++) {
                    int flag = 0;
                    MPI_OK(MPI_Iprobe(partner, tag + 1, MPI_COMM_WORLD, &flag,
                                      MPI_STATUS_IGNORE));
                    seen |= flag;
                    usleep(200);
                }
                CHECK(!seen, "the message sent after MPI_Ssend arrived before "
                      "the Ssend's receive was posted");
                MPI_OK(MPI_Recv(buf, MIB, MPI_BYTE, partner, tag, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                good += wpattern_check(buf, MIB, seed_of(partner, rank, tag),
                                       "Ssend message");
                int after = 0;
                MPI_OK(MPI_Recv(&after, 1, MPI_INT, partner, tag + 1,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(after == 77, "message after Ssend: %d", after);
            }
            free(buf);
        }
        if (active)
            out("E Ssend with rank^%d: %s returned before the receive, %d of 1 "
                "delivered", masks[mi], seen ? "RETURNED" : "not", good);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* ---- F: 10 000 outstanding requests ---- */

#define NOUT 10000
static void many_outstanding(int rank, int size)
{
    section("F 10000 outstanding");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    MPI_Request *reqs = must(calloc(2 * NOUT, sizeof *reqs), "calloc", 0);
    int (*sb)[2] = must(calloc(NOUT, sizeof *sb), "calloc", 0);
    int (*rb)[2] = must(calloc(NOUT, sizeof *rb), "calloc", 0);
    for (int i = 0; i < NOUT / 2; i++)
        MPI_OK(MPI_Irecv(rb[i], 2, MPI_INT, left, 6000, MPI_COMM_WORLD, &reqs[i]));
    for (int i = 0; i < NOUT; i++) {
        sb[i][0] = rank;
        sb[i][1] = i;
        MPI_OK(MPI_Isend(sb[i], 2, MPI_INT, right, 6000, MPI_COMM_WORLD,
                         &reqs[NOUT + i]));
    }
    for (int i = NOUT / 2; i < NOUT; i++)
        MPI_OK(MPI_Irecv(rb[i], 2, MPI_INT, left, 6000, MPI_COMM_WORLD, &reqs[i]));
    MPI_OK(MPI_Waitall(2 * NOUT, reqs, MPI_STATUSES_IGNORE));
    int bad = 0;
    for (int i = 0; i < NOUT; i++)
        if (rb[i][0] != left || rb[i][1] != i) {
            if (bad == 0)
                CHECK(0, "receive %d got (%d, %d)", i, rb[i][0], rb[i][1]);
            bad++;
        }
    out("F %d outstanding Irecv+Isend pairs, one Waitall: %d wrong", NOUT, bad);
    free(reqs);
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    /* Room for the Ibsends of one round: at most 3 peers x 300 KB. */
    int bsize = 4 * MIB + 64 * MPI_BSEND_OVERHEAD;
    void *bbuf = must(malloc((size_t)bsize), "malloc", (size_t)bsize);
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));
    completion_rounds(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    request_free_active(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    request_get_status(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    sendrecv(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    issend_not_early(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    ssend_blocks(rank, size);
    many_outstanding(rank, size);
    void *det = NULL;
    int dsize = 0;
    MPI_OK(MPI_Buffer_detach(&det, &dsize));
    CHECK(det == bbuf && dsize == bsize, "Buffer_detach gave %p/%d", det, dsize);
    free(bbuf);
    return p2p_finish("nonblocking", rank, size);
}

/*
 * p2p_thread_stress.c - point-to-point reliability: long message streams
 * from several threads at once under MPI_THREAD_MULTIPLE.
 *
 * Why: p2p_threads.c checks that a few rounds per thread come out right;
 * this program keeps every thread of every rank sending and receiving for
 * 100 000 messages per rank, so that rare races in heapmpi's queues, fast
 * boxes, request pool and progress engine (a message lost, delivered twice,
 * overtaken by a later one of its stream, or mixed up with another
 * thread's) have a chance to show, with the ways of communicating that
 * real programs use mixed in. heapmpi must also keep providing
 * MPI_THREAD_MULTIPLE (the provided level is printed and compared with the
 * stock run).
 *
 * Every rank runs NT (4) threads. Thread t sends a stream of NMSG (25 000)
 * messages to its right ring neighbour and receives the stream of its left
 * neighbour's thread t (NT x NMSG = 100 000 messages received per rank).
 * Every message is a 16-byte header (source rank, thread, sequence number,
 * payload length) and a payload whose length is a function of (source,
 * thread, sequence): mostly 0 .. 2 KiB, about 1 in 100 between 2 KiB and
 * 64 KiB + 64 B, and 1 in 200 exactly on either side of heapmpi's inline
 * (2 KiB) and eager (64 KiB) limits; its bytes are a pattern keyed by
 * (source, thread, sequence).
 *
 * A stream is cut into blocks; the block plan is a function of (thread,
 * block), so sender and receiver agree on it. A block travels either on
 * MPI_COMM_WORLD with tag t, or on the thread's private communicator (one
 * MPI_Comm_dup per thread, made before the threads start) with a tag that
 * varies per message; and one of five ways:
 *  0. Irecv window + Isend window of 4 .. 16 messages (some Issend), one
 *     Waitall;
 *  1. the same, completed by a Testsome, Testany or Testall loop that
 *     yields the processor when nothing completed;
 *  2. Irecv window, then blocking Send (some Ssend) one by one, then the
 *     receives completed by Waitall or a Waitsome loop;
 *  3. Isend window (some Issend), then blocking Recv one by one, then
 *     Waitall of the sends;
 *  4. blocking only, 1 or 2 messages: even ranks Send (some Ssend) then
 *     Recv, odd ranks Recv then Send (deadlock-free in a ring of 2 or more).
 * About 95 % of the blocks go way 1 and a few hundred per rank each of the
 * other ways (see plan(): a stock MPI with 4 threads per rank on 2 cores
 * takes tens of milliseconds for each blocking wait, heapmpi does not).
 * Receives alternate between an explicit source and MPI_ANY_SOURCE; on the
 * private communicator every third one is MPI_ANY_SOURCE + MPI_ANY_TAG (on
 * MPI_COMM_WORLD MPI_ANY_TAG is never used: which thread's message it would
 * get is up to the timing).
 *
 * What is checked, per message: the status (source, tag, count) and the
 * header are exactly those of the next message of the stream (so none is
 * lost, duplicated, or overtaken: receives are posted in sequence order and
 * MPI's non-overtaking rule fixes which message each one gets), and every
 * payload byte. After the streams (and a barrier), no stray message is
 * waiting on any of the communicators. If MPI_THREAD_MULTIPLE is not
 * provided, the program says so and runs the NT streams one after the
 * other in the main thread.
 *
 * Output (stdout, rank 0, rank order): the provided thread level, per rank
 * the received and sent message and byte counts, the blocks per way and
 * completion call, and the stray message count, then "rank N: threadstress
 * ok". Exit status 0 on success, 1 on a failed check (details on stderr,
 * the first MAX_REPORTS per thread in full), 4 from the watchdog on a hang.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole program takes seconds; the watchdog only turns a hang into a
 * readable failure before the harness's 120 s timeout. */
#define P2P_WATCHDOG_SECONDS 100
#include "p2p_util.h"

#define NT 4
#define NMSG 25000
#define WIN 16
#define NWAYS 5
#define NKINDS 8
#define HDR 16
#define MAXPAY (64 * 1024 + 64)
#define BUFSZ (HDR + MAXPAY)
/* Failed checks reported in full per thread (the rest are only counted). */
#define MAX_REPORTS 10

static int g_me, g_size, g_left, g_right;
static MPI_Comm g_priv[NT];

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Payload bytes of message `seq` of thread t's stream from rank src. */
static size_t pay_len(int src, int t, int seq)
{
    static const size_t edges[6] = {2048 - HDR, 2048 - HDR + 1, 2048,
                                    65536 - HDR, 65536 - HDR + 1, 65536};
    uint64_t h = mix64(((uint64_t)src << 48) ^ ((uint64_t)t << 32) ^
                       (uint64_t)(uint32_t)seq);
    switch (h % 199) {
    case 0:
    case 1:
        return 2049 + (size_t)((h >> 16) % (MAXPAY - 2049 + 1));
    case 2:
        return edges[(h >> 16) % 6];
    default:
        return (size_t)((h >> 16) % 2049);
    }
}

static uint64_t pay_seed(int src, int t, int seq)
{
    return ((uint64_t)src << 40) ^ ((uint64_t)t << 32) ^ (uint64_t)(uint32_t)seq;
}

/* Tag of message `seq` of thread t on the private communicator. */
static int priv_tag(int seq)
{
    return 100 + (seq * 7) % 23;
}

/* The plan of block k of thread t's stream. */
struct block {
    int len;     /* messages: 1 .. WIN */
    int way;     /* 0 .. NWAYS-1, see the header */
    int priv;    /* on the thread's private communicator */
    int variant; /* way 1: Testsome, Testany or Testall; way 2: Waitall or
                  * Waitsome */
};

static struct block plan(int t, int k)
{
    /* Blocks per mille per way. Nearly all blocks complete by polling
     * (way 1, yielding the processor between polls): a stock MPI running 4
     * threads per rank on 2 cores spins in every blocking call until the
     * scheduler runs the peer thread, which costs it tens of milliseconds
     * per wait (two per message in way 4; MPICH at 4 ranks is the slowest).
     * The blocking ways are kept to a few hundred blocks per rank so that
     * the stock reference runs stay around 10 s even on a loaded machine. */
    static const int permille[NWAYS] = {20, 955, 10, 10, 5};
    uint64_t h = mix64(((uint64_t)(t + 1) << 40) ^ (uint64_t)k ^ 0x51ull << 56);
    struct block b;
    int w = (int)((h >> 8) % 1000);
    b.way = 0;
    while (w >= permille[b.way]) {
        w -= permille[b.way];
        b.way++;
    }
    /* windows of 4 .. WIN messages; way 4 goes message by message: 1 or 2 */
    b.len = b.way == 4 ? 1 + (int)(h % 2) : 4 + (int)(h % (WIN - 3));
    b.priv = (h >> 16) % 3 == 0;
    b.variant = (int)((h >> 24) % 3);
    return b;
}

struct worker {
    int t;
    long received, good, sent;
    long long rbytes, sbytes;
    long kinds[NKINDS]; /* blocks per way and completion call */
    int reports;
    unsigned char *sbuf[WIN], *rbuf[WIN];
};

/* A failed check of thread w: reported in full MAX_REPORTS times, then only
 * counted. */
#define WCHECK(w, cond, ...)                                            \
    do {                                                                \
        if (!(cond)) {                                                  \
            if ((w)->reports++ < MAX_REPORTS)                           \
                CHECK(0, __VA_ARGS__);                                  \
            else                                                        \
                __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);   \
        }                                                               \
    } while (0)

struct hdr {
    int32_t src, thread, seq;
    uint32_t len;
};

/* Fills send buffer b with message `seq` of this rank's thread t stream;
 * returns its size in bytes. */
static int fill_msg(unsigned char *b, int t, int seq)
{
    size_t n = pay_len(g_me, t, seq);
    struct hdr h = {g_me, t, seq, (uint32_t)n};
    memcpy(b, &h, HDR);
    wpattern_fill(b + HDR, n, pay_seed(g_me, t, seq));
    return (int)(HDR + n);
}

/* Checks that receive buffer b / status st hold message `seq` of the left
 * neighbour's thread t stream. */
static void check_msg(struct worker *w, const unsigned char *b, const MPI_Status *st,
                      int seq, int priv)
{
    int t = w->t;
    size_t n = pay_len(g_left, t, seq);
    int tag = priv ? priv_tag(seq) : t;
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    w->received++;
    int ok = st->MPI_SOURCE == g_left && st->MPI_TAG == tag &&
             count == (int)(HDR + n);
    WCHECK(w, ok,
           "thread %d seq %d (%s): status source %d tag %d count %d, expected "
           "%d %d %zu",
           t, seq, priv ? "private comm" : "world", st->MPI_SOURCE, st->MPI_TAG,
           count, g_left, tag, HDR + n);
    if (count < HDR)
        return;
    struct hdr h;
    memcpy(&h, b, HDR);
    int hok = h.src == g_left && h.thread == t && h.seq == seq && h.len == n;
    WCHECK(w, hok,
           "thread %d: expected message %d of rank %d thread %d (%zu payload "
           "bytes), got message %d of rank %d thread %d (%u bytes): %s",
           t, seq, g_left, t, n, (int)h.seq, (int)h.src, (int)h.thread,
           (unsigned)h.len,
           h.src == g_left && h.thread == t
               ? (h.seq < seq ? "duplicated or stale" : "lost or overtaken")
               : "another stream's message");
    if (!ok || !hok)
        return;
    char what[64];
    snprintf(what, sizeof what, "thread %d seq %d payload", t, seq);
    if (w->reports >= MAX_REPORTS) {
        /* quiet check */
        const unsigned char *p = b + HDR;
        for (size_t i = 0; i < n; i++)
            if (p[i] != wpattern_byte(pay_seed(g_left, t, seq), i)) {
                __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED);
                return;
            }
    } else if (!wpattern_check(b + HDR, n, pay_seed(g_left, t, seq), what)) {
        w->reports++;
        return;
    }
    w->good++;
    w->rbytes += (long long)(HDR + n);
}

/* Receive arguments of message `seq`: explicit source and MPI_ANY_SOURCE
 * alternate; on the private communicator every third receive takes any
 * source and any tag. */
static void recv_args(int t, int seq, int priv, int *src, int *tag)
{
    *src = seq % 2 == 0 ? g_left : MPI_ANY_SOURCE;
    *tag = t;
    if (priv) {
        *tag = priv_tag(seq);
        if (seq % 3 == 0) {
            *src = MPI_ANY_SOURCE;
            *tag = MPI_ANY_TAG;
        }
    }
}

static int send_tag(int t, int seq, int priv)
{
    return priv ? priv_tag(seq) : t;
}

/* Synchronous mode now and then. */
static int use_ssend(int t, int seq)
{
    return (seq + t) % 16 == 5;
}

static void post_recv(struct worker *w, int i, int seq, int priv, MPI_Comm comm,
                      MPI_Request *r)
{
    int src, tag;
    recv_args(w->t, seq, priv, &src, &tag);
    MPI_OK(MPI_Irecv(w->rbuf[i], BUFSZ, MPI_BYTE, src, tag, comm, r));
}

static void post_send(struct worker *w, int i, int seq, int priv, MPI_Comm comm,
                      MPI_Request *r)
{
    int t = w->t;
    int n = fill_msg(w->sbuf[i], t, seq);
    int tag = send_tag(t, seq, priv);
    if (use_ssend(t, seq))
        MPI_OK(MPI_Issend(w->sbuf[i], n, MPI_BYTE, g_right, tag, comm, r));
    else
        MPI_OK(MPI_Isend(w->sbuf[i], n, MPI_BYTE, g_right, tag, comm, r));
    w->sent++;
    w->sbytes += n;
}

static void blocking_send(struct worker *w, int seq, int priv, MPI_Comm comm)
{
    int t = w->t;
    int n = fill_msg(w->sbuf[0], t, seq);
    int tag = send_tag(t, seq, priv);
    if (use_ssend(t, seq))
        MPI_OK(MPI_Ssend(w->sbuf[0], n, MPI_BYTE, g_right, tag, comm));
    else
        MPI_OK(MPI_Send(w->sbuf[0], n, MPI_BYTE, g_right, tag, comm));
    w->sent++;
    w->sbytes += n;
}

static void blocking_recv(struct worker *w, int seq, int priv, MPI_Comm comm)
{
    int src, tag;
    MPI_Status st;
    recv_args(w->t, seq, priv, &src, &tag);
    MPI_OK(MPI_Recv(w->rbuf[0], BUFSZ, MPI_BYTE, src, tag, comm, &st));
    check_msg(w, w->rbuf[0], &st, seq, priv);
}

/* The blocks are counted per way and completion call: */
static const char *const KIND_NAMES[NKINDS] = {
    "waitall", "testsome", "testany", "testall", "send+waitall",
    "send+waitsome", "recv+waitall", "blocking"};

static int kind_of(struct block b)
{
    switch (b.way) {
    case 0:
        return 0;
    case 1:
        return 1 + b.variant;
    case 2:
        return b.variant == 1 ? 5 : 4;
    case 3:
        return 6;
    default:
        return 7;
    }
}

/* One block: messages s .. s+b.len-1 both ways. */
static void run_block(struct worker *w, int s, struct block b)
{
    MPI_Comm comm = b.priv ? g_priv[w->t] : MPI_COMM_WORLD;
    int n = b.len;
    MPI_Request r[2 * WIN];
    MPI_Status st[2 * WIN];
    int idx[2 * WIN];
    w->kinds[kind_of(b)]++;
    switch (b.way) {
    case 0:
    case 1:
        for (int i = 0; i < n; i++)
            post_recv(w, i, s + i, b.priv, comm, &r[i]);
        for (int i = 0; i < n; i++)
            post_send(w, i, s + i, b.priv, comm, &r[n + i]);
        if (b.way == 0) {
            MPI_OK(MPI_Waitall(2 * n, r, st));
            for (int i = 0; i < n; i++)
                check_msg(w, w->rbuf[i], &st[i], s + i, b.priv);
        } else if (b.variant == 0) {
            int left = 2 * n;
            while (left > 0) {
                int outc = 0;
                MPI_OK(MPI_Testsome(2 * n, r, &outc, idx, st));
                WCHECK(w, outc != MPI_UNDEFINED && outc >= 0 && outc <= left,
                       "thread %d: Testsome outcount %d with %d requests active",
                       w->t, outc, left);
                if (outc == MPI_UNDEFINED || outc < 0 || outc > left)
                    break;
                if (outc == 0)
                    sched_yield();
                for (int j = 0; j < outc; j++) {
                    int i = idx[j];
                    if (i < n)
                        check_msg(w, w->rbuf[i], &st[j], s + i, b.priv);
                }
                left -= outc;
            }
        } else if (b.variant == 1) {
            int left = 2 * n;
            while (left > 0) {
                int i = -1, flag = 0;
                MPI_OK(MPI_Testany(2 * n, r, &i, &flag, &st[0]));
                if (!flag) {
                    sched_yield();
                    continue;
                }
                WCHECK(w, i >= 0 && i < 2 * n,
                       "thread %d: Testany index %d with %d requests active", w->t,
                       i, left);
                if (i < 0 || i >= 2 * n)
                    break;
                if (i < n)
                    check_msg(w, w->rbuf[i], &st[0], s + i, b.priv);
                left--;
            }
        } else {
            int flag = 0;
            for (;;) {
                MPI_OK(MPI_Testall(2 * n, r, &flag, st));
                if (flag)
                    break;
                sched_yield();
            }
            for (int i = 0; i < n; i++)
                check_msg(w, w->rbuf[i], &st[i], s + i, b.priv);
        }
        break;
    case 2:
        for (int i = 0; i < n; i++)
            post_recv(w, i, s + i, b.priv, comm, &r[i]);
        for (int i = 0; i < n; i++)
            blocking_send(w, s + i, b.priv, comm);
        if (b.variant != 1) {
            MPI_OK(MPI_Waitall(n, r, st));
            for (int i = 0; i < n; i++)
                check_msg(w, w->rbuf[i], &st[i], s + i, b.priv);
        } else {
            int left = n;
            while (left > 0) {
                int outc = 0;
                MPI_OK(MPI_Waitsome(n, r, &outc, idx, st));
                WCHECK(w, outc != MPI_UNDEFINED && outc >= 1 && outc <= left,
                       "thread %d: Waitsome outcount %d with %d requests active",
                       w->t, outc, left);
                if (outc == MPI_UNDEFINED || outc < 1 || outc > left)
                    break;
                for (int j = 0; j < outc; j++)
                    check_msg(w, w->rbuf[idx[j]], &st[j], s + idx[j], b.priv);
                left -= outc;
            }
        }
        break;
    case 3:
        for (int i = 0; i < n; i++)
            post_send(w, i, s + i, b.priv, comm, &r[i]);
        for (int i = 0; i < n; i++)
            blocking_recv(w, s + i, b.priv, comm);
        MPI_OK(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
        break;
    default:
        for (int i = 0; i < n; i++) {
            if (g_me % 2 == 0) {
                blocking_send(w, s + i, b.priv, comm);
                blocking_recv(w, s + i, b.priv, comm);
            } else {
                blocking_recv(w, s + i, b.priv, comm);
                blocking_send(w, s + i, b.priv, comm);
            }
        }
        break;
    }
}

static void *worker(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < WIN; i++) {
        w->sbuf[i] = must(malloc(BUFSZ), "malloc", BUFSZ);
        w->rbuf[i] = must(malloc(BUFSZ), "malloc", BUFSZ);
    }
    int s = 0;
    for (int k = 0; s < NMSG; k++) {
        struct block b = plan(w->t, k);
        if (b.len > NMSG - s)
            b.len = NMSG - s;
        if (b.way == 4 && g_size < 2)
            b.way = 2; /* to itself: blocking both ways would deadlock */
        run_block(w, s, b);
        s += b.len;
    }
    for (int i = 0; i < WIN; i++) {
        free(w->sbuf[i]);
        free(w->rbuf[i]);
    }
    return NULL;
}

/* Messages waiting on comm (there must be none once every stream is
 * received). */
static int stray(MPI_Comm comm, const char *name)
{
    int n = 0;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
        if (!flag || n >= 100)
            break;
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(0, "stray message on %s: source %d tag %d, %d bytes", name,
              st.MPI_SOURCE, st.MPI_TAG, count);
        void *b = must(malloc(count > 0 ? (size_t)count : 1), "malloc", 0);
        MPI_OK(MPI_Recv(b, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm,
                        MPI_STATUS_IGNORE));
        free(b);
        n++;
    }
    return n;
}

int main(int argc, char **argv)
{
    int rank, size;
    int provided = p2p_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &rank, &size);
    g_me = rank;
    g_size = size;
    g_left = (rank - 1 + size) % size;
    g_right = (rank + 1) % size;
    out("thread level provided: %s", level_name(provided));

    section("dup");
    for (int t = 0; t < NT; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &g_priv[t]));

    section("streams");
    struct worker w[NT];
    memset(w, 0, sizeof w);
    for (int t = 0; t < NT; t++)
        w[t].t = t;
    if (provided < MPI_THREAD_MULTIPLE) {
        out("MPI_THREAD_MULTIPLE not provided: the %d streams one after the "
            "other in one thread",
            NT);
        for (int t = 0; t < NT; t++)
            worker(&w[t]);
    } else {
        pthread_t th[NT];
        int started = 0;
        for (int t = 0; t < NT; t++) {
            int rc = pthread_create(&th[t], NULL, worker, &w[t]);
            if (rc != 0) {
                FAIL("pthread_create: %s", strerror(rc));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            started++;
        }
        for (int t = 0; t < started; t++)
            pthread_join(th[t], NULL);
    }

    section("stray");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int strays = stray(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    for (int t = 0; t < NT; t++) {
        char name[32];
        snprintf(name, sizeof name, "thread %d's communicator", t);
        strays += stray(g_priv[t], name);
    }
    for (int t = 0; t < NT; t++)
        MPI_OK(MPI_Comm_free(&g_priv[t]));

    section("tally");
    long received = 0, good = 0, sent = 0, kinds[NKINDS] = {0};
    long long rbytes = 0, sbytes = 0;
    for (int t = 0; t < NT; t++) {
        received += w[t].received;
        good += w[t].good;
        sent += w[t].sent;
        rbytes += w[t].rbytes;
        sbytes += w[t].sbytes;
        for (int i = 0; i < NKINDS; i++)
            kinds[i] += w[t].kinds[i];
    }
    CHECK(received == (long)NT * NMSG && good == received,
          "%ld messages received, %ld of them right, expected %d", received, good,
          NT * NMSG);
    out("%d threads x %d messages from rank %d: %ld received, %ld in order "
        "and intact, %lld bytes",
        NT, NMSG, g_left, received, good, rbytes);
    out("%d threads x %d messages to rank %d: %ld sent, %lld bytes", NT, NMSG,
        g_right, sent, sbytes);
    char line[512];
    int len = 0;
    for (int i = 0; i < NKINDS; i++)
        len += snprintf(line + len, sizeof line - (size_t)len, "%s%s %ld",
                        i ? ", " : "", KIND_NAMES[i], kinds[i]);
    out("blocks: %s", line);
    out("stray messages after the streams: %d", strays);
    return p2p_finish("threadstress", rank, size);
}

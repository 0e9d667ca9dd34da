/*
 * p2p_random.c - point-to-point conformance: randomized traffic.
 *
 * usage: p2p_random [seed ...]        (default: 1 2 3)
 *
 * Why: the hand-written programs test one rule at a time; this one mixes
 * them the way real programs do, with random message sizes (0 B .. 256 KiB,
 * log-distributed), tags, wildcards, send modes, receives posted before and
 * after the sends, probes, and completion calls, between every pair of ranks
 * (a rank to itself included; with pretend nodes some pairs are remote).
 *
 * For each seed, every rank builds the same plan from the seed (so every
 * rank knows every message), then runs ROUNDS rounds. In a round:
 *  - each destination picks one wildcard kind (none, MPI_ANY_SOURCE,
 *    MPI_ANY_TAG, both) and, per incoming message, a specific or a wildcard
 *    receive. All specific receives are posted before any wildcard one,
 *    which makes every matching complete (no hang) whatever the timing;
 *  - a random prefix of the receives is posted (Irecv) before a barrier; a
 *    destination may pre-post all of them, and only then may its senders use
 *    blocking (Send, Ssend) and ready (Rsend, Irsend) modes; otherwise
 *    senders use Isend, Issend, Ibsend and Bsend;
 *  - after its sends, a rank posts its remaining receives one by one (Recv,
 *    Irecv + Wait, Probe + Recv, Mprobe + Mrecv, Improbe + Imrecv,
 *    Iprobe + Recv, Irecv + Test loop), then completes its early receives and
 *    its sends with Waitall, Waitsome, Waitany or Testany;
 *  - buffers are malloc'd or static (not in the shared heap).
 *
 * What is checked: which receive gets which message is up to the timing
 * whenever wildcards are involved, but MPI fixes the order within each
 * (source, tag) stream: in receive posting order, a stream's messages
 * arrive in sending order. So each receive's message is identified by the
 * stream in its status and its position in that stream, and its size and
 * contents must be exactly that message's. The output is only what MPI
 * makes deterministic: per seed and source, the number of messages, bytes
 * and a checksum of the payloads in (round, tag, sequence) order, and the
 * plan's counts.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: random ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define ROUNDS 12
#define NTAGS 3
#define MAXMSG 3            /* messages per ordered pair and round: 0..MAXMSG */
#define MAXSIZE (256 * 1024)
#define ARENA (1 << 20)

static int g_me, g_size;

/* ---- the shared random plan ---- */

static uint64_t g_rng;

static uint64_t rnd64(void)
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rnd(int n)
{
    return (int)(rnd64() % (uint64_t)n);
}

static int rnd_size(void)
{
    if (rnd(10) == 0)
        return 0;
    int e = rnd(18); /* [2^e, 2^(e+1)) < 256 KiB */
    return (1 << e) + rnd(1 << e);
}

enum smode { S_ISEND, S_ISSEND, S_IBSEND, S_BSEND, S_SEND, S_SSEND, S_RSEND, S_IRSEND };
enum wild { W_NONE, W_SRC, W_TAG, W_BOTH };
enum late { L_RECV, L_IRECV_WAIT, L_PROBE, L_MPROBE, L_IMPROBE, L_IPROBE, L_TEST, NLATE };
enum done { D_WAITALL, D_WAITSOME, D_WAITANY, D_TESTANY, NDONE };

struct msg {
    int src, dst, tag, seq, size, mode, static_buf;
};

struct recv {
    int src, tag;   /* spec (may be wildcards) */
    int count;      /* buffer size in bytes */
    int method;     /* for late receives */
    int wildcard;
    int static_buf;
    unsigned char *buf;
    MPI_Status st;
};

struct round_plan {
    int nmsg;
    struct msg *msgs;             /* all messages of the round, all ranks */
    /* for this rank as a destination: */
    int nrecv, nearly, prepost_all;
    struct recv *recvs;
    /* for every destination: whether it pre-posts all (senders need it) */
    int *dst_prepost_all;
    int done_method;
};

/* seq -> size table for this rank's incoming streams of a round:
 * size_of[(src * NTAGS + tag) * MAXMSG + seq] */
static int *g_size_of;

static uint64_t msg_seed(uint64_t seed, int round, const struct msg *m)
{
    return seed * 1000003u ^ ((uint64_t)round << 48) ^ ((uint64_t)m->src << 40) ^
           ((uint64_t)m->dst << 32) ^ ((uint64_t)m->tag << 24) ^ (uint64_t)m->seq;
}

static void shuffle(struct recv *r, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = rnd(i + 1);
        struct recv t = r[i];
        r[i] = r[j];
        r[j] = t;
    }
}

/* Draws the round's plan; the same draws on every rank. */
static void make_plan(struct round_plan *p)
{
    int n = g_size;
    p->msgs = must(calloc((size_t)n * n * MAXMSG, sizeof *p->msgs), "calloc", 0);
    p->dst_prepost_all = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    p->nmsg = 0;
    int *seqs = must(calloc((size_t)n * n * NTAGS, sizeof(int)), "calloc", 0);
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++) {
            int k = rnd(MAXMSG + 1);
            for (int j = 0; j < k; j++) {
                struct msg *m = &p->msgs[p->nmsg++];
                m->src = s;
                m->dst = d;
                m->tag = rnd(NTAGS);
                m->seq = seqs[(s * n + d) * NTAGS + m->tag]++;
                m->size = rnd_size();
                m->mode = rnd(8);
                m->static_buf = rnd(4) == 0;
            }
        }
    free(seqs);
    memset(g_size_of, 0xff, (size_t)n * NTAGS * MAXMSG * sizeof(int));
    p->done_method = -1;
    for (int d = 0; d < n; d++) {
        int wild = rnd(4);
        int prepost_all = rnd(3) == 0;
        int done_method = rnd(NDONE);
        p->dst_prepost_all[d] = prepost_all;
        /* this destination's receives: specifics first, then wildcards */
        int nin = 0;
        for (int i = 0; i < p->nmsg; i++)
            nin += p->msgs[i].dst == d;
        struct recv *spec = must(calloc((size_t)nin + 1, sizeof *spec), "calloc", 0);
        struct recv *wc = must(calloc((size_t)nin + 1, sizeof *wc), "calloc", 0);
        int ns = 0, nw = 0;
        for (int i = 0; i < p->nmsg; i++) {
            struct msg *m = &p->msgs[i];
            if (m->dst != d)
                continue;
            int is_wild = wild != W_NONE && rnd(2);
            struct recv *r = is_wild ? &wc[nw++] : &spec[ns++];
            r->wildcard = is_wild;
            r->src = is_wild && (wild == W_SRC || wild == W_BOTH) ? MPI_ANY_SOURCE : m->src;
            r->tag = is_wild && (wild == W_TAG || wild == W_BOTH) ? MPI_ANY_TAG : m->tag;
            r->method = rnd(NLATE);
            r->static_buf = rnd(4) == 0;
            /* a specific receive may use a tight buffer: it gets exactly
             * its stream's next message (see the header) */
            r->count = is_wild || rnd(2) ? MAXSIZE : -1;
        }
        shuffle(spec, ns);
        shuffle(wc, nw);
        int nearly = prepost_all ? ns + nw : rnd(ns + nw + 1);
        if (d == g_me) {
            p->nrecv = ns + nw;
            p->nearly = nearly;
            p->prepost_all = prepost_all;
            p->done_method = done_method;
            p->recvs = must(calloc((size_t)p->nrecv + 1, sizeof *p->recvs), "calloc", 0);
            memcpy(p->recvs, spec, (size_t)ns * sizeof *spec);
            memcpy(p->recvs + ns, wc, (size_t)nw * sizeof *wc);
        }
        free(spec);
        free(wc);
    }
    /* tight sizes for specific receives: the j-th specific receive of a
     * stream (in posting order) gets the stream's message j */
    for (int i = 0; i < p->nmsg; i++) {
        struct msg *m = &p->msgs[i];
        if (m->dst == g_me)
            g_size_of[(m->src * NTAGS + m->tag) * MAXMSG + m->seq] = m->size;
    }
    int *next = must(calloc((size_t)n * NTAGS, sizeof(int)), "calloc", 0);
    for (int i = 0; i < p->nrecv; i++) {
        struct recv *r = &p->recvs[i];
        if (r->wildcard)
            continue;
        int j = next[r->src * NTAGS + r->tag]++;
        int sz = g_size_of[(r->src * NTAGS + r->tag) * MAXMSG + j];
        if (r->count < 0)
            r->count = sz;
    }
    free(next);
}

/* ---- running a round ---- */

static unsigned char s_send_arena[ARENA], s_recv_arena[ARENA];
static size_t g_send_used, g_recv_used;

static unsigned char *buffer(int want_static, size_t n, int is_send)
{
    size_t *used = is_send ? &g_send_used : &g_recv_used;
    unsigned char *arena = is_send ? s_send_arena : s_recv_arena;
    if (want_static && *used + n <= ARENA) {
        unsigned char *b = arena + *used;
        *used += (n + 63) & ~(size_t)63;
        return b;
    }
    return must(malloc(n + 1), "malloc", n + 1);
}

static int is_static(const unsigned char *b)
{
    return (b >= s_send_arena && b < s_send_arena + ARENA) ||
           (b >= s_recv_arena && b < s_recv_arena + ARENA);
}

struct stats {
    long msgs[64], bytes[64];
    uint32_t crc[64];
    long n_spec, n_wild, n_early, n_late, n_blocking_send;
};

/* A late (posted after the sends) receive, completed before returning. */
static void late_receive(struct recv *r)
{
    MPI_Status ps;
    int flag = 0, c = -1;
    MPI_Message m;
    MPI_Request q;
    switch (r->method) {
    case L_RECV:
        MPI_OK(MPI_Recv(r->buf, r->count, MPI_BYTE, r->src, r->tag, MPI_COMM_WORLD,
                        &r->st));
        break;
    case L_IRECV_WAIT:
        MPI_OK(MPI_Irecv(r->buf, r->count, MPI_BYTE, r->src, r->tag, MPI_COMM_WORLD, &q));
        MPI_OK(MPI_Wait(&q, &r->st));
        break;
    case L_PROBE:
        MPI_OK(MPI_Probe(r->src, r->tag, MPI_COMM_WORLD, &ps));
        MPI_Get_count(&ps, MPI_BYTE, &c);
        CHECK(c >= 0 && c <= r->count, "probed count %d, buffer %d", c, r->count);
        MPI_OK(MPI_Recv(r->buf, r->count, MPI_BYTE, ps.MPI_SOURCE, ps.MPI_TAG,
                        MPI_COMM_WORLD, &r->st));
        CHECK(r->st.MPI_SOURCE == ps.MPI_SOURCE && r->st.MPI_TAG == ps.MPI_TAG,
              "Recv after Probe got (%d,%d), probed (%d,%d)", r->st.MPI_SOURCE,
              r->st.MPI_TAG, ps.MPI_SOURCE, ps.MPI_TAG);
        break;
    case L_MPROBE:
        MPI_OK(MPI_Mprobe(r->src, r->tag, MPI_COMM_WORLD, &m, &ps));
        MPI_OK(MPI_Mrecv(r->buf, r->count, MPI_BYTE, &m, &r->st));
        break;
    case L_IMPROBE:
        do {
            MPI_OK(MPI_Improbe(r->src, r->tag, MPI_COMM_WORLD, &flag, &m, &ps));
        } while (!flag);
        MPI_OK(MPI_Imrecv(r->buf, r->count, MPI_BYTE, &m, &q));
        MPI_OK(MPI_Wait(&q, &r->st));
        break;
    case L_IPROBE:
        do {
            MPI_OK(MPI_Iprobe(r->src, r->tag, MPI_COMM_WORLD, &flag, &ps));
        } while (!flag);
        MPI_OK(MPI_Recv(r->buf, r->count, MPI_BYTE, ps.MPI_SOURCE, ps.MPI_TAG,
                        MPI_COMM_WORLD, &r->st));
        break;
    default:
        MPI_OK(MPI_Irecv(r->buf, r->count, MPI_BYTE, r->src, r->tag, MPI_COMM_WORLD, &q));
        while (!flag)
            MPI_OK(MPI_Test(&q, &flag, &r->st));
        break;
    }
}

static void complete(int method, int n, MPI_Request *reqs, MPI_Status *sts)
{
    int *idx = must(calloc((size_t)n + 1, sizeof *idx), "calloc", 0);
    MPI_Status *tmp = must(calloc((size_t)n + 1, sizeof *tmp), "calloc", 0);
    switch (method) {
    case D_WAITALL:
        MPI_OK(MPI_Waitall(n, reqs, sts));
        break;
    case D_WAITSOME:
        for (;;) {
            int outc = 0;
            MPI_OK(MPI_Waitsome(n, reqs, &outc, idx, tmp));
            if (outc == MPI_UNDEFINED)
                break;
            for (int j = 0; j < outc; j++)
                sts[idx[j]] = tmp[j];
        }
        break;
    case D_WAITANY:
        for (;;) {
            int k = -1;
            MPI_Status st;
            MPI_OK(MPI_Waitany(n, reqs, &k, &st));
            if (k == MPI_UNDEFINED)
                break;
            sts[k] = st;
        }
        break;
    default:
        for (;;) {
            int k = -1, flag = 0;
            MPI_Status st;
            MPI_OK(MPI_Testany(n, reqs, &k, &flag, &st));
            if (flag && k == MPI_UNDEFINED)
                break;
            if (flag)
                sts[k] = st;
        }
        break;
    }
    for (int i = 0; i < n; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d still active", i);
    free(idx);
    free(tmp);
}

struct got {
    int src, tag, seq, size;
    uint32_t crc;
};

static int cmp_got(const void *a, const void *b)
{
    const struct got *x = a, *y = b;
    if (x->src != y->src)
        return x->src - y->src;
    if (x->tag != y->tag)
        return x->tag - y->tag;
    return x->seq - y->seq;
}

/* Where the rank is, for the watchdog. */
static char g_where[160] = "start";

static void run_round(uint64_t seed, int round, struct stats *S)
{
    snprintf(g_where, sizeof g_where, "seed %llu round %d: early receives",
             (unsigned long long)seed, round);
    struct round_plan P;
    memset(&P, 0, sizeof P);
    make_plan(&P);
    g_send_used = g_recv_used = 0;
    int nsend = 0;
    for (int i = 0; i < P.nmsg; i++)
        nsend += P.msgs[i].src == g_me;
    int nreq_max = P.nrecv + nsend + 1;
    MPI_Request *reqs = must(calloc((size_t)nreq_max, sizeof *reqs), "calloc", 0);
    MPI_Status *sts = must(calloc((size_t)nreq_max, sizeof *sts), "calloc", 0);
    unsigned char **sbufs = must(calloc((size_t)nsend + 1, sizeof *sbufs), "calloc", 0);
    int nreq = 0;

    /* early receives */
    for (int i = 0; i < P.nrecv; i++) {
        struct recv *r = &P.recvs[i];
        r->buf = buffer(r->static_buf, (size_t)r->count, 0);
        if (r->wildcard)
            S->n_wild++;
        else
            S->n_spec++;
        if (i < P.nearly) {
            int tag = r->tag == MPI_ANY_TAG ? MPI_ANY_TAG : 100 * round + r->tag;
            MPI_OK(MPI_Irecv(r->buf, r->count, MPI_BYTE, r->src, tag,
                             MPI_COMM_WORLD, &reqs[nreq++]));
            S->n_early++;
        } else {
            S->n_late++;
        }
    }
    snprintf(g_where, sizeof g_where, "seed %llu round %d: sends",
             (unsigned long long)seed, round);
    MPI_Barrier(MPI_COMM_WORLD);

    /* sends, in plan order (per destination: the sequence order) */
    int ns = 0;
    for (int i = 0; i < P.nmsg; i++) {
        struct msg *m = &P.msgs[i];
        if (m->src != g_me)
            continue;
        unsigned char *b = buffer(m->static_buf, (size_t)m->size, 1);
        sbufs[ns++] = b;
        wpattern_fill(b, (size_t)m->size, msg_seed(seed, round, m));
        int mode = m->mode;
        if (!P.dst_prepost_all[m->dst])
            mode = mode % 4; /* Isend, Issend, Ibsend, Bsend only */
        int tag = 100 * round + m->tag;
        snprintf(g_where, sizeof g_where, "seed %llu round %d: send to %d (tag %d, "
                 "%d B, mode %d)", (unsigned long long)seed, round, m->dst, tag,
                 m->size, mode);
        MPI_Request *q = &reqs[nreq];
        switch (mode) {
        case S_ISEND:
            MPI_OK(MPI_Isend(b, m->size, MPI_BYTE, m->dst, tag, MPI_COMM_WORLD, q));
            nreq++;
            break;
        case S_ISSEND:
            MPI_OK(MPI_Issend(b, m->size, MPI_BYTE, m->dst, tag, MPI_COMM_WORLD, q));
            nreq++;
            break;
        case S_IBSEND:
            MPI_OK(MPI_Ibsend(b, m->size, MPI_BYTE, m->dst, tag, MPI_COMM_WORLD, q));
            nreq++;
            break;
        case S_IRSEND:
            MPI_OK(MPI_Irsend(b, m->size, MPI_BYTE, m->dst, tag, MPI_COMM_WORLD, q));
            nreq++;
            break;
        case S_BSEND:
            MPI_OK(MPI_Bsend(b, m->size, MPI_BYTE, m->dst, tag, MPI_COMM_WORLD));
            S->n_blocking_send++;
            break;
        case S_SEND:
            MPI_OK(MPI_Send(b, m->size, MPI_BYTE, m->dst, tag, MPI_COMM_WORLD));
            S->n_blocking_send++;
            break;
        case S_SSEND:
            MPI_OK(MPI_Ssend(b, m->size, MPI_BYTE, m->dst, tag, MPI_COMM_WORLD));
            S->n_blocking_send++;
            break;
        default:
            MPI_OK(MPI_Rsend(b, m->size, MPI_BYTE, m->dst, tag, MPI_COMM_WORLD));
            S->n_blocking_send++;
            break;
        }
    }

    /* late receives (the tags of this round are 100 * round + t) */
    for (int i = P.nearly; i < P.nrecv; i++) {
        struct recv *r = &P.recvs[i];
        snprintf(g_where, sizeof g_where, "seed %llu round %d: late receive %d "
                 "of %d (source %d, tag %d, %d B, method %d)",
                 (unsigned long long)seed, round, i, P.nrecv, r->src, r->tag,
                 r->count, r->method);
        int tag_spec = r->tag;
        if (r->tag != MPI_ANY_TAG)
            r->tag = 100 * round + r->tag;
        late_receive(r);
        r->tag = tag_spec;
    }
    snprintf(g_where, sizeof g_where, "seed %llu round %d: completing %d early "
             "receives and nonblocking sends (method %d)", (unsigned long long)seed,
             round, nreq, P.done_method);
    complete(P.done_method, nreq, reqs, sts);
    for (int i = 0; i < P.nearly; i++)
        P.recvs[i].st = sts[i];

    /* identify every receive's message: (stream from the status, position
     * in the stream by posting order) */
    int *next = must(calloc((size_t)g_size * NTAGS, sizeof(int)), "calloc", 0);
    struct got *got = must(calloc((size_t)P.nrecv + 1, sizeof *got), "calloc", 0);
    for (int i = 0; i < P.nrecv; i++) {
        struct recv *r = &P.recvs[i];
        int src = r->st.MPI_SOURCE, tag = r->st.MPI_TAG - 100 * round, c = -1;
        MPI_Get_count(&r->st, MPI_BYTE, &c);
        if (src < 0 || src >= g_size || tag < 0 || tag >= NTAGS ||
            (r->src != MPI_ANY_SOURCE && r->src != src) ||
            (r->tag != MPI_ANY_TAG && r->tag != tag)) {
            CHECK(0, "seed %llu round %d receive %d (spec %d,%d): status source %d "
                  "tag %d", (unsigned long long)seed, round, i, r->src, r->tag, src,
                  r->st.MPI_TAG);
            got[i].src = -1;
            continue;
        }
        int seq = next[src * NTAGS + tag]++;
        int want = seq < MAXMSG ? g_size_of[(src * NTAGS + tag) * MAXMSG + seq] : -1;
        struct msg m = {src, g_me, tag, seq, want, 0, 0};
        char what[96];
        snprintf(what, sizeof what, "seed %llu round %d receive %d: stream (%d,%d) "
                 "message %d", (unsigned long long)seed, round, i, src, tag, seq);
        CHECK(want >= 0 && c == want, "%s: %d bytes, expected %d (overtaken?)", what,
              c, want);
        if (want >= 0 && c == want)
            wpattern_check(r->buf, (size_t)c, msg_seed(seed, round, &m), what);
        got[i].src = src;
        got[i].tag = tag;
        got[i].seq = seq;
        got[i].size = c;
        got[i].crc = fnv1a(FNV_INIT, r->buf, c > 0 ? (size_t)c : 0);
    }
    /* every stream complete */
    for (int s = 0; s < g_size; s++)
        for (int t = 0; t < NTAGS; t++) {
            int n = 0;
            while (n < MAXMSG && g_size_of[(s * NTAGS + t) * MAXMSG + n] >= 0)
                n++;
            CHECK(next[s * NTAGS + t] == n, "seed %llu round %d: %d messages of "
                  "stream (%d,%d) received, %d sent", (unsigned long long)seed,
                  round, next[s * NTAGS + t], s, t, n);
        }
    qsort(got, (size_t)P.nrecv, sizeof *got, cmp_got);
    for (int i = 0; i < P.nrecv; i++) {
        struct got *g = &got[i];
        if (g->src < 0 || g->src >= 64)
            continue;
        S->msgs[g->src]++;
        S->bytes[g->src] += g->size;
        uint32_t k[4] = {(uint32_t)round, (uint32_t)g->tag, (uint32_t)g->seq, g->crc};
        S->crc[g->src] = fnv1a(S->crc[g->src], k, sizeof k);
    }
    free(got);
    free(next);
    for (int i = 0; i < ns; i++)
        if (!is_static(sbufs[i]))
            free(sbufs[i]);
    for (int i = 0; i < P.nrecv; i++)
        if (!is_static(P.recvs[i].buf))
            free(P.recvs[i].buf);
    free(sbufs);
    free(reqs);
    free(sts);
    free(P.msgs);
    free(P.recvs);
    free(P.dst_prepost_all);
    /* buffered sends drained, everything of this round received everywhere */
    void *det;
    int dsize;
    MPI_OK(MPI_Buffer_detach(&det, &dsize));
    MPI_OK(MPI_Buffer_attach(det, dsize));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_size = size;
    if (size > 64) {
        FAIL("at most 64 ranks");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    g_size_of = must(calloc((size_t)size * NTAGS * MAXMSG, sizeof(int)), "calloc", 0);
    /* every rank's buffered sends of a round: at most MAXMSG per destination */
    int bsize = size * MAXMSG * (MAXSIZE + MPI_BSEND_OVERHEAD) + 4096;
    void *bbuf = must(malloc((size_t)bsize), "malloc", (size_t)bsize);
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));
    static const char *defaults[3] = {"1", "2", "3"};
    int nseeds = argc > 1 ? argc - 1 : 3;
    for (int si = 0; si < nseeds; si++) {
        const char *arg = argc > 1 ? argv[1 + si] : defaults[si];
        uint64_t seed = strtoull(arg, NULL, 0);
        section(g_where);
        g_rng = seed;
        struct stats S;
        memset(&S, 0, sizeof S);
        for (int s = 0; s < size; s++)
            S.crc[s] = FNV_INIT;
        for (int round = 0; round < ROUNDS; round++)
            run_round(seed, round, &S);
        out("seed %llu: %ld specific and %ld wildcard receives, %ld posted before "
            "the sends, %ld after; %ld blocking sends", (unsigned long long)seed,
            S.n_spec, S.n_wild, S.n_early, S.n_late, S.n_blocking_send);
        for (int s = 0; s < size; s++)
            out("seed %llu: from %d: %ld messages, %ld bytes, checksum %08x",
                (unsigned long long)seed, s, S.msgs[s], S.bytes[s], S.crc[s]);
    }
    void *det;
    int dsize;
    MPI_OK(MPI_Buffer_detach(&det, &dsize));
    free(bbuf);
    free(g_size_of);
    return p2p_finish("random", rank, size);
}

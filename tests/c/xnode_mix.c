/*
 * xnode_mix.c - conformance across real nodes: point-to-point, wildcard
 * matching, completion calls and communicators with peers on this node and
 * on other nodes at once.
 *
 * Why: heapmpi carries messages between ranks of one node itself and hands
 * everything that crosses nodes to the real MPI. Only a real second node
 * makes both paths live in one job: a wildcard receive must then match
 * whichever comes first of a local and a remote message, keep each sender's
 * order, be cancellable on both sides, and a blocking send must not stall
 * the other path. The program does not assume a placement: it finds the
 * nodes with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) and only ever prints
 * what holds whatever the placement (block or round robin) and the layout
 * (2+2, 2+1+1, all on one node, ...), so its stdout is the same for every
 * layout at a given number of ranks (any number >= 2; 1 works too).
 *
 * Sections:
 *  A. fan-in with wildcards: for every root in turn, every other rank sends
 *     it 4 messages (8 B, 4 KiB, 1 MiB+3 B, rotated by sender; tag =
 *     sequence number) at once; the root takes them with
 *     Irecv(ANY_SOURCE, ANY_TAG) + Waitall, then with
 *     Probe(ANY_SOURCE) + Get_count + Recv, then with Improbe(ANY_SOURCE) +
 *     Mrecv: every message once, right size and contents, each sender's in
 *     order;
 *  B. MPI_Ssend between all pairs (8 B and 1 MiB; an Issend is not complete
 *     before its receive is posted); MPI_Cancel of Irecvs no one sends to
 *     (from every peer, from ANY_SOURCE, with ANY_TAG): Test_cancelled true,
 *     buffers untouched; then real messages with that tag go to later
 *     receives;
 *  C. Waitany / Testany / Waitsome / Testsome over arrays of sends to and
 *     receives from every other rank (8..100 B and 1 MiB) with
 *     MPI_REQUEST_NULL entries: indices (each once, never a null one),
 *     statuses (source, tag, count), data, and MPI_UNDEFINED at the end;
 *  D. communicators: per node (MPI_Comm_split by the node's first world
 *     rank; congruent with the shared-memory split), across nodes (the
 *     nodes' first ranks; others MPI_UNDEFINED), by world rank parity (and
 *     the shared-memory split of that): membership, rings (8 B and 200000 B),
 *     Allreduce, Bcast and Alltoall, checked arithmetically;
 *  E. an intercommunicator between the even and the odd world ranks
 *     (Intercomm_create over MPI_COMM_WORLD): wildcard receives of messages
 *     from every remote rank, a 1 MiB exchange of the leaders, an Allreduce
 *     over the intercommunicator, Intercomm_merge and collectives on the
 *     merged communicator;
 *  F. ordering stress: every rank posts 2 Irecv(ANY_SOURCE) and then does
 *     blocking 1 MiB MPI_Sends to rank+1 and rank-1 (3 rounds), then the
 *     same with 8 B MPI_Ssends: must complete, data right.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: xnode ok". Exit status 0 on success, 1 on a failed check (4 from
 * the watchdog on a hang). XNODE_SHOW_NODES=1 in the environment: every rank
 * tells on stderr which node it found itself on.
 *
 * Run across nodes, e.g. (tests/cluster/cluster start target/c 2, then on
 * node1): mpirun.openmpi --host node1:2,node2:2 --map-by node|slot -np 4
 * --bind-to none ./xnode_mix. Stock MPICH 4.0.2 (ch4:ucx) often hangs in
 * MPI_Finalize across these nodes unless every node has one rank and there
 * are two nodes (see MPICH_LAYOUTS in tests/cluster.rs), whatever the
 * program.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define MIB (1 << 20)
#define BIG (MIB + 3)

static uint64_t seed_of(int src, int dst, int tag)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 36) ^ (uint64_t)tag;
}

static const char *okf(int failures_before)
{
    return g_failures == failures_before ? "ok" : "FAILED";
}

/* ---- the nodes, found at run time (never printed) ---- */

static MPI_Comm g_shm = MPI_COMM_NULL;
static int g_color;       /* world rank of this node's first rank */
static int *g_colors;     /* per world rank: its node's first world rank */
static int *g_node_ranks; /* per world rank: its rank on its node */

static void find_nodes(int rank, int size)
{
    section("nodes");
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
                               MPI_INFO_NULL, &g_shm));
    int node_rank = -1, node_size = -1;
    MPI_Comm_rank(g_shm, &node_rank);
    MPI_Comm_size(g_shm, &node_size);
    int leader = rank;
    MPI_OK(MPI_Bcast(&leader, 1, MPI_INT, 0, g_shm));
    g_color = leader;
    int mine[2] = {leader, node_rank};
    int *all = must(calloc((size_t)size * 2, sizeof *all), "calloc", 0);
    MPI_OK(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
    g_colors = must(calloc((size_t)size, sizeof *g_colors), "calloc", 0);
    g_node_ranks = must(calloc((size_t)size, sizeof *g_node_ranks), "calloc", 0);
    int before = 0, same = 0;
    for (int r = 0; r < size; r++) {
        g_colors[r] = all[2 * r];
        g_node_ranks[r] = all[2 * r + 1];
        if (g_colors[r] == leader) {
            same++;
            if (r < rank)
                before++;
        }
    }
    /* XNODE_SHOW_NODES=1: the layout found, on stderr (never on stdout). */
    if (getenv("XNODE_SHOW_NODES") != NULL)
        fprintf(stderr, "rank %d: node of world rank %d, rank %d of %d there\n",
                rank, leader, node_rank, node_size);
    CHECK(leader <= rank, "node's first rank %d is above this rank", leader);
    CHECK(node_rank == before && node_size == same,
          "shared split: node rank %d of %d, but %d ranks before of %d", node_rank,
          node_size, before, same);
    free(all);
}

/* ---- A. fan-in with wildcards ---- */

#define A_MSGS 4
static const size_t a_sizes[3] = {8, 4096, BIG};

static size_t a_size(int src, int k)
{
    return a_sizes[(k + src) % 3];
}

static void fanin_send(int rank, int root, int tagbase)
{
    MPI_Request r[A_MSGS];
    unsigned char *b[A_MSGS];
    for (int k = 0; k < A_MSGS; k++) {
        size_t n = a_size(rank, k);
        b[k] = must(malloc(n), "malloc", n);
        wpattern_fill(b[k], n, seed_of(rank, root, tagbase + k));
        MPI_OK(MPI_Isend(b[k], (int)n, MPI_BYTE, root, tagbase + k, MPI_COMM_WORLD,
                         &r[k]));
    }
    MPI_OK(MPI_Waitall(A_MSGS, r, MPI_STATUSES_IGNORE));
    for (int k = 0; k < A_MSGS; k++)
        free(b[k]);
}

struct fanin {
    int size, root, tagbase, good;
    const char *how;
    int *next; /* per source: messages taken so far */
};

/* One message taken by the root; checks it is the next one of its sender. */
static void fanin_got(struct fanin *f, const MPI_Status *st, const void *buf)
{
    int src = st->MPI_SOURCE, tag = st->MPI_TAG, n = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &n));
    if (src < 0 || src >= f->size || src == f->root) {
        CHECK(0, "%s: status source %d", f->how, src);
        return;
    }
    int k = f->next[src]++;
    if (k >= A_MSGS) {
        CHECK(0, "%s: message %d from %d (only %d sent)", f->how, k, src, A_MSGS);
        return;
    }
    int ok = 1;
    if (tag != f->tagbase + k) {
        CHECK(0, "%s: message %d from %d has tag %d, expected %d (order)", f->how,
              k, src, tag, f->tagbase + k);
        ok = 0;
    }
    if (n != (int)a_size(src, k)) {
        CHECK(0, "%s: message %d from %d: count %d, expected %zu", f->how, k, src,
              n, a_size(src, k));
        ok = 0;
    }
    char what[96];
    snprintf(what, sizeof what, "%s: message %d from %d", f->how, k, src);
    if (ok && wpattern_check(buf, (size_t)n, seed_of(src, f->root, tag), what))
        f->good++;
}

static int fanin_done(struct fanin *f)
{
    int ok = f->good == (f->size - 1) * A_MSGS;
    for (int s = 0; s < f->size; s++)
        if (s != f->root && f->next[s] != A_MSGS) {
            CHECK(0, "%s: %d messages from %d, expected %d", f->how, f->next[s], s,
                  A_MSGS);
            ok = 0;
        }
    return ok;
}

static int fanin_irecv(int rank, int size, int tagbase)
{
    int n = (size - 1) * A_MSGS;
    struct fanin f = {size, rank, tagbase, 0, "Irecv(ANY_SOURCE)+Waitall",
                      must(calloc((size_t)size, sizeof(int)), "calloc", 0)};
    unsigned char **b = must(calloc((size_t)n + 1, sizeof *b), "calloc", 0);
    MPI_Request *r = must(calloc((size_t)n + 1, sizeof *r), "calloc", 0);
    MPI_Status *st = must(calloc((size_t)n + 1, sizeof *st), "calloc", 0);
    for (int i = 0; i < n; i++) {
        b[i] = must(malloc(BIG), "malloc", BIG);
        MPI_OK(MPI_Irecv(b[i], BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                         MPI_COMM_WORLD, &r[i]));
    }
    MPI_OK(MPI_Waitall(n, r, st));
    /* The receives match each sender's messages in the order they were
     * posted. */
    for (int i = 0; i < n; i++)
        fanin_got(&f, &st[i], b[i]);
    int ok = fanin_done(&f);
    for (int i = 0; i < n; i++)
        free(b[i]);
    free(b);
    free(r);
    free(st);
    free(f.next);
    return ok;
}

static int fanin_probe(int rank, int size, int tagbase)
{
    int n = (size - 1) * A_MSGS;
    struct fanin f = {size, rank, tagbase, 0, "Probe(ANY_SOURCE)+Get_count+Recv",
                      must(calloc((size_t)size, sizeof(int)), "calloc", 0)};
    for (int i = 0; i < n; i++) {
        MPI_Status st, rs;
        MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int c = -1;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &c));
        if (c < 0 || st.MPI_SOURCE < 0 || st.MPI_SOURCE >= size) {
            CHECK(0, "Probe: source %d count %d", st.MPI_SOURCE, c);
            break;
        }
        unsigned char *b = must(malloc((size_t)c + 1), "malloc", (size_t)c + 1);
        MPI_OK(MPI_Recv(b, c, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                        &rs));
        int rc = -1;
        MPI_Get_count(&rs, MPI_BYTE, &rc);
        CHECK(rs.MPI_SOURCE == st.MPI_SOURCE && rs.MPI_TAG == st.MPI_TAG && rc == c,
              "Recv after Probe: (%d, %d, %d B), probed (%d, %d, %d B)",
              rs.MPI_SOURCE, rs.MPI_TAG, rc, st.MPI_SOURCE, st.MPI_TAG, c);
        fanin_got(&f, &rs, b);
        free(b);
    }
    int ok = fanin_done(&f);
    free(f.next);
    return ok;
}

static int fanin_improbe(int rank, int size, int tagbase)
{
    int n = (size - 1) * A_MSGS;
    struct fanin f = {size, rank, tagbase, 0, "Improbe(ANY_SOURCE)+Mrecv",
                      must(calloc((size_t)size, sizeof(int)), "calloc", 0)};
    for (int i = 0; i < n;) {
        MPI_Status st, rs;
        MPI_Message msg = MPI_MESSAGE_NULL;
        int flag = 0;
        MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg,
                           &st));
        if (!flag)
            continue;
        i++;
        int c = -1;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &c));
        if (c < 0 || msg == MPI_MESSAGE_NULL) {
            CHECK(0, "Improbe: count %d, message %s", c,
                  msg == MPI_MESSAGE_NULL ? "NULL" : "set");
            break;
        }
        unsigned char *b = must(malloc((size_t)c + 1), "malloc", (size_t)c + 1);
        MPI_OK(MPI_Mrecv(b, c, MPI_BYTE, &msg, &rs));
        CHECK(msg == MPI_MESSAGE_NULL, "Mrecv did not reset the message handle");
        int rc = -1;
        MPI_Get_count(&rs, MPI_BYTE, &rc);
        CHECK(rs.MPI_SOURCE == st.MPI_SOURCE && rs.MPI_TAG == st.MPI_TAG && rc == c,
              "Mrecv: (%d, %d, %d B), probed (%d, %d, %d B)", rs.MPI_SOURCE,
              rs.MPI_TAG, rc, st.MPI_SOURCE, st.MPI_TAG, c);
        fanin_got(&f, &rs, b);
        free(b);
    }
    int ok = fanin_done(&f);
    free(f.next);
    return ok;
}

static void fanin(int rank, int size)
{
    section("A fan-in with wildcards");
    static const char *const how[3] = {
        "Irecv(ANY_SOURCE, ANY_TAG)+Waitall",
        "Probe(ANY_SOURCE, ANY_TAG)+Get_count+Recv",
        "Improbe(ANY_SOURCE, ANY_TAG)+Mrecv",
    };
    int ok[3] = {0, 0, 0};
    for (int root = 0; root < size; root++)
        for (int m = 0; m < 3; m++) {
            int tagbase = 1000 + (root * 3 + m) * 8;
            if (rank != root)
                fanin_send(rank, root, tagbase);
            else if (m == 0)
                ok[m] = fanin_irecv(rank, size, tagbase);
            else if (m == 1)
                ok[m] = fanin_probe(rank, size, tagbase);
            else
                ok[m] = fanin_improbe(rank, size, tagbase);
            /* The next round's messages must not meet this round's
             * wildcard receives. */
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    for (int m = 0; m < 3; m++)
        out("A as root, %s: %d messages from %d senders, each once, in order, "
            "contents %s", how[m], (size - 1) * A_MSGS, size - 1,
            ok[m] ? "right" : "WRONG");
}

/* ---- B. Ssend and Cancel ---- */

static void ssend_pairs(int rank, int size)
{
    section("B Ssend");
    int f0 = g_failures;
    int early = 0;
    unsigned char *sb = must(malloc(MIB), "malloc", MIB);
    unsigned char *rb = must(malloc(MIB), "malloc", MIB);
    for (int d = 1; d < size; d++) {
        int right = (rank + d) % size, left = (rank - d + size) % size;
        /* An Issend is not complete before its receive is posted: the
         * receiver posts it only after a token sent after the MPI_Test. */
        int sv = rank * 1000 + d, rv = -1, tok = d, rtok = -1, flag = 0;
        MPI_Request s, t;
        MPI_OK(MPI_Issend(&sv, 1, MPI_INT, right, 2000 + d, MPI_COMM_WORLD, &s));
        MPI_OK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
        if (flag) {
            CHECK(0, "Issend to %d complete before the receive was posted", right);
            early++;
        }
        MPI_OK(MPI_Isend(&tok, 1, MPI_INT, right, 2100 + d, MPI_COMM_WORLD, &t));
        MPI_OK(MPI_Recv(&rtok, 1, MPI_INT, left, 2100 + d, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        CHECK(rtok == d, "token from %d: %d", left, rtok);
        MPI_OK(MPI_Recv(&rv, 1, MPI_INT, left, 2000 + d, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        CHECK(rv == left * 1000 + d, "Issend from %d: got %d", left, rv);
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&t, MPI_STATUS_IGNORE));
        /* Blocking Ssends of 8 B and 1 MiB against pre-posted receives. */
        static const int sizes[2] = {8, MIB};
        for (int j = 0; j < 2; j++) {
            int n = sizes[j], tag = 2200 + 2 * d + j;
            MPI_Request r;
            MPI_Status st;
            memset(rb, 0, (size_t)n);
            MPI_OK(MPI_Irecv(rb, n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &r));
            wpattern_fill(sb, (size_t)n, seed_of(rank, right, tag));
            MPI_OK(MPI_Ssend(sb, n, MPI_BYTE, right, tag, MPI_COMM_WORLD));
            MPI_OK(MPI_Wait(&r, &st));
            int c = -1;
            MPI_Get_count(&st, MPI_BYTE, &c);
            CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag && c == n,
                  "Ssend from %d: status (%d, %d, %d B)", left, st.MPI_SOURCE,
                  st.MPI_TAG, c);
            char what[64];
            snprintf(what, sizeof what, "Ssend of %d B from %d", n, left);
            wpattern_check(rb, (size_t)n, seed_of(left, rank, tag), what);
        }
    }
    out("B Ssend between all pairs (8 B, 1 MiB): %s; Issend incomplete before "
        "its receive: %s", okf(f0), early ? "NO" : "yes");
    free(sb);
    free(rb);
}

static void cancel_recvs(int rank, int size)
{
    section("B Cancel");
    int f0 = g_failures;
    const int tag = 2500;
    /* One receive from every peer, one from ANY_SOURCE, one with ANY_TAG
     * from ANY_SOURCE: nothing is sent to them. */
    int n = size + 1;
    int *srcs = must(calloc((size_t)n, sizeof *srcs), "calloc", 0);
    int *tags = must(calloc((size_t)n, sizeof *tags), "calloc", 0);
    MPI_Request *r = must(calloc((size_t)n, sizeof *r), "calloc", 0);
    unsigned char **b = must(calloc((size_t)n, sizeof *b), "calloc", 0);
    int nr = 0;
    for (int d = 1; d < size; d++) {
        srcs[nr] = (rank + d) % size;
        tags[nr++] = tag;
    }
    srcs[nr] = MPI_ANY_SOURCE;
    tags[nr++] = tag;
    srcs[nr] = MPI_ANY_SOURCE;
    tags[nr++] = MPI_ANY_TAG;
    for (int i = 0; i < nr; i++) {
        size_t len = i % 2 ? MIB : 64;
        b[i] = must(malloc(len), "malloc", len);
        memset(b[i], 0x5c, len);
        MPI_OK(MPI_Irecv(b[i], (int)len, MPI_BYTE, srcs[i], tags[i], MPI_COMM_WORLD,
                         &r[i]));
    }
    int cancelled = 0;
    for (int i = 0; i < nr; i++) {
        MPI_OK(MPI_Cancel(&r[i]));
        MPI_Status st;
        MPI_OK(MPI_Wait(&r[i], &st));
        int c = 0;
        MPI_OK(MPI_Test_cancelled(&st, &c));
        CHECK(c, "Irecv(source %d, tag %d): Test_cancelled false", srcs[i], tags[i]);
        CHECK(r[i] == MPI_REQUEST_NULL, "cancelled request not freed by Wait");
        cancelled += c != 0;
    }
    /* Nobody sends before every rank has cancelled. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Real messages with the same tag, from every peer: 8 B and (from the
     * right neighbour) 1 MiB. */
    int ns = 0;
    MPI_Request *sr = must(calloc((size_t)size, sizeof *sr), "calloc", 0);
    unsigned char **sbuf = must(calloc((size_t)size, sizeof *sbuf), "calloc", 0);
    for (int d = 1; d < size; d++) {
        int dst = (rank + d) % size;
        size_t len = d == 1 ? MIB : 8;
        sbuf[ns] = must(malloc(len), "malloc", len);
        wpattern_fill(sbuf[ns], len, seed_of(rank, dst, tag));
        MPI_OK(MPI_Isend(sbuf[ns], (int)len, MPI_BYTE, dst, tag, MPI_COMM_WORLD,
                         &sr[ns]));
        ns++;
    }
    int *seen = must(calloc((size_t)size, sizeof *seen), "calloc", 0);
    unsigned char *rb = must(malloc(MIB), "malloc", MIB);
    int got = 0;
    for (int i = 0; i < size - 1; i++) {
        MPI_Status st;
        MPI_OK(MPI_Recv(rb, MIB, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
        int src = st.MPI_SOURCE, c = -1;
        MPI_Get_count(&st, MPI_BYTE, &c);
        if (src < 0 || src >= size || src == rank || seen[src]) {
            CHECK(0, "receive after cancel: source %d", src);
            continue;
        }
        seen[src] = 1;
        int expect = src == (rank - 1 + size) % size ? MIB : 8;
        char what[64];
        snprintf(what, sizeof what, "message after cancel from %d", src);
        if (c != expect)
            CHECK(0, "%s: %d B, expected %d", what, c, expect);
        else if (wpattern_check(rb, (size_t)c, seed_of(src, rank, tag), what))
            got++;
    }
    MPI_OK(MPI_Waitall(ns, sr, MPI_STATUSES_IGNORE));
    int untouched = 1;
    for (int i = 0; i < nr; i++) {
        size_t len = i % 2 ? MIB : 64;
        for (size_t j = 0; j < len; j++)
            if (b[i][j] != 0x5c) {
                CHECK(0, "cancelled Irecv(source %d, tag %d): byte %zu written",
                      srcs[i], tags[i], j);
                untouched = 0;
                break;
            }
    }
    out("B Cancel of %d Irecvs (every peer, ANY_SOURCE, ANY_TAG): %d cancelled, "
        "buffers %s; then %d of %d messages with that tag received right: %s",
        nr, cancelled, untouched ? "untouched" : "WRITTEN", got, size - 1, okf(f0));
    for (int i = 0; i < nr; i++)
        free(b[i]);
    for (int i = 0; i < ns; i++)
        free(sbuf[i]);
    free(b);
    free(sbuf);
    free(sr);
    free(r);
    free(srcs);
    free(tags);
    free(seen);
    free(rb);
}

/* ---- C. Waitany / Testany / Waitsome / Testsome ---- */

enum { K_NULL, K_RECV_SMALL, K_RECV_BIG, K_SEND_SMALL, K_SEND_BIG };
#define C_SLOTS 6 /* per peer */
static const int c_layout[C_SLOTS] = {K_NULL,       K_RECV_SMALL, K_SEND_BIG,
                                      K_SEND_SMALL, K_NULL,       K_RECV_BIG};

static int c_len(int kind, int src)
{
    return kind == K_RECV_SMALL || kind == K_SEND_SMALL ? 8 + 4 * (src % 24) : MIB;
}

static int c_tag(int variant, int kind)
{
    /* A receive of one kind matches the send of the same kind. */
    int k = kind == K_SEND_SMALL ? K_RECV_SMALL : kind == K_SEND_BIG ? K_RECV_BIG : kind;
    return 3000 + variant * 10 + k;
}

struct carr {
    int n, variant, rank, good, total;
    MPI_Request *r;
    int *kind, *peer;
    unsigned char **buf;
    char *done;
};

static void c_handle(struct carr *a, int idx, const MPI_Status *st, const char *how)
{
    if (idx < 0 || idx >= a->n || a->kind[idx] == K_NULL || a->done[idx]) {
        CHECK(0, "%s returned index %d (n %d, %s)", how, idx, a->n,
              idx < 0 || idx >= a->n ? "out of range"
              : a->kind[idx] == K_NULL ? "a null entry" : "already done");
        return;
    }
    a->done[idx] = 1;
    CHECK(a->r[idx] == MPI_REQUEST_NULL, "%s: request %d not set to null", how, idx);
    int k = a->kind[idx], p = a->peer[idx];
    if (k == K_SEND_SMALL || k == K_SEND_BIG) {
        a->good++;
        return;
    }
    int c = -1, tag = c_tag(a->variant, k), len = c_len(k, p);
    MPI_Get_count(st, MPI_BYTE, &c);
    if (st->MPI_SOURCE != p || st->MPI_TAG != tag || c != len) {
        CHECK(0, "%s: index %d: status (%d, %d, %d B), expected (%d, %d, %d B)", how,
              idx, st->MPI_SOURCE, st->MPI_TAG, c, p, tag, len);
        return;
    }
    char what[80];
    snprintf(what, sizeof what, "%s: index %d from %d", how, idx, p);
    if (wpattern_check(a->buf[idx], (size_t)len, seed_of(p, a->rank, tag), what))
        a->good++;
}

static void multi_completion(int rank, int size, int variant)
{
    static const char *const names[4] = {"Waitany", "Testany", "Waitsome",
                                         "Testsome"};
    const char *how = names[variant];
    int f0 = g_failures;
    struct carr a;
    a.n = (size - 1) * C_SLOTS + 1; /* and a trailing null */
    a.variant = variant;
    a.rank = rank;
    a.good = 0;
    a.total = 0;
    a.r = must(calloc((size_t)a.n, sizeof *a.r), "calloc", 0);
    a.kind = must(calloc((size_t)a.n, sizeof *a.kind), "calloc", 0);
    a.peer = must(calloc((size_t)a.n, sizeof *a.peer), "calloc", 0);
    a.buf = must(calloc((size_t)a.n, sizeof *a.buf), "calloc", 0);
    a.done = must(calloc((size_t)a.n, 1), "calloc", 0);
    for (int i = 0; i < a.n; i++) {
        a.r[i] = MPI_REQUEST_NULL;
        a.kind[i] = K_NULL;
        a.peer[i] = -1;
    }
    for (int d = 1; d < size; d++) {
        /* Peers in a different order on every rank. */
        int p = (rank + d) % size;
        for (int s = 0; s < C_SLOTS; s++) {
            int i = (d - 1) * C_SLOTS + s, k = c_layout[s];
            a.kind[i] = k;
            a.peer[i] = p;
            if (k == K_NULL)
                continue;
            a.total++;
            int tag = c_tag(variant, k);
            if (k == K_RECV_SMALL || k == K_RECV_BIG) {
                int cap = k == K_RECV_BIG ? MIB + 64 : 256;
                a.buf[i] = must(malloc((size_t)cap), "malloc", (size_t)cap);
                MPI_OK(MPI_Irecv(a.buf[i], cap, MPI_BYTE, p, tag, MPI_COMM_WORLD,
                                 &a.r[i]));
            } else {
                int len = c_len(k, rank);
                a.buf[i] = must(malloc((size_t)len), "malloc", (size_t)len);
                wpattern_fill(a.buf[i], (size_t)len, seed_of(rank, p, tag));
                MPI_OK(MPI_Isend(a.buf[i], len, MPI_BYTE, p, tag, MPI_COMM_WORLD,
                                 &a.r[i]));
            }
        }
    }
    int *idx = must(calloc((size_t)a.n, sizeof *idx), "calloc", 0);
    MPI_Status *sts = must(calloc((size_t)a.n, sizeof *sts), "calloc", 0);
    int completed = 0, calls = 0;
    while (completed < a.total && calls < 100000000) {
        MPI_Status st;
        int index = -2, flag = 0, outc = -2;
        calls++;
        switch (variant) {
        case 0:
            MPI_OK(MPI_Waitany(a.n, a.r, &index, &st));
            if (index == MPI_UNDEFINED) {
                CHECK(0, "Waitany: MPI_UNDEFINED with %d requests active",
                      a.total - completed);
                calls = 100000000;
                break;
            }
            c_handle(&a, index, &st, how);
            completed++;
            break;
        case 1:
            MPI_OK(MPI_Testany(a.n, a.r, &index, &flag, &st));
            if (!flag)
                break;
            if (index == MPI_UNDEFINED) {
                CHECK(0, "Testany: flag and MPI_UNDEFINED with %d requests active",
                      a.total - completed);
                calls = 100000000;
                break;
            }
            c_handle(&a, index, &st, how);
            completed++;
            break;
        default:
            if (variant == 2) {
                MPI_OK(MPI_Waitsome(a.n, a.r, &outc, idx, sts));
                CHECK(outc != 0, "Waitsome returned 0 requests");
            } else {
                MPI_OK(MPI_Testsome(a.n, a.r, &outc, idx, sts));
            }
            if (outc == MPI_UNDEFINED || outc < 0 || outc > a.total - completed) {
                CHECK(0, "%s: outcount %d with %d requests active", how, outc,
                      a.total - completed);
                calls = 100000000;
                break;
            }
            for (int j = 0; j < outc; j++)
                c_handle(&a, idx[j], &sts[j], how);
            completed += outc;
            break;
        }
    }
    /* Only nulls left: MPI_UNDEFINED. */
    int index = -2, flag = 0, outc = -2;
    MPI_Status st;
    switch (variant) {
    case 0:
        MPI_OK(MPI_Waitany(a.n, a.r, &index, &st));
        CHECK(index == MPI_UNDEFINED, "Waitany on nulls: index %d", index);
        break;
    case 1:
        MPI_OK(MPI_Testany(a.n, a.r, &index, &flag, &st));
        CHECK(flag && index == MPI_UNDEFINED, "Testany on nulls: flag %d index %d",
              flag, index);
        break;
    case 2:
        MPI_OK(MPI_Waitsome(a.n, a.r, &outc, idx, sts));
        CHECK(outc == MPI_UNDEFINED, "Waitsome on nulls: outcount %d", outc);
        break;
    default:
        MPI_OK(MPI_Testsome(a.n, a.r, &outc, idx, sts));
        CHECK(outc == MPI_UNDEFINED, "Testsome on nulls: outcount %d", outc);
        break;
    }
    CHECK(a.good == a.total, "%s: %d of %d requests right", how, a.good, a.total);
    out("C %s over %d requests (%d active, to and from every other rank, "
        "8..100 B and 1 MiB): indices, statuses, data %s", how, a.n, a.total,
        okf(f0));
    for (int i = 0; i < a.n; i++)
        free(a.buf[i]);
    free(a.buf);
    free(a.r);
    free(a.kind);
    free(a.peer);
    free(a.done);
    free(idx);
    free(sts);
}

static void completions(int rank, int size)
{
    static const char *const names[4] = {"C Waitany", "C Testany", "C Waitsome",
                                         "C Testsome"};
    for (int v = 0; v < 4; v++) {
        section(names[v]);
        multi_completion(rank, size, v);
    }
}

/* ---- D. communicators ---- */

/* Checks communicator c, whose members are the world ranks m[0..n-1] in rank
 * order: membership, a ring, Allreduce, Bcast, Alltoall. */
static void comm_suite(MPI_Comm c, const int *m, int n, int rank, int tagbase)
{
    int cs = -1, cr = -1;
    MPI_Comm_size(c, &cs);
    MPI_Comm_rank(c, &cr);
    int me = -1;
    for (int i = 0; i < n; i++)
        if (m[i] == rank)
            me = i;
    if (cs != n || cr != me) {
        CHECK(0, "rank %d of %d, expected %d of %d", cr, cs, me, n);
        return;
    }
    /* The group maps to the expected world ranks. */
    MPI_Group g, wg;
    MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *in = must(calloc((size_t)n, sizeof *in), "calloc", 0);
    int *outr = must(calloc((size_t)n, sizeof *outr), "calloc", 0);
    for (int i = 0; i < n; i++)
        in[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, n, in, wg, outr));
    for (int i = 0; i < n; i++)
        CHECK(outr[i] == m[i], "rank %d is world rank %d, expected %d", i, outr[i],
              m[i]);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(in);
    free(outr);

    /* Ring: 8 B and 200000 B to the right. */
    int right = (cr + 1) % n, left = (cr - 1 + n) % n;
    static const int rl[2] = {8, 200000};
    for (int j = 0; j < 2; j++) {
        int len = rl[j], tag = tagbase + j;
        unsigned char *sb = must(malloc((size_t)len), "malloc", (size_t)len);
        unsigned char *rb = must(malloc((size_t)len), "malloc", (size_t)len);
        wpattern_fill(sb, (size_t)len, seed_of(rank, m[right], tag));
        MPI_Request r;
        MPI_Status st;
        MPI_OK(MPI_Irecv(rb, len, MPI_BYTE, left, tag, c, &r));
        MPI_OK(MPI_Send(sb, len, MPI_BYTE, right, tag, c));
        MPI_OK(MPI_Wait(&r, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag && cnt == len,
              "ring: status (%d, %d, %d B)", st.MPI_SOURCE, st.MPI_TAG, cnt);
        wpattern_check(rb, (size_t)len, seed_of(m[left], rank, tag), "ring");
        free(sb);
        free(rb);
    }

    /* Allreduce: small SUM / MAX / MIN and a 64 Ki-int SUM. */
    long sum = 0, sum2 = 0;
    int mx = m[0], mn = m[0];
    for (int i = 0; i < n; i++) {
        sum += m[i];
        sum2 += (long)m[i] * m[i];
        if (m[i] > mx)
            mx = m[i];
        if (m[i] < mn)
            mn = m[i];
    }
    long v[4] = {rank, 1, (long)rank * rank, cr}, rv[4];
    MPI_OK(MPI_Allreduce(v, rv, 4, MPI_LONG, MPI_SUM, c));
    CHECK(rv[0] == sum && rv[1] == n && rv[2] == sum2 && rv[3] == (long)n * (n - 1) / 2,
          "Allreduce SUM: %ld %ld %ld %ld, expected %ld %d %ld %ld", rv[0], rv[1],
          rv[2], rv[3], sum, n, sum2, (long)n * (n - 1) / 2);
    int mm[2] = {rank, rank}, rmx = -1, rmn = -1;
    MPI_OK(MPI_Allreduce(&mm[0], &rmx, 1, MPI_INT, MPI_MAX, c));
    MPI_OK(MPI_Allreduce(&mm[1], &rmn, 1, MPI_INT, MPI_MIN, c));
    CHECK(rmx == mx && rmn == mn, "Allreduce MAX/MIN: %d %d, expected %d %d", rmx,
          rmn, mx, mn);
    const int nv = 65536;
    int *bv = must(malloc(nv * sizeof *bv), "malloc", 0);
    int *br = must(malloc(nv * sizeof *br), "malloc", 0);
    for (int i = 0; i < nv; i++)
        bv[i] = rank + i;
    MPI_OK(MPI_Allreduce(bv, br, nv, MPI_INT, MPI_SUM, c));
    for (int i = 0; i < nv; i++)
        if (br[i] != (int)sum + n * i) {
            CHECK(0, "Allreduce of %d ints: [%d] = %d, expected %d", nv, i, br[i],
                  (int)sum + n * i);
            break;
        }
    free(bv);
    free(br);

    /* Bcast from the last rank (300000 B) and from rank 0 (an int). */
    int blen = 300000;
    unsigned char *bb = must(malloc((size_t)blen), "malloc", (size_t)blen);
    if (cr == n - 1)
        wpattern_fill(bb, (size_t)blen, seed_of(rank, 0xbc, tagbase));
    else
        memset(bb, 0, (size_t)blen);
    MPI_OK(MPI_Bcast(bb, blen, MPI_BYTE, n - 1, c));
    wpattern_check(bb, (size_t)blen, seed_of(m[n - 1], 0xbc, tagbase), "Bcast");
    free(bb);
    int bi = cr == 0 ? 4242 + m[0] : -1;
    MPI_OK(MPI_Bcast(&bi, 1, MPI_INT, 0, c));
    CHECK(bi == 4242 + m[0], "Bcast int: %d", bi);

    /* Alltoall: 3 ints per pair. */
    int *sa = must(calloc((size_t)n * 3, sizeof *sa), "calloc", 0);
    int *ra = must(calloc((size_t)n * 3, sizeof *ra), "calloc", 0);
    for (int j = 0; j < n; j++)
        for (int t = 0; t < 3; t++)
            sa[j * 3 + t] = rank * 10000 + m[j] * 10 + t;
    MPI_OK(MPI_Alltoall(sa, 3, MPI_INT, ra, 3, MPI_INT, c));
    for (int i = 0; i < n; i++)
        for (int t = 0; t < 3; t++)
            if (ra[i * 3 + t] != m[i] * 10000 + rank * 10 + t) {
                CHECK(0, "Alltoall: from %d [%d] = %d", i, t, ra[i * 3 + t]);
                i = n;
                break;
            }
    free(sa);
    free(ra);
    MPI_OK(MPI_Barrier(c));
}

static void communicators(int rank, int size, MPI_Comm *parity_out)
{
    int *m = must(calloc((size_t)size, sizeof *m), "calloc", 0);
    int n;

    section("D per-node comm");
    int f0 = g_failures;
    MPI_Comm node = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, g_color, rank, &node));
    int cmp = -1;
    MPI_OK(MPI_Comm_compare(node, g_shm, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "per-node comm vs shared split: compare %d", cmp);
    n = 0;
    for (int r = 0; r < size; r++)
        if (g_colors[r] == g_color)
            m[n++] = r;
    comm_suite(node, m, n, rank, 4000);
    section("D shared-memory comm");
    comm_suite(g_shm, m, n, rank, 4010);
    out("D per-node comm (split by the node's first rank): congruent with the "
        "shared-memory split; ring, Allreduce, Bcast, Alltoall on both %s",
        okf(f0));

    section("D cross-node comm");
    f0 = g_failures;
    MPI_Comm cross = MPI_COMM_NULL;
    int lead = g_node_ranks[rank] == 0;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, lead ? 0 : MPI_UNDEFINED, rank, &cross));
    n = 0;
    for (int r = 0; r < size; r++)
        if (g_node_ranks[r] == 0)
            m[n++] = r;
    if (lead) {
        CHECK(cross != MPI_COMM_NULL, "a node's first rank got MPI_COMM_NULL");
        if (cross != MPI_COMM_NULL)
            comm_suite(cross, m, n, rank, 4020);
    } else {
        CHECK(cross == MPI_COMM_NULL, "MPI_UNDEFINED color gave a communicator");
    }
    /* Every rank has done its part before anyone reports. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    out("D cross-node comm (every node's first rank; the others MPI_UNDEFINED): "
        "ring, Allreduce, Bcast, Alltoall %s", okf(f0));
    if (cross != MPI_COMM_NULL)
        MPI_Comm_free(&cross);

    section("D parity comm");
    f0 = g_failures;
    MPI_Comm parity = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity));
    n = 0;
    for (int r = rank % 2; r < size; r += 2)
        m[n++] = r;
    comm_suite(parity, m, n, rank, 4030);
    out("D parity comm (world rank %% 2): ring, Allreduce, Bcast, Alltoall %s",
        okf(f0));

    section("D shared split of the parity comm");
    f0 = g_failures;
    MPI_Comm pshm = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_split_type(parity, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                               &pshm));
    n = 0;
    for (int r = rank % 2; r < size; r += 2)
        if (g_colors[r] == g_color)
            m[n++] = r;
    comm_suite(pshm, m, n, rank, 4040);
    out("D shared-memory split of the parity comm: the parity comm's ranks on this "
        "node; ring, Allreduce, Bcast, Alltoall %s", okf(f0));
    MPI_Comm_free(&pshm);
    MPI_Comm_free(&node);
    free(m);
    *parity_out = parity;
}

/* ---- E. intercommunicator ---- */

static void intercomm(int rank, int size, MPI_Comm parity)
{
    section("E intercomm");
    if (size < 2) {
        out("E intercomm even<->odd: skipped (one rank)");
        return;
    }
    int f0 = g_failures;
    int even = rank % 2 == 0;
    int neven = (size + 1) / 2, nodd = size / 2;
    int lsize = even ? neven : nodd, rsize = even ? nodd : neven;
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_OK(MPI_Intercomm_create(parity, 0, MPI_COMM_WORLD, even ? 1 : 0, 77, &inter));
    int flag = 0, ls = -1, rs = -1, lr = -1;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_size(inter, &ls);
    MPI_Comm_remote_size(inter, &rs);
    MPI_Comm_rank(inter, &lr);
    CHECK(flag && ls == lsize && rs == rsize && lr == rank / 2,
          "intercomm: inter %d, local %d (rank %d), remote %d", flag, ls, lr, rs);
    /* World rank of remote rank j. */
#define REMOTE_WORLD(j) (even ? 2 * (j) + 1 : 2 * (j))

    /* Every rank sends to every remote rank (16 B or 4 KiB), received with
     * ANY_SOURCE. */
    const int tag = 5000;
    MPI_Request *sr = must(calloc((size_t)rsize, sizeof *sr), "calloc", 0);
    MPI_Request *rr = must(calloc((size_t)rsize, sizeof *rr), "calloc", 0);
    MPI_Status *st = must(calloc((size_t)rsize, sizeof *st), "calloc", 0);
    unsigned char **sb = must(calloc((size_t)rsize, sizeof *sb), "calloc", 0);
    unsigned char **rb = must(calloc((size_t)rsize, sizeof *rb), "calloc", 0);
    for (int j = 0; j < rsize; j++) {
        rb[j] = must(malloc(4096), "malloc", 4096);
        MPI_OK(MPI_Irecv(rb[j], 4096, MPI_BYTE, MPI_ANY_SOURCE, tag, inter, &rr[j]));
    }
    for (int j = 0; j < rsize; j++) {
        int len = (lr + j) % 2 ? 4096 : 16;
        sb[j] = must(malloc((size_t)len), "malloc", (size_t)len);
        wpattern_fill(sb[j], (size_t)len, seed_of(rank, REMOTE_WORLD(j), tag));
        MPI_OK(MPI_Isend(sb[j], len, MPI_BYTE, j, tag, inter, &sr[j]));
    }
    MPI_OK(MPI_Waitall(rsize, rr, st));
    MPI_OK(MPI_Waitall(rsize, sr, MPI_STATUSES_IGNORE));
    char *seen = must(calloc((size_t)rsize, 1), "calloc", 0);
    for (int i = 0; i < rsize; i++) {
        int j = st[i].MPI_SOURCE, c = -1;
        MPI_Get_count(&st[i], MPI_BYTE, &c);
        if (j < 0 || j >= rsize || seen[j]) {
            CHECK(0, "intercomm ANY_SOURCE receive: source %d", j);
            continue;
        }
        seen[j] = 1;
        int len = (j + lr) % 2 ? 4096 : 16;
        if (c != len || st[i].MPI_TAG != tag) {
            CHECK(0, "intercomm from remote %d: %d B tag %d, expected %d B", j, c,
                  st[i].MPI_TAG, len);
            continue;
        }
        wpattern_check(rb[i], (size_t)len, seed_of(REMOTE_WORLD(j), rank, tag),
                       "intercomm message");
    }
    for (int j = 0; j < rsize; j++) {
        free(sb[j]);
        free(rb[j]);
    }
    free(sb);
    free(rb);
    free(sr);
    free(rr);
    free(st);
    free(seen);

    /* The leaders exchange 1 MiB. */
    if (lr == 0) {
        unsigned char *s1 = must(malloc(MIB), "malloc", MIB);
        unsigned char *r1 = must(malloc(MIB), "malloc", MIB);
        wpattern_fill(s1, MIB, seed_of(rank, REMOTE_WORLD(0), tag + 1));
        MPI_Status s;
        MPI_OK(MPI_Sendrecv(s1, MIB, MPI_BYTE, 0, tag + 1, r1, MIB, MPI_BYTE, 0,
                            tag + 1, inter, &s));
        CHECK(s.MPI_SOURCE == 0, "leader exchange: source %d", s.MPI_SOURCE);
        wpattern_check(r1, MIB, seed_of(REMOTE_WORLD(0), rank, tag + 1),
                       "leader exchange");
        free(s1);
        free(r1);
    }

    /* Allreduce over the intercommunicator: the remote group's sum. */
    long mine = rank, rsum = -1, expect = 0;
    for (int j = 0; j < rsize; j++)
        expect += REMOTE_WORLD(j);
    MPI_OK(MPI_Allreduce(&mine, &rsum, 1, MPI_LONG, MPI_SUM, inter));
    CHECK(rsum == expect, "intercomm Allreduce: %ld, expected %ld", rsum, expect);
#undef REMOTE_WORLD

    /* Merge: evens low, odds high. */
    MPI_Comm merged = MPI_COMM_NULL;
    MPI_OK(MPI_Intercomm_merge(inter, even ? 0 : 1, &merged));
    int mr = -1, ms = -1;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    int emr = even ? rank / 2 : neven + rank / 2;
    CHECK(ms == size && mr == emr, "merged: rank %d of %d, expected %d of %d", mr, ms,
          emr, size);
    long v[3] = {rank, mr, 1}, rv[3];
    MPI_OK(MPI_Allreduce(v, rv, 3, MPI_LONG, MPI_SUM, merged));
    long tri = (long)size * (size - 1) / 2;
    CHECK(rv[0] == tri && rv[1] == tri && rv[2] == size,
          "merged Allreduce: %ld %ld %ld, expected %ld %ld %d", rv[0], rv[1], rv[2],
          tri, tri, size);
    int root_world = size % 2 ? size - 2 : size - 1; /* last odd: merged rank size-1 */
    int bv = mr == size - 1 ? 777 + rank : -1;
    MPI_OK(MPI_Bcast(&bv, 1, MPI_INT, size - 1, merged));
    CHECK(bv == 777 + root_world, "merged Bcast: %d, expected %d", bv,
          777 + root_world);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    out("E intercomm even<->odd (Intercomm_create over world): ANY_SOURCE "
        "receives from every remote rank, leaders' 1 MiB exchange, Allreduce; "
        "Intercomm_merge: ranks, Allreduce, Bcast %s", okf(f0));
}

/* ---- F. ordering stress ---- */

static void ordering_stress(int rank, int size)
{
    section("F ANY_SOURCE + blocking Send");
    int f0 = g_failures;
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    unsigned char *s0 = must(malloc(MIB), "malloc", MIB);
    unsigned char *s1 = must(malloc(MIB), "malloc", MIB);
    unsigned char *rb[2];
    rb[0] = must(malloc(MIB), "malloc", MIB);
    rb[1] = must(malloc(MIB), "malloc", MIB);
    const int rounds = 3;
    for (int it = 0; it < rounds; it++) {
        int tag = 6000 + it;
        MPI_Request r[2];
        MPI_Status st[2];
        for (int j = 0; j < 2; j++)
            MPI_OK(MPI_Irecv(rb[j], MIB, MPI_BYTE, MPI_ANY_SOURCE, tag,
                             MPI_COMM_WORLD, &r[j]));
        /* 0: the message to the right; 1: the one to the left. */
        wpattern_fill(s0, MIB, seed_of(rank, right, tag * 2));
        wpattern_fill(s1, MIB, seed_of(rank, left, tag * 2 + 1));
        MPI_OK(MPI_Send(s0, MIB, MPI_BYTE, right, tag, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(s1, MIB, MPI_BYTE, left, tag, MPI_COMM_WORLD));
        MPI_OK(MPI_Waitall(2, r, st));
        /* From the left its message to the right, from the right its message
         * to the left; with 2 ranks both come from the other, in order. */
        for (int j = 0; j < 2; j++) {
            int src = st[j].MPI_SOURCE, c = -1, which;
            MPI_Get_count(&st[j], MPI_BYTE, &c);
            if (left == right)
                which = j;
            else if (src == left)
                which = 0;
            else if (src == right)
                which = 1;
            else {
                CHECK(0, "round %d: message from %d", it, src);
                continue;
            }
            int from = which == 0 ? left : right;
            CHECK(src == from && c == MIB && st[j].MPI_TAG == tag,
                  "round %d: receive %d: (%d, %d, %d B)", it, j, src,
                  st[j].MPI_TAG, c);
            char what[64];
            snprintf(what, sizeof what, "round %d receive %d (from %d)", it, j, src);
            wpattern_check(rb[j], MIB, seed_of(from, rank, tag * 2 + which), what);
        }
        if (left != right && st[0].MPI_SOURCE == st[1].MPI_SOURCE)
            CHECK(0, "round %d: both messages from %d", it, st[0].MPI_SOURCE);
    }
    /* The same with 8 B synchronous sends. */
    for (int it = 0; it < rounds; it++) {
        int tag = 6100 + it;
        long rv[2] = {-1, -1}, sv0 = rank * 10L, sv1 = rank * 10L + 1;
        MPI_Request r[2];
        MPI_Status st[2];
        for (int j = 0; j < 2; j++)
            MPI_OK(MPI_Irecv(&rv[j], 1, MPI_LONG, MPI_ANY_SOURCE, tag,
                             MPI_COMM_WORLD, &r[j]));
        MPI_OK(MPI_Ssend(&sv0, 1, MPI_LONG, right, tag, MPI_COMM_WORLD));
        MPI_OK(MPI_Ssend(&sv1, 1, MPI_LONG, left, tag, MPI_COMM_WORLD));
        MPI_OK(MPI_Waitall(2, r, st));
        long want0 = left * 10L, want1 = right * 10L + 1;
        int ok = left == right ? rv[0] == want0 && rv[1] == want1
                               : (rv[0] == want0 && rv[1] == want1) ||
                                     (rv[0] == want1 && rv[1] == want0);
        CHECK(ok, "Ssend round %d: got %ld %ld, expected %ld and %ld", it, rv[0],
              rv[1], want0, want1);
    }
    out("F 2 Irecv(ANY_SOURCE) pending during blocking 1 MiB Sends to both "
        "neighbours, %d rounds, then 8 B Ssends: completed, data %s", rounds,
        okf(f0));
    free(s0);
    free(s1);
    free(rb[0]);
    free(rb[1]);
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    find_nodes(rank, size);
    fanin(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    ssend_pairs(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    cancel_recvs(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    completions(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm parity = MPI_COMM_NULL;
    communicators(rank, size, &parity);
    MPI_Barrier(MPI_COMM_WORLD);
    intercomm(rank, size, parity);
    MPI_Barrier(MPI_COMM_WORLD);
    ordering_stress(rank, size);
    MPI_Comm_free(&parity);
    MPI_Comm_free(&g_shm);
    free(g_colors);
    free(g_node_ranks);
    return p2p_finish("xnode", rank, size);
}

/*
 * coll_nonblocking.c - collective conformance: the nonblocking collectives.
 *
 * Why: whether heapmpi runs a nonblocking collective itself or hands it to
 * the real MPI, its request travels through the same completion calls
 * (Wait/Test families, Request_get_status) as heapmpi's own point-to-point
 * requests, sometimes in one array with them; and the collective must keep
 * progressing while its rank sits in a blocking call that heapmpi may serve
 * without the real MPI (a blocking collective over the heap, a node-local
 * Send or Recv, MPI_Comm_dup). A datatype or a communicator freed before
 * the Wait must not change the result. None of this may hang.
 *
 * Sections:
 *  A. on MPI_COMM_WORLD, each request completed by MPI_Wait (the sizes of
 *     one root, the cases of one (operation, type) posted together, then
 *     Waited for in the order posted): Ibcast from every root of 0, 1, 7,
 *     8, 100, 1000, 1024, 1025, 4096, 65539 elements of MPI_BYTE and of
 *     MPI_INT; Ibcast of 2 elements of a strided Type_vector freed before
 *     the Wait (holes untouched); Ibarrier; Iallreduce and Ireduce: SUM,
 *     MAX, MIN, PROD (small values), BAND, BOR on MPI_INT, MPI_LONG_LONG,
 *     MPI_UNSIGNED, SUM (integer-valued, exact) and MAX on MPI_DOUBLE,
 *     counts 0, 1, 3, 100, 1000, 50000, normal and MPI_IN_PLACE: at 1 and
 *     2 ranks every case, Ireduce at every root; at more (oversubscribed)
 *     one Iallreduce and one Ireduce per (operation, type, count), root
 *     and form rotating. Results equal the local reference; the element
 *     after the result and the send buffer are unchanged.
 *  B. 18 outstanding requests (12 Iallreduce with distinct buffers and
 *     patterns, 3 Ibarrier, 3 Ibcast, interleaved) completed by Waitall; by
 *     a loop of Testall; by Waitany until MPI_UNDEFINED; by a loop of
 *     Testsome until MPI_UNDEFINED: each request completes exactly once.
 *  C. with blocking collectives and point-to-point on MPI_COMM_WORLD:
 *     Iallreduce and Ibcast posted, then Allreduce, Bcast, Barrier, then
 *     the Waits; Ibarrier, a blocking 100000-byte token ring (Send/Recv),
 *     Wait; Ibcast of 65539 bytes from rank 0: the last rank Waits, then
 *     Sends to rank 0, which Recvs before its own Wait (its Ibcast must
 *     progress inside Recv); Waitall over [Irecv, MPI_REQUEST_NULL,
 *     Iallreduce, Isend]; Request_get_status on an Iallreduce until flag,
 *     then Wait; Test(MPI_STATUS_IGNORE) on an Ibcast until flag.
 *  D. Ibarrier, Ibcast and Ireduce from every root, Iallreduce and in
 *     place, all posted, then Waited for, on Comm_dup(WORLD), on
 *     Comm_split(odd/even, keys reversed), on a split by pretend node
 *     (HEAPMPI_TEST_NODE_SIZE; everyone when unset), on MPI_COMM_SELF;
 *     Comm_free of a duplicate with an Iallreduce, an Ibcast and an
 *     Ibarrier on it complete (Request_get_status) but not freed, then
 *     the Waits; the same with them still pending (not under Open MPI,
 *     which crashes there).
 *  E. 8 Iallreduce on MPI_COMM_WORLD; rank 0 calls Comm_dup(WORLD) before
 *     its Waitall, the others after theirs (the duplication must progress
 *     rank 0's Iallreduces).
 *  F. on a duplicate with MPI_ERRORS_RETURN, every rank making the same
 *     call: Ibcast with root = size, Ireduce with root -1, Ibcast with
 *     count -1, Iallreduce with count -1 (not under MPICH, which crashes),
 *     Ireduce with MPI_OP_NULL: the error class (compared with the stock
 *     run of the same MPI); then an Iallreduce on it is right.
 *  G. Igather and Iscatter at every root, Iallgather and Ialltoall, of
 *     0 .. 65540 bytes per block (MPI_BYTE, or MPI_INT where the size
 *     allows), in place and not, all sizes of one (root, form) posted, then
 *     Waited for in reverse order (later operations complete first);
 *     every block and the guard after the buffer checked.
 *
 *  H. Iscan, Iexscan, Ireduce_scatter_block and Ireduce_scatter on
 *     MPI_COMM_WORLD with the operations and types of A, counts 0, 1, 3,
 *     33, 100 (per block; Ireduce_scatter's differ per member, zeros
 *     included),
 *     in place and not, the counts of one case posted together and waited
 *     for in reverse order: results (not Iexscan's on rank 0, which MPI
 *     leaves undefined), the guard after them and the send buffers.
 *
 *  I. rank 0 posts an Igather (root 0, receive type a duplicate of
 *     MPI_INT, freed at once) and 4 Ibarriers on MPI_COMM_WORLD, then an
 *     Ireduce with a user-defined operation on a duplicate (the real
 *     MPI's), and Waits for that first; the others post 50 ms later and
 *     Waitall theirs before they join the Ireduce (the last Ibarrier needs
 *     rank 0 to have finished the Igather while it sits in the real MPI);
 *     again with a receive type of 10 ints at stride 2 (not dense), and
 *     with Igatherv, Iallgatherv and Ialltoallv into ints at stride 2, of
 *     10 ints (in the cells) and 3000 (read in place from the heap), and
 *     with an Igather, an Ibcast and an Iscatter (from rank 1: rank 0
 *     receives) of 200000 ints into ints at stride 2 (large: in place, or
 *     in chunks through the cells when the heap is too small to stage).
 *
 * MAX / MIN values of MPI_UNSIGNED keep their top bit clear under MPICH
 * (it compares them as signed), so those checksums differ between the MPIs.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines (exact results
 * or checksums of exact results), then "rank N: nonblocking ok". Exit
 * status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll_util.h"

static int g_me, g_n;

/* ---- exact element values and their reference fold ---- */

enum { T_INT, T_LL, T_UNS, T_DBL, NT };
static const char *TNAME[NT] = {"MPI_INT", "MPI_LONG_LONG", "MPI_UNSIGNED", "MPI_DOUBLE"};
static const size_t TSIZE[NT] = {4, 8, 4, 8};
enum { O_SUM, O_MAX, O_MIN, O_PROD, O_BAND, O_BOR, NO };
static const char *ONAME[NO] = {"SUM", "MAX", "MIN", "PROD", "BAND", "BOR"};

static MPI_Datatype TDT[NT]; /* set in main */
static MPI_Op MOP[NO];

/* Element j of member r's contribution to case s: sums and products that
 * cannot overflow, integer-valued doubles, so every result is exact. */
static void gen(int t, int o, uint64_t s, int r, size_t j, void *p)
{
    uint64_t h = mix64(s + (uint64_t)r * 0x9e3779b97f4a7c15ull, j);
    int small = (int)(h % 6) - 2; /* -2 .. 3 */
    if (t == T_INT) {
        int v = o == O_SUM ? (int)(h % 2001) - 1000 : o == O_PROD ? small : (int)h;
        memcpy(p, &v, 4);
    } else if (t == T_LL) {
        long long v = o == O_SUM    ? (long long)(h >> 24) - (1ll << 39)
                      : o == O_PROD ? small : (long long)h;
        memcpy(p, &v, 8);
    } else if (t == T_UNS) {
        unsigned v = o == O_SUM    ? (unsigned)(h % (1u << 29))
                     : o == O_PROD ? (unsigned)(h % 4) : (unsigned)h;
#ifdef MPICH_VERSION
        /* stock MPICH 4.0.2 compares MPI_UNSIGNED as signed in MAX / MIN
         * (blocking or not: MAX of 0x80000000 and 1 gives 1); see
         * coll_reduce.c */
        if (o == O_MAX || o == O_MIN)
            v &= 0x7fffffffu;
#endif
        memcpy(p, &v, 4);
    } else {
        double v = o == O_SUM ? (double)((int64_t)(h >> 20) - (1ll << 43))
                              : (double)(int32_t)h / 1024.0;
        memcpy(p, &v, 8);
    }
}

#define FOLD(T)                                                              \
    do {                                                                     \
        T a, b;                                                              \
        memcpy(&a, in, sizeof a);                                            \
        memcpy(&b, io, sizeof b);                                            \
        b = o == O_SUM ? (T)(a + b) : o == O_MAX ? (a > b ? a : b)           \
            : o == O_MIN ? (a < b ? a : b) : (T)(a * b);                     \
        memcpy(io, &b, sizeof b);                                            \
    } while (0)

/* io = in op io */
static void fold(int t, int o, const unsigned char *in, unsigned char *io)
{
    if (o == O_BAND || o == O_BOR)
        for (size_t i = 0; i < TSIZE[t]; i++)
            io[i] = o == O_BAND ? in[i] & io[i] : in[i] | io[i];
    else if (t == T_INT)
        FOLD(int);
    else if (t == T_LL)
        FOLD(long long);
    else if (t == T_UNS)
        FOLD(unsigned);
    else
        FOLD(double);
}

#define GUARD 0xA5

/* ---- one Iallreduce / Ireduce / Ibcast: post, then check ---- */

typedef struct rcase {
    int t, o, root, ip; /* root -1: Iallreduce; ip: MPI_IN_PLACE */
    int r, n;           /* this rank and the size of the communicator */
    uint64_t s;
    size_t cnt;
    unsigned char *sb, *rb;
    MPI_Request rq;
} rcase;

static void post_reduce(rcase *c, int t, int o, int root, int ip, uint64_t s, size_t cnt,
                        MPI_Comm comm)
{
    *c = (rcase){.t = t, .o = o, .root = root, .ip = ip, .s = s, .cnt = cnt};
    MPI_Comm_rank(comm, &c->r);
    MPI_Comm_size(comm, &c->n);
    const size_t z = TSIZE[t], nb = cnt * z;
    c->sb = must(malloc(nb + 8), "malloc", nb);
    c->rb = must(malloc(nb + 8), "malloc", nb);
    for (size_t j = 0; j < cnt; j++)
        gen(t, o, s, c->r, j, c->sb + j * z);
    const int has = root < 0 || c->r == root, inpl = ip && has;
    memcpy(c->rb, c->sb, nb);
    if (!inpl)
        memset(c->rb, 0xEE, nb);
    memset(c->rb + nb, GUARD, 8);
    void *sb = inpl ? MPI_IN_PLACE : c->sb;
    if (root < 0)
        MPI_OK(MPI_Iallreduce(sb, c->rb, (int)cnt, TDT[t], MOP[o], comm, &c->rq));
    else
        MPI_OK(MPI_Ireduce(sb, has ? c->rb : NULL, (int)cnt, TDT[t], MOP[o], root, comm, &c->rq));
}

/* After completion: 1 if right (result, the element after it, the send
 * buffer); *h folds in the result where this rank has one. */
static int check_reduce(rcase *c, uint64_t *h)
{
    const size_t z = TSIZE[c->t], nb = c->cnt * z;
    const int has = c->root < 0 || c->r == c->root;
    unsigned char *ref = must(malloc(nb + 1), "malloc", nb), e[8];
    int ok = c->rq == MPI_REQUEST_NULL;
    for (size_t j = 0; j < c->cnt; j++) {
        gen(c->t, c->o, c->s, c->r, j, e);
        ok &= memcmp(e, c->sb + j * z, z) == 0;
        if (!has)
            continue;
        gen(c->t, c->o, c->s, 0, j, ref + j * z);
        for (int r = 1; r < c->n; r++) {
            gen(c->t, c->o, c->s, r, j, e);
            fold(c->t, c->o, e, ref + j * z);
        }
    }
    for (int i = 0; i < 8; i++)
        ok &= c->rb[nb + (size_t)i] == GUARD;
    if (has) {
        ok &= memcmp(c->rb, ref, nb) == 0;
        *h = hash_bytes(*h, c->rb, nb);
    }
    CHECK(ok, "%s %s %s count %zu root %d%s: wrong", c->root < 0 ? "Iallreduce" : "Ireduce",
          ONAME[c->o], TNAME[c->t], c->cnt, c->root, c->ip ? " in place" : "");
    free(ref);
    free(c->sb);
    free(c->rb);
    return ok;
}

typedef struct bcase {
    int cnt, root, isint;
    uint64_t s;
    unsigned char *b;
    MPI_Request rq;
} bcase;

static void post_bcast(bcase *c, int cnt, int root, int isint, uint64_t s, MPI_Comm comm)
{
    *c = (bcase){.cnt = cnt, .root = root, .isint = isint, .s = s};
    const size_t nb = (size_t)cnt * (isint ? 4 : 1);
    int r;
    MPI_Comm_rank(comm, &r);
    c->b = must(malloc(nb + 8), "malloc", nb);
    if (r == root)
        wpattern_fill(c->b, nb, s);
    else
        memset(c->b, 0xEE, nb);
    memset(c->b + nb, GUARD, 8);
    MPI_OK(MPI_Ibcast(c->b, cnt, isint ? MPI_INT : MPI_BYTE, root, comm, &c->rq));
}

static int check_bcast(bcase *c, uint64_t *h)
{
    const size_t nb = (size_t)c->cnt * (c->isint ? 4 : 1);
    int ok = c->rq == MPI_REQUEST_NULL && wpattern_check(c->b, nb, c->s, "Ibcast");
    for (int i = 0; i < 8; i++)
        ok &= c->b[nb + (size_t)i] == GUARD;
    CHECK(ok, "Ibcast of %d %s from %d: wrong", c->cnt, c->isint ? "MPI_INT" : "MPI_BYTE",
          c->root);
    *h = hash_bytes(*h, c->b, nb);
    free(c->b);
    return ok;
}

/* ---- A: world, completed by MPI_Wait ---- */

static void ibcast_sizes(void)
{
    section("A Ibcast");
    static const int sizes[] = {0, 1, 7, 8, 100, 1000, 1024, 1025, 4096, 65536 + 3};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    for (int isint = 0; isint < 2; isint++) {
        int good = 0;
        uint64_t h = 0;
        for (int root = 0; root < g_n; root++) {
            bcase c[NS];
            for (int k = 0; k < NS; k++)
                post_bcast(&c[k], sizes[k], root, isint,
                           seed6(1, (uint64_t)isint, (uint64_t)root, (uint64_t)k, 0, 0),
                           MPI_COMM_WORLD);
            for (int k = 0; k < NS; k++) {
                MPI_OK(MPI_Wait(&c[k].rq, MPI_STATUS_IGNORE));
                good += check_bcast(&c[k], &h);
            }
        }
        out("A Ibcast of %s, %d sizes (0 .. 65539) from each of %d roots: %d of %d right, "
            "checksum %016llx", isint ? "MPI_INT" : "MPI_BYTE", NS, g_n, good, NS * g_n,
            (unsigned long long)h);
    }

    /* a strided vector, freed before the Wait: 50 blocks of 3 ints, stride 7 */
    enum { VB = 50, VL = 3, VS = 7, VEXT = (VB - 1) * VS + VL, NI = 2 * VEXT };
    int vb[NI + 1], good = 0;
    uint64_t h = 0;
    for (int root = 0; root < g_n; root++) {
        MPI_Datatype vec;
        MPI_OK(MPI_Type_vector(VB, VL, VS, MPI_INT, &vec));
        MPI_OK(MPI_Type_commit(&vec));
        for (int i = 0; i <= NI; i++)
            vb[i] = g_me == root && i < NI ? (int)mix64(77 + (uint64_t)root, (uint64_t)i) : -1;
        MPI_Request rq;
        MPI_OK(MPI_Ibcast(vb, 2, vec, root, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Type_free(&vec));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        int ok = vec == MPI_DATATYPE_NULL && vb[NI] == -1;
        for (int i = 0; i < NI; i++) {
            int in = (i % VEXT) % VS < VL;
            int want = in || g_me == root ? (int)mix64(77 + (uint64_t)root, (uint64_t)i) : -1;
            ok &= vb[i] == want;
            if (in)
                h = mix64(h, (uint32_t)vb[i]);
        }
        CHECK(ok, "Ibcast of a vector type freed before the Wait, root %d: wrong", root);
        good += ok;
    }
    out("A Ibcast of 2 x vector(50 x 3 ints, stride 7), type freed before the Wait, from "
        "each root: %d of %d right (holes untouched), checksum %016llx", good, g_n,
        (unsigned long long)h);

    MPI_Request rq;
    MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    out("A Ibarrier: %s", rq == MPI_REQUEST_NULL ? "done" : "WRONG (request not null)");
}

static void ireduce_all(void)
{
    section("A Iallreduce/Ireduce");
    static const size_t counts[] = {0, 1, 3, 100, 1000, 50000};
    enum { NC = sizeof counts / sizeof counts[0] };
    const int full = g_n <= 2;
    const MPI_Comm w = MPI_COMM_WORLD;
    rcase *c = must(calloc(NC * (2 + 2 * (size_t)g_n), sizeof *c), "calloc", 0);
    int seq = 0;
    for (int t = 0; t < NT; t++)
        for (int o = 0; o < NO; o++) {
            if (t == T_DBL && o != O_SUM && o != O_MAX)
                continue;
            int nc = 0, good = 0;
            for (int k = 0; k < NC; k++, seq++) {
                const uint64_t s = seed6(2, (uint64_t)t, (uint64_t)o, (uint64_t)k, 0, 0);
                for (int ip = 0; ip < 2; ip++)
                    if (full || ip == seq % 2)
                        post_reduce(&c[nc++], t, o, -1, ip, s, counts[k], w);
                for (int root = 0; root < g_n; root++)
                    if (full)
                        post_reduce(&c[nc++], t, o, root, (root + k) % 2, s, counts[k], w);
                    else if (root == seq % g_n)
                        post_reduce(&c[nc++], t, o, root, (seq / g_n) % 2, s, counts[k], w);
            }
            uint64_t ha = 0, hr = 0;
            for (int i = 0; i < nc; i++) {
                MPI_OK(MPI_Wait(&c[i].rq, MPI_STATUS_IGNORE));
                good += check_reduce(&c[i], c[i].root < 0 ? &ha : &hr);
            }
            out("A Iallreduce/Ireduce %s %s, counts 0 .. 50000: %d of %d cases right, "
                "checksums %016llx %016llx", ONAME[o], TNAME[t], good, nc,
                (unsigned long long)ha, (unsigned long long)hr);
        }
    free(c);
}

/* ---- B: many outstanding ---- */

static void many_outstanding(void)
{
    section("B many outstanding");
    enum { NB = 18 };
    static const char *MNAME[4] = {"MPI_Waitall", "a loop of MPI_Testall",
                                   "MPI_Waitany until MPI_UNDEFINED",
                                   "a loop of MPI_Testsome until MPI_UNDEFINED"};
    static const int bops[3] = {O_SUM, O_MAX, O_BOR}, bsz[3] = {5, 3000, 70000};
    for (int m = 0; m < 4; m++) {
        /* Iallreduce, Iallreduce, Ibarrier, Iallreduce, Iallreduce, Ibcast, ... */
        MPI_Request rq[NB];
        rcase rc[NB];
        bcase bc[NB];
        for (int i = 0, ka = 0, kb = 0; i < NB; i++) {
            const uint64_t s = seed6(3, (uint64_t)m, (uint64_t)i, 0, 0, 0);
            if (i % 6 == 2) {
                MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[i]));
            } else if (i % 6 == 5) {
                post_bcast(&bc[i], bsz[kb], kb % g_n, 0, s, MPI_COMM_WORLD);
                rq[i] = bc[i].rq;
                kb++;
            } else {
                post_reduce(&rc[i], T_INT, bops[ka % 3], -1, 0, s, 1 + 91 * (size_t)ka,
                            MPI_COMM_WORLD);
                rq[i] = rc[i].rq;
                ka++;
            }
        }
        int seen[NB] = {0}, done = 0, ok = 1, flag = 0, idx[NB], oc;
        if (m == 0) {
            MPI_OK(MPI_Waitall(NB, rq, MPI_STATUSES_IGNORE));
            done = NB;
        } else if (m == 1) {
            while (!flag)
                MPI_OK(MPI_Testall(NB, rq, &flag, MPI_STATUSES_IGNORE));
            done = NB;
        } else {
            for (;;) {
                if (m == 2) {
                    MPI_OK(MPI_Waitany(NB, rq, &idx[0], MPI_STATUS_IGNORE));
                    oc = idx[0] == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
                } else {
                    MPI_OK(MPI_Testsome(NB, rq, &oc, idx, MPI_STATUSES_IGNORE));
                }
                if (oc == MPI_UNDEFINED || !(ok &= oc >= 0 && done + oc <= NB))
                    break;
                for (int q = 0; q < oc; q++, done++)
                    ok &= idx[q] >= 0 && idx[q] < NB && seen[idx[q]]++ == 0;
            }
        }
        uint64_t h = 0;
        for (int i = 0; i < NB; i++) {
            ok &= rq[i] == MPI_REQUEST_NULL;
            if (i % 6 == 5) {
                bc[i].rq = rq[i];
                ok &= check_bcast(&bc[i], &h);
            } else if (i % 6 != 2) {
                rc[i].rq = rq[i];
                ok &= check_reduce(&rc[i], &h);
            }
        }
        CHECK(ok && done == NB, "18 outstanding completed by %s: wrong (%d completions)",
              MNAME[m], done);
        out("B %d outstanding (12 Iallreduce, 3 Ibarrier, 3 Ibcast) completed by %s: %d "
            "completions, %s, checksum %016llx", NB, MNAME[m], done, ok ? "right" : "WRONG",
            (unsigned long long)h);
    }
}

/* ---- C: with blocking collectives and point-to-point ---- */

static void mixed(void)
{
    const int me = g_me, n = g_n, right = (me + 1) % n, left = (me - 1 + n) % n;
    const MPI_Comm w = MPI_COMM_WORLD;
    rcase rc;
    bcase bc;
    uint64_t h = 0;
    int ok;

    section("C blocking collectives");
    post_reduce(&rc, T_INT, O_SUM, -1, 0, 400, 100, w);
    post_bcast(&bc, 5, n - 1, 1, 401, w);
    int x = me + 1, s = 0, b = me == 0 ? 4711 : -1;
    MPI_OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, w));
    MPI_OK(MPI_Bcast(&b, 1, MPI_INT, 0, w));
    MPI_OK(MPI_Barrier(w));
    MPI_OK(MPI_Wait(&rc.rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&bc.rq, MPI_STATUS_IGNORE));
    ok = check_reduce(&rc, &h) & check_bcast(&bc, &h);
    ok &= s == n * (n + 1) / 2 && b == 4711;
    CHECK(ok, "Iallreduce/Ibcast around Allreduce, Bcast, Barrier: wrong");
    out("C Iallreduce and Ibcast posted, Allreduce, Bcast, Barrier, then the Waits: %s, "
        "checksum %016llx", ok ? "right" : "WRONG", (unsigned long long)h);

    section("C Ibarrier around a ring");
    if (n < 2) {
        out("C Ibarrier, blocking Send/Recv ring, Wait: needs 2 ranks, skipped");
    } else {
        /* the token goes 0 -> 1 -> ... -> n-1 -> 0, passed on unchanged */
        enum { RB = 100000 };
        unsigned char *t = must(malloc(RB), "malloc", RB);
        memset(t, 0, RB);
        MPI_Request rq;
        MPI_OK(MPI_Ibarrier(w, &rq));
        if (me == 0) {
            wpattern_fill(t, RB, 500);
            MPI_OK(MPI_Send(t, RB, MPI_BYTE, right, 80, w));
            memset(t, 0, RB);
        }
        MPI_OK(MPI_Recv(t, RB, MPI_BYTE, left, 80, w, MPI_STATUS_IGNORE));
        if (me != 0)
            MPI_OK(MPI_Send(t, RB, MPI_BYTE, right, 80, w));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        ok = rq == MPI_REQUEST_NULL && wpattern_check(t, RB, 500, "ring token");
        CHECK(ok, "Ibarrier around a blocking ring: wrong");
        out("C Ibarrier, blocking %d-byte Send/Recv ring, Wait: %s", RB, ok ? "right" : "WRONG");
        free(t);
    }

    section("C Ibcast, Recv before Wait");
    int tok = -1;
    post_bcast(&bc, 65536 + 3, 0, 0, 600, w);
    if (n > 1 && me == n - 1) {
        MPI_OK(MPI_Wait(&bc.rq, MPI_STATUS_IGNORE));
        tok = 321;
        MPI_OK(MPI_Send(&tok, 1, MPI_INT, 0, 81, w));
    } else if (n > 1 && me == 0) {
        MPI_OK(MPI_Recv(&tok, 1, MPI_INT, n - 1, 81, w, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&bc.rq, MPI_STATUS_IGNORE));
    } else {
        MPI_OK(MPI_Wait(&bc.rq, MPI_STATUS_IGNORE));
    }
    ok = check_bcast(&bc, &h) && (n == 1 || (me != 0 && me != n - 1) || tok == 321);
    CHECK(ok, "Ibcast with rank 0 in Recv before its Wait: wrong (token %d)", tok);
    out("C Ibcast of 65539 bytes from rank 0; the last rank Waits, then Sends to rank 0, "
        "which Recvs before its Wait: %s", ok ? "right" : "WRONG");

    section("C mixed arrays");
    int sv[3] = {me, 7, 8}, rv[3] = {-1, -1, -1}, cnt = -1;
    MPI_Request rq[4];
    MPI_Status st[4];
    MPI_OK(MPI_Irecv(rv, 3, MPI_INT, left, 82, w, &rq[0]));
    rq[1] = MPI_REQUEST_NULL;
    post_reduce(&rc, T_LL, O_SUM, -1, 0, 402, 7, w);
    rq[2] = rc.rq;
    MPI_OK(MPI_Isend(sv, 3, MPI_INT, right, 82, w, &rq[3]));
    MPI_OK(MPI_Waitall(4, rq, st));
    rc.rq = rq[2];
    MPI_Get_count(&st[0], MPI_INT, &cnt);
    ok = check_reduce(&rc, &h) && rv[0] == left && rv[1] == 7 && rv[2] == 8 &&
         st[0].MPI_SOURCE == left && st[0].MPI_TAG == 82 && cnt == 3;
    for (int i = 0; i < 4; i++)
        ok &= rq[i] == MPI_REQUEST_NULL;
    CHECK(ok, "Waitall over Irecv, null, Iallreduce, Isend: wrong");
    out("C Waitall over [Irecv, MPI_REQUEST_NULL, Iallreduce, Isend]: %s",
        ok ? "right" : "WRONG");

    int flag = 0;
    post_reduce(&rc, T_INT, O_MAX, -1, 1, 403, 64, w);
    while (!flag)
        MPI_OK(MPI_Request_get_status(rc.rq, &flag, MPI_STATUS_IGNORE));
    ok = rc.rq != MPI_REQUEST_NULL;
    MPI_OK(MPI_Wait(&rc.rq, MPI_STATUS_IGNORE));
    ok &= check_reduce(&rc, &h);
    CHECK(ok, "Request_get_status on an Iallreduce: wrong");
    out("C Request_get_status on an Iallreduce until flag (request kept), then Wait: %s",
        ok ? "right" : "WRONG");

    post_bcast(&bc, 4, n / 2, 1, 404, w);
    for (flag = 0; !flag;)
        MPI_OK(MPI_Test(&bc.rq, &flag, MPI_STATUS_IGNORE));
    ok = check_bcast(&bc, &h);
    out("C Test(MPI_STATUS_IGNORE) on an Ibcast until flag: %s; checksum of section C "
        "%016llx", ok ? "right" : "WRONG", (unsigned long long)h);
}

/* ---- D: communicators ---- */

static void battery(MPI_Comm c, const char *label)
{
    int r, m;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &m);
    /* the members' world ranks (a blocking collective first) */
    int *wr = must(malloc((size_t)m * sizeof(int)), "malloc", 0);
    int *ib = must(malloc((size_t)m * 2 * sizeof(int)), "malloc", 0);
    MPI_OK(MPI_Allgather(&g_me, 1, MPI_INT, wr, 1, MPI_INT, c));
    char list[256];
    size_t len = 0;
    for (int i = 0; i < m && len + 16 < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", i ? "," : "", wr[i]);

    /* all posted, then Waited for in order: Ibarrier; per root an Ibcast of
     * the root's world rank and its rank in c, an Ibcast of 3000 bytes and
     * an Ireduce (in place every other root); Iallreduce, and in place */
    MPI_Request *rq = must(malloc((size_t)m * 2 * sizeof *rq), "malloc", 0), q;
    bcase *bc = must(malloc((size_t)m * sizeof *bc), "malloc", 0);
    rcase *rc = must(malloc(((size_t)m + 2) * sizeof *rc), "malloc", 0);
    MPI_OK(MPI_Ibarrier(c, &q));
    for (int root = 0; root < m; root++) {
        ib[2 * root] = r == root ? g_me : -1;
        ib[2 * root + 1] = r == root ? root : -1;
        MPI_OK(MPI_Ibcast(&ib[2 * root], 2, MPI_INT, root, c, &rq[root]));
        post_bcast(&bc[root], 3000, root, 0, 700 + (uint64_t)wr[root], c);
        post_reduce(&rc[root], T_INT, O_SUM, root, root % 2, 701, 100, c);
    }
    post_reduce(&rc[m], T_LL, O_MIN, -1, 0, 702, 1000, c);
    post_reduce(&rc[m + 1], T_DBL, O_SUM, -1, 1, 703, 1000, c);
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    int ok = 1;
    uint64_t h = 0;
    for (int root = 0; root < m; root++) {
        MPI_OK(MPI_Wait(&rq[root], MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&bc[root].rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&rc[root].rq, MPI_STATUS_IGNORE));
        ok &= ib[2 * root] == wr[root] && ib[2 * root + 1] == root;
        ok &= check_bcast(&bc[root], &h) & check_reduce(&rc[root], &h);
    }
    for (int i = m; i < m + 2; i++) {
        MPI_OK(MPI_Wait(&rc[i].rq, MPI_STATUS_IGNORE));
        ok &= check_reduce(&rc[i], &h);
    }
    CHECK(ok, "%s: the battery is wrong", label);
    out("D %s (members %s): Ibarrier, Ibcast and Ireduce from every root, Iallreduce and "
        "in place: %s, checksum %016llx", label, list, ok ? "right" : "WRONG",
        (unsigned long long)h);
    free(wr);
    free(ib);
    free(rq);
    free(bc);
    free(rc);
}

static void communicators(void)
{
    const int me = g_me, n = g_n;
    MPI_Comm c;
    section("D dup");
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    battery(c, "dup(WORLD)");
    MPI_OK(MPI_Comm_free(&c));

    section("D odd/even");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, n - me, &c));
    battery(c, me % 2 ? "split(odd ranks, keys reversed)" : "split(even ranks, keys reversed)");
    MPI_OK(MPI_Comm_free(&c));

    section("D node");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, coll_node_of(me), n - me, &c));
    battery(c, "split(color pretend node, key size-rank)");
    MPI_OK(MPI_Comm_free(&c));

    section("D self");
    battery(MPI_COMM_SELF, "MPI_COMM_SELF");

    section("D Comm_free before the Wait");
    /* stock Open MPI 4.1.4 crashes when the collectives are still running
     * at the Comm_free (SIGSEGV in mca_pml_ob1_isend under NBC_Progress:
     * libnbc does not keep the communicator alive; with an Iallreduce of
     * 1000 ints at 2 ranks and more, an Ibarrier at 3 and more); there they
     * have only completed (Request_get_status), not been freed */
#ifdef OPEN_MPI
    for (int pending = 0; pending < 1; pending++) {
#else
    for (int pending = 0; pending < 2; pending++) {
#endif
        rcase rc;
        bcase bc;
        MPI_Request rq[3];
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        post_reduce(&rc, T_INT, O_SUM, -1, 0, 800 + (uint64_t)pending, 1000, c);
        post_bcast(&bc, 2000, n - 1, 1, 802 + (uint64_t)pending, c);
        MPI_OK(MPI_Ibarrier(c, &rq[2]));
        rq[0] = rc.rq;
        rq[1] = bc.rq;
        for (int i = 0; i < 3 && !pending; i++)
            for (int flag = 0; !flag;)
                MPI_OK(MPI_Request_get_status(rq[i], &flag, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Comm_free(&c));
        int ok = c == MPI_COMM_NULL;
        for (int i = 0; i < 3; i++)
            MPI_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
        rc.rq = rq[0];
        bc.rq = rq[1];
        uint64_t h = 0;
        ok &= check_reduce(&rc, &h) & check_bcast(&bc, &h) & (rq[2] == MPI_REQUEST_NULL);
        CHECK(ok, "Comm_free with collectives %s: wrong", pending ? "pending" : "complete");
        out("D Comm_free of a duplicate with Iallreduce, Ibcast, Ibarrier %s, then the "
            "Waits: %s, checksum %016llx", pending ? "pending" : "complete but not freed",
            ok ? "right" : "WRONG", (unsigned long long)h);
    }
}

/* ---- E: a blocking Comm_dup while others wait ---- */

static void dup_while_waiting(void)
{
    section("E Comm_dup while others wait");
    enum { NE = 8 };
    rcase c[NE];
    MPI_Request rq[NE];
    for (int i = 0; i < NE; i++) {
        post_reduce(&c[i], T_LL, i % 2 ? O_BOR : O_SUM, -1, 0, 900 + (uint64_t)i,
                    1 + 200 * (size_t)i, MPI_COMM_WORLD);
        rq[i] = c[i].rq;
    }
    MPI_Comm d;
    if (g_me == 0) {
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MPI_OK(MPI_Waitall(NE, rq, MPI_STATUSES_IGNORE));
    } else {
        MPI_OK(MPI_Waitall(NE, rq, MPI_STATUSES_IGNORE));
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    }
    int ok = 1;
    uint64_t h = 0;
    for (int i = 0; i < NE; i++) {
        c[i].rq = rq[i];
        ok &= check_reduce(&c[i], &h);
    }
    rcase e;
    post_reduce(&e, T_INT, O_SUM, -1, 0, 910, 10, d);
    MPI_OK(MPI_Wait(&e.rq, MPI_STATUS_IGNORE));
    int ok2 = check_reduce(&e, &h);
    MPI_OK(MPI_Comm_free(&d));
    out("E 8 Iallreduce; rank 0 in Comm_dup(WORLD) before its Waitall, the others after: "
        "%s; an Iallreduce on the duplicate: %s; checksum %016llx", ok ? "right" : "WRONG",
        ok2 ? "right" : "WRONG", (unsigned long long)h);
}

/* ---- F: errors ---- */

/* An erroneous call: prints the class it returned. A request the MPI
 * made nevertheless is completed (none is expected). */
static void try_call(const char *what, int rc, MPI_Request *rq)
{
    out("F %s: %s", what, err_class_name(err_class(rc)));
    if (*rq != MPI_REQUEST_NULL)
        MPI_Wait(rq, MPI_STATUS_IGNORE);
    *rq = MPI_REQUEST_NULL;
}

static void errors(void)
{
    section("F errors");
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Barrier(d));
    int sb[4] = {0}, rb[4] = {0};
    MPI_Request rq = MPI_REQUEST_NULL;
    try_call("Ibcast root size", MPI_Ibcast(sb, 1, MPI_INT, g_n, d, &rq), &rq);
    try_call("Ireduce root -1", MPI_Ireduce(sb, rb, 1, MPI_INT, MPI_SUM, -1, d, &rq), &rq);
    try_call("Ibcast count -1", MPI_Ibcast(sb, -1, MPI_INT, 0, d, &rq), &rq);
#ifndef MPICH_VERSION
    /* Stock MPICH 4.0.2 does not check the count of MPI_Iallreduce: at one
     * rank it crashes (SIGSEGV, or "stack smashing detected"), at more it
     * returns MPI_ERR_OTHER ("Out of memory" in
     * MPIR_Iallreduce_intra_sched_recursive_doubling). */
    try_call("Iallreduce count -1", MPI_Iallreduce(sb, rb, -1, MPI_INT, MPI_SUM, d, &rq), &rq);
#endif
    try_call("Ireduce MPI_OP_NULL", MPI_Ireduce(sb, rb, 1, MPI_INT, MPI_OP_NULL, 0, d, &rq), &rq);
    rcase e;
    uint64_t h = 0;
    post_reduce(&e, T_INT, O_SUM, -1, 0, 950, 3, d);
    MPI_OK(MPI_Wait(&e.rq, MPI_STATUS_IGNORE));
    out("F Iallreduce on the duplicate after the errors: %s",
        check_reduce(&e, &h) ? "right" : "WRONG");
    MPI_OK(MPI_Comm_free(&d));
}

/* ---- G: gathers, all-to-all, scatter ---- */

/* Byte j of the block member `from` sends to member `to` in case `s`. */
static unsigned char blk(uint64_t s, int from, int to, size_t j)
{
    return (unsigned char)(mix64(s, (uint64_t)from * 1000003u + (uint64_t)to) + j * 7);
}

/* One call of kind k (0 Igather, 1 Iallgather, 2 Ialltoall, 3 Iscatter)
 * of `pb` bytes per block at `root`, in place or not, on world; returns
 * whether this rank's result is right and adds it to *h. Received bytes
 * are MPI_BYTE, or MPI_INT when pb is a multiple of 4 and `ints`. */
static int gcase(int k, size_t pb, int root, int ip, int ints, uint64_t s, MPI_Request *rq,
                 unsigned char **keep_s, unsigned char **keep_r)
{
    const int n = g_n, me = g_me;
    const size_t tot = pb * (size_t)n;
    unsigned char *sb = must(malloc(tot + 8), "malloc", tot);
    unsigned char *rb = must(malloc(tot + 8), "malloc", tot);
    memset(rb, 0xEE, tot + 8);
    for (int d = 0; d < n; d++)
        for (size_t j = 0; j < pb; j++)
            sb[(size_t)d * pb + j] = blk(s, k == 3 ? root : me, k == 3 ? d : (k == 2 ? d : 0), j);
    MPI_Datatype t = ints && pb % 4 == 0 ? MPI_INT : MPI_BYTE;
    int c = (int)(t == MPI_INT ? pb / 4 : pb);
    const void *sp = sb;
    void *rp = rb;
    switch (k) {
    case 0:
        if (ip && me == root) {
            memcpy(rb + (size_t)me * pb, sb, pb);
            sp = MPI_IN_PLACE;
        }
        MPI_OK(MPI_Igather(sp, c, t, rp, c, t, root, MPI_COMM_WORLD, rq));
        break;
    case 1:
        if (ip) {
            memcpy(rb + (size_t)me * pb, sb, pb);
            sp = MPI_IN_PLACE;
        }
        MPI_OK(MPI_Iallgather(sp, c, t, rp, c, t, MPI_COMM_WORLD, rq));
        break;
    case 2:
        if (ip) {
            memcpy(rb, sb, tot);
            sp = MPI_IN_PLACE;
        }
        MPI_OK(MPI_Ialltoall(sp, c, t, rp, c, t, MPI_COMM_WORLD, rq));
        break;
    default:
        /* In place, the root's block stays in its send buffer. */
        if (ip && me == root)
            rp = MPI_IN_PLACE;
        MPI_OK(MPI_Iscatter(sp, c, t, rp, c, t, root, MPI_COMM_WORLD, rq));
        break;
    }
    *keep_s = sb;
    *keep_r = rb;
    (void)s;
    return 0;
}

static int gcheck(int k, size_t pb, int root, int ip, uint64_t s, unsigned char *sb,
                  unsigned char *rb, uint64_t *h)
{
    const int n = g_n, me = g_me;
    int ok = 1;
    if (k == 3) {
        /* One block at the start of the receive buffer (none at a root in
         * place, whose buffer stays untouched). */
        unsigned char *p = ip && me == root ? sb + (size_t)me * pb : rb;
        for (size_t j = 0; j < pb; j++)
            ok &= p[j] == blk(s, root, me, j);
        *h = hash_bytes(*h, p, pb);
        for (size_t j = p == rb ? pb : 0; j < pb * (size_t)n; j++)
            ok &= rb[j] == 0xEE;
    } else if (k != 0 || me == root) {
        for (int m = 0; m < n; m++)
            for (size_t j = 0; j < pb; j++)
                ok &= rb[(size_t)m * pb + j] == blk(s, m, k == 2 ? me : 0, j);
        *h = hash_bytes(*h, rb, pb * (size_t)n);
    }
    for (int i = 0; i < 8; i++)
        ok &= rb[pb * (size_t)n + (size_t)i] == 0xEE;
    free(sb);
    free(rb);
    return ok;
}

static void blocks_all(void)
{
    static const char *KN[4] = {"Igather", "Iallgather", "Ialltoall", "Iscatter"};
    static const size_t sizes[] = {0, 1, 4, 8, 12, 100, 128, 250, 256, 1000, 1028, 5000, 65540};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    for (int k = 0; k < 4; k++) {
        section(KN[k]);
        int good = 0, total = 0;
        uint64_t h = 0;
        for (int root = 0; root < (k == 0 || k == 3 ? g_n : 1); root++)
            for (int ip = 0; ip < 2; ip++) {
                MPI_Request rq[NS];
                unsigned char *sb[NS], *rb[NS];
                for (int z = 0; z < NS; z++)
                    gcase(k, sizes[z], root, ip, z % 2, seed6(7, (uint64_t)k, (uint64_t)root,
                                                              (uint64_t)ip, (uint64_t)z, 0),
                          &rq[z], &sb[z], &rb[z]);
                /* Complete in reverse order: later operations deliver
                 * before earlier ones. */
                for (int z = NS - 1; z >= 0; z--) {
                    MPI_OK(MPI_Wait(&rq[z], MPI_STATUS_IGNORE));
                    int ok = gcheck(k, sizes[z], root, ip,
                                    seed6(7, (uint64_t)k, (uint64_t)root, (uint64_t)ip,
                                          (uint64_t)z, 0),
                                    sb[z], rb[z], &h);
                    CHECK(ok, "%s of %zu B per block, root %d%s: wrong", KN[k], sizes[z], root,
                          ip ? ", in place" : "");
                    good += ok;
                    total++;
                }
            }
        out("G %s, %d sizes (0 .. 65540 B per block)%s, in place and not: %d of %d right, "
            "checksum %016llx", KN[k], NS, k == 0 || k == 3 ? ", every root" : "", good, total,
            (unsigned long long)h);
    }
    out_flush();
}

/* ---- H. Iscan, Iexscan, Ireduce_scatter_block, Ireduce_scatter ---- */

static const char *FN[4] = {"Iscan", "Iexscan", "Ireduce_scatter_block", "Ireduce_scatter"};

/* Member r's count in an Ireduce_scatter of class cnt (zero on some
 * members, different on most). */
static size_t part_count(size_t cnt, int r)
{
    return r % 2 ? cnt : (cnt + (size_t)r) / 2;
}

/* The elements before member r's part, and in all (r = n). */
static size_t part_first(size_t cnt, int r)
{
    size_t f = 0;
    for (int m = 0; m < r; m++)
        f += part_count(cnt, m);
    return f;
}

/* Element j of member r's result of fold kind k (0 scan, 1 exscan, 2
 * reduce-scatter-block of cnt per block, 3 reduce-scatter of class cnt)
 * into *out; 0 when r has none. */
static int fold_ref(int k, int t, int o, uint64_t s, int r, int n, size_t cnt, size_t j,
                    unsigned char *out)
{
    unsigned char e[8];
    int lo = 0, hi = k == 0 ? r : k == 1 ? r - 1 : n - 1;
    size_t idx = k == 2 ? (size_t)r * cnt + j : k == 3 ? part_first(cnt, r) + j : j;
    if (hi < lo)
        return 0;
    gen(t, o, s, hi, idx, out);
    for (int m = hi - 1; m >= lo; m--) {
        gen(t, o, s, m, idx, e);
        fold(t, o, e, out);
    }
    return 1;
}

static void scans(void)
{
    static const size_t cnts[] = {0, 1, 3, 33, 100};
    enum { NC = sizeof cnts / sizeof cnts[0] };
    CHECK(g_n <= 64, "H: at most 64 ranks (Ireduce_scatter's counts), not %d", g_n);
    for (int k = 0; k < 4; k++) {
        char name[64];
        snprintf(name, sizeof name, "H %s", FN[k]);
        section(name);
        uint64_t h = 0;
        int good = 0, total = 0;
        for (int t = 0; t < NT; t++)
            for (int o = 0; o < NO; o++) {
                if (t == T_DBL && o != O_SUM && o != O_MAX)
                    continue;
                for (int ip = 0; ip < 2; ip++) {
                    /* Every count of one (type, operation, form) posted,
                     * then waited for in reverse order. */
                    unsigned char *sb[NC], *rb[NC];
                    MPI_Request rq[NC];
                    int rc[NC][64];
                    for (int c = 0; c < NC; c++) {
                        const size_t z = TSIZE[t], cnt = cnts[c];
                        const size_t in = k == 3   ? part_first(cnt, g_n)
                                          : k == 2 ? (size_t)g_n * cnt
                                                   : cnt;
                        const size_t mine = k == 3 ? part_count(cnt, g_me) : cnt;
                        for (int m = 0; m < g_n && m < 64; m++)
                            rc[c][m] = (int)part_count(cnt, m);
                        const uint64_t sd = seed6(8, (uint64_t)k, (uint64_t)t, (uint64_t)o,
                                                  (uint64_t)ip, (uint64_t)c);
                        sb[c] = must(malloc(in * z + 8), "malloc", in * z);
                        rb[c] = must(malloc(in * z + 8), "malloc", in * z);
                        for (size_t j = 0; j < in; j++)
                            gen(t, o, sd, g_me, j, sb[c] + j * z);
                        const size_t rn = ip ? in : mine;
                        if (ip)
                            memcpy(rb[c], sb[c], in * z);
                        else
                            memset(rb[c], 0xEE, rn * z);
                        memset(rb[c] + rn * z, GUARD, 8);
                        void *sp = ip ? MPI_IN_PLACE : sb[c];
                        if (k == 0)
                            MPI_OK(MPI_Iscan(sp, rb[c], (int)cnt, TDT[t], MOP[o], MPI_COMM_WORLD,
                                             &rq[c]));
                        else if (k == 1)
                            MPI_OK(MPI_Iexscan(sp, rb[c], (int)cnt, TDT[t], MOP[o],
                                               MPI_COMM_WORLD, &rq[c]));
                        else if (k == 2)
                            MPI_OK(MPI_Ireduce_scatter_block(sp, rb[c], (int)cnt, TDT[t],
                                                             MOP[o], MPI_COMM_WORLD, &rq[c]));
                        else
                            MPI_OK(MPI_Ireduce_scatter(sp, rb[c], rc[c], TDT[t], MOP[o],
                                                       MPI_COMM_WORLD, &rq[c]));
                    }
                    for (int c = NC - 1; c >= 0; c--) {
                        MPI_OK(MPI_Wait(&rq[c], MPI_STATUS_IGNORE));
                        const size_t z = TSIZE[t], cnt = cnts[c];
                        const size_t in = k == 3   ? part_first(cnt, g_n)
                                          : k == 2 ? (size_t)g_n * cnt
                                                   : cnt;
                        const size_t mine = k == 3 ? part_count(cnt, g_me) : cnt;
                        const uint64_t sd = seed6(8, (uint64_t)k, (uint64_t)t, (uint64_t)o,
                                                  (uint64_t)ip, (uint64_t)c);
                        unsigned char ref[8];
                        int ok = 1;
                        for (size_t j = 0; j < mine; j++)
                            if (fold_ref(k, t, o, sd, g_me, g_n, cnt, j, ref)) {
                                ok &= memcmp(ref, rb[c] + j * z, z) == 0;
                                h = mix64(h, hash_bytes(0, ref, z));
                            }
                        const size_t rn = ip ? in : mine;
                        for (int g = 0; g < 8; g++)
                            ok &= rb[c][rn * z + (size_t)g] == GUARD;
                        if (!ip) {
                            unsigned char e[8];
                            for (size_t j = 0; j < in; j++) {
                                gen(t, o, sd, g_me, j, e);
                                ok &= memcmp(e, sb[c] + j * z, z) == 0;
                            }
                        }
                        CHECK(ok, "%s %s %s of %zu%s: wrong", FN[k], TNAME[t], ONAME[o], cnt,
                              ip ? ", in place" : "");
                        good += ok;
                        total++;
                        free(sb[c]);
                        free(rb[c]);
                    }
                }
            }
        out("%s, counts 0 .. 100, in place and not: %d of %d right, checksum %016llx", name,
            good, total, (unsigned long long)h);
    }
    out_flush();
}

/* ---- I: the root of an Igather in a real wait ---- */

/* A user-defined operation: heapmpi leaves reductions with one to the
 * real MPI. */
static void user_sum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)io)[i] += ((int *)in)[i];
}

/* What section I runs: the collective, its receive type, the ints each
 * member contributes. */
enum { I_GATHER, I_GATHERV, I_ALLGATHERV, I_ALLTOALLV, I_BCAST, I_SCATTER };
static const char *const I_NAMES[] = {"Igather",    "Igatherv", "Iallgatherv",
                                      "Ialltoallv", "Ibcast",   "Iscatter"};

/* Rank 0 posts a gathering collective (Igather into a duplicate of MPI_INT
 * or into ints at stride 2; Igatherv, Iallgatherv or Ialltoallv into ints
 * at stride 2) and four Ibarriers on WORLD (heapmpi's nonblocking
 * collectives keep four steps in flight), then an Ireduce with a
 * user-defined operation on a duplicate (left to the real MPI) and waits
 * for that first. The others post theirs 50 ms later, so rank 0 is inside
 * the real wait by then, and wait for all of theirs before they join the
 * Ireduce: the fifth step needs rank 0 to have finished the first, which
 * its progress thread must do (in the MPICH suite's nonblocking3 this hung
 * heapmpi). */
static void root_in_real_wait(int coll, int strided, int cnt)
{
    if (coll == I_GATHER && !strided)
        section("I root in a real wait");
    enum { NB = 4 };
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Op op;
    MPI_OK(MPI_Op_create(user_sum, 1, &op));
    /* The receive type: a duplicate of MPI_INT (cnt of them per member),
     * or cnt ints at stride 2 (one per member, extent 2 * cnt ints: the
     * odd ints stay untouched). */
    MPI_Datatype dint;
    int rcount = cnt, stride = 1;
    if (strided) {
        MPI_Datatype v;
        MPI_OK(MPI_Type_vector(cnt, 1, 2, MPI_INT, &v));
        MPI_OK(MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * (size_t)cnt * sizeof(int)), &dint));
        MPI_OK(MPI_Type_free(&v));
        MPI_OK(MPI_Type_commit(&dint));
        rcount = 1, stride = 2;
    } else {
        MPI_OK(MPI_Type_dup(MPI_INT, &dint));
    }
    int x = g_me + 1, y = 0;
    /* Ibcast and Iscatter from rank 1, so that rank 0 receives. */
    const int root = coll >= I_BCAST && g_n > 1 ? 1 : 0;
    const size_t sints = (size_t)cnt * (coll == I_SCATTER ? (size_t)g_n : 1);
    int *sb = must(malloc(sizeof(int) * sints), "malloc", sizeof(int) * sints);
    const size_t rints = (size_t)stride * (size_t)cnt * (size_t)g_n;
    int *rb = must(malloc(sizeof(int) * rints), "malloc", sizeof(int) * rints);
    int *rc = must(malloc(4 * sizeof(int) * (size_t)g_n), "malloc", 4 * sizeof(int) * (size_t)g_n);
    int *dp = rc + g_n, *sc = rc + 2 * g_n, *sd = rc + 3 * g_n;
    for (int r = 0; r < g_n; r++)
        rc[r] = rcount, dp[r] = r * rcount, sc[r] = cnt, sd[r] = 0;
    for (size_t i = 0; i < sints; i++) /* Iscatter: block r for member r */
        sb[i] = (coll == I_SCATTER ? (int)(i / (size_t)cnt) : g_me) * 1000 + (int)(i % (size_t)cnt);
    for (size_t i = 0; i < rints; i++)
        rb[i] = -1;
    if (coll == I_BCAST && g_me == root) /* the root's payload: its own slot */
        for (int i = 0; i < cnt * stride; i++)
            rb[i] = i % stride ? -1 : root * 1000 + i / stride;
    MPI_Request rq[1 + NB], red;
    if (g_me != 0)
        usleep(50000);
    switch (coll) {
    case I_GATHER:
        MPI_OK(MPI_Igather(sb, cnt, MPI_INT, rb, rcount, dint, 0, MPI_COMM_WORLD, &rq[0]));
        break;
    case I_GATHERV:
        MPI_OK(MPI_Igatherv(sb, cnt, MPI_INT, rb, rc, dp, dint, 0, MPI_COMM_WORLD, &rq[0]));
        break;
    case I_ALLGATHERV:
        MPI_OK(MPI_Iallgatherv(sb, cnt, MPI_INT, rb, rc, dp, dint, MPI_COMM_WORLD, &rq[0]));
        break;
    case I_ALLTOALLV:
        MPI_OK(MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, dp, dint, MPI_COMM_WORLD, &rq[0]));
        break;
    case I_BCAST:
        MPI_OK(MPI_Ibcast(rb, rcount, dint, root, MPI_COMM_WORLD, &rq[0]));
        break;
    default:
        MPI_OK(MPI_Iscatter(sb, cnt, MPI_INT, rb, rcount, dint, root, MPI_COMM_WORLD, &rq[0]));
        break;
    }
    MPI_OK(MPI_Type_free(&dint));
    for (int i = 0; i < NB; i++)
        MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[1 + i]));
    if (g_me == 0) {
        MPI_OK(MPI_Ireduce(&x, &y, 1, MPI_INT, op, 0, d, &red));
        MPI_OK(MPI_Wait(&red, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Waitall(1 + NB, rq, MPI_STATUSES_IGNORE));
    } else {
        MPI_OK(MPI_Waitall(1 + NB, rq, MPI_STATUSES_IGNORE));
        MPI_OK(MPI_Ireduce(&x, &y, 1, MPI_INT, op, 0, d, &red));
        MPI_OK(MPI_Wait(&red, MPI_STATUS_IGNORE));
    }
    int ok = 1;
    if (coll >= I_BCAST) {
        /* One slot: the root's payload, or our block of the scatter. */
        const int from = coll == I_BCAST ? root : g_me;
        for (int i = 0; i < cnt * stride; i++)
            ok &= rb[i] == (i % stride ? -1 : from * 1000 + i / stride);
    } else if (g_me == 0 || coll >= I_ALLGATHERV) {
        for (int r = 0; r < g_n; r++)
            for (int i = 0; i < cnt * stride; i++)
                ok &= rb[((size_t)r * (size_t)cnt * (size_t)stride) + (size_t)i] ==
                      (i % stride ? -1 : r * 1000 + i / stride);
    }
    if (g_me == 0)
        ok &= y == g_n * (g_n + 1) / 2;
    char what[96];
    snprintf(what, sizeof what, "%s of %d ints (receive type %s)", I_NAMES[coll], cnt,
             strided ? "ints at stride 2" : "a duplicate of MPI_INT");
    CHECK(ok, "I: %s or the user-op Ireduce: wrong", what);
    out("I %s and 4 Ibarriers, rank 0 waiting in an Ireduce with a user-defined operation "
        "first: %s",
        what, ok ? "right" : "WRONG");
    free(sb);
    free(rb);
    free(rc);
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Comm_free(&d));
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_n = size;
    memcpy(TDT, (MPI_Datatype[NT]){MPI_INT, MPI_LONG_LONG, MPI_UNSIGNED, MPI_DOUBLE}, sizeof TDT);
    memcpy(MOP, (MPI_Op[NO]){MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD, MPI_BAND, MPI_BOR}, sizeof MOP);
    ibcast_sizes();
    ireduce_all();
    many_outstanding();
    mixed();
    communicators();
    dup_while_waiting();
    errors();
    blocks_all();
    scans();
    root_in_real_wait(I_GATHER, 0, 10);
    root_in_real_wait(I_GATHER, 1, 10);
    for (int c = I_GATHERV; c <= I_ALLTOALLV; c++) {
        root_in_real_wait(c, 1, 10);   /* the table and blocks in the cells */
        root_in_real_wait(c, 1, 3000); /* in the heap, read in place */
    }
    /* Large: read in place, or with a small heap (the tests' 2 MiB
     * variant) moved in chunks through the cells. */
    root_in_real_wait(I_GATHER, 1, 200000);
    root_in_real_wait(I_BCAST, 1, 200000);
    root_in_real_wait(I_SCATTER, 1, 200000);
    return coll_finish("nonblocking", rank, size);
}

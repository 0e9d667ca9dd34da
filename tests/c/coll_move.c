/*
 * coll_move.c - collective conformance: the data-movement collectives.
 *
 * Why: heapmpi runs Bcast, Gather, Scatter, Allgather and Alltoall of a
 * node-local communicator over its shared heap (small payloads inline in
 * the members' cells, large ones read in place or, from a buffer outside
 * the heap, through a staging copy; derived datatypes packed and
 * unpacked), and the v variants either the same way or through the real
 * MPI. Every path must move exactly the bytes MPI says, to exactly the
 * places the datatypes say, and touch nothing else.
 *
 * Sections:
 *  A. the matrix: Bcast, Gather, Scatter, Allgather, Alltoall, Gatherv,
 *     Scatterv, Allgatherv, Alltoallv x sizes 0, 1, 3, 8, 100, 1000, 4095,
 *     4096, 4097, 5000, 65539 bytes and 1 MiB x the normal and the in-place
 *     form, with the root rotating through every rank (for the collectives
 *     without a root, a "round" number that rotates the same way and picks
 *     other types and buffer kinds; each root sees small and large sizes in
 *     both forms; all roots x all sizes would make the oversubscribed
 *     4-rank runs too slow), in MPI_BYTE, MPI_INT or MPI_DOUBLE
 *     (count = bytes rounded up to whole elements; the type rotates with
 *     the size, the form and the collective; bytes start at odd addresses
 *     now and then) x buffers from malloc (in the shared heap under
 *     heapmpi), from static arrays and from the stack (outside it; the
 *     kind rotates and differs between the ranks of one call; stack
 *     buffers up to 160 KiB, static ones up to 6 MiB, larger ones from
 *     malloc) x the normal form and the MPI_IN_PLACE form where there is
 *     one (for Bcast, a second round with another type and buffer kind;
 *     the 1 MiB Allgatherv only in place and only up to 2 ranks: stock
 *     MPICH takes 0.6 s for it oversubscribed). Arguments that MPI says
 *     are insignificant are given as
 *     such: NULL receive buffers at non-roots of Gather(v), NULL send
 *     buffers at non-roots of Scatter(v), and in the in-place round also a
 *     zero count and MPI_DATATYPE_NULL there. The v variants use uneven
 *     counts (some zero), pieces in reverse rank order and gaps between
 *     them. Every receive buffer is framed by guard bytes, and after the
 *     call every piece must hold its sender's pattern and every other byte
 *     (guards, gaps) its old value; every send buffer must be unchanged.
 *  B. derived datatypes on one side (or both): ints with a 4-byte hole
 *     after each (a resized MPI_INT), a vector of ints with stride 2, the
 *     same ints in reverse order (an indexed type), a vector with stride -2
 *     (negative lower bound: the data lies before the buffer pointer), ints
 *     at absolute addresses in reverse order (hindexed, MPI_BOTTOM as the
 *     buffer), and a struct {int, double, short} with holes against a
 *     packed struct of the same signature; the bytes in the holes of the
 *     receive buffers must not change. Bcast, Gather, Scatter, Allgather,
 *     Alltoall, Gatherv, Scatterv, Allgatherv, Alltoallv, some in place;
 *     1, 100, 1500 and 40000 elements (12000 at more than 2 ranks; an
 *     Allgatherv at most 1500).
 *     (Not a Gather of the structs: stock MPICH 4.0.2 fails one of more
 *     than 1 KiB per rank with "Message truncated" at some roots.)
 *  C. 64 MiB once (16 MiB at more than 2 ranks): a Bcast of bytes and an
 *     Allreduce (MPI_SUM) of doubles holding small integers (exact in any
 *     order); Bcasts of 512 KiB, 700001 B, 1 MiB + 3 and 3 MiB + 5 at odd
 *     addresses from every root (the root helps copy from 512 KiB).
 *  D. count 0 with NULL buffers (and MPI_IN_PLACE) for every collective
 *     and every root: MPI_SUCCESS, nothing touched.
 *  E. displacements of the v variants: negative ones (the buffer pointer
 *     in the middle of the region) for Allgatherv, Gatherv, Scatterv and
 *     Alltoallv, and an Alltoallv whose send displacements are all 0 (one
 *     block read for every receiver); 10 and 20000 ints.
 *
 * Output (stdout, rank 0, rank order): per rank, for every collective and
 * root (round) of section A, the number of cases and a checksum of
 * everything received; one line per case of sections B to E; then
 * "rank N: move ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

/* ------------------------------------------------------------------ */
/* buffers                                                              */
/* ------------------------------------------------------------------ */

#define GUARD 64
#define GUARD_BYTE 0xC5
/* Largest region (bytes, without guards) taken from the stack / from the
 * static arrays; larger ones come from malloc. */
#define STACK_MAX (160 * 1024)
#define STATIC_MAX (6 * MIB)

enum { K_HEAP, K_STATIC, K_STACK, NKIND };
static const char *KIND_NAME[NKIND] = {"heap", "static", "stack"};

static unsigned char g_static[2][STATIC_MAX + 2 * GUARD + 64]
    __attribute__((aligned(64)));

/* One buffer: `p` is where the data starts, with GUARD bytes before it and
 * after `len`; `kind` is what it really is after the size fallback. */
typedef struct {
    unsigned char *p;
    size_t len;
    int kind;
    void *mem; /* malloc'd block, or NULL */
} buf_t;

static int real_kind(int kind, size_t len)
{
    if (kind == K_STACK && len > STACK_MAX)
        kind = K_STATIC;
    if (kind == K_STATIC && len > STATIC_MAX)
        kind = K_HEAP;
    return kind;
}

/* `stack` is the caller's stack array of STACK_MAX + 2 * GUARD + 16 bytes;
 * `slot` (0 or 1) picks one of the static arrays. `off` shifts the data
 * start (alignment). */
static buf_t buf_get(int kind, size_t len, int slot, unsigned char *stack,
                     size_t off)
{
    buf_t b = {NULL, len, real_kind(kind, len + off), NULL};
    size_t total = len + off + 2 * GUARD;
    unsigned char *base;
    switch (b.kind) {
    case K_STACK:
        base = stack;
        break;
    case K_STATIC:
        base = g_static[slot];
        break;
    default:
        b.mem = must(malloc(total), "malloc", total);
        base = b.mem;
        break;
    }
    b.p = base + GUARD + off;
    memset(b.p - GUARD, GUARD_BYTE, len + 2 * GUARD);
    return b;
}

static void buf_put(buf_t *b)
{
    free(b->mem);
    b->mem = NULL;
}

/* A piece of a buffer: bytes [off, off+len) hold the pattern of `seed`. */
typedef struct {
    size_t off, len;
    uint64_t seed;
} piece_t;

static void fill_pieces(buf_t *b, const piece_t *pc, int n)
{
    for (int i = 0; i < n; i++)
        wpattern_fill(b->p + pc[i].off, pc[i].len, pc[i].seed);
}

/* Every piece holds its pattern, every other byte of the region and the
 * guards holds GUARD_BYTE. The pieces' bytes are folded into *h. If
 * `restore` is 0 the buffer is left as it is (a send buffer that must stay
 * unchanged), else the pieces are overwritten. Returns 1 if all is right. */
static int verify(buf_t *b, const piece_t *pc, int n, uint64_t *h,
                  const char *what)
{
    int ok = 1;
    for (int i = 0; i < n; i++) {
        char w[200];
        snprintf(w, sizeof w, "%s, piece %d (%zu bytes at %zu)", what, i,
                 pc[i].len, pc[i].off);
        ok &= wpattern_check(b->p + pc[i].off, pc[i].len, pc[i].seed, w);
        if (h != NULL)
            *h = hash_bytes(*h, b->p + pc[i].off, pc[i].len);
    }
    /* The bytes outside the pieces: compare on a copy with the pieces
     * blanked out. */
    size_t total = b->len + 2 * GUARD;
    unsigned char *copy = must(malloc(total), "malloc", total);
    memcpy(copy, b->p - GUARD, total);
    for (int i = 0; i < n; i++)
        memset(copy + GUARD + pc[i].off, GUARD_BYTE, pc[i].len);
    for (size_t i = 0; i < total; i++)
        if (copy[i] != GUARD_BYTE) {
            CHECK(0, "%s: byte %zd outside every piece changed to 0x%02x",
                  what, (ssize_t)i - GUARD, copy[i]);
            ok = 0;
            break;
        }
    free(copy);
    return ok;
}

/* ------------------------------------------------------------------ */
/* A: the matrix                                                        */
/* ------------------------------------------------------------------ */

enum {
    C_BCAST,
    C_GATHER,
    C_SCATTER,
    C_ALLGATHER,
    C_ALLTOALL,
    C_GATHERV,
    C_SCATTERV,
    C_ALLGATHERV,
    C_ALLTOALLV,
    NCOLL
};
static const char *CNAME[NCOLL] = {"Bcast",      "Gather",    "Scatter",
                                   "Allgather",  "Alltoall",  "Gatherv",
                                   "Scatterv",   "Allgatherv", "Alltoallv"};

static const size_t SIZES[] = {0,    1,    3,    8,    100,   1000,
                               4095, 4096, 4097, 5000, 65539, MIB};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))


typedef struct {
    MPI_Datatype t;
    size_t e;
    const char *name;
} type_t;
static type_t TYPES[3];

static int g_rank_, g_size_;
/* COLL_CASE_TIMES=1: the time of every case of section A on stderr. */
static int g_case_times;

/* Counts of the v variants: uneven, some zero. */
static int vcount(int c, int i)
{
    if (c == 0)
        return 0;
    return i % 3 == 1 ? c / 2 : c + i;
}

/* Alltoallv counts from i to j (asymmetric, some zero). */
static int acount(int c, int i, int j)
{
    if (c == 0)
        return 0;
    int k = (i + 2 * j) % 4;
    return k == 3 ? 0 : c + k;
}

/* Alltoallv counts for the in-place form (symmetric, as it requires). */
static int scount(int c, int i, int j)
{
    return c == 0 ? 0 : c + (i + j) % 3;
}

/* Displacements: pieces in reverse rank order with GAP elements between
 * them (and before the first); returns the region size in elements. */
#define GAP 3
static int layout(const int *counts, int n, int *displs)
{
    /* No gap before the first piece (rank n-1's): stock MPICH 4.0.2 writes
     * the piece of a 1-rank Allgatherv at displacement 0 whatever displs
     * says. The guard bytes frame the region all the same. */
    int off = 0;
    for (int i = n - 1; i >= 0; i--) {
        displs[i] = off;
        off += counts[i] + GAP;
    }
    return off;
}

static uint64_t sd(int coll, int v, int si, int var, int a, int b)
{
    return seed6((uint64_t)coll, (uint64_t)v, (uint64_t)si, (uint64_t)var,
                 (uint64_t)a, (uint64_t)b);
}

typedef struct {
    int cases;
    uint64_t hash;
} tally_t;

/* One case of the matrix. var 0: the normal form; var 1: MPI_IN_PLACE (or
 * for Bcast another type and buffer kind). */
static void one_case(int coll, int v, int si, int var, tally_t *tl)
{
    const int me = g_rank_, n = g_size_;
    MPI_Comm comm = MPI_COMM_WORLD;
    const type_t *ty = &TYPES[(si + var + coll) % 3];
    const size_t e = ty->e;
    const int c = (int)((SIZES[si] + e - 1) / e);
    const int root = v % n;
    const int inplace = var == 1 && coll != C_BCAST;
    /* buffer kinds differ between the ranks too (some stage, some not) */
    int skind = (si + 2 * var + coll + me) % NKIND;
    int rkind = (si + 2 * var + coll + me + 1) % NKIND;
    /* odd start addresses for bytes, now and then */
    size_t off = (ty->e == 1 && (si + var) % 2) ? 3 : 0;
    unsigned char stack_s[STACK_MAX + 2 * GUARD + 16];
    unsigned char stack_r[STACK_MAX + 2 * GUARD + 16];
    char what[200];
    snprintf(what, sizeof what, "%s root/round %d, %zu bytes as %d %s, %s%s",
             CNAME[coll], v, SIZES[si], c, ty->name,
             inplace ? "in place, " : "", var ? "round 2" : "round 1");

    int *counts = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int *displs = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int *scounts = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int *sdispls = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    piece_t *sp = must(calloc((size_t)n + 1, sizeof(piece_t)), "calloc", 0);
    piece_t *rp = must(calloc((size_t)n + 1, sizeof(piece_t)), "calloc", 0);
    int nsp = 0, nrp = 0;
    size_t slen = 0, rlen = 0;
    int have_s = 1, have_r = 1;
    const size_t ce = (size_t)c * e;

    /* --- layouts: send pieces (sp) and expected receive pieces (rp) --- */
    switch (coll) {
    case C_BCAST:
        /* one buffer, the "receive" one */
        have_s = 0;
        rlen = ce;
        rp[nrp++] = (piece_t){0, ce, sd(coll, v, si, var, root, 0)};
        break;
    case C_GATHER:
        slen = ce;
        sp[nsp++] = (piece_t){0, ce, sd(coll, v, si, var, me, 0)};
        if (me == root) {
            rlen = ce * (size_t)n;
            for (int i = 0; i < n; i++)
                rp[nrp++] = (piece_t){ce * (size_t)i, ce, sd(coll, v, si, var, i, 0)};
        } else {
            have_r = 0;
        }
        if (inplace && me == root)
            have_s = 0;
        break;
    case C_SCATTER:
        if (me == root) {
            slen = ce * (size_t)n;
            for (int i = 0; i < n; i++)
                sp[nsp++] = (piece_t){ce * (size_t)i, ce, sd(coll, v, si, var, root, i)};
        } else {
            have_s = 0;
        }
        rlen = ce;
        rp[nrp++] = (piece_t){0, ce, sd(coll, v, si, var, root, me)};
        if (inplace && me == root)
            have_r = 0;
        break;
    case C_ALLGATHER:
        slen = ce;
        sp[nsp++] = (piece_t){0, ce, sd(coll, v, si, var, me, 0)};
        rlen = ce * (size_t)n;
        for (int i = 0; i < n; i++)
            rp[nrp++] = (piece_t){ce * (size_t)i, ce, sd(coll, v, si, var, i, 0)};
        if (inplace)
            have_s = 0;
        break;
    case C_ALLTOALL:
        slen = rlen = ce * (size_t)n;
        for (int i = 0; i < n; i++) {
            sp[nsp++] = (piece_t){ce * (size_t)i, ce, sd(coll, v, si, var, me, i)};
            rp[nrp++] = (piece_t){ce * (size_t)i, ce, sd(coll, v, si, var, i, me)};
        }
        if (inplace)
            have_s = 0;
        break;
    case C_GATHERV:
    case C_ALLGATHERV: {
        for (int i = 0; i < n; i++)
            counts[i] = vcount(c, i);
        int tot = layout(counts, n, displs);
        slen = (size_t)counts[me] * e;
        sp[nsp++] = (piece_t){0, slen, sd(coll, v, si, var, me, 0)};
        if (coll == C_ALLGATHERV || me == root) {
            rlen = (size_t)tot * e;
            for (int i = 0; i < n; i++)
                rp[nrp++] = (piece_t){(size_t)displs[i] * e, (size_t)counts[i] * e,
                                      sd(coll, v, si, var, i, 0)};
        } else {
            have_r = 0;
        }
        if (inplace && (coll == C_ALLGATHERV || me == root))
            have_s = 0;
        break;
    }
    case C_SCATTERV: {
        for (int i = 0; i < n; i++)
            counts[i] = vcount(c, i);
        int tot = layout(counts, n, displs);
        if (me == root) {
            slen = (size_t)tot * e;
            for (int i = 0; i < n; i++)
                sp[nsp++] = (piece_t){(size_t)displs[i] * e, (size_t)counts[i] * e,
                                      sd(coll, v, si, var, root, i)};
        } else {
            have_s = 0;
        }
        rlen = (size_t)counts[me] * e;
        rp[nrp++] = (piece_t){0, rlen, sd(coll, v, si, var, root, me)};
        if (inplace && me == root)
            have_r = 0;
        break;
    }
    case C_ALLTOALLV: {
        for (int i = 0; i < n; i++) {
            if (inplace) {
                counts[i] = scount(c, i, me);
            } else {
                scounts[i] = acount(c, me, i);
                counts[i] = acount(c, i, me);
            }
        }
        int rtot = layout(counts, n, displs);
        rlen = (size_t)rtot * e;
        for (int i = 0; i < n; i++)
            rp[nrp++] = (piece_t){(size_t)displs[i] * e, (size_t)counts[i] * e,
                                  sd(coll, v, si, var, i, me)};
        if (inplace) {
            have_s = 0;
        } else {
            int stot = layout(scounts, n, sdispls);
            slen = (size_t)stot * e;
            for (int i = 0; i < n; i++)
                sp[nsp++] = (piece_t){(size_t)sdispls[i] * e, (size_t)scounts[i] * e,
                                      sd(coll, v, si, var, me, i)};
        }
        break;
    }
    }

    buf_t sb = {0}, rb = {0};
    if (have_s) {
        sb = buf_get(skind, slen, 0, stack_s, off);
        fill_pieces(&sb, sp, nsp);
    }
    if (have_r) {
        rb = buf_get(rkind, rlen, 1, stack_r, off);
        if (coll == C_BCAST && me == root)
            fill_pieces(&rb, rp, nrp);
    }
    /* in place: the data to send is already in the receive buffer */
    if (inplace && have_r && !have_s) {
        switch (coll) {
        case C_GATHER:
        case C_ALLGATHER:
        case C_GATHERV:
        case C_ALLGATHERV:
            fill_pieces(&rb, &rp[me], 1);
            break;
        case C_ALLTOALL:
        case C_ALLTOALLV:
            for (int i = 0; i < n; i++) {
                piece_t q = rp[i];
                q.seed = sd(coll, v, si, var, me, i);
                fill_pieces(&rb, &q, 1);
            }
            break;
        }
    }
    /* at the root of an in-place Scatter(v) the root's own piece stays in
     * the send buffer */

    /* MPI_IN_PLACE: the send buffer of Allgather(v), Alltoall(v) and of the
     * root of Gather(v); the receive buffer of the root of Scatter(v). The
     * other buffers a rank does not have are insignificant there: NULL. */
    int s_in_place = inplace && (coll == C_ALLGATHER || coll == C_ALLTOALL ||
                                 coll == C_ALLGATHERV || coll == C_ALLTOALLV ||
                                 ((coll == C_GATHER || coll == C_GATHERV) && me == root));
    int r_in_place = inplace && (coll == C_SCATTER || coll == C_SCATTERV) && me == root;
    void *S = have_s ? (void *)sb.p : s_in_place ? MPI_IN_PLACE : NULL;
    void *R = have_r ? (void *)rb.p : r_in_place ? MPI_IN_PLACE : NULL;
    MPI_Datatype t = ty->t;
    /* insignificant arguments at non-roots, in the in-place round */
    int odd = inplace && me != root;
    switch (coll) {
    case C_BCAST:
        MPI_OK(MPI_Bcast(rb.p, c, t, root, comm));
        break;
    case C_GATHER:
        MPI_OK(MPI_Gather(S, c, t, R, odd ? 0 : c, odd ? MPI_DATATYPE_NULL : t, root,
                          comm));
        break;
    case C_SCATTER:
        MPI_OK(MPI_Scatter(S, odd ? 0 : c, odd ? MPI_DATATYPE_NULL : t, R, c, t, root,
                           comm));
        break;
    case C_ALLGATHER:
        MPI_OK(MPI_Allgather(S, c, t, R, c, t, comm));
        break;
    case C_ALLTOALL:
        MPI_OK(MPI_Alltoall(S, c, t, R, c, t, comm));
        break;
    case C_GATHERV:
        MPI_OK(MPI_Gatherv(S, counts[me], t, R, me == root ? counts : NULL,
                           me == root ? displs : NULL, odd ? MPI_DATATYPE_NULL : t,
                           root, comm));
        break;
    case C_SCATTERV:
        MPI_OK(MPI_Scatterv(S, me == root ? counts : NULL, me == root ? displs : NULL,
                            odd ? MPI_DATATYPE_NULL : t, R, counts[me], t, root, comm));
        break;
    case C_ALLGATHERV:
        MPI_OK(MPI_Allgatherv(S, counts[me], t, R, counts, displs, t, comm));
        break;
    case C_ALLTOALLV:
        MPI_OK(MPI_Alltoallv(S, scounts, sdispls, t, R, counts, displs, t, comm));
        break;
    }

    uint64_t h = tl->hash;
    if (have_r) {
        verify(&rb, rp, nrp, &h, what);
    }
    if (have_s) {
        char w[240];
        snprintf(w, sizeof w, "%s: send buffer", what);
        verify(&sb, sp, nsp, NULL, w);
    }
    tl->hash = h;
    tl->cases++;
    if (have_s)
        buf_put(&sb);
    if (have_r)
        buf_put(&rb);
    free(counts);
    free(displs);
    free(scounts);
    free(sdispls);
    free(sp);
    free(rp);
}

static void matrix(void)
{
    const int n = g_size_;
    for (int coll = 0; coll < NCOLL; coll++) {
        static const char *SEC[NCOLL] = {
            "A Bcast",  "A Gather",  "A Scatter",    "A Allgather", "A Alltoall",
            "A Gatherv", "A Scatterv", "A Allgatherv", "A Alltoallv"};
        section(SEC[coll]);
        tally_t *tl = must(calloc((size_t)n, sizeof *tl), "calloc", 0);
        /* Every size in both forms once; the root (round) rotates, so that
         * every root sees small and large sizes and both forms. */
        for (int si = 0; si < NSIZES; si++)
            for (int var = 0; var < 2; var++) {
                int v = (2 * si + var + coll) % n;
                /* stock MPICH takes 0.6 s for an oversubscribed 4-rank
                 * Allgatherv of 1 MiB: the in-place form only, and only up
                 * to 2 ranks */
                if (coll == C_ALLGATHERV && SIZES[si] == MIB && (var == 0 || n > 2))
                    continue;
                double t0 = MPI_Wtime();
                one_case(coll, v, si, var, &tl[v]);
                if (g_case_times)
                    fprintf(stderr, "rank %d: %s %d size %zu var %d: %.3f s\n", g_rank_,
                            CNAME[coll], v, SIZES[si], var, MPI_Wtime() - t0);
            }
        for (int v = 0; v < n; v++)
            out("A %s %s %d: %d cases, checksum %016llx", CNAME[coll],
                coll == C_BCAST || coll == C_GATHER || coll == C_SCATTER ||
                        coll == C_GATHERV || coll == C_SCATTERV
                    ? "root"
                    : "round",
                v, tl[v].cases, (unsigned long long)tl[v].hash);
        free(tl);
    }
}

/* ------------------------------------------------------------------ */
/* B: derived datatypes on one side                                     */
/* ------------------------------------------------------------------ */

/* The struct with holes and its packed twin (same type signature). */
typedef struct {
    int a;
    double b;
    short c;
} rec_t;
#define REC_EXTENT 32   /* fields at 0, 8, 20: holes 4..8, 16..20, 22..32 */
#define PACKED_EXTENT 14 /* fields at 0, 4, 12 */
static const MPI_Aint REC_OFF[3] = {0, 8, 20};
static const MPI_Aint PACKED_OFF[3] = {0, 4, 12};

static MPI_Datatype T_INT_HOLE, T_REC, T_PACKED;

static void make_types(void)
{
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 8, &T_INT_HOLE));
    MPI_OK(MPI_Type_commit(&T_INT_HOLE));
    int bl[3] = {1, 1, 1};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
    MPI_OK(MPI_Type_create_struct(3, bl, REC_OFF, ty, &t));
    MPI_OK(MPI_Type_create_resized(t, 0, REC_EXTENT, &T_REC));
    MPI_OK(MPI_Type_commit(&T_REC));
    MPI_Type_free(&t);
    MPI_OK(MPI_Type_create_struct(3, bl, PACKED_OFF, ty, &t));
    MPI_OK(MPI_Type_create_resized(t, 0, PACKED_EXTENT, &T_PACKED));
    MPI_OK(MPI_Type_commit(&T_PACKED));
    MPI_Type_free(&t);
}

/* The layouts a message can have in a buffer: ints; ints with a hole after
 * each; vectors of k ints with stride 2; k ints with stride 2 in reverse
 * order (indexed); vectors of k ints with stride -2 (the buffer pointer is
 * at the last int in memory, the type's lower bound negative); records
 * with holes; packed records; ints at absolute addresses (hindexed, in
 * reverse order, with MPI_BOTTOM as the buffer). */
enum { L_INT, L_INT_HOLE, L_VEC, L_REC, L_PACKED, L_REVIDX, L_NEGVEC, L_BOTTOM };

/* Element j of a message (ints, or records), from (src, dst, j): base is
 * msg_base(seed, src, dst). */
static uint64_t msg_base(uint64_t seed, int src, int dst)
{
    return seed6(seed, (uint64_t)src, (uint64_t)dst, 7, 7, 7);
}

static int32_t ival(uint64_t base, size_t j)
{
    return (int32_t)mix64(base, j);
}

/* Writes elements [0, m) of the message from src to dst at p in layout L
 * (for L_VEC, k ints per vector). */
static void put_msg(unsigned char *p, int L, int k, size_t m, uint64_t seed, int src,
                    int dst)
{
    const uint64_t base = msg_base(seed, src, dst);
    const ssize_t ext = (ssize_t)(2 * k - 1) * 4;
    for (size_t j = 0; j < m; j++) {
        int32_t x = ival(base, j);
        ssize_t piece = (ssize_t)(j / (size_t)k), i = (ssize_t)(j % (size_t)k);
        switch (L) {
        case L_REVIDX:
            memcpy(p + piece * ext + (k - 1 - i) * 8, &x, 4);
            break;
        case L_NEGVEC:
            memcpy(p + piece * ext - i * 8, &x, 4);
            break;
        case L_BOTTOM:
            memcpy(p + 8 * (m - 1 - j), &x, 4);
            break;
        case L_INT:
            memcpy(p + 4 * j, &x, 4);
            break;
        case L_INT_HOLE:
            memcpy(p + 8 * j, &x, 4);
            break;
        case L_VEC: {
            size_t piece = j / (size_t)k, i = j % (size_t)k;
            memcpy(p + piece * (size_t)(2 * k - 1) * 4 + i * 8, &x, 4);
            break;
        }
        case L_REC:
        case L_PACKED: {
            const MPI_Aint *o = L == L_REC ? REC_OFF : PACKED_OFF;
            size_t ext = L == L_REC ? REC_EXTENT : PACKED_EXTENT;
            double d = (double)(x >> 8) / 8.0;
            short s = (short)(x ^ 0x5a5a);
            memcpy(p + j * ext + (size_t)o[0], &x, 4);
            memcpy(p + j * ext + (size_t)o[1], &d, 8);
            memcpy(p + j * ext + (size_t)o[2], &s, 2);
            break;
        }
        }
    }
}

/* Extent of one element of the MPI type of layout L. */
static size_t extent_of(int L, int k)
{
    switch (L) {
    case L_INT:
        return 4;
    case L_INT_HOLE:
        return 8;
    case L_VEC:
    case L_REVIDX:
    case L_NEGVEC:
        return (size_t)(2 * k - 1) * 4;
    case L_BOTTOM:
        return (size_t)(8 * k - 4);
    case L_REC:
        return REC_EXTENT;
    default:
        return PACKED_EXTENT;
    }
}

/* Bytes before the buffer pointer that the data of layout L reaches. */
static size_t pre_of(int L, int k)
{
    return L == L_NEGVEC ? (size_t)(2 * k - 2) * 4 : 0;
}

#define HOLE 0xEE

/* A region of `pre` + `len` bytes full of HOLE (plus GUARD bytes of HOLE on
 * both sides), from the heap (in_heap: 1) or from the static array `slot`
 * (0), or a private malloc'd one (2: for expected images); returns the
 * address `pre` bytes into it. */
static unsigned char *region(size_t len, size_t pre, int in_heap, int slot)
{
    unsigned char *b;
    size_t total = pre + len + 2 * GUARD;
    if (in_heap == 0 && total <= sizeof g_static[0])
        b = g_static[slot];
    else
        b = must(malloc(total), "malloc", total);
    memset(b, HOLE, total);
    return b + GUARD + pre;
}

static void region_free(unsigned char *p, size_t pre)
{
    unsigned char *b = p - GUARD - pre;
    if (b != g_static[0] && b != g_static[1])
        free(b);
}

/* The receive buffer equals the expected image (holes included). */
static int same_image(const unsigned char *got, const unsigned char *want, size_t len,
                      size_t pre, const char *what)
{
    for (ssize_t i = -(ssize_t)(GUARD + pre); i < (ssize_t)(len + GUARD); i++)
        if (got[i] != want[i]) {
            CHECK(0, "%s: byte %zd is 0x%02x, expected 0x%02x%s", what, i, got[i], want[i],
                  want[i] == HOLE ? " (a hole or guard)" : "");
            return 0;
        }
    return 1;
}

/* For the current k: vector of k ints with stride 2; the reversed indexed
 * type; the vector with stride -2; the absolute-address type of a buffer. */
static MPI_Datatype g_vec, g_revidx, g_negvec, g_bottom;

static MPI_Datatype mpi_type(int L)
{
    switch (L) {
    case L_INT:
        return MPI_INT;
    case L_INT_HOLE:
        return T_INT_HOLE;
    case L_VEC:
        return g_vec;
    case L_REVIDX:
        return g_revidx;
    case L_NEGVEC:
        return g_negvec;
    case L_BOTTOM:
        return g_bottom;
    case L_REC:
        return T_REC;
    default:
        return T_PACKED;
    }
}

/* Elements of the message (ints / records) per count of layout L. */
static size_t per(int L, int k)
{
    return L == L_VEC || L == L_REVIDX || L == L_NEGVEC || L == L_BOTTOM ? (size_t)k : 1;
}

static void derived(void)
{
    section("B derived datatypes");
    const int me = g_rank_, n = g_size_;
    MPI_Comm comm = MPI_COMM_WORLD;
    make_types();
    static const int KS[4] = {1, 100, 1500, 40000};
    for (int ki = 0; ki < 4; ki++) {
        /* 12000 instead of 40000 at more than 2 ranks (time) */
        const int k = KS[ki] == 40000 && n > 2 ? 12000 : KS[ki];
        const int root = ki % n;
        const int in_heap = ki % 2 == 0;
        MPI_OK(MPI_Type_vector(k, 1, 2, MPI_INT, &g_vec));
        MPI_OK(MPI_Type_commit(&g_vec));
        int *rd = must(malloc((size_t)k * sizeof(int)), "malloc", 0);
        for (int i = 0; i < k; i++)
            rd[i] = 2 * (k - 1 - i);
        MPI_OK(MPI_Type_create_indexed_block(k, 1, rd, MPI_INT, &g_revidx));
        MPI_OK(MPI_Type_commit(&g_revidx));
        free(rd);
        MPI_OK(MPI_Type_vector(k, 1, -2, MPI_INT, &g_negvec));
        MPI_OK(MPI_Type_commit(&g_negvec));
        /* {collective, send layout, receive layout, in place} */
        static const int CASES[][4] = {
            {C_BCAST, L_INT, L_VEC, 0},          {C_BCAST, L_PACKED, L_REC, 0},
            {C_GATHER, L_INT, L_INT_HOLE, 0},    {C_GATHER, L_INT, L_VEC, 0},
            {C_SCATTER, L_INT_HOLE, L_VEC, 0},   {C_ALLGATHER, L_PACKED, L_REC, 0},
            {C_ALLGATHER, L_INT, L_VEC, 0},      {C_ALLTOALL, L_INT, L_INT_HOLE, 0},
            {C_ALLTOALL, L_PACKED, L_REC, 0},    {C_GATHERV, L_INT, L_INT_HOLE, 0},
            {C_SCATTERV, L_INT_HOLE, L_INT, 0},  {C_ALLGATHERV, L_PACKED, L_REC, 0},
            {C_ALLTOALLV, L_INT, L_INT_HOLE, 0}, {C_BCAST, L_INT, L_REVIDX, 0},
            {C_SCATTER, L_REVIDX, L_INT, 0},     {C_ALLGATHER, L_INT, L_NEGVEC, 0},
            {C_GATHER, L_NEGVEC, L_INT, 0},      {C_ALLTOALL, L_REVIDX, L_NEGVEC, 0},
            {C_BCAST, L_INT, L_BOTTOM, 0},       {C_GATHER, L_INT, L_VEC, 1},
            {C_ALLGATHER, L_PACKED, L_REC, 1},   {C_ALLTOALL, L_INT, L_INT_HOLE, 1},
            {C_ALLGATHERV, L_PACKED, L_REC, 1},  {C_ALLTOALL, L_REVIDX, L_NEGVEC, 1},
        };
        const int ncases = (int)(sizeof CASES / sizeof CASES[0]);
        for (int ci = 0; ci < ncases; ci++) {
            const int coll = CASES[ci][0], LS = CASES[ci][1], LR = CASES[ci][2];
            const int inplace = CASES[ci][3];
            /* elements (ints / records) per rank-to-rank message */
            /* (stock MPICH takes seconds for an oversubscribed Allgatherv of
             * 40000 structs: 1500 there) */
            const size_t m = coll == C_ALLGATHERV && k > 1500 ? 1500 : (size_t)k;
            const uint64_t seed = seed6(99, (uint64_t)ki, (uint64_t)ci, 0, 0, 0);
            const size_t sext = extent_of(LS, k), rext = extent_of(LR, k);
            const int scount = (int)(m / per(LS, k)), rcount = (int)(m / per(LR, k));
            char what[160];
            static const char *LNAME[] = {
                "MPI_INT",       "int+hole",          "vector(stride 2)",
                "struct with holes", "packed struct", "reversed indexed",
                "vector(stride -2)", "absolute addresses from MPI_BOTTOM"};
            const size_t spre = pre_of(LS, k), rpre = pre_of(LR, k);
            snprintf(what, sizeof what, "B %s root %d, %zu elements: send %d x %s, "
                     "receive %d x %s%s", CNAME[coll], root, m, scount, LNAME[LS], rcount,
                     LNAME[LR], inplace ? ", in place" : "");
            /* v variants: rank i's count is (i % 2 ? 1 : 2) x the base count,
             * its piece in reverse order with a gap of one extent */
            int *cnt = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
            int *dsp = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
            int vtot = 0; /* receive region in extents of LR */
            int is_v = coll >= C_GATHERV;
            for (int i = n - 1; i >= 0; i--) {
                int mult = i % 2 ? 1 : 2;
                cnt[i] = (coll == C_SCATTERV ? scount : rcount) * mult;
                dsp[i] = vtot; /* no leading gap: see layout() */
                vtot += cnt[i] + 1;
            }
            /* messages: from src to dst, melem(src) elements */
#define MELEM(src) (is_v ? m * (size_t)((src) % 2 ? 1 : 2) : m)
            /* --- send side --- */
            unsigned char *S = NULL;
            size_t slen = 0;
            int sends_pieces = coll == C_SCATTER || coll == C_SCATTERV ||
                               coll == C_ALLTOALL || coll == C_ALLTOALLV;
            int sender = coll == C_BCAST || coll == C_SCATTER || coll == C_SCATTERV
                             ? me == root
                             : 1;
            if (sender) {
                if (sends_pieces) {
                    if (coll == C_SCATTERV) {
                        slen = (size_t)vtot * sext;
                        S = region(slen, spre, in_heap, 0);
                        for (int i = 0; i < n; i++)
                            put_msg(S + (size_t)dsp[i] * sext, LS, k, MELEM(i), seed,
                                    me, i);
                    } else if (coll == C_ALLTOALLV) {
                        /* send to j: MELEM(me) elements, contiguous blocks */
                        slen = (size_t)n * 2 * m * sext;
                        S = region(slen, spre, in_heap, 0);
                        for (int j = 0; j < n; j++)
                            put_msg(S + (size_t)j * 2 * m * sext, LS, k, MELEM(me), seed,
                                    me, j);
                    } else {
                        slen = (size_t)n * (size_t)scount * sext;
                        S = region(slen, spre, in_heap, 0);
                        for (int i = 0; i < n; i++)
                            put_msg(S + (size_t)i * (size_t)scount * sext, LS, k, m,
                                    seed, me, i);
                    }
                } else {
                    size_t me_m = coll == C_BCAST ? m : MELEM(me);
                    slen = me_m / per(LS, k) * sext;
                    S = region(slen, spre, in_heap, 0);
                    put_msg(S, LS, k, me_m, seed, me, coll == C_BCAST ? 0 : 0);
                }
            }
            /* --- receive side and its expected image --- */
            int receiver = coll == C_GATHER || coll == C_GATHERV ? me == root
                           : coll == C_BCAST                  ? me != root
                                                              : 1;
            unsigned char *R = NULL, *W = NULL;
            size_t rlen = 0;
            if (receiver) {
                int many = coll == C_GATHER || coll == C_ALLGATHER ||
                           coll == C_ALLTOALL;
                if (coll == C_GATHERV || coll == C_ALLGATHERV || coll == C_ALLTOALLV)
                    rlen = (size_t)vtot * rext;
                else if (many)
                    rlen = (size_t)n * (size_t)rcount * rext;
                else if (coll == C_SCATTERV)
                    rlen = MELEM(me) / per(LR, k) * rext;
                else
                    rlen = (size_t)rcount * rext;
                R = region(rlen, rpre, !in_heap, 1);
                W = region(rlen, rpre, 2, 0);
                if (coll == C_GATHERV || coll == C_ALLGATHERV || coll == C_ALLTOALLV) {
                    for (int i = 0; i < n; i++)
                        put_msg(W + (size_t)dsp[i] * rext, LR, k,
                                coll == C_ALLTOALLV ? MELEM(i) : MELEM(i), seed, i,
                                coll == C_ALLTOALLV ? me : 0);
                } else if (many) {
                    for (int i = 0; i < n; i++)
                        put_msg(W + (size_t)i * (size_t)rcount * rext, LR, k, m, seed, i,
                                coll == C_ALLTOALL ? me : 0);
                } else if (coll == C_BCAST) {
                    put_msg(W, LR, k, m, seed, root, 0);
                } else {
                    put_msg(W, LR, k, MELEM(me), seed, root, me);
                }
            }
            /* in place: this rank's data is in the receive buffer already */
            if (inplace && receiver) {
                if (coll == C_ALLTOALL)
                    for (int i = 0; i < n; i++)
                        put_msg(R + (size_t)i * (size_t)rcount * rext, LR, k, m, seed, me,
                                i);
                else if (coll == C_ALLGATHERV)
                    put_msg(R + (size_t)dsp[me] * rext, LR, k, MELEM(me), seed, me, 0);
                else
                    put_msg(R + (size_t)me * (size_t)rcount * rext, LR, k, m, seed, me, 0);
            }
            if (inplace && (coll != C_GATHER || me == root)) {
                region_free(S, spre);
                S = MPI_IN_PLACE;
            }
            /* Alltoallv: counts to / from each peer */
            int *sc = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
            int *sdp = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
            int *rc = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
            for (int j = 0; j < n; j++) {
                sc[j] = (int)(MELEM(me) / per(LS, k));
                sdp[j] = (int)((size_t)j * 2 * m / per(LS, k));
                rc[j] = (int)(MELEM(j) / per(LR, k));
            }
            MPI_Datatype ts = mpi_type(LS), tr = mpi_type(LR);
            double t0 = MPI_Wtime();
            switch (coll) {
            case C_BCAST:
                if (me == root) {
                    MPI_OK(MPI_Bcast(S, scount, ts, root, comm));
                } else if (LR == L_BOTTOM) {
                    /* the ints at absolute addresses, in reverse order */
                    MPI_Aint *ad = must(malloc(m * sizeof(MPI_Aint)), "malloc", 0);
                    for (size_t j = 0; j < m; j++)
                        MPI_OK(MPI_Get_address(R + 8 * (m - 1 - j), &ad[j]));
                    MPI_OK(MPI_Type_create_hindexed_block((int)m, 1, ad, MPI_INT,
                                                          &g_bottom));
                    MPI_OK(MPI_Type_commit(&g_bottom));
                    free(ad);
                    MPI_OK(MPI_Bcast(MPI_BOTTOM, 1, g_bottom, root, comm));
                } else {
                    MPI_OK(MPI_Bcast(R, rcount, tr, root, comm));
                }
                break;
            case C_GATHER:
                MPI_OK(MPI_Gather(S, scount, ts, R, rcount, tr, root, comm));
                break;
            case C_SCATTER:
                MPI_OK(MPI_Scatter(S, scount, ts, R, rcount, tr, root, comm));
                break;
            case C_ALLGATHER:
                MPI_OK(MPI_Allgather(S, scount, ts, R, rcount, tr, comm));
                break;
            case C_ALLTOALL:
                MPI_OK(MPI_Alltoall(S, scount, ts, R, rcount, tr, comm));
                break;
            case C_GATHERV:
                MPI_OK(MPI_Gatherv(S, (int)(MELEM(me) / per(LS, k)), ts, R, cnt, dsp, tr,
                                   root, comm));
                break;
            case C_SCATTERV:
                MPI_OK(MPI_Scatterv(S, cnt, dsp, ts, R, (int)(MELEM(me) / per(LR, k)), tr,
                                    root, comm));
                break;
            case C_ALLGATHERV:
                MPI_OK(MPI_Allgatherv(S, (int)(MELEM(me) / per(LS, k)), ts, R, cnt, dsp,
                                      tr, comm));
                break;
            case C_ALLTOALLV:
                MPI_OK(MPI_Alltoallv(S, sc, sdp, ts, R, rc, dsp, tr, comm));
                break;
            }
#undef MELEM
            if (g_case_times)
                fprintf(stderr, "rank %d: %s: %.3f s\n", g_rank_, what, MPI_Wtime() - t0);
            int ok = 1;
            uint64_t h = 0;
            if (receiver) {
                ok = same_image(R, W, rlen, rpre, what);
                h = hash_bytes(0, R - rpre, rlen + rpre);
            }
            out("%s: %s, checksum %016llx", what, ok ? "right" : "WRONG",
                (unsigned long long)h);
            if (S != NULL && S != MPI_IN_PLACE)
                region_free(S, spre);
            if (R != NULL) {
                region_free(R, rpre);
                region_free(W, rpre);
            }
            if (LR == L_BOTTOM && receiver)
                MPI_Type_free(&g_bottom);
            free(cnt);
            free(dsp);
            free(sc);
            free(sdp);
            free(rc);
        }
        MPI_Type_free(&g_vec);
        MPI_Type_free(&g_revidx);
        MPI_Type_free(&g_negvec);
    }
    MPI_Type_free(&T_INT_HOLE);
    MPI_Type_free(&T_REC);
    MPI_Type_free(&T_PACKED);
}

/* ------------------------------------------------------------------ */
/* C: 64 MiB                                                            */
/* ------------------------------------------------------------------ */

static void huge(void)
{
    section("C 64 MiB");
    const int me = g_rank_, n = g_size_;
    /* 16 MiB at more than 2 ranks (oversubscribed: time) */
    const size_t len = (n > 2 ? 16 : 64) * (size_t)MIB;
    unsigned char *b = must(malloc(len), "malloc", len);
    const int root = n - 1;
    if (me == root)
        wpattern_fill(b, len, 6464);
    else
        memset(b, 0, len);
    MPI_OK(MPI_Bcast(b, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
    int ok = wpattern_check(b, len, 6464, "large Bcast");
    out("C Bcast %zu MiB from rank %d: %s, checksum %016llx", len / MIB, root,
        ok ? "right" : "WRONG", (unsigned long long)hash_bytes(0, b, len));
    free(b);

    /* Broadcasts from 512 KiB up, where the root copies blocks for the
     * readers whose buffers are in the shared heap: sizes that are no
     * multiple of the blocks, odd addresses, every root, and the byte
     * after the buffer must stay. */
    static const size_t ASSIST[] = {512 * 1024, 700001, MIB + 3, 3 * MIB + 5};
    int right = 0, calls = 0;
    for (size_t k = 0; k < sizeof ASSIST / sizeof ASSIST[0]; k++) {
        const size_t m = ASSIST[k];
        for (int r = 0; r < n; r++) {
            unsigned char *raw = must(malloc(m + 2), "malloc", m + 2);
            unsigned char *p = raw + 1;
            const unsigned seed = (unsigned)(700 + 10 * k + (size_t)r);
            if (me == r)
                wpattern_fill(p, m, seed);
            else
                memset(p, 0, m);
            p[m] = 0xa5;
            MPI_OK(MPI_Bcast(p, (int)m, MPI_BYTE, r, MPI_COMM_WORLD));
            int good = wpattern_check(p, m, seed, "assisted Bcast") && p[m] == 0xa5;
            CHECK(p[m] == 0xa5, "Bcast of %zu bytes from %d wrote past the buffer", m, r);
            right += good;
            calls++;
            free(raw);
        }
    }
    out("C Bcast 512 KiB-3 MiB, odd sizes and addresses, every root: %d of %d right", right,
        calls);

    const size_t cnt = len / sizeof(double);
    double *x = must(malloc(len), "malloc", len);
    double *y = must(malloc(len), "malloc", len);
    for (size_t i = 0; i < cnt; i++) {
        x[i] = (double)((i * 7 + (size_t)me * 13) % 1000);
        y[i] = -1;
    }
    MPI_OK(MPI_Allreduce(x, y, (int)cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    size_t bad = cnt;
    for (size_t i = 0; i < cnt && bad == cnt; i++) {
        double want = 0;
        for (int r = 0; r < n; r++)
            want += (double)((i * 7 + (size_t)r * 13) % 1000);
        if (y[i] != want)
            bad = i;
    }
    CHECK(bad == cnt, "%zu MiB Allreduce: element %zu is %g", len / MIB, bad,
          bad < cnt ? y[bad] : 0);
    out("C Allreduce %zu Mi doubles (%zu MiB), MPI_SUM: %s, checksum %016llx",
        cnt / MIB, len / MIB, bad == cnt ? "right" : "WRONG",
        (unsigned long long)hash_bytes(0, y, len));
    free(x);
    free(y);
}

/* ------------------------------------------------------------------ */
/* D: nothing to move, NULL buffers                                     */
/* ------------------------------------------------------------------ */

static void zero_counts(void)
{
    section("D zero counts");
    const int n = g_size_;
    MPI_Comm c = MPI_COMM_WORLD;
    int *z = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    int calls = 0, good = 0;
#define Z(call)                                                          \
    do {                                                                 \
        int z_rc_ = (call);                                              \
        calls++;                                                         \
        good += z_rc_ == MPI_SUCCESS;                                    \
        CHECK(z_rc_ == MPI_SUCCESS, "%s returned %s", #call,             \
              err_class_name(err_class(z_rc_)));                         \
    } while (0)
    for (int root = 0; root < n; root++) {
        Z(MPI_Bcast(NULL, 0, MPI_INT, root, c));
        Z(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, root, c));
        Z(MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, root, c));
        Z(MPI_Gatherv(NULL, 0, MPI_INT, NULL, z, z, MPI_INT, root, c));
        Z(MPI_Scatterv(NULL, z, z, MPI_INT, NULL, 0, MPI_INT, root, c));
        Z(MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, root, c));
    }
    Z(MPI_Allgather(NULL, 0, MPI_BYTE, NULL, 0, MPI_BYTE, c));
    Z(MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, NULL, 0, MPI_BYTE, c));
    Z(MPI_Alltoall(NULL, 0, MPI_DOUBLE, NULL, 0, MPI_DOUBLE, c));
    Z(MPI_Allgatherv(NULL, 0, MPI_INT, NULL, z, z, MPI_INT, c));
    /* (stock MPICH refuses equal send and receive pointers, NULL too:
     * "Buffers must not be aliased") */
    static int dummy;
    Z(MPI_Alltoallv(NULL, z, z, MPI_INT, &dummy, z, z, MPI_INT, c));
    Z(MPI_Allreduce(NULL, NULL, 0, MPI_DOUBLE, MPI_SUM, c));
    Z(MPI_Allreduce(MPI_IN_PLACE, NULL, 0, MPI_INT, MPI_MAX, c));
    Z(MPI_Reduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, c));
    Z(MPI_Reduce_scatter(NULL, NULL, z, MPI_INT, MPI_SUM, c));
    Z(MPI_Scan(NULL, NULL, 0, MPI_INT, MPI_SUM, c));
    Z(MPI_Exscan(NULL, NULL, 0, MPI_INT, MPI_SUM, c));
    Z(MPI_Barrier(c));
#undef Z
    free(z);
    out("D count 0 with NULL buffers: %d of %d calls returned MPI_SUCCESS", good, calls);
}

/* ------------------------------------------------------------------ */
/* E: displacements of the v variants                                   */
/* ------------------------------------------------------------------ */

static int32_t eval(int src, int dst, int c, size_t j)
{
    return (int32_t)mix64(seed6(77, (uint64_t)src, (uint64_t)dst, (uint64_t)c, 0, 0), j);
}

/* A region of `total` ints of -7 from the heap or a static array, and its
 * expected image; P points `mid` ints into it. */
typedef struct {
    int32_t *mem, *img;
    size_t total;
    int in_static;
} ereg_t;

static ereg_t ereg(size_t total, int slot, int in_static)
{
    ereg_t r = {NULL, NULL, total, in_static && total * 4 <= STATIC_MAX};
    r.mem = r.in_static ? (int32_t *)(void *)g_static[slot]
                        : must(malloc(total * 4), "malloc", total * 4);
    r.img = must(malloc(total * 4), "malloc", total * 4);
    for (size_t i = 0; i < total; i++)
        r.mem[i] = r.img[i] = -7;
    return r;
}

static int ereg_check(ereg_t *r, const char *what)
{
    for (size_t i = 0; i < r->total; i++)
        if (r->mem[i] != r->img[i]) {
            CHECK(0, "%s: int %zu of the region is %d, expected %d", what, i, r->mem[i],
                  r->img[i]);
            return 0;
        }
    return 1;
}

static void ereg_free(ereg_t *r)
{
    if (!r->in_static)
        free(r->mem);
    free(r->img);
}

static void displacements(void)
{
    section("E displacements");
    const int me = g_rank_, n = g_size_;
    MPI_Comm comm = MPI_COMM_WORLD;
    for (int big = 0; big < 2; big++) {
        const int c = big ? 20000 : 10;
        /* pieces of c ints 1 int apart; the buffer pointer in the middle:
         * the lower ranks' displacements are negative */
        const int stride = c + 2, mid = (n / 2) * stride + stride / 2;
        const size_t total = (size_t)(n * stride + stride);
        int *cnt = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
        int *dsp = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
        int *zero = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
        for (int i = 0; i < n; i++) {
            cnt[i] = c;
            dsp[i] = i * stride + 1 - mid;
        }
        int32_t *mine = must(malloc((size_t)c * 4), "malloc", 0);
        char what[160];
        int okall = 1;

        /* Allgatherv into negative and positive displacements */
        for (size_t j = 0; j < (size_t)c; j++)
            mine[j] = eval(me, 0, c, j);
        ereg_t r = ereg(total, 1, !big);
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < (size_t)c; j++)
                r.img[mid + dsp[i] + (int)j] = eval(i, 0, c, j);
        /* (not on one rank under MPICH: stock MPICH 4.0.2 puts the piece of
         * a 1-rank Allgatherv at displacement 0) */
#ifdef MPICH_VERSION
        if (n > 1)
#endif
        {
            MPI_OK(MPI_Allgatherv(mine, c, MPI_INT, r.mem + mid, cnt, dsp, MPI_INT, comm));
            snprintf(what, sizeof what, "E Allgatherv of %d ints, negative displacements",
                     c);
            okall &= ereg_check(&r, what);
        }
        ereg_free(&r);

        /* Gatherv to the last rank, same layout */
        r = ereg(total, 1, big);
        if (me == n - 1)
            for (int i = 0; i < n; i++)
                for (size_t j = 0; j < (size_t)c; j++)
                    r.img[mid + dsp[i] + (int)j] = eval(i, 0, c, j);
        MPI_OK(MPI_Gatherv(mine, c, MPI_INT, r.mem + mid, cnt, dsp, MPI_INT, n - 1, comm));
        snprintf(what, sizeof what, "E Gatherv of %d ints, negative displacements", c);
        okall &= ereg_check(&r, what);
        ereg_free(&r);

        /* Scatterv from rank 0 out of negative displacements */
        ereg_t sreg = ereg(total, 0, !big);
        if (me == 0)
            for (int i = 0; i < n; i++)
                for (size_t j = 0; j < (size_t)c; j++)
                    sreg.mem[mid + dsp[i] + (int)j] = sreg.img[mid + dsp[i] + (int)j] =
                        eval(0, i, c, j);
        int32_t *got = must(malloc((size_t)c * 4), "malloc", 0);
        MPI_OK(MPI_Scatterv(sreg.mem + mid, cnt, dsp, MPI_INT, got, c, MPI_INT, 0, comm));
        int sok = 1;
        for (size_t j = 0; j < (size_t)c; j++)
            sok &= got[j] == eval(0, me, c, j);
        snprintf(what, sizeof what, "E Scatterv of %d ints, negative displacements", c);
        CHECK(sok, "%s: received wrong data", what);
        okall &= sok && ereg_check(&sreg, what);
        ereg_free(&sreg);

        /* Alltoallv: one send block for everyone (all send displacements
         * 0: the same bytes read n times), negative receive displacements */
        for (size_t j = 0; j < (size_t)c; j++)
            mine[j] = eval(me, 99, c, j);
        r = ereg(total, 1, !big);
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < (size_t)c; j++)
                r.img[mid + dsp[i] + (int)j] = eval(i, 99, c, j);
        MPI_OK(MPI_Alltoallv(mine, cnt, zero, MPI_INT, r.mem + mid, cnt, dsp, MPI_INT, comm));
        snprintf(what, sizeof what, "E Alltoallv of %d ints, one block sent to all", c);
        okall &= ereg_check(&r, what);
        ereg_free(&r);

        /* Alltoallv: negative send and receive displacements */
        sreg = ereg(total, 0, big);
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < (size_t)c; j++)
                sreg.mem[mid + dsp[i] + (int)j] = sreg.img[mid + dsp[i] + (int)j] =
                    eval(me, i, c, j);
        r = ereg(total, 1, !big);
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < (size_t)c; j++)
                r.img[mid + dsp[i] + (int)j] = eval(i, me, c, j);
        MPI_OK(MPI_Alltoallv(sreg.mem + mid, cnt, dsp, MPI_INT, r.mem + mid, cnt, dsp,
                             MPI_INT, comm));
        snprintf(what, sizeof what, "E Alltoallv of %d ints, negative displacements", c);
        okall &= ereg_check(&r, what) && ereg_check(&sreg, what);
        ereg_free(&r);
        ereg_free(&sreg);

        out("E Allgatherv, Gatherv, Scatterv, Alltoallv (one block to all; negative "
            "displacements) of %d ints: %s", c, okall ? "right" : "WRONG");
        free(cnt);
        free(dsp);
        free(zero);
        free(mine);
        free(got);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_rank_ = rank;
    g_size_ = size;
    TYPES[0] = (type_t){MPI_BYTE, 1, "MPI_BYTE"};
    TYPES[1] = (type_t){MPI_INT, 4, "MPI_INT"};
    TYPES[2] = (type_t){MPI_DOUBLE, 8, "MPI_DOUBLE"};
    (void)KIND_NAME;
    g_case_times = getenv("COLL_CASE_TIMES") != NULL;
    matrix();
    derived();
    zero_counts();
    displacements();
    huge();
    return coll_finish("move", rank, size);
}

/*
 * coll_nblarge.c - collective conformance: nonblocking collectives whose
 * payload is larger than heapmpi's inline cells (1 KiB by default).
 *
 * Why: heapmpi runs these by publishing where each member's data lies and
 * reading it in place, from the program's own buffer when that lies in
 * the shared heap (malloc), from a staging copy when it does not (static
 * arrays) or when the call is in place; and when a member cannot get
 * staging memory (run with HEAPMPI_HEAP_SIZE=2M: every payload of 2 MiB
 * or more fails to stage) every member moves that payload through the
 * cells in chunks instead. Each member's buffers stay in use until every
 * other member is done reading them, several such operations are pending
 * at once on one communicator, and the results must be the stock MPI's
 * whichever path ran.
 *
 * For each buffer kind (malloc'd, static, in place where MPI allows it)
 * and two payload sizes (70001 bytes, and 2 MiB + 7 bytes per payload),
 * all posted on MPI_COMM_WORLD, then completed by one MPI_Waitall:
 *   Ibcast (MPI_BYTE, root rotating), Ibcast of a strided vector type
 *   freed before the Waitall (holes untouched), Iallreduce SUM and Ireduce
 *   MAX (root rotating) on MPI_INT, Iscan SUM and Iexscan MAX on MPI_INT,
 *   Igather and Iscatter (root rotating), Iallgather, Ialltoall, all of
 *   MPI_BYTE blocks, Ireduce_scatter_block SUM on MPI_INT (a block's worth
 *   of ints per member) and Ireduce_scatter MAX on MPI_INT (counts that
 *   differ per member, one of them 0; in place, the whole contribution
 *   in the receive buffer; not the 2 MiB in-place ones at 3 ranks and more
 *   under the MPICH family, which stock MPICH 4.0.2 aborts in).
 * Then large Ibcasts back to back (512 KiB to 3 MiB + 5, roots rotating,
 * an Iallreduce among them), the sizes whose readers the root helps.
 * Every result, the guard bytes after it and the send buffers are checked
 * against a local reference; checksums of the results are printed.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines (checksums of
 * exact results), the number of nonblocking collectives posted per rank
 * (every one of them heapmpi can run on the heap on a node-local
 * communicator: compared with its report's nonblocking= count), then
 * "rank N: nblarge ok". Exit status 0 on success, 1
 * on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

#define GUARD 0xA5

static int g_me, g_n;

/* Stock MPICH 4.0.2 aborts in an in-place (I)reduce_scatter of about
 * 400 KB per member and more at 3 and 4 ranks (a memcpy between
 * overlapping ranges, caught by its own check): those are left out
 * there. */
static int g_mpich_inplace_rs_bug;

/* The static buffers: outside heapmpi's heap. Sized for 4 ranks of the
 * largest payload (2 MiB + 7 per block, n blocks), plus guards. */
#define HUGE_PB ((size_t)2 * MIB + 7)
#define STATIC_BYTES (4 * HUGE_PB + 64)
static unsigned char st_a[STATIC_BYTES], st_b[STATIC_BYTES];

/* Byte j of what member r contributes under seed s. */
static unsigned char byte_of(uint64_t s, int r, size_t j)
{
    return (unsigned char)mix64(s + (uint64_t)r, j >> 3) >> ((j & 7) * 8);
}

/* Int element j of member r's contribution (small, so sums stay exact). */
static int int_of(uint64_t s, int r, size_t j)
{
    return (int)(mix64(s * 31 + (uint64_t)r, j) & 0xffff);
}

/* Where an operation's buffers come from. */
enum kind { K_MALLOC, K_STATIC, K_INPLACE };
static const char *KNAME[] = {"malloc", "static", "in place"};

typedef struct op {
    const char *what;
    enum kind k;
    size_t bytes; /* bytes of the receive area checked */
    unsigned char *sb, *rb;
    int owned; /* sb/rb malloc'd */
    int root;
    /* The reduce-scatters: this member's part of every contribution of
     * `in` ints. */
    size_t first, cnt, in;
    uint64_t s;
    int (*check)(struct op *);
} op;

static unsigned char *area(enum kind k, int which, size_t bytes)
{
    if (k == K_STATIC)
        return which ? st_b : st_a;
    return must(malloc(bytes + 8), "malloc", bytes);
}

static void guard(unsigned char *p, size_t n)
{
    memset(p + n, GUARD, 8);
}

static int guard_ok(const unsigned char *p, size_t n)
{
    int ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= p[n + (size_t)i] == GUARD;
    return ok;
}

/* ---- checks, one per operation ---- */

static uint64_t g_h;
static int g_calls; /* nonblocking collectives posted */

static int check_bcast(op *o)
{
    int ok = guard_ok(o->rb, o->bytes);
    for (size_t j = 0; j < o->bytes && ok; j++)
        ok &= o->rb[j] == byte_of(o->s, o->root, j);
    g_h = hash_bytes(g_h, o->rb, o->bytes);
    return ok;
}

static int sum_ref(op *o, size_t j, int upto, int from)
{
    int v = 0;
    for (int r = from; r <= upto; r++)
        v += int_of(o->s, r, j);
    return v;
}

static int check_allreduce(op *o)
{
    const size_t c = o->bytes / 4;
    const int *rb = (const int *)o->rb;
    int ok = guard_ok(o->rb, o->bytes);
    for (size_t j = 0; j < c && ok; j++)
        ok &= rb[j] == sum_ref(o, j, g_n - 1, 0);
    if (o->k != K_INPLACE)
        for (size_t j = 0; j < c && ok; j++)
            ok &= ((const int *)o->sb)[j] == int_of(o->s, g_me, j);
    g_h = hash_bytes(g_h, o->rb, o->bytes);
    return ok;
}

static int check_reduce_max(op *o)
{
    if (g_me != o->root)
        return 1;
    const size_t c = o->bytes / 4;
    const int *rb = (const int *)o->rb;
    int ok = guard_ok(o->rb, o->bytes);
    for (size_t j = 0; j < c && ok; j++) {
        int m = int_of(o->s, 0, j);
        for (int r = 1; r < g_n; r++)
            m = int_of(o->s, r, j) > m ? int_of(o->s, r, j) : m;
        ok &= rb[j] == m;
    }
    g_h = hash_bytes(g_h, o->rb, o->bytes);
    return ok;
}

static int check_scan(op *o)
{
    const size_t c = o->bytes / 4;
    const int *rb = (const int *)o->rb;
    int ok = guard_ok(o->rb, o->bytes);
    for (size_t j = 0; j < c && ok; j++)
        ok &= rb[j] == sum_ref(o, j, g_me, 0);
    g_h = hash_bytes(g_h, o->rb, o->bytes);
    return ok;
}

static int check_exscan(op *o)
{
    if (g_me == 0)
        return guard_ok(o->rb, o->bytes); /* undefined on rank 0 */
    const size_t c = o->bytes / 4;
    const int *rb = (const int *)o->rb;
    int ok = guard_ok(o->rb, o->bytes);
    for (size_t j = 0; j < c && ok; j++) {
        int v = int_of(o->s, 0, j);
        for (int r = 1; r < g_me; r++)
            v = int_of(o->s, r, j) > v ? int_of(o->s, r, j) : v;
        ok &= rb[j] == v;
    }
    g_h = hash_bytes(g_h, o->rb, o->bytes);
    return ok;
}

/* The reduce-scatters: elements first .. first + cnt of every member's
 * contribution, summed (Ireduce_scatter_block) or their maximum
 * (Ireduce_scatter, root = 1 here); the send buffer left alone. */
static int check_rscatter(op *o)
{
    const int *rb = (const int *)o->rb;
    int ok = guard_ok(o->rb, o->bytes);
    for (size_t j = 0; j < o->cnt && ok; j++) {
        int v = int_of(o->s, 0, o->first + j);
        for (int r = 1; r < g_n; r++) {
            const int x = int_of(o->s, r, o->first + j);
            v = o->root ? (x > v ? x : v) : v + x;
        }
        ok &= rb[j] == v;
    }
    if (o->k != K_INPLACE)
        for (size_t j = 0; j < o->in && ok; j++)
            ok &= ((const int *)o->sb)[j] == int_of(o->s, g_me, j);
    g_h = hash_bytes(g_h, o->rb, o->cnt * 4);
    return ok;
}

/* Member m's count in the large Ireduce_scatter of c ints per member:
 * different on most, 0 on member 1. */
static size_t rs_count(size_t c, int m)
{
    return m == 1 ? 0 : c / 2 + (size_t)m * 1001;
}

/* Gathers: block m of the receive area is member m's block. */
static int check_gather(op *o)
{
    if (o->root >= 0 && g_me != o->root)
        return 1;
    const size_t pb = o->bytes / (size_t)g_n;
    int ok = guard_ok(o->rb, o->bytes);
    for (int m = 0; m < g_n; m++)
        for (size_t j = 0; j < pb && ok; j++)
            ok &= o->rb[(size_t)m * pb + j] == byte_of(o->s, m, j);
    g_h = hash_bytes(g_h, o->rb, o->bytes);
    return ok;
}

/* Scatter: the root's block g_me (root's bytes at offset g_me * pb). */
static int check_scatter(op *o)
{
    const size_t pb = o->bytes;
    int ok = guard_ok(o->rb, pb);
    for (size_t j = 0; j < pb && ok; j++)
        ok &= o->rb[j] == byte_of(o->s, o->root, (size_t)g_me * pb + j);
    g_h = hash_bytes(g_h, o->rb, pb);
    return ok;
}

/* All-to-all: block m of mine is block g_me of member m's. */
static int check_alltoall(op *o)
{
    const size_t pb = o->bytes / (size_t)g_n;
    int ok = guard_ok(o->rb, o->bytes);
    for (int m = 0; m < g_n; m++)
        for (size_t j = 0; j < pb && ok; j++)
            ok &= o->rb[(size_t)m * pb + j] == byte_of(o->s, m, (size_t)g_me * pb + j);
    g_h = hash_bytes(g_h, o->rb, o->bytes);
    return ok;
}

/* ---- posting ---- */

enum { MAXOPS = 32 };
static op g_ops[MAXOPS];
static MPI_Request g_rq[MAXOPS];
static int g_nops;

static op *next(const char *what, enum kind k, size_t bytes, uint64_t s, int root,
                int (*check)(op *))
{
    op *o = &g_ops[g_nops];
    *o = (op){.what = what, .k = k, .bytes = bytes, .s = s, .root = root, .check = check};
    return o;
}

/* Posts the operations of one (kind, size), all of them, or only the
 * one numbered `only` (the static arrays hold one operation at a time). */
static void post_round(enum kind k, size_t pb, uint64_t seed, int only)
{
    const MPI_Comm w = MPI_COMM_WORLD;
    const size_t n = (size_t)g_n;
    const int root = (int)(seed % (uint64_t)g_n);
    g_nops = 0;
    unsigned char *sa = NULL, *ra = NULL;
    int idx = -1;
#define TAKE() (++idx, only < 0 || only == idx)

    if (TAKE()) { /* Ibcast */
        op *o = next("Ibcast", k, pb, seed + 1, root, check_bcast);
        o->rb = k == K_STATIC ? st_a : area(K_MALLOC, 0, pb);
        o->owned = k != K_STATIC;
        for (size_t j = 0; j < pb; j++)
            o->rb[j] = g_me == root ? byte_of(o->s, root, j) : 0xEE;
        guard(o->rb, pb);
        MPI_OK(MPI_Ibcast(o->rb, (int)pb, MPI_BYTE, root, w, &g_rq[g_nops++]));
    }
    const size_t c = pb / 4;
    if (TAKE()) { /* Iallreduce SUM */
        op *o = next("Iallreduce", k, c * 4, seed + 2, -1, check_allreduce);
        sa = k == K_STATIC ? st_a : area(K_MALLOC, 0, c * 4);
        ra = k == K_STATIC ? st_b : area(K_MALLOC, 1, c * 4);
        o->owned = k != K_STATIC;
        for (size_t j = 0; j < c; j++)
            ((int *)sa)[j] = int_of(o->s, g_me, j);
        if (k == K_INPLACE)
            memcpy(ra, sa, c * 4);
        else
            memset(ra, 0xEE, c * 4);
        guard(ra, c * 4);
        o->sb = sa, o->rb = ra;
        MPI_OK(MPI_Iallreduce(k == K_INPLACE ? MPI_IN_PLACE : sa, ra, (int)c, MPI_INT, MPI_SUM,
                              w, &g_rq[g_nops++]));
    }
    if (TAKE()) { /* Ireduce MAX */
        op *o = next("Ireduce", k, c * 4, seed + 3, root, check_reduce_max);
        sa = k == K_STATIC ? st_a : area(K_MALLOC, 0, c * 4);
        ra = k == K_STATIC ? st_b : area(K_MALLOC, 1, c * 4);
        o->owned = k != K_STATIC;
        for (size_t j = 0; j < c; j++)
            ((int *)sa)[j] = int_of(o->s, g_me, j);
        const int inpl = k == K_INPLACE && g_me == root;
        if (inpl)
            memcpy(ra, sa, c * 4);
        guard(ra, c * 4);
        o->sb = sa, o->rb = ra;
        MPI_OK(MPI_Ireduce(inpl ? MPI_IN_PLACE : sa, ra, (int)c, MPI_INT, MPI_MAX, root, w,
                           &g_rq[g_nops++]));
    }
    if (TAKE()) { /* Iscan SUM */
        op *o = next("Iscan", k, c * 4, seed + 4, -1, check_scan);
        sa = k == K_STATIC ? st_a : area(K_MALLOC, 0, c * 4);
        ra = k == K_STATIC ? st_b : area(K_MALLOC, 1, c * 4);
        o->owned = k != K_STATIC;
        for (size_t j = 0; j < c; j++)
            ((int *)sa)[j] = int_of(o->s, g_me, j);
        if (k == K_INPLACE)
            memcpy(ra, sa, c * 4);
        guard(ra, c * 4);
        o->sb = sa, o->rb = ra;
        MPI_OK(MPI_Iscan(k == K_INPLACE ? MPI_IN_PLACE : sa, ra, (int)c, MPI_INT, MPI_SUM, w,
                         &g_rq[g_nops++]));
    }
    if (TAKE()) { /* Iexscan MAX */
        op *o = next("Iexscan", k, c * 4, seed + 5, -1, check_exscan);
        sa = k == K_STATIC ? st_a : area(K_MALLOC, 0, c * 4);
        ra = k == K_STATIC ? st_b : area(K_MALLOC, 1, c * 4);
        o->owned = k != K_STATIC;
        for (size_t j = 0; j < c; j++)
            ((int *)sa)[j] = int_of(o->s, g_me, j);
        if (k == K_INPLACE)
            memcpy(ra, sa, c * 4);
        guard(ra, c * 4);
        o->sb = sa, o->rb = ra;
        MPI_OK(MPI_Iexscan(k == K_INPLACE ? MPI_IN_PLACE : sa, ra, (int)c, MPI_INT, MPI_MAX, w,
                           &g_rq[g_nops++]));
    }
    if (TAKE()) { /* Igather */
        op *o = next("Igather", k, n * pb, seed + 6, root, check_gather);
        sa = k == K_STATIC ? st_a : area(K_MALLOC, 0, pb);
        ra = k == K_STATIC ? st_b : area(K_MALLOC, 1, n * pb);
        o->owned = k != K_STATIC;
        const int inpl = k == K_INPLACE && g_me == root;
        unsigned char *mine = inpl ? ra + (size_t)g_me * pb : sa;
        for (size_t j = 0; j < pb; j++)
            mine[j] = byte_of(o->s, g_me, j);
        guard(ra, n * pb);
        o->sb = sa, o->rb = ra;
        MPI_OK(MPI_Igather(inpl ? MPI_IN_PLACE : sa, (int)pb, MPI_BYTE, ra, (int)pb, MPI_BYTE,
                           root, w, &g_rq[g_nops++]));
    }
    if (TAKE()) { /* Iscatter */
        op *o = next("Iscatter", k, pb, seed + 7, root, check_scatter);
        sa = k == K_STATIC ? st_a : area(K_MALLOC, 0, n * pb);
        ra = k == K_STATIC ? st_b : area(K_MALLOC, 1, pb);
        o->owned = k != K_STATIC;
        if (g_me == root)
            for (size_t j = 0; j < n * pb; j++)
                sa[j] = byte_of(o->s, root, j);
        const int inpl = k == K_INPLACE && g_me == root;
        if (inpl) /* the root's own block stays in place in sbuf */
            memcpy(ra, sa + (size_t)g_me * pb, pb);
        guard(ra, pb);
        o->sb = sa, o->rb = ra;
        MPI_OK(MPI_Iscatter(sa, (int)pb, MPI_BYTE, inpl ? MPI_IN_PLACE : ra, (int)pb, MPI_BYTE,
                            root, w, &g_rq[g_nops++]));
    }
    if (TAKE()) { /* Iallgather */
        op *o = next("Iallgather", k, n * pb, seed + 8, -1, check_gather);
        sa = k == K_STATIC ? st_a : area(K_MALLOC, 0, pb);
        ra = k == K_STATIC ? st_b : area(K_MALLOC, 1, n * pb);
        o->owned = k != K_STATIC;
        unsigned char *mine = k == K_INPLACE ? ra + (size_t)g_me * pb : sa;
        for (size_t j = 0; j < pb; j++)
            mine[j] = byte_of(o->s, g_me, j);
        guard(ra, n * pb);
        o->sb = sa, o->rb = ra;
        MPI_OK(MPI_Iallgather(k == K_INPLACE ? MPI_IN_PLACE : sa, (int)pb, MPI_BYTE, ra, (int)pb,
                              MPI_BYTE, w, &g_rq[g_nops++]));
    }
    if (TAKE()) { /* Ialltoall */
        op *o = next("Ialltoall", k, n * pb, seed + 9, -1, check_alltoall);
        sa = k == K_STATIC ? st_a : area(K_MALLOC, 0, n * pb);
        ra = k == K_STATIC ? st_b : area(K_MALLOC, 1, n * pb);
        o->owned = k != K_STATIC;
        unsigned char *mine = k == K_INPLACE ? ra : sa;
        for (size_t j = 0; j < n * pb; j++)
            mine[j] = byte_of(o->s, g_me, j);
        guard(ra, n * pb);
        o->sb = sa, o->rb = ra;
        MPI_OK(MPI_Ialltoall(k == K_INPLACE ? MPI_IN_PLACE : sa, (int)pb, MPI_BYTE, ra, (int)pb,
                             MPI_BYTE, w, &g_rq[g_nops++]));
    }
    for (int max = 0; max < 2; max++)
        if (TAKE() && !(k == K_INPLACE && pb > MIB && g_n > 2 && g_mpich_inplace_rs_bug)) {
            /* Ireduce_scatter_block SUM, Ireduce_scatter MAX */
            int counts[64];
            size_t first = 0, in = 0;
            for (int m = 0; m < g_n && m < 64; m++) {
                counts[m] = (int)(max ? rs_count(c, m) : c);
                if (m == g_me)
                    first = in;
                in += (size_t)counts[m];
            }
            const size_t cnt = (size_t)counts[g_me];
            const size_t rbytes = k == K_INPLACE ? in * 4 : cnt * 4;
            op *o = next(max ? "Ireduce_scatter" : "Ireduce_scatter_block", k, rbytes,
                         seed + 10 + (uint64_t)max, max, check_rscatter);
            o->first = first, o->cnt = cnt, o->in = in;
            sa = k == K_STATIC ? st_a : area(K_MALLOC, 0, in * 4);
            ra = k == K_STATIC ? st_b : area(K_MALLOC, 1, rbytes);
            o->owned = k != K_STATIC;
            unsigned char *mine = k == K_INPLACE ? ra : sa;
            for (size_t j = 0; j < in; j++)
                ((int *)mine)[j] = int_of(o->s, g_me, j);
            if (k != K_INPLACE)
                memset(ra, 0xEE, rbytes);
            guard(ra, rbytes);
            o->sb = sa, o->rb = ra;
            void *sp = k == K_INPLACE ? MPI_IN_PLACE : sa;
            if (max)
                MPI_OK(MPI_Ireduce_scatter(sp, ra, counts, MPI_INT, MPI_MAX, w, &g_rq[g_nops++]));
            else
                MPI_OK(MPI_Ireduce_scatter_block(sp, ra, (int)c, MPI_INT, MPI_SUM, w,
                                                 &g_rq[g_nops++]));
        }
#undef TAKE
}

static void round_of(enum kind k, size_t pb, uint64_t seed, int only)
{
    g_h = 0;
    post_round(k, pb, seed, only);
    MPI_OK(MPI_Waitall(g_nops, g_rq, MPI_STATUSES_IGNORE));
    g_calls += g_nops;
    int good = 0;
    for (int i = 0; i < g_nops; i++) {
        op *o = &g_ops[i];
        int ok = g_rq[i] == MPI_REQUEST_NULL && o->check(o);
        CHECK(ok, "%s, %s buffers, %zu bytes per block, root %d: wrong", o->what, KNAME[k], pb,
              o->root);
        good += ok;
        if (o->owned) {
            free(o->sb);
            free(o->rb);
        }
    }
    out("%s buffers, %zu bytes per block, seed %llu: %d of %d right, checksum %016llx", KNAME[k],
        pb, (unsigned long long)seed, good, g_nops, (unsigned long long)g_h);
}

/* A large Ibcast of a strided vector type freed before the Wait. */
static void derived(size_t blocks, int root)
{
    enum { VL = 3, VS = 5 };
    const size_t ints = blocks * VS;
    int *v = must(malloc(ints * 4 + 8), "malloc", ints * 4);
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector((int)blocks, VL, VS, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    for (size_t i = 0; i < ints; i++)
        v[i] = g_me == root ? (int)mix64(99 + (uint64_t)root, i) : -1;
    MPI_Request rq;
    MPI_OK(MPI_Ibcast(v, 1, vec, root, MPI_COMM_WORLD, &rq));
    g_calls++;
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int ok = 1;
    uint64_t h = 0;
    for (size_t i = 0; i < ints; i++) {
        const int in = i % VS < VL && i < (blocks - 1) * VS + VL;
        const int want = in || g_me == root ? (int)mix64(99 + (uint64_t)root, i) : -1;
        ok &= v[i] == want;
        if (in)
            h = mix64(h, (uint32_t)v[i]);
    }
    CHECK(ok, "Ibcast of vector(%zu x 3 ints, stride 5) from %d: wrong", blocks, root);
    out("Ibcast of vector(%zu x 3 ints, stride 5), type freed before the Wait, root %d: %s, "
        "checksum %016llx", blocks, root, ok ? "right" : "WRONG", (unsigned long long)h);
    free(v);
}

/* Large Ibcasts back to back (the sizes from which a root copies blocks
 * for its readers: 512 KiB, 700001 B and 1 MiB + 3 at odd addresses,
 * 3 MiB + 5), four pending at once with an Iallreduce among them, roots
 * rotating, completed by one Waitall or by Waits in reverse order: a
 * reader's job lives in its cell of the broadcast's step, which the next
 * broadcasts reuse as soon as every member is done. */
static void back_to_back(int rounds)
{
    static const size_t sz[4] = {512 * 1024, 700001, MIB + 3, 3 * MIB + 5};
    unsigned char *b[4];
    for (int k = 0; k < 4; k++)
        b[k] = must(malloc(sz[k] + 9), "malloc", sz[k] + 9);
    int good = 0, all = 0;
    uint64_t h = 0;
    for (int it = 0; it < rounds; it++) {
        MPI_Request rq[5];
        int x = g_me + it, y = -1;
        for (int k = 0; k < 4; k++) {
            const int root = (it + k) % g_n;
            unsigned char *p = b[k] + (k & 1);
            for (size_t j = 0; j < sz[k]; j++)
                p[j] = g_me == root ? byte_of((uint64_t)(it * 4 + k), root, j) : 0xEE;
            guard(p, sz[k]);
            MPI_OK(MPI_Ibcast(p, (int)sz[k], MPI_BYTE, root, MPI_COMM_WORLD, &rq[k]));
            if (k == 1)
                MPI_OK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[4]));
        }
        g_calls += 5;
        if (it % 2 == 0)
            MPI_OK(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
        else
            for (int k = 4; k >= 0; k--)
                MPI_OK(MPI_Wait(&rq[k], MPI_STATUS_IGNORE));
        for (int k = 0; k < 4; k++) {
            const int root = (it + k) % g_n;
            const unsigned char *p = b[k] + (k & 1);
            int ok = guard_ok(p, sz[k]);
            for (size_t j = 0; j < sz[k] && ok; j++)
                ok = p[j] == byte_of((uint64_t)(it * 4 + k), root, j);
            CHECK(ok, "back-to-back Ibcast %d of %zu bytes from %d: wrong", it, sz[k], root);
            h = hash_bytes(h, p, sz[k]);
            good += ok;
            all++;
        }
        const int want = g_n * it + g_n * (g_n - 1) / 2;
        CHECK(y == want, "back-to-back Iallreduce %d: %d, not %d", it, y, want);
    }
    for (int k = 0; k < 4; k++)
        free(b[k]);
    out("back-to-back Ibcasts of 512 KiB to 3 MiB + 5: %d of %d right, checksum %016llx", good,
        all, (unsigned long long)h);
}

int main(int argc, char **argv)
{
    coll_init(&argc, &argv, &g_me, &g_n);
    CHECK(g_n <= 4, "at most 4 ranks (the static buffers), not %d", g_n);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_OK(MPI_Get_library_version(lib, &len));
    g_mpich_inplace_rs_bug = strstr(lib, "MPICH") || strstr(lib, "Intel");
    /* Static buffers: one operation at a time, the eleven in turn. */
    static const size_t pbs[] = {70001, HUGE_PB};
    for (int z = 0; z < 2; z++) {
        section(z ? "huge" : "mid");
        for (int k = K_MALLOC; k <= K_INPLACE; k++)
            for (int only = k == K_STATIC ? 0 : -1; only < (k == K_STATIC ? 11 : 0); only++)
                round_of((enum kind)k, pbs[z], (uint64_t)(1000 * z + 10 * k + only + 1), only);
    }
    section("derived");
    for (int root = 0; root < g_n; root++) {
        derived(1000, root);           /* 12 KB packed */
        derived(200001, root);         /* 2.4 MB packed */
    }
    section("back to back");
    back_to_back(12);
    out("nonblocking calls per rank: %d", g_calls);
    return coll_finish("nblarge", g_me, g_n);
}

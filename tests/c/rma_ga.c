/*
 * rma_ga.c - one-sided conformance: a Global Arrays-style program.
 *
 * Why: real one-sided applications (Global Arrays, NWChem, ...) keep a
 * distributed 2-D array in one window per rank and move rectangular
 * patches that span several owners, each owner's piece described by a
 * derived datatype on both sides. heapmpi must move exactly those bytes,
 * honour the datatypes (strides, subarrays, offsets), make accumulates
 * atomic per element, and complete operations at fences, unlocks, flushes
 * and request waits. Every rank checks everything it reads against a
 * reference that it computes alone.
 *
 * The array: NR x NC = 300 x 257 doubles, distributed over a pr x pc grid
 * of ranks (1x1, 1x2, 1x3, 2x2, ...: pc >= pr, pr * pc = size) in uneven
 * row and column blocks (block k gets a share of weight k+2). Block (i, j)
 * belongs to rank i*pc + j and is its window (MPI_Win_allocate,
 * disp_unit 8, row-major, followed by GUARD guard doubles that nothing may
 * touch).
 *
 * Every rank draws its operations from its own generator (seeded from its
 * rank, the round and the phase), so every rank can replay every rank's
 * operations and keep the whole array as it must be (`ref`). All values
 * are small multiples of 1/4, so every sum is exact and accumulates give
 * the same bits in any order.
 *
 * ROUNDS rounds of three phases:
 *  P. put (active target): PUT_STEPS steps of { fence; one MPI_Put of a
 *     random patch inside this rank's writer stripe (the rows are cut into
 *     `size` stripes unlike the owner blocks, so the stripes of different
 *     ranks never overlap but each spans several owners); fence; one
 *     MPI_Get of a random patch anywhere; fence; the patch must equal ref }.
 *  A. accumulate (passive target; even rounds lock_all with a flush_all
 *     every 4 operations, odd rounds MPI_Win_lock(MPI_LOCK_SHARED) and
 *     unlock around every owner's piece): ACC_OPS operations on random
 *     patches anywhere, overlapping other ranks' concurrently: mostly
 *     MPI_Accumulate(MPI_SUM) of small non-negative integers times a scale
 *     (1/4 .. 3), some MPI_Get_accumulate(MPI_SUM) and some
 *     MPI_Get_accumulate(MPI_NO_OP) reads. The increments are never
 *     negative, so every element a fetch returns must lie between its value
 *     before the phase and after it (checked at the end of the phase).
 *     Every operation has its own origin and result buffers, untouched
 *     until the phase ends (under lock_all up to 4 operations are in
 *     flight; reusing an origin buffer before the flush is erroneous, and
 *     stock MPICH then really sends the new contents); a result buffer's
 *     layout is the other origin variant (see below).
 *  G. get (passive target): GET_OPS random patches anywhere, alternately
 *     through MPI_Win_lock(MPI_LOCK_SHARED) + MPI_Get + unlock per owner,
 *     and through lock_all + MPI_Rget per owner + MPI_Waitall + unlock_all;
 *     each patch must equal ref.
 * A patch is cut at the owner boundaries; each piece goes to its owner with
 * an origin datatype that is either a subarray of the whole patch buffer or
 * a vector starting at the piece's offset in it, and a target datatype that
 * is either a vector at the piece's displacement or a subarray of the whole
 * block at displacement 0 (chosen per piece by the operation's index). Every
 * datatype is freed right after the call that uses it, before the
 * operation completes.
 *
 * A barrier follows the last fence of phase P: no rank locks a window
 * while its owner may still be inside that fence (MPI-3.1 11.5.3).
 *
 * At the end every rank gets every block (lock_all + MPI_Get), and the
 * whole array must equal ref; every owner checks its guards.
 *
 * Counts (per rank, from the number of ranks only: the same under every
 * MPI): ROUNDS 6, PUT_STEPS 4; ACC_OPS 200 and GET_OPS 40 at 1 and 2
 * ranks, 32 and 12 at more (the runs of more than two ranks are
 * oversubscribed on two cores, where stock MPICH's passive-target progress
 * costs milliseconds per operation). Stock times on the 2-core machine:
 * Open MPI 0.5 s (1 rank), 1.0 s (2), 0.9 s (4); MPICH 0.3 s, 0.5-3 s,
 * 10-11 s.
 *
 * Output (stdout, rank 0 prints every rank's report in rank order): per
 * rank and round its operation counts and a checksum of ref after each
 * phase (computed locally, so the same under any MPI); the checksum and
 * exact sum of the final array; then "rank N: ga ok". Exit status 0 on
 * success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include "coll_util.h"

#include <inttypes.h>

#define NR 300
#define NC 257
#define GUARD 8
#define ROUNDS 6
#define PUT_STEPS 4

static int g_size;
static int acc_ops, get_ops;

/* the process grid and the block boundaries */
static int gpr, gpc;
static int rlo[NR + 1], clo[NC + 1];    /* block i: rows rlo[i] .. rlo[i+1] */
static int slo[NR + 1];                 /* writer stripe k: rows slo[k] .. */

static MPI_Win win;
static double *mine;        /* this rank's block + guards */
static int my_rows, my_cols;
static double *ref;         /* the whole array as it must be */

typedef struct {
    int r0, c0, h, w;
} patch_t;

typedef struct {
    int owner, bi, bj;
    int r0, c0, h, w;       /* global coordinates */
} piece_t;

/* ---- generator ---- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rng_below(uint64_t *s, int n)
{
    return (int)(rng_next(s) % (uint64_t)n);
}

static uint64_t seed_of(int rank, int round, int phase, int step)
{
    return seed6(0x6a, (uint64_t)rank, (uint64_t)round, (uint64_t)phase,
                 (uint64_t)step, 0);
}

/* ---- layout ---- */

/* Boundaries of p uneven parts of n: part k has weight k+2 (rev: p-k+1). */
static void split(int n, int p, int rev, int *lo)
{
    int total = 0;
    for (int k = 0; k < p; k++)
        total += rev ? p - k + 1 : k + 2;
    int acc = 0;
    for (int k = 0; k <= p; k++) {
        lo[k] = (int)((int64_t)n * acc / total);
        if (k < p)
            acc += rev ? p - k + 1 : k + 2;
    }
}

static void layout(int size)
{
    gpr = 1;
    for (int d = 1; d * d <= size; d++)
        if (size % d == 0)
            gpr = d;
    gpc = size / gpr;
    split(NR, gpr, 0, rlo);
    split(NC, gpc, 0, clo);
    split(NR, size, 1, slo);
}

static int block_rows(int bi)
{
    return rlo[bi + 1] - rlo[bi];
}

static int block_cols(int bj)
{
    return clo[bj + 1] - clo[bj];
}

/* The pieces of patch p, one per owner it touches; their number. */
static int pieces(const patch_t *p, piece_t *out)
{
    int n = 0;
    for (int bi = 0; bi < gpr; bi++) {
        int a = p->r0 > rlo[bi] ? p->r0 : rlo[bi];
        int b = p->r0 + p->h < rlo[bi + 1] ? p->r0 + p->h : rlo[bi + 1];
        if (a >= b)
            continue;
        for (int bj = 0; bj < gpc; bj++) {
            int c = p->c0 > clo[bj] ? p->c0 : clo[bj];
            int d = p->c0 + p->w < clo[bj + 1] ? p->c0 + p->w : clo[bj + 1];
            if (c >= d)
                continue;
            piece_t q = {bi * gpc + bj, bi, bj, a, c, b - a, d - c};
            out[n++] = q;
        }
    }
    return n;
}

/* The datatypes of piece q of patch p (buffer buf, h x w row-major):
 * origin address and type, target displacement and type; `variant` picks
 * subarray or vector on each side. The caller frees both types. */
static void piece_types(const patch_t *p, const piece_t *q, double *buf,
                        int variant, void **obase, MPI_Datatype *ot,
                        MPI_Aint *tdisp, MPI_Datatype *tt)
{
    int or0 = q->r0 - p->r0, oc0 = q->c0 - p->c0;
    if (variant & 1) {
        int sizes[2] = {p->h, p->w}, sub[2] = {q->h, q->w},
            st[2] = {or0, oc0};
        MPI_OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C,
                                        MPI_DOUBLE, ot));
        *obase = buf;
    } else {
        MPI_OK(MPI_Type_vector(q->h, q->w, p->w, MPI_DOUBLE, ot));
        *obase = buf + (size_t)or0 * p->w + oc0;
    }
    MPI_OK(MPI_Type_commit(ot));
    int bc = block_cols(q->bj);
    int tr0 = q->r0 - rlo[q->bi], tc0 = q->c0 - clo[q->bj];
    if (variant & 2) {
        int sizes[2] = {block_rows(q->bi), bc}, sub[2] = {q->h, q->w},
            st[2] = {tr0, tc0};
        MPI_OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C,
                                        MPI_DOUBLE, tt));
        *tdisp = 0;
    } else {
        MPI_OK(MPI_Type_vector(q->h, q->w, bc, MPI_DOUBLE, tt));
        *tdisp = (MPI_Aint)tr0 * bc + tc0;
    }
    MPI_OK(MPI_Type_commit(tt));
}

static void free_types(MPI_Datatype *a, MPI_Datatype *b)
{
    MPI_OK(MPI_Type_free(a));
    MPI_OK(MPI_Type_free(b));
}

/* ---- patches and values ---- */

static patch_t random_patch(uint64_t *s, int row_lo, int row_hi)
{
    patch_t p;
    int rows = row_hi - row_lo;
    int hmax = rows < 140 ? rows : 140;
    p.h = 1 + rng_below(s, hmax);
    p.w = 1 + rng_below(s, 150);
    p.r0 = row_lo + rng_below(s, rows - p.h + 1);
    p.c0 = rng_below(s, NC - p.w + 1);
    return p;
}

static double *ref_at(int r, int c)
{
    return &ref[(size_t)r * NC + c];
}

/* Compares the h x w buffer of patch p with ref; counts a failure. */
static int check_patch(const patch_t *p, const double *buf, const char *what,
                       int step)
{
    for (int r = 0; r < p->h; r++)
        for (int c = 0; c < p->w; c++) {
            double g = buf[(size_t)r * p->w + c];
            double e = *ref_at(p->r0 + r, p->c0 + c);
            if (memcmp(&g, &e, 8) != 0) {
                CHECK(0, "%s %d (patch %dx%d at %d,%d): element (%d,%d) is "
                      "%.17g, expected %.17g", what, step, p->h, p->w, p->r0,
                      p->c0, p->r0 + r, p->c0 + c, g, e);
                return 0;
            }
        }
    return 1;
}

static uint64_t ref_hash(void)
{
    return hash_bytes(0x9a, ref, sizeof(double) * NR * NC);
}

/* ---- phase P: puts between fences ---- */

/* The put of rank r in step k of round `round`: patch and values. */
static patch_t gen_put(int r, int round, int k, double *vals)
{
    uint64_t s = seed_of(r, round, 1, k);
    patch_t p = random_patch(&s, slo[r], slo[r + 1]);
    for (int i = 0; i < p.h * p.w; i++)
        vals[i] = (rng_below(&s, 2001) - 1000) * 0.25;
    return p;
}

static void phase_put(int rank, int round, int *nput, int *nget)
{
    double *vals = must(malloc(sizeof(double) * NR * NC), "malloc", 0);
    double *got = must(malloc(sizeof(double) * NR * NC), "malloc", 0);
    piece_t q[64];
    for (int k = 0; k < PUT_STEPS; k++) {
        MPI_OK(MPI_Win_fence(k == 0 ? MPI_MODE_NOPRECEDE : 0, win));
        patch_t p = gen_put(rank, round, k, vals);
        int n = pieces(&p, q);
        for (int i = 0; i < n; i++) {
            void *ob;
            MPI_Datatype ot, tt;
            MPI_Aint td;
            piece_types(&p, &q[i], vals, k + i, &ob, &ot, &td, &tt);
            MPI_OK(MPI_Put(ob, 1, ot, q[i].owner, td, 1, tt, win));
            free_types(&ot, &tt);
        }
        (*nput)++;
        MPI_OK(MPI_Win_fence(0, win));
        /* every rank's put of this step, into ref (the stripes are
         * disjoint, so their order does not matter) */
        for (int r = 0; r < g_size; r++) {
            patch_t pr = gen_put(r, round, k, got);
            for (int a = 0; a < pr.h; a++)
                memcpy(ref_at(pr.r0 + a, pr.c0), got + (size_t)a * pr.w,
                       sizeof(double) * pr.w);
        }
        uint64_t s = seed_of(rank, round, 2, k);
        patch_t g = random_patch(&s, 0, NR);
        memset(got, 0xff, sizeof(double) * g.h * g.w);
        n = pieces(&g, q);
        for (int i = 0; i < n; i++) {
            void *ob;
            MPI_Datatype ot, tt;
            MPI_Aint td;
            piece_types(&g, &q[i], got, k + i + 1, &ob, &ot, &td, &tt);
            MPI_OK(MPI_Get(ob, 1, ot, q[i].owner, td, 1, tt, win));
            free_types(&ot, &tt);
        }
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
            check_patch(&g, got, "get after fence", k);
        (*nget)++;
    }
    free(vals);
    free(got);
    /* a window must not be locked while its owner is still exposing it in
     * a fence epoch (MPI-3.1 11.5.3): every rank leaves the last fence
     * before anyone locks */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---- phase A: concurrent accumulates ---- */

enum { OP_ACC, OP_GACC, OP_READ };

typedef struct {
    patch_t p;
    int kind;
    double *vals;   /* h x w: the increments */
} accop_t;

/* Operation j of rank r in round `round` (vals: room for NR*NC). */
static accop_t gen_acc(int r, int round, int j, double *vals)
{
    static const double scales[5] = {0.25, 0.5, 1.0, 2.0, 3.0};
    uint64_t s = seed_of(r, round, 3, j);
    accop_t o;
    o.p = random_patch(&s, 0, NR);
    int k = rng_below(&s, 8);
    o.kind = k == 0 ? OP_READ : k <= 2 ? OP_GACC : OP_ACC;
    double sc = scales[rng_below(&s, 5)];
    for (int i = 0; i < o.p.h * o.p.w; i++)
        vals[i] = rng_below(&s, 9) * sc;
    o.vals = vals;
    return o;
}

static void phase_acc(int rank, int round, int *nacc, int *ngacc, int *nread)
{
    int per_owner = round % 2 == 1;
    double *vals = must(malloc(sizeof(double) * NR * NC), "malloc", 0);
    double **res = must(calloc((size_t)acc_ops, sizeof *res), "calloc", 0);
    patch_t *rp = must(calloc((size_t)acc_ops, sizeof *rp), "calloc", 0);
    double **org = must(calloc((size_t)acc_ops, sizeof *org), "calloc", 0);
    double *before = must(malloc(sizeof(double) * NR * NC), "malloc", 0);
    memcpy(before, ref, sizeof(double) * NR * NC);
    piece_t q[64];
    if (!per_owner)
        MPI_OK(MPI_Win_lock_all(0, win));
    for (int j = 0; j < acc_ops; j++) {
        accop_t o = gen_acc(rank, round, j, vals);
        patch_t *p = &o.p;
        double *r = NULL;
        /* the origin buffer must stay unchanged until the operation
         * completes (at the next flush_all or unlock): one per operation */
        size_t vb = sizeof(double) * (size_t)p->h * p->w;
        o.vals = org[j] = must(malloc(vb), "malloc", vb);
        memcpy(o.vals, vals, vb);
        if (o.kind != OP_ACC) {
            size_t nb = sizeof(double) * (size_t)p->h * p->w;
            r = res[j] = must(malloc(nb), "malloc", nb);
            memset(r, 0xff, nb);
            rp[j] = *p;
        }
        int n = pieces(p, q);
        for (int i = 0; i < n; i++) {
            int t = q[i].owner;
            void *ob, *rb;
            MPI_Datatype ot, tt, rt, tt2;
            MPI_Aint td, td2;
            piece_types(p, &q[i], o.vals, j + i, &ob, &ot, &td, &tt);
            if (per_owner)
                MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
            if (o.kind == OP_ACC) {
                MPI_OK(MPI_Accumulate(ob, 1, ot, t, td, 1, tt, MPI_SUM, win));
            } else {
                /* the result buffer's layout: the other origin variant */
                piece_types(p, &q[i], r, j + i + 1, &rb, &rt, &td2, &tt2);
                MPI_OK(MPI_Type_free(&tt2));
                if (o.kind == OP_GACC)
                    MPI_OK(MPI_Get_accumulate(ob, 1, ot, rb, 1, rt, t, td, 1,
                                              tt, MPI_SUM, win));
                else
                    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, rb, 1, rt,
                                              t, td, 1, tt, MPI_NO_OP, win));
                MPI_OK(MPI_Type_free(&rt));
            }
            free_types(&ot, &tt);
            if (per_owner)
                MPI_OK(MPI_Win_unlock(t, win));
        }
        if (!per_owner && j % 4 == 3)
            MPI_OK(MPI_Win_flush_all(win));
        *(o.kind == OP_ACC ? nacc : o.kind == OP_GACC ? ngacc : nread) += 1;
    }
    if (!per_owner)
        MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int j = 0; j < acc_ops; j++)
        free(org[j]);
    free(org);
    /* ref after the phase: every rank's increments */
    for (int r = 0; r < g_size; r++)
        for (int j = 0; j < acc_ops; j++) {
            accop_t o = gen_acc(r, round, j, vals);
            if (o.kind == OP_READ)
                continue;
            for (int a = 0; a < o.p.h; a++)
                for (int b = 0; b < o.p.w; b++)
                    *ref_at(o.p.r0 + a, o.p.c0 + b) +=
                        o.vals[(size_t)a * o.p.w + b];
        }
    /* every fetched element lies between its values before and after */
    int bad = 0;
    for (int j = 0; j < acc_ops; j++) {
        if (res[j] == NULL)
            continue;
        patch_t *p = &rp[j];
        for (int a = 0; a < p->h && !bad; a++)
            for (int b = 0; b < p->w; b++) {
                size_t g = (size_t)(p->r0 + a) * NC + p->c0 + b;
                double v = res[j][(size_t)a * p->w + b];
                if (!(v >= before[g] && v <= ref[g])) {
                    CHECK(0, "fetch %d: element (%d,%d) is %.17g, outside "
                          "[%.17g, %.17g]", j, p->r0 + a, p->c0 + b, v,
                          before[g], ref[g]);
                    bad = 1;
                    break;
                }
            }
        free(res[j]);
    }
    free(res);
    free(rp);
    free(before);
    free(vals);
}

/* ---- phase G: passive-target gets ---- */

static void phase_get(int rank, int round, int *nget)
{
    double *got = must(malloc(sizeof(double) * NR * NC), "malloc", 0);
    piece_t q[64];
    MPI_Request rq[64];
    for (int j = 0; j < get_ops; j++) {
        uint64_t s = seed_of(rank, round, 4, j);
        patch_t g = random_patch(&s, 0, NR);
        memset(got, 0xff, sizeof(double) * g.h * g.w);
        int n = pieces(&g, q);
        int rget = j % 2 == 1;
        if (rget)
            MPI_OK(MPI_Win_lock_all(0, win));
        for (int i = 0; i < n; i++) {
            void *ob;
            MPI_Datatype ot, tt;
            MPI_Aint td;
            piece_types(&g, &q[i], got, j + i, &ob, &ot, &td, &tt);
            if (rget) {
                MPI_OK(MPI_Rget(ob, 1, ot, q[i].owner, td, 1, tt, win,
                                &rq[i]));
            } else {
                MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, q[i].owner, 0, win));
                MPI_OK(MPI_Get(ob, 1, ot, q[i].owner, td, 1, tt, win));
                MPI_OK(MPI_Win_unlock(q[i].owner, win));
            }
            free_types(&ot, &tt);
        }
        if (rget) {
            MPI_OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
            MPI_OK(MPI_Win_unlock_all(win));
        }
        check_patch(&g, got, rget ? "Rget" : "locked get", j);
        (*nget)++;
    }
    free(got);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---- the end: the whole array, the guards ---- */

static void final_check(int rank)
{
    section("final");
    double *all = must(malloc(sizeof(double) * NR * NC), "malloc", 0);
    memset(all, 0xff, sizeof(double) * NR * NC);
    patch_t whole = {0, 0, NR, NC};
    piece_t q[64];
    int n = pieces(&whole, q);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < n; i++) {
        void *ob;
        MPI_Datatype ot, tt;
        MPI_Aint td;
        piece_types(&whole, &q[i], all, i + rank, &ob, &ot, &td, &tt);
        MPI_OK(MPI_Get(ob, 1, ot, q[i].owner, td, 1, tt, win));
        free_types(&ot, &tt);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    int same = check_patch(&whole, all, "final array", 0);
    free(all);
    /* the guards of this rank's block */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    int gbad = 0;
    for (int i = 0; i < GUARD; i++) {
        double e = -(double)(i + 1) * 1e300;
        gbad |= memcmp(&mine[(size_t)my_rows * my_cols + i], &e, 8) != 0;
    }
    MPI_OK(MPI_Win_unlock(rank, win));
    CHECK(!gbad, "a guard after the block changed");
    double sum = 0;
    for (size_t i = 0; i < (size_t)NR * NC; i++)
        sum += ref[i];
    out("final: array %s, guards %s; checksum %016" PRIx64 ", sum %.2f",
        same ? "equal to the reference" : "DIFFERENT",
        gbad ? "OVERWRITTEN" : "intact", ref_hash(), sum);
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_size = size;
    acc_ops = size <= 2 ? 200 : 32;
    get_ops = size <= 2 ? 40 : 12;
    layout(size);
    int bi = rank / gpc, bj = rank % gpc;
    my_rows = block_rows(bi);
    my_cols = block_cols(bj);
    section("window");
    size_t nb = sizeof(double) * ((size_t)my_rows * my_cols + GUARD);
    MPI_OK(MPI_Win_allocate((MPI_Aint)nb, 8, MPI_INFO_NULL, MPI_COMM_WORLD,
                            &mine, &win));
    /* initial contents: a function of the global position */
    ref = must(malloc(sizeof(double) * NR * NC), "malloc", 0);
    for (int r = 0; r < NR; r++)
        for (int c = 0; c < NC; c++)
            *ref_at(r, c) = (double)((r * 31 + c * 7) % 1000) - 500.0;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int r = 0; r < my_rows; r++)
        memcpy(&mine[(size_t)r * my_cols], ref_at(rlo[bi] + r, clo[bj]),
               sizeof(double) * my_cols);
    for (int i = 0; i < GUARD; i++)
        mine[(size_t)my_rows * my_cols + i] = -(double)(i + 1) * 1e300;
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    out("grid %dx%d, block %dx%d at (%d,%d), writer stripe rows %d..%d", gpr,
        gpc, my_rows, my_cols, rlo[bi], clo[bj], slo[rank], slo[rank + 1]);
    for (int round = 0; round < ROUNDS; round++) {
        int nput = 0, nget = 0, nacc = 0, ngacc = 0, nread = 0, npget = 0;
        section("P put");
        phase_put(rank, round, &nput, &nget);
        uint64_t hp = ref_hash();
        section("A accumulate");
        phase_acc(rank, round, &nacc, &ngacc, &nread);
        uint64_t ha = ref_hash();
        section("G get");
        phase_get(rank, round, &npget);
        out("round %d: %d puts + %d gets between fences (ref %016" PRIx64
            "); %s: %d accumulates, %d get_accumulates, %d no_op reads "
            "(ref %016" PRIx64 "); %d passive gets",
            round, nput, nget, hp, round % 2 ? "locks per owner" : "lock_all",
            nacc, ngacc, nread, ha, npget);
    }
    final_check(rank);
    section("free");
    MPI_OK(MPI_Win_free(&win));
    free(ref);
    return coll_finish("ga", rank, size);
}

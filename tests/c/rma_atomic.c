/*
 * rma_atomic.c - one-sided conformance: atomicity of the accumulate family
 * and mutual exclusion of passive-target locks, under contention.
 *
 * Why: heapmpi runs one-sided operations on node-local windows as direct
 * loads, stores and shared-memory atomics, and passive-target locks as lock
 * words driven by atomics. Lost updates, torn 64-bit words, a lock that
 * lets two writers in, or a shared lock granted while a writer is inside
 * all show up here as wrong totals, duplicate fetched values or a broken
 * invariant.
 *
 * Two windows on every rank: `wa` from MPI_Win_allocate (disp_unit 8,
 * 64 int64 slots) and `wc` from MPI_Win_create over MPI_Alloc_mem memory
 * (disp_unit 4, 256 int32 units). The contended locations are on rank 0
 * (wa) and on the last rank (wc); every other word of every window holds a
 * guard value that must survive.
 *
 * Sections (every rank does the same number of operations; C is the
 * per-rank count of the section, from counts_for(), see below):
 *  A. fop-int64 (wa, lock_all + flush after each operation): C x
 *     Fetch_and_op(SUM, +1, MPI_INT64_T) on rank 0's slot 0. The values
 *     fetched by one rank strictly increase, and the values fetched by all
 *     ranks together are exactly 0 .. size*C-1 (a bitmap, OR-reduced).
 *     Every 4th operation also an Accumulate(SUM, MPI_INT64_T) of
 *     0xffffffff on slot 1 (carries between the 32-bit halves: a torn
 *     64-bit add loses them); every 64th a Get_accumulate(MPI_NO_OP) read
 *     of slot 0, which must be above this rank's last fetched value and not
 *     below its previous read.
 *  B. fop-int32 (wc, Win_create over Alloc_mem, lock_all + flush): the
 *     same with MPI_INT32_T on the last rank's unit 3 (bitmap as in A), and
 *     every 4th operation Fetch_and_op(SUM) of 1001 on unit 5.
 *  C. acc-shared: C x Accumulate(SUM) of rank+1, in batches of 10 under one
 *     MPI_Win_lock(MPI_LOCK_SHARED): even batches MPI_INT64_T on rank 0's
 *     wa slot 2, odd batches MPI_INT32_T on the last rank's wc unit 8.
 *  D. double (wa, lock_all): C x Accumulate(SUM) of 3 doubles {0.5, -0.25,
 *     (rank+1)/8} onto slots 4..6 and Fetch_and_op(SUM) of 1.5 on slot 7
 *     (flush after each), all values exactly representable so that the
 *     totals are exact; the fetched values are distinct multiples of 1.5
 *     (bitmap).
 *  E. max-min (wa, lock_all): C x Accumulate MAX and MIN of pseudo-random
 *     int64 values onto slots 8 and 9, the same values halved as doubles
 *     onto slots 10 and 11, and Fetch_and_op(MAX) onto slot 12 (flush after
 *     each): the fetched running maxima never decrease on one rank; every
 *     final value is the extreme of all ranks' values (each rank replays
 *     every rank's sequence).
 *  F. swap (lock_all): C x Fetch_and_op(MPI_REPLACE) on rank 0's wa slot
 *     13 (int64) swapping in this rank's unique tokens rank*C+i+1, and
 *     Get_accumulate(MPI_REPLACE) of the same token as MPI_INT32_T on the
 *     last rank's wc unit 14: the values fetched by all ranks plus the
 *     final value are exactly 0 .. size*C, each once (a swap chain loses
 *     or duplicates no token). Every 16th step a Fetch_and_op(MPI_NO_OP)
 *     read of slot 13, which must be a token.
 *  H. cas-lock: spin locks on lock words of rank 0's wa (lock_all on both
 *     windows), one as MPI_INT32_T (slot 16) and one as MPI_INT64_T (slot
 *     17), taken in turn: acquire = Compare_and_swap(0 -> rank+1) + flush
 *     until it returns 0; inside, Fetch_and_op(MPI_NO_OP) of the lock word
 *     must say rank+1, then a non-atomic read-modify-write of that lock's
 *     counter on the last rank's wc (MPI_INT64_T at unit 20 or 22: Get,
 *     flush, +1, Put, flush); release (in turn every two sections) by
 *     Compare_and_swap(rank+1 -> 0), which must return rank+1, or by
 *     Accumulate(MPI_REPLACE, 0) (an atomic put: a plain MPI_Put would
 *     conflict with the concurrent Compare_and_swaps, which MPI leaves
 *     undefined). C critical sections per rank; the final counts must be
 *     exact.
 *  I. excl-lock: C x { MPI_Win_lock(MPI_LOCK_EXCLUSIVE); Get; flush; +1;
 *     Put; unlock } per rank, alternating rank 0's wa slot 24 and the last
 *     rank's wc unit 28: each final count must be exact (it would lose
 *     updates without exclusion).
 *  J. shared-excl: C steps per rank, alternating the two windows (rank 0's
 *     wa slots 32-33, the last rank's wc units 36-39 as two int64): a
 *     pseudo-random quarter of the steps are writers (exclusive lock: Get
 *     both words, flush, they must be equal; Put x+1, flush, Put y+1,
 *     unlock), the others readers (shared lock: Get x, flush, Get y,
 *     unlock: they must be equal, since no writer can be inside, and never
 *     decrease on one rank). The final words equal the number of writer
 *     steps of all ranks (replayed).
 *  K. guards: every word of both windows that no section uses still holds
 *     its guard value (each rank checks its own memory under a lock on
 *     itself).
 *
 * Stock MPI quirks worked around (the same program runs stock and under
 * heapmpi, so both get the workaround):
 *  - Open MPI 4.1 (osc/rdma over btl/vader) segfaults in a 64-bit
 *    MPI_Compare_and_swap between ranks (open-mpi/ompi#7967, #11349): at
 *    more than one rank under Open MPI section H uses only the 32-bit lock
 *    word (see cas64_ok()).
 *  - Open MPI 4.1 cannot MPI_Win_create at one rank (MPI_ERR_WIN: osc/sm
 *    only allocates, osc/rdma has no transport to self, osc/pt2pt wants
 *    MPI_THREAD_MULTIPLE): there, and only there, wc is a second
 *    MPI_Win_allocate window (see windows_create()).
 *
 * Counts (per rank, from the number of ranks only: the same under every
 * MPI, with and without heapmpi). The runs of more than two ranks are
 * oversubscribed on two cores, where stock MPICH's passive-target progress
 * costs 1-25 ms per operation (a time slice whenever the target is not
 * running), so they run far fewer operations:
 *                     1-2 ranks   3+ ranks
 *   A fop-int64          100000        120
 *   B fop-int32          100000        120
 *   C acc-shared         100000        200
 *   D double              20000        100
 *   E max-min             20000         60
 *   F swap                20000         60
 *   H cas-lock            10000         20   (critical sections)
 *   I excl-lock           20000         20
 *   J shared-excl         20000         30
 * Stock times on the 2-core machine (idle): Open MPI 0.4 s (1 rank), 1.4 s
 * (2), 0.8 s (4); MPICH 0.4 s, 1.9 s, 5-13 s. With another MPICH job
 * alongside, the 2-rank MPICH run takes 4-11 s, with outliers where a
 * single section takes tens of seconds (hence the 110 s watchdog).
 *
 * Output (stdout, rank 0 prints every rank's report in rank order): per
 * rank and section its operation counts, what was checked and the final
 * values (the same on every rank); then "rank N: atomic ok". Exit status 0 on success, 1 on a failed
 * check.
 */
#define _GNU_SOURCE
/* stock MPICH on a loaded machine (another test's job alongside) has
 * taken over 60 s here: a readable watchdog failure only well past that */
#define P2P_WATCHDOG_SECONDS 110
#include "coll_util.h"

#include <inttypes.h>

/* ---- counts ---- */

typedef struct {
    int fop;   /* A, B */
    int acc;   /* C (multiple of 20) */
    int dbl;   /* D */
    int mm;    /* E */
    int swap;  /* F */
    int cas;   /* H */
    int excl;  /* I (even) */
    int mix;   /* J */
} counts_t;

static counts_t counts_for(int size)
{
    counts_t c;
    if (size <= 2) {
        c.fop = 100000;
        c.acc = 100000;
        c.dbl = 20000;
        c.mm = 20000;
        c.swap = 20000;
        c.cas = 10000;
        c.excl = 20000;
        c.mix = 20000;
    } else {
        c.fop = 120;
        c.acc = 200;
        c.dbl = 100;
        c.mm = 60;
        c.swap = 60;
        c.cas = 20;
        c.excl = 20;
        c.mix = 30;
    }
    return c;
}

/* ---- windows and their layout ---- */

#define WA_SLOTS 64   /* int64 slots of wa (disp_unit 8) */
#define WC_UNITS 256  /* int32 units of wc (disp_unit 4) */

static int g_size;
static MPI_Win wa, wc;
static int64_t *wa_mem;  /* this rank's wa memory */
static int32_t *wc_mem;  /* this rank's wc memory (from MPI_Alloc_mem) */
static int last;         /* the last rank: owner of the wc locations */
static int wc_allocated; /* wc is a Win_allocate window (see windows_create) */

/* Slots of rank 0's wa that the sections use. */
enum {
    A_CNT = 0, A_WIDE = 1, C_I64 = 2, D_D0 = 4, D_FOP = 7, E_MAX = 8,
    E_MIN = 9, E_DMAX = 10, E_DMIN = 11, E_FMAX = 12, F_SWAP = 13,
    H_LOCK32 = 16, H_LOCK64 = 17, I_CNT = 24, J_X = 32, J_Y = 33
};
/* Units of the last rank's wc (int64 ones take two units). */
enum {
    B_CNT = 3, B_ADD = 5, C_I32 = 8, F_SWAP32 = 14, H_CNT32 = 20, H_CNT64 = 22, I_CNT32 = 28,
    J_X32 = 36, J_Y32 = 38
};

static int wa_used(int slot)
{
    switch (slot) {
    case A_CNT: case A_WIDE: case C_I64: case D_D0: case D_D0 + 1:
    case D_D0 + 2: case D_FOP: case E_MAX: case E_MIN: case E_DMAX:
    case E_DMIN: case E_FMAX: case F_SWAP: case H_LOCK32: case H_LOCK64:
    case I_CNT:
    case J_X: case J_Y:
        return 1;
    }
    return 0;
}

static int wc_used(int unit)
{
    switch (unit) {
    case B_CNT: case B_ADD: case C_I32: case F_SWAP32: case H_CNT32:
    case H_CNT32 + 1: case H_CNT64: case H_CNT64 + 1: case I_CNT32: case I_CNT32 + 1: case J_X32:
    case J_X32 + 1: case J_Y32: case J_Y32 + 1:
        return 1;
    }
    return 0;
}

static int64_t wa_guard(int rank, int slot)
{
    return (int64_t)mix64(0xa11ull + (uint64_t)rank, (uint64_t)slot);
}

static int32_t wc_guard(int rank, int unit)
{
    return (int32_t)mix64(0xc22ull + (uint64_t)rank, (uint64_t)unit);
}

/* The initial value of rank 0's used wa slots (all 0 but the extremes). */
static int64_t wa_initial(int slot)
{
    if (slot == E_MAX || slot == E_FMAX)
        return INT64_MIN;
    if (slot == E_MIN)
        return INT64_MAX;
    if (slot == E_DMAX || slot == E_DMIN) {
        double d = slot == E_DMAX ? -1e300 : 1e300;
        int64_t v;
        memcpy(&v, &d, 8);
        return v;
    }
    return 0;
}

static void windows_create(int rank)
{
    MPI_OK(MPI_Win_allocate(WA_SLOTS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD,
                            &wa_mem, &wa));
    MPI_OK(MPI_Alloc_mem(WC_UNITS * 4, MPI_INFO_NULL, &wc_mem));
    /* Win_create's memory is set before the window exists; wa's under an
     * exclusive lock on itself (the portable way to store into one's own
     * window memory). */
    for (int u = 0; u < WC_UNITS; u++)
        wc_mem[u] = rank == last && wc_used(u) ? 0 : wc_guard(rank, u);
    /* Stock Open MPI 4.1 cannot create a window over user memory in a
     * job of one rank (osc/sm only allocates, osc/rdma finds no RDMA
     * transport to the rank itself, osc/pt2pt wants MPI_THREAD_MULTIPLE:
     * MPI_ERR_WIN); there, and only there, wc becomes a second
     * Win_allocate window (said on stderr, not on stdout). */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Win_create(wc_mem, WC_UNITS * 4, 4, MPI_INFO_NULL,
                            MPI_COMM_WORLD, &wc);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    int fallback = 0;
#ifdef OPEN_MPI
    fallback = rc != MPI_SUCCESS && g_size == 1;
#endif
    if (fallback) {
        fprintf(stderr, "rank %d: note: MPI_Win_create failed (%s), as "
                "stock Open MPI 4.1 does at 1 rank; using MPI_Win_allocate\n",
                rank, mpi_errstr(rc));
        MPI_OK(MPI_Free_mem(wc_mem));
        MPI_OK(MPI_Win_allocate(WC_UNITS * 4, 4, MPI_INFO_NULL,
                                MPI_COMM_WORLD, &wc_mem, &wc));
        wc_allocated = 1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, wc));
        for (int u = 0; u < WC_UNITS; u++)
            wc_mem[u] = rank == last && wc_used(u) ? 0 : wc_guard(rank, u);
        MPI_OK(MPI_Win_unlock(rank, wc));
    } else {
        MPI_OK(rc);
    }
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, wa));
    for (int s = 0; s < WA_SLOTS; s++)
        wa_mem[s] = rank == 0 && wa_used(s) ? wa_initial(s) : wa_guard(rank, s);
    MPI_OK(MPI_Win_unlock(rank, wa));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A value of `type` at (target, disp) of win, read under a shared lock
 * (no epoch on win may be open). */
static void read_locked(MPI_Win win, int target, MPI_Aint disp,
                        MPI_Datatype type, void *v)
{
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    MPI_OK(MPI_Get(v, 1, type, target, disp, 1, type, win));
    MPI_OK(MPI_Win_unlock(target, win));
}

static int64_t read_i64(MPI_Win win, int target, MPI_Aint disp)
{
    int64_t v = 0;
    read_locked(win, target, disp, MPI_INT64_T, &v);
    return v;
}

static int32_t read_i32(MPI_Win win, int target, MPI_Aint disp)
{
    int32_t v = 0;
    read_locked(win, target, disp, MPI_INT32_T, &v);
    return v;
}

static double read_dbl(MPI_Win win, int target, MPI_Aint disp)
{
    double v = 0;
    read_locked(win, target, disp, MPI_DOUBLE, &v);
    return v;
}

/* ---- bitmaps of fetched values ---- */

typedef struct {
    uint8_t *bits;
    uint64_t n;        /* values 0 .. n-1 */
    uint64_t out;      /* values outside */
    uint64_t dup;      /* values this rank saw twice */
    uint64_t added;    /* values added by this rank */
} bitmap_t;

static bitmap_t bm_new(uint64_t n)
{
    bitmap_t b = {0};
    b.n = n;
    b.bits = must(calloc((size_t)(n + 7) / 8, 1), "calloc", (size_t)(n + 7) / 8);
    return b;
}

static void bm_add(bitmap_t *b, int64_t v)
{
    b->added++;
    if (v < 0 || (uint64_t)v >= b->n) {
        if (b->out++ == 0)
            CHECK(0, "fetched value %" PRId64 " outside 0..%" PRIu64, v,
                  b->n - 1);
        return;
    }
    uint8_t m = (uint8_t)(1u << (v & 7));
    if (b->bits[v >> 3] & m) {
        if (b->dup++ == 0)
            CHECK(0, "value %" PRId64 " fetched twice by this rank", v);
    }
    b->bits[v >> 3] |= m;
}

/* Collective: the values added by all ranks together are distinct and
 * exactly `expect` of them were added; returns 1 if so. Frees the map. */
static int bm_all_distinct(bitmap_t *b, uint64_t expect, const char *what)
{
    size_t nb = (size_t)(b->n + 7) / 8;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, b->bits, (int)nb, MPI_UNSIGNED_CHAR,
                         MPI_BOR, MPI_COMM_WORLD));
    uint64_t ones = 0;
    for (size_t i = 0; i < nb; i++)
        ones += (uint64_t)__builtin_popcount(b->bits[i]);
    uint64_t added = 0;
    MPI_OK(MPI_Allreduce(&b->added, &added, 1, MPI_UINT64_T, MPI_SUM,
                         MPI_COMM_WORLD));
    int ok = ones == expect && added == expect;
    CHECK(ok, "%s: %" PRIu64 " values added by all ranks, %" PRIu64
          " distinct ones in range, expected %" PRIu64 " of each",
          what, added, ones, expect);
    free(b->bits);
    b->bits = NULL;
    return ok;
}

/* ---- pseudo-random numbers ---- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The i-th value section E's rank r accumulates (fresh generator per
 * rank). */
static int64_t e_value(uint64_t *s)
{
    /* |v| < 2^50: exact as a double, and v/2 too */
    return (int64_t)(rng_next(s) % (1ull << 51)) - (int64_t)(1ull << 50);
}

/* Is step i of rank r in section J a writer? */
static int j_writer(uint64_t *s)
{
    return rng_next(s) % 4 == 0;
}

/* ---- sections ---- */

static void sec_fop_int64(int rank, const counts_t *c)
{
    section("A fop-int64");
    const int64_t one = 1, wide = 0xffffffffll;
    bitmap_t bm = bm_new((uint64_t)g_size * (uint64_t)c->fop);
    int64_t last_old = -1, last_read = -1;
    uint64_t bad_order = 0, bad_read = 0;
    MPI_OK(MPI_Win_lock_all(0, wa));
    for (int i = 0; i < c->fop; i++) {
        int64_t old = -1;
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, A_CNT, MPI_SUM,
                                wa));
        if (i % 4 == 0)
            MPI_OK(MPI_Accumulate(&wide, 1, MPI_INT64_T, 0, A_WIDE, 1,
                                  MPI_INT64_T, MPI_SUM, wa));
        MPI_OK(MPI_Win_flush(0, wa));
        bm_add(&bm, old);
        if (old <= last_old && bad_order++ == 0)
            CHECK(0, "op %d fetched %" PRId64 " after %" PRId64, i, old,
                  last_old);
        last_old = old;
        if (i % 64 == 63) {
            int64_t cur = -1;
            MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &cur, 1,
                                      MPI_INT64_T, 0, A_CNT, 1, MPI_INT64_T,
                                      MPI_NO_OP, wa));
            MPI_OK(MPI_Win_flush(0, wa));
            if ((cur <= last_old || cur < last_read) && bad_read++ == 0)
                CHECK(0, "NO_OP read %" PRId64 " after fetching %" PRId64
                      " and reading %" PRId64, cur, last_old, last_read);
            last_read = cur;
        }
    }
    MPI_OK(MPI_Win_unlock_all(wa));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    uint64_t total = (uint64_t)g_size * (uint64_t)c->fop;
    int distinct = bm_all_distinct(&bm, total, "fop-int64");
    int64_t cnt = read_i64(wa, 0, A_CNT), w = read_i64(wa, 0, A_WIDE);
    int64_t ew = (int64_t)g_size * ((c->fop + 3) / 4) * wide;
    CHECK(cnt == (int64_t)total, "final count %" PRId64 ", expected %" PRIu64,
          cnt, total);
    CHECK(w == ew, "final wide sum %" PRId64 ", expected %" PRId64, w, ew);
    out("fop-int64: %d Fetch_and_op, %d Accumulate, %d NO_OP reads; "
        "fetched %s, %s; count %" PRId64 ", wide sum %" PRId64,
        c->fop, (c->fop + 3) / 4, c->fop / 64,
        bad_order == 0 ? "increasing" : "NOT increasing",
        distinct ? "distinct over all ranks" : "NOT distinct", cnt, w);
    (void)rank;
}

static void sec_fop_int32(int rank, const counts_t *c)
{
    section("B fop-int32");
    const int32_t one = 1, add = 1001;
    bitmap_t bm = bm_new((uint64_t)g_size * (uint64_t)c->fop);
    int32_t last_old = -1;
    uint64_t bad_order = 0;
    MPI_OK(MPI_Win_lock_all(0, wc));
    for (int i = 0; i < c->fop; i++) {
        int32_t old = -1, old2 = -1;
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT32_T, last, B_CNT,
                                MPI_SUM, wc));
        if (i % 4 == 0)
            MPI_OK(MPI_Fetch_and_op(&add, &old2, MPI_INT32_T, last, B_ADD,
                                    MPI_SUM, wc));
        MPI_OK(MPI_Win_flush(last, wc));
        bm_add(&bm, old);
        if (old <= last_old && bad_order++ == 0)
            CHECK(0, "op %d fetched %" PRId32 " after %" PRId32, i, old,
                  last_old);
        if (i % 4 == 0 && (old2 < 0 || old2 % add != 0))
            CHECK(0, "fetched %" PRId32 " from the sum of %" PRId32 "s",
                  old2, add);
        last_old = old;
    }
    MPI_OK(MPI_Win_unlock_all(wc));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    uint64_t total = (uint64_t)g_size * (uint64_t)c->fop;
    int distinct = bm_all_distinct(&bm, total, "fop-int32");
    int32_t cnt = read_i32(wc, last, B_CNT), s = read_i32(wc, last, B_ADD);
    int32_t es = (int32_t)(g_size * ((c->fop + 3) / 4) * add);
    CHECK(cnt == (int32_t)total, "final count %" PRId32 ", expected %" PRIu64,
          cnt, total);
    CHECK(s == es, "final sum %" PRId32 ", expected %" PRId32, s, es);
    out("fop-int32: %d + %d Fetch_and_op; fetched %s, %s; count %" PRId32
        ", sum %" PRId32,
        c->fop, (c->fop + 3) / 4,
        bad_order == 0 ? "increasing" : "NOT increasing",
        distinct ? "distinct over all ranks" : "NOT distinct", cnt, s);
    (void)rank;
}

static void sec_acc_shared(int rank, const counts_t *c)
{
    section("C acc-shared");
    const int64_t v64 = rank + 1;
    const int32_t v32 = rank + 1;
    int batches = c->acc / 10;
    for (int b = 0; b < batches; b++) {
        if (b % 2 == 0) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wa));
            for (int k = 0; k < 10; k++)
                MPI_OK(MPI_Accumulate(&v64, 1, MPI_INT64_T, 0, C_I64, 1,
                                      MPI_INT64_T, MPI_SUM, wa));
            MPI_OK(MPI_Win_unlock(0, wa));
        } else {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, last, 0, wc));
            for (int k = 0; k < 10; k++)
                MPI_OK(MPI_Accumulate(&v32, 1, MPI_INT32_T, last, C_I32, 1,
                                      MPI_INT32_T, MPI_SUM, wc));
            MPI_OK(MPI_Win_unlock(last, wc));
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* sum over ranks of (rank+1) * c->acc / 2 on each */
    int64_t e = (int64_t)g_size * (g_size + 1) / 2 * (c->acc / 2);
    int64_t s64 = read_i64(wa, 0, C_I64);
    int32_t s32 = read_i32(wc, last, C_I32);
    CHECK(s64 == e, "int64 sum %" PRId64 ", expected %" PRId64, s64, e);
    CHECK(s32 == (int32_t)e, "int32 sum %" PRId32 ", expected %" PRId64, s32,
          e);
    out("acc-shared: %d Accumulate under shared locks; sums %" PRId64
        " (int64), %" PRId32 " (int32)",
        c->acc, s64, s32);
}

static void sec_double(int rank, const counts_t *c)
{
    section("D double");
    const double v[3] = {0.5, -0.25, (rank + 1) / 8.0};
    const double inc = 1.5;
    bitmap_t bm = bm_new((uint64_t)g_size * (uint64_t)c->dbl);
    double last_old = -1;
    uint64_t bad = 0;
    MPI_OK(MPI_Win_lock_all(0, wa));
    for (int i = 0; i < c->dbl; i++) {
        double old = -1;
        MPI_OK(MPI_Accumulate(v, 3, MPI_DOUBLE, 0, D_D0, 3, MPI_DOUBLE,
                              MPI_SUM, wa));
        MPI_OK(MPI_Fetch_and_op(&inc, &old, MPI_DOUBLE, 0, D_FOP, MPI_SUM,
                                wa));
        MPI_OK(MPI_Win_flush(0, wa));
        double q = old / inc;
        if ((q != (double)(int64_t)q || old <= last_old) && bad++ == 0)
            CHECK(0, "fetched %.17g after %.17g", old, last_old);
        bm_add(&bm, (int64_t)q);
        last_old = old;
    }
    MPI_OK(MPI_Win_unlock_all(wa));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int distinct = bm_all_distinct(&bm, (uint64_t)g_size * (uint64_t)c->dbl,
                                   "double");
    double n = (double)g_size * c->dbl;
    double e[4] = {0.5 * n, -0.25 * n,
                   (double)g_size * (g_size + 1) / 2 / 8.0 * c->dbl, 1.5 * n};
    double got[4];
    for (int k = 0; k < 4; k++) {
        got[k] = read_dbl(wa, 0, D_D0 + k);
        CHECK(got[k] == e[k], "slot %d: %.17g, expected %.17g", D_D0 + k,
              got[k], e[k]);
    }
    out("double: %d Accumulate of 3 + %d Fetch_and_op; fetched %s, %s; "
        "sums %.3f %.3f %.3f %.3f",
        c->dbl, c->dbl, bad == 0 ? "increasing" : "NOT increasing",
        distinct ? "distinct over all ranks" : "NOT distinct", got[0], got[1],
        got[2], got[3]);
}

static uint64_t e_seed(int r)
{
    return mix64(0xe5eedull, (uint64_t)r);
}

static void sec_max_min(int rank, const counts_t *c)
{
    section("E max-min");
    uint64_t s = e_seed(rank);
    int64_t last_f = INT64_MIN;
    uint64_t bad = 0;
    MPI_OK(MPI_Win_lock_all(0, wa));
    for (int i = 0; i < c->mm; i++) {
        int64_t v = e_value(&s), f = 0;
        double d = (double)v / 2;
        MPI_OK(MPI_Accumulate(&v, 1, MPI_INT64_T, 0, E_MAX, 1, MPI_INT64_T,
                              MPI_MAX, wa));
        MPI_OK(MPI_Accumulate(&v, 1, MPI_INT64_T, 0, E_MIN, 1, MPI_INT64_T,
                              MPI_MIN, wa));
        MPI_OK(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, E_DMAX, 1, MPI_DOUBLE,
                              MPI_MAX, wa));
        MPI_OK(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, E_DMIN, 1, MPI_DOUBLE,
                              MPI_MIN, wa));
        MPI_OK(MPI_Fetch_and_op(&v, &f, MPI_INT64_T, 0, E_FMAX, MPI_MAX, wa));
        MPI_OK(MPI_Win_flush(0, wa));
        /* f is the maximum before this op; it includes this rank's
         * previous values */
        if (f < last_f && bad++ == 0)
            CHECK(0, "running maximum went from %" PRId64 " to %" PRId64,
                  last_f, f);
        last_f = f > v ? f : v;
    }
    MPI_OK(MPI_Win_unlock_all(wa));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int64_t mx = INT64_MIN, mn = INT64_MAX;
    for (int r = 0; r < g_size; r++) {
        uint64_t t = e_seed(r);
        for (int i = 0; i < c->mm; i++) {
            int64_t v = e_value(&t);
            mx = v > mx ? v : mx;
            mn = v < mn ? v : mn;
        }
    }
    int64_t gmax = read_i64(wa, 0, E_MAX), gmin = read_i64(wa, 0, E_MIN);
    int64_t gf = read_i64(wa, 0, E_FMAX);
    double dmax = read_dbl(wa, 0, E_DMAX), dmin = read_dbl(wa, 0, E_DMIN);
    CHECK(gmax == mx && gf == mx, "maxima %" PRId64 " (Accumulate), %" PRId64
          " (Fetch_and_op), expected %" PRId64, gmax, gf, mx);
    CHECK(gmin == mn, "minimum %" PRId64 ", expected %" PRId64, gmin, mn);
    CHECK(dmax == (double)mx / 2 && dmin == (double)mn / 2,
          "double extremes %.17g %.17g, expected %.17g %.17g", dmax, dmin,
          (double)mx / 2, (double)mn / 2);
    out("max-min: %d x 4 Accumulate + Fetch_and_op(MAX); running maximum %s; "
        "max %" PRId64 " min %" PRId64 " (double %.1f %.1f)",
        c->mm, bad == 0 ? "monotone" : "NOT monotone", gmax, gmin, dmax,
        dmin);
}

static void sec_swap(int rank, const counts_t *c)
{
    section("F swap");
    uint64_t n = (uint64_t)g_size * (uint64_t)c->swap;
    bitmap_t b64 = bm_new(n + 1), b32 = bm_new(n + 1);
    uint64_t bad = 0;
    MPI_OK(MPI_Win_lock_all(0, wa));
    MPI_OK(MPI_Win_lock_all(0, wc));
    for (int i = 0; i < c->swap; i++) {
        int64_t tok = (int64_t)rank * c->swap + i + 1, old = -1;
        int32_t tok32 = (int32_t)tok, old32 = -1;
        MPI_OK(MPI_Fetch_and_op(&tok, &old, MPI_INT64_T, 0, F_SWAP,
                                MPI_REPLACE, wa));
        MPI_OK(MPI_Get_accumulate(&tok32, 1, MPI_INT32_T, &old32, 1,
                                  MPI_INT32_T, last, F_SWAP32, 1, MPI_INT32_T,
                                  MPI_REPLACE, wc));
        MPI_OK(MPI_Win_flush(0, wa));
        MPI_OK(MPI_Win_flush(last, wc));
        bm_add(&b64, old);
        bm_add(&b32, old32);
        if (i % 16 == 15) {
            int64_t cur = -1;
            MPI_OK(MPI_Fetch_and_op(NULL, &cur, MPI_INT64_T, 0, F_SWAP,
                                    MPI_NO_OP, wa));
            MPI_OK(MPI_Win_flush(0, wa));
            if ((cur < 1 || (uint64_t)cur > n) && bad++ == 0)
                CHECK(0, "NO_OP read %" PRId64 ", not a token", cur);
        }
    }
    MPI_OK(MPI_Win_unlock_all(wc));
    MPI_OK(MPI_Win_unlock_all(wa));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int64_t fin = read_i64(wa, 0, F_SWAP);
    int32_t fin32 = read_i32(wc, last, F_SWAP32);
    /* the final values join the fetched ones (added by rank 0 only) */
    if (rank == 0) {
        bm_add(&b64, fin);
        bm_add(&b32, fin32);
    }
    int ok64 = bm_all_distinct(&b64, n + 1, "swap int64");
    int ok32 = bm_all_distinct(&b32, n + 1, "swap int32");
    out("swap: %d Fetch_and_op(REPLACE) + %d Get_accumulate(REPLACE) + %d "
        "NO_OP reads; tokens %s (int64), %s (int32)",
        c->swap, c->swap, c->swap / 16,
        ok64 ? "each seen once" : "LOST OR DUPLICATED",
        ok32 ? "each seen once" : "LOST OR DUPLICATED");
}

/* Open MPI 4.1 (osc/rdma over btl/vader, its default for both window
 * kinds on one node) segfaults in a 64-bit MPI_Compare_and_swap between
 * two ranks (open-mpi/ompi#7967, #11349; the 32-bit one works): there the
 * 64-bit lock word is left out. */
static int cas64_ok(void)
{
#ifdef OPEN_MPI
    return g_size == 1;
#else
    return 1;
#endif
}

/* Compare_and_swap of `val` for `cmp` on rank 0's wa word at slot `slot`,
 * as MPI_INT32_T (`wide` 0) or MPI_INT64_T, flushed; the old value. */
static int64_t cas_word(int wide, int slot, int64_t val, int64_t cmp)
{
    int64_t old;
    if (wide) {
        int64_t v = val, c = cmp, o = -1;
        MPI_OK(MPI_Compare_and_swap(&v, &c, &o, MPI_INT64_T, 0, slot, wa));
        MPI_OK(MPI_Win_flush(0, wa));
        old = o;
    } else {
        int32_t v = (int32_t)val, c = (int32_t)cmp, o = -1;
        MPI_OK(MPI_Compare_and_swap(&v, &c, &o, MPI_INT32_T, 0, slot, wa));
        MPI_OK(MPI_Win_flush(0, wa));
        old = o;
    }
    return old;
}

static void sec_cas_lock(int rank, const counts_t *c)
{
    section("H cas-lock");
    const int64_t me = rank + 1, zero = 0;
    const int32_t zero32 = 0;
    uint64_t bad = 0;
    int both = cas64_ok();
    MPI_OK(MPI_Win_lock_all(0, wa));
    MPI_OK(MPI_Win_lock_all(0, wc));
    for (int i = 0; i < c->cas; i++) {
        /* lock 0: a 32-bit word, lock 1: a 64-bit one */
        int wide = both && i % 2 == 1;
        int slot = wide ? H_LOCK64 : H_LOCK32;
        MPI_Aint cu = wide ? H_CNT64 : H_CNT32;
        MPI_Datatype t = wide ? MPI_INT64_T : MPI_INT32_T;
        int64_t old;
        do {
            old = cas_word(wide, slot, me, 0);
            if ((old < 0 || old > g_size || old == me) && bad++ == 0)
                CHECK(0, "lock word %" PRId64 " while acquiring", old);
        } while (old != 0);
        int64_t holder = -1, cnt = -1;
        int32_t holder32 = -1;
        MPI_OK(MPI_Fetch_and_op(NULL, wide ? (void *)&holder : &holder32, t,
                                0, slot, MPI_NO_OP, wa));
        MPI_OK(MPI_Win_flush(0, wa));
        if (!wide)
            holder = holder32;
        if (holder != me && bad++ == 0)
            CHECK(0, "lock word %" PRId64 " while holding it", holder);
        MPI_OK(MPI_Get(&cnt, 1, MPI_INT64_T, last, cu, 1, MPI_INT64_T, wc));
        MPI_OK(MPI_Win_flush(last, wc));
        cnt++;
        MPI_OK(MPI_Put(&cnt, 1, MPI_INT64_T, last, cu, 1, MPI_INT64_T, wc));
        MPI_OK(MPI_Win_flush(last, wc));
        if (i / 2 % 2 == 0) {
            old = cas_word(wide, slot, 0, me);
            if (old != me && bad++ == 0)
                CHECK(0, "lock word %" PRId64 " at release", old);
        } else {
            MPI_OK(MPI_Accumulate(wide ? (const void *)&zero : &zero32, 1, t,
                                  0, slot, 1, t, MPI_REPLACE, wa));
            MPI_OK(MPI_Win_flush(0, wa));
        }
    }
    MPI_OK(MPI_Win_unlock_all(wc));
    MPI_OK(MPI_Win_unlock_all(wa));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int64_t n32 = read_i64(wc, last, H_CNT32), n64 = read_i64(wc, last, H_CNT64);
    int64_t l32 = read_i64(wa, 0, H_LOCK32), l64 = read_i64(wa, 0, H_LOCK64);
    int64_t e64 = both ? (int64_t)g_size * (c->cas / 2) : 0;
    int64_t e32 = (int64_t)g_size * c->cas - e64;
    CHECK(n32 == e32 && n64 == e64, "counts %" PRId64 " (32-bit lock), %"
          PRId64 " (64-bit lock), expected %" PRId64 ", %" PRId64, n32, n64,
          e32, e64);
    CHECK(l32 == 0 && l64 == 0, "lock words %" PRId64 " %" PRId64
          " at the end", l32, l64);
    out("cas-lock: %d critical sections (%s); %s; counts %" PRId64 " %"
        PRId64 ", lock words %" PRId64 " %" PRId64,
        c->cas, both ? "32- and 64-bit lock words" : "32-bit lock word",
        bad == 0 ? "lock words right" : "LOCK WORD WRONG", n32, n64, l32,
        l64);
}

static void sec_excl_lock(int rank, const counts_t *c)
{
    section("I excl-lock");
    for (int i = 0; i < c->excl; i++) {
        MPI_Win w = i % 2 == 0 ? wa : wc;
        int t = i % 2 == 0 ? 0 : last;
        MPI_Aint d = i % 2 == 0 ? I_CNT : I_CNT32;
        int64_t v = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w));
        MPI_OK(MPI_Get(&v, 1, MPI_INT64_T, t, d, 1, MPI_INT64_T, w));
        MPI_OK(MPI_Win_flush(t, w));
        v++;
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, d, 1, MPI_INT64_T, w));
        MPI_OK(MPI_Win_unlock(t, w));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int64_t a = read_i64(wa, 0, I_CNT), b = read_i64(wc, last, I_CNT32);
    int64_t e = (int64_t)g_size * (c->excl / 2);
    CHECK(a == e && b == e, "counts %" PRId64 " (Win_allocate), %" PRId64
          " (Win_create), expected %" PRId64, a, b, e);
    out("excl-lock: %d exclusive sections; counts %" PRId64 " %" PRId64,
        c->excl, a, b);
    (void)rank;
}

static uint64_t j_seed(int r)
{
    return mix64(0x15eedull, (uint64_t)r);
}

static void sec_shared_excl(int rank, const counts_t *c)
{
    section("J shared-excl");
    uint64_t s = j_seed(rank);
    uint64_t bad = 0;
    int writes = 0, reads = 0;
    int64_t seen[2] = {0, 0};
    for (int i = 0; i < c->mix; i++) {
        int k = i % 2;
        MPI_Win w = k == 0 ? wa : wc;
        int t = k == 0 ? 0 : last;
        MPI_Aint dx = k == 0 ? J_X : J_X32, dy = k == 0 ? J_Y : J_Y32;
        int64_t xy[2] = {-1, -2};
        if (j_writer(&s)) {
            writes++;
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w));
            /* x and y are adjacent: one Get of both */
            MPI_OK(MPI_Get(xy, 2, MPI_INT64_T, t, dx, 2, MPI_INT64_T, w));
            MPI_OK(MPI_Win_flush(t, w));
            if (xy[0] != xy[1] && bad++ == 0)
                CHECK(0, "writer found x=%" PRId64 " y=%" PRId64, xy[0],
                      xy[1]);
            xy[0]++;
            xy[1]++;
            MPI_OK(MPI_Put(&xy[0], 1, MPI_INT64_T, t, dx, 1, MPI_INT64_T, w));
            MPI_OK(MPI_Win_flush(t, w));
            MPI_OK(MPI_Put(&xy[1], 1, MPI_INT64_T, t, dy, 1, MPI_INT64_T, w));
            MPI_OK(MPI_Win_unlock(t, w));
        } else {
            reads++;
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w));
            MPI_OK(MPI_Get(&xy[0], 1, MPI_INT64_T, t, dx, 1, MPI_INT64_T, w));
            MPI_OK(MPI_Win_flush(t, w));
            MPI_OK(MPI_Get(&xy[1], 1, MPI_INT64_T, t, dy, 1, MPI_INT64_T, w));
            MPI_OK(MPI_Win_unlock(t, w));
            if (xy[0] != xy[1] && bad++ == 0)
                CHECK(0, "reader found x=%" PRId64 " y=%" PRId64
                      " (a writer was inside)", xy[0], xy[1]);
        }
        if (xy[0] < seen[k] && bad++ == 0)
            CHECK(0, "x went back from %" PRId64 " to %" PRId64, seen[k],
                  xy[0]);
        seen[k] = xy[0];
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* replay every rank's writer choices */
    int64_t e[2] = {0, 0};
    for (int r = 0; r < g_size; r++) {
        uint64_t t = j_seed(r);
        for (int i = 0; i < c->mix; i++)
            e[i % 2] += j_writer(&t);
    }
    int64_t ax = read_i64(wa, 0, J_X), ay = read_i64(wa, 0, J_Y);
    int64_t cx = read_i64(wc, last, J_X32), cy = read_i64(wc, last, J_Y32);
    CHECK(ax == e[0] && ay == e[0], "Win_allocate words %" PRId64 " %" PRId64
          ", expected %" PRId64, ax, ay, e[0]);
    CHECK(cx == e[1] && cy == e[1], "Win_create words %" PRId64 " %" PRId64
          ", expected %" PRId64, cx, cy, e[1]);
    out("shared-excl: %d writer and %d reader sections; %s; words %" PRId64
        " %" PRId64 " (Win_allocate), %" PRId64 " %" PRId64 " (Win_create)",
        writes, reads, bad == 0 ? "invariant held" : "INVARIANT BROKEN", ax,
        ay, cx, cy);
}

static void sec_guards(int rank)
{
    section("K guards");
    int bad = 0;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, wa));
    for (int s = 0; s < WA_SLOTS; s++)
        if (!(rank == 0 && wa_used(s)) && wa_mem[s] != wa_guard(rank, s)) {
            if (bad++ == 0)
                CHECK(0, "wa slot %d changed", s);
        }
    MPI_OK(MPI_Win_unlock(rank, wa));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, wc));
    for (int u = 0; u < WC_UNITS; u++)
        if (!(rank == last && wc_used(u)) && wc_mem[u] != wc_guard(rank, u)) {
            if (bad++ == 0)
                CHECK(0, "wc unit %d changed", u);
        }
    MPI_OK(MPI_Win_unlock(rank, wc));
    out("guards: %s", bad == 0 ? "intact" : "OVERWRITTEN");
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_size = size;
    last = size - 1;
    counts_t c = counts_for(size);
    section("windows");
    windows_create(rank);
    sec_fop_int64(rank, &c);
    sec_fop_int32(rank, &c);
    sec_acc_shared(rank, &c);
    sec_double(rank, &c);
    sec_max_min(rank, &c);
    sec_swap(rank, &c);
    sec_cas_lock(rank, &c);
    sec_excl_lock(rank, &c);
    sec_shared_excl(rank, &c);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    sec_guards(rank);
    section("free");
    MPI_OK(MPI_Win_free(&wa));
    MPI_OK(MPI_Win_free(&wc));
    if (!wc_allocated)
        MPI_OK(MPI_Free_mem(wc_mem));
    return coll_finish("atomic", rank, size);
}

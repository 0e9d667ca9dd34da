/* osu_coll.c — collective micro-benchmarks written to the methodology of the
 * OSU micro-benchmarks (OMB 7.x: osu_barrier, osu_bcast, osu_reduce,
 * osu_allreduce, osu_allgather, osu_alltoall, osu_gather, osu_scatter, and
 * the nonblocking osu_ibarrier, osu_ibcast, osu_ireduce, osu_iallreduce),
 * all in one launch so that a comparison run does not pay a launcher start
 * per collective.
 *
 * usage: osu_coll LIST [options]
 *   LIST      comma-separated collectives, or "all" (the blocking ones, in
 *             this order), or "nbc" (the nonblocking ones, in this order):
 *             barrier    MPI_Barrier (no size: reported at size 0)
 *             bcast      MPI_Bcast of size bytes (MPI_CHAR) from root 0
 *             bcast_rot  the same, the root rotating over the ranks call by call
 *             reduce     MPI_Reduce to root 0, MPI_DOUBLE, MPI_SUM
 *             allreduce  MPI_Allreduce, MPI_DOUBLE, MPI_SUM
 *             allgather  MPI_Allgather, size bytes from every rank
 *             alltoall   MPI_Alltoall, size bytes from every rank to every rank
 *             gather     MPI_Gather to root 0, size bytes from every rank
 *             scatter    MPI_Scatter from root 0, size bytes to every rank
 *             halo       MPI_Neighbor_alltoall on a periodic 2-D Cartesian grid of
 *                        all ranks (MPI_Dims_create): size bytes to and from each
 *                        of the 4 neighbours, the halo exchange of a stencil code
 *                        (not an OMB benchmark)
 *           nonblocking ("nbc"; each time column followed by its overlap column):
 *             ibarrier       MPI_Ibarrier + MPI_Wait at once (no size: size 0)
 *             ibarrier_ovl   overlap of MPI_Ibarrier with computation, % (below)
 *             ibcast         MPI_Ibcast of size bytes (MPI_CHAR) from root 0 + MPI_Wait
 *             ibcast_ovl     its overlap, %
 *             ireduce        MPI_Ireduce to root 0, MPI_DOUBLE, MPI_SUM + MPI_Wait
 *             ireduce_ovl    its overlap, %
 *             iallreduce     MPI_Iallreduce, MPI_DOUBLE, MPI_SUM + MPI_Wait
 *             iallreduce_ovl its overlap, %
 *             Reductions use count = size / 8 doubles (at least 1).
 *   -m MIN:MAX   message sizes MIN..MAX bytes, doubling (default 4:1048576)
 *   -s LIST      explicit comma-separated sizes instead of -m
 *   -O           add the neighbours size-1 and size+1 of every size >= 4
 *   -f FACTOR    multiply the iteration and warm-up counts by FACTOR
 *                (default 1; each count stays >= 1)
 *   -i N, -x N   iterations / warm-up iterations for every size (override)
 *   -e           after each _ovl column, the time not overlapped: overall - compute
 *                (us, the averages over the ranks of the overlap formula): what the
 *                program waits for beyond its computation, however fast the pure
 *                communication is
 *   -a           print avg and min over the ranks too (3 columns per collective;
 *                an _ovl collective: overall and compute time instead, us, the
 *                averages over the ranks its overlap is computed from)
 *   -v           progress on stderr (rank 0: collective and size before each run)
 *   -c           validation: every input is filled with a pattern that depends
 *                on iteration, size, collective and ranks; every rank checks
 *                every byte (every double) of every result it receives and
 *                that its send buffer was left alone; reduction inputs are
 *                small integers, so any summation order gives exact sums.
 *                Every other iteration skips the barrier between calls, so
 *                back-to-back calls reuse buffers at once (a root that returns
 *                while others still read its buffer is caught). The barrier is
 *                checked by clocks: one rank (in turn) enters late, and no rank
 *                may leave before the last one entered. The nonblocking
 *                collectives (and their _ovl runs, computation between post
 *                and wait) are checked the same way after MPI_Wait (ibarrier:
 *                no rank's MPI_Wait may return before the last rank posted).
 *                Mismatches are printed; the exit status is 1 if any. Timings
 *                are not meaningful.
 *
 * Method (OMB 7.x): 1000 iterations after 100 warm-up ones, 100 and 10 above
 * 8 KiB. Each call is timed on its own (MPI_Wtime before and after) and
 * followed by an MPI_Barrier (not timed), as OMB does; the barrier benchmarks
 * (barrier, ibarrier) time calls back to back. Every rank averages its own
 * time per call; the figure reported is the MAXIMUM of those averages over
 * the ranks (OMB prints avg, min and max; -a adds avg and min). An
 * MPI_Barrier precedes every size. Buffers come from malloc (as an
 * application's would) and are touched before timing. The harness's own
 * communication (error counts, timings to rank 0, the barrier check's
 * clocks) goes through PMPI_* so that it never depends on the collectives
 * being measured.
 *
 * Nonblocking collectives (OMB 7.x osu_iallreduce, osu_ibarrier, osu_ibcast,
 * osu_ireduce). The time column (ibarrier, ibcast, ...) is the pure
 * communication time: post, then MPI_Wait at once, timed like a blocking
 * call (max over the ranks of each rank's average), OMB's "Pure Comm."
 * column. Its _ovl column is OMB's overlap: each rank takes its own average
 * pure time t_pure (from the time column just measured at that size, or
 * measured first when the time column is not in LIST) and runs, per
 * iteration: t0 = MPI_Wtime; post; dummy computation of about t_pure; the
 * computation's own time t_comp (MPI_Wtime around it); MPI_Wait; t_total =
 * MPI_Wtime - t0; the barrier after every call as above. The computation is
 * OMB's dummy_compute: a small matrix kernel (OMB's compute_on_host, 8 x 8
 * here instead of 25 x 25, so that a round and its clock read, ~40 ns, not
 * a round of OMB's size, are what a sub-microsecond target is overshot by;
 * the measured t_comp has a floor of ~0.1 us, its clock reads) repeated
 * until the clock says t_pure has passed; it makes no MPI call (the clock is
 * clock_gettime, not MPI_Wtime) and, as OMB by default (-t, num_test_calls,
 * defaults to 0), no MPI_Test: an MPI that progresses only inside its own
 * calls shows no overlap. As OMB's print_stats_nbc, t_total, t_comp and
 * t_pure are averaged over the ranks and overlap = max(0, 100 - 100 * (t_total - t_comp) /
 * t_pure) percent: 100 = the whole communication hidden behind the
 * computation, 0 = none of it (post + compute + wait took compute + a full
 * communication). The _ovl value is that percentage (not a time); -a adds
 * the averages t_total and t_comp (us). ibarrier and ibarrier_ovl run at the
 * size-0 line with the small-message counts (OMB's osu_ibarrier uses its
 * large-message counts, 100 after 10). "all" keeps the blocking ten only:
 * the nonblocking ones (two loops each, one with computation) would make a
 * comparison run of "all" half as long again; "nbc" runs them.
 *
 * Output (rank 0): comment lines start with '#'; data lines are
 * `size v1 v2 ...`, one value per collective of LIST in order (us; _ovl: %),
 * "nan" where a collective did not run at that size (barrier, ibarrier and
 * their _ovl: only at size 0).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LARGE_MESSAGE_SIZE 8192
#define MAX_SIZES 256

enum coll {
    BARRIER, BCAST, BCAST_ROT, REDUCE, ALLREDUCE, ALLGATHER, ALLTOALL, GATHER, SCATTER, HALO,
    /* nonblocking ("nbc"): each followed by its overlap run */
    IBARRIER, IBARRIER_OVL, IBCAST, IBCAST_OVL, IREDUCE, IREDUCE_OVL, IALLREDUCE, IALLREDUCE_OVL,
    NCOLL
};
#define NBLOCKING IBARRIER /* "all": the collectives before it; "nbc": the rest */
static const char *coll_names[NCOLL] = {"barrier",      "bcast",        "bcast_rot",      "reduce",
                                        "allreduce",    "allgather",    "alltoall",       "gather",
                                        "scatter",      "halo",         "ibarrier",       "ibarrier_ovl",
                                        "ibcast",       "ibcast_ovl",   "ireduce",        "ireduce_ovl",
                                        "iallreduce",   "iallreduce_ovl"};

/* A nonblocking collective (its time or its overlap run). */
static int is_nb(int c) { return c >= NBLOCKING; }
/* The overlap run of a nonblocking collective. */
static int is_ovl(int c) { return is_nb(c) && (c - NBLOCKING) % 2 == 1; }
/* The time column of an overlap run (itself for the others). */
static int pure_of(int c) { return is_ovl(c) ? c - 1 : c; }
/* The blocking collective whose buffers, pattern and checks a nonblocking
 * one shares (itself for the blocking ones). */
static int base(int c) {
    switch (pure_of(c)) {
    case IBARRIER: return BARRIER;
    case IBCAST: return BCAST;
    case IREDUCE: return REDUCE;
    case IALLREDUCE: return ALLREDUCE;
    default: return c;
    }
}

/* The 2-D grid of the halo exchange: all ranks, MPI_Dims_create, periodic
 * in both dimensions (4 neighbours, in MPI_Cart_shift order). */
static MPI_Comm grid;
static int nbr[4];
#define HALO_BLOCKS 4

static int rank, nranks;
static int check, verbose;
static long errors_printed;

static void usage(void) {
    if (rank == 0)
        fprintf(stderr, "usage: osu_coll all|nbc|COLL[,COLL...] [-m MIN:MAX | -s LIST] [-O] [-f FACTOR]\n"
                        "                [-i ITERS] [-x SKIP] [-a] [-e] [-v] [-c]\n"
                        "  COLL: barrier bcast bcast_rot reduce allreduce allgather alltoall gather scatter halo\n"
                        "        ibarrier ibarrier_ovl ibcast ibcast_ovl ireduce ireduce_ovl iallreduce iallreduce_ovl\n"
                        "  all: the blocking ones (barrier..halo); nbc: the nonblocking ones (ibarrier..iallreduce_ovl)\n");
}

static void die(const char *msg) {
    if (rank == 0) fprintf(stderr, "osu_coll: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* ---- validation patterns ----------------------------------------------- */

static uint64_t mix(uint64_t x) { /* splitmix64 finaliser */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Seed of the block that rank `src` contributes for rank `dst` (-1: for
 * everyone) in iteration `iter` of collective `c` at `size`. */
static uint64_t seed(int c, long iter, size_t size, int src, int dst) {
    return mix(mix(((uint64_t)iter << 32) ^ ((uint64_t)size << 4) ^ (uint64_t)c) ^ ((uint64_t)(src + 1) << 20) ^
               (uint64_t)(dst + 2));
}

static unsigned char pattern_byte(uint64_t s, size_t k) {
    /* varies along the block (offset errors) and with the seed */
    return (unsigned char)((s >> ((k & 7) * 8)) + (k >> 3) * 37u + (k & 0xff));
}

static void fill(unsigned char *buf, size_t size, uint64_t s) {
    for (size_t k = 0; k < size; k++) buf[k] = pattern_byte(s, k);
}

static void report(const char *what, int c, size_t size, long iter, const char *detail) {
    if (errors_printed++ < 20)
        fprintf(stderr, "osu_coll: VALIDATION ERROR rank %d %s size %zu iter %ld: %s %s\n", rank, coll_names[c], size,
                iter, what, detail);
}

/* Wrong bytes of `buf` against the pattern of seed `s`. */
static long verify(const unsigned char *buf, size_t size, uint64_t s, int c, long iter, const char *what) {
    long bad = 0;
    for (size_t k = 0; k < size; k++) {
        unsigned char want = pattern_byte(s, k);
        if (buf[k] != want) {
            if (!bad) {
                char d[96];
                snprintf(d, sizeof d, "byte %zu: expected 0x%02x got 0x%02x", k, want, buf[k]);
                report(what, c, size, iter, d);
            }
            bad++;
        }
    }
    return bad;
}

/* Whether `buf` holds the pattern of seed `s` (no report). */
static int holds(const unsigned char *buf, size_t size, uint64_t s) {
    for (size_t k = 0; k < size; k++)
        if (buf[k] != pattern_byte(s, k)) return 0;
    return 1;
}

/* Reduction input: element k of rank r. Small integers (< 2^13 + ranks), so
 * every partial sum is exact in any order. */
static double rval(int r, size_t k, long iter, size_t count) {
    return (double)((((uint64_t)k * 2654435761u) + (uint64_t)r * 977u + (uint64_t)iter * 131u + count) % 8191u) +
           (double)r + 1.0;
}

static void rfill(double *buf, size_t count, int r, long iter) {
    for (size_t k = 0; k < count; k++) buf[k] = rval(r, k, iter, count);
}

static long rverify_input(const double *buf, size_t count, long iter, int c, size_t size) {
    long bad = 0;
    for (size_t k = 0; k < count; k++) {
        double want = rval(rank, k, iter, count);
        if (buf[k] != want) {
            if (!bad) {
                char d[128];
                snprintf(d, sizeof d, "double %zu: expected %.17g got %.17g", k, want, buf[k]);
                report("send buffer modified", c, size, iter, d);
            }
            bad++;
        }
    }
    return bad;
}

static long rverify_sum(const double *buf, size_t count, long iter, int c, size_t size) {
    long bad = 0;
    for (size_t k = 0; k < count; k++) {
        double want = 0;
        for (int r = 0; r < nranks; r++) want += rval(r, k, iter, count);
        if (buf[k] != want) {
            if (!bad) {
                char d[128];
                snprintf(d, sizeof d, "double %zu: expected %.17g got %.17g", k, want, buf[k]);
                report("sum", c, size, iter, d);
            }
            bad++;
        }
    }
    return bad;
}

/* ---- helpers ----------------------------------------------------------- */

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) die("malloc failed");
    memset(p, 0, bytes ? bytes : 1); /* touch every page before timing */
    return p;
}

static long scaled(long n, double f) {
    long v = (long)(n * f + 0.5);
    return v < 1 ? 1 : v;
}

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t rcount(size_t size) { return size / 8 ? size / 8 : 1; }

/* ---- one collective at one size ---------------------------------------- */

static unsigned char *sbuf, *rbuf;

static void prepare(int c, size_t size, long i, int root) {
    size_t n = (size_t)nranks;
    switch (base(c)) { /* the patterns' seeds keep c itself */
    case BCAST:
    case BCAST_ROT:
        /* non-roots: the root's previous pattern or another rank's: any
         * byte not overwritten is caught */
        if (rank == root) fill(sbuf, size, seed(c, i, size, root, -1));
        break;
    case REDUCE:
    case ALLREDUCE:
        rfill((double *)sbuf, rcount(size), rank, i);
        break;
    case ALLGATHER:
    case GATHER:
        fill(sbuf, size, seed(c, i, size, rank, -1));
        break;
    case ALLTOALL:
        for (size_t j = 0; j < n; j++) fill(sbuf + j * size, size, seed(c, i, size, rank, (int)j));
        break;
    case SCATTER:
        if (rank == root)
            for (size_t j = 0; j < n; j++) fill(sbuf + j * size, size, seed(c, i, size, root, (int)j));
        break;
    case HALO:
        /* block j goes to neighbour j; its seed names the block, so a
         * block delivered to the wrong slot is caught */
        for (int j = 0; j < HALO_BLOCKS; j++) fill(sbuf + j * size, size, seed(c, i, size, rank, j));
        break;
    }
}

static long verify_coll(int c, size_t size, long i, int root) {
    long bad = 0;
    size_t n = (size_t)nranks;
    switch (base(c)) {
    case BCAST:
    case BCAST_ROT:
        bad += verify(sbuf, size, seed(c, i, size, root, -1), c, i,
                      rank == root ? "root buffer modified" : "received data");
        break;
    case REDUCE:
        bad += rverify_input((const double *)sbuf, rcount(size), i, c, size);
        if (rank == root) bad += rverify_sum((const double *)rbuf, rcount(size), i, c, size);
        break;
    case ALLREDUCE:
        bad += rverify_input((const double *)sbuf, rcount(size), i, c, size);
        bad += rverify_sum((const double *)rbuf, rcount(size), i, c, size);
        break;
    case ALLGATHER:
    case GATHER:
        bad += verify(sbuf, size, seed(c, i, size, rank, -1), c, i, "send buffer modified");
        if (c == ALLGATHER || rank == root)
            for (size_t j = 0; j < n; j++) {
                char what[64];
                snprintf(what, sizeof what, "block from rank %zu", j);
                bad += verify(rbuf + j * size, size, seed(c, i, size, (int)j, -1), c, i, what);
            }
        break;
    case ALLTOALL:
        for (size_t j = 0; j < n; j++) {
            char what[64];
            snprintf(what, sizeof what, "send block for rank %zu modified", j);
            bad += verify(sbuf + j * size, size, seed(c, i, size, rank, (int)j), c, i, what);
            snprintf(what, sizeof what, "block from rank %zu", j);
            bad += verify(rbuf + j * size, size, seed(c, i, size, (int)j, rank), c, i, what);
        }
        break;
    case SCATTER:
        if (rank == root)
            for (size_t j = 0; j < n; j++) {
                char what[64];
                snprintf(what, sizeof what, "root send block for rank %zu modified", j);
                bad += verify(sbuf + j * size, size, seed(c, i, size, root, (int)j), c, i, what);
            }
        bad += verify(rbuf, size, seed(c, i, size, root, rank), c, i, "received block");
        break;
    case HALO:
        /* Receive block j (from neighbour j) is what that neighbour sent
         * the other way: its block j ^ 1 (MPI-4.0 section 8.6). With 2
         * ranks or fewer along a dimension the MPIs pair the blocks
         * between one pair of ranks differently, so only the source is
         * checked there: the block must be one the neighbour sent us. */
        for (int j = 0; j < HALO_BLOCKS; j++) {
            char what[64];
            snprintf(what, sizeof what, "send block %d modified", j);
            bad += verify(sbuf + j * size, size, seed(c, i, size, rank, j), c, i, what);
            int twin = nbr[j] == nbr[j ^ 1];
            int ok = holds(rbuf + j * size, size, seed(c, i, size, nbr[j], j ^ 1)) ||
                     (twin && holds(rbuf + j * size, size, seed(c, i, size, nbr[j], j)));
            if (!ok) {
                snprintf(what, sizeof what, "block from neighbour %d (rank %d)", j, nbr[j]);
                bad += verify(rbuf + j * size, size, seed(c, i, size, nbr[j], j ^ 1), c, i, what);
            }
        }
        break;
    }
    return bad;
}

static void call(int c, size_t size, int root) {
    int count = (int)size;
    switch (c) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST:
    case BCAST_ROT: MPI_Bcast(sbuf, count, MPI_CHAR, root, MPI_COMM_WORLD); break;
    case REDUCE:
        MPI_Reduce(sbuf, rbuf, (int)rcount(size), MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        break;
    case ALLREDUCE: MPI_Allreduce(sbuf, rbuf, (int)rcount(size), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(sbuf, count, MPI_CHAR, rbuf, count, MPI_CHAR, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(sbuf, count, MPI_CHAR, rbuf, count, MPI_CHAR, MPI_COMM_WORLD); break;
    case GATHER: MPI_Gather(sbuf, count, MPI_CHAR, rbuf, count, MPI_CHAR, root, MPI_COMM_WORLD); break;
    case SCATTER: MPI_Scatter(sbuf, count, MPI_CHAR, rbuf, count, MPI_CHAR, root, MPI_COMM_WORLD); break;
    case HALO: MPI_Neighbor_alltoall(sbuf, count, MPI_CHAR, rbuf, count, MPI_CHAR, grid); break;
    }
}

/* Post nonblocking collective c (either of its two runs). */
static void post(int c, size_t size, int root, MPI_Request *req) {
    switch (base(c)) {
    case BARRIER: MPI_Ibarrier(MPI_COMM_WORLD, req); break;
    case BCAST: MPI_Ibcast(sbuf, (int)size, MPI_CHAR, root, MPI_COMM_WORLD, req); break;
    case REDUCE:
        MPI_Ireduce(sbuf, rbuf, (int)rcount(size), MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD, req);
        break;
    case ALLREDUCE:
        MPI_Iallreduce(sbuf, rbuf, (int)rcount(size), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, req);
        break;
    default: die("not a nonblocking collective");
    }
}

/* ---- OMB's dummy computation ------------------------------------------- */

/* OMB's compute_on_host (x[i] += a[i][j] * a[j][i] + y[j]) on an 8 x 8
 * matrix instead of 25 x 25: a round takes ~10 ns (x in registers), so a
 * target of a fraction of a microsecond is overshot by a round and a clock
 * read, not by one of OMB's rounds. The result goes to globals and a
 * volatile, so the compiler cannot drop the work. */
#define DIM 8
float dc_a[DIM][DIM], dc_x[DIM], dc_y[DIM];
volatile float dc_sink;

static void dc_init(void) {
    for (int i = 0; i < DIM; i++) {
        dc_y[i] = 1e-3f * (float)(i + 1);
        for (int j = 0; j < DIM; j++) dc_a[i][j] = 1e-3f * (float)(i + j + 1);
    }
}

/* One round on x, kept in registers (x does not alias the matrix). */
static void compute_round(float *restrict x) {
    for (int i = 0; i < DIM; i++)
        for (int j = 0; j < DIM; j++) x[i] = x[i] + dc_a[i][j] * dc_a[j][i] + dc_y[j];
}

/* Busy for `seconds` (OMB's dummy_compute, num_test_calls 0): rounds of the
 * kernel until the clock says so; no MPI call inside (clock_gettime, not
 * MPI_Wtime; no MPI_Test). */
static void dummy_compute(double seconds) {
    float x[DIM] = {0};
    double t0 = mono();
    do compute_round(x);
    while (mono() - t0 < seconds);
    for (int i = 0; i < DIM; i++) dc_x[i] = x[i];
    dc_sink = x[0] + x[DIM - 1];
}

/* One collective at one size on this rank: the average microseconds per
 * call (an _ovl run: overall, post to end of MPI_Wait, computing for
 * `target` seconds in between; *comp_us = the computation's average);
 * adds this rank's errors. */
static double run(int c, size_t size, long iters, long skip, double target, double *comp_us, long *bad) {
    long total = iters + skip;
    double timer = 0, tcomp = 0;
    double *t_in = NULL, *t_out = NULL;
    int b = base(c), nb = is_nb(c), ovl = is_ovl(c);
    if (check && b == BARRIER) {
        t_in = xmalloc(total * sizeof *t_in);
        t_out = xmalloc(total * sizeof *t_out);
    }
    if (!check && size) {
        /* contents are irrelevant to the timing; set once, as OMB does */
        size_t bytes = size;
        if (b == ALLTOALL || b == SCATTER) bytes = size * nranks;
        if (b == HALO) bytes = size * HALO_BLOCKS;
        if (b == REDUCE || b == ALLREDUCE) bytes = rcount(size) * 8;
        memset(sbuf, 'a', bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < total; i++) {
        int root = c == BCAST_ROT ? (int)(i % nranks) : 0;
        if (check) {
            if (b == BARRIER) {
                /* one rank in turn enters late */
                if (rank == (int)(i % nranks)) {
                    double until = mono() + 20e-6;
                    while (mono() < until) {
                    }
                }
                t_in[i] = mono();
            } else {
                prepare(c, size, i, root);
            }
        }
        double t0 = MPI_Wtime(), tc = 0;
        if (!nb) {
            call(c, size, root);
        } else {
            MPI_Request req;
            post(c, size, root, &req);
            if (ovl) {
                tc = MPI_Wtime();
                dummy_compute(target);
                tc = MPI_Wtime() - tc;
            }
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        double t1 = MPI_Wtime();
        if (i >= skip) {
            timer += t1 - t0;
            tcomp += tc;
        }
        if (check) {
            if (b == BARRIER) t_out[i] = mono();
            else *bad += verify_coll(c, size, i, root);
        }
        /* OMB: a barrier after every call (not timed). Validation leaves it
         * out every other call: back-to-back calls reuse buffers at once. */
        if (b != BARRIER && (!check || i % 2 == 0)) MPI_Barrier(MPI_COMM_WORLD);
    }
    if (comp_us) *comp_us = tcomp * 1e6 / iters;
    if (check && b == BARRIER) {
        double *last_in = xmalloc(total * sizeof *last_in);
        PMPI_Allreduce(t_in, last_in, (int)total, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        long early = 0;
        for (long i = 0; i < total; i++)
            if (t_out[i] < last_in[i]) {
                if (!early) {
                    char d[128];
                    snprintf(d, sizeof d, "left %.1f us before the last rank entered", (last_in[i] - t_out[i]) * 1e6);
                    report("barrier", c, size, i, d);
                }
                early++;
            }
        *bad += early;
        free(last_in);
        free(t_in);
        free(t_out);
    }
    return timer * 1e6 / iters;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    if (argc < 2) {
        usage();
        MPI_Finalize();
        return 2;
    }
    int colls[NCOLL], ncolls = 0;
    {
        char *copy = strdup(argv[1]), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            /* "all": the blocking ones; "nbc": the nonblocking ones */
            int lo = -1, hi = -1;
            if (!strcmp(tok, "all")) lo = 0, hi = NBLOCKING;
            else if (!strcmp(tok, "nbc")) lo = NBLOCKING, hi = NCOLL;
            for (int c = 0; c < NCOLL && lo < 0; c++)
                if (!strcmp(tok, coll_names[c])) lo = c, hi = c + 1;
            if (lo < 0) {
                usage();
                die("unknown collective");
            }
            for (int found = lo; found < hi; found++) {
                int dup = 0;
                for (int k = 0; k < ncolls; k++)
                    if (colls[k] == found) dup = 1;
                if (!dup) colls[ncolls++] = found;
            }
        }
        free(copy);
    }
    if (ncolls == 0) die("no collective");

    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    size_t smin = 4, smax = 1u << 20;
    const char *list = NULL;
    int odd = 0, all_stats = 0, exposed = 0;
    double factor = 1.0;
    long iters_override = 0, skip_override = -1;
    for (int a = 2; a < argc; a++) {
        const char *o = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(o, "-c")) { check = 1; continue; }
        if (!strcmp(o, "-O")) { odd = 1; continue; }
        if (!strcmp(o, "-a")) { all_stats = 1; continue; }
        if (!strcmp(o, "-e")) { exposed = 1; continue; }
        if (!strcmp(o, "-v")) { verbose = 1; continue; }
        if (!v) { usage(); die("option needs a value"); }
        a++;
        if (!strcmp(o, "-m")) {
            char *end;
            smin = strtoull(v, &end, 10);
            if (*end != ':') die("-m wants MIN:MAX");
            smax = strtoull(end + 1, &end, 10);
            if (*end || smax < smin) die("-m wants MIN:MAX");
        } else if (!strcmp(o, "-s")) list = v;
        else if (!strcmp(o, "-f")) factor = atof(v);
        else if (!strcmp(o, "-i")) iters_override = atol(v);
        else if (!strcmp(o, "-x")) skip_override = atol(v);
        else { usage(); die("unknown option"); }
    }
    if (factor <= 0) die("-f wants a positive factor");

    if (list) {
        char *copy = strdup(list), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok && nsizes < MAX_SIZES; tok = strtok_r(NULL, ",", &save))
            sizes[nsizes++] = strtoull(tok, NULL, 10);
        free(copy);
    } else {
        if (smin == 0) smin = 1;
        for (size_t s = smin; s <= smax && nsizes < MAX_SIZES; s *= 2) sizes[nsizes++] = s;
    }
    if (odd) {
        int n0 = nsizes;
        for (int i = 0; i < n0 && nsizes + 2 <= MAX_SIZES; i++)
            if (sizes[i] >= 4) {
                sizes[nsizes++] = sizes[i] - 1;
                sizes[nsizes++] = sizes[i] + 1;
            }
    }
    qsort(sizes, nsizes, sizeof *sizes, cmp_size);
    { /* drop size 0 (barrier has its own line) and duplicates */
        int w = 0;
        for (int i = 0; i < nsizes; i++)
            if (sizes[i] > 0 && (w == 0 || sizes[w - 1] != sizes[i])) sizes[w++] = sizes[i];
        nsizes = w;
    }
    int only_barrier = 1;
    for (int k = 0; k < ncolls; k++)
        if (base(colls[k]) != BARRIER) only_barrier = 0;
    if (only_barrier) nsizes = 0;
    else if (nsizes == 0) die("no message sizes");
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > (size_t)1 << 28) die("message size above 256 MiB");

    size_t maxsize = nsizes ? sizes[nsizes - 1] : 1;
    size_t bufsize = maxsize * (size_t)(nranks > HALO_BLOCKS ? nranks : HALO_BLOCKS);
    if (rcount(maxsize) * 8 > bufsize) bufsize = rcount(maxsize) * 8;
    sbuf = xmalloc(bufsize);
    rbuf = xmalloc(bufsize);
    {
        int dims[2] = {0, 0}, periods[2] = {1, 1};
        MPI_Dims_create(nranks, 2, dims);
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
        MPI_Cart_shift(grid, 0, 1, &nbr[0], &nbr[1]);
        MPI_Cart_shift(grid, 1, 1, &nbr[2], &nbr[3]);
    }
    dc_init();

    if (rank == 0) {
        printf("# osu_coll: OSU micro-benchmark methodology (OMB 7.x), %d ranks%s\n", nranks,
               check ? ", VALIDATION (timings not meaningful)" : "");
        printf("# latency per call in us, each rank's average, max over the ranks%s; reductions: MPI_DOUBLE, "
               "MPI_SUM, count = size/8 (>= 1); roots: 0 (bcast_rot: rotating)\n",
               all_stats ? " (then avg, min)" : "");
        int any_ovl = 0;
        for (int k = 0; k < ncolls; k++) any_ovl |= is_ovl(colls[k]);
        if (any_ovl)
            printf("# _ovl: OMB's overlap in %%, max(0, 100 - 100 * (overall - compute) / pure), each the average "
                   "over the ranks; post, dummy compute of the rank's own pure time, MPI_Wait%s\n",
                   all_stats ? " (then overall and compute, us)" : "");
        printf("# size");
        for (int k = 0; k < ncolls; k++) {
            const char *n = coll_names[colls[k]];
            printf(" %s", n);
            if (exposed && is_ovl(colls[k])) printf(" %s_exposed", n);
            if (all_stats && is_ovl(colls[k])) printf(" %s_overall %s_compute", n, n);
            else if (all_stats) printf(" %s_avg %s_min", n, n);
        }
        printf("\n");
        fflush(stdout);
    }

    long total_bad = 0;
    /* per collective of a line: [max, -min] (MPI_MAX) and [time, bad,
     * compute, pure] (MPI_SUM; compute and pure: _ovl only), reduced once
     * per line */
    double mine_max[2 * NCOLL], all_max[2 * NCOLL], mine_sum[4 * NCOLL], all_sum[4 * NCOLL];
    int has_barrier = 0;
    for (int k = 0; k < ncolls; k++)
        if (base(colls[k]) == BARRIER) has_barrier = 1;
    /* line -1: the barriers (size 0); then one line per size */
    for (int line = has_barrier ? -1 : 0; line < nsizes; line++) {
        size_t size = line < 0 ? 0 : sizes[line];
        int large = size > LARGE_MESSAGE_SIZE;
        long iters = large ? 100 : 1000, skip = large ? 10 : 100;
        iters = iters_override > 0 ? iters_override : scaled(iters, factor);
        skip = skip_override >= 0 ? skip_override : scaled(skip, factor);
        if (check && iters_override <= 0 && iters < 4) iters = 4; /* both with and without the barrier between */
        int ran[NCOLL];
        /* this rank's pure time (us) of each nonblocking collective at this
         * size: the dummy computation of its _ovl run */
        double pure_us[NCOLL];
        for (int c = 0; c < NCOLL; c++) pure_us[c] = -1;
        for (int k = 0; k < ncolls; k++) {
            int c = colls[k];
            ran[k] = (base(c) == BARRIER) == (line < 0);
            mine_max[2 * k] = mine_max[2 * k + 1] = 0;
            for (int j = 0; j < 4; j++) mine_sum[4 * k + j] = 0;
            if (!ran[k]) continue;
            long bad = 0;
            double comp = 0, target = 0;
            if (is_ovl(c)) {
                int p = pure_of(c);
                if (pure_us[p] < 0) {
                    /* its time column is not in LIST: measure it first */
                    if (verbose && rank == 0) {
                        fprintf(stderr, "osu_coll: %s size %zu (%ld + %ld iterations, pure time for %s)\n",
                                coll_names[p], size, skip, iters, coll_names[c]);
                        fflush(stderr);
                    }
                    pure_us[p] = run(p, size, iters, skip, 0, NULL, &bad);
                }
                target = pure_us[p] * 1e-6;
            }
            if (verbose && rank == 0) {
                fprintf(stderr, "osu_coll: %s size %zu (%ld + %ld iterations)\n", coll_names[c], size, skip, iters);
                fflush(stderr);
            }
            double lat = run(c, size, iters, skip, target, &comp, &bad);
            if (is_nb(c) && !is_ovl(c)) pure_us[c] = lat;
            mine_max[2 * k] = lat;
            mine_max[2 * k + 1] = -lat;
            mine_sum[4 * k] = lat;
            mine_sum[4 * k + 1] = (double)bad;
            if (is_ovl(c)) {
                mine_sum[4 * k + 2] = comp;
                mine_sum[4 * k + 3] = pure_us[pure_of(c)];
            }
        }
        PMPI_Allreduce(mine_max, all_max, 2 * ncolls, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        PMPI_Allreduce(mine_sum, all_sum, 4 * ncolls, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%zu", size);
            for (int k = 0; k < ncolls; k++) {
                if (!ran[k]) {
                    printf(all_stats ? " nan nan nan" : " nan");
                    if (exposed && is_ovl(colls[k])) printf(" nan");
                    continue;
                }
                if (is_ovl(colls[k])) {
                    /* OMB's print_stats_nbc: averages over the ranks */
                    double overall = all_sum[4 * k] / nranks, comp = all_sum[4 * k + 2] / nranks,
                           pure = all_sum[4 * k + 3] / nranks;
                    double ovl = pure > 0 ? 100.0 - 100.0 * (overall - comp) / pure : NAN;
                    printf(" %.2f", ovl < 0 ? 0.0 : ovl);
                    if (exposed) printf(" %.3f", overall > comp ? overall - comp : 0.0);
                    if (all_stats) printf(" %.3f %.3f", overall, comp);
                    continue;
                }
                printf(" %.3f", all_max[2 * k]);
                if (all_stats) printf(" %.3f %.3f", all_sum[4 * k] / nranks, -all_max[2 * k + 1]);
            }
            printf("\n");
        }
        for (int k = 0; k < ncolls; k++) {
            long bad = (long)all_sum[4 * k + 1];
            total_bad += bad;
            if (rank == 0 && bad) printf("# validation FAILED: %s size %zu: %ld bad values\n", coll_names[colls[k]], size, bad);
        }
        if (rank == 0) fflush(stdout);
    }
    if (rank == 0 && check) {
        if (total_bad) printf("# validation FAILED: %ld bad values in total\n", total_bad);
        else
            printf("# validation passed: %d collectives, %d sizes, every result on every rank checked\n", ncolls,
                   nsizes);
        fflush(stdout);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return total_bad ? 1 : 0;
}

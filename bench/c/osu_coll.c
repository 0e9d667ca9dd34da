/* osu_coll.c — collective micro-benchmarks written to the methodology of the
 * OSU micro-benchmarks (OMB 7.x: osu_barrier, osu_bcast, osu_reduce,
 * osu_allreduce, osu_allgather, osu_alltoall, osu_gather, osu_scatter), all
 * in one launch so that a comparison run does not pay a launcher start per
 * collective.
 *
 * usage: osu_coll LIST [options]
 *   LIST      comma-separated collectives, or "all" (every one, in this order):
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
 *             Reductions use count = size / 8 doubles (at least 1).
 *   -m MIN:MAX   message sizes MIN..MAX bytes, doubling (default 4:1048576)
 *   -s LIST      explicit comma-separated sizes instead of -m
 *   -O           add the neighbours size-1 and size+1 of every size >= 4
 *   -f FACTOR    multiply the iteration and warm-up counts by FACTOR
 *                (default 1; each count stays >= 1)
 *   -i N, -x N   iterations / warm-up iterations for every size (override)
 *   -a           print avg and min over the ranks too (3 columns per collective)
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
 *                may leave before the last one entered. Mismatches are printed;
 *                the exit status is 1 if any. Timings are not meaningful.
 *
 * Method (OMB 7.x): 1000 iterations after 100 warm-up ones, 100 and 10 above
 * 8 KiB. Each call is timed on its own (MPI_Wtime before and after) and
 * followed by an MPI_Barrier (not timed), as OMB does; the barrier benchmark
 * times back-to-back barriers. Every rank averages its own time per call;
 * the figure reported is the MAXIMUM of those averages over the ranks (OMB
 * prints avg, min and max; -a adds avg and min). An MPI_Barrier precedes every
 * size. Buffers come from malloc (as an application's would) and are touched
 * before timing. The harness's own communication (error counts, timings to
 * rank 0, the barrier check's clocks) goes through PMPI_* so that it never
 * depends on the collectives being measured.
 *
 * Output (rank 0): comment lines start with '#'; data lines are
 * `size v1 v2 ...`, one value (us) per collective of LIST in order, "nan"
 * where a collective did not run at that size (barrier: only at size 0).
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

enum coll { BARRIER, BCAST, BCAST_ROT, REDUCE, ALLREDUCE, ALLGATHER, ALLTOALL, GATHER, SCATTER, HALO, NCOLL };
static const char *coll_names[NCOLL] = {"barrier",   "bcast",    "bcast_rot", "reduce", "allreduce",
                                        "allgather", "alltoall", "gather",    "scatter", "halo"};

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
        fprintf(stderr, "usage: osu_coll all|COLL[,COLL...] [-m MIN:MAX | -s LIST] [-O] [-f FACTOR]\n"
                        "                [-i ITERS] [-x SKIP] [-a] [-v] [-c]\n"
                        "  COLL: barrier bcast bcast_rot reduce allreduce allgather alltoall gather scatter halo\n");
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
    switch (c) {
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
    switch (c) {
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

/* Average microseconds per call on this rank; adds this rank's errors. */
static double run(int c, size_t size, long iters, long skip, long *bad) {
    long total = iters + skip;
    double timer = 0;
    double *t_in = NULL, *t_out = NULL;
    if (check && c == BARRIER) {
        t_in = xmalloc(total * sizeof *t_in);
        t_out = xmalloc(total * sizeof *t_out);
    }
    if (!check && size) {
        /* contents are irrelevant to the timing; set once, as OMB does */
        size_t bytes = size;
        if (c == ALLTOALL || c == SCATTER) bytes = size * nranks;
        if (c == HALO) bytes = size * HALO_BLOCKS;
        if (c == REDUCE || c == ALLREDUCE) bytes = rcount(size) * 8;
        memset(sbuf, 'a', bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < total; i++) {
        int root = c == BCAST_ROT ? (int)(i % nranks) : 0;
        if (check) {
            if (c == BARRIER) {
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
        double t0 = MPI_Wtime();
        call(c, size, root);
        double t1 = MPI_Wtime();
        if (i >= skip) timer += t1 - t0;
        if (check) {
            if (c == BARRIER) t_out[i] = mono();
            else *bad += verify_coll(c, size, i, root);
        }
        /* OMB: a barrier after every call (not timed). Validation leaves it
         * out every other call: back-to-back calls reuse buffers at once. */
        if (c != BARRIER && (!check || i % 2 == 0)) MPI_Barrier(MPI_COMM_WORLD);
    }
    if (check && c == BARRIER) {
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
            int found = -1;
            if (!strcmp(tok, "all")) {
                for (int c = 0; c < NCOLL; c++) colls[c] = c;
                ncolls = NCOLL;
                break;
            }
            for (int c = 0; c < NCOLL; c++)
                if (!strcmp(tok, coll_names[c])) found = c;
            if (found < 0) {
                usage();
                die("unknown collective");
            }
            int dup = 0;
            for (int k = 0; k < ncolls; k++)
                if (colls[k] == found) dup = 1;
            if (!dup) colls[ncolls++] = found;
        }
        free(copy);
    }
    if (ncolls == 0) die("no collective");

    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    size_t smin = 4, smax = 1u << 20;
    const char *list = NULL;
    int odd = 0, all_stats = 0;
    double factor = 1.0;
    long iters_override = 0, skip_override = -1;
    for (int a = 2; a < argc; a++) {
        const char *o = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(o, "-c")) { check = 1; continue; }
        if (!strcmp(o, "-O")) { odd = 1; continue; }
        if (!strcmp(o, "-a")) { all_stats = 1; continue; }
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
        if (colls[k] != BARRIER) only_barrier = 0;
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

    if (rank == 0) {
        printf("# osu_coll: OSU micro-benchmark methodology (OMB 7.x), %d ranks%s\n", nranks,
               check ? ", VALIDATION (timings not meaningful)" : "");
        printf("# latency per call in us, each rank's average, max over the ranks%s; reductions: MPI_DOUBLE, "
               "MPI_SUM, count = size/8 (>= 1); roots: 0 (bcast_rot: rotating)\n",
               all_stats ? " (then avg, min)" : "");
        printf("# size");
        for (int k = 0; k < ncolls; k++) {
            printf(" %s", coll_names[colls[k]]);
            if (all_stats) printf(" %s_avg %s_min", coll_names[colls[k]], coll_names[colls[k]]);
        }
        printf("\n");
        fflush(stdout);
    }

    long total_bad = 0;
    /* per collective of a line: [max, -min] (MPI_MAX) and [sum, bad] (MPI_SUM),
     * reduced once per line */
    double mine_max[2 * NCOLL], all_max[2 * NCOLL], mine_sum[2 * NCOLL], all_sum[2 * NCOLL];
    int has_barrier = 0;
    for (int k = 0; k < ncolls; k++)
        if (colls[k] == BARRIER) has_barrier = 1;
    /* line -1: the barrier (size 0); then one line per size */
    for (int line = has_barrier ? -1 : 0; line < nsizes; line++) {
        size_t size = line < 0 ? 0 : sizes[line];
        int large = size > LARGE_MESSAGE_SIZE;
        long iters = large ? 100 : 1000, skip = large ? 10 : 100;
        iters = iters_override > 0 ? iters_override : scaled(iters, factor);
        skip = skip_override >= 0 ? skip_override : scaled(skip, factor);
        if (check && iters_override <= 0 && iters < 4) iters = 4; /* both with and without the barrier between */
        int ran[NCOLL];
        for (int k = 0; k < ncolls; k++) {
            int c = colls[k];
            ran[k] = (c == BARRIER) == (line < 0);
            mine_max[2 * k] = mine_max[2 * k + 1] = mine_sum[2 * k] = mine_sum[2 * k + 1] = 0;
            if (!ran[k]) continue;
            if (verbose && rank == 0) {
                fprintf(stderr, "osu_coll: %s size %zu (%ld + %ld iterations)\n", coll_names[c], size, skip, iters);
                fflush(stderr);
            }
            long bad = 0;
            double lat = run(c, size, iters, skip, &bad);
            mine_max[2 * k] = lat;
            mine_max[2 * k + 1] = -lat;
            mine_sum[2 * k] = lat;
            mine_sum[2 * k + 1] = (double)bad;
        }
        PMPI_Allreduce(mine_max, all_max, 2 * ncolls, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        PMPI_Allreduce(mine_sum, all_sum, 2 * ncolls, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%zu", size);
            for (int k = 0; k < ncolls; k++) {
                if (!ran[k]) {
                    printf(all_stats ? " nan nan nan" : " nan");
                    continue;
                }
                printf(" %.3f", all_max[2 * k]);
                if (all_stats) printf(" %.3f %.3f", all_sum[2 * k] / nranks, -all_max[2 * k + 1]);
            }
            printf("\n");
        }
        for (int k = 0; k < ncolls; k++) {
            long bad = (long)all_sum[2 * k + 1];
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

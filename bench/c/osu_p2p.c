/* osu_p2p.c — point-to-point micro-benchmarks written to the methodology of
 * the OSU micro-benchmarks (OMB 7.x), so that the numbers compare with
 * osu_latency, osu_bw, osu_bibw and osu_mbw_mr.
 *
 * usage: osu_p2p MODE [options]
 *   MODE      latency  ping-pong MPI_Send/MPI_Recv between ranks 0 and 1;
 *                      reports half the round trip in microseconds
 *             bw       rank 0 posts a window of MPI_Isend, rank 1 a window of
 *                      MPI_Irecv, both MPI_Waitall, then a 4-byte ack back;
 *                      reports MB/s (1 MB = 1e6 bytes)
 *             bibw     both ranks post a window of MPI_Irecv and of MPI_Isend
 *                      and MPI_Waitall; reports MB/s counting both directions
 *             mbw_mr   pairs = ranks/2, rank i sends to rank i + ranks/2 as in
 *                      bw; reports aggregate MB/s and messages/s
 *             probe    rank 0 calls MPI_Iprobe for a message rank 1 never
 *                      sends, ITERS times (-i, default 1000000); reports ns
 *                      per call on a line of size 0. Across nodes (rank 1
 *                      on another node) heapmpi's time minus stock's is
 *                      what heapmpi adds to a call for a remote peer: its
 *                      routing decision.
 *   -m MIN:MAX   message sizes MIN..MAX bytes, doubling (a MIN of 0 gives
 *                0, 1, 2, 4, ...). Default 0:4194304 (latency), 1:4194304.
 *   -s LIST      explicit comma-separated sizes instead of -m
 *   -O           add the neighbours 2^k-1 and 2^k+1 of every size >= 4
 *                (catches off-by-one bugs in validation runs); with -v,
 *                2^k-8 and 2^k+8 of every size >= 32 (one element)
 *   -f FACTOR    multiply the iteration and warm-up counts by FACTOR
 *                (default 1; each count stays >= 1)
 *   -i N, -x N   iterations / warm-up iterations for every size (override)
 *   -w N         window size for bw, bibw, mbw_mr (default 64)
 *   -p LIST      latency: rank 0's partners, comma-separated (default 1),
 *                one after the other, one column each (across two nodes
 *                with a node's ranks consecutive, -p 1,2 on 4 ranks gives
 *                a local and a remote pair in the same run)
 *   -t           latency: each rank rewrites its whole send buffer before
 *                every send, as an application that packs fresh data does.
 *                OMB writes its buffers once, so they stay in the caches: a
 *                receiver that reads the sender's buffer in place finds the
 *                lines in its own cache from the previous round, which no
 *                application sees. The time includes the rewrite (a memset
 *                of the message, the same under every MPI).
 *   -v           latency: the message is a strided datatype, a matrix
 *                column as halo exchanges send it: MPI_Type_vector(size/8,
 *                1, 2, MPI_DOUBLE), every other 8 bytes of a buffer twice
 *                the size (sizes must be multiples of 8). Each MPI packs
 *                and unpacks it its own way; heapmpi copies by layouts.
 *   -c           validation: the sender fills every message with a pattern
 *                that depends on iteration, size, window slot and direction;
 *                the receiver checks every byte and the received count.
 *                Mismatches are printed; the exit status is 1 if any.
 *                Timings of a validation run are not meaningful.
 *
 * Defaults follow OMB 7.x: latency 10000 iterations after 100 warm-up ones
 * (1000 and 10 above 8 KiB); bw/bibw/mbw_mr 100 iterations after 10 warm-up
 * ones (20 and 2 above 8 KiB), window 64. Warm-up iterations are not timed.
 * Buffers come from posix_memalign (page aligned) and are touched before use.
 * An MPI_Barrier precedes every size. Only rank 0 prints: comment lines
 * start with '#', data lines are `size value [value2]`.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LARGE_MESSAGE_SIZE 8192
#define MAX_SIZES 256
#define MAX_WINDOW 1024
#define ACK_SIZE 4
/* In validation mode every message of a window gets its own slot of the
 * buffer (so a message landing in the wrong receive is caught) while the
 * window fits in this many bytes; above, all share one slot as in OMB. */
#define SLOT_LIMIT (16u << 20)

enum mode { LATENCY, BW, BIBW, MBW_MR, PROBE };
static const char *mode_names[] = {"latency", "bw", "bibw", "mbw_mr", "probe"};
#define MAX_PEERS 8

static int rank, nranks;
static int check;
static int touch;
static int vec;
static long errors_printed;

static void usage(void) {
    if (rank == 0)
        fprintf(stderr,
                "usage: osu_p2p latency|bw|bibw|mbw_mr|probe [-m MIN:MAX | -s LIST] [-O] [-f FACTOR]\n"
                "               [-i ITERS] [-x SKIP] [-w WINDOW] [-p PEERS] [-t] [-v] [-c]\n");
}

static void die(const char *msg) {
    if (rank == 0) fprintf(stderr, "osu_p2p: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* ---- validation pattern ------------------------------------------------ */

static uint64_t mix(uint64_t x) { /* splitmix64 finaliser */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t seed(long iter, size_t size, int slot, int dir) {
    return mix(((uint64_t)iter << 32) ^ ((uint64_t)size << 8) ^ ((uint64_t)slot << 2) ^ (uint64_t)dir);
}

static unsigned char pattern_byte(uint64_t s, size_t k) {
    /* varies along the message (offset errors) and with the seed */
    return (unsigned char)((s >> ((k & 7) * 8)) + (k >> 3) * 37u + (k & 0xff));
}

static void fill(unsigned char *buf, size_t size, long iter, int slot, int dir) {
    uint64_t s = seed(iter, size, slot, dir);
    for (size_t k = 0; k < size; k++) buf[k] = pattern_byte(s, k);
}

/* Returns the number of wrong bytes (a wrong count counts as one error). */
static long verify(const unsigned char *buf, size_t size, long iter, int slot, int dir,
                   MPI_Status *st, int bytes, const char *what) {
    long bad = 0;
    if (st) {
        int count = -1;
        MPI_Get_count(st, MPI_CHAR, &count);
        if ((size_t)count != size) {
            bad++;
            if (errors_printed++ < 20)
                fprintf(stderr, "osu_p2p: VALIDATION ERROR rank %d %s size %zu iter %ld slot %d: received count %d\n",
                        rank, what, size, iter, slot, count);
        }
    }
    if (!bytes) return bad;
    uint64_t s = seed(iter, size, slot, dir);
    for (size_t k = 0; k < size; k++) {
        unsigned char want = pattern_byte(s, k);
        if (buf[k] != want) {
            if (errors_printed++ < 20)
                fprintf(stderr,
                        "osu_p2p: VALIDATION ERROR rank %d %s size %zu iter %ld slot %d byte %zu: expected 0x%02x got 0x%02x\n",
                        rank, what, size, iter, slot, k, want, buf[k]);
            bad++;
        }
    }
    return bad;
}

/* -v: the payload is every other 8 bytes of `span`; the gaps must keep
 * the 0xEE the receive buffer was filled with. */
static long verify_vec(const unsigned char *buf, size_t span, long iter, int dir, MPI_Status *st,
                       size_t size, const char *what) {
    long bad = verify(buf, size, iter, 0, dir, st, 0, what);
    uint64_t s = seed(iter, span, 0, dir);
    for (size_t k = 0; k < span; k++) {
        unsigned char want = (k >> 3) & 1 ? 0xEE : pattern_byte(s, k);
        if (buf[k] != want) {
            if (errors_printed++ < 20)
                fprintf(stderr,
                        "osu_p2p: VALIDATION ERROR rank %d %s vector size %zu iter %ld byte %zu: expected 0x%02x got 0x%02x\n",
                        rank, what, size, iter, k, want, buf[k]);
            bad++;
        }
    }
    return bad;
}

/* ---- helpers ----------------------------------------------------------- */

static void *page_alloc(size_t bytes) {
    void *p = NULL;
    long page = sysconf(_SC_PAGESIZE);
    if (bytes == 0) bytes = 1;
    if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytes) != 0 || !p) die("posix_memalign failed");
    memset(p, 0, bytes); /* touch every page before timing */
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

/* ---- benchmarks -------------------------------------------------------- */

static long run_latency(int peer, size_t size, long iters, long skip, unsigned char *sbuf,
                        unsigned char *rbuf, double *out) {
    long bad = 0;
    MPI_Status st;
    double t0 = 0, t1;
    /* the datatype, count and bytes spanned of one message */
    MPI_Datatype t = MPI_CHAR;
    int count = (int)size;
    size_t span = size;
    if (vec) {
        MPI_Type_vector((int)(size / 8), 1, 2, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        count = 1;
        span = 2 * size;
    }
    if (!check) {
        memset(sbuf, 'a', span);
        memset(rbuf, 'b', span);
    } else if (vec) {
        memset(rbuf, 0xEE, span);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip) t0 = MPI_Wtime();
            if (check) fill(sbuf, span, i, 0, 0);
            else if (touch) memset(sbuf, (int)(i & 0x7f) + 1, span);
            MPI_Send(sbuf, count, t, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, count, t, peer, 1, MPI_COMM_WORLD, &st);
            if (check && vec) bad += verify_vec(rbuf, span, i, 1, &st, size, "latency pong");
            else if (check) bad += verify(rbuf, size, i, 0, 1, &st, 1, "latency pong");
        }
        t1 = MPI_Wtime();
        *out = (t1 - t0) * 1e6 / (2.0 * iters);
    } else if (rank == peer) {
        for (long i = 0; i < iters + skip; i++) {
            MPI_Recv(rbuf, count, t, 0, 1, MPI_COMM_WORLD, &st);
            if (check) {
                if (vec) bad += verify_vec(rbuf, span, i, 0, &st, size, "latency ping");
                else bad += verify(rbuf, size, i, 0, 0, &st, 1, "latency ping");
                fill(sbuf, span, i, 0, 1);
            } else if (touch) {
                memset(sbuf, (int)(i & 0x7f) + 1, span);
            }
            MPI_Send(sbuf, count, t, 0, 1, MPI_COMM_WORLD);
        }
    }
    if (vec) MPI_Type_free(&t);
    return bad;
}

/* probe: rank 0 asks MPI_Iprobe for a message rank 1 never sends; ns per
 * call. */
static void run_probe(long iters, long skip, double *out) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int flag = 0;
        double t0 = 0;
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip) t0 = MPI_Wtime();
            MPI_Iprobe(1, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (flag) die("probe: a message that nobody sent");
        }
        *out = (MPI_Wtime() - t0) * 1e9 / (double)iters;
    }
}

/* bw (pairs = 1, only ranks 0 -> 1) and mbw_mr (pairs = nranks/2). */
static long run_bw(enum mode m, size_t size, long iters, long skip, int window, unsigned char *sbuf,
                   unsigned char *rbuf, double *out_mbs, double *out_rate) {
    long bad = 0;
    int pairs = m == MBW_MR ? nranks / 2 : 1;
    int sender = rank < pairs;
    int receiver = rank >= (m == MBW_MR ? pairs : 1) && rank < (m == MBW_MR ? 2 * pairs : 2);
    int peer = sender ? rank + (m == MBW_MR ? pairs : 1) : rank - (m == MBW_MR ? pairs : 1);
    size_t stride = (check && size * (size_t)window <= SLOT_LIMIT) ? size : 0;
    MPI_Request req[MAX_WINDOW];
    MPI_Status stat[MAX_WINDOW];
    double t0 = 0, t = 0;
    if (!check) {
        memset(sbuf, 'a', size);
        memset(rbuf, 'b', size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (sender) {
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip) {
                if (m == MBW_MR) MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (check)
                for (int j = 0; j < (stride ? window : 1); j++) fill(sbuf + j * stride, size, i, j, rank);
            for (int j = 0; j < window; j++)
                MPI_Isend(sbuf + j * stride, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(window, req, stat);
            MPI_Recv(rbuf, ACK_SIZE, MPI_CHAR, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        t = MPI_Wtime() - t0;
    } else if (receiver) {
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip && m == MBW_MR) MPI_Barrier(MPI_COMM_WORLD);
            for (int j = 0; j < window; j++)
                MPI_Irecv(rbuf + j * stride, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(window, req, stat);
            if (check)
                for (int j = 0; j < window; j++)
                    bad += verify(rbuf + j * stride, size, i, stride ? j : 0, peer, &stat[j], stride || j == 0,
                                  mode_names[m]);
            MPI_Send(sbuf, ACK_SIZE, MPI_CHAR, peer, 101, MPI_COMM_WORLD);
        }
    }
    /* The slowest pair sets the time (conservative aggregate). */
    double tmax = 0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double msgs = (double)pairs * window * iters;
        *out_mbs = msgs * size / 1e6 / tmax;
        *out_rate = msgs / tmax;
    }
    return bad;
}

static long run_bibw(size_t size, long iters, long skip, int window, unsigned char *sbuf, unsigned char *rbuf,
                     double *out) {
    long bad = 0;
    size_t stride = (check && size * (size_t)window <= SLOT_LIMIT) ? size : 0;
    MPI_Request req[2 * MAX_WINDOW];
    MPI_Status stat[2 * MAX_WINDOW];
    double t0 = 0, t1;
    if (!check) {
        memset(sbuf, 'a', size);
        memset(rbuf, 'b', size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < 2) {
        int peer = 1 - rank;
        int stag = rank == 0 ? 100 : 10, rtag = rank == 0 ? 10 : 100;
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip) t0 = MPI_Wtime();
            if (check)
                for (int j = 0; j < (stride ? window : 1); j++) fill(sbuf + j * stride, size, i, j, rank);
            for (int j = 0; j < window; j++)
                MPI_Irecv(rbuf + j * stride, (int)size, MPI_CHAR, peer, rtag, MPI_COMM_WORLD, &req[j]);
            for (int j = 0; j < window; j++)
                MPI_Isend(sbuf + j * stride, (int)size, MPI_CHAR, peer, stag, MPI_COMM_WORLD, &req[window + j]);
            MPI_Waitall(2 * window, req, stat);
            if (check)
                for (int j = 0; j < window; j++)
                    bad += verify(rbuf + j * stride, size, i, stride ? j : 0, peer, &stat[j], stride || j == 0, "bibw");
        }
        t1 = MPI_Wtime();
        if (rank == 0) *out = (double)size / 1e6 * iters * window * 2 / (t1 - t0);
    }
    return bad;
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
    enum mode m;
    if (!strcmp(argv[1], "latency")) m = LATENCY;
    else if (!strcmp(argv[1], "bw")) m = BW;
    else if (!strcmp(argv[1], "bibw")) m = BIBW;
    else if (!strcmp(argv[1], "mbw_mr")) m = MBW_MR;
    else if (!strcmp(argv[1], "probe")) m = PROBE;
    else {
        usage();
        die("unknown mode");
        return 2;
    }

    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    size_t smin = m == LATENCY ? 0 : 1, smax = 4u << 20;
    const char *list = NULL;
    int odd = 0;
    double factor = 1.0;
    long iters_override = 0, skip_override = -1;
    int window = 64;
    int peers[MAX_PEERS] = {1}, npeers = 1;
    for (int a = 2; a < argc; a++) {
        const char *o = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(o, "-c")) { check = 1; continue; }
        if (!strcmp(o, "-O")) { odd = 1; continue; }
        if (!strcmp(o, "-t")) { touch = 1; continue; }
        if (!strcmp(o, "-v")) { vec = 1; continue; }
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
        else if (!strcmp(o, "-w")) window = atoi(v);
        else if (!strcmp(o, "-p")) {
            char *copy = strdup(v), *save = NULL;
            npeers = 0;
            for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (npeers == MAX_PEERS) die("-p: too many partners");
                peers[npeers++] = atoi(tok);
            }
            free(copy);
        }
        else { usage(); die("unknown option"); }
    }
    if (factor <= 0) die("-f wants a positive factor");
    if (window < 1 || window > MAX_WINDOW) die("-w out of range");
    if (nranks < 2) die("needs at least 2 ranks");
    if (m == MBW_MR && nranks % 2) die("mbw_mr needs an even number of ranks");
    if (npeers == 0) die("-p wants at least one partner");
    for (int i = 0; i < npeers; i++)
        if (peers[i] < 1 || peers[i] >= nranks) die("-p: a partner out of range (1 .. ranks-1)");
    if (npeers > 1 && m != LATENCY) die("-p is a latency option");
    if (m == PROBE) {
        /* one line of size 0: no sizes, no buffers */
        list = "0";
        odd = 0;
    }

    if (list) {
        char *copy = strdup(list), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok && nsizes < MAX_SIZES; tok = strtok_r(NULL, ",", &save))
            sizes[nsizes++] = strtoull(tok, NULL, 10);
        free(copy);
    } else {
        if (smin == 0) {
            sizes[nsizes++] = 0;
            smin = 1;
        }
        for (size_t s = smin; s <= smax && nsizes < MAX_SIZES; s *= 2) sizes[nsizes++] = s;
    }
    if (odd) {
        /* -v: the neighbours by one element (8 bytes), not one byte */
        size_t step = vec ? 8 : 1;
        int n0 = nsizes;
        for (int i = 0; i < n0 && nsizes + 2 <= MAX_SIZES; i++)
            if (sizes[i] >= 4 * step) {
                sizes[nsizes++] = sizes[i] - step;
                sizes[nsizes++] = sizes[i] + step;
            }
        qsort(sizes, nsizes, sizeof *sizes, cmp_size);
    }
    if (nsizes == 0) die("no message sizes");
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > (size_t)1 << 30) die("message size above 1 GiB");
    if (m != LATENCY && m != PROBE && sizes[0] == 0) die("bandwidth modes need sizes >= 1");
    if (vec && m != LATENCY) die("-v is a latency option");
    for (int i = 0; vec && i < nsizes; i++)
        if (sizes[i] == 0 || sizes[i] % 8) die("-v wants sizes that are multiples of 8");

    size_t bufsize = ACK_SIZE;
    for (int i = 0; i < nsizes; i++) {
        size_t need = vec ? 2 * sizes[i] : sizes[i];
        if (check && m != LATENCY && sizes[i] * (size_t)window <= SLOT_LIMIT) need = sizes[i] * window;
        if (need > bufsize) bufsize = need;
    }
    unsigned char *sbuf = page_alloc(bufsize);
    unsigned char *rbuf = page_alloc(bufsize);

    if (rank == 0) {
        printf("# osu_p2p %s: OSU micro-benchmark methodology (OMB 7.x), %d ranks%s\n", mode_names[m], nranks,
               check ? ", VALIDATION (timings not meaningful)" : "");
        if (m != LATENCY && m != PROBE) printf("# window %d\n", window);
        switch (m) {
        case LATENCY:
            printf("# size");
            for (int p = 0; p < npeers; p++) printf(" latency_us(0<->%d)", peers[p]);
            printf("\n");
            break;
        case PROBE: printf("# size ns_per_MPI_Iprobe\n"); break;
        case BW: case BIBW: printf("# size MB/s\n"); break;
        case MBW_MR: printf("# size MB/s messages/s\n"); break;
        }
        fflush(stdout);
    }

    long total_bad = 0;
    for (int i = 0; i < nsizes; i++) {
        size_t size = sizes[i];
        int large = size > LARGE_MESSAGE_SIZE;
        long iters, skip;
        if (m == LATENCY) {
            iters = large ? 1000 : 10000;
            skip = large ? 10 : 100;
        } else if (m == PROBE) {
            iters = 1000000;
            skip = 10000;
        } else {
            iters = large ? 20 : 100;
            skip = large ? 2 : 10;
        }
        iters = iters_override > 0 ? iters_override : scaled(iters, factor);
        skip = skip_override >= 0 ? skip_override : scaled(skip, factor);
        double v1 = 0, v2 = 0, lat[MAX_PEERS] = {0};
        long bad = 0;
        switch (m) {
        case LATENCY:
            for (int p = 0; p < npeers; p++) bad += run_latency(peers[p], size, iters, skip, sbuf, rbuf, &lat[p]);
            v1 = lat[0];
            break;
        case PROBE: run_probe(iters, skip, &v1); break;
        case BW: case MBW_MR: bad = run_bw(m, size, iters, skip, window, sbuf, rbuf, &v1, &v2); break;
        case BIBW: bad = run_bibw(size, iters, skip, window, sbuf, rbuf, &v1); break;
        }
        long all_bad = 0;
        MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        total_bad += all_bad;
        if (rank == 0) {
            if (m == MBW_MR) printf("%zu %.2f %.0f\n", size, v1, v2);
            else if (m == LATENCY) {
                printf("%zu", size);
                for (int p = 0; p < npeers; p++) printf(" %.3f", lat[p]);
                printf("\n");
            } else printf("%zu %.3f\n", size, v1);
            if (all_bad) printf("# validation FAILED at size %zu: %ld bad bytes\n", size, all_bad);
            fflush(stdout);
        }
    }
    if (rank == 0 && check) {
        if (total_bad) printf("# validation FAILED: %ld bad bytes in total\n", total_bad);
        else printf("# validation passed: %d sizes, every byte checked\n", nsizes);
        fflush(stdout);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return total_bad ? 1 : 0;
}

/* osu_rma.c — one-sided (RMA) micro-benchmarks written to the methodology of
 * the OSU micro-benchmarks (OMB 7.x: osu_put_latency, osu_get_latency,
 * osu_acc_latency, osu_fop_latency, osu_cas_latency, osu_put_bw,
 * osu_get_bw), all in one launch. Rank 0 is the origin, rank 1 the target;
 * further ranks only take part in the collective calls (window creation,
 * fences).
 *
 * usage: osu_rma LIST [options]
 *   LIST      comma-separated operations, or "all" (every one, in this order):
 *             fence      MPI_Win_fence alone, back to back on every rank (no
 *                        size: reported at size 0)
 *             put_fence  per iteration, every rank: fence; rank 0 MPI_Put of
 *                        size bytes to rank 1; fence
 *             get_fence  the same with MPI_Get from rank 1
 *             put_lock   rank 0, per iteration: MPI_Win_lock(EXCLUSIVE, 1);
 *                        MPI_Put; MPI_Win_unlock(1)
 *             get_lock   the same with MPI_Get
 *             put_flush  rank 0: MPI_Win_lock_all once; per iteration
 *                        MPI_Put + MPI_Win_flush(1)
 *             get_flush  the same with MPI_Get
 *             acc_lock   as put_lock with MPI_Accumulate, MPI_DOUBLE, MPI_SUM,
 *                        count = size/8 (at least 1)
 *             acc_flush  as put_flush with that MPI_Accumulate
 *             fop        MPI_Fetch_and_op on one MPI_INT64_T, MPI_SUM, then
 *                        MPI_Win_flush(1), inside one lock_all (size 0)
 *             cas        MPI_Compare_and_swap on one MPI_INT64_T, then
 *                        MPI_Win_flush(1), inside one lock_all (size 0)
 *             put_bw     rank 0: lock_all once; per iteration a window of W
 *                        MPI_Put then one MPI_Win_flush(1); MB/s
 *             get_bw     the same with MPI_Get; MB/s
 *             Latencies are us per iteration (per fence, per operation with
 *             its synchronisation) measured on rank 0.
 *   -W KIND      window memory: allocate (MPI_Win_allocate, default),
 *                create (MPI_Alloc_mem + MPI_Win_create), malloc
 *                (posix_memalign + MPI_Win_create)
 *   -m MIN:MAX   message sizes MIN..MAX bytes, doubling (default 1:1048576)
 *   -s LIST      explicit comma-separated sizes instead of -m
 *   -O           add the neighbours size-1 and size+1 of every size >= 4
 *   -f FACTOR    multiply the iteration and warm-up counts by FACTOR
 *                (default 1; each count stays >= 1)
 *   -i N, -x N   iterations / warm-up iterations for every size (override)
 *   -w N         operations per flush for put_bw and get_bw (default 64)
 *   -v           progress on stderr (rank 0: operation and size before each)
 *   -F           also run what is known to crash this MPI: cas on an
 *                MPI_Win_allocate window under Open MPI 4 (its osc/rdma
 *                segfaults in MPI_Compare_and_swap there, open-mpi/ompi#11349;
 *                left out by default, reported as nan)
 *   -c           validation: every operation carries values that depend on
 *                operation, size and iteration (and window slot), and each
 *                iteration uses its own slot of the window while they fit in
 *                16 MiB (bandwidth: 4 MiB). Puts: after each closing fence rank 1 checks the
 *                slot; after each unlock/flush rank 0 reads the slot back
 *                with MPI_Get; after the loop rank 1 checks every byte of the
 *                region it exposed (slots and the guard bytes between them).
 *                Gets: rank 1 writes a fresh pattern into the slot before
 *                each fence (get_fence) or fills every slot before the loop,
 *                rank 0 poisons its buffer before each get and checks every
 *                byte and the guard bytes after it. Accumulate: small integer
 *                doubles, so the sums are exact; rank 1 checks every element.
 *                Fetch-and-op: every fetched value is the running sum; CAS:
 *                every other compare value is wrong on purpose (no swap may
 *                happen) and every fetched value is checked; rank 1 checks
 *                the final word. put_bw/get_bw use one slot per operation of
 *                the window (the window shrinks to the slots that fit).
 *                Mismatches are printed; the exit status is 1 if any.
 *                Timings of a validation run are not meaningful.
 *
 * Method (OMB 7.x one-sided defaults): latencies 10000 iterations after 100
 * warm-up ones (1000 and 10 above 8 KiB); bandwidth 100 iterations after 10
 * (20 and 2 above 8 KiB) of a window of 64 operations. Warm-up iterations are
 * not timed. One window for the whole run, sized for the largest message;
 * timing runs put every operation at the same displacement and use one origin
 * buffer (as osu_p2p's bw, so a message stays in cache and compares with the
 * hot-cache memcpy limit). Origin buffers from posix_memalign, touched before
 * timing. While rank 0 runs a passive-target loop the other ranks wait in
 * PMPI_Barrier (inside the MPI library, so a stock MPI that needs the
 * target's progress gets it). The harness's own communication (error counts,
 * barriers between runs) goes through PMPI_*.
 *
 * Output (rank 0): comment lines start with '#'; data lines are
 * `size v1 v2 ...`, one value per operation of LIST in order (us, or MB/s for
 * put_bw and get_bw; 1 MB = 1e6 bytes), "nan" where an operation did not run
 * at that size (fence, fop and cas: only at size 0).
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
/* Validation gives every iteration its own slot while the slots fit in this
 * many bytes, and every operation of a bandwidth window its own slot while
 * they fit in BW_SLOT_LIMIT. */
#define SLOT_LIMIT (16u << 20)
#define BW_SLOT_LIMIT (4u << 20)
/* Bytes of guard before the first slot and at least after every slot. */
#define GUARD 64

enum op { FENCE, PUT_FENCE, GET_FENCE, PUT_LOCK, GET_LOCK, PUT_FLUSH, GET_FLUSH, ACC_LOCK, ACC_FLUSH, FOP, CAS,
          PUT_BW, GET_BW, NOP };
static const char *op_names[NOP] = {"fence",    "put_fence", "get_fence", "put_lock", "get_lock",
                                    "put_flush", "get_flush", "acc_lock",  "acc_flush", "fop",
                                    "cas",       "put_bw",    "get_bw"};

enum kind { WIN_ALLOCATE, WIN_CREATE, WIN_MALLOC };
static const char *kind_names[] = {"allocate", "create", "malloc"};
static const char *kind_titles[] = {"MPI_Win_allocate", "MPI_Alloc_mem + MPI_Win_create",
                                    "posix_memalign + MPI_Win_create"};

static int rank, nranks;
static int check, verbose, force, window = 64;
static long errors_printed;
static MPI_Win win;
static unsigned char *wbase; /* this rank's window memory */
static unsigned char *obuf;  /* origin buffer (rank 0), same size as the window */
static unsigned char *sbuf;  /* scratch: read-backs */
static size_t region;        /* bytes of the window, of obuf and of sbuf */

static void usage(void) {
    if (rank == 0)
        fprintf(stderr, "usage: osu_rma all|OP[,OP...] [-W allocate|create|malloc] [-m MIN:MAX | -s LIST] [-O]\n"
                        "               [-f FACTOR] [-i ITERS] [-x SKIP] [-w WINDOW] [-v] [-F] [-c]\n"
                        "  OP: fence put_fence get_fence put_lock get_lock put_flush get_flush\n"
                        "      acc_lock acc_flush fop cas put_bw get_bw\n");
}

static void die(const char *msg) {
    if (rank == 0) fprintf(stderr, "osu_rma: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static int is_bw(int op) { return op == PUT_BW || op == GET_BW; }
/* operations without a message size (reported at size 0) */
static int sizeless(int op) { return op == FENCE || op == FOP || op == CAS; }
static int is_acc(int op) { return op == ACC_LOCK || op == ACC_FLUSH; }
static int is_put(int op) { return op == PUT_FENCE || op == PUT_LOCK || op == PUT_FLUSH || op == PUT_BW; }
static int is_get(int op) { return op == GET_FENCE || op == GET_LOCK || op == GET_FLUSH || op == GET_BW; }

/* ---- validation patterns ----------------------------------------------- */

static uint64_t mix(uint64_t x) { /* splitmix64 finaliser */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Seed of the data of operation `op` at `size` in iteration `iter` (-1: the
 * background of the target region, -2: rank 0's poison). */
static uint64_t seed(int op, size_t size, long iter) {
    return mix(mix(((uint64_t)(iter + 3) << 32) ^ ((uint64_t)size << 5) ^ (uint64_t)op) ^ 0x5eed);
}

/* The pattern: byte k of seed s is byte k % 8 of a 64-bit word hashed from
 * s and k / 8, so it varies along the message (offset errors) and with the
 * seed, and whole words are cheap to make. */
static uint64_t pattern_word(uint64_t s, uint64_t w) {
    uint64_t x = s + w * 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 32);
}

static unsigned char pattern_byte(uint64_t s, size_t k) {
    return (unsigned char)(pattern_word(s, k / 8) >> (k % 8 * 8));
}

/* buf[0..n) = bytes from..from+n of the pattern of seed s */
static void fill_at(unsigned char *buf, size_t n, uint64_t s, size_t from) {
    size_t k = 0;
    for (; k < n && (from + k) % 8; k++) buf[k] = pattern_byte(s, from + k);
    for (; k + 8 <= n; k += 8) {
        uint64_t x = pattern_word(s, (from + k) / 8);
        for (int j = 0; j < 8; j++) buf[k + j] = (unsigned char)(x >> (8 * j));
    }
    for (; k < n; k++) buf[k] = pattern_byte(s, from + k);
}

static void fill(unsigned char *buf, size_t n, uint64_t s) { fill_at(buf, n, s, 0); }

static void report(int op, size_t size, long iter, const char *what, const char *detail) {
    if (errors_printed++ < 20) {
        fprintf(stderr, "osu_rma: VALIDATION ERROR rank %d %s size %zu", rank, op_names[op], size);
        if (iter >= 0) fprintf(stderr, " iter %ld", iter);
        fprintf(stderr, ": %s %s\n", what, detail);
    }
}

/* Wrong bytes of `buf` against bytes from..from+n of the pattern of seed s
 * (compared a chunk at a time; the first wrong byte is reported). */
static long verify(const unsigned char *buf, size_t n, uint64_t s, size_t from, int op, size_t size, long iter,
                   const char *what) {
    enum { CHUNK = 4096 };
    unsigned char want[CHUNK];
    long bad = 0;
    for (size_t c = 0; c < n; c += CHUNK) {
        size_t m = n - c < CHUNK ? n - c : CHUNK;
        fill_at(want, m, s, from + c);
        if (!memcmp(buf + c, want, m)) continue;
        for (size_t k = 0; k < m; k++) {
            if (buf[c + k] == want[k]) continue;
            if (!bad) {
                char d[96];
                snprintf(d, sizeof d, "byte %zu: expected 0x%02x got 0x%02x", from + c + k, want[k], buf[c + k]);
                report(op, size, iter, what, d);
            }
            bad++;
        }
    }
    return bad;
}

/* Accumulate: the target's initial element k of slot s, and rank 0's
 * contribution in iteration i. Small integers: every sum is exact. */
static double acc_init(long s, size_t k) { return (double)((s * 131 + (long)k * 7) % 4099); }
static double acc_val(long i, size_t k) { return (double)((i * 977 + (long)k * 13) % 8191) + 1.0; }

/* Fetch-and-op: the operand of iteration i; CAS: the value swapped in. */
static int64_t fop_val(long i) { return (int64_t)((i * 7919) % 100003) + 1; }
static int64_t cas_val(long i) { return (int64_t)(mix((uint64_t)i + 77) >> 2); }
#define ATOMIC_INIT ((int64_t)0x1234567)

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

static size_t rcount(size_t size) { return size / 8 ? size / 8 : 1; }

/* Bytes an operation moves at `size` (accumulate: whole doubles). */
static size_t op_bytes(int op, size_t size) { return is_acc(op) ? rcount(size) * 8 : size; }

/* Distance between slots: the bytes rounded up to a cache line, plus a line
 * of guard. */
static size_t stride_of(int op, size_t size) { return (op_bytes(op, size) + 63) / 64 * 64 + GUARD; }

static double factor = 1.0;
static long iters_override, skip_override = -1;

static void counts(int op, size_t size, long *iters, long *skip) {
    int large = size > LARGE_MESSAGE_SIZE;
    if (is_bw(op)) {
        *iters = large ? 20 : 100;
        *skip = large ? 2 : 10;
    } else {
        *iters = large ? 1000 : 10000;
        *skip = large ? 10 : 100;
    }
    *iters = iters_override > 0 ? iters_override : scaled(*iters, factor);
    *skip = skip_override >= 0 ? skip_override : scaled(*skip, factor);
    /* validation: several iterations after the warm-up, so that slots are
     * overwritten and reused */
    long least = is_bw(op) ? 2 : 4;
    if (check && iters_override <= 0 && *iters < least) *iters = least;
}

/* Slots an operation uses at `size`: one in timing runs; in validation one
 * per iteration (bandwidth: per operation of the window) while they fit. */
static long slots_of(int op, size_t size) {
    if (!check || op == FENCE) return 1;
    if (op == FOP || op == CAS) return 1;
    long iters, skip;
    counts(op, size, &iters, &skip);
    long want = is_bw(op) ? window : iters + skip;
    long fit = (long)((is_bw(op) ? BW_SLOT_LIMIT : SLOT_LIMIT) / stride_of(op, size));
    if (fit < 1) fit = 1;
    return want < fit ? want : fit;
}

static size_t region_of(int op, size_t size) { return GUARD + (size_t)slots_of(op, size) * stride_of(op, size); }

static size_t slot_off(int op, size_t size, long slot) { return GUARD + (size_t)slot * stride_of(op, size); }

/* The target's local access to its own window: inside a lock on itself, so
 * it is correct in the separate memory model too. */
static void self_lock(int type) { MPI_Win_lock(type, rank, 0, win); }
static void self_unlock(void) { MPI_Win_unlock(rank, win); }

/* ---- validation at the target ----------------------------------------- */

/* Rank 1, before a put or accumulate loop: the background pattern (puts) or
 * the initial doubles (accumulate) over the region. Before a passive-target
 * get loop: every slot's pattern. */
static void target_prepare(int op, size_t size) {
    size_t reg = region_of(op, size);
    self_lock(MPI_LOCK_EXCLUSIVE);
    if (op == FOP || op == CAS) {
        fill(wbase, reg, seed(op, size, -1));
        int64_t v = ATOMIC_INIT;
        memcpy(wbase + GUARD, &v, sizeof v);
    } else if (is_acc(op)) {
        fill(wbase, reg, seed(op, size, -1));
        long ns = slots_of(op, size);
        for (long s = 0; s < ns; s++) {
            double *d = (double *)(wbase + slot_off(op, size, s));
            for (size_t k = 0; k < rcount(size); k++) d[k] = acc_init(s, k);
        }
    } else if (is_get(op) && op != GET_FENCE) { /* get_fence: rank 1 writes each slot just before its epoch */
        fill(wbase, reg, seed(op, size, -1));
        long ns = slots_of(op, size);
        for (long s = 0; s < ns; s++) fill(wbase + slot_off(op, size, s), size, seed(op, size, s));
    } else {
        fill(wbase, reg, seed(op, size, -1));
    }
    self_unlock();
}

/* Rank 1, after the loop: every byte of the region. `total` iterations ran. */
static long target_verify(int op, size_t size, long total) {
    long bad = 0, ns = slots_of(op, size);
    size_t stride = stride_of(op, size);
    uint64_t bg = seed(op, size, -1);
    self_lock(MPI_LOCK_SHARED);
    bad += verify(wbase, GUARD, bg, 0, op, size, -1, "guard before the first slot");
    if (op == FOP || op == CAS) {
        int64_t want = ATOMIC_INIT, got;
        for (long i = 0; i < total; i++) {
            if (op == FOP) want += fop_val(i);
            else if (i % 2 == 0 || !check) want = cas_val(i);
        }
        memcpy(&got, wbase + GUARD, sizeof got);
        if (got != want) {
            char d[96];
            snprintf(d, sizeof d, "expected %lld got %lld", (long long)want, (long long)got);
            report(op, size, -1, "final target word", d);
            bad++;
        }
        bad += verify(wbase + GUARD + 8, 64 - 8, bg, GUARD + 8, op, size, -1, "bytes after the target word");
        self_unlock();
        return bad;
    }
    for (long s = 0; s < ns; s++) {
        size_t off = slot_off(op, size, s);
        size_t n = op_bytes(op, size);
        /* the last iteration (bandwidth: operation) that wrote slot s */
        long last = -1;
        if (is_bw(op)) last = (total - 1) * window + s;
        else
            for (long i = s; i < total; i += ns) last = i;
        char what[64];
        snprintf(what, sizeof what, "target slot %ld", s);
        if (is_acc(op)) {
            const double *d = (const double *)(wbase + off);
            long wrong = 0;
            for (size_t k = 0; k < rcount(size); k++) {
                double want = acc_init(s, k);
                for (long i = s; i < total; i += ns) want += acc_val(i, k);
                if (d[k] != want) {
                    if (!wrong) {
                        char det[128];
                        snprintf(det, sizeof det, "double %zu: expected %.17g got %.17g", k, want, d[k]);
                        report(op, size, last, what, det);
                    }
                    wrong++;
                }
            }
            bad += wrong;
        } else if (is_put(op)) {
            if (last >= 0) bad += verify(wbase + off, n, seed(op, size, last), 0, op, size, last, what);
            else bad += verify(wbase + off, n, bg, off, op, size, -1, "unwritten slot");
        } else { /* get: the target's data must be left alone */
            if (op == GET_FENCE && last >= 0)
                bad += verify(wbase + off, n, seed(op, size, last), 0, op, size, last, "target slot changed");
            else if (op != GET_FENCE)
                bad += verify(wbase + off, n, seed(op, size, s), 0, op, size, -1, "target slot changed");
        }
        snprintf(what, sizeof what, "guard after target slot %ld", s);
        bad += verify(wbase + off + n, stride - n, bg, off + n, op, size, last, what);
    }
    self_unlock();
    return bad;
}

/* ---- one operation at one size ------------------------------------------ */

/* Rank 0 after a get: the data of seed `s` and the poison after it. */
static long check_got(int op, size_t size, long iter, const unsigned char *buf, uint64_t s) {
    long bad = verify(buf, size, s, 0, op, size, iter, "data got");
    bad += verify(buf + size, GUARD, seed(op, size, -2), size, op, size, iter, "origin bytes after the data got");
    return bad;
}

/* Rank 0 after a put completed (unlock or flush): read the slot back. */
static long read_back(int op, size_t size, long iter, size_t off, int in_lock_all) {
    if (!in_lock_all) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Get(sbuf, (int)size, MPI_CHAR, 1, (MPI_Aint)off, (int)size, MPI_CHAR, win);
    if (in_lock_all) MPI_Win_flush(1, win);
    else MPI_Win_unlock(1, win);
    return verify(sbuf, size, seed(op, size, iter), 0, op, size, iter, "read back after completion");
}

/* Runs `op` at `size`; returns rank 0's figure (us per iteration or MB/s)
 * and adds this rank's errors to *bad. */
static double run(int op, size_t size, long iters, long skip, long *bad) {
    long total = iters + skip, ns = slots_of(op, size);
    int count = (int)size;
    int dcount = (int)rcount(size);
    double t0 = 0, t = 0;
    int origin = rank == 0, target = rank == 1;

    /* fop, cas: the target word starts at a known value in timing runs too
     * (so that every timed CAS swaps) */
    if (target && (check || op == FOP || op == CAS)) target_prepare(op, size);
    if (!check && size && !sizeless(op)) {
        /* contents are irrelevant to the timing */
        if (is_acc(op))
            for (int k = 0; k < dcount; k++) ((double *)obuf)[k] = 1.0;
        else memset(obuf, 'a', size);
    }
    PMPI_Barrier(MPI_COMM_WORLD);

    switch (op) {
    case FENCE:
        for (long i = 0; i < total; i++) {
            if (i == skip) t0 = MPI_Wtime();
            MPI_Win_fence(0, win);
        }
        t = MPI_Wtime() - t0;
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        break;

    case PUT_FENCE:
    case GET_FENCE:
        for (long i = 0; i < total; i++) {
            long s = i % ns;
            size_t off = slot_off(op, size, s);
            if (check) {
                /* between the epochs: rank 1 writes the slot a get will read,
                 * rank 0 the data it will put or poison where a get lands */
                if (target && op == GET_FENCE) fill(wbase + off, size, seed(op, size, i));
                if (origin && op == PUT_FENCE) fill(obuf, size, seed(op, size, i));
                if (origin && op == GET_FENCE) fill(obuf, size + GUARD, seed(op, size, -2));
            }
            if (i == skip) t0 = MPI_Wtime();
            MPI_Win_fence(0, win);
            if (origin) {
                if (op == PUT_FENCE) MPI_Put(obuf, count, MPI_CHAR, 1, (MPI_Aint)off, count, MPI_CHAR, win);
                else MPI_Get(obuf, count, MPI_CHAR, 1, (MPI_Aint)off, count, MPI_CHAR, win);
            }
            MPI_Win_fence(0, win);
            if (check) {
                if (target && op == PUT_FENCE)
                    *bad += verify(wbase + off, size, seed(op, size, i), 0, op, size, i, "target slot after the fence");
                if (origin && op == GET_FENCE) *bad += check_got(op, size, i, obuf, seed(op, size, i));
            }
        }
        t = MPI_Wtime() - t0;
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        break;

    case PUT_LOCK:
    case GET_LOCK:
    case ACC_LOCK:
    case PUT_FLUSH:
    case GET_FLUSH:
    case ACC_FLUSH: {
        int flush = op == PUT_FLUSH || op == GET_FLUSH || op == ACC_FLUSH;
        if (!origin) break;
        if (flush) MPI_Win_lock_all(0, win);
        for (long i = 0; i < total; i++) {
            long s = i % ns;
            size_t off = slot_off(op, size, s);
            if (check) {
                if (is_put(op)) fill(obuf, size, seed(op, size, i));
                if (is_get(op)) fill(obuf, size + GUARD, seed(op, size, -2));
                if (is_acc(op))
                    for (int k = 0; k < dcount; k++) ((double *)obuf)[k] = acc_val(i, (size_t)k);
            }
            if (i == skip) t0 = MPI_Wtime();
            if (!flush) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            if (is_put(op)) MPI_Put(obuf, count, MPI_CHAR, 1, (MPI_Aint)off, count, MPI_CHAR, win);
            else if (is_get(op)) MPI_Get(obuf, count, MPI_CHAR, 1, (MPI_Aint)off, count, MPI_CHAR, win);
            else MPI_Accumulate(obuf, dcount, MPI_DOUBLE, 1, (MPI_Aint)off, dcount, MPI_DOUBLE, MPI_SUM, win);
            if (flush) MPI_Win_flush(1, win);
            else MPI_Win_unlock(1, win);
            if (check) {
                if (is_put(op)) *bad += read_back(op, size, i, off, flush);
                if (is_get(op)) *bad += check_got(op, size, i, obuf, seed(op, size, s));
                if (is_acc(op))
                    for (int k = 0; k < dcount; k++)
                        if (((double *)obuf)[k] != acc_val(i, (size_t)k)) {
                            report(op, size, i, "origin buffer modified", "");
                            ++*bad;
                            break;
                        }
            }
        }
        t = MPI_Wtime() - t0;
        if (flush) MPI_Win_unlock_all(win);
        break;
    }

    case FOP:
    case CAS: {
        if (!origin) break;
        int64_t cur = ATOMIC_INIT, result = 0;
        MPI_Win_lock_all(0, win);
        for (long i = 0; i < total; i++) {
            int64_t v = op == FOP ? fop_val(i) : cas_val(i);
            /* validation: every other compare value is wrong (no swap) */
            int64_t cmp = check && i % 2 ? cur ^ 1 : cur;
            if (i == skip) t0 = MPI_Wtime();
            if (op == FOP) MPI_Fetch_and_op(&v, &result, MPI_INT64_T, 1, GUARD, MPI_SUM, win);
            else MPI_Compare_and_swap(&v, &cmp, &result, MPI_INT64_T, 1, GUARD, win);
            MPI_Win_flush(1, win);
            if (check && result != cur) {
                char d[96];
                snprintf(d, sizeof d, "fetched %lld, expected %lld", (long long)result, (long long)cur);
                report(op, size, i, "fetched value", d);
                ++*bad;
            }
            if (op == FOP) cur += v;
            else if (cmp == cur) cur = v;
        }
        t = MPI_Wtime() - t0;
        MPI_Win_unlock_all(win);
        break;
    }

    case PUT_BW:
    case GET_BW: {
        if (!origin) break;
        /* validation: one slot per operation; the window shrinks to the
         * slots that fit */
        int w = check ? (int)ns : window;
        MPI_Win_lock_all(0, win);
        for (long i = 0; i < total; i++) {
            if (check) {
                for (int j = 0; j < w; j++) {
                    unsigned char *o = obuf + slot_off(op, size, j);
                    if (op == PUT_BW) fill(o, size, seed(op, size, i * window + j));
                    else fill(o, size + GUARD, seed(op, size, -2));
                }
            }
            if (i == skip) t0 = MPI_Wtime();
            for (int j = 0; j < w; j++) {
                size_t off = slot_off(op, size, j % ns);
                if (op == PUT_BW) MPI_Put(obuf + off, count, MPI_CHAR, 1, (MPI_Aint)off, count, MPI_CHAR, win);
                else MPI_Get(obuf + off, count, MPI_CHAR, 1, (MPI_Aint)off, count, MPI_CHAR, win);
            }
            MPI_Win_flush(1, win);
            if (check && op == GET_BW)
                for (int j = 0; j < w; j++)
                    *bad += check_got(op, size, i, obuf + slot_off(op, size, j), seed(op, size, j));
        }
        t = MPI_Wtime() - t0;
        MPI_Win_unlock_all(win);
        double mbs = (double)size * w * iters / 1e6 / t;
        PMPI_Barrier(MPI_COMM_WORLD);
        if (check && target) *bad += target_verify(op, size, total);
        PMPI_Barrier(MPI_COMM_WORLD);
        return mbs;
    }
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    if (check && target && op != FENCE) *bad += target_verify(op, size, total);
    PMPI_Barrier(MPI_COMM_WORLD);
    return t * 1e6 / iters;
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
    int ops[NOP], nops = 0;
    {
        char *copy = strdup(argv[1]), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int found = -1;
            if (!strcmp(tok, "all")) {
                for (int o = 0; o < NOP; o++) ops[o] = o;
                nops = NOP;
                break;
            }
            for (int o = 0; o < NOP; o++)
                if (!strcmp(tok, op_names[o])) found = o;
            if (found < 0) {
                usage();
                die("unknown operation");
            }
            int dup = 0;
            for (int k = 0; k < nops; k++)
                if (ops[k] == found) dup = 1;
            if (!dup) ops[nops++] = found;
        }
        free(copy);
    }
    if (nops == 0) die("no operation");

    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    size_t smin = 1, smax = 1u << 20;
    const char *list = NULL;
    int odd = 0;
    enum kind kind = WIN_ALLOCATE;
    for (int a = 2; a < argc; a++) {
        const char *o = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(o, "-c")) { check = 1; continue; }
        if (!strcmp(o, "-O")) { odd = 1; continue; }
        if (!strcmp(o, "-v")) { verbose = 1; continue; }
        if (!strcmp(o, "-F")) { force = 1; continue; }
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
        else if (!strcmp(o, "-W")) {
            int found = -1;
            for (int k = 0; k < 3; k++)
                if (!strcmp(v, kind_names[k])) found = k;
            if (found < 0) die("-W wants allocate, create or malloc");
            kind = (enum kind)found;
        } else { usage(); die("unknown option"); }
    }
    if (factor <= 0) die("-f wants a positive factor");
    if (window < 1 || window > MAX_WINDOW) die("-w out of range");
    if (nranks < 2) die("needs at least 2 ranks");
    int skipped[NOP] = {0};
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
    if (kind == WIN_ALLOCATE && !force) skipped[CAS] = 1;
#endif

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
    { /* drop size 0 (the sizeless operations have their own line) and duplicates */
        int w = 0;
        for (int i = 0; i < nsizes; i++)
            if (sizes[i] > 0 && (w == 0 || sizes[w - 1] != sizes[i])) sizes[w++] = sizes[i];
        nsizes = w;
    }
    int only_sizeless = 1, has_sizeless = 0;
    for (int k = 0; k < nops; k++) {
        if (!sizeless(ops[k])) only_sizeless = 0;
        else has_sizeless = 1;
    }
    if (only_sizeless) nsizes = 0;
    else if (nsizes == 0) die("no message sizes");
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > (size_t)1 << 28) die("message size above 256 MiB");

    /* one window for the whole run, as large as the largest region */
    region = 2 * GUARD + 64;
    for (int k = 0; k < nops; k++) {
        if (sizeless(ops[k])) continue;
        for (int i = 0; i < nsizes; i++) {
            size_t r = region_of(ops[k], sizes[i]) + GUARD; /* + room for the poison after a get */
            if (r > region) region = r;
        }
    }
    obuf = page_alloc(region);
    sbuf = page_alloc(region);
    switch (kind) {
    case WIN_ALLOCATE:
        MPI_Win_allocate((MPI_Aint)region, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbase, &win);
        break;
    case WIN_CREATE:
        MPI_Alloc_mem((MPI_Aint)region, MPI_INFO_NULL, &wbase);
        MPI_Win_create(wbase, (MPI_Aint)region, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    case WIN_MALLOC:
        wbase = page_alloc(region);
        MPI_Win_create(wbase, (MPI_Aint)region, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    }
    self_lock(MPI_LOCK_EXCLUSIVE);
    memset(wbase, 0, region); /* touch every page before timing */
    self_unlock();
    int *model = NULL, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);

    if (rank == 0) {
        printf("# osu_rma: OSU micro-benchmark methodology (OMB 7.x), %d ranks, origin rank 0, target rank 1%s\n",
               nranks, check ? ", VALIDATION (timings not meaningful)" : "");
        printf("# window: %s, %zu bytes, %s memory model; put_bw/get_bw: %d operations per flush\n",
               kind_titles[kind], region,
               flag && model ? (*model == MPI_WIN_UNIFIED ? "unified" : "separate") : "unknown", window);
        printf("# us per iteration on rank 0 (put_bw, get_bw: MB/s); accumulate: MPI_DOUBLE, MPI_SUM, "
               "count = size/8 (>= 1); fop, cas: one MPI_INT64_T\n");
        for (int k = 0; k < nops; k++)
            if (skipped[ops[k]])
                printf("# %s left out: Open MPI 4's osc/rdma segfaults in MPI_Compare_and_swap on an "
                       "MPI_Win_allocate window (open-mpi/ompi#11349); -F runs it\n",
                       op_names[ops[k]]);
        printf("# size");
        for (int k = 0; k < nops; k++) printf(" %s", op_names[ops[k]]);
        printf("\n");
        fflush(stdout);
    }

    long total_bad = 0;
    double mine[2 * NOP], all[2 * NOP];
    /* line -1: the sizeless operations (size 0); then one line per size */
    for (int line = has_sizeless ? -1 : 0; line < nsizes; line++) {
        size_t size = line < 0 ? 0 : sizes[line];
        int ran[NOP];
        for (int k = 0; k < nops; k++) {
            int op = ops[k];
            ran[k] = sizeless(op) == (line < 0) && !skipped[op];
            mine[2 * k] = mine[2 * k + 1] = 0;
            if (!ran[k]) continue;
            long iters, skip;
            counts(op, size, &iters, &skip);
            if (verbose && rank == 0) {
                fprintf(stderr, "osu_rma: %s size %zu (%ld + %ld iterations)\n", op_names[op], size, skip, iters);
                fflush(stderr);
            }
            long bad = 0;
            mine[2 * k] = run(op, size, iters, skip, &bad);
            mine[2 * k + 1] = (double)bad;
        }
        PMPI_Allreduce(mine, all, 2 * nops, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%zu", size);
            for (int k = 0; k < nops; k++) {
                if (!ran[k]) printf(" nan");
                else if (is_bw(ops[k])) printf(" %.2f", mine[2 * k]);
                else printf(" %.3f", mine[2 * k]);
            }
            printf("\n");
        }
        for (int k = 0; k < nops; k++) {
            long bad = (long)all[2 * k + 1];
            total_bad += bad;
            if (rank == 0 && bad) printf("# validation FAILED: %s size %zu: %ld bad values\n", op_names[ops[k]], size, bad);
        }
        if (rank == 0) fflush(stdout);
    }
    if (rank == 0 && check) {
        int nrun = 0;
        for (int k = 0; k < nops; k++) nrun += !skipped[ops[k]];
        if (total_bad) printf("# validation FAILED: %ld bad values in total\n", total_bad);
        else
            printf("# validation passed: %d operations, %d sizes, every byte of every result and target region "
                   "checked\n",
                   nrun, nsizes);
        fflush(stdout);
    }
    MPI_Win_free(&win);
    if (kind == WIN_CREATE) MPI_Free_mem(wbase);
    if (kind == WIN_MALLOC) free(wbase);
    free(obuf);
    free(sbuf);
    MPI_Finalize();
    return total_bad ? 1 : 0;
}

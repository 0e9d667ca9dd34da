/* random_update.c — the MPI kernel of HPCC's RandomAccess (MPIRandomAccess,
 * "the default algorithm" of HPCC 1.5: hpcc/RandomAccess/MPIRandomAccess.c),
 * reduced to what stresses point-to-point: small batches of updates sent to
 * random peers with MPI_Isend, received with MPI_Irecv(MPI_ANY_SOURCE,
 * MPI_ANY_TAG) and polled with MPI_Test.
 *
 * usage: random_update [-s LIST] [-n UPDATES] [-f FACTOR] [-c]
 *   -s LIST    comma-separated batch limits: the most updates (8 bytes
 *              each) one message carries (HPCC: MAX_TOTAL_PENDING_UPDATES,
 *              1024). Default 1,8,64,1024.
 *   -n N       updates generated per rank per batch limit (default 2^20)
 *   -f FACTOR  multiply N by FACTOR
 *   -c         validation: every rank recomputes its table from all ranks'
 *              update streams and compares word by word; a mismatch prints
 *              a line and the exit status is 1.
 *
 * Each round (batch limit) uses fresh streams (XOR twice would cancel).
 * Each rank owns a table of 2^20 64-bit words (8 MiB, the global table is
 * nranks x that). Each rank generates its own stream of pseudo-random
 * 64-bit values (HPCC's polynomial generator, a different start per rank);
 * the value's high bits select the owning rank, its low bits the word,
 * which is XORed with the value. Updates of the rank itself are applied at
 * once; the others go to a bucket per destination. As in HPCC, one send is
 * outstanding at a time: when it has completed, the fullest bucket (at
 * most LIMIT updates) goes out with MPI_Isend (tag UPDATE); one
 * MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) is always posted and polled with
 * MPI_Test between generated updates; received updates are applied and the
 * receive reposted. When a rank has generated and sent everything it sends
 * an empty FINISHED message to every other rank and keeps receiving until
 * it has seen every rank's FINISHED. MPI_Barrier before and after; the time
 * between is the slowest rank's.
 *
 * Output (rank 0): '#' comment lines, then `LIMIT MUPS` per batch limit:
 * million updates per second over all ranks (HPCC's GUPS x 1000).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLY 0x0000000000000007ULL
#define PERIOD 1317624576693539401LL
#define TABLE_LOG 20
#define TABLE_WORDS (1UL << TABLE_LOG)
#define UPDATE_TAG 1
#define FINISHED_TAG 2
#define MAX_LIMIT 4096
#define MAX_SIZES 64

static int rank, nranks;

/* HPCC_starts: the n-th value of the generator, in log time. */
static uint64_t starts(int64_t n) {
    uint64_t m2[64], temp, ran;
    while (n < 0) n += PERIOD;
    while (n > PERIOD) n -= PERIOD;
    if (n == 0) return 0x1;
    temp = 0x1;
    for (int i = 0; i < 64; i++) {
        m2[i] = temp;
        temp = (temp << 1) ^ ((int64_t)temp < 0 ? POLY : 0);
        temp = (temp << 1) ^ ((int64_t)temp < 0 ? POLY : 0);
    }
    int i;
    for (i = 62; i >= 0; i--)
        if ((n >> i) & 1) break;
    ran = 0x2;
    while (i > 0) {
        temp = 0;
        for (int j = 0; j < 64; j++)
            if ((ran >> j) & 1) temp ^= m2[j];
        ran = temp;
        i -= 1;
        if ((n >> i) & 1) ran = (ran << 1) ^ ((int64_t)ran < 0 ? POLY : 0);
    }
    return ran;
}

static inline uint64_t next_ran(uint64_t r) { return (r << 1) ^ ((int64_t)r < 0 ? POLY : 0); }

/* The owner of an update and its word there. */
static inline int owner(uint64_t v) { return (int)((v >> TABLE_LOG) % (uint64_t)nranks); }
static inline size_t word(uint64_t v) { return (size_t)(v & (TABLE_WORDS - 1)); }

static void die(const char *msg) {
    fprintf(stderr, "random_update: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

struct buckets {
    uint64_t *data; /* nranks x MAX_LIMIT */
    int *len;
    int pending;
};

/* Applies the updates of a received message. */
static void apply(uint64_t *table, const uint64_t *u, int n) {
    for (int i = 0; i < n; i++) table[word(u[i])] ^= u[i];
}

/* Tests the posted receive; if a message came, applies it (updates) or
 * counts it (FINISHED) and posts the next receive, unless every other rank
 * has finished: nothing more can come then (each rank sends FINISHED after
 * all its updates, and one sender's messages arrive in order). Returns
 * whether a message came. */
static int receive(uint64_t *table, uint64_t *recvbuf, MPI_Request *in, int *finished) {
    int flag;
    MPI_Status st;
    MPI_Test(in, &flag, &st);
    if (!flag) return 0;
    if (st.MPI_TAG == UPDATE_TAG) {
        int cnt;
        MPI_Get_count(&st, MPI_UINT64_T, &cnt);
        apply(table, recvbuf, cnt);
    } else {
        ++*finished;
    }
    if (*finished < nranks - 1)
        MPI_Irecv(recvbuf, MAX_LIMIT, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, in);
    return 1;
}

/* One timed run: every rank generates `n` updates, batches of at most
 * `limit` per message. Returns the elapsed time of this rank. */
static double run(uint64_t *table, long n, int limit, int round) {
    struct buckets b;
    b.data = malloc(sizeof(uint64_t) * (size_t)nranks * MAX_LIMIT);
    b.len = calloc((size_t)nranks, sizeof(int));
    b.pending = 0;
    uint64_t *sendbuf = malloc(sizeof(uint64_t) * MAX_LIMIT);
    uint64_t *recvbuf = malloc(sizeof(uint64_t) * MAX_LIMIT);
    if (!b.data || !b.len || !sendbuf || !recvbuf) die("out of memory");
    MPI_Request in = MPI_REQUEST_NULL, out = MPI_REQUEST_NULL;
    int finished = 0, flag, full = -1;
    uint64_t ran = starts((int64_t)n * (rank + (int64_t)nranks * round));

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (nranks > 1)
        MPI_Irecv(recvbuf, MAX_LIMIT, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &in);
    long generated = 0;
    while (generated < n || b.pending > 0) {
        /* Receive whatever has come. */
        while (in != MPI_REQUEST_NULL && receive(table, recvbuf, &in, &finished))
            ;
        /* Generate: local updates at once, others into their bucket until
         * a bucket is full (none grows past `limit`: while one is full,
         * only receiving and sending go on). */
        while (generated < n && full < 0) {
            ran = next_ran(ran);
            generated++;
            int o = owner(ran);
            if (o == rank) {
                table[word(ran)] ^= ran;
                continue;
            }
            b.data[(size_t)o * MAX_LIMIT + (size_t)b.len[o]++] = ran;
            b.pending++;
            if (b.len[o] == limit) {
                full = o;
                break;
            }
            if ((generated & 63) == 0) break; /* poll now and then */
        }
        /* Send the fullest bucket once the previous send is done (or when
         * everything is generated, every remaining bucket in turn). */
        if (b.pending > 0) {
            MPI_Test(&out, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                int best = -1;
                for (int p = 0; p < nranks; p++)
                    if (b.len[p] > 0 && (best < 0 || b.len[p] > b.len[best])) best = p;
                if (b.len[best] >= limit || generated >= n) {
                    int cnt = b.len[best] < limit ? b.len[best] : limit;
                    memcpy(sendbuf, b.data + (size_t)best * MAX_LIMIT, sizeof(uint64_t) * (size_t)cnt);
                    b.len[best] -= cnt;
                    memmove(b.data + (size_t)best * MAX_LIMIT, b.data + (size_t)best * MAX_LIMIT + cnt,
                            sizeof(uint64_t) * (size_t)b.len[best]);
                    b.pending -= cnt;
                    if (best == full) full = -1;
                    MPI_Isend(sendbuf, cnt, MPI_UINT64_T, best, UPDATE_TAG, MPI_COMM_WORLD, &out);
                }
            }
        }
    }
    MPI_Wait(&out, MPI_STATUS_IGNORE);
    /* Tell everyone, and wait for everyone. */
    MPI_Request *fin = malloc(sizeof(MPI_Request) * (size_t)nranks);
    if (!fin) die("out of memory");
    int nf = 0;
    for (int p = 0; p < nranks; p++)
        if (p != rank) MPI_Isend(NULL, 0, MPI_UINT64_T, p, FINISHED_TAG, MPI_COMM_WORLD, &fin[nf++]);
    while (in != MPI_REQUEST_NULL) receive(table, recvbuf, &in, &finished);
    for (int k = 0; k < nf; k++) MPI_Wait(&fin[k], MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    free(fin);
    free(b.data);
    free(b.len);
    free(sendbuf);
    free(recvbuf);
    return t;
}

/* Recomputes this rank's table from every rank's stream; returns the
 * number of wrong words. */
static long verify(const uint64_t *table, long n, int runs) {
    uint64_t *want = calloc(TABLE_WORDS, sizeof(uint64_t));
    if (!want) die("out of memory");
    for (size_t i = 0; i < TABLE_WORDS; i++) want[i] = (uint64_t)rank * TABLE_WORDS + i;
    for (int r = 0; r < runs; r++)
        for (int p = 0; p < nranks; p++) {
            uint64_t ran = starts((int64_t)n * (p + (int64_t)nranks * r));
            for (long k = 0; k < n; k++) {
                ran = next_ran(ran);
                if (owner(ran) == rank) want[word(ran)] ^= ran;
            }
        }
    long bad = 0;
    for (size_t i = 0; i < TABLE_WORDS; i++)
        if (table[i] != want[i]) {
            if (bad < 10)
                fprintf(stderr, "random_update: VALIDATION ERROR rank %d word %zu: expected %016llx got %016llx\n",
                        rank, i, (unsigned long long)want[i], (unsigned long long)table[i]);
            bad++;
        }
    free(want);
    return bad;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int limits[MAX_SIZES] = {1, 8, 64, 1024};
    int nlimits = 4, check = 0;
    long n = 1L << 20;
    double factor = 1.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            nlimits = 0;
            for (char *t = strtok(argv[++i], ","); t && nlimits < MAX_SIZES; t = strtok(NULL, ","))
                limits[nlimits++] = atoi(t);
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            n = atol(argv[++i]);
        } else if (!strcmp(argv[i], "-f") && i + 1 < argc) {
            factor = atof(argv[++i]);
        } else if (!strcmp(argv[i], "-c")) {
            check = 1;
        } else {
            if (rank == 0) fprintf(stderr, "usage: random_update [-s LIST] [-n UPDATES] [-f FACTOR] [-c]\n");
            MPI_Finalize();
            return 2;
        }
    }
    n = (long)(n * factor + 0.5);
    if (n < 1) n = 1;
    if (check && n > (1L << 18)) n = 1L << 18;
    for (int i = 0; i < nlimits; i++)
        if (limits[i] < 1 || limits[i] > MAX_LIMIT) die("batch limits must be in 1..4096");

    uint64_t *table = malloc(sizeof(uint64_t) * TABLE_WORDS);
    if (!table) die("out of memory");
    for (size_t i = 0; i < TABLE_WORDS; i++) table[i] = (uint64_t)rank * TABLE_WORDS + i;
    if (rank == 0) {
        printf("# random_update (HPCC MPIRandomAccess kernel): %d ranks, %ld updates per rank, "
               "table 2^%d words per rank\n",
               nranks, n, TABLE_LOG);
        printf("# batch_limit Mupdates/s\n");
    }
    long bad = 0;
    for (int i = 0; i < nlimits; i++) {
        double t = run(table, n, limits[i], i), tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) printf("%d %.3f\n", limits[i], (double)n * nranks / tmax / 1e6);
        fflush(stdout);
    }
    if (check) {
        long mine = verify(table, n, nlimits), all;
        MPI_Reduce(&mine, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        bad = all;
        MPI_Bcast(&bad, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        if (rank == 0) printf(bad ? "# validation FAILED: %ld wrong words\n" : "# validation passed\n", bad);
    }
    free(table);
    MPI_Finalize();
    return bad ? 1 : 0;
}

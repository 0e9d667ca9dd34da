/* limits.c — the machine's own limits for intra-node messaging (no MPI).
 *
 *   memcpy, one core:  a single thread copies SIZE bytes from one hot buffer
 *                      to another, over and over; bandwidth = bytes copied / s.
 *   memcpy, two cores: two threads pinned to CPUs 0 and 1 each copy half of
 *                      SIZE (their own halves of the same buffers) the same
 *                      number of times; bandwidth = SIZE * copies / s.
 *   cache line:        two threads pinned to CPUs 0 and 1 ping-pong on one
 *                      shared 64-byte-aligned cache line; one way = round
 *                      trip / 2.
 * Every figure is the best of several trials (a limit is what the hardware
 * can do; on a busy machine the other trials only measure the noise).
 *
 * usage: limits [-m MIN:MAX] [-t MILLISECONDS_PER_TRIAL] [-r TRIALS]
 *   sizes MIN..MAX doubling (default 1024:4194304), trials default 5 of
 *   ~20 ms each.
 * Output (1 MB = 1e6 bytes):
 *   # memcpy size one_core_MB/s two_core_MB/s
 *   memcpy SIZE MBS1 MBS2
 *   # cacheline one_way_ns_best one_way_ns_median
 *   cacheline NS_BEST NS_MEDIAN
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *xalloc(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, n) != 0) {
        perror("posix_memalign");
        exit(1);
    }
    memset(p, 1, n);
    return p;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define barrier_compiler() __asm__ __volatile__("" ::: "memory")

/* ---- memcpy ------------------------------------------------------------- */

static unsigned char *src, *dst;

static double copy_loop(unsigned char *d, const unsigned char *s, size_t n, long reps) {
    double t0 = now();
    for (long r = 0; r < reps; r++) {
        memcpy(d, s, n);
        barrier_compiler();
    }
    return now() - t0;
}

struct two {
    pthread_barrier_t start, stop;
    size_t size;
    long reps;
    int quit;
};
static struct two two;

static void *copier(void *arg) {
    int id = (int)(intptr_t)arg;
    pin(id);
    size_t half = two.size / 2;
    for (;;) {
        pthread_barrier_wait(&two.start);
        if (two.quit) break;
        copy_loop(dst + id * half, src + id * half, half, two.reps);
        pthread_barrier_wait(&two.stop);
    }
    return NULL;
}

/* ---- cache line --------------------------------------------------------- */

struct line {
    _Alignas(64) atomic_long flag;
    char pad[64 - sizeof(atomic_long)];
};
static struct line line;
static long pp_rounds;
static pthread_barrier_t pp_barrier;

static void *ponger(void *arg) {
    (void)arg;
    pin(1);
    for (;;) {
        pthread_barrier_wait(&pp_barrier);
        long n = pp_rounds;
        if (n == 0) break;
        for (long i = 0; i < n; i++) {
            while (atomic_load_explicit(&line.flag, memory_order_acquire) != 2 * i + 1) {
            }
            atomic_store_explicit(&line.flag, 2 * i + 2, memory_order_release);
        }
        pthread_barrier_wait(&pp_barrier);
    }
    return NULL;
}

int main(int argc, char **argv) {
    size_t smin = 1024, smax = 4u << 20;
    double trial_ms = 20;
    int trials = 5;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "-m")) {
            char *end;
            smin = strtoull(argv[a + 1], &end, 10);
            if (*end == ':') smax = strtoull(end + 1, NULL, 10);
        } else if (!strcmp(argv[a], "-t")) trial_ms = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "-r")) trials = atoi(argv[a + 1]);
        else {
            fprintf(stderr, "usage: limits [-m MIN:MAX] [-t MS] [-r TRIALS]\n");
            return 2;
        }
    }
    if (smin < 2) smin = 2;
    if (trials < 1) trials = 1;
    src = xalloc(smax);
    dst = xalloc(smax);
    int pinned = pin(0) == 0;

    printf("# machine limits%s\n", pinned ? "" : " (could not pin to CPU 0)");
    printf("# memcpy size one_core_MB/s two_core_MB/s\n");
    fflush(stdout);

    pthread_barrier_init(&two.start, NULL, 2);
    pthread_barrier_init(&two.stop, NULL, 2);
    pthread_t helper;
    pthread_create(&helper, NULL, copier, (void *)(intptr_t)1);

    for (size_t size = smin; size <= smax; size *= 2) {
        /* calibrate: copies per trial */
        copy_loop(dst, src, size, 10);
        long reps = 10;
        double t = copy_loop(dst, src, size, reps);
        while (t < 2e-3) {
            reps *= 4;
            t = copy_loop(dst, src, size, reps);
        }
        reps = (long)(reps * (trial_ms * 1e-3) / t) + 1;
        double best1 = 0, best2 = 0;
        for (int k = 0; k < trials; k++) {
            double t1 = copy_loop(dst, src, size, reps);
            double bw1 = (double)size * reps / t1 / 1e6;
            if (bw1 > best1) best1 = bw1;
        }
        /* two cores: each thread copies half, same number of copies */
        two.size = size;
        two.reps = reps;
        for (int k = 0; k < trials + 1; k++) {
            pthread_barrier_wait(&two.start);
            double t0 = now();
            copy_loop(dst, src, size / 2, reps);
            pthread_barrier_wait(&two.stop);
            double t2 = now() - t0;
            double bw2 = (double)size * reps / t2 / 1e6;
            if (k > 0 && bw2 > best2) best2 = bw2; /* first one warms the helper */
        }
        printf("memcpy %zu %.0f %.0f\n", size, best1, best2);
        fflush(stdout);
    }
    two.quit = 1;
    pthread_barrier_wait(&two.start);
    pthread_join(helper, NULL);

    /* cache-line ping-pong between CPU 0 (this thread) and CPU 1 */
    pthread_barrier_init(&pp_barrier, NULL, 2);
    pthread_t pong;
    pthread_create(&pong, NULL, ponger, NULL);
    enum { PP_TRIALS = 51 };
    double oneway[PP_TRIALS];
    long n = 2000;
    for (int k = 0; k < PP_TRIALS + 1; k++) {
        atomic_store(&line.flag, 0);
        pp_rounds = n;
        pthread_barrier_wait(&pp_barrier);
        double t0 = now();
        for (long i = 0; i < n; i++) {
            atomic_store_explicit(&line.flag, 2 * i + 1, memory_order_release);
            while (atomic_load_explicit(&line.flag, memory_order_acquire) != 2 * i + 2) {
            }
        }
        double t = now() - t0;
        pthread_barrier_wait(&pp_barrier);
        if (k > 0) oneway[k - 1] = t / n / 2 * 1e9; /* the first trial is warm-up */
    }
    pp_rounds = 0;
    pthread_barrier_wait(&pp_barrier);
    pthread_join(pong, NULL);
    qsort(oneway, PP_TRIALS, sizeof *oneway, cmp_double);
    printf("# cacheline one_way_ns_best one_way_ns_median\n");
    printf("cacheline %.1f %.1f\n", oneway[0], oneway[PP_TRIALS / 2]);
    free(src);
    free(dst);
    return 0;
}

/*
 * alloc_stress.c - heapmpi integration test: multi-threaded allocator stress.
 *
 * usage: alloc_stress [iterations-per-thread [threads]]   (default 30000 8)
 *
 * After MPI_Init_thread, every rank starts <threads> pthreads. Each thread
 * keeps a table of live blocks and does random (deterministically seeded)
 * malloc / calloc / posix_memalign / aligned_alloc / memalign / realloc /
 * free with sizes from 1 B to 1 MiB (mostly small) and alignments 16..4096.
 * Every block carries a pattern derived from a per-block seed that is
 * verified before the block is freed or reallocated. Blocks also migrate
 * between threads through a mutex-protected exchange array, so blocks are
 * freed and reallocated by threads other than the one that allocated them.
 *
 * Output (stdout, rank 0 only, rank order): "rank N: ok" per rank.
 * Exit status 0 on success, 1 on failure (details on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define SLOTS 256
#define XSLOTS 64
#define MAX_THREADS 64
#define DENSE 8192 /* bytes below this offset are all patterned */

struct ent {
    unsigned char *p;
    size_t size;
    uint32_t seed;
};

static long g_iters = 30000;
static int g_threads = 8;

static struct ent g_xchg[XSLOTS];
static pthread_mutex_t g_xlock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

static inline unsigned char pat(uint32_t seed, size_t i)
{
    uint32_t x = seed ^ ((uint32_t)i * 0x9e3779b1u);
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    return (unsigned char)x;
}

/* Patterned offsets: everything below DENSE, then the first and last byte
 * of every 4 KiB page (independent of the block size), plus the block's
 * last byte, which fill()/check() handle explicitly. */
static void fill_range(unsigned char *p, uint32_t seed, size_t from, size_t to)
{
    size_t i = from;
    for (; i < to && i < DENSE; i++)
        p[i] = pat(seed, i);
    for (; i < to; i++) {
        size_t o = i & 4095;
        if (o == 0 || o == 4095)
            p[i] = pat(seed, i);
        else
            i = (i | 4095) - 1; /* jump to the page's last byte */
    }
}

static int check_range(const unsigned char *p, uint32_t seed, size_t from,
                       size_t to, int zero, const char *what)
{
    size_t i = from;
    for (; i < to; i++) {
        if (i >= DENSE) {
            size_t o = i & 4095;
            if (o != 0 && o != 4095) {
                i = (i | 4095) - 1;
                continue;
            }
        }
        unsigned char want = zero ? 0 : pat(seed, i);
        if (p[i] != want) {
            FAIL("%s: block %p byte %zu is 0x%02x, expected 0x%02x", what,
                 (const void *)p, i, p[i], want);
            return 0;
        }
    }
    return 1;
}

static int check_block(const struct ent *e, const char *what)
{
    if (!check_range(e->p, e->seed, 0, e->size, 0, what))
        return 0;
    if (e->p[e->size - 1] != pat(e->seed, e->size - 1)) {
        FAIL("%s: block %p (size %zu) last byte is 0x%02x, expected 0x%02x",
             what, (void *)e->p, e->size, e->p[e->size - 1],
             pat(e->seed, e->size - 1));
        return 0;
    }
    return 1;
}

static size_t pick_size(uint64_t *s)
{
    uint64_t r = rnd(s) % 1000;
    if (r < 700)
        return 1 + rnd(s) % 128;
    if (r < 900)
        return 129 + rnd(s) % (4096 - 128);
    if (r < 985)
        return 4097 + rnd(s) % (65536 - 4096);
    return 65537 + rnd(s) % ((1u << 20) - 65536);
}

static int do_alloc(struct ent *e, uint64_t *s)
{
    size_t size = pick_size(s);
    size_t align = (size_t)16 << (rnd(s) % 9); /* 16 .. 4096 */
    int how = (int)(rnd(s) % 10);
    void *p = NULL;
    int zero = 0;
    const char *what = "";
    switch (how) {
    case 0: case 1: case 2: case 3:
        what = "malloc";
        p = malloc(size);
        break;
    case 4: case 5:
        what = "calloc";
        if (size % 8 == 0 && (rnd(s) & 1))
            p = launder(calloc(size / 8, 8));
        else if (rnd(s) & 1)
            p = launder(calloc(size, 1));
        else
            p = launder(calloc(1, size));
        zero = 1;
        break;
    case 6: {
        what = "posix_memalign";
        int rc = posix_memalign(&p, align, size);
        if (rc != 0) {
            FAIL("posix_memalign(%zu, %zu) failed: %s", align, size,
                 strerror(rc));
            return 0;
        }
        break;
    }
    case 7:
        what = "aligned_alloc";
        size = (size + align - 1) / align * align;
        p = aligned_alloc(align, size);
        break;
    case 8:
        what = "memalign";
        p = memalign(align, size);
        break;
    default:
        what = "realloc(NULL)";
        p = realloc(NULL, size);
        align = 16;
        break;
    }
    if (how < 6)
        align = 16;
    if (p == NULL) {
        FAIL("%s(%zu) returned NULL (errno %d)", what, size, errno);
        return 0;
    }
    if ((uintptr_t)p % align != 0) {
        FAIL("%s: %p is not aligned to %zu", what, p, align);
        return 0;
    }
    if (malloc_usable_size(p) < size) {
        FAIL("%s: malloc_usable_size(%p) = %zu < %zu", what, p,
             malloc_usable_size(p), size);
        return 0;
    }
    e->p = p;
    e->size = size;
    e->seed = (uint32_t)rnd(s);
    if (zero) {
        if (!check_range(e->p, 0, 0, size, 1, "calloc (zeroed)"))
            return 0;
        if (e->p[size - 1] != 0) {
            FAIL("calloc: last byte of %p not zero", p);
            return 0;
        }
    }
    fill_range(e->p, e->seed, 0, size);
    e->p[size - 1] = pat(e->seed, size - 1);
    return 1;
}

static int do_realloc(struct ent *e, uint64_t *s)
{
    size_t old = e->size;
    size_t size = pick_size(s);
    unsigned char *np = realloc(e->p, size);
    if (np == NULL) {
        FAIL("realloc(%p, %zu) returned NULL", (void *)e->p, size);
        return 0;
    }
    size_t keep = old < size ? old : size;
    if (!check_range(np, e->seed, 0, keep, 0, "realloc (preserved prefix)"))
        return 0;
    if (keep == old && np[old - 1] != pat(e->seed, old - 1)) {
        FAIL("realloc %zu->%zu: old last byte lost", old, size);
        return 0;
    }
    e->p = np;
    e->size = size;
    fill_range(np, e->seed, keep, size);
    np[size - 1] = pat(e->seed, size - 1);
    if (malloc_usable_size(np) < size) {
        FAIL("realloc: malloc_usable_size(%p) = %zu < %zu", (void *)np,
             malloc_usable_size(np), size);
        return 0;
    }
    return 1;
}

static void *worker(void *arg)
{
    int tid = (int)(intptr_t)arg;
    uint64_t s = ((uint64_t)g_rank * 1000 + (uint64_t)tid + 1) *
                 0x9e3779b97f4a7c15ull;
    struct ent *tab = calloc(SLOTS, sizeof *tab);
    if (tab == NULL) {
        FAIL("thread %d: calloc of the table failed", tid);
        return NULL;
    }
    for (long it = 0; it < g_iters; it++) {
        if (__atomic_load_n(&g_failures, __ATOMIC_RELAXED) > 20)
            break;
        struct ent *e = &tab[rnd(&s) % SLOTS];
        if (e->p == NULL) {
            do_alloc(e, &s);
            continue;
        }
        uint64_t r = rnd(&s) % 100;
        if (!check_block(e, "live block")) {
            e->p = NULL; /* leak it: it is corrupt */
            continue;
        }
        if (r < 45) {
            free(e->p);
            e->p = NULL;
        } else if (r < 75) {
            if (!do_realloc(e, &s))
                e->p = NULL;
        } else if (r < 92) {
            /* Swap with the exchange array: the block we get back was
             * (usually) allocated by another thread. */
            size_t k = rnd(&s) % XSLOTS;
            pthread_mutex_lock(&g_xlock);
            struct ent got = g_xchg[k];
            g_xchg[k] = *e;
            pthread_mutex_unlock(&g_xlock);
            *e = got;
            if (e->p != NULL && !check_block(e, "exchanged block"))
                e->p = NULL;
        } /* else: verify only */
    }
    for (int i = 0; i < SLOTS; i++) {
        if (tab[i].p != NULL) {
            check_block(&tab[i], "block at thread exit");
            free(tab[i].p);
        }
    }
    free(tab);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    get_rank_and_size(&rank, &size);
    if (argc > 1)
        g_iters = strtol(argv[1], NULL, 10);
    if (argc > 2)
        g_threads = atoi(argv[2]);
    if (g_iters < 0 || g_threads < 1 || g_threads > MAX_THREADS) {
        if (rank == 0)
            fprintf(stderr, "usage: alloc_stress [iterations [threads]]\n");
        MPI_Finalize();
        return 2;
    }

    pthread_t th[MAX_THREADS];
    for (int t = 0; t < g_threads; t++) {
        int rc = pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
        if (rc != 0) {
            FAIL("pthread_create: %s", strerror(rc));
            g_threads = t;
            break;
        }
    }
    for (int t = 0; t < g_threads; t++)
        pthread_join(th[t], NULL);
    for (int k = 0; k < XSLOTS; k++) {
        if (g_xchg[k].p != NULL) {
            check_block(&g_xchg[k], "block left in the exchange");
            free(g_xchg[k].p);
            g_xchg[k].p = NULL;
        }
    }

    /* The heap must still be usable by the main thread. */
    void *probe = malloc(12345);
    if (probe == NULL)
        FAIL("malloc after the stress returned NULL");
    else
        memset(probe, 0x5a, 12345);
    free(probe);

    int total = job_failures();
    print_result("", rank, size);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

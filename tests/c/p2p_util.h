/*
 * p2p_util.h - helpers shared by the point-to-point conformance programs
 * (tests/c/p2p_*.c). Include it after `#define _GNU_SOURCE`; it includes
 * testutil.h.
 *
 * The p2p programs are run under stock MPI and under heapmpi, and their
 * stdout must be byte-identical. So everything they print is deterministic
 * under MPI's rules (never a timing, an address, a completion order that MPI
 * leaves open, or a value that only one MPI defines), and every check that
 * fails also reports details on stderr (which is not compared).
 *
 * - section(name): names the part of the program now running; failure
 *   messages and the watchdog name it (P2P_SECTION_TIMES=1: the time each
 *   section took, on stderr).
 * - CHECK(cond, fmt, ...): EXPECT with the section in the message.
 * - MPI_OK(call): the call returns MPI_SUCCESS (else CHECK fails with the
 *   MPI error string).
 * - out(fmt, ...): appends "rank N: <text>\n" to this rank's report;
 *   out_flush() gathers every rank's report to rank 0, which prints them in
 *   rank order (collective over MPI_COMM_WORLD). Any number of lines of any
 *   length per rank.
 * - watchdog: a rank still running after P2P_WATCHDOG_SECONDS (30; every
 *   program takes a few seconds) says which section hangs, dumps its report
 *   so far on stderr and exits with status 4 (a hang becomes a readable
 *   failure, long before the harness's timeout kills the job).
 * - pretend nodes: p2p_node_size() is HEAPMPI_TEST_NODE_SIZE (0 when unset),
 *   p2p_same_node(a, b) tells whether world ranks a and b share a node under
 *   that setting. Only used to pick peers; never printed.
 * - p2p_map(n): anonymous mmap'd memory, outside heapmpi's heap.
 * - word patterns: wpattern_fill/wpattern_check, a fast 64-bit pattern keyed
 *   by (seed, byte offset) for large buffers, at any alignment and length.
 * - err_class_name(): MPI error class -> "MPI_ERR_..." name; level_name():
 *   MPI thread level -> its name.
 * - p2p_finish(): flushes the report, prints "rank N: <what> ok|FAILED",
 *   finalizes; returns the exit status for main.
 */
#ifndef HEAPMPI_P2P_UTIL_H
#define HEAPMPI_P2P_UTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC 12 flags
 * (-Wstringop-overflow) in every MPI_Waitall(..., MPI_STATUSES_IGNORE) under
 * -Werror; and failure messages are truncated on purpose. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wformat-truncation"

#ifndef P2P_WATCHDOG_SECONDS
#define P2P_WATCHDOG_SECONDS 30
#endif

static const char *volatile g_section = "init";

/* With P2P_SECTION_TIMES=1 in the environment, every rank prints on stderr
 * how long each section took (for finding slow parts; stderr is not
 * compared). */
static inline void section(const char *name)
{
    static double t0 = -1;
    static int times = -1;
    if (times < 0)
        times = getenv("P2P_SECTION_TIMES") != NULL;
    if (times) {
        int init = 0;
        MPI_Initialized(&init);
        if (init) {
            double t = MPI_Wtime();
            if (t0 >= 0)
                fprintf(stderr, "rank %d: section '%s' took %.3f s\n", g_rank,
                        g_section, t - t0);
            t0 = t;
        }
    }
    g_section = name;
}

#define CHECK(cond, ...)                                                \
    do {                                                                \
        if (!(cond)) {                                                  \
            char chk_msg_[512];                                         \
            snprintf(chk_msg_, sizeof chk_msg_, __VA_ARGS__);           \
            FAIL("[%s] %s", g_section, chk_msg_);                       \
        }                                                               \
    } while (0)

static inline const char *mpi_errstr(int rc)
{
    static __thread char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", rc);
    return s;
}

#define MPI_OK(call)                                                    \
    do {                                                                \
        int mpi_ok_rc_ = (call);                                        \
        CHECK(mpi_ok_rc_ == MPI_SUCCESS, "%s:%d: %s returned %d (%s)",  \
              __FILE__, __LINE__, #call, mpi_ok_rc_,                    \
              mpi_errstr(mpi_ok_rc_));                                  \
    } while (0)

/* ---- the per-rank report ---- */

static char *g_out;
static size_t g_out_len, g_out_cap;

static inline void out_raw(const char *s, size_t n)
{
    if (g_out_len + n + 1 > g_out_cap) {
        size_t cap = g_out_cap ? g_out_cap : 4096;
        while (cap < g_out_len + n + 1)
            cap *= 2;
        g_out = must(realloc(g_out, cap), "realloc", cap);
        g_out_cap = cap;
    }
    memcpy(g_out + g_out_len, s, n);
    g_out_len += n;
    g_out[g_out_len] = '\0';
}

__attribute__((format(printf, 1, 2))) static inline void out(const char *fmt,
                                                             ...)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "rank %d: ", g_rank);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    out_raw(line, len);
}

/* Collective over MPI_COMM_WORLD: rank 0 prints every rank's report, in
 * rank order; the reports are then emptied. */
static inline void out_flush(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int len = (int)g_out_len;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (rank == 0) {
        lens = must(calloc((size_t)size, sizeof *lens), "calloc", 0);
        displs = must(calloc((size_t)size, sizeof *displs), "calloc", 0);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        size_t total = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = (int)total;
            total += (size_t)lens[r];
        }
        all = must(malloc(total + 1), "malloc", total + 1);
    }
    MPI_Gatherv(g_out, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (rank == 0) {
        size_t total = (size_t)displs[size - 1] + (size_t)lens[size - 1];
        fwrite(all, 1, total, stdout);
        fflush(stdout);
        free(all);
        free(lens);
        free(displs);
    }
    g_out_len = 0;
    if (g_out != NULL)
        g_out[0] = '\0';
}

/* ---- watchdog ---- */

static void p2p_watchdog(int sig)
{
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "rank %d: FAIL: watchdog: still in section '%s' after "
                     "%d s (hang?)\n",
                     g_rank, g_section, P2P_WATCHDOG_SECONDS);
    if (n > 0) {
        ssize_t w = write(2, msg, (size_t)n);
        (void)w;
    }
    /* what this rank would have printed so far (its last line shows how
     * far it got) */
    if (g_out != NULL && g_out_len > 0) {
        static const char head[] = "watchdog: this rank's report so far:\n";
        ssize_t w = write(2, head, sizeof head - 1);
        w = write(2, g_out, g_out_len);
        (void)w;
    }
    _exit(4);
}

static inline void p2p_start_watchdog(void)
{
    signal(SIGALRM, p2p_watchdog);
    alarm(P2P_WATCHDOG_SECONDS);
}

/* ---- memory outside the shared heap ---- */

/* n bytes of anonymous mmap'd memory: never from malloc, so never in
 * heapmpi's shared heap (aborts on failure). Give it back with munmap. */
static inline void *p2p_map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        FAIL("mmap(%zu) failed", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* ---- pretend nodes ---- */

static inline int p2p_node_size(void)
{
    const char *v = getenv("HEAPMPI_TEST_NODE_SIZE");
    if (v == NULL)
        return 0;
    int n = atoi(v);
    return n > 0 ? n : 0;
}

static inline int p2p_same_node(int a, int b)
{
    int n = p2p_node_size();
    return n == 0 || a / n == b / n;
}

/* ---- fast word pattern for large buffers ---- */

static inline uint64_t wpattern_word(uint64_t seed, uint64_t word)
{
    uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull ^ word * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return x;
}

/* Byte i of the word pattern (the pattern of byte offset i in the message,
 * independent of the buffer's address). */
static inline unsigned char wpattern_byte(uint64_t seed, size_t i)
{
    return (unsigned char)(wpattern_word(seed, i / 8) >> (8 * (i % 8)));
}

static inline void wpattern_fill(void *p, size_t n, uint64_t seed)
{
    unsigned char *c = p;
    size_t i = 0;
    for (; i < n && i % 8 != 0; i++)
        c[i] = wpattern_byte(seed, i);
    for (; i + 8 <= n; i += 8) {
        uint64_t w = wpattern_word(seed, i / 8);
        memcpy(c + i, &w, 8);
    }
    for (; i < n; i++)
        c[i] = wpattern_byte(seed, i);
}

/* 1 if the n bytes at p hold the pattern; else CHECK fails naming the first
 * wrong byte, and 0. */
static inline int wpattern_check(const void *p, size_t n, uint64_t seed,
                                 const char *what)
{
    const unsigned char *c = p;
    size_t i = 0;
    for (; i < n && i % 8 != 0; i++)
        if (c[i] != wpattern_byte(seed, i))
            goto bad;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = wpattern_word(seed, i / 8), g;
        memcpy(&g, c + i, 8);
        if (g != w) {
            while (c[i] == wpattern_byte(seed, i))
                i++;
            goto bad;
        }
    }
    for (; i < n; i++)
        if (c[i] != wpattern_byte(seed, i))
            goto bad;
    return 1;
bad:
    CHECK(0, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n,
          c[i], wpattern_byte(seed, i));
    return 0;
}

/* A small order-sensitive checksum (FNV-1a, 32 bit). */
static inline uint32_t fnv1a(uint32_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 16777619u;
    }
    return h;
}
#define FNV_INIT 2166136261u

/* ---- error classes ---- */

static inline const char *err_class_name(int cls)
{
#define C(x)                                                            \
    if (cls == x)                                                       \
        return #x;
    C(MPI_SUCCESS)
    C(MPI_ERR_BUFFER)
    C(MPI_ERR_COUNT)
    C(MPI_ERR_TYPE)
    C(MPI_ERR_TAG)
    C(MPI_ERR_COMM)
    C(MPI_ERR_RANK)
    C(MPI_ERR_REQUEST)
    C(MPI_ERR_ROOT)
    C(MPI_ERR_GROUP)
    C(MPI_ERR_OP)
    C(MPI_ERR_TOPOLOGY)
    C(MPI_ERR_DIMS)
    C(MPI_ERR_ARG)
    C(MPI_ERR_UNKNOWN)
    C(MPI_ERR_TRUNCATE)
    C(MPI_ERR_OTHER)
    C(MPI_ERR_INTERN)
    C(MPI_ERR_IN_STATUS)
    C(MPI_ERR_PENDING)
#undef C
    static __thread char s[32];
    snprintf(s, sizeof s, "class %d", cls);
    return s;
}

/* The class of an error code, or the code itself if it is not one. */
static inline int err_class(int rc)
{
    int cls = rc;
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        return rc;
    return cls;
}

/* An MPI thread level's name. */
static inline const char *level_name(int l)
{
    switch (l) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
        return "MPI_THREAD_MULTIPLE";
    default:
        return "unknown";
    }
}

/* ---- start / end ---- */

/* MPI_Init + rank/size + watchdog. */
static inline void p2p_init(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    get_rank_and_size(rank, size);
    p2p_start_watchdog();
}

/* MPI_Init_thread + rank/size + watchdog; returns the level provided. */
static inline int p2p_init_thread(int *argc, char ***argv, int required, int *rank,
                                  int *size)
{
    int provided = -1;
    MPI_Init_thread(argc, argv, required, &provided);
    get_rank_and_size(rank, size);
    p2p_start_watchdog();
    return provided;
}

/* Flush the report, print the verdict line, finalize. */
static inline int p2p_finish(const char *what, int rank, int size)
{
    section("finish");
    out_flush();
    int total = job_failures();
    print_result(what, rank, size);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

#endif /* HEAPMPI_P2P_UTIL_H */

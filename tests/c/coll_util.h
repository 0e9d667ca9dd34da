/*
 * coll_util.h - helpers shared by the collective conformance programs
 * (tests/c/coll_*.c). Include it after `#define _GNU_SOURCE`; it includes
 * p2p_util.h (section, CHECK, MPI_OK, out/out_flush, the watchdog, word
 * patterns, fnv1a, err_class_name, p2p_finish) and testutil.h.
 *
 * The coll programs run under the stock MPI and under heapmpi, and their
 * stdout must be byte-identical: they print only what the inputs determine
 * (exact integer results, checksums of exact results, verdicts), never a
 * time, an address, or a floating-point value whose last bits depend on the
 * order in which an implementation combined the contributions. They run at
 * 1, 2 and 4 ranks.
 *
 * Extra helpers:
 * - mix64(a, b): a 64-bit hash step, for seeds and checksums;
 * - hash_bytes(h, p, n): a fast checksum of n bytes (word-wise, any
 *   alignment), order-sensitive;
 * - same_on_all(comm, h, what): every member of comm holds the same 64-bit
 *   value h (Allgather of its 8 bytes as MPI_BYTE); CHECK fails otherwise;
 * - coll_init / coll_init_thread / coll_finish: p2p_init & co. with a
 *   longer watchdog (the 4-rank runs are oversubscribed on two cores).
 */
#ifndef HEAPMPI_COLL_UTIL_H
#define HEAPMPI_COLL_UTIL_H

#ifndef P2P_WATCHDOG_SECONDS
#define P2P_WATCHDOG_SECONDS 90
#endif

#include "p2p_util.h"

/* Open MPI defines MPI_UNWEIGHTED as (int *)2, which GCC 12 flags
 * (-Wstringop-overread) in every MPI_Dist_graph_create_adjacent call. */
#pragma GCC diagnostic ignored "-Wstringop-overread"

#define MIB (1 << 20)

static inline uint64_t mix64(uint64_t a, uint64_t b)
{
    uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 32;
    return x;
}

/* Seed of several small integers. */
static inline uint64_t seed6(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                             uint64_t e, uint64_t f)
{
    uint64_t h = mix64(0x1234567ull, a);
    h = mix64(h, b);
    h = mix64(h, c);
    h = mix64(h, d);
    h = mix64(h, e);
    return mix64(h, f);
}

/* A checksum of n bytes, word-wise (fast for MiB buffers). */
static inline uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    size_t i = 0;
    uint64_t acc = h ^ (uint64_t)n;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, c + i, 8);
        acc = (acc ^ w) * 0x100000001b3ull + (acc >> 29);
    }
    for (; i < n; i++)
        acc = (acc ^ c[i]) * 0x100000001b3ull + (acc >> 29);
    return mix64(acc, n);
}

/* Every member of comm holds the same value (compared bitwise). */
static inline int same_on_all(MPI_Comm comm, uint64_t h, const char *what)
{
    int n;
    MPI_Comm_size(comm, &n);
    uint64_t *all = must(malloc((size_t)n * 8), "malloc", (size_t)n * 8);
    MPI_OK(MPI_Allgather(&h, 8, MPI_BYTE, all, 8, MPI_BYTE, comm));
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= all[i] == h;
    CHECK(ok, "%s: the members do not all hold the same bits", what);
    free(all);
    return ok;
}

static inline void coll_init(int *argc, char ***argv, int *rank, int *size)
{
    p2p_init(argc, argv, rank, size);
}

static inline int coll_init_thread(int *argc, char ***argv, int required,
                                   int *rank, int *size)
{
    return p2p_init_thread(argc, argv, required, rank, size);
}

static inline int coll_finish(const char *what, int rank, int size)
{
    return p2p_finish(what, rank, size);
}

/* The pretend node of a world rank (HEAPMPI_TEST_NODE_SIZE; 0 when unset). */
static inline int coll_node_of(int world_rank)
{
    int n = p2p_node_size();
    return n == 0 ? 0 : world_rank / n;
}

#endif /* HEAPMPI_COLL_UTIL_H */

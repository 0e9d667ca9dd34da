/*
 * share_pointers.c - heapmpi integration test: pointers are meaningful in
 * every node-local rank.
 *
 * Rank 0 allocates NB0 blocks with every allocation entry point, fills them
 * with a pattern derived from (owner rank, block index, offset) and
 * broadcasts ONLY the pointer values and sizes (MPI_UINT64_T). Every other
 * rank dereferences those pointers and verifies the bytes. Every rank > 0
 * also allocates one block of its own; all (pointer, size) pairs are
 * allgathered and every rank verifies every other rank's block. Writes go
 * both ways too: ranks > 0 store an acknowledgement into a mailbox that rank
 * 0 allocated, and rank 0 stamps a marker into each other rank's block.
 *
 * Only meaningful with the heapmpi shared heap active: without it the
 * pointers are dangling in the other ranks (the program then dies with a
 * clear message from its SIGSEGV handler).
 *
 * Output (stdout, rank 0 only, rank order):
 *   rank 0: verified <nprocs-1> blocks
 *   rank r: verified <NB0 + nprocs-2> blocks      (r > 0)
 * Exit status 0 on success, 1 on a verification failure, 3 on a fault.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE 160 /* print_ordered() line width */
#include "testutil.h"

#define NB0 10

static char g_fault_msg[256] = "share_pointers: fatal signal\n";

static void fault_handler(int sig)
{
    (void)sig;
    ssize_t n = write(2, g_fault_msg, strlen(g_fault_msg));
    (void)n;
    _exit(3);
}

static void install_fault_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fault_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

/* Returns 1 if ok; reports the first mismatch. */
static int check(const void *p, size_t from, size_t to, int owner, int idx,
                 const char *what)
{
    const unsigned char *c = p;
    snprintf(g_fault_msg, sizeof g_fault_msg,
             "rank %d: FAIL: fault while reading %s (owner rank %d, block %d)"
             " at %p: pointer not mapped here (heap not shared?)\n",
             g_rank, what, owner, idx, p);
    size_t i = pattern_mismatch(p, from, to, owner, idx);
    if (i == to)
        return 1;
    FAIL("%s (owner rank %d, block %d, %p): byte %zu is 0x%02x, "
         "expected 0x%02x", what, owner, idx, p, i, c[i],
         pattern_byte(owner, idx, i));
    return 0;
}

/* Like must(), but a failing rank takes the whole job down with it. */
static void *must_or_abort(void *p, const char *what, size_t size)
{
    if (p == NULL) {
        fprintf(stderr, "rank %d: FAIL: %s(%zu) returned NULL\n", g_rank,
                what, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);
    install_fault_handler();

    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "share_pointers: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    const long page = sysconf(_SC_PAGESIZE);
    void *blk[NB0] = {0};
    uint64_t ptrs[NB0] = {0}, sizes[NB0] = {0};
    const char *names[NB0] = {
        "malloc(1000)", "calloc(333,7)", "posix_memalign(64,5000)",
        "posix_memalign(4096,10000)", "realloc(100->100000)",
        "aligned_alloc(256,4096)", "memalign(128,3000)", "valloc(8192)",
        "malloc(2MiB+3)", "calloc(1,3MiB)",
    };

    if (rank == 0) {
        size_t sz[NB0] = {1000, 333 * 7, 5000, 10000, 100000,
                          4096, 3000, 8192, (2u << 20) + 3, 3u << 20};
        blk[0] = must_or_abort(malloc(sz[0]), "malloc", sz[0]);
        blk[1] = must_or_abort(launder(calloc(333, 7)), "calloc", sz[1]);
        if (posix_memalign(&blk[2], 64, sz[2]) != 0 || !blk[2])
            must_or_abort(NULL, "posix_memalign", sz[2]);
        check_aligned(blk[2], 64, names[2]);
        if (posix_memalign(&blk[3], 4096, sz[3]) != 0 || !blk[3])
            must_or_abort(NULL, "posix_memalign", sz[3]);
        check_aligned(blk[3], 4096, names[3]);
        {
            void *small = must_or_abort(malloc(100), "malloc", 100);
            pattern_fill(small, 0, 100, 0, 4);
            blk[4] = must_or_abort(realloc(small, sz[4]), "realloc", sz[4]);
            if (!check(blk[4], 0, 100, 0, 4, "realloc'd block (prefix)"))
                FAIL("realloc did not preserve the contents");
        }
        blk[5] = must_or_abort(aligned_alloc(256, sz[5]), "aligned_alloc",
                               sz[5]);
        check_aligned(blk[5], 256, names[5]);
        blk[6] = must_or_abort(memalign(128, sz[6]), "memalign", sz[6]);
        check_aligned(blk[6], 128, names[6]);
        blk[7] = must_or_abort(valloc(sz[7]), "valloc", sz[7]);
        check_aligned(blk[7], (size_t)page, names[7]);
        blk[8] = must_or_abort(malloc(sz[8]), "malloc", sz[8]);
        blk[9] = must_or_abort(launder(calloc(1, sz[9])), "calloc", sz[9]);

        /* calloc'd blocks must be zero before we fill them. */
        for (int b = 1; b < NB0; b += 8) {
            const unsigned char *c = blk[b];
            for (size_t i = 0; i < sz[b]; i++)
                if (c[i] != 0) {
                    FAIL("%s: byte %zu is 0x%02x, not zero", names[b], i, c[i]);
                    break;
                }
        }
        for (int b = 0; b < NB0; b++) {
            if (malloc_usable_size(blk[b]) < sz[b])
                FAIL("%s: malloc_usable_size %zu < %zu", names[b],
                     malloc_usable_size(blk[b]), sz[b]);
            pattern_fill(blk[b], b == 4 ? 100 : 0, sz[b], 0, b);
            ptrs[b] = (uint64_t)(uintptr_t)blk[b];
            sizes[b] = sz[b];
        }
    }

    /* Only pointer values and sizes travel through MPI. */
    MPI_Bcast(ptrs, NB0, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(sizes, NB0, MPI_UINT64_T, 0, MPI_COMM_WORLD);

    /* Rank 0 contributes an acknowledgement mailbox, the others a block. */
    uint64_t mine[2];
    uint64_t *mailbox = NULL;
    unsigned char *own = NULL;
    size_t own_size = 0;
    if (rank == 0) {
        mailbox = must_or_abort(calloc((size_t)size, sizeof *mailbox),
                                "calloc", (size_t)size * sizeof *mailbox);
        mine[0] = (uint64_t)(uintptr_t)mailbox;
        mine[1] = (uint64_t)size * sizeof *mailbox;
    } else {
        own_size = 4096 + 1000 * (size_t)rank;
        own = must_or_abort(malloc(own_size), "malloc", own_size);
        pattern_fill(own, 0, own_size, rank, 0);
        mine[0] = (uint64_t)(uintptr_t)own;
        mine[1] = own_size;
    }
    size_t all_size = 2 * sizeof(uint64_t) * (size_t)size;
    uint64_t *all = must_or_abort(malloc(all_size), "malloc", all_size);
    MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD);

    int verified = 0;
    if (rank != 0) {
        for (int b = 0; b < NB0; b++) {
            void *p = (void *)(uintptr_t)ptrs[b];
            if (p == NULL) {
                FAIL("got a NULL pointer for rank 0's block %d", b);
                continue;
            }
            if (check(p, 0, (size_t)sizes[b], 0, b, names[b]))
                verified++;
        }
    }
    for (int r = 1; r < size; r++) {
        if (r == rank)
            continue;
        void *p = (void *)(uintptr_t)all[2 * r];
        if (p == NULL) {
            FAIL("got a NULL pointer for rank %d's block", r);
            continue;
        }
        if (check(p, 0, (size_t)all[2 * r + 1], r, 0, "peer block"))
            verified++;
    }

    /* Writes in both directions, once every rank has finished reading
     * (rank 0 overwrites byte 0 of the other ranks' blocks). */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        uint64_t *box = (uint64_t *)(uintptr_t)all[0];
        snprintf(g_fault_msg, sizeof g_fault_msg,
                 "rank %d: FAIL: fault writing rank 0's mailbox at %p\n", rank,
                 (void *)box);
        __atomic_store_n(&box[rank], 0xacc0000000ull + (uint64_t)rank,
                         __ATOMIC_SEQ_CST);
    } else {
        for (int r = 1; r < size; r++) {
            unsigned char *p = (unsigned char *)(uintptr_t)all[2 * r];
            snprintf(g_fault_msg, sizeof g_fault_msg,
                     "rank 0: FAIL: fault writing rank %d's block at %p\n", r,
                     (void *)p);
            __atomic_store_n(&p[0], (unsigned char)~pattern_byte(r, 0, 0),
                             __ATOMIC_SEQ_CST);
        }
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    MPI_Barrier(MPI_COMM_WORLD);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            uint64_t v = __atomic_load_n(&mailbox[r], __ATOMIC_SEQ_CST);
            if (v != 0xacc0000000ull + (uint64_t)r)
                FAIL("mailbox slot %d holds 0x%llx: rank %d's store through "
                     "the shared pointer is not visible", r,
                     (unsigned long long)v, r);
        }
        /* Our own blocks must be untouched by the readers. */
        for (int b = 0; b < NB0; b++)
            check(blk[b], 0, (size_t)sizes[b], 0, b, "own block after sharing");
    } else {
        unsigned char first = __atomic_load_n(&own[0], __ATOMIC_SEQ_CST);
        if (first != (unsigned char)~pattern_byte(rank, 0, 0))
            FAIL("own block byte 0 is 0x%02x: rank 0's store through the "
                 "shared pointer is not visible", first);
        check(own, 1, own_size, rank, 0, "own block after sharing");
    }

    /* Nobody may touch the blocks any more once rank 0 starts freeing. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int b = 0; b < NB0; b++)
            free(blk[b]);
        free(mailbox);
    } else {
        free(own);
    }
    free(all);

    char line[LINE];
    snprintf(line, sizeof line, "rank %d: verified %d blocks", rank, verified);
    print_ordered(line, rank, size);

    int total = job_failures();
    if (rank == 0 && total != 0)
        fprintf(stderr, "share_pointers: FAILED with %d failure(s)\n", total);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

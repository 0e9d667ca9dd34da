/*
 * p2p_large.c - point-to-point conformance: large messages and the sizes
 * around protocol thresholds.
 *
 * Why: heapmpi switches protocols with the message size (immediate, single
 * copy, synergistic with blocks claimed by both sides) and with where the
 * send buffer lives (in the shared heap, or not: then it is first copied to
 * a shared buffer). Every byte must arrive at every size, in particular at a
 * threshold and one byte either side of it, at odd alignments, and for send
 * or receive buffers that are mmap'd, static or on the stack.
 *
 * Every rank sends to its right neighbour and receives from its left one
 * (with pretend nodes some of these pairs are remote). Every message is
 * filled with a 64-bit pattern keyed by (sender, case) and fully checked.
 *
 * Sections:
 *  A. 64 MiB, malloc'd buffers: Sendrecv, and Isend + Irecv + Waitall;
 *  B. 64 MiB from an anonymous mmap'd send buffer (not in the heap) into a
 *     malloc'd one, and from malloc'd into mmap'd;
 *  C. 8 MiB + 1 from an odd address into an odd address;
 *  D. every power of two from 1 KiB to 8 MiB, and one byte less and more,
 *     received into a larger buffer (Get_count checked, nothing written past
 *     the message);
 *  E. 4 MiB static buffers and 256 KiB stack buffers.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: large ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "p2p_util.h"

#define MIB ((size_t)1 << 20)
#define BIG (64 * MIB)
#define GUARD 64

static int g_left, g_right, g_me;

static uint64_t seed_of(int src, int c)
{
    return ((uint64_t)src << 32) ^ (uint64_t)c;
}

/* Sendrecv of n bytes (case c): right gets ours, we get the left's. */
static int exchange(unsigned char *sb, unsigned char *rb, size_t n, int c,
                    int nonblocking, const char *what)
{
    wpattern_fill(sb, n, seed_of(g_me, c));
    MPI_Status st;
    if (nonblocking) {
        MPI_Request r[2];
        MPI_Status sts[2];
        MPI_OK(MPI_Irecv(rb, (int)n, MPI_BYTE, g_left, c, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, g_right, c, MPI_COMM_WORLD, &r[1]));
        MPI_OK(MPI_Waitall(2, r, sts));
        st = sts[0];
    } else {
        MPI_OK(MPI_Sendrecv(sb, (int)n, MPI_BYTE, g_right, c, rb, (int)n, MPI_BYTE,
                            g_left, c, MPI_COMM_WORLD, &st));
    }
    int cnt = -1;
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == (int)n && st.MPI_SOURCE == g_left, "%s: count %d source %d", what,
          cnt, st.MPI_SOURCE);
    return cnt == (int)n && wpattern_check(rb, n, seed_of(g_left, c), what);
}

static void huge(void)
{
    section("A 64 MiB malloc");
    unsigned char *sb = must(malloc(BIG), "malloc", BIG);
    unsigned char *rb = must(malloc(BIG), "malloc", BIG);
    int a1 = exchange(sb, rb, BIG, 1, 0, "64 MiB Sendrecv");
    int a2 = exchange(sb, rb, BIG, 2, 1, "64 MiB Isend/Irecv");
    out("A 64 MiB malloc'd: Sendrecv %s, Isend/Irecv %s", a1 ? "right" : "WRONG",
        a2 ? "right" : "WRONG");

    section("B 64 MiB mmap");
    unsigned char *ms = p2p_map(BIG), *mr = p2p_map(BIG);
    int b1 = exchange(ms, rb, BIG, 3, 0, "64 MiB mmap -> malloc");
    int b2 = exchange(sb, mr, BIG, 4, 1, "64 MiB malloc -> mmap");
    int b3 = exchange(ms, mr, BIG, 5, 0, "64 MiB mmap -> mmap");
    out("B 64 MiB: mmap'd send %s, mmap'd receive %s, both mmap'd %s",
        b1 ? "right" : "WRONG", b2 ? "right" : "WRONG", b3 ? "right" : "WRONG");
    munmap(ms, BIG);
    munmap(mr, BIG);

    section("C unaligned");
    int c1 = exchange(sb + 1, rb + 3, 8 * MIB + 1, 6, 0, "8 MiB + 1, odd addresses");
    int c2 = exchange(sb + 7, rb + 5, 100001, 7, 1, "100001 B, odd addresses");
    out("C odd addresses: 8 MiB + 1 %s, 100001 B %s", c1 ? "right" : "WRONG",
        c2 ? "right" : "WRONG");
    free(sb);
    free(rb);
}

static void thresholds(void)
{
    section("D thresholds");
    size_t cap = 8 * MIB + 1 + GUARD;
    unsigned char *sb = must(malloc(cap), "malloc", cap);
    unsigned char *rb = must(malloc(cap), "malloc", cap);
    int good = 0, total = 0, c = 100;
    for (size_t p = 1024; p <= 8 * MIB; p *= 2)
        for (int d = -1; d <= 1; d++, c++) {
            size_t n = d < 0 ? p - 1 : p + (size_t)d;
            wpattern_fill(sb, n, seed_of(g_me, c));
            memset(rb + n, 0xA5, GUARD);
            MPI_Status st;
            MPI_OK(MPI_Sendrecv(sb, (int)n, MPI_BYTE, g_right, c, rb,
                                (int)(n + GUARD), MPI_BYTE, g_left, c,
                                MPI_COMM_WORLD, &st));
            int cnt = -1;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            char what[48];
            snprintf(what, sizeof what, "%zu bytes", n);
            int ok = cnt == (int)n && wpattern_check(rb, n, seed_of(g_left, c), what);
            for (int i = 0; i < GUARD; i++)
                ok &= rb[n + (size_t)i] == 0xA5;
            CHECK(ok, "%zu bytes: count %d or data or guard wrong", n, cnt);
            good += ok;
            total++;
        }
    out("D 1 KiB .. 8 MiB powers of two, -1 and +1 byte: %d of %d right", good, total);
    free(sb);
    free(rb);
}

static unsigned char s_send[4 * MIB], s_recv[4 * MIB];

static void static_and_stack(void)
{
    section("E static and stack");
    int e1 = exchange(s_send, s_recv, 4 * MIB, 200, 0, "4 MiB static");
    int e2 = exchange(s_send + 3, s_recv, 4 * MIB - 3, 201, 1, "4 MiB static, odd");
    unsigned char sb[256 * 1024], rb[256 * 1024];
    int e3 = exchange(sb, rb, sizeof sb, 202, 0, "256 KiB stack");
    int e4 = exchange(sb, s_recv, sizeof sb, 203, 1, "256 KiB stack -> static");
    out("E static 4 MiB %s, static odd %s, stack 256 KiB %s, stack -> static %s",
        e1 ? "right" : "WRONG", e2 ? "right" : "WRONG", e3 ? "right" : "WRONG",
        e4 ? "right" : "WRONG");
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_left = (rank - 1 + size) % size;
    g_right = (rank + 1) % size;
    huge();
    thresholds();
    static_and_stack();
    return p2p_finish("large", rank, size);
}

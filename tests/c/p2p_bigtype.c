/*
 * p2p_bigtype.c - point-to-point conformance: messages described by
 * derived datatypes of 2 GiB and more.
 *
 * Why: codes send more than INT_MAX elements the way BigMPI (Hammond,
 * Schaefer and Latham, ExaMPI 2014) taught: one element of a struct of a
 * contiguous type of INT_MAX-element chunks and a remainder (the MPICH
 * test suite's datatype/large_type_sendrec does the same). heapmpi packed
 * every derived type with MPI_Pack, whose int sizes stop at 2 GiB: the
 * send aborted in MPI_Pack (MPI_ERR_TRUNCATE) under heapmpi and passed
 * stock. heapmpi now sends a derived type whose blocks abut as the bytes
 * they are, and packs a really non-contiguous message of 2 GiB or more in
 * pieces (or with MPI_Pack_c where the MPI has it).
 *
 * Rank 0 sends to rank 1 (other ranks only take part in the barriers):
 *  A. 1 MiB + 3 bytes as one element of a BigMPI-style struct with 64 KiB
 *     chunks (contiguous(16, contiguous(65536, MPI_CHAR)) and a 3-byte
 *     remainder): Isend/Irecv, then Send/Recv, every byte checked;
 *  B. with the argument "big": 2 GiB + 5 bytes the same way with INT_MAX
 *     chunks (large_type_sendrec), every byte checked, the count by
 *     MPI_Get_elements_x;
 *  C. with "big": 1025 elements of a vector of two 1 MiB blocks with a
 *     64-byte gap (2 GiB + 2 MiB packed, 2 GiB + 2 MiB + 64 KiB spanned),
 *     every byte and every gap checked.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: bigtype ok". Exit status 0 on success, 1 on a failed check.
 */
#define P2P_WATCHDOG_SECONDS 120
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

/* One element of `count` chars: a struct of count / chunk chunks and the
 * remainder, as BigMPI's MPIX_Type_contiguous_x. */
static MPI_Datatype bigmpi_type(MPI_Count count, int chunk_len)
{
    MPI_Count c = count / chunk_len, r = count % chunk_len;
    MPI_Datatype chunk, chunks, rem, t;
    MPI_OK(MPI_Type_contiguous(chunk_len, MPI_CHAR, &chunk));
    MPI_OK(MPI_Type_contiguous((int)c, chunk, &chunks));
    MPI_OK(MPI_Type_contiguous((int)r, MPI_CHAR, &rem));
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, (MPI_Aint)c * chunk_len};
    MPI_Datatype types[2] = {chunks, rem};
    MPI_OK(MPI_Type_create_struct(2, bl, disp, types, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_Type_free(&chunk);
    MPI_Type_free(&chunks);
    MPI_Type_free(&rem);
    return t;
}

/* The pattern: 64-bit words numbered by their byte offset (so a piece
 * landing anywhere else is caught), written and checked a word at a time
 * (2 GiB in a fraction of a second); a tail byte is its offset's low byte. */
static uint64_t word(size_t i)
{
    return (uint64_t)i * 0x9e3779b97f4a7c15ull ^ (uint64_t)i;
}

/* Fills [from, to) of b, both multiples of 8 but for the end of b. */
static void fill_range(unsigned char *b, size_t from, size_t to)
{
    size_t i = from;
    for (; i + 8 <= to; i += 8) {
        uint64_t w = word(i);
        memcpy(b + i, &w, 8);
    }
    for (; i < to; i++)
        b[i] = (unsigned char)i;
}

/* The first wrong byte offset of [from, to) of b, or `to`. */
static size_t check_range(const unsigned char *b, size_t from, size_t to)
{
    size_t i = from;
    for (; i + 8 <= to; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        if (w != word(i))
            return i;
    }
    for (; i < to; i++)
        if (b[i] != (unsigned char)i)
            return i;
    return to;
}

static void fill(unsigned char *b, size_t n)
{
    fill_range(b, 0, n);
}

static size_t check(const unsigned char *b, size_t n)
{
    return check_range(b, 0, n);
}

static unsigned char *alloc(size_t n)
{
    return must(malloc(n), "malloc", n);
}

/* One element of a BigMPI type of n bytes, rank 0 to rank 1. */
static void bigmpi(int rank, size_t n, int chunk_len, int nonblocking, const char *what)
{
    MPI_Datatype t = bigmpi_type((MPI_Count)n, chunk_len);
    if (rank == 0) {
        unsigned char *b = alloc(n);
        fill(b, n);
        if (nonblocking) {
            MPI_Request r;
            MPI_OK(MPI_Isend(b, 1, t, 1, 7, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Send(b, 1, t, 1, 7, MPI_COMM_WORLD));
        }
        free(b);
    } else if (rank == 1) {
        unsigned char *b = alloc(n);
        memset(b, 0xee, n);
        MPI_Status st;
        if (nonblocking) {
            MPI_Request r;
            MPI_OK(MPI_Irecv(b, 1, t, 0, 7, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Wait(&r, &st));
        } else {
            MPI_OK(MPI_Recv(b, 1, t, 0, 7, MPI_COMM_WORLD, &st));
        }
        MPI_Count elems = -1;
        MPI_OK(MPI_Get_elements_x(&st, MPI_CHAR, &elems));
        size_t bad = check(b, n);
        CHECK(bad == n, "%s: byte %zu of %zu wrong", what, bad, n);
        CHECK(elems == (MPI_Count)n, "%s: %lld elements", what, (long long)elems);
        out("%s: %s", what, bad == n && elems == (MPI_Count)n ? "right" : "WRONG");
        free(b);
    }
    MPI_Type_free(&t);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* `count` elements of two `block`-byte blocks `gap` bytes apart, rank 0 to
 * rank 1; the gaps of the receive buffer must stay as they were. */
static void gapped(int rank, int count, int block, int gap, const char *what)
{
    MPI_Datatype t;
    MPI_OK(MPI_Type_vector(2, block, block + gap, MPI_CHAR, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
    size_t span = (size_t)(count - 1) * (size_t)ext + 2 * (size_t)block + gap;
    unsigned char *b = alloc(span);
    if (rank == 0) {
        fill(b, span);
        MPI_OK(MPI_Send(b, count, t, 1, 8, MPI_COMM_WORLD));
    } else if (rank == 1) {
        memset(b, 0xee, span);
        MPI_Status st;
        MPI_OK(MPI_Recv(b, count, t, 0, 8, MPI_COMM_WORLD, &st));
        /* per element: block, gap (untouched), block */
        size_t bad = span;
        for (int k = 0; k < count && bad == span; k++) {
            size_t e = (size_t)k * (size_t)ext, g = e + (size_t)block;
            size_t r = check_range(b, e, g);
            if (r != g) {
                bad = r;
                break;
            }
            for (size_t i = g; i < g + (size_t)gap; i++)
                if (b[i] != 0xee) {
                    bad = i;
                    break;
                }
            size_t s2 = g + (size_t)gap, t2 = s2 + (size_t)block;
            r = check_range(b, s2, t2);
            if (r != t2)
                bad = r;
        }
        CHECK(bad == span, "%s: byte %zu of %zu wrong", what, bad, span);
        out("%s: %s", what, bad == span ? "right" : "WRONG");
    }
    free(b);
    MPI_Type_free(&t);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    int big = argc > 1 && strcmp(argv[1], "big") == 0;
    section("A 1 MiB BigMPI type");
    bigmpi(rank, ((size_t)1 << 20) + 3, 1 << 16, 1, "A 1 MiB + 3 BigMPI Isend/Irecv");
    bigmpi(rank, ((size_t)1 << 20) + 3, 1 << 16, 0, "A 1 MiB + 3 BigMPI Send/Recv");
    if (big) {
        section("B 2 GiB BigMPI type");
        bigmpi(rank, ((size_t)1 << 31) + 5, INT_MAX, 1, "B 2 GiB + 5 BigMPI Isend/Irecv");
        section("C 2 GiB gapped");
        gapped(rank, 1025, 1 << 20, 64, "C 1025 x 2 MiB with gaps");
    }
    return p2p_finish("bigtype", rank, size);
}

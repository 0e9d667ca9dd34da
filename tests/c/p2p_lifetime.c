/*
 * p2p_lifetime.c - point-to-point conformance: objects freed while
 * operations that use them are pending.
 *
 * Why: MPI lets a program free a derived datatype right after MPI_Isend /
 * MPI_Irecv ("any communication that is currently using it completes
 * normally"), free the datatype of a persistent request between its
 * creation and its starts, free a communicator with requests pending on
 * it, and detach and free its Bsend buffer. heapmpi keeps requests of its
 * own and must hold what they use; and it must refuse a buffered send the
 * real MPI refuses (no attached buffer, or too small a one), with the
 * real MPI's error class.
 *
 * Sections (pairs: even rank s with s+1, and each rank with itself):
 *  A. Irecv of a vector type and Isend of an indexed type, both types
 *     freed before the message is sent / the receive is waited for;
 *     also with the pair's messages under way while the types are freed;
 *  B. persistent Send_init/Recv_init of derived types, types freed, then
 *     1000 rounds of Startall + Waitall;
 *  C. a duplicate communicator freed with an Irecv pending on it (and a
 *     persistent request made on it), then the message sent and received;
 *  D. buffered sends: with no buffer attached and with one too small
 *     (under MPI_ERRORS_RETURN: the error class is printed, as the real MPI
 *     decides), Ibsend then Buffer_detach and free of the buffer before the
 *     receiver takes the message.
 *
 * Output (stdout, rank 0, rank order): one line per rank and section, then
 * "rank N: lifetime ok".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

static int g_me, g_size;

/* Section A with peer p. Returns the number of checks that passed. */
static int freed_types(int p)
{
    enum { N = 1000 };
    int *src = must(malloc(sizeof(int) * 2 * N), "malloc", sizeof(int) * 2 * N);
    int *dst = must(malloc(sizeof(int) * 2 * N), "malloc", sizeof(int) * 2 * N);
    int good = 0;
    for (int i = 0; i < 2 * N; i++)
        src[i] = i * 7 + g_me;
    for (int round = 0; round < 20; round++) {
        MPI_Datatype vec, idx;
        /* Receive: N ints at stride 2. Send: the even elements, indexed. */
        MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
        MPI_OK(MPI_Type_commit(&vec));
        int lens[4] = {N / 4, N / 4, N / 4, N / 4}, disp[4];
        for (int k = 0; k < 4; k++)
            disp[k] = k * (N / 4);
        MPI_OK(MPI_Type_indexed(4, lens, disp, MPI_INT, &idx));
        MPI_OK(MPI_Type_commit(&idx));
        for (int i = 0; i < 2 * N; i++)
            dst[i] = -1;
        MPI_Request r[2];
        MPI_OK(MPI_Irecv(dst, 1, vec, p, round, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Type_free(&vec));
        if (round % 2)
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Isend(src, 1, idx, p, round, MPI_COMM_WORLD, &r[1]));
        MPI_OK(MPI_Type_free(&idx));
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= dst[2 * i] == i * 7 + p && dst[2 * i + 1] == -1;
        CHECK(ok, "round %d: wrong data through freed types", round);
        good += ok;
    }
    free(src);
    free(dst);
    return good;
}

/* Section B with peer p. */
static int persistent_freed(int p)
{
    enum { N = 64 };
    int src[2 * N], dst[2 * N];
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_Request r[2];
    MPI_OK(MPI_Recv_init(dst, 1, vec, p, 100, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Send_init(src, 1, vec, p, 100, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Type_free(&vec));
    int good = 0;
    for (int round = 0; round < 1000; round++) {
        for (int i = 0; i < 2 * N; i++) {
            src[i] = i % 2 ? -7 : round + i + g_me;
            dst[i] = -1;
        }
        MPI_OK(MPI_Startall(2, r));
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= dst[2 * i] == round + 2 * i + p && dst[2 * i + 1] == -1;
        good += ok;
    }
    CHECK(good == 1000, "%d of 1000 persistent rounds right", good);
    MPI_OK(MPI_Request_free(&r[0]));
    MPI_OK(MPI_Request_free(&r[1]));
    return good;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv, &g_me, &g_size);
    int pair = g_me ^ 1;
    int has_pair = pair < g_size;

    section("A freed datatypes");
    out("A self: %d of 20 rounds right", freed_types(g_me));
    {
        /* A rank without a pair repeats with itself (the barriers inside
         * are collective). */
        int good = freed_types(has_pair ? pair : g_me);
        if (has_pair)
            out("A pair: %d of 20 rounds right", good);
    }

    section("B persistent, freed types");
    out("B self: %d of 1000 rounds right", persistent_freed(g_me));
    if (has_pair)
        out("B pair: %d of 1000 rounds right", persistent_freed(pair));

    section("C freed communicator");
    {
        int p = has_pair ? pair : g_me;
        int good = 0;
        for (int round = 0; round < 10; round++) {
            MPI_Comm c;
            MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
            int v = -1, w = round * 10 + g_me, pv = -1;
            MPI_Request r, s, pers;
            MPI_OK(MPI_Irecv(&v, 1, MPI_INT, p, 5, c, &r));
            MPI_OK(MPI_Recv_init(&pv, 1, MPI_INT, p, 6, c, &pers));
            /* Each side's send goes out on its copy before it frees it:
             * a send is started, the communicator freed, then everything
             * completes. */
            MPI_OK(MPI_Issend(&w, 1, MPI_INT, p, 5, c, &s));
            MPI_OK(MPI_Comm_free(&c));
            CHECK(c == MPI_COMM_NULL, "Comm_free left the handle");
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
            good += v == round * 10 + p;
            MPI_OK(MPI_Request_free(&pers));
        }
        out("C %s: %d of 10 rounds right", has_pair ? "pair" : "self", good);
    }

    section("D buffered sends");
    {
        /* The refused sends go on a communicator of their own: after a
         * refused MPI_Bsend, stock Open MPI delivers nothing more from that
         * sender on that communicator (a sequence number is lost). */
        MPI_Comm c, cf;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &cf));
        MPI_OK(MPI_Comm_set_errhandler(cf, MPI_ERRORS_RETURN));
        int p = has_pair ? pair : g_me;
        static char small[100], large[8192], rbuf[4][8192];
        /* The Ibsend's receive is posted first (MPI_Buffer_detach may wait
         * until the buffered message is received). No receive is posted
         * for the sends the MPI may refuse: stock Open MPI matches such a
         * receive with the refused message and never completes it. */
        MPI_Request r4;
        MPI_OK(MPI_Irecv(rbuf[3], sizeof rbuf[3], MPI_CHAR, p, 4, c, &r4));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        int sent[4];
        /* No buffer attached: a small and a large message. */
        int rc = MPI_Bsend(small, sizeof small, MPI_CHAR, p, 1, cf);
        sent[0] = rc == MPI_SUCCESS;
        out("D Bsend 100 B without a buffer: %s", err_class_name(err_class(rc)));
        rc = MPI_Bsend(large, sizeof large, MPI_CHAR, p, 2, cf);
        sent[1] = rc == MPI_SUCCESS;
        out("D Bsend 8 KiB without a buffer: %s", err_class_name(err_class(rc)));
        /* A buffer too small for the large one. */
        int bsize = 1000 + MPI_BSEND_OVERHEAD;
        char *b = must(malloc(bsize), "malloc", bsize);
        MPI_OK(MPI_Buffer_attach(b, bsize));
        rc = MPI_Bsend(large, sizeof large, MPI_CHAR, p, 3, cf);
        sent[2] = rc == MPI_SUCCESS;
        out("D Bsend 8 KiB with a 1000 B buffer: %s", err_class_name(err_class(rc)));
        /* Ibsend that fits, then detach and free the buffer. */
        MPI_Request r;
        memset(small, 0x2a, sizeof small);
        MPI_OK(MPI_Ibsend(small, sizeof small, MPI_CHAR, p, 4, c, &r));
        sent[3] = 1;
        void *got;
        int gotsize;
        MPI_OK(MPI_Buffer_detach(&got, &gotsize));
        CHECK(got == b && gotsize == bsize, "detach returned another buffer");
        memset(b, 0, bsize);
        free(b);
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&r4, MPI_STATUS_IGNORE));
        if (sent[0])
            MPI_OK(MPI_Recv(rbuf[0], sizeof rbuf[0], MPI_CHAR, p, 1, cf, MPI_STATUS_IGNORE));
        out("D Ibsend after detach: %s",
            rbuf[3][0] == 0x2a && rbuf[3][99] == 0x2a ? "delivered intact" : "CORRUPTED");
        MPI_OK(MPI_Comm_free(&c));
        MPI_OK(MPI_Comm_free(&cf));
    }
    return p2p_finish("lifetime", g_me, g_size);
}

/*
 * p2p_cfort.c - point-to-point conformance: a C program whose library code
 * talks MPI through the Fortran bindings (tests/f/p2p_cfort_lib.f90).
 *
 * Why: Open MPI's Fortran bindings call PMPI_* directly. If heapmpi served
 * C calls and the Fortran ones went to the real MPI, a message sent with
 * mpi_send would never reach a C MPI_Recv waiting in heapmpi's queues, and
 * C and Fortran sends of one sender to one receiver would not arrive in
 * order. Both must take one channel.
 *
 * Sections (pairs: even rank s sends to s+1; an odd last rank only takes
 * part in the collectives):
 *  A. alternating C and Fortran sends of one sender (small, then large),
 *     all with one tag, received alternately by C and Fortran: values in
 *     sending order;
 *  B. a Fortran Irecv converted to a C request (MPI_Request_f2c) and
 *     completed by C MPI_Wait, and a C Irecv converted to Fortran and
 *     completed by Fortran MPI_Wait;
 *  C. a communicator made in Fortran, used from C;
 *  D. progress: a C MPI_Ssend while the receiver sits in a Fortran
 *     MPI_Barrier with its receive posted, and the reverse.
 *
 * Output (stdout, rank 0, rank order): one line per rank and section, then
 * "rank N: cfort ok".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

void fsend(int first, int n, int dest, int tag, int sync);
int frecv(int n, int src, int tag);
int firecv(int *buf, int n, int src, int tag);
void fwait(int *req);
int fdup(void);
void fbarrier(void);

static int g_me, g_size;

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv, &g_me, &g_size);
    int s = g_me & ~1, r = s + 1;
    int in_pair = r < g_size;
    static int buf[100000];

    section("A order");
    if (in_pair) {
        int good = 0;
        for (int round = 0; round < 40; round++) {
            int n = round % 2 ? 50000 : 4;
            if (g_me == s) {
                int first = round * 1000;
                if (round % 4 < 2) {
                    for (int i = 0; i < n; i++)
                        buf[i] = first + i;
                    MPI_OK(MPI_Send(buf, n, MPI_INT, r, 7, MPI_COMM_WORLD));
                } else {
                    fsend(first, n, r, 7, 0);
                }
            } else {
                int got;
                if (round % 3 == 0) {
                    got = frecv(n, s, 7);
                } else {
                    buf[0] = -1;
                    MPI_OK(MPI_Recv(buf, n, MPI_INT, s, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    got = buf[0];
                }
                good += got == round * 1000;
            }
        }
        if (g_me == r)
            out("A C and Fortran sends in order: %d of 40", good);
    }

    section("B converted requests");
    if (in_pair) {
        if (g_me == s) {
            fsend(11, 3, r, 8, 0);
            fsend(22, 3, r, 9, 0);
        } else {
            int b1[3] = {-1, -1, -1}, b2[3] = {-1, -1, -1};
            MPI_Fint fr = firecv(b1, 3, s, 8);
            MPI_Request cr = MPI_Request_f2c(fr);
            MPI_OK(MPI_Wait(&cr, MPI_STATUS_IGNORE));
            MPI_Request c2;
            MPI_OK(MPI_Irecv(b2, 3, MPI_INT, s, 9, MPI_COMM_WORLD, &c2));
            MPI_Fint f2 = MPI_Request_c2f(c2);
            fwait(&f2);
            out("B Fortran request waited in C: %d, C request waited in Fortran: %d (null %d)",
                b1[2], b2[2], MPI_Request_f2c(f2) == MPI_REQUEST_NULL);
        }
    }

    section("C Fortran communicator");
    MPI_Comm fc = MPI_Comm_f2c(fdup());
    if (in_pair) {
        int v = g_me * 10, w = -1, peer = g_me == s ? r : s;
        MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, peer, 3, &w, 1, MPI_INT, peer, 3, fc,
                            MPI_STATUS_IGNORE));
        out("C exchange on a Fortran-made communicator: got %d", w);
    }
    MPI_OK(MPI_Comm_free(&fc));

    section("D progress");
    if (in_pair && g_me == s) {
        for (int i = 0; i < 100000; i++)
            buf[i] = i;
        MPI_OK(MPI_Ssend(buf, 100000, MPI_INT, r, 20, MPI_COMM_WORLD));
        fbarrier();
        fsend(5, 100000, r, 21, 1);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    } else if (in_pair) {
        MPI_Request q;
        MPI_OK(MPI_Irecv(buf, 100000, MPI_INT, s, 20, MPI_COMM_WORLD, &q));
        fbarrier();
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        int ok = buf[99999] == 99999;
        MPI_OK(MPI_Irecv(buf, 100000, MPI_INT, s, 21, MPI_COMM_WORLD, &q));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        ok &= buf[99999] == 5 + 99999;
        out("D Ssend completed with the receiver in a barrier: %s", ok ? "both ways" : "WRONG");
    } else {
        fbarrier();
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    return p2p_finish("cfort", g_me, g_size);
}

/*
 * p2p_selfprobe.c - point-to-point conformance: wildcard probes of
 * zero-byte synchronous messages to self, on duplicated communicators.
 *
 * Why: under MPICH an MPI_Issend of 0 bytes to self followed by
 * MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) on a Comm_dup of MPI_COMM_WORLD
 * was seen spinning forever in heapmpi's probe now and then. Self
 * messages, zero bytes, synchronous mode, wildcards, fresh communicators
 * (whose handles MPICH reuses after a free) and neighbour traffic on the
 * same communicator are all exercised, many times.
 *
 * Sections (rounds quartered above 2 ranks: each round's Comm_dup is a
 * collective, and MPICH's spin without yielding when ranks outnumber
 * cores, so 600 of them took 12-29 s of a 30 s watchdog in stock MPICH):
 *  A. for 400 rounds: a new Comm_dup; Issend of 0 bytes to self with a
 *     varying tag; one of Probe, Mprobe+Mrecv, Iprobe loop, Improbe loop
 *     with both wildcards (status: self, that tag, 0 bytes); the matching
 *     receive; Wait on the Issend; a Sendrecv with the ring neighbours on
 *     MPI_COMM_WORLD; Comm_free;
 *  B. the same with messages from the ring neighbour pending too, so a
 *     wildcard probe may see either: whichever it sees is received with
 *     its exact source and tag.
 *
 * Output (stdout, rank 0, rank order): counts per rank and section, then
 * "rank N: selfprobe ok".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

static int g_me, g_size;


/* One wildcard probe of kind `kind`; receives what it found. Returns the
 * status of the probe. */
static MPI_Status probe_and_receive(MPI_Comm c, int kind)
{
    MPI_Status st;
    int x, flag = 0;
    MPI_Message m;
    switch (kind) {
    case 0:
        MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st));
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, c, MPI_STATUS_IGNORE));
        break;
    case 1:
        MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &m, &st));
        MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &m, MPI_STATUS_IGNORE));
        break;
    case 2:
        while (!flag)
            MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &st));
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, c, MPI_STATUS_IGNORE));
        break;
    default:
        while (!flag)
            MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &m, &st));
        MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &m, MPI_STATUS_IGNORE));
        break;
    }
    return st;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv, &g_me, &g_size);
    int right = (g_me + 1) % g_size, left = (g_me + g_size - 1) % g_size;

    int rounds = g_size > 2 ? 100 : 400;
    section("A self");
    int good = 0;
    for (int it = 0; it < rounds; it++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_Request r;
        int x = 0, n = -1;
        MPI_OK(MPI_Issend(&x, 0, MPI_INT, g_me, it & 7, c, &r));
        MPI_Status st = probe_and_receive(c, it % 4);
        MPI_Get_count(&st, MPI_INT, &n);
        good += st.MPI_SOURCE == g_me && st.MPI_TAG == (it & 7) && n == 0;
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int y = it, z = -1;
        /* Neighbour traffic between the rounds, on MPI_COMM_WORLD: a
         * message on `c` could be the one a wildcard probe sees. */
        MPI_OK(MPI_Sendrecv(&y, 1, MPI_INT, right, 100, &z, 1, MPI_INT, left, 100,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        good += z == it;
        MPI_OK(MPI_Comm_free(&c));
    }
    out("A self: %d of %d checks", good, 2 * rounds);

    section("B self and neighbour");
    good = 0;
    for (int it = 0; it < rounds / 2; it++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_Request r[2];
        int x = 0, y = 1;
        MPI_OK(MPI_Issend(&x, 0, MPI_INT, g_me, 1, c, &r[0]));
        MPI_OK(MPI_Issend(&y, 0, MPI_INT, right, 2, c, &r[1]));
        /* Two messages arrive (from self, tag 1; from left, tag 2), in an
         * order MPI leaves open: each probe takes one, by its envelope. */
        int seen = 0;
        for (int k = 0; k < 2; k++) {
            MPI_Status st = probe_and_receive(c, (it + k) % 4);
            if (st.MPI_SOURCE == g_me && st.MPI_TAG == 1)
                seen |= 1;
            else if (st.MPI_SOURCE == left && st.MPI_TAG == 2)
                seen |= 2;
        }
        /* With one rank, self is the left neighbour too. */
        good += seen == 3 || (g_size == 1 && seen != 0);
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        MPI_OK(MPI_Comm_free(&c));
    }
    out("B self and neighbour: %d of %d rounds", good, rounds / 2);
    return p2p_finish("selfprobe", g_me, g_size);
}

/*
 * p2p_isendrecv.c - MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0)
 * against the classic point-to-point routines, on any MPI whose <mpi.h>
 * declares them, large-count routines or not.
 *
 * Why: Open MPI 5.0's <mpi.h> declares these two but none of the _c
 * routines; heapmpi once compiled all of MPI-4.0 only where the _c ones
 * were declared, so under Open MPI 5 an MPI_Isendrecv went to the real
 * MPI while the peer's MPI_Sendrecv waited in heapmpi's queues: the job
 * hung. (p2p_mpi4.c covers the _c routines where they exist.)
 *
 * Ranks are paired (r, r ^ 1); the job size must be even. For 3, 1000 and
 * 40000 ints, 10 rounds each: the even rank uses MPI_Isendrecv (completed
 * by MPI_Wait, then by an MPI_Test loop), the odd one MPI_Sendrecv, then
 * MPI_Isendrecv_replace against MPI_Send + MPI_Recv (the odd rank
 * receiving by MPI_ANY_SOURCE / MPI_ANY_TAG), then the roles swapped;
 * every element checked.
 *
 * Output: "rank N: isendrecv <checksum>" per rank and "rank N: isendrecv
 * ok". Exits non-zero when a check fails.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "testutil.h"

static int rank, size;

static int val(int from, int round, int n, int i)
{
    return from * 1000003 + round * 7919 + n * 31 + i;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);
    if (size % 2) {
        if (rank == 0)
            fprintf(stderr, "p2p_isendrecv: needs an even number of ranks\n");
        MPI_Finalize();
        return 1;
    }
    const int peer = rank ^ 1;
    static const int sizes[] = {3, 1000, 40000};
    uint64_t h = 0;
    for (int k = 0; k < 3; k++) {
        const int n = sizes[k];
        int *s = malloc((size_t)n * sizeof(int)), *r = malloc((size_t)n * sizeof(int));
        for (int round = 0; round < 10; round++)
            for (int swap = 0; swap < 2; swap++) {
                const int fancy = (rank % 2) == swap; /* uses the MPI-4.0 routines */
                for (int i = 0; i < n; i++)
                    s[i] = val(rank, round, n, i), r[i] = -1;
                if (fancy) {
                    MPI_Request q;
                    MPI_Isendrecv(s, n, MPI_INT, peer, 1, r, n, MPI_INT, peer, 2, MPI_COMM_WORLD,
                                  &q);
                    if (round % 2) {
                        int flag = 0;
                        while (!flag)
                            MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Wait(&q, MPI_STATUS_IGNORE);
                    }
                } else {
                    MPI_Sendrecv(s, n, MPI_INT, peer, 2, r, n, MPI_INT, peer, 1, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE);
                }
                int ok = 1;
                for (int i = 0; i < n; i++)
                    ok &= r[i] == val(peer, round, n, i);
                EXPECT(ok, "Isendrecv/Sendrecv of %d ints, round %d: wrong", n, round);
                /* Isendrecv_replace against Send + Recv. */
                for (int i = 0; i < n; i++)
                    r[i] = val(rank, round + 100, n, i);
                if (fancy) {
                    MPI_Request q;
                    MPI_Isendrecv_replace(r, n, MPI_INT, peer, 3, peer, 4, MPI_COMM_WORLD, &q);
                    MPI_Wait(&q, MPI_STATUS_IGNORE);
                } else {
                    MPI_Request q;
                    MPI_Isend(r, n, MPI_INT, peer, 4, MPI_COMM_WORLD, &q);
                    MPI_Recv(s, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                    MPI_Wait(&q, MPI_STATUS_IGNORE);
                    for (int i = 0; i < n; i++)
                        r[i] = s[i];
                }
                ok = 1;
                for (int i = 0; i < n; i++)
                    ok &= r[i] == val(peer, round + 100, n, i);
                EXPECT(ok, "Isendrecv_replace/Send+Recv of %d ints, round %d: wrong", n, round);
                for (int i = 0; i < n; i += 97)
                    h = (h ^ (uint64_t)(uint32_t)r[i]) * 0x100000001b3ull;
            }
        free(s);
        free(r);
    }
    char line[LINE];
    snprintf(line, sizeof line, "rank %d: isendrecv %016llx", rank, (unsigned long long)h);
    print_ordered(line, rank, size);
    print_result("isendrecv", rank, size);
    int bad = job_failures();
    MPI_Finalize();
    return bad != 0;
}

/*
 * p2p_progress.c - point-to-point conformance: progress while the receiver
 * is inside the real MPI.
 *
 * Why: MPI's progress rule says a send whose matching receive is posted
 * completes, whatever the receiver does next. Under heapmpi the receive
 * is posted in heapmpi's queues; a receiver that then sits in a call that
 * goes to the real MPI (a collective, communicator creation, file I/O,
 * one-sided synchronisation, a wait on another node's request,
 * MPI_Finalize) never enters heapmpi there. If the sender waits for the
 * match (MPI_Ssend, or a message too large to be buffered) and the real
 * call waits for the sender, the job hangs unless something else matches
 * for the receiver.
 *
 * Sections (pairs: even world rank s sends to s+1, which is on the same
 * node, also with pretend nodes of 2; an odd last rank only takes part in
 * the collectives):
 *  A. for each real call X (barrier, allreduce, comm_dup+free, comm_split,
 *     a collective file open/write/close, a window fence, and with pretend
 *     nodes a receive from another node that waits for the sender) and each
 *     message (Ssend of 0 B, 8 B, 64 KiB and 1 MiB, Send of 4 MiB, Ssend
 *     of 64 KiB into a strided receive type): the receiver posts MPI_Irecv,
 *     calls X, then MPI_Wait; the sender sends, then calls X. Data checked.

 * (A receiver inside MPI_Finalize with a receive posted is an erroneous
 * program; stock MPICH hangs there too.)
 *
 * Output (stdout, rank 0, rank order): one line per rank and section, then
 * "rank N: progress ok".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "p2p_util.h"

#define KIB 1024
#define MIB (1024 * 1024)

static int g_me, g_size;
static char g_file[256];
static MPI_Win g_win;
static int g_winbuf[4];

enum { X_BARRIER, X_ALLREDUCE, X_DUP, X_SPLIT, X_FILE, X_FENCE, X_REMOTE, NX };
static const char *x_name[NX] = {"barrier", "allreduce", "comm_dup", "comm_split",
                                 "file_write_all", "win_fence", "remote_wait"};

enum { M_SSEND0, M_SSEND8, M_SSEND64K, M_SSEND1M, M_SEND4M, M_STRIDED, NM };
static const char *m_name[NM] = {"ssend 0 B", "ssend 8 B", "ssend 64 KiB",
                                 "ssend 1 MiB", "send 4 MiB", "ssend 64 KiB strided"};
static const size_t m_bytes[NM] = {0, 8, 64 * KIB, MIB, 4 * MIB, 64 * KIB};

/* The real call X (collective over MPI_COMM_WORLD except X_REMOTE). */
static void real_call(int x, int remote_role, int remote_peer)
{
    switch (x) {
    case X_BARRIER:
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        break;
    case X_ALLREDUCE: {
        int a = g_me, b = -1;
        MPI_OK(MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(b == g_size * (g_size - 1) / 2, "allreduce gave %d", b);
        break;
    }
    case X_DUP: {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_OK(MPI_Comm_free(&c));
        break;
    }
    case X_SPLIT: {
        MPI_Comm c;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, g_me % 2, g_me, &c));
        MPI_OK(MPI_Comm_free(&c));
        break;
    }
    case X_FILE: {
        MPI_File fh;
        MPI_OK(MPI_File_open(MPI_COMM_WORLD, g_file,
                             MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        int v = g_me;
        MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)g_me * sizeof v, &v, 1, MPI_INT,
                                     MPI_STATUS_IGNORE));
        MPI_OK(MPI_File_close(&fh));
        break;
    }
    case X_FENCE:
        MPI_OK(MPI_Win_fence(0, g_win));
        break;
    case X_REMOTE:
        /* remote_role 1: wait for a message from another node (a real MPI
         * request) that remote_peer sends only after hearing from our
         * sender; 2: relay (receive the sender's go, send to the waiter);
         * 3: the sender's go to the relay. */
        if (remote_role == 1) {
            int v = -1;
            MPI_Request r;
            MPI_OK(MPI_Irecv(&v, 1, MPI_INT, remote_peer, 77, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(v == 42, "relayed %d", v);
        } else if (remote_role == 2) {
            int v = -1;
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 76, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MPI_OK(MPI_Send(&v, 1, MPI_INT, remote_peer, 77, MPI_COMM_WORLD));
        } else if (remote_role == 3) {
            int v = 42;
            MPI_OK(MPI_Send(&v, 1, MPI_INT, remote_peer, 76, MPI_COMM_WORLD));
        }
        break;
    }
}

/* One (X, message) round. Returns 1 if this rank's part went right. */
static int round_trip(int x, int m, unsigned char *buf, unsigned char *rbuf)
{
    int pair = g_me / 2, s = 2 * pair, r = s + 1;
    int in_pair = r < g_size;
    size_t n = m_bytes[m];
    uint64_t seed = ((uint64_t)x << 32) ^ ((uint64_t)m << 16) ^ (uint64_t)pair;
    int ok = 1;

    /* X_REMOTE needs a pair (0,1) and a relay on another node (rank 2
     * with pretend nodes of 2). */
    int remote_role = 0, remote_peer = -1;
    if (x == X_REMOTE) {
        if (g_me == 1) { remote_role = 1; remote_peer = 2; }
        else if (g_me == 2) { remote_role = 2; remote_peer = 1; }
        in_pair = in_pair && pair == 0;
    }
    if (in_pair && g_me == r) {
        MPI_Request req;
        MPI_Datatype vec = MPI_DATATYPE_NULL;
        if (m == M_STRIDED) {
            /* n bytes as n/8 blocks of 8 bytes with a stride of 16. */
            MPI_OK(MPI_Type_vector((int)(n / 8), 8, 16, MPI_BYTE, &vec));
            MPI_OK(MPI_Type_commit(&vec));
            memset(rbuf, 0x5c, 2 * n);
            MPI_OK(MPI_Irecv(rbuf, 1, vec, s, 9, MPI_COMM_WORLD, &req));
        } else {
            memset(buf, 0x5c, n + 8);
            MPI_OK(MPI_Irecv(buf, (int)n, MPI_BYTE, s, 9, MPI_COMM_WORLD, &req));
        }
        real_call(x, remote_role, remote_peer);
        MPI_Status st;
        MPI_OK(MPI_Wait(&req, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        ok &= cnt == (int)n && st.MPI_SOURCE == s && st.MPI_TAG == 9;
        if (m == M_STRIDED) {
            for (size_t i = 0; i < n; i++) {
                size_t at = (i / 8) * 16 + i % 8;
                if (rbuf[at] != wpattern_byte(seed, i) ||
                    (i % 8 == 0 && rbuf[at + 8] != 0x5c)) {
                    ok = 0;
                    break;
                }
            }
            MPI_OK(MPI_Type_free(&vec));
        } else {
            ok &= wpattern_check(buf, n, seed, "received");
            ok &= buf[n] == 0x5c;
        }
        CHECK(ok, "%s / %s: received wrong data or status (count %d)", x_name[x], m_name[m], cnt);
    } else if (in_pair && g_me == s) {
        wpattern_fill(buf, n, seed);
        if (m == M_SEND4M)
            MPI_OK(MPI_Send(buf, (int)n, MPI_BYTE, r, 9, MPI_COMM_WORLD));
        else
            MPI_OK(MPI_Ssend(buf, (int)n, MPI_BYTE, r, 9, MPI_COMM_WORLD));
        if (x == X_REMOTE) {
            remote_role = 3;
            remote_peer = 2;
        }
        real_call(x, remote_role, remote_peer);
    } else {
        real_call(x, remote_role, remote_peer);
    }
    return ok;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv, &g_me, &g_size);
    unsigned char *buf = must(malloc(4 * MIB + 64), "malloc", 4 * MIB + 64);
    unsigned char *rbuf = must(malloc(2 * 64 * KIB + 64), "malloc", 2 * 64 * KIB + 64);

    /* A file name every rank agrees on, and a window. */
    if (g_me == 0)
        snprintf(g_file, sizeof g_file, "/tmp/heapmpi-progress-%d-%ld.dat", (int)getpid(),
                 (long)time(NULL));
    MPI_OK(MPI_Bcast(g_file, sizeof g_file, MPI_CHAR, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Win_create(g_winbuf, sizeof g_winbuf, sizeof(int), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &g_win));
    MPI_OK(MPI_Win_fence(0, g_win));

    section("A real calls");
    int remote = p2p_node_size() == 2 && g_size >= 3;
    for (int x = 0; x < NX; x++) {
        if (x == X_REMOTE && !remote)
            continue;
        int good = 0, total = 0;
        for (int m = 0; m < NM; m++) {
            good += round_trip(x, m, buf, rbuf);
            total++;
        }
        out("A %s: %d of %d sends completed with the receiver inside", x_name[x], good, total);
    }
    MPI_OK(MPI_Win_free(&g_win));
    if (g_me == 0)
        unlink(g_file);

    free(buf);
    free(rbuf);
    return p2p_finish("progress", g_me, g_size);
}

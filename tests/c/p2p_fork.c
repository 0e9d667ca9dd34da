/*
 * p2p_fork.c - point-to-point conformance: ranks that fork and keep
 * communicating.
 *
 * Why: a rank that calls fork() (with or without exec: system(), popen(),
 * Python's multiprocessing) shares the heap mapping with its child. The
 * child's malloc/free must never touch the parent's heap or the peers',
 * and the parent must not notice: its blocks, its messages in flight, its
 * progress thread and its peers carry on.
 *
 * Sections (pairs: even rank s with s+1; an odd last rank with itself):
 *  A. a child without exec that allocates, reallocates and frees (small
 *     and large blocks), writes into and frees blocks the parent made
 *     before the fork, and leaves through exit() (atexit handlers and
 *     all); meanwhile the parent exchanges small and large messages from
 *     heap buffers with its pair; then it reaps the child and checks its
 *     own blocks;
 *  B. system() and popen() between exchanges;
 *  C. fork + exec of /bin/true in a loop while messages are in flight
 *     (Isend before the fork, Wait after);
 *  D. afterwards: a ring exchange of every size class.
 *
 * Output (stdout, rank 0, rank order): one line per rank and section, then
 * "rank N: fork ok".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "p2p_util.h"

static int g_me, g_size;

/* One exchange of n bytes with peer p (tag t): returns 1 if the data came
 * back as the peer sent it. */
static int exchange(int p, size_t n, int t)
{
    unsigned char *a = must(malloc(n + 1), "malloc", n + 1);
    unsigned char *b = must(malloc(n + 1), "malloc", n + 1);
    wpattern_fill(a, n, ((uint64_t)g_me << 32) | (uint64_t)t);
    MPI_Request r[2];
    MPI_OK(MPI_Irecv(b, (int)n, MPI_BYTE, p, t, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Isend(a, (int)n, MPI_BYTE, p, t, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    int ok = wpattern_check(b, n, ((uint64_t)p << 32) | (uint64_t)t, "exchange");
    free(a);
    free(b);
    return ok;
}

/* The child of section A: heap traffic, writes into the parent's blocks,
 * exit(). */
static void child_work(unsigned char **parent_blocks, int nblocks)
{
    unsigned seed = 12345u + (unsigned)g_me;
    void *keep[64] = {0};
    for (int i = 0; i < 20000; i++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % 64);
        size_t sz = (seed >> 4) % 8 == 0 ? (size_t)((seed >> 12) % (1 << 20)) + 1
                                         : (size_t)((seed >> 12) % 512) + 1;
        if (keep[k]) {
            if (i % 3 == 0) {
                void *q = realloc(keep[k], sz);
                if (q)
                    keep[k] = q;
                continue;
            }
            free(keep[k]);
        }
        keep[k] = malloc(sz);
        if (keep[k])
            memset(keep[k], 0xcc, sz < 64 ? sz : 64);
    }
    for (int k = 0; k < 64; k++)
        free(keep[k]);
    for (int i = 0; i < nblocks; i++) {
        memset(parent_blocks[i], 0xee, 4096);
        if (i % 2)
            free(parent_blocks[i]);
    }
    exit(0);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv, &g_me, &g_size);
    int p = (g_me ^ 1) < g_size ? g_me ^ 1 : g_me;

    section("A fork without exec");
    {
        enum { NB = 16 };
        unsigned char *blocks[NB];
        for (int i = 0; i < NB; i++) {
            blocks[i] = must(malloc(4096), "malloc", 4096);
            memset(blocks[i], i, 4096);
        }
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        CHECK(pid >= 0, "fork failed");
        if (pid == 0)
            child_work(blocks, NB);
        int good = 0;
        size_t sizes[6] = {8, 1000, 4096, 70000, 300000, 2 << 20};
        for (int round = 0; round < 3; round++)
            for (int k = 0; k < 6; k++)
                good += exchange(p, sizes[k], 10 + k);
        int st = -1;
        waitpid(pid, &st, 0);
        int intact = 1;
        for (int i = 0; i < NB; i++)
            for (int j = 0; j < 4096; j++)
                intact &= blocks[i][j] == (unsigned char)i;
        for (int i = 0; i < NB; i++)
            free(blocks[i]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
        out("A: child %s, %d of 18 exchanges right, parent's blocks %s",
            WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "exited 0" : "FAILED", good,
            intact ? "intact" : "CHANGED");
    }

    section("B system and popen");
    {
        int good = 0;
        for (int round = 0; round < 5; round++) {
            good += system("true") == 0;
            good += exchange(p, 64 << 10, 20 + round);
            FILE *f = popen("echo hi", "r");
            char line[16] = "";
            if (f) {
                if (!fgets(line, sizeof line, f))
                    line[0] = 0;
                good += pclose(f) == 0 && strcmp(line, "hi\n") == 0;
            }
            good += exchange(p, 100, 30 + round);
        }
        out("B: %d of 20 checks", good);
    }

    section("C fork and exec with messages in flight");
    {
        int good = 0;
        for (int round = 0; round < 10; round++) {
            size_t n = round % 2 ? 512 * 1024 : 200;
            unsigned char *a = must(malloc(n), "malloc", n);
            unsigned char *b = must(malloc(n), "malloc", n);
            wpattern_fill(a, n, (uint64_t)g_me * 100 + (uint64_t)round);
            MPI_Request r[2];
            MPI_OK(MPI_Irecv(b, (int)n, MPI_BYTE, p, 40 + round, MPI_COMM_WORLD, &r[0]));
            MPI_OK(MPI_Isend(a, (int)n, MPI_BYTE, p, 40 + round, MPI_COMM_WORLD, &r[1]));
            fflush(stdout);
            fflush(stderr);
            pid_t pid = fork();
            if (pid == 0) {
                execl("/bin/true", "true", (char *)NULL);
                _exit(127);
            }
            int st = -1;
            waitpid(pid, &st, 0);
            MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
            good += WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
                    wpattern_check(b, n, (uint64_t)p * 100 + (uint64_t)round, "in flight");
            free(a);
            free(b);
        }
        out("C: %d of 10 rounds right", good);
    }

    section("D afterwards");
    {
        int right = (g_me + 1) % g_size, left = (g_me + g_size - 1) % g_size, good = 0;
        size_t sizes[5] = {1, 2048, 65536, 300000, 4 << 20};
        for (int k = 0; k < 5; k++) {
            size_t n = sizes[k];
            unsigned char *a = must(malloc(n), "malloc", n);
            unsigned char *b = must(malloc(n), "malloc", n);
            wpattern_fill(a, n, (uint64_t)g_me + 7);
            MPI_OK(MPI_Sendrecv(a, (int)n, MPI_BYTE, right, 50 + k, b, (int)n, MPI_BYTE, left,
                                50 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            good += wpattern_check(b, n, (uint64_t)left + 7, "ring");
            free(a);
            free(b);
        }
        out("D: %d of 5 ring exchanges right", good);
    }
    return p2p_finish("fork", g_me, g_size);
}

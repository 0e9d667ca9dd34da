/*
 * debug_memcheck.c - a program to run under valgrind's memcheck: MPI
 * traffic through heapmpi's paths, then (if asked) one deliberate heap bug
 * in rank 0, which memcheck must report as it does stock, with the
 * program's own function in the stack.
 *
 * Why: heapmpi replaces malloc, which memcheck watches; a user who runs
 * `mpirun valgrind ./app` must get the run and the reports they get
 * without heapmpi, and the run must end.
 *
 * argv[1]: clean | overflow | use_after_free | double_free | uninit | bugs
 * (bugs: the four in turn; memcheck reports each and goes on)
 *
 * Traffic: a 1 MiB malloc'd buffer sent 0 -> 1 (a large message), 64
 * small messages both ways, an allreduce and a barrier. Output (stdout):
 * "rank N: memcheck traffic ok" from every rank, then the bug's line.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The compiler must neither see through these pointers nor remove the bug. */
static char *volatile g_keep;

__attribute__((noinline)) static void overflow_here(void)
{
    char *p = malloc(40);
    memset(p, 1, 40);
    g_keep = p;
    g_keep[40] = 7; /* one byte past the block */
    free(p);
}

__attribute__((noinline)) static void use_after_free_here(void)
{
    char *p = malloc(64);
    memset(p, 2, 64);
    g_keep = p;
    free(p);
    printf("rank 0: read after free gave %d\n", g_keep[10] == 2 ? 2 : 0);
    fflush(stdout);
}

__attribute__((noinline)) static void double_free_here(void)
{
    char *p = malloc(48);
    g_keep = p;
    free(p);
    free(g_keep);
    g_keep = NULL; /* not a tail call: the second free's caller is this */
}

__attribute__((noinline)) static void uninit_here(void)
{
    int *p = malloc(16 * sizeof(int));
    g_keep = (char *)p;
    if (((int *volatile)g_keep)[3] > 5) /* never written */
        printf("rank 0: uninitialised value was large\n");
    else
        printf("rank 0: uninitialised value was small\n");
    fflush(stdout);
    free(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *bug = argc > 1 ? argv[1] : "clean";

    size_t len = 1 << 20;
    unsigned char *big = malloc(len);
    if (me == 0) {
        for (size_t i = 0; i < len; i++)
            big[i] = (unsigned char)(i * 7);
        if (n > 1)
            MPI_Send(big, (int)len, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    } else if (me == 1) {
        MPI_Recv(big, (int)len, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    int wrong = 0;
    if (me <= 1 && n > 1)
        for (size_t i = 0; i < len; i++)
            wrong += big[i] != (unsigned char)(i * 7);
    free(big);

    int peer = me ^ 1;
    if (peer < n) {
        for (int i = 0; i < 64; i++) {
            long out = me * 1000 + i, in = -1;
            MPI_Sendrecv(&out, 1, MPI_LONG, peer, 2, &in, 1, MPI_LONG, peer, 2,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            wrong += in != peer * 1000 + i;
        }
    }
    long mine = me + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    wrong += sum != (long)n * (n + 1) / 2;
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d: memcheck traffic %s\n", me, wrong ? "WRONG" : "ok");
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);

    if (me == 0) {
        int all = !strcmp(bug, "bugs");
        if (all || !strcmp(bug, "overflow"))
            overflow_here();
        if (all || !strcmp(bug, "use_after_free"))
            use_after_free_here();
        if (all || !strcmp(bug, "double_free"))
            double_free_here();
        if (all || !strcmp(bug, "uninit"))
            uninit_here();
        printf("rank 0: %s done\n", bug);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

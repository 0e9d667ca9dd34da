/*
 * debug_core.c - what a debugger needs from a rank under heapmpi: a live
 * rank's stack through heapmpi's frames, and a crashed rank's core file
 * holding its heap blocks.
 *
 * argv[1]:
 *   wait  - every rank prints "rank N: pid P"; rank 1 then blocks in
 *           MPI_Recv from rank 0, which sends only once the file argv[2]
 *           exists (the harness attaches gdb to rank 1, then creates it;
 *           after 100 s rank 0 sends anyway).
 *   send - (under HEAPMPI_CHECK=1) rank 0 mallocs 100 bytes, prints
 *           "rank 0: block 0x...", writes 3 bytes past the end and sends
 *           the block's 100 bytes to rank 1: heapmpi must abort at the
 *           send, naming the block ("rank 0: send overrun not caught"
 *           follows if it did not).
 *   sendpast - (under HEAPMPI_CHECK=1) rank 0 sends 200 bytes from a
 *           100-byte block: heapmpi must abort at the send.
 *   crash - rank 0 mallocs a block, writes a marker into it and prints
 *           "rank 0: block 0x... in <mapping> marker <text>" (the mapping
 *           that holds the block, from /proc/self/maps: heapmpi's region
 *           when the heap serves malloc), then aborts; the harness reads
 *           the marker back from the core file with gdb.
 *   overrun - (under HEAPMPI_CHECK=1) rank 0 mallocs 100 bytes, prints
 *           "rank 0: block 0x...", writes 3 bytes past the end and frees
 *           the block: heapmpi must abort there, naming the block; a line
 *           "rank 0: overrun not caught" follows if it did not.
 *   stale - (under HEAPMPI_CHECK=1) rank 0 mallocs 200 bytes, prints
 *           "rank 0: block 0x..." and sends the address to rank 1, which
 *           writes through it (a pointer that means nothing in rank 1:
 *           stock, a fault; in a shared heap, rank 0's block): heapmpi
 *           must abort in rank 1, naming rank 0 and the block; a line
 *           "rank 1: stale write not caught" follows if it did not.
 *   beyond - (under HEAPMPI_CHECK=1) rank 0 mallocs 48 MiB, prints
 *           "rank 0: block 0x..." and writes one byte a page from a page
 *           past its end onwards: heapmpi must abort at the end of rank
 *           0's heap, before the writes reach the next rank's part.
 *   next - (under HEAPMPI_CHECK=1) rank 0 mallocs 100 bytes, prints
 *           "rank 0: block 0x... target 0x..." and writes at the block's
 *           address plus argv[2] bytes (the size of a rank's part: the
 *           same place in rank 1's part): heapmpi must abort, naming
 *           rank 1's part.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The name of the mapping that holds address a ("" if anonymous). */
static void mapping_of(unsigned long a, char *out, size_t len)
{
    snprintf(out, len, "(none)");
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        int off = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &off) < 2)
            continue;
        if (a >= lo && a < hi) {
            char *name = line + off;
            name[strcspn(name, "\n")] = 0;
            snprintf(out, len, "%s", *name ? name : "(anonymous)");
            break;
        }
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *what = argc > 1 ? argv[1] : "wait";

    if (!strcmp(what, "overrun")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            char *volatile block = malloc(100);
            printf("rank 0: block %p\n", (void *)block);
            fflush(stdout);
            memset(block, 1, 103); /* 3 bytes past the end */
            free(block);
            printf("rank 0: overrun not caught\n");
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "stale")) {
        unsigned long addr = 0;
        char *block = NULL;
        if (me == 0) {
            block = malloc(200);
            memset(block, 7, 200);
            addr = (unsigned long)block;
            printf("rank 0: block %p\n", (void *)block);
            fflush(stdout);
        }
        MPI_Bcast(&addr, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
        if (me == 1) {
            ((volatile char *)addr)[16] = 1;
            printf("rank 1: stale write not caught\n");
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        free(block);
    } else if (!strcmp(what, "beyond")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            size_t size = 48u << 20;
            char *block = malloc(size);
            printf("rank 0: block %p\n", (void *)block);
            fflush(stdout);
            for (volatile char *q = block + size + 4096;; q += 4096)
                *q = 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "next")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            unsigned long part = strtoul(argc > 2 ? argv[2] : "0", NULL, 0);
            char *block = malloc(100);
            volatile char *target = block + part;
            printf("rank 0: block %p target %p\n", (void *)block, (void *)target);
            fflush(stdout);
            *target = 1;
            printf("rank 0: write into the next part not caught\n");
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "send") || !strcmp(what, "sendpast")) {
        int past = !strcmp(what, "sendpast");
        char *sink = malloc(256);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            char *volatile block = malloc(100);
            printf("rank 0: block %p\n", (void *)block);
            fflush(stdout);
            memset(block, 1, past ? 100 : 103);
            MPI_Send(block, past ? 200 : 100, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
            printf("rank 0: send overrun not caught\n");
            fflush(stdout);
        } else if (me == 1) {
            MPI_Recv(sink, 256, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        free(sink);
    } else if (!strcmp(what, "crash")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            char *block = malloc(256);
            snprintf(block, 256, "HEAPMPI-CORE-MARKER-%d", (int)getpid());
            char where[300];
            mapping_of((unsigned long)block, where, sizeof where);
            printf("rank 0: block %p in %s marker %s\n", (void *)block, where, block);
            fflush(stdout);
            abort();
        }
        /* The others wait for rank 0, which never comes: the launcher ends them. */
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        const char *go = argc > 2 ? argv[2] : "/nonexistent";
        printf("rank %d: pid %d\n", me, (int)getpid());
        fflush(stdout);
        int x = 42;
        if (me == 0 && n > 1) {
            for (int i = 0; i < 2000 && access(go, F_OK) != 0; i++)
                usleep(50000);
            MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        } else if (me == 1) {
            x = 0;
            MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        printf("rank %d: wait done %d\n", me, x);
    }
    MPI_Finalize();
    return 0;
}

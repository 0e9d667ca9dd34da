/*
 * fork_exec.c - heapmpi integration test: fork() after MPI_Init.
 *
 * usage: fork_exec [child-writes]
 *
 * Each rank allocates blocks (in the shared heap once heapmpi is active),
 * then fork()s. The child (which must not call MPI):
 *   - mallocs / callocs / reallocs / frees new blocks of several sizes,
 *   - reallocs a block the parent allocated before the fork and frees
 *     another parent block,
 *   - only with the argument "child-writes": writes into a third parent
 *     block (fork gives the child a private copy of the address space, so
 *     the parent must not see the write; with a MAP_SHARED heap it would),
 *   - reports "heap-ok <n>" on a pipe, then execs `/bin/echo child-ok` with
 *     stdout redirected into the same pipe.
 * The parent waits, checks the exit status and the pipe contents, checks
 * that all of its blocks are intact, allocates a few hundred more blocks
 * (allocator state must not have been corrupted by the child), runs
 * system("true") and popen("echo hi"), and checks again.
 *
 * Output (stdout, rank 0 only, rank order): "rank N: fork ok".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define NPAR 4
#define NMORE 300

static int g_child_writes;

/* Everything the child does; returns the number of problems. */
static int child_work(unsigned char **par, const size_t *par_sz, int wfd)
{
    int bad = 0;
    char msg[256];
    /* The parent's blocks are visible and intact in the child. */
    for (int i = 0; i < NPAR; i++)
        if (pattern_mismatch(par[i], 0, par_sz[i], g_rank, i) != par_sz[i])
            bad++;
    /* New allocations of several sizes. */
    unsigned char *mine[8];
    static const size_t sizes[8] = {1, 40, 500, 4000, 40000, 400000,
                                    2u << 20, 123};
    for (int i = 0; i < 8; i++) {
        mine[i] = (i & 1) ? calloc(1, sizes[i]) : malloc(sizes[i]);
        if (mine[i] == NULL)
            return bad + 100;
        memset(mine[i], 0x40 + i, sizes[i]);
    }
    for (int i = 0; i < 8; i += 2) {
        unsigned char *np = realloc(mine[i], sizes[i] * 3 + 10);
        if (np == NULL)
            return bad + 100;
        for (size_t k = 0; k < sizes[i]; k++)
            if (np[k] != 0x40 + i) {
                bad++;
                break;
            }
        mine[i] = np;
    }
    for (int i = 0; i < 8; i++)
        free(mine[i]);

    /* realloc of a block the parent allocated before the fork. */
    unsigned char *g = realloc(par[0], par_sz[0] * 4);
    if (g == NULL)
        return bad + 100;
    if (pattern_mismatch(g, 0, par_sz[0], g_rank, 0) != par_sz[0])
        bad++;
    memset(g, 0xee, par_sz[0] * 4); /* the child's copy only */
    free(g);
    /* free of another parent block. */
    free(par[1]);
    /* write into a third parent block: must stay private to the child. */
    if (g_child_writes)
        memset(par[2], 0xcc, par_sz[2]);

    /* And the heap still works for the child afterwards. */
    for (int i = 0; i < 50; i++) {
        unsigned char *p = malloc(100 + (size_t)i * 997);
        if (p == NULL)
            return bad + 100;
        memset(p, i, 100 + (size_t)i * 997);
        free(p);
    }
    int n = snprintf(msg, sizeof msg, "heap-ok %d\n", bad);
    if (write(wfd, msg, (size_t)n) != n)
        bad++;
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    get_rank_and_size(&rank, &size);
    g_child_writes = argc > 1 && strcmp(argv[1], "child-writes") == 0;

    static const size_t par_sz[NPAR] = {3000, 50000, 8192, 1u << 20};
    unsigned char *par[NPAR];
    for (int i = 0; i < NPAR; i++) {
        par[i] = must(malloc(par_sz[i]), "malloc", par_sz[i]);
        pattern_fill(par[i], 0, par_sz[i], g_rank, i);
    }

    fflush(stdout);
    fflush(stderr);
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (pid == 0) {
        close(fds[0]);
        int bad = child_work(par, par_sz, fds[1]);
        if (bad != 0)
            _exit(10 + (bad > 100 ? 100 : bad));
        if (dup2(fds[1], STDOUT_FILENO) < 0)
            _exit(2);
        close(fds[1]);
        execl("/bin/echo", "echo", "child-ok", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char out[256];
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fds[0], out + got, sizeof out - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got == sizeof out - 1)
            break;
    }
    out[got] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status))
            FAIL("forked child killed by signal %d", WTERMSIG(status));
        else
            FAIL("forked child exited with status %d (10+n: n heap problems "
                 "in the child)", WEXITSTATUS(status));
    }
    if (strcmp(out, "heap-ok 0\nchild-ok\n") != 0)
        FAIL("child output was '%s', expected 'heap-ok 0\\nchild-ok\\n'", out);

    /* The parent's blocks are intact, including the one the child wrote to,
     * the one it freed and the one it realloc'd. */
    for (int i = 0; i < NPAR; i++) {
        static const char *const why[NPAR] = {
            "parent block after the child realloc'd it",
            "parent block after the child freed it",
            "parent block after the child wrote 0xcc into it (fork must give "
            "the child a private copy of the heap)",
            "parent block the child only read",
        };
        pattern_check(par[i], 0, par_sz[i], g_rank, i, why[i]);
    }

    /* The parent's allocator still works and hands out distinct memory. */
    unsigned char *more[NMORE];
    for (int i = 0; i < NMORE; i++) {
        size_t n = 16 + (size_t)(i % 37) * 211 + (i % 50 == 0 ? 300000 : 0);
        more[i] = must(malloc(n), "malloc", n);
        memset(more[i], i & 0xff, n);
        if (malloc_usable_size(more[i]) < n)
            FAIL("malloc_usable_size after fork too small");
    }
    for (int i = 0; i < NMORE; i++) {
        size_t n = 16 + (size_t)(i % 37) * 211 + (i % 50 == 0 ? 300000 : 0);
        for (size_t k = 0; k < n; k++)
            if (more[i][k] != (unsigned char)(i & 0xff)) {
                FAIL("post-fork block %d overwritten at byte %zu", i, k);
                break;
            }
    }
    for (int i = 0; i < NPAR; i++)
        pattern_check(par[i], 0, par_sz[i], g_rank, i,
                      "parent block after new allocations");

    /* system() and popen() (posix_spawn/vfork style children). */
    int rc = system("true");
    if (rc != 0)
        FAIL("system(\"true\") returned %d", rc);
    FILE *pf = popen("echo hi", "r");
    if (pf == NULL) {
        FAIL("popen: %s", strerror(errno));
    } else {
        char buf[64] = {0};
        if (fgets(buf, sizeof buf, pf) == NULL || strcmp(buf, "hi\n") != 0)
            FAIL("popen(\"echo hi\") read '%s'", buf);
        int prc = pclose(pf);
        if (prc != 0)
            FAIL("pclose returned %d", prc);
    }
    for (int i = 0; i < NMORE; i++)
        free(more[i]);
    for (int i = 0; i < NPAR; i++) {
        pattern_check(par[i], 0, par_sz[i], g_rank, i,
                      "parent block at the end");
        par[i] = must(realloc(par[i], par_sz[i] * 2), "realloc", par_sz[i] * 2);
        pattern_check(par[i], 0, par_sz[i], g_rank, i,
                      "parent block realloc'd at the end");
        free(par[i]);
    }

    print_result("fork", rank, size);
    int total = job_failures();
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

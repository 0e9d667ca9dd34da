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

#define LINE 128
#define NPAR 4
#define NMORE 300

static int g_rank = -1;
static int g_failures;
static int g_child_writes;

#define FAIL(...)                                                   \
    do {                                                            \
        fprintf(stderr, "rank %d: FAIL: ", g_rank);                 \
        fprintf(stderr, __VA_ARGS__);                               \
        fputc('\n', stderr);                                        \
        fflush(stderr);                                             \
        g_failures++;                                               \
    } while (0)

static unsigned char pat(int rank, int idx, size_t i)
{
    uint32_t x = (uint32_t)rank * 0x27d4eb2du ^ (uint32_t)idx * 0x9e3779b9u ^
                 (uint32_t)i * 0x85ebca6bu;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return (unsigned char)x;
}

static void fill(unsigned char *p, size_t from, size_t to, int idx)
{
    for (size_t i = from; i < to; i++)
        p[i] = pat(g_rank, idx, i);
}

static int check(const unsigned char *p, size_t to, int idx, const char *what)
{
    for (size_t i = 0; i < to; i++) {
        if (p[i] != pat(g_rank, idx, i)) {
            FAIL("%s (block %d at %p): byte %zu is 0x%02x, expected 0x%02x",
                 what, idx, (const void *)p, i, p[i], pat(g_rank, idx, i));
            return 0;
        }
    }
    return 1;
}

static void *must(void *p, const char *what, size_t size)
{
    if (p == NULL) {
        fprintf(stderr, "rank %d: FAIL: %s(%zu) returned NULL (errno %d)\n",
                g_rank, what, size, errno);
        exit(1);
    }
    return p;
}

/* Everything the child does; returns the number of problems. */
static int child_work(unsigned char **par, const size_t *par_sz, int wfd)
{
    int bad = 0;
    char msg[256];
    /* The parent's blocks are visible and intact in the child. */
    for (int i = 0; i < NPAR; i++)
        for (size_t k = 0; k < par_sz[i]; k++)
            if (par[i][k] != pat(g_rank, i, k)) {
                bad++;
                break;
            }
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
    for (size_t k = 0; k < par_sz[0]; k++)
        if (g[k] != pat(g_rank, 0, k)) {
            bad++;
            break;
        }
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

static void print_ordered(const char *line, int rank, int size)
{
    char mine[LINE];
    memset(mine, 0, sizeof mine);
    snprintf(mine, sizeof mine, "%s", line);
    char *all = NULL;
    if (rank == 0)
        all = must(malloc((size_t)size * LINE), "malloc", (size_t)size * LINE);
    MPI_Gather(mine, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            printf("%s\n", all + (size_t)r * LINE);
        fflush(stdout);
        free(all);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_rank = rank;
    g_child_writes = argc > 1 && strcmp(argv[1], "child-writes") == 0;

    static const size_t par_sz[NPAR] = {3000, 50000, 8192, 1u << 20};
    unsigned char *par[NPAR];
    for (int i = 0; i < NPAR; i++) {
        par[i] = must(malloc(par_sz[i]), "malloc", par_sz[i]);
        fill(par[i], 0, par_sz[i], i);
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
        check(par[i], par_sz[i], i, why[i]);
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
        check(par[i], par_sz[i], i, "parent block after new allocations");

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
        check(par[i], par_sz[i], i, "parent block at the end");
        par[i] = must(realloc(par[i], par_sz[i] * 2), "realloc", par_sz[i] * 2);
        check(par[i], par_sz[i], i, "parent block realloc'd at the end");
        free(par[i]);
    }

    char line[LINE];
    snprintf(line, sizeof line, "rank %d: fork %s", rank,
             g_failures == 0 ? "ok" : "FAILED");
    print_ordered(line, rank, size);
    int total = 0;
    MPI_Allreduce(&g_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

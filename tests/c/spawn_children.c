/*
 * spawn_children.c - MPI_Comm_spawn of the program itself; parents and
 * children talk over the inter-communicator, then over its merge.
 *
 * usage: spawn_children [NCHILD] [--no-merge] [--host NAME]
 *        NCHILD children (default 2, 1..16); --no-merge skips step 4;
 *        --host NAME places the children on host NAME (the info key
 *        "host" of MPI_Comm_spawn, which Open MPI and MPICH both take),
 *        and every child checks that MPI_Get_processor_name is NAME.
 *
 * Parent job (started by mpirun/mpiexec, P ranks):
 *   1. MPI_Comm_spawn(argv[0], {"--child", ...}, NCHILD, root 0,
 *      MPI_COMM_WORLD) -> inter-communicator `inter`; checks the error codes
 *      and that the remote group has NCHILD processes.
 *   2. For every child c: sends 1000*p + c (p = own rank) over `inter`, then
 *      expects the reply 1000*p + c + 500000 from that child.
 *   3. MPI_Barrier(inter).
 *   4. MPI_Intercomm_merge(inter, high=0) -> `merged` (P + NCHILD ranks,
 *      parents first); MPI_Allreduce of the merged ranks (sum), a ring
 *      MPI_Sendrecv of the merged rank, MPI_Comm_free(&merged).
 *   5. MPI_Comm_disconnect(&inter), MPI_Finalize.
 * Child job (NCHILD ranks, its own MPI_COMM_WORLD):
 *   1. MPI_Comm_get_parent -> `parent` (must not be MPI_COMM_NULL; the
 *      remote group must have P processes); an MPI_Allreduce over the
 *      children's MPI_COMM_WORLD (sum of ranks), so that a tool that
 *      accelerates intra-node traffic is exercised among the children too.
 *   2. For every parent rank p: receives 1000*p + c, replies + 500000.
 *   3.-5. As the parents (merge with high=1, so children come last).
 *
 * A job with one process per node and a job with several are the
 * interesting mix for a shared-memory tool: run it as
 *   mpirun -np 2 spawn_children 1     and     mpirun -np 1 spawn_children 2
 * as well as with equal sizes (-np 2, NCHILD 2).
 *
 * Output: one verdict line per process on stdout, deterministic (no pids,
 * no timings), e.g.
 *   spawn_children: parent 0/2: OK (spawned 1, 2 messages, merged 3)
 *   spawn_children: child 0/1: OK (parents 2, 4 messages, merged 3)
 * or "spawn_children: <who>: FAIL at <stage>: <reason>". Exit status 0 on
 * success, 1 on a failed check or an MPI error (all communicators use
 * MPI_ERRORS_RETURN), 2 when the watchdog fires.
 *
 * Watchdog: SPAWN_CHILDREN_TIMEOUT seconds (default 60; 0 = off, e.g. to
 * attach gdb to a hung process). When it fires the process prints
 * "FAIL at <stage>: timeout" and exits, so a hang names the step that
 * never completed. (Open MPI forwards the variable to the children only
 * with `mpirun -x SPAWN_CHILDREN_TIMEOUT`.)
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG 7
#define REPLY_OFFSET 500000

/* What this process is doing; read by the watchdog. */
static volatile sig_atomic_t g_stage;
enum {
    S_INIT,
    S_PARENT,
    S_SPAWN,
    S_CHILD_ALLREDUCE,
    S_EXCHANGE,
    S_BARRIER,
    S_MERGE,
    S_MERGED_ALLREDUCE,
    S_MERGED_RING,
    S_MERGED_FREE,
    S_DISCONNECT,
    S_FINALIZE,
};
static const char *const STAGE_NAMES[] = {
    [S_INIT] = "MPI_Init",
    [S_PARENT] = "MPI_Comm_get_parent",
    [S_SPAWN] = "MPI_Comm_spawn",
    [S_CHILD_ALLREDUCE] = "MPI_Allreduce(children's MPI_COMM_WORLD)",
    [S_EXCHANGE] = "message exchange over the inter-communicator",
    [S_BARRIER] = "MPI_Barrier(inter-communicator)",
    [S_MERGE] = "MPI_Intercomm_merge",
    [S_MERGED_ALLREDUCE] = "MPI_Allreduce(merged)",
    [S_MERGED_RING] = "MPI_Sendrecv ring(merged)",
    [S_MERGED_FREE] = "MPI_Comm_free(merged)",
    [S_DISCONNECT] = "MPI_Comm_disconnect",
    [S_FINALIZE] = "MPI_Finalize",
};

/* --host: where the children must run (NULL: wherever the MPI puts them). */
static const char *g_host;

/* "parent 0/2" or "child 1/2", once the rank is known. */
static char g_who[64] = "process ?/?";

static void on_alarm(int sig)
{
    (void)sig;
    char line[192];
    int n = snprintf(line, sizeof line, "spawn_children: %s: FAIL at %s: timeout\n", g_who,
                     STAGE_NAMES[g_stage]);
    if (n > 0)
        (void)!write(STDOUT_FILENO, line, (size_t)n);
    _exit(2);
}

/* Prints the failure verdict and exits with status 1, without
 * MPI_Finalize (the other side may be stuck; the launcher ends the job). */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Keep the verdict one deterministic line: MPICH's error stacks span
     * lines and show argument addresses, which become "0x?". */
    char out[1024];
    size_t o = 0;
    for (const char *c = msg; *c && o + 4 < sizeof out; c++) {
        if (c[0] == '0' && c[1] == 'x' && isxdigit((unsigned char)c[2])) {
            memcpy(out + o, "0x?", 3);
            o += 3;
            for (c += 2; isxdigit((unsigned char)c[1]); c++)
                ;
        } else {
            out[o++] = *c == '\n' ? ' ' : *c;
        }
    }
    out[o] = '\0';
    printf("spawn_children: %s: FAIL at %s: %s\n", g_who, STAGE_NAMES[g_stage], out);
    fflush(stdout);
    _exit(1);
}

/* Fails with the MPI error string unless rc is MPI_SUCCESS. */
static void check_mpi(int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return;
    char err[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, err, &len) != MPI_SUCCESS)
        snprintf(err, sizeof err, "error %d", rc);
    fail("%s returned %s", call, err);
}

/* Step 4: merge `inter` (high = 0 for the parents, 1 for the children),
 * one collective and one point-to-point round over the result. Returns
 * the size of the merged communicator. */
static int merged_round(MPI_Comm inter, int high, int expected_size)
{
    MPI_Comm merged = MPI_COMM_NULL;
    g_stage = S_MERGE;
    check_mpi(MPI_Intercomm_merge(inter, high, &merged), "MPI_Intercomm_merge");
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    int rank = -1, size = -1;
    MPI_Comm_rank(merged, &rank);
    MPI_Comm_size(merged, &size);
    if (size != expected_size)
        fail("merged size %d, expected %d", size, expected_size);

    g_stage = S_MERGED_ALLREDUCE;
    int sum = -1;
    check_mpi(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged), "MPI_Allreduce");
    if (sum != size * (size - 1) / 2)
        fail("sum of merged ranks %d, expected %d", sum, size * (size - 1) / 2);

    g_stage = S_MERGED_RING;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    check_mpi(MPI_Sendrecv(&rank, 1, MPI_INT, next, TAG, &got, 1, MPI_INT, prev, TAG, merged,
                           MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
    if (got != prev)
        fail("got %d from merged rank %d", got, prev);

    g_stage = S_MERGED_FREE;
    check_mpi(MPI_Comm_free(&merged), "MPI_Comm_free");
    return size;
}

static void run_parent(const char *self, int nchild, int merge)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    snprintf(g_who, sizeof g_who, "parent %d/%d", rank, size);

    /* 1. Spawn. */
    g_stage = S_SPAWN;
    char *child_argv[5] = {"--child"};
    int a = 1;
    if (!merge)
        child_argv[a++] = "--no-merge";
    MPI_Info info = MPI_INFO_NULL;
    if (g_host) {
        child_argv[a++] = "--host";
        child_argv[a++] = (char *)g_host;
        check_mpi(MPI_Info_create(&info), "MPI_Info_create");
        check_mpi(MPI_Info_set(info, "host", g_host), "MPI_Info_set");
    }
    child_argv[a] = NULL;
    int errcodes[16];
    MPI_Comm inter = MPI_COMM_NULL;
    check_mpi(MPI_Comm_spawn(self, child_argv, nchild, info, 0, MPI_COMM_WORLD, &inter, errcodes),
              "MPI_Comm_spawn");
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    for (int i = 0; i < nchild; i++)
        if (errcodes[i] != MPI_SUCCESS)
            fail("errcodes[%d] = %d", i, errcodes[i]);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int rsize = -1;
    check_mpi(MPI_Comm_remote_size(inter, &rsize), "MPI_Comm_remote_size");
    if (rsize != nchild)
        fail("remote size %d, expected %d", rsize, nchild);

    /* 2. One message to every child and its reply. */
    g_stage = S_EXCHANGE;
    for (int c = 0; c < nchild; c++) {
        int v = 1000 * rank + c, r = -1;
        check_mpi(MPI_Send(&v, 1, MPI_INT, c, TAG, inter), "MPI_Send");
        check_mpi(MPI_Recv(&r, 1, MPI_INT, c, TAG, inter, MPI_STATUS_IGNORE), "MPI_Recv");
        if (r != v + REPLY_OFFSET)
            fail("child %d replied %d, expected %d", c, r, v + REPLY_OFFSET);
    }

    /* 3. Inter-communicator barrier. */
    g_stage = S_BARRIER;
    check_mpi(MPI_Barrier(inter), "MPI_Barrier");

    /* 4. Merge. */
    int merged = merge ? merged_round(inter, 0, size + nchild) : 0;

    /* 5. Done. */
    g_stage = S_DISCONNECT;
    check_mpi(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
    g_stage = S_FINALIZE;
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    printf("spawn_children: %s: OK (spawned %d, %d messages, merged %d)\n", g_who, nchild,
           2 * nchild, merged);
}

static void run_child(MPI_Comm parent, int merge)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    snprintf(g_who, sizeof g_who, "child %d/%d", rank, size);

    /* 1. The parent communicator, and the children's own world. */
    if (parent == MPI_COMM_NULL)
        fail("MPI_Comm_get_parent returned MPI_COMM_NULL");
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    int nparent = -1;
    check_mpi(MPI_Comm_remote_size(parent, &nparent), "MPI_Comm_remote_size");
    if (nparent < 1)
        fail("remote size %d", nparent);
    if (g_host) {
        char name[MPI_MAX_PROCESSOR_NAME];
        int len = 0;
        check_mpi(MPI_Get_processor_name(name, &len), "MPI_Get_processor_name");
        if (strcmp(name, g_host) != 0)
            fail("running on %s, spawned with host %s", name, g_host);
    }
    g_stage = S_CHILD_ALLREDUCE;
    int sum = -1;
    check_mpi(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    if (sum != size * (size - 1) / 2)
        fail("sum of ranks %d, expected %d", sum, size * (size - 1) / 2);

    /* 2. Answer every parent rank. */
    g_stage = S_EXCHANGE;
    for (int p = 0; p < nparent; p++) {
        int v = -1;
        check_mpi(MPI_Recv(&v, 1, MPI_INT, p, TAG, parent, MPI_STATUS_IGNORE), "MPI_Recv");
        if (v != 1000 * p + rank)
            fail("parent %d sent %d, expected %d", p, v, 1000 * p + rank);
        v += REPLY_OFFSET;
        check_mpi(MPI_Send(&v, 1, MPI_INT, p, TAG, parent), "MPI_Send");
    }

    /* 3.-5. As the parents. */
    g_stage = S_BARRIER;
    check_mpi(MPI_Barrier(parent), "MPI_Barrier");
    int merged = merge ? merged_round(parent, 1, nparent + size) : 0;
    g_stage = S_DISCONNECT;
    check_mpi(MPI_Comm_disconnect(&parent), "MPI_Comm_disconnect");
    g_stage = S_FINALIZE;
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    printf("spawn_children: %s: OK (parents %d, %d messages, merged %d)\n", g_who, nparent,
           2 * nparent, merged);
}

int main(int argc, char **argv)
{
    int is_child = 0, merge = 1, nchild = 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--child") == 0)
            is_child = 1;
        else if (strcmp(argv[i], "--no-merge") == 0)
            merge = 0;
        else if (strcmp(argv[i], "--host") == 0 && i + 1 < argc)
            g_host = argv[++i];
        else if ((nchild = atoi(argv[i])) < 1 || nchild > 16) {
            fprintf(stderr, "usage: %s [NCHILD 1..16] [--no-merge] [--host NAME]\n", argv[0]);
            return 1;
        }
    }
    const char *t = getenv("SPAWN_CHILDREN_TIMEOUT");
    signal(SIGALRM, on_alarm);
    alarm(t ? (unsigned)strtoul(t, NULL, 10) : 60); /* alarm(0): no watchdog */
    setvbuf(stdout, NULL, _IOLBF, 0);

    g_stage = S_INIT;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        fail("MPI_Init failed");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    g_stage = S_PARENT;
    MPI_Comm parent = MPI_COMM_NULL;
    check_mpi(MPI_Comm_get_parent(&parent), "MPI_Comm_get_parent");
    if (is_child)
        run_child(parent, merge);
    else if (parent != MPI_COMM_NULL)
        fail("started without --child, but has a parent");
    else
        run_parent(argv[0], nchild, merge);
    return 0;
}

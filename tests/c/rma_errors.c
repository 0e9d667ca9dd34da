/*
 * rma_errors.c - one-sided (RMA) conformance: errors under
 * MPI_ERRORS_RETURN.
 *
 * Why: heapmpi takes node-local windows over and leaves the rest to the
 * real MPI. Whatever the path, an erroneous call must return the error
 * class the stock MPI returns, through the window's error handler
 * (MPI_ERRORS_RETURN is respected: the call returns, nothing aborts,
 * nothing hangs), and the window must work afterwards. The standard does
 * not require an MPI to detect these errors, and Open MPI and MPICH differ:
 * every class printed is compared with the stock run of the same MPI, not
 * judged.
 *
 * Every rank makes the same calls. Per window (Win_allocate, then
 * Win_create over malloc memory; the window's and MPI_COMM_WORLD's error
 * handlers are MPI_ERRORS_RETURN):
 *  A. outside any epoch: Put, Get, Accumulate, Get_accumulate,
 *     Fetch_and_op, Compare_and_swap, Rput, Rget, Win_flush,
 *     Win_flush_all, Win_flush_local, Win_unlock, Win_unlock_all,
 *     Win_complete, Win_wait, Win_test;
 *  B. in a fence epoch: target rank = size and -3, MPI_PROC_NULL (a
 *     no-op: success, nothing moves), a Get (both windows) and a Put (only
 *     on Win_create, whose memory goes on past the window: stock MPICH does
 *     not refuse it) reaching beyond the target's window, a negative
 *     displacement, count -1,
 *     MPI_DATATYPE_NULL on either side, MPI_OP_NULL and a user-defined
 *     operation in Accumulate, Compare_and_swap on MPI_DOUBLE, Rput (only
 *     for passive target), Win_lock and Win_post inside the fence epoch;
 *  C. passive target: Win_lock of an invalid lock type and of rank = size,
 *     the same target locked twice, Win_unlock of a target that is not
 *     locked, Win_fence and Win_lock_all inside a lock epoch,
 *     Win_unlock_all without Win_lock_all;
 *  D. PSCW: Win_complete without Win_start, Win_wait and Win_test without
 *     Win_post;
 *  E. the window's flavour: Win_shared_query, Win_attach and Win_detach
 *     on a window that is not shared / not dynamic;
 *  C2 (after E). Win_lock after a fence epoch without operations (allowed)
 *     and after one with a Put (refused), and a Put after that lock epoch;
 *  F. afterwards: a correct fence epoch and a correct lock epoch (Put,
 *     Accumulate, Get), results checked.
 * Cases one stock MPI does not survive (crash, hang, or a window left
 * unusable) are left out for that MPI, with the reason where they would be:
 * under stock Open MPI 4.1.4, Compare_and_swap on MPI_DOUBLE (not refused,
 * then SIGSEGV) and locking a target twice (accepted, then the window's
 * next fence fails on some rank or other). An epoch an MPI opens although
 * it should not (Open MPI: Win_lock_all inside a lock epoch) is closed
 * again and that call's class printed too.
 *
 * Stock Open MPI 4.1.4 cannot create a window with Win_create on one
 * process (MPI_ERR_WIN), so at 1 rank the Win_create window is left out
 * there.
 *
 * Output (stdout, rank 0, rank order): per-rank lines with error classes by
 * name, then "rank N: errors ok". Exit status 0 on success, 1 on a failed
 * check. RMA_TRACE=1 prints every call on stderr before it is made.
 */
#define _GNU_SOURCE
#include "coll_util.h"

static int g_me, g_n, g_trace;

static const char *rma_class_name(int cls)
{
#define C(x)                                                            \
    if (cls == x)                                                       \
        return #x;
    C(MPI_ERR_WIN)
    C(MPI_ERR_BASE)
    C(MPI_ERR_SIZE)
    C(MPI_ERR_DISP)
    C(MPI_ERR_LOCKTYPE)
    C(MPI_ERR_ASSERT)
    C(MPI_ERR_RMA_CONFLICT)
    C(MPI_ERR_RMA_SYNC)
    C(MPI_ERR_RMA_RANGE)
    C(MPI_ERR_RMA_ATTACH)
    C(MPI_ERR_RMA_SHARED)
    C(MPI_ERR_RMA_FLAVOR)
    C(MPI_ERR_INFO)
    C(MPI_ERR_NO_MEM)
#undef C
    return err_class_name(cls);
}

static const char *g_wname = "";
static int g_rc; /* the return code of the last TRY */

/* An erroneous call: prints its class (and keeps its code in g_rc: an
 * epoch that an MPI opened although it should not have is closed again). */
#define TRY(what, call)                                                  \
    do {                                                                 \
        if (g_trace)                                                     \
            fprintf(stderr, "rank %d: %s\n", g_me, what);                \
        g_rc = (call);                                                   \
        out("%s %s: %s", g_wname, what, rma_class_name(err_class(g_rc))); \
    } while (0)

#define WINTS 64

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* A. no epoch at all */
static void no_epoch(MPI_Win w)
{
    section("A no epoch");
    const int right = (g_me + 1) % g_n;
    int b[8] = {0}, r[8] = {0};
    MPI_Request rq = MPI_REQUEST_NULL;
    int flag = 0;
    TRY("A Put outside an epoch", MPI_Put(b, 1, MPI_INT, right, 0, 1, MPI_INT, w));
    TRY("A Get outside an epoch", MPI_Get(r, 1, MPI_INT, right, 0, 1, MPI_INT, w));
    TRY("A Accumulate outside an epoch",
        MPI_Accumulate(b, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, w));
    TRY("A Get_accumulate outside an epoch",
        MPI_Get_accumulate(b, 1, MPI_INT, r, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, w));
    TRY("A Fetch_and_op outside an epoch", MPI_Fetch_and_op(b, r, MPI_INT, right, 0, MPI_SUM, w));
    TRY("A Compare_and_swap outside an epoch",
        MPI_Compare_and_swap(b, b + 1, r, MPI_INT, right, 0, w));
    TRY("A Rput outside an epoch", MPI_Rput(b, 1, MPI_INT, right, 0, 1, MPI_INT, w, &rq));
    if (rq != MPI_REQUEST_NULL)
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    rq = MPI_REQUEST_NULL;
    TRY("A Rget outside an epoch", MPI_Rget(r, 1, MPI_INT, right, 0, 1, MPI_INT, w, &rq));
    if (rq != MPI_REQUEST_NULL)
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    TRY("A Win_flush outside an epoch", MPI_Win_flush(right, w));
    TRY("A Win_flush_all outside an epoch", MPI_Win_flush_all(w));
    TRY("A Win_flush_local outside an epoch", MPI_Win_flush_local(right, w));
    TRY("A Win_unlock without Win_lock", MPI_Win_unlock(right, w));
    TRY("A Win_unlock_all without Win_lock_all", MPI_Win_unlock_all(w));
    TRY("A Win_complete without Win_start", MPI_Win_complete(w));
    TRY("A Win_wait without Win_post", MPI_Win_wait(w));
    TRY("A Win_test without Win_post", MPI_Win_test(w, &flag));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* B. inside a fence epoch */
static void fence_epoch(MPI_Win w, MPI_Aint wbytes, int slack)
{
    section("B fence epoch");
    const int right = (g_me + 1) % g_n;
    int b[WINTS], r[WINTS];
    for (int i = 0; i < WINTS; i++)
        b[i] = r[i] = 0;
    double d[2] = {1.0, 2.0}, dr = 0;
    MPI_Op uop;
    MPI_OK(MPI_Op_create(user_fn, 1, &uop));
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_OK(MPI_Win_fence(0, w));
    TRY("B Put to rank = size", MPI_Put(b, 1, MPI_INT, g_n, 0, 1, MPI_INT, w));
    /* (-1 and -2 are MPI_PROC_NULL and MPI_ANY_SOURCE in one MPI or the
     * other) */
    TRY("B Put to rank -3", MPI_Put(b, 1, MPI_INT, -3, 0, 1, MPI_INT, w));
    TRY("B Put to MPI_PROC_NULL", MPI_Put(b, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w));
    int untouched = 12345;
    TRY("B Get from MPI_PROC_NULL",
        MPI_Get(&untouched, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w));
    TRY("B Accumulate to MPI_PROC_NULL",
        MPI_Accumulate(b, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, w));
    /* 2 of 4 elements beyond the end of the target's window: stock MPICH
     * does not refuse them (on Win_create the memory goes on) */
    if (slack)
        TRY("B Put beyond the target window",
            MPI_Put(b, 4, MPI_INT, right, (MPI_Aint)(wbytes / 4 - 2), 4, MPI_INT, w));
    TRY("B Get beyond the target window",
        MPI_Get(r, 4, MPI_INT, right, (MPI_Aint)(wbytes / 4 - 2), 4, MPI_INT, w));
    TRY("B Put at displacement -1", MPI_Put(b, 1, MPI_INT, right, -1, 1, MPI_INT, w));
    TRY("B Put count -1", MPI_Put(b, -1, MPI_INT, right, 0, -1, MPI_INT, w));
    TRY("B Get count -1", MPI_Get(r, -1, MPI_INT, right, 0, -1, MPI_INT, w));
    TRY("B Put with origin MPI_DATATYPE_NULL",
        MPI_Put(b, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, w));
    TRY("B Put with target MPI_DATATYPE_NULL",
        MPI_Put(b, 1, MPI_INT, right, 0, 1, MPI_DATATYPE_NULL, w));
    TRY("B Accumulate with MPI_OP_NULL",
        MPI_Accumulate(b, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, w));
    TRY("B Accumulate with a user-defined operation",
        MPI_Accumulate(b, 1, MPI_INT, right, 0, 1, MPI_INT, uop, w));
#ifndef OPEN_MPI
    /* stock Open MPI 4.1.4 does not refuse it and crashes (SIGSEGV in its
     * 8-byte Compare_and_swap, as on MPI_LONG_LONG) */
    TRY("B Compare_and_swap on MPI_DOUBLE",
        MPI_Compare_and_swap(&d[0], &d[1], &dr, MPI_DOUBLE, right, 0, w));
#else
    (void)d;
    (void)dr;
#endif
    TRY("B Rput in a fence epoch", MPI_Rput(b, 1, MPI_INT, right, 0, 1, MPI_INT, w, &rq));
    if (rq != MPI_REQUEST_NULL)
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    TRY("B Win_lock in a fence epoch", MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
    if (g_rc == MPI_SUCCESS)
        TRY("B Win_unlock of that lock", MPI_Win_unlock(right, w));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
    out("%s B Get from MPI_PROC_NULL left its buffer %s", g_wname,
        untouched == 12345 ? "alone" : "CHANGED");
    CHECK(untouched == 12345, "Get from MPI_PROC_NULL changed the buffer");
    MPI_OK(MPI_Op_free(&uop));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* C. passive target */
static void passive(MPI_Win w)
{
    section("C passive target");
    const int right = (g_me + 1) % g_n;
    TRY("C Win_lock with lock type 12345", MPI_Win_lock(12345, right, 0, w));
    TRY("C Win_lock of rank = size", MPI_Win_lock(MPI_LOCK_SHARED, g_n, 0, w));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
    int twice = 0;
#ifndef OPEN_MPI
    /* stock Open MPI 4.1.4 accepts the second lock (MPI_SUCCESS), then one
     * unlock ends the epoch and a later fence on the window fails with
     * MPI_ERR_RMA_SYNC on some rank or other: the window is left unusable */
    TRY("C Win_lock of a target already locked", MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
    twice = g_rc == MPI_SUCCESS;
#endif
    TRY("C Win_fence in a lock epoch", MPI_Win_fence(0, w));
    TRY("C Win_lock_all in a lock epoch", MPI_Win_lock_all(0, w));
    if (g_rc == MPI_SUCCESS)
        TRY("C Win_unlock_all of that Win_lock_all", MPI_Win_unlock_all(w));
    TRY("C Win_unlock", MPI_Win_unlock(right, w));
    if (twice)
        TRY("C Win_unlock of the second lock", MPI_Win_unlock(right, w));
    TRY("C Win_unlock once more", MPI_Win_unlock(right, w));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* C2. a lock after a fence epoch that saw no operation (both stock MPIs
 * let the lock replace it) and after one that saw a Put (both refuse) */
static void lock_after_fence(MPI_Win w)
{
    section("C2 lock after fence");
    const int right = (g_me + 1) % g_n;
    int v = 1;
    MPI_OK(MPI_Win_fence(0, w));
    TRY("C2 Win_lock after an empty fence epoch", MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
    if (g_rc == MPI_SUCCESS)
        TRY("C2 Win_unlock of that lock", MPI_Win_unlock(right, w));
    TRY("C2 Put after that lock epoch", MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w));
    MPI_OK(MPI_Win_fence(0, w));
    MPI_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w));
    TRY("C2 Win_lock after a Put in the fence epoch", MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
    if (g_rc == MPI_SUCCESS)
        TRY("C2 Win_unlock of that lock", MPI_Win_unlock(right, w));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* D. PSCW */
static void pscw(MPI_Win w)
{
    section("D PSCW");
    int flag = 0;
    TRY("D Win_complete without Win_start", MPI_Win_complete(w));
    TRY("D Win_wait without Win_post", MPI_Win_wait(w));
    TRY("D Win_test without Win_post", MPI_Win_test(w, &flag));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* E. flavour */
static void flavour(MPI_Win w)
{
    section("E flavour");
    MPI_Aint sz;
    int du;
    void *p;
    int x[4];
    TRY("E Win_shared_query on a window that is not shared",
        MPI_Win_shared_query(w, g_me, &sz, &du, &p));
    TRY("E Win_attach to a window that is not dynamic", MPI_Win_attach(w, x, sizeof x));
    TRY("E Win_detach from a window that is not dynamic", MPI_Win_detach(w, x));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* F. afterwards: right results */
static void afterwards(MPI_Win w, int *mem)
{
    section("F afterwards");
    const int right = (g_me + 1) % g_n, left = (g_me + g_n - 1) % g_n;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w));
    for (int i = 0; i < WINTS; i++)
        mem[i] = 0;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSTORE, w));
    int v[4] = {g_me + 1, g_me + 2, g_me + 3, g_me + 4}, one = 1;
    MPI_OK(MPI_Put(v, 4, MPI_INT, right, 0, 4, MPI_INT, w));
    for (int t = 0; t < g_n; t++)
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, t, 8, 1, MPI_INT, MPI_SUM, w));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
    int ok = mem[0] == left + 1 && mem[3] == left + 4 && mem[8] == g_n;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w));
    MPI_OK(MPI_Accumulate(v, 4, MPI_INT, right, 16, 4, MPI_INT, MPI_SUM, w));
    MPI_OK(MPI_Win_unlock(right, w));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int g[4] = {0};
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
    MPI_OK(MPI_Get(g, 4, MPI_INT, right, 16, 4, MPI_INT, w));
    MPI_OK(MPI_Win_unlock(right, w));
    ok &= g[0] == g_me + 1 && g[3] == g_me + 4;
    CHECK(ok, "the epochs after the errors give wrong results");
    out("%s F fence and lock epochs after the errors: %s", g_wname, ok ? "right" : "WRONG");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void on_window(int create)
{
    int *mem = NULL;
    MPI_Win w;
    MPI_Aint wbytes = WINTS * sizeof(int);
    /* a window that is the first half of its memory: a Put beyond the
     * window that an MPI does not refuse lands in the second half */
    if (create) {
        g_wname = "Win_create/malloc:";
        mem = must(calloc(2 * WINTS, sizeof(int)), "calloc", 0);
        MPI_OK(MPI_Win_create(mem, wbytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    } else {
        g_wname = "Win_allocate:";
        MPI_OK(MPI_Win_allocate(wbytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
    }
    MPI_OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    no_epoch(w);
    fence_epoch(w, wbytes, create);
    passive(w);
    pscw(w);
    flavour(w);
    /* after D: stock Open MPI's Win_complete without Win_start changes its
     * answer (SUCCESS to MPI_ERR_RMA_SYNC) once this section ran */
    lock_after_fence(w);
    afterwards(w, mem);
    MPI_OK(MPI_Win_free(&w));
    if (create)
        free(mem);
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_n = size;
    g_trace = getenv("RMA_TRACE") != NULL;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    on_window(0);
#ifdef OPEN_MPI
    if (size == 1)
        out("Win_create/malloc: left out (stock Open MPI cannot create it on one process)");
    else
#endif
        on_window(1);
    return coll_finish("errors", rank, size);
}

/*
 * rma_comms.c - one-sided conformance: windows on every communicator a
 * program can make, and shared windows with empty segments.
 *
 * Why: heapmpi runs the windows of node-local communicators over its
 * shared heap and hands the others to the real MPI; which communicator a
 * window is made on decides the path (its group, its ranks' order, whether
 * it has one process, whether a rank holds it at all). Every one of them
 * must behave as the stock MPI. Shared windows where some or all ranks
 * contribute no memory are where the MPIs differ most from each other
 * (what Win_shared_query returns for an empty segment): heapmpi must give
 * what the stock MPI underneath gives.
 *
 * Sections:
 *  A. windows on: MPI_COMM_SELF; a duplicate of MPI_COMM_WORLD; a split
 *     into halves (ranks reversed); a split into single ranks; a
 *     communicator holding one rank of many (MPI_Comm_create with a
 *     one-rank group: the last world rank; the others get MPI_COMM_NULL and
 *     make no window); MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). On each,
 *     three flavours (Win_allocate, Win_allocate_shared, Win_create over
 *     MPI_Alloc_mem memory), and on each window, to the next rank of the
 *     communicator: a fence epoch (Put, Accumulate, Fetch_and_op, Get), then
 *     passive target (an exclusive lock: Put and Fetch_and_op; a shared
 *     lock: Accumulate and Get). Fetched values and the window after each
 *     phase are checked and printed as checksums.
 *  B. Win_allocate_shared where the odd ranks contribute 0 bytes (the even
 *     ones 24 (r + 1) bytes, disp_unit r + 1), on MPI_COMM_WORLD and on the
 *     MPI_COMM_TYPE_SHARED communicator: Win_shared_query of every rank and
 *     of MPI_PROC_NULL, printing the size, the disp_unit, whether the base
 *     is NULL and, for MPI_PROC_NULL, whose segment it is; then stores into
 *     the ranks' own segments and loads of all of them through the queried
 *     pointers.
 *  C. Win_allocate_shared where every rank contributes 0 bytes, on the same
 *     two communicators: Win_shared_query of every rank and of
 *     MPI_PROC_NULL.
 *
 * What Win_shared_query returns for an empty segment differs between Open
 * MPI and MPICH; it is printed, and compared with the stock run of the same
 * MPI.
 *
 * Stock bugs worked around: stock Open MPI 4.1.4 cannot create a window with
 * Win_create on a communicator of one process (MPI_ERR_WIN: no one-sided
 * component takes it, in a job of one process or of several); those windows
 * are left out there.
 *
 * Output (stdout, rank 0, rank order): per-rank lines, then
 * "rank N: comms ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <stddef.h>

#include "coll_util.h"

static int g_me, g_n;

#define WI 64 /* ints per rank's window */

enum { F_ALLOCATE, F_SHARED, F_CREATE, NFLAV };
static const char *const FNAME[NFLAV] = {"Win_allocate", "Win_allocate_shared",
                                         "Win_create/Alloc_mem"};

static int init_val(int world_rank, int i)
{
    return 1000 * world_rank + i;
}

static int pat(int world_rank, int phase, int i)
{
    return (int)(mix64((uint64_t)world_rank * 31 + (uint64_t)phase, (uint64_t)i) & 0xffffff);
}

static uint64_t hash_ints(const int *p, size_t n)
{
    return hash_bytes(0, p, n * sizeof(int));
}

/* Stock Open MPI 4.1.4 cannot Win_create on a communicator of one process. */
static int flavour_works(int fl, int m)
{
#ifdef OPEN_MPI
    return !(fl == F_CREATE && m == 1);
#else
    (void)fl;
    (void)m;
    return 1;
#endif
}

/* The world rank of rank r of comm. */
static int world_of(MPI_Comm comm, int r)
{
    MPI_Group g, wg;
    int w = -1;
    MPI_OK(MPI_Comm_group(comm, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_translate_ranks(g, 1, &r, wg, &w));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&wg));
    return w;
}

/* Section A on one communicator and flavour. */
static void round_trips(MPI_Comm comm, const char *cname, int fl)
{
    int r, m;
    MPI_OK(MPI_Comm_rank(comm, &r));
    MPI_OK(MPI_Comm_size(comm, &m));
    char what[160];
    snprintf(what, sizeof what, "A %s (rank %d of %d) %s", cname, r, m, FNAME[fl]);
    section(what);
    if (!flavour_works(fl, m)) {
        out("%s: left out (stock Open MPI cannot create it on one process)", what);
        return;
    }
    const int t = (r + 1) % m, s = (r + m - 1) % m;
    const int wt = world_of(comm, t), ws = world_of(comm, s);
    int *mine = NULL;
    MPI_Win win;
    void *p = NULL;
    switch (fl) {
    case F_ALLOCATE:
        MPI_OK(MPI_Win_allocate(WI * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &p, &win));
        break;
    case F_SHARED:
        MPI_OK(MPI_Win_allocate_shared(WI * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &p,
                                       &win));
        break;
    case F_CREATE:
        MPI_OK(MPI_Alloc_mem(WI * sizeof(int), MPI_INFO_NULL, &p));
        MPI_OK(MPI_Win_create(p, WI * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &win));
        break;
    }
    mine = p;
    int exp[WI];
    for (int i = 0; i < WI; i++)
        mine[i] = exp[i] = init_val(g_me, i);

    /* fence: Put [0, 8), Accumulate [16, 20), Fetch_and_op [24], Get [32, 36) */
    int obuf[8], acc[4], one = 1, fetched = -1, got[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 8; i++)
        obuf[i] = pat(g_me, 1, i);
    for (int i = 0; i < 4; i++)
        acc[i] = r + 1 + i;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_OK(MPI_Put(obuf, 8, MPI_INT, t, 0, 8, MPI_INT, win));
    MPI_OK(MPI_Accumulate(acc, 4, MPI_INT, t, 16, 4, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Fetch_and_op(&one, &fetched, MPI_INT, t, 24, MPI_SUM, win));
    MPI_OK(MPI_Get(got, 4, MPI_INT, t, 32, 4, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    int ok = fetched == init_val(wt, 24);
    for (int i = 0; i < 4; i++)
        ok &= got[i] == init_val(wt, 32 + i);
    CHECK(ok, "%s: fence: fetched %d, got %d..., expected %d, %d...", what, fetched, got[0],
          init_val(wt, 24), init_val(wt, 32));
    for (int i = 0; i < 8; i++)
        exp[i] = pat(ws, 1, i);
    for (int i = 0; i < 4; i++)
        exp[16 + i] += s + 1 + i;
    exp[24] += 1;
    int wok = memcmp(mine, exp, sizeof exp) == 0;
    CHECK(wok, "%s: fence: the window is wrong", what);
    out("%s: fence: fetched and got %s, window %s, checksum %016llx", what,
        ok ? "right" : "WRONG", wok ? "right" : "WRONG",
        (unsigned long long)hash_ints(mine, WI));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* passive target: exclusive (Put [8, 16), Fetch_and_op [25]), shared
     * (Accumulate [20, 24), Get [40, 44)) */
    for (int i = 0; i < 8; i++)
        obuf[i] = pat(g_me, 2, i);
    int two = 2;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    MPI_OK(MPI_Put(obuf, 8, MPI_INT, t, 8, 8, MPI_INT, win));
    MPI_OK(MPI_Fetch_and_op(&two, &fetched, MPI_INT, t, 25, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(t, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    MPI_OK(MPI_Accumulate(acc, 4, MPI_INT, t, 20, 4, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Get(got, 4, MPI_INT, t, 40, 4, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(t, win));
    MPI_OK(MPI_Barrier(comm));
    ok = fetched == init_val(wt, 25);
    for (int i = 0; i < 4; i++)
        ok &= got[i] == init_val(wt, 40 + i);
    CHECK(ok, "%s: lock: fetched %d, got %d..., expected %d, %d...", what, fetched, got[0],
          init_val(wt, 25), init_val(wt, 40));
    for (int i = 0; i < 8; i++)
        exp[8 + i] = pat(ws, 2, i);
    for (int i = 0; i < 4; i++)
        exp[20 + i] += s + 1 + i;
    exp[25] += 2;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    wok = memcmp(mine, exp, sizeof exp) == 0;
    CHECK(wok, "%s: lock: the window is wrong", what);
    out("%s: lock: fetched and got %s, window %s, checksum %016llx", what,
        ok ? "right" : "WRONG", wok ? "right" : "WRONG",
        (unsigned long long)hash_ints(mine, WI));
    MPI_OK(MPI_Win_unlock(r, win));
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Win_free(&win));
    if (fl == F_CREATE)
        MPI_OK(MPI_Free_mem(p));
}

/* Section B / C on one communicator: seg(r) bytes from rank r. */
static size_t seg_some(int r)
{
    return r % 2 == 1 ? 0 : 24 * (size_t)(r + 1);
}
static size_t seg_none(int r)
{
    (void)r;
    return 0;
}

static void empty_segments(MPI_Comm comm, const char *cname, size_t (*seg)(int),
                           const char *sname)
{
    int r, m;
    MPI_OK(MPI_Comm_rank(comm, &r));
    MPI_OK(MPI_Comm_size(comm, &m));
    char what[160];
    snprintf(what, sizeof what, "%s %s (rank %d of %d)", sname, cname, r, m);
    section(what);
    unsigned char *mybase = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_shared((MPI_Aint)seg(r), r + 1, MPI_INFO_NULL, comm, &mybase,
                                   &win));
    unsigned char **ptr = must(calloc((size_t)m, sizeof *ptr), "calloc", 0);
    for (int q = 0; q < m; q++) {
        MPI_Aint sz = -1;
        int du = -1;
        void *p = (void *)&sz;
        MPI_OK(MPI_Win_shared_query(win, q, &sz, &du, &p));
        ptr[q] = p;
        CHECK((size_t)sz == seg(q), "%s: Win_shared_query(%d): size %ld, expected %zu", what, q,
              (long)sz, seg(q));
        if (seg(q) > 0)
            CHECK(p != NULL && du == q + 1, "%s: Win_shared_query(%d): base %p, disp_unit %d",
                  what, q, p, du);
        if (q == r && seg(q) > 0)
            CHECK(p == (void *)mybase, "%s: Win_shared_query(me) is not my base", what);
        out("%s: Win_shared_query(%d): size %ld, disp_unit %d, base %s", what, q, (long)sz, du,
            p == NULL ? "NULL" : "not NULL");
    }
    {
        MPI_Aint sz = -1;
        int du = -1;
        void *p = (void *)&sz;
        MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p));
        int who = -1;
        for (int q = m - 1; q >= 0; q--)
            if (seg(q) > 0 && ptr[q] == p)
                who = q;
        int first = -1;
        for (int q = m - 1; q >= 0; q--)
            if (seg(q) > 0)
                first = q;
        CHECK(first < 0 || (who == first && (size_t)sz == seg(first)),
              "%s: Win_shared_query(MPI_PROC_NULL) is not the first non-empty segment", what);
        if (who >= 0)
            out("%s: Win_shared_query(MPI_PROC_NULL): size %ld, disp_unit %d, rank %d's segment",
                what, (long)sz, du, who);
        else
            out("%s: Win_shared_query(MPI_PROC_NULL): size %ld, disp_unit %d, base %s", what,
                (long)sz, du, p == NULL ? "NULL" : "not NULL");
    }
    /* stores into my segment, loads from everyone's */
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    if (seg(r) > 0)
        pattern_fill(mybase, 0, seg(r), g_me, 33);
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Win_sync(win));
    uint64_t h = 0;
    for (int q = 0; q < m; q++)
        if (seg(q) > 0) {
            char w2[200];
            snprintf(w2, sizeof w2, "%s: rank %d's segment", what, q);
            pattern_check(ptr[q], 0, seg(q), world_of(comm, q), 33, w2);
            h = hash_bytes(h, ptr[q], seg(q));
        }
    out("%s: loads of every segment: checksum %016llx", what, (unsigned long long)h);
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));
    free(ptr);
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_n = size;

    /* the communicators */
    MPI_Comm dup, halves, singles, one = MPI_COMM_NULL, shared;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank < (size + 1) / 2 ? 0 : 1, -rank, &halves));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &singles));
    {
        MPI_Group wg, g1;
        int last = size - 1;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        MPI_OK(MPI_Group_incl(wg, 1, &last, &g1));
        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g1, &one));
        MPI_OK(MPI_Group_free(&g1));
        MPI_OK(MPI_Group_free(&wg));
        CHECK((one != MPI_COMM_NULL) == (rank == last), "Comm_create: MPI_COMM_NULL on rank %d",
              rank);
    }
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                               &shared));

    struct {
        MPI_Comm c;
        const char *name;
    } C[] = {
        {MPI_COMM_SELF, "MPI_COMM_SELF"},
        {dup, "a duplicate of MPI_COMM_WORLD"},
        {halves, "a half (split, ranks reversed)"},
        {singles, "a single rank (split)"},
        {one, "one rank of many (Comm_create)"},
        {shared, "MPI_COMM_TYPE_SHARED"},
    };
    const int nc = (int)(sizeof C / sizeof C[0]);
    for (int k = 0; k < nc; k++) {
        if (C[k].c == MPI_COMM_NULL) {
            out("A %s: not a member (MPI_COMM_NULL)", C[k].name);
        } else {
            for (int fl = 0; fl < NFLAV; fl++)
                round_trips(C[k].c, C[k].name, fl);
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }

    empty_segments(MPI_COMM_WORLD, "MPI_COMM_WORLD", seg_some, "B odd ranks empty,");
    empty_segments(shared, "MPI_COMM_TYPE_SHARED", seg_some, "B odd ranks empty,");
    empty_segments(MPI_COMM_WORLD, "MPI_COMM_WORLD", seg_none, "C every rank empty,");
    empty_segments(shared, "MPI_COMM_TYPE_SHARED", seg_none, "C every rank empty,");

    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&halves));
    MPI_OK(MPI_Comm_free(&singles));
    if (one != MPI_COMM_NULL)
        MPI_OK(MPI_Comm_free(&one));
    MPI_OK(MPI_Comm_free(&shared));
    return coll_finish("comms", rank, size);
}

/*
 * rma_basic.c - one-sided (RMA) conformance: every call, every window
 * flavour, every synchronisation, derived datatypes, sizes, predefined
 * operations, attributes.
 *
 * Why: heapmpi runs node-local windows over its shared heap (puts, gets and
 * accumulates as loads and stores, synchronisation by counters and lock
 * words in the heap) and hands the others to the real MPI. Whatever the
 * path, a program must see what the stock MPI gives it. Every check below
 * is computed by the program itself (the expected window contents follow
 * from the inputs), and every rank prints a checksum of its window memory
 * after each synchronisation phase, so that the heapmpi run's stdout can be
 * compared byte for byte with the stock run of the same MPI.
 *
 * Sections:
 *  A. each window flavour: Win_create over MPI_Alloc_mem memory, over
 *     malloc memory, over a global array and over a stack array;
 *     Win_allocate; Win_allocate_shared; Win_create_dynamic + Win_attach.
 *     Half of them are created on a duplicate of MPI_COMM_WORLD that is
 *     freed right after the creation (the window must keep working).
 *     Attributes (MPI_WIN_BASE, _SIZE, _DISP_UNIT, _CREATE_FLAVOR, _MODEL),
 *     Win_get_group against the communicator's group, then four phases:
 *      1. fence (MPI_MODE_NOPRECEDE) Put + Accumulate to every rank, fence,
 *         Get, fence (MPI_MODE_NOSTORE | MPI_MODE_NOPUT), fence
 *         (MPI_MODE_NOSUCCEED);
 *      2. Lock(EXCLUSIVE) Put, Lock(SHARED) Accumulate + Get;
 *      3. Lock_all: Rput (Waitall), Rget (Flush then Wait), Raccumulate
 *         (Test loop), Rget_accumulate (Wait each), Flush_local_all,
 *         Flush_all, Win_sync;
 *      4. PSCW on a ring (Win_wait on some flavours, a Win_test loop on
 *         the others).
 *     (The checksum lines say phase 1 to 5: the Lock_all epoch is checked
 *     twice, after the Rputs (3) and after the accumulates (4); the PSCW
 *     ring is 5.)
 *  B. sizes: Put and Get of 0, 1, 7, 8, 1000, 4097, 65539 B, 1 MiB and
 *     4 MiB at a misaligned displacement (fence and passive target), on
 *     Win_allocate and on Win_create over malloc memory.
 *  C. derived datatypes on origin and target: vector with a stride,
 *     indexed, a struct of int + double (natural and packed layout: two
 *     different types with the same signature), contiguous of vector;
 *     Put, Get, Accumulate and Get_accumulate; expected results from
 *     MPI_Pack/MPI_Unpack; on Win_create over MPI_Alloc_mem memory and on
 *     Win_allocate.
 *  D. Accumulate (fence) and Get_accumulate (Lock_all, flush) with every
 *     predefined operation that applies on signed/unsigned char and short,
 *     int, unsigned, long long, unsigned long long, float, double, long
 *     double and double complex; concurrent origins on the same elements
 *     for the commutative operations.
 *  E. Fetch_and_op (every operation, NO_OP included) and Compare_and_swap,
 *     uncontended (values checked) and contended (a counter: the fetched
 *     values are 0..N-1; one CAS winner).
 *  F. PSCW in pairs and as a star (Win_test), an exclusive-lock
 *     read-modify-write counter, Lock(MPI_MODE_NOCHECK), Flush_local.
 *  G. Win_allocate_shared: Win_shared_query of every rank and of
 *     MPI_PROC_NULL, a zero-size segment, contiguity, loads and stores
 *     straight through the queried pointers (Win_sync + Barrier as in the
 *     standard's example), on MPI_COMM_WORLD and on pairs of ranks, and with
 *     alloc_shared_noncontig (where only "at least the size asked for" is
 *     printed: stock Open MPI reports the size rounded up to a page).
 *  H. Win_create_dynamic: two regions attached, MPI_Get_address
 *     displacements exchanged with Allgather, one detached and another
 *     (global) region attached, Put/Get/Accumulate to each.
 *  I. Win_set_name/get_name, Win_get_info/set_info (the values of the
 *     standard's hints only), Win_get_errhandler/set_errhandler,
 *     Win_create_errhandler + Win_call_errhandler, Win_free gives
 *     MPI_WIN_NULL.
 *  J. disp_unit 1, 4 and 8 on different ranks of one window, a rank with
 *     a window of size 0 (Win_create and Win_allocate).
 *
 * At 4 ranks and more (oversubscribed on two cores, where stock MPICH takes
 * milliseconds per fence and passive-target synchronisation) the program
 * runs fewer cases: section A on Win_create over malloc memory,
 * Win_allocate and Win_create_dynamic only; no section B (sizes), C on
 * Win_allocate only, Get_accumulate on four types (D), Compare_and_swap on
 * two types and fewer contended rounds (E, F), G without
 * alloc_shared_noncontig, no section I (names, info, error handlers): what
 * 4 ranks add is more origins on the same targets, PSCW in pairs and
 * spanning pretend nodes, not more sizes or types.
 *
 * Stock bugs worked around (see OMPI_CREATE_BUGS, flavour_works and
 * cas_works): stock Open MPI 4.1.4 cannot create a window with Win_create
 * or Win_create_dynamic on one process (those flavours are left out or
 * replaced by Win_allocate at 1 rank there); it crashes in 8-byte
 * Compare_and_swap on Win_allocate windows and on Win_create windows when
 * the target is the caller; on Win_create windows its MPI_LAND, MPI_LOR and
 * MPI_LXOR accumulates do nothing and its Get_accumulate with a
 * non-contiguous datatype fetches garbage. Those cases are left out there.
 * Stock MPICH 4.0.2 hangs now and then at 4 ranks when PSCW epochs of
 * different groups overlap on one window (section F separates them with a
 * barrier).
 *
 * Output (stdout, rank 0, rank order): per-rank lines with checksums and
 * values, then "rank N: rma ok". Exit status 0 on success, 1 on a failed
 * check. RMA_TRACE=1 prints every phase on stderr as it starts.
 */
#define _GNU_SOURCE
#include <complex.h>
#include <stddef.h>

#include "coll_util.h"

static int g_me, g_n;
static int g_big; /* 4 ranks or more: fewer cases */
static int g_trace;

#define MAXN 8

/* Stock Open MPI 4.1.4 (osc/rdma) on windows of Win_create: Accumulate and
 * Get_accumulate with MPI_LAND, MPI_LOR and MPI_LXOR leave the target as it
 * was and fetch zeros, and Get_accumulate with a non-contiguous result or
 * target datatype fetches garbage (the sum at the target is right). Those
 * cases are left out there (sections C and D). */
#ifdef OPEN_MPI
#define OMPI_CREATE_BUGS 1
#else
#define OMPI_CREATE_BUGS 0
#endif

/* section() keeps the pointer: the name is copied to a buffer of its own. */
static void phase(const char *name)
{
    static char names[64][96];
    static int next;
    char *copy = names[next++ % 64];
    snprintf(copy, sizeof names[0], "%s", name);
    section(copy);
    if (g_trace)
        fprintf(stderr, "rank %d: %s\n", g_me, name);
}

/* phase("<what> phase <n>") */
static void phase_n(const char *what, int n)
{
    char name[128];
    snprintf(name, sizeof name, "%s phase %d", what, n);
    phase(name);
}

static uint64_t hash_ints(const int *p, size_t n)
{
    return hash_bytes(0, p, n * sizeof(int));
}

/* ------------------------------------------------------------------------ */
/* Window flavours                                                          */
/* ------------------------------------------------------------------------ */

enum { F_ALLOCMEM, F_MALLOC, F_STATIC, F_STACK, F_ALLOCATE, F_SHARED, F_DYNAMIC, NFLAV };

static const char *const flav_name[NFLAV] = {
    "Win_create/Alloc_mem", "Win_create/malloc", "Win_create/global",
    "Win_create/stack",     "Win_allocate",      "Win_allocate_shared",
    "Win_create_dynamic",
};

typedef struct {
    int fl;
    MPI_Win win;
    unsigned char *base; /* the local memory (attached region for dynamic) */
    size_t size;
    int du;
    int n;         /* size of the window's group */
    MPI_Aint *addr; /* dynamic: each rank's attached region (MPI_Get_address) */
} rwin;

#define STATIC_BYTES (64 * 1024)
static unsigned char g_static_mem[STATIC_BYTES] __attribute__((aligned(64)));

/* Creates a window of `size` bytes of flavour fl on comm. `stack_mem` is the
 * caller's stack array for F_STACK. */
static void rw_create(rwin *w, int fl, size_t size, int du, void *stack_mem, MPI_Comm comm,
                      MPI_Info info)
{
    memset(w, 0, sizeof *w);
    w->fl = fl;
    w->size = size;
    w->du = du;
    MPI_Comm_size(comm, &w->n);
    void *p = NULL;
    switch (fl) {
    case F_ALLOCMEM:
        MPI_OK(MPI_Alloc_mem((MPI_Aint)(size ? size : 1), MPI_INFO_NULL, &p));
        w->base = p;
        MPI_OK(MPI_Win_create(size ? p : NULL, (MPI_Aint)size, du, info, comm, &w->win));
        break;
    case F_MALLOC:
        w->base = must(malloc(size ? size : 1), "malloc", size);
        MPI_OK(MPI_Win_create(size ? w->base : NULL, (MPI_Aint)size, du, info, comm, &w->win));
        break;
    case F_STATIC:
        CHECK(size <= STATIC_BYTES, "global window too large");
        w->base = g_static_mem;
        MPI_OK(MPI_Win_create(w->base, (MPI_Aint)size, du, info, comm, &w->win));
        break;
    case F_STACK:
        w->base = stack_mem;
        MPI_OK(MPI_Win_create(w->base, (MPI_Aint)size, du, info, comm, &w->win));
        break;
    case F_ALLOCATE:
        MPI_OK(MPI_Win_allocate((MPI_Aint)size, du, info, comm, &p, &w->win));
        w->base = p;
        break;
    case F_SHARED:
        MPI_OK(MPI_Win_allocate_shared((MPI_Aint)size, du, info, comm, &p, &w->win));
        w->base = p;
        break;
    case F_DYNAMIC: {
        w->base = must(malloc(size ? size : 1), "malloc", size);
        w->du = 1;
        MPI_OK(MPI_Win_create_dynamic(info, comm, &w->win));
        MPI_OK(MPI_Win_attach(w->win, w->base, (MPI_Aint)size));
        MPI_Aint a;
        MPI_OK(MPI_Get_address(w->base, &a));
        w->addr = must(calloc((size_t)w->n, sizeof(MPI_Aint)), "calloc", 0);
        MPI_OK(MPI_Allgather(&a, 1, MPI_AINT, w->addr, 1, MPI_AINT, comm));
        break;
    }
    }
}

/* The target displacement of byte `off` of rank t's memory. */
static MPI_Aint rw_disp(const rwin *w, int t, size_t off)
{
    if (w->fl == F_DYNAMIC)
        return MPI_Aint_add(w->addr[t], (MPI_Aint)off);
    CHECK(off % (size_t)w->du == 0, "displacement %zu not a multiple of %d", off, w->du);
    return (MPI_Aint)(off / (size_t)w->du);
}

/* Stock Open MPI 4.1.4 cannot create a window with Win_create or
 * Win_create_dynamic on a communicator of one process (MPI_ERR_WIN: no
 * one-sided component takes it); at 1 rank those flavours are left out
 * there (section A), or replaced by Win_allocate (the others). */
static int flavour_works(int fl)
{
#ifdef OPEN_MPI
    if (g_n == 1 && fl != F_ALLOCATE && fl != F_SHARED)
        return 0;
#else
    (void)fl;
#endif
    return 1;
}

static int usable(int fl)
{
    return flavour_works(fl) ? fl : F_ALLOCATE;
}

/* Stock Open MPI 4.1.4 crashes (SIGSEGV in mca_btl_vader_emu_acswap) in
 * Compare_and_swap on 8-byte types on Win_allocate windows and, on
 * Win_create windows, when the target is the calling process: those are
 * left out there (section E). */
static int cas_works(int fl, int size, int origin, int target)
{
#ifdef OPEN_MPI
    if (size == 8 && (fl == F_ALLOCATE || fl == F_SHARED || target == origin))
        return 0;
#else
    (void)fl;
    (void)size;
    (void)origin;
    (void)target;
#endif
    return 1;
}

static void rw_free(rwin *w)
{
    if (w->fl == F_DYNAMIC)
        MPI_OK(MPI_Win_detach(w->win, w->base));
    MPI_OK(MPI_Win_free(&w->win));
    CHECK(w->win == MPI_WIN_NULL, "Win_free did not set the handle to MPI_WIN_NULL");
    if (w->fl == F_ALLOCMEM)
        MPI_OK(MPI_Free_mem(w->base));
    else if (w->fl == F_MALLOC || w->fl == F_DYNAMIC)
        free(w->base);
    free(w->addr);
    w->addr = NULL;
}

static const char *flavor_attr_name(int f)
{
    if (f == MPI_WIN_FLAVOR_CREATE)
        return "MPI_WIN_FLAVOR_CREATE";
    if (f == MPI_WIN_FLAVOR_ALLOCATE)
        return "MPI_WIN_FLAVOR_ALLOCATE";
    if (f == MPI_WIN_FLAVOR_SHARED)
        return "MPI_WIN_FLAVOR_SHARED";
    if (f == MPI_WIN_FLAVOR_DYNAMIC)
        return "MPI_WIN_FLAVOR_DYNAMIC";
    return "unknown";
}

static const char *model_name(int m)
{
    if (m == MPI_WIN_UNIFIED)
        return "MPI_WIN_UNIFIED";
    if (m == MPI_WIN_SEPARATE)
        return "MPI_WIN_SEPARATE";
    return "unknown";
}

/* Prints the window's attributes; checks what the standard fixes. */
static void attributes(const char *what, const rwin *w, MPI_Comm comm_group_of)
{
    void *base = NULL;
    MPI_Aint *size = NULL;
    int *du = NULL, *flavor = NULL, *model = NULL;
    int f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0;
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_BASE, &base, &f1));
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_SIZE, &size, &f2));
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_DISP_UNIT, &du, &f3));
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_CREATE_FLAVOR, &flavor, &f4));
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_MODEL, &model, &f5));
    CHECK(f1 && f2 && f3 && f4 && f5, "%s: an attribute is missing", what);
    if (!(f1 && f2 && f3 && f4 && f5))
        return;
    const char *b = base == (void *)w->base ? "the memory"
                    : base == NULL          ? "NULL"
                                            : "another address";
    out("%s: base %s, size %ld, disp_unit %d, %s, %s", what, b, (long)*size, *du,
        flavor_attr_name(*flavor), model_name(*model));
    CHECK(*model == MPI_WIN_UNIFIED, "%s: model %d is not MPI_WIN_UNIFIED", what, *model);
    if (w->fl != F_DYNAMIC) {
        CHECK(base == (void *)w->base || w->size == 0, "%s: MPI_WIN_BASE is not the memory",
              what);
        CHECK((size_t)*size == w->size, "%s: MPI_WIN_SIZE %ld", what, (long)*size);
        CHECK(*du == w->du, "%s: MPI_WIN_DISP_UNIT %d", what, *du);
    }
    MPI_Group wg, cg;
    MPI_OK(MPI_Win_get_group(w->win, &wg));
    MPI_OK(MPI_Comm_group(comm_group_of, &cg));
    int cmp = -1;
    MPI_OK(MPI_Group_compare(wg, cg, &cmp));
    CHECK(cmp == MPI_IDENT, "%s: Win_get_group is not the communicator's group", what);
    out("%s: Win_get_group %s the communicator's group", what,
        cmp == MPI_IDENT ? "is" : "is NOT");
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Group_free(&cg));
}

/* ------------------------------------------------------------------------ */
/* A. flavours                                                              */
/* ------------------------------------------------------------------------ */

#define AW_INTS 2048 /* 8 KiB windows */
#define AW_S 128     /* ints per origin region (up to 8 origins) */
#define AW_ACC 1024  /* accumulate region: 16 ints */
#define AW_FAO 1100  /* Rget_accumulate: one int per origin */
#define AW_PSCW 1200 /* phase 4: AW_S ints */

static int pat(int origin, int target, int ph, int i)
{
    return (int)(mix64(seed6((uint64_t)origin, (uint64_t)target, (uint64_t)ph, 7, 0, 0),
                       (uint64_t)i) &
                 0x7fffffff);
}

static int a_init(int owner, int i)
{
    return owner * 10000 + i;
}

/* The window of this rank: after Barrier, read under a shared lock of
 * itself (a passive-target phase) or right away (fence / PSCW); compared
 * with `exp` and its checksum printed. */
static void a_check(const char *what, int ph, const rwin *w, const int *exp, int lock_self)
{
    if (lock_self)
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, g_me, 0, w->win));
    const int *mine = (const int *)w->base;
    int bad = -1;
    for (int i = 0; i < AW_INTS && bad < 0; i++)
        if (mine[i] != exp[i])
            bad = i;
    CHECK(bad < 0, "%s phase %d: int %d of the window is %d, expected %d", what, ph, bad,
          bad >= 0 ? mine[bad] : 0, bad >= 0 ? exp[bad] : 0);
    out("%s phase %d: window checksum %016llx", what, ph,
        (unsigned long long)hash_ints(mine, AW_INTS));
    if (lock_self)
        MPI_OK(MPI_Win_unlock(g_me, w->win));
}

static void exercise(int fl)
{
    unsigned char stack_mem[AW_INTS * sizeof(int)] __attribute__((aligned(64)));
    char what[96];
    snprintf(what, sizeof what, "A %s", flav_name[fl]);
    phase(what);
    if (!flavour_works(fl)) {
        out("%s: left out (stock Open MPI cannot create it on one process)", what);
        return;
    }
    if (g_big && (fl == F_ALLOCMEM || fl == F_STATIC || fl == F_STACK || fl == F_SHARED)) {
        out("%s: left out at 4 ranks", what);
        return;
    }
    const int n = g_n, me = g_me;
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    /* odd flavours: a duplicate of MPI_COMM_WORLD, freed at once */
    int dup = fl % 2 == 1;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (dup)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    int du = fl == F_ALLOCMEM ? 1 : 4;
    rwin w;
    rw_create(&w, fl, AW_INTS * sizeof(int), du, stack_mem, comm, MPI_INFO_NULL);
    if (dup)
        MPI_OK(MPI_Comm_free(&comm));
    attributes(what, &w, MPI_COMM_WORLD);
    if (dup)
        out("%s: created on a duplicate of MPI_COMM_WORLD, freed at once", what);

    int *mine = (int *)w.base;
    static int exp[AW_INTS];
    for (int i = 0; i < AW_INTS; i++)
        mine[i] = exp[i] = a_init(me, i);
    int *obuf = must(malloc(AW_S * sizeof(int) * MAXN), "malloc", 0);
    int *gbuf = must(malloc(AW_S * sizeof(int)), "malloc", 0);
    int acc[16];
    for (int i = 0; i < 16; i++)
        acc[i] = me + 1 + i;

    /* ---- phase 1: fence ---- */
    phase_n(what, 1);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
    for (int t = 0; t < n; t++) {
        int *o = obuf + t * AW_S;
        for (int i = 0; i < AW_S; i++)
            o[i] = pat(me, t, 1, i);
        MPI_OK(MPI_Put(o, AW_S, MPI_INT, t, rw_disp(&w, t, (size_t)me * AW_S * 4), AW_S,
                       MPI_INT, w.win));
        MPI_OK(MPI_Accumulate(acc, 16, MPI_INT, t, rw_disp(&w, t, AW_ACC * 4), 16, MPI_INT,
                              MPI_SUM, w.win));
    }
    MPI_OK(MPI_Win_fence(0, w.win));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < AW_S; i++)
            exp[q * AW_S + i] = pat(q, me, 1, i);
    for (int i = 0; i < 16; i++)
        for (int q = 0; q < n; q++)
            exp[AW_ACC + i] += q + 1 + i;
    a_check(what, 1, &w, exp, 0);
    /* only loads since the last fence, only gets until the next one */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, w.win));
    MPI_OK(MPI_Get(gbuf, AW_S, MPI_INT, right, rw_disp(&w, right, (size_t)me * AW_S * 4), AW_S,
                   MPI_INT, w.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    {
        int ok = 1;
        for (int i = 0; i < AW_S; i++)
            ok &= gbuf[i] == pat(me, right, 1, i);
        CHECK(ok, "%s phase 1: Get from the right neighbour is wrong", what);
        out("%s phase 1: Get checksum %016llx", what,
            (unsigned long long)hash_ints(gbuf, AW_S));
    }

    /* ---- phase 2: Lock exclusive / shared ---- */
    phase_n(what, 2);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        int *o = obuf + t * AW_S;
        for (int i = 0; i < AW_S; i++)
            o[i] = pat(me, t, 2, i);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win));
        MPI_OK(MPI_Put(o, AW_S, MPI_INT, t, rw_disp(&w, t, (size_t)me * AW_S * 4), AW_S,
                       MPI_INT, w.win));
        MPI_OK(MPI_Win_unlock(t, w.win));
    }
    for (int k = 0; k < n; k++) {
        int t = (me + n - k) % n;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w.win));
        MPI_OK(MPI_Accumulate(acc, 16, MPI_INT, t, rw_disp(&w, t, AW_ACC * 4), 16, MPI_INT,
                              MPI_SUM, w.win));
        MPI_OK(MPI_Get(gbuf, AW_S, MPI_INT, t, rw_disp(&w, t, (size_t)me * AW_S * 4), AW_S,
                       MPI_INT, w.win));
        MPI_OK(MPI_Win_unlock(t, w.win));
        int ok = 1;
        for (int i = 0; i < AW_S; i++)
            ok &= gbuf[i] == pat(me, t, 2, i);
        CHECK(ok, "%s phase 2: Get from rank %d is wrong", what, t);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < AW_S; i++)
            exp[q * AW_S + i] = pat(q, me, 2, i);
    for (int i = 0; i < 16; i++)
        for (int q = 0; q < n; q++)
            exp[AW_ACC + i] += q + 1 + i;
    a_check(what, 2, &w, exp, 1);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- phase 3: Lock_all, request-based operations, flushes ---- */
    phase_n(what, 3);
    MPI_OK(MPI_Win_lock_all(0, w.win));
    MPI_Request rq[2 * MAXN];
    for (int t = 0; t < n; t++) {
        int *o = obuf + t * AW_S;
        for (int i = 0; i < AW_S; i++)
            o[i] = pat(me, t, 3, i);
        MPI_OK(MPI_Rput(o, AW_S, MPI_INT, t, rw_disp(&w, t, (size_t)me * AW_S * 4), AW_S,
                        MPI_INT, w.win, &rq[t]));
    }
    MPI_OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Win_flush_all(w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(w.win));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < AW_S; i++)
            exp[q * AW_S + i] = pat(q, me, 3, i);
    a_check(what, 3, &w, exp, 0);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* everyone has checked */
    /* Rget: completed by a flush, then waited for */
    MPI_Request r1;
    MPI_OK(MPI_Rget(gbuf, AW_S, MPI_INT, left, rw_disp(&w, left, (size_t)me * AW_S * 4), AW_S,
                    MPI_INT, w.win, &r1));
    MPI_OK(MPI_Win_flush(left, w.win));
    MPI_OK(MPI_Wait(&r1, MPI_STATUS_IGNORE));
    CHECK(r1 == MPI_REQUEST_NULL, "Wait did not free the Rget request");
    {
        int ok = 1;
        for (int i = 0; i < AW_S; i++)
            ok &= gbuf[i] == pat(me, left, 3, i);
        CHECK(ok, "%s phase 3: Rget from the left neighbour is wrong", what);
        out("%s phase 3: Rget checksum %016llx", what,
            (unsigned long long)hash_ints(gbuf, AW_S));
    }
    /* Raccumulate completed by a Test loop, Rget_accumulate by Wait */
    int fetched[MAXN], one = me + 7;
    for (int t = 0; t < n; t++) {
        MPI_Request r;
        MPI_OK(MPI_Raccumulate(acc, 16, MPI_INT, t, rw_disp(&w, t, AW_ACC * 4), 16, MPI_INT,
                               MPI_SUM, w.win, &r));
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Rget_accumulate(&one, 1, MPI_INT, &fetched[t], 1, MPI_INT, t,
                                   rw_disp(&w, t, (size_t)(AW_FAO + me) * 4), 1, MPI_INT,
                                   MPI_SUM, w.win, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(fetched[t] == a_init(t, AW_FAO + me),
              "%s phase 3: Rget_accumulate from rank %d fetched %d, expected %d", what, t,
              fetched[t], a_init(t, AW_FAO + me));
    }
    MPI_OK(MPI_Win_flush_local_all(w.win));
    MPI_OK(MPI_Win_flush_all(w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(w.win));
    for (int i = 0; i < 16; i++)
        for (int q = 0; q < n; q++)
            exp[AW_ACC + i] += q + 1 + i;
    for (int q = 0; q < n; q++)
        exp[AW_FAO + q] += q + 7;
    a_check(what, 4, &w, exp, 0);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_unlock_all(w.win));

    /* ---- phase 4: PSCW on a ring: expose to the left, access the right ---- */
    phase_n(what, 5);
    MPI_Group wg, gl, gr;
    MPI_OK(MPI_Win_get_group(w.win, &wg));
    MPI_OK(MPI_Group_incl(wg, 1, &left, &gl));
    MPI_OK(MPI_Group_incl(wg, 1, &right, &gr));
    MPI_OK(MPI_Win_post(gl, 0, w.win));
    MPI_OK(MPI_Win_start(gr, 0, w.win));
    for (int i = 0; i < AW_S; i++)
        obuf[i] = pat(me, right, 4, i);
    MPI_OK(MPI_Put(obuf, AW_S, MPI_INT, right, rw_disp(&w, right, AW_PSCW * 4), AW_S, MPI_INT,
                   w.win));
    MPI_OK(MPI_Win_complete(w.win));
    if (fl % 2 == 0) {
        MPI_OK(MPI_Win_wait(w.win));
    } else {
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Win_test(w.win, &flag));
    }
    for (int i = 0; i < AW_S; i++)
        exp[AW_PSCW + i] = pat(left, me, 4, i);
    a_check(what, 5, &w, exp, 0);
    MPI_OK(MPI_Group_free(&gl));
    MPI_OK(MPI_Group_free(&gr));
    MPI_OK(MPI_Group_free(&wg));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    rw_free(&w);
    free(obuf);
    free(gbuf);
}

/* ------------------------------------------------------------------------ */
/* B. sizes                                                                 */
/* ------------------------------------------------------------------------ */

static void sizes(int fl)
{
    static const size_t sz[] = {0, 1, 7, 8, 1000, 4097, 65539, 1 << 20, 4 << 20};
    const size_t nsizes = sizeof sz / sizeof sz[0];
    size_t maxs = sz[nsizes - 1];
    const size_t off = 3;
    char what[96];
    snprintf(what, sizeof what, "B %s", flav_name[fl]);
    phase(what);
    const int me = g_me, n = g_n, right = (me + 1) % n, left = (me + n - 1) % n;
    rwin w;
    size_t wsize = maxs + 64;
    rw_create(&w, fl, wsize, 1, NULL, MPI_COMM_WORLD, MPI_INFO_NULL);
    unsigned char *o = must(malloc(maxs), "malloc", maxs);
    unsigned char *g = must(malloc(maxs + 1), "malloc", maxs);
    memset(w.base, 0xa5, wsize);
    for (size_t k = 0; k < nsizes; k++) {
        size_t s = sz[k];
        uint64_t seed = mix64((uint64_t)me * 1000 + k, 11);
        uint64_t lseed = mix64((uint64_t)left * 1000 + k, 11);
        /* fence: Put to the right neighbour at a misaligned displacement
         * (the sizes grow: bytes off - 1 and off + s were never written) */
        wpattern_fill(o, s, seed);
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
        MPI_OK(MPI_Put(o, (int)s, MPI_BYTE, right, rw_disp(&w, right, off), (int)s, MPI_BYTE,
                       w.win));
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
        char msg[128];
        snprintf(msg, sizeof msg, "%s: Put of %zu B", what, s);
        int ok = wpattern_check(w.base + off, s, lseed, msg);
        CHECK(w.base[off + s] == 0xa5 && w.base[off - 1] == 0xa5, "%s: Put of %zu B overran",
              what, s);
        uint64_t h = hash_bytes(0, w.base, off + s + 1);
        /* passive target: Get it back from the right neighbour */
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w.win));
        g[s] = 0x5a;
        MPI_OK(MPI_Get(g, (int)s, MPI_BYTE, right, rw_disp(&w, right, off), (int)s, MPI_BYTE,
                       w.win));
        MPI_OK(MPI_Win_unlock(right, w.win));
        snprintf(msg, sizeof msg, "%s: Get of %zu B", what, s);
        ok &= wpattern_check(g, s, seed, msg);
        CHECK(g[s] == 0x5a, "%s: Get of %zu B overran", what, s);
        out("%s: %zu B Put and Get %s, window checksum %016llx", what, s,
            ok ? "right" : "WRONG", (unsigned long long)h);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    rw_free(&w);
    free(o);
    free(g);
}

/* ------------------------------------------------------------------------ */
/* C. derived datatypes                                                     */
/* ------------------------------------------------------------------------ */

#define CW_BYTES 8192
struct si {
    int a;
    double b;
};

typedef struct {
    MPI_Datatype contig32, vecO, vecT, idx, contig22, st, packed, vecD, cv, contig12d;
} ctypes;

static void c_types(ctypes *T)
{
    MPI_OK(MPI_Type_contiguous(32, MPI_INT, &T->contig32));
    MPI_OK(MPI_Type_vector(16, 2, 5, MPI_INT, &T->vecO));
    MPI_OK(MPI_Type_vector(8, 4, 7, MPI_INT, &T->vecT));
    int bl[4] = {3, 1, 5, 2}, dp[4] = {0, 7, 9, 20};
    MPI_OK(MPI_Type_indexed(4, bl, dp, MPI_INT, &T->idx));
    MPI_OK(MPI_Type_contiguous(22, MPI_INT, &T->contig22));
    int sbl[2] = {1, 1};
    MPI_Aint sd[2] = {offsetof(struct si, a), offsetof(struct si, b)};
    MPI_Datatype stt[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype tmp;
    MPI_OK(MPI_Type_create_struct(2, sbl, sd, stt, &tmp));
    MPI_OK(MPI_Type_create_resized(tmp, 0, sizeof(struct si), &T->st));
    MPI_OK(MPI_Type_free(&tmp));
    MPI_Aint pd[2] = {0, 4};
    MPI_OK(MPI_Type_create_struct(2, sbl, pd, stt, &tmp));
    MPI_OK(MPI_Type_create_resized(tmp, 0, 12, &T->packed));
    MPI_OK(MPI_Type_free(&tmp));
    MPI_OK(MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &T->vecD));
    MPI_OK(MPI_Type_contiguous(3, T->vecD, &T->cv));
    MPI_OK(MPI_Type_contiguous(12, MPI_DOUBLE, &T->contig12d));
    MPI_Datatype *all[] = {&T->contig32, &T->vecO, &T->vecT,   &T->idx, &T->contig22,
                           &T->st,       &T->packed, &T->cv, &T->contig12d};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_OK(MPI_Type_commit(all[i]));
}

static void c_types_free(ctypes *T)
{
    MPI_Datatype *all[] = {&T->contig32, &T->vecO,   &T->vecT, &T->idx, &T->contig22,
                           &T->st,       &T->packed, &T->vecD, &T->cv,  &T->contig12d};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_OK(MPI_Type_free(all[i]));
}

/* Origin data of rank q: ints, doubles and structs, all exact. */
typedef struct {
    int ints[200];
    double dbl[64];
    struct si s[8];
} corigin;

static void c_origin(corigin *o, int q)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < 200; i++)
        o->ints[i] = q * 1000 + i;
    for (int i = 0; i < 64; i++)
        o->dbl[i] = q * 1000 + i + 0.5;
    for (int i = 0; i < 8; i++) {
        o->s[i].a = q * 100 + i;
        o->s[i].b = i * 0.25 + q;
    }
}

/* Offsets in the window of each case's target region. */
enum { C_PUT_VEC_TO_CONTIG = 0, C_PUT_CONTIG_TO_VEC = 512, C_PUT_VEC_TO_VEC = 1024,
       C_PUT_IDX = 1536, C_PUT_STRUCT = 2048, C_PUT_CV = 2304, C_ACC_IDX = 3072,
       C_ACC_VEC = 3584, C_GACC_VEC = 4096, C_ZERO = 4608 };

/* Local model of a Put/Accumulate(SUM on ints) into `win` (the target's
 * memory) from origin data through the two types, with Pack/Unpack. */
static void c_model(unsigned char *win, size_t off, const void *obuf, int ocount, MPI_Datatype ot,
                    int tcount, MPI_Datatype tt, int sum)
{
    static unsigned char packed[CW_BYTES], tmp[CW_BYTES];
    int pos = 0;
    MPI_OK(MPI_Pack(obuf, ocount, ot, packed, CW_BYTES, &pos, MPI_COMM_WORLD));
    int upos = 0;
    if (!sum) {
        MPI_OK(MPI_Unpack(packed, pos, &upos, win + off, tcount, tt, MPI_COMM_WORLD));
        return;
    }
    memset(tmp, 0, sizeof tmp);
    MPI_OK(MPI_Unpack(packed, pos, &upos, tmp, tcount, tt, MPI_COMM_WORLD));
    for (size_t i = 0; i + 4 <= 512; i += 4) {
        int a, b;
        memcpy(&a, win + off + i, 4);
        memcpy(&b, tmp + i, 4);
        a += b;
        memcpy(win + off + i, &a, 4);
    }
}

static void c_init_window(unsigned char *p, int owner)
{
    for (int i = 0; i < CW_BYTES / 4; i++) {
        int v = owner * 100000 + i;
        memcpy(p + 4 * i, &v, 4);
    }
}

/* The window of rank t after the first epoch (origin: its left neighbour). */
static void c_expected(unsigned char *win, int t, const ctypes *T)
{
    int q = (t + g_n - 1) % g_n;
    static corigin o;
    c_origin(&o, q);
    c_init_window(win, t);
    c_model(win, C_PUT_VEC_TO_CONTIG, o.ints, 1, T->vecO, 1, T->contig32, 0);
    c_model(win, C_PUT_CONTIG_TO_VEC, o.ints, 32, MPI_INT, 1, T->vecO, 0);
    c_model(win, C_PUT_VEC_TO_VEC, o.ints, 1, T->vecO, 1, T->vecT, 0);
    c_model(win, C_PUT_IDX, o.ints, 11 * 2, MPI_INT, 2, T->idx, 0);
    c_model(win, C_PUT_STRUCT, o.s, 5, T->st, 5, T->packed, 0);
    c_model(win, C_PUT_CV, o.dbl, 12, MPI_DOUBLE, 1, T->cv, 0);
    c_model(win, C_ACC_IDX, o.ints, 1, T->contig22, 2, T->idx, 1);
    c_model(win, C_ACC_VEC, o.ints, 1, T->vecO, 1, T->vecT, 1);
}

static void datatypes(int fl)
{
    char what[64];
    snprintf(what, sizeof what, "C %s", flav_name[fl]);
    phase(what);
    const int me = g_me, n = g_n, right = (me + 1) % n;
    /* see OMPI_CREATE_BUGS */
    const int gacc = !(OMPI_CREATE_BUGS && fl != F_ALLOCATE && fl != F_SHARED);
    ctypes T;
    c_types(&T);
    rwin w;
    rw_create(&w, fl, CW_BYTES, 1, NULL, MPI_COMM_WORLD, MPI_INFO_NULL);
    c_init_window(w.base, me);
    static corigin o;
    c_origin(&o, me);
    MPI_Win win = w.win;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_OK(MPI_Put(o.ints, 1, T.vecO, right, C_PUT_VEC_TO_CONTIG, 1, T.contig32, win));
    MPI_OK(MPI_Put(o.ints, 32, MPI_INT, right, C_PUT_CONTIG_TO_VEC, 1, T.vecO, win));
    MPI_OK(MPI_Put(o.ints, 1, T.vecO, right, C_PUT_VEC_TO_VEC, 1, T.vecT, win));
    MPI_OK(MPI_Put(o.ints, 22, MPI_INT, right, C_PUT_IDX, 2, T.idx, win));
    MPI_OK(MPI_Put(o.s, 5, T.st, right, C_PUT_STRUCT, 5, T.packed, win));
    MPI_OK(MPI_Put(o.dbl, 12, MPI_DOUBLE, right, C_PUT_CV, 1, T.cv, win));
    MPI_OK(MPI_Accumulate(o.ints, 1, T.contig22, right, C_ACC_IDX, 2, T.idx, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(o.ints, 1, T.vecO, right, C_ACC_VEC, 1, T.vecT, MPI_SUM, win));
    /* zero elements of a derived type: nothing moves */
    MPI_OK(MPI_Put(o.ints, 0, T.vecO, right, C_ZERO, 0, T.idx, win));
    MPI_OK(MPI_Win_fence(0, win));
    static unsigned char ex[CW_BYTES], exr[CW_BYTES];
    c_expected(ex, me, &T);
    CHECK(memcmp(ex, w.base, CW_BYTES) == 0, "C: the window after Put/Accumulate is wrong");
    out("%s: Put and Accumulate with derived types: window checksum %016llx", what,
        (unsigned long long)hash_bytes(0, w.base, CW_BYTES));
    /* nobody accesses a window before its owner has checked it */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSTORE, win));

    /* second epoch: Get and Get_accumulate from the right neighbour */
    c_expected(exr, right, &T);
    static struct si gs[5];
    static double gd[12];
    static int gv[16 * 5], gi[32], gv_acc[16 * 5];
    memset(gs, 0, sizeof gs);
    memset(gd, 0, sizeof gd);
    memset(gv, 0, sizeof gv);
    memset(gi, 0, sizeof gi);
    memset(gv_acc, 0, sizeof gv_acc);
    int ones[32];
    for (int i = 0; i < 32; i++)
        ones[i] = i + 1;
    MPI_OK(MPI_Get(gs, 5, T.st, right, C_PUT_STRUCT, 5, T.packed, win));
    MPI_OK(MPI_Get(gd, 12, MPI_DOUBLE, right, C_PUT_CV, 1, T.cv, win));
    MPI_OK(MPI_Get(gv, 1, T.vecO, right, C_PUT_VEC_TO_VEC, 1, T.vecT, win));
    MPI_OK(MPI_Get(gi, 32, MPI_INT, right, C_ACC_VEC, 1, T.vecT, win));
    if (gacc)
        MPI_OK(MPI_Get_accumulate(ones, 32, MPI_INT, gv_acc, 1, T.vecO, right, C_GACC_VEC, 1,
                                  T.vecT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    /* models of the gets */
    static struct si es[5];
    static double ed[12];
    static int ev[16 * 5], ei[32], eacc[16 * 5];
    memset(es, 0, sizeof es);
    memset(ed, 0, sizeof ed);
    memset(ev, 0, sizeof ev);
    memset(ei, 0, sizeof ei);
    memset(eacc, 0, sizeof eacc);
    c_model((unsigned char *)es, 0, exr + C_PUT_STRUCT, 5, T.packed, 5, T.st, 0);
    c_model((unsigned char *)ed, 0, exr + C_PUT_CV, 1, T.cv, 12, MPI_DOUBLE, 0);
    c_model((unsigned char *)ev, 0, exr + C_PUT_VEC_TO_VEC, 1, T.vecT, 1, T.vecO, 0);
    c_model((unsigned char *)ei, 0, exr + C_ACC_VEC, 1, T.vecT, 32, MPI_INT, 0);
    if (gacc)
        c_model((unsigned char *)eacc, 0, exr + C_GACC_VEC, 1, T.vecT, 1, T.vecO, 0);
    int ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= gs[i].a == es[i].a && gs[i].b == es[i].b;
    CHECK(ok, "C: Get of the structs is wrong");
    CHECK(memcmp(gd, ed, sizeof gd) == 0, "C: Get of the contiguous of vector is wrong");
    CHECK(memcmp(gv, ev, sizeof gv) == 0, "C: Get vector to vector is wrong");
    CHECK(memcmp(gi, ei, sizeof gi) == 0, "C: Get of the accumulated vector is wrong");
    CHECK(memcmp(gv_acc, eacc, sizeof gv_acc) == 0, "C: Get_accumulate fetched wrong values");
    uint64_t h = hash_bytes(0, gd, sizeof gd);
    h = hash_bytes(h, gv, sizeof gv);
    h = hash_bytes(h, gi, sizeof gi);
    h = hash_bytes(h, gv_acc, sizeof gv_acc);
    for (int i = 0; i < 5; i++) {
        h = hash_bytes(h, &gs[i].a, sizeof gs[i].a);
        h = hash_bytes(h, &gs[i].b, sizeof gs[i].b);
    }
    out("%s: Get%s with derived types: checksum %016llx", what,
        gacc ? " and Get_accumulate" : "", (unsigned long long)h);
    /* the Get_accumulate's sum, in place */
    if (gacc)
        c_model(ex, C_GACC_VEC, ones, 32, MPI_INT, 1, T.vecT, 1);
    CHECK(memcmp(ex, w.base, CW_BYTES) == 0, "C: the window after Get_accumulate is wrong");
    out("%s: after the second epoch: window checksum %016llx", what,
        (unsigned long long)hash_bytes(0, w.base, CW_BYTES));
    rw_free(&w);
    c_types_free(&T);
}

/* ------------------------------------------------------------------------ */
/* D. predefined operations on predefined types                             */
/* ------------------------------------------------------------------------ */

enum { K_S, K_U, K_F, K_LD, K_C };

typedef struct {
    const char *name;
    MPI_Datatype t;
    int size;
    int kind;
} tdesc;

enum { O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, O_LXOR, O_REPLACE,
       O_NOOP, NOPS };
static const char *const op_name[NOPS] = {"SUM",  "PROD", "MAX",  "MIN",     "BAND",  "BOR",
                                          "BXOR", "LAND", "LOR",  "LXOR", "REPLACE", "NO_OP"};

static MPI_Op op_handle(int o)
{
    MPI_Op h[NOPS] = {MPI_SUM,  MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND,    MPI_BOR,
                      MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_REPLACE, MPI_NO_OP};
    return h[o];
}

static int op_applies(const tdesc *d, int o)
{
    switch (o) {
    case O_SUM:
    case O_PROD:
    case O_REPLACE:
    case O_NOOP:
        return 1;
    case O_MAX:
    case O_MIN:
        return d->kind != K_C;
    default:
        return d->kind == K_S || d->kind == K_U;
    }
}

static int ntypes(void)
{
    return 12;
}

static tdesc type_at(int i)
{
    tdesc T[12] = {
        {"signed char", MPI_SIGNED_CHAR, 1, K_S},
        {"unsigned char", MPI_UNSIGNED_CHAR, 1, K_U},
        {"short", MPI_SHORT, 2, K_S},
        {"unsigned short", MPI_UNSIGNED_SHORT, 2, K_U},
        {"int", MPI_INT, 4, K_S},
        {"unsigned", MPI_UNSIGNED, 4, K_U},
        {"long long", MPI_LONG_LONG, 8, K_S},
        {"unsigned long long", MPI_UNSIGNED_LONG_LONG, 8, K_U},
        {"float", MPI_FLOAT, 4, K_F},
        {"double", MPI_DOUBLE, 8, K_F},
        {"long double", MPI_LONG_DOUBLE, (int)sizeof(long double), K_LD},
        {"double complex", MPI_C_DOUBLE_COMPLEX, 16, K_C},
    };
    return T[i];
}

typedef struct {
    long long i;
    long double f;
    double complex c;
} num;

static long long norm_int(const tdesc *d, unsigned long long x)
{
    int bits = 8 * d->size;
    if (bits == 64)
        return (long long)x;
    unsigned long long m = (1ull << bits) - 1;
    x &= m;
    if (d->kind == K_S && (x >> (bits - 1)))
        x |= ~m;
    return (long long)x;
}

static num nload(const tdesc *d, const void *p)
{
    num v = {0, 0, 0};
    switch (d->kind) {
    case K_S:
    case K_U: {
        unsigned long long x = 0;
        memcpy(&x, p, (size_t)d->size); /* little-endian */
        v.i = norm_int(d, x);
        break;
    }
    case K_F:
        if (d->size == 4) {
            float f;
            memcpy(&f, p, 4);
            v.f = f;
        } else {
            double f;
            memcpy(&f, p, 8);
            v.f = f;
        }
        break;
    case K_LD:
        memcpy(&v.f, p, sizeof(long double));
        break;
    case K_C:
        memcpy(&v.c, p, 16);
        break;
    }
    return v;
}

static void nstore(const tdesc *d, void *p, num v)
{
    switch (d->kind) {
    case K_S:
    case K_U: {
        unsigned long long x = (unsigned long long)v.i;
        memcpy(p, &x, (size_t)d->size);
        break;
    }
    case K_F:
        if (d->size == 4) {
            float f = (float)v.f;
            memcpy(p, &f, 4);
        } else {
            double f = (double)v.f;
            memcpy(p, &f, 8);
        }
        break;
    case K_LD:
        memset(p, 0, sizeof(long double));
        memcpy(p, &v.f, 10);
        break;
    case K_C:
        memcpy(p, &v.c, 16);
        break;
    }
}

static int neq(const tdesc *d, num a, num b)
{
    switch (d->kind) {
    case K_S:
    case K_U:
        return a.i == b.i;
    case K_F:
    case K_LD:
        return a.f == b.f;
    default:
        return a.c == b.c;
    }
}

/* Hash of an element's value: the bytes that carry it (long double: 10
 * of 16), with -0.0 made +0.0 (the sign of a zero may depend on the order
 * in which an MPI combined the contributions). */
static uint64_t hash_value(uint64_t h, const tdesc *d, const void *p)
{
    unsigned char c[16];
    num v = nload(d, p);
    if (d->kind == K_F || d->kind == K_LD)
        v.f += 0.0L;
    if (d->kind == K_C)
        v.c = CMPLX(creal(v.c) + 0.0, cimag(v.c) + 0.0);
    nstore(d, c, v);
    return hash_bytes(h, c, d->kind == K_LD ? 10 : (size_t)d->size);
}

static num napply(const tdesc *d, int o, num a, num b)
{
    num r = a;
    if (d->kind == K_S || d->kind == K_U) {
        unsigned long long x = (unsigned long long)a.i, y = (unsigned long long)b.i, z = x;
        int lt = d->kind == K_S ? a.i < b.i : x < y;
        switch (o) {
        case O_SUM: z = x + y; break;
        case O_PROD: z = x * y; break;
        case O_MAX: z = lt ? y : x; break;
        case O_MIN: z = lt ? x : y; break;
        case O_BAND: z = x & y; break;
        case O_BOR: z = x | y; break;
        case O_BXOR: z = x ^ y; break;
        case O_LAND: z = (x != 0) && (y != 0); break;
        case O_LOR: z = (x != 0) || (y != 0); break;
        case O_LXOR: z = (x != 0) != (y != 0); break;
        case O_REPLACE: z = y; break;
        case O_NOOP: z = x; break;
        }
        r.i = norm_int(d, z);
    } else if (d->kind == K_C) {
        switch (o) {
        case O_SUM: r.c = a.c + b.c; break;
        case O_PROD: r.c = a.c * b.c; break;
        case O_REPLACE: r.c = b.c; break;
        default: break;
        }
    } else {
        switch (o) {
        case O_SUM: r.f = a.f + b.f; break;
        case O_PROD: r.f = a.f * b.f; break;
        case O_MAX: r.f = a.f < b.f ? b.f : a.f; break;
        case O_MIN: r.f = a.f < b.f ? a.f : b.f; break;
        case O_REPLACE: r.f = b.f; break;
        default: break;
        }
        if (d->kind == K_F && d->size == 4)
            r.f = (float)r.f;
        else if (d->kind == K_F)
            r.f = (double)r.f;
    }
    return r;
}

/* The value that `who` (an origin rank, or 100 + target for the initial
 * contents) contributes to element i under operation o: small exact values
 * (sums and products of up to 8 of them fit every type). */
static num ngen(const tdesc *d, int o, int who, int i)
{
    num v = {0, 0, 0};
    uint64_t h = mix64(seed6((uint64_t)who, (uint64_t)o, (uint64_t)i, (uint64_t)d->size,
                             (uint64_t)d->kind, 5),
                       3);
    long long s = 0;
    switch (o) {
    case O_SUM:
        s = (long long)(h % 7) - 3;
        break;
    case O_PROD:
        s = (long long)(h % 2) + 1; /* 1 or 2 */
        if (d->kind != K_U && (h >> 8) % 3 == 0)
            s = -s;
        break;
    case O_MAX:
    case O_MIN:
        s = (long long)(h % 13) - 6;
        break;
    case O_BAND:
    case O_BOR:
    case O_BXOR:
        v.i = norm_int(d, h);
        return v;
    case O_LAND:
    case O_LOR:
    case O_LXOR:
        s = (long long)(h % 3); /* 0, 1, 2 */
        break;
    default:
        s = (long long)(h % 200) - 100;
        if (d->kind == K_S || d->kind == K_U) {
            v.i = norm_int(d, h >> 3);
            return v;
        }
        break;
    }
    if (d->kind == K_U && s < 0)
        s = -s;
    if (d->kind == K_S || d->kind == K_U)
        v.i = s;
    else if (d->kind == K_C)
        v.c = CMPLX((double)s, (double)((long long)((h >> 16) % 3) - 1));
    else
        v.f = (long double)s / (o == O_PROD ? 1 : 4);
    return v;
}

#define DK 8 /* elements per origin block */

/* Bytes of the window of one type: an area of n * DK elements of 16 bytes
 * per operation. */
static size_t d_area(void)
{
    return (size_t)g_n * DK * 16;
}

static size_t d_off(int ti, int o, int elem, size_t es)
{
    return ((size_t)ti * NOPS + (size_t)o) * d_area() + (size_t)elem * es;
}

/* Accumulate from every rank into every rank, every type and operation in
 * one fence epoch; the commutative operations all on the first block, so
 * that the origins' contributions meet, REPLACE on block `origin`. */
static void accumulate_types(void)
{
    phase("D Accumulate");
    const int me = g_me, n = g_n;
    size_t wbytes = (size_t)ntypes() * NOPS * d_area();
    rwin w;
    rw_create(&w, F_ALLOCATE, wbytes, 1, NULL, MPI_COMM_WORLD, MPI_INFO_NULL);
    unsigned char *obuf = must(malloc(wbytes), "malloc", wbytes);
    for (int ti = 0; ti < ntypes(); ti++) {
        tdesc d = type_at(ti);
        size_t es = (size_t)d.size;
        for (int o = 0; o < NOPS; o++)
            for (int i = 0; i < n * DK; i++)
                nstore(&d, w.base + d_off(ti, o, i, es), ngen(&d, o, 100 + me, i));
    }
    MPI_OK(MPI_Win_fence(0, w.win));
    int nops[16] = {0};
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        for (int ti = 0; ti < ntypes(); ti++) {
            tdesc d = type_at(ti);
            size_t es = (size_t)d.size;
            for (int o = 0; o < NOPS; o++) {
                if (o == O_NOOP || !op_applies(&d, o))
                    continue;
                nops[ti] += k == 0;
                unsigned char *ob = obuf + d_off(ti, o, 0, es);
                if (k == 0)
                    for (int i = 0; i < DK; i++)
                        nstore(&d, ob + i * es, ngen(&d, o, me, i));
                int blk = o == O_REPLACE ? me : 0;
                MPI_OK(MPI_Accumulate(ob, DK, d.t, t, (MPI_Aint)d_off(ti, o, blk * DK, es), DK,
                                      d.t, op_handle(o), w.win));
            }
        }
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    for (int ti = 0; ti < ntypes(); ti++) {
        tdesc d = type_at(ti);
        size_t es = (size_t)d.size;
        uint64_t h = 0;
        int bad = 0;
        for (int o = 0; o < NOPS; o++) {
            for (int i = 0; i < n * DK; i++) {
                num e = ngen(&d, o, 100 + me, i);
                if (o != O_NOOP && op_applies(&d, o)) {
                    if (o == O_REPLACE)
                        e = ngen(&d, o, i / DK, i % DK);
                    else if (i < DK)
                        for (int q = 0; q < n; q++)
                            e = napply(&d, o, e, ngen(&d, o, q, i));
                }
                const unsigned char *p = w.base + d_off(ti, o, i, es);
                if (!neq(&d, nload(&d, p), e) && bad++ == 0)
                    CHECK(0, "D Accumulate %s %s: element %d is wrong", d.name, op_name[o], i);
                h = hash_value(h, &d, p);
            }
        }
        out("D Accumulate %s: %d operations, window checksum %016llx", d.name, nops[ti],
            (unsigned long long)h);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    rw_free(&w);
    free(obuf);
}

/* The operations of Get_accumulate on a Win_create window (see
 * OMPI_CREATE_BUGS). */
static int ga_applies(const tdesc *d, int o)
{
    if (OMPI_CREATE_BUGS && (o == O_LAND || o == O_LOR || o == O_LXOR))
        return 0;
    return op_applies(d, o);
}

/* At 4 ranks: char, int, double and complex. */
static int ga_type(int ti)
{
    return !g_big || ti == 0 || ti == 4 || ti == 9 || ti == 11;
}

/* Get_accumulate from every rank to every rank (block `origin`, so every
 * fetched value is the initial one), every type and operation in one
 * Lock_all epoch, a flush per target. */
static void get_accumulate_types(void)
{
    phase("D Get_accumulate");
    const int me = g_me, n = g_n;
    size_t wbytes = (size_t)ntypes() * NOPS * d_area();
    rwin w;
    rw_create(&w, usable(F_MALLOC), wbytes, 1, NULL, MPI_COMM_WORLD, MPI_INFO_NULL);
    unsigned char *obuf = must(malloc(wbytes), "malloc", wbytes);
    unsigned char *rbuf = must(malloc(wbytes), "malloc", wbytes);
    MPI_OK(MPI_Win_lock_all(0, w.win));
    for (int ti = 0; ti < ntypes(); ti++) {
        tdesc d = type_at(ti);
        size_t es = (size_t)d.size;
        for (int o = 0; o < NOPS; o++)
            for (int i = 0; i < n * DK; i++) {
                nstore(&d, w.base + d_off(ti, o, i, es), ngen(&d, o, 100 + me, i));
                if (i < DK)
                    nstore(&d, obuf + d_off(ti, o, i, es), ngen(&d, o, me, i));
            }
    }
    MPI_OK(MPI_Win_sync(w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int bad = 0, nops[16] = {0};
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        memset(rbuf, 0, wbytes);
        for (int ti = 0; ti < ntypes(); ti++) {
            tdesc d = type_at(ti);
            size_t es = (size_t)d.size;
            if (!ga_type(ti))
                continue;
            for (int o = 0; o < NOPS; o++) {
                if (!ga_applies(&d, o))
                    continue;
                nops[ti] += k == 0;
                MPI_OK(MPI_Get_accumulate(obuf + d_off(ti, o, 0, es), DK, d.t,
                                          rbuf + d_off(ti, o, 0, es), DK, d.t, t,
                                          (MPI_Aint)d_off(ti, o, me * DK, es), DK, d.t,
                                          op_handle(o), w.win));
            }
        }
        MPI_OK(MPI_Win_flush(t, w.win));
        for (int ti = 0; ti < ntypes(); ti++) {
            tdesc d = type_at(ti);
            size_t es = (size_t)d.size;
            if (!ga_type(ti))
                continue;
            for (int o = 0; o < NOPS; o++) {
                if (!ga_applies(&d, o))
                    continue;
                for (int i = 0; i < DK; i++)
                    if (!neq(&d, nload(&d, rbuf + d_off(ti, o, i, es)),
                             ngen(&d, o, 100 + t, me * DK + i)) &&
                        bad++ == 0)
                        CHECK(0, "D Get_accumulate %s %s from rank %d: fetched element %d is "
                                 "wrong", d.name, op_name[o], t, i);
            }
        }
    }
    MPI_OK(MPI_Win_flush_all(w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(w.win));
    for (int ti = 0; ti < ntypes(); ti++) {
        tdesc d = type_at(ti);
        size_t es = (size_t)d.size;
        if (!ga_type(ti))
            continue;
        uint64_t h = 0;
        for (int o = 0; o < NOPS; o++) {
            for (int i = 0; i < n * DK; i++) {
                num e = ngen(&d, o, 100 + me, i);
                if (ga_applies(&d, o))
                    e = napply(&d, o, e, ngen(&d, o, i / DK, i % DK));
                const unsigned char *p = w.base + d_off(ti, o, i, es);
                if (!neq(&d, nload(&d, p), e) && bad++ == 0)
                    CHECK(0, "D Get_accumulate %s %s: element %d is wrong", d.name, op_name[o],
                          i);
                h = hash_value(h, &d, p);
            }
        }
        out("D Get_accumulate %s: %d operations, window checksum %016llx", d.name, nops[ti],
            (unsigned long long)h);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_unlock_all(w.win));
    rw_free(&w);
    free(obuf);
    free(rbuf);
}

/* ------------------------------------------------------------------------ */
/* E. Fetch_and_op, Compare_and_swap                                        */
/* ------------------------------------------------------------------------ */

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Fetch_and_op, uncontended: element `me` of every rank, every operation
 * that applies, on Win_allocate memory. */
static void fetch_and_op(void)
{
    phase("E Fetch_and_op");
    const int me = g_me, n = g_n;
    /* types: int, long long, unsigned long long, double, short */
    const int tis[5] = {4, 6, 7, 9, 2};
    size_t region = (size_t)n * 16; /* one element per origin */
    size_t wbytes = region * NOPS * 5;
    rwin w;
    rw_create(&w, F_ALLOCATE, wbytes, 8, NULL, MPI_COMM_WORLD, MPI_INFO_NULL);
    MPI_OK(MPI_Win_lock_all(0, w.win));
    for (int k = 0; k < 5; k++) {
        tdesc d = type_at(tis[k]);
        for (int o = 0; o < NOPS; o++)
            for (int i = 0; i < n; i++)
                nstore(&d, w.base + (k * NOPS + o) * region + (size_t)i * 16,
                       ngen(&d, o, 100 + me, i));
    }
    MPI_OK(MPI_Win_sync(w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int bad = 0;
    static unsigned char v[5][NOPS][16], r[5][NOPS][16];
    for (int t = 0; t < n; t++) {
        memset(r, 0, sizeof r);
        for (int k = 0; k < 5; k++) {
            tdesc d = type_at(tis[k]);
            for (int o = 0; o < NOPS; o++) {
                if (!op_applies(&d, o))
                    continue;
                nstore(&d, v[k][o], ngen(&d, o, me, me));
                MPI_Aint disp = (MPI_Aint)(((k * NOPS + o) * region + (size_t)me * 16) / 8);
                MPI_OK(MPI_Fetch_and_op(v[k][o], r[k][o], d.t, t, disp, op_handle(o), w.win));
            }
        }
        MPI_OK(MPI_Win_flush(t, w.win));
        for (int k = 0; k < 5; k++) {
            tdesc d = type_at(tis[k]);
            for (int o = 0; o < NOPS; o++)
                if (op_applies(&d, o) && !neq(&d, nload(&d, r[k][o]), ngen(&d, o, 100 + t, me)) &&
                    bad++ == 0)
                    CHECK(0, "E Fetch_and_op %s %s on rank %d fetched a wrong value", d.name,
                          op_name[o], t);
        }
    }
    MPI_OK(MPI_Win_flush_all(w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(w.win));
    for (int k = 0; k < 5; k++) {
        tdesc d = type_at(tis[k]);
        uint64_t h = 0;
        for (int o = 0; o < NOPS; o++)
            for (int i = 0; i < n; i++) {
                num e = ngen(&d, o, 100 + me, i);
                if (op_applies(&d, o))
                    e = napply(&d, o, e, ngen(&d, o, i, i));
                const unsigned char *p = w.base + (k * NOPS + o) * region + (size_t)i * 16;
                if (!neq(&d, nload(&d, p), e) && bad++ == 0)
                    CHECK(0, "E Fetch_and_op %s %s: element %d is wrong", d.name, op_name[o], i);
                h = hash_value(h, &d, p);
            }
        out("E Fetch_and_op %s: window checksum %016llx", d.name, (unsigned long long)h);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_unlock_all(w.win));
    rw_free(&w);
}

/* Compare_and_swap uncontended, then a contended Fetch_and_op counter and
 * a contended Compare_and_swap, on Win_create over malloc memory. (Stock
 * Open MPI 4.1.4 crashes in Compare_and_swap on 8-byte types on
 * Win_allocate windows: SIGSEGV in mca_btl_vader_emu_acswap.) */
static void compare_and_swap(void)
{
    phase("E Compare_and_swap");
    const int me = g_me, n = g_n;
    /* int, long long, short, unsigned long long (at 4 ranks the first two) */
    const int ctis[4] = {4, 6, 2, 7};
    const int nct = g_big ? 2 : 4;
    size_t region = (size_t)n * 16;
    size_t wbytes = region * 4 + 64;
    rwin w;
    rw_create(&w, usable(F_MALLOC), wbytes, 8, NULL, MPI_COMM_WORLD, MPI_INFO_NULL);
    memset(w.base, 0, wbytes);
    MPI_OK(MPI_Win_lock_all(0, w.win));
    for (int k = 0; k < nct; k++) {
        tdesc d = type_at(ctis[k]);
        for (int i = 0; i < n; i++)
            nstore(&d, w.base + k * region + (size_t)i * 16, ngen(&d, O_NOOP, 100 + me, i));
    }
    MPI_OK(MPI_Win_sync(w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < nct; k++) {
        tdesc d = type_at(ctis[k]);
        MPI_Aint disp = (MPI_Aint)((k * region + (size_t)me * 16) / 8);
        for (int t = 0; t < n; t++) {
            if (!cas_works(w.fl, d.size, me, t))
                continue;
            unsigned char cmpv[16], newv[16], r[16];
            num init = ngen(&d, O_NOOP, 100 + t, me);
            num mine = {me + 100, 0, 0};
            nstore(&d, cmpv, init);
            nstore(&d, newv, mine);
            memset(r, 0, sizeof r);
            MPI_OK(MPI_Compare_and_swap(newv, cmpv, r, d.t, t, disp, w.win));
            MPI_OK(MPI_Win_flush(t, w.win));
            int good = neq(&d, nload(&d, r), init);
            /* a failing compare: the value stays */
            num other = {-5, 0, 0};
            nstore(&d, newv, other);
            memset(r, 0, sizeof r);
            MPI_OK(MPI_Compare_and_swap(newv, cmpv, r, d.t, t, disp, w.win));
            MPI_OK(MPI_Win_flush(t, w.win));
            good &= neq(&d, nload(&d, r), mine);
            CHECK(good, "E Compare_and_swap %s on rank %d fetched wrong values", d.name, t);
        }
    }
    MPI_OK(MPI_Win_flush_all(w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(w.win));
    for (int k = 0; k < nct; k++) {
        tdesc d = type_at(ctis[k]);
        uint64_t h = 0;
        int good = 1;
        for (int q = 0; q < n; q++) {
            const unsigned char *p = w.base + k * region + (size_t)q * 16;
            num e = {q + 100, 0, 0};
            if (!cas_works(w.fl, d.size, q, me))
                e = ngen(&d, O_NOOP, 100 + me, q);
            good &= neq(&d, nload(&d, p), e);
            h = hash_bytes(h, p, (size_t)d.size);
        }
        CHECK(good, "E Compare_and_swap %s: the window is wrong", d.name);
        out("E Compare_and_swap %s: window checksum %016llx", d.name, (unsigned long long)h);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* contended: a counter on rank 0 (a long long after the regions) */
    phase("E contended Fetch_and_op");
    const int rounds = g_big ? 8 : 25;
    MPI_Aint cdisp = (MPI_Aint)(region * 4 / 8);
    long long *got = must(malloc(sizeof(long long) * (size_t)rounds), "malloc", 0);
    for (int r = 0; r < rounds; r++) {
        long long one = 1;
        MPI_OK(MPI_Fetch_and_op(&one, &got[r], MPI_LONG_LONG, 0, cdisp, MPI_SUM, w.win));
        MPI_OK(MPI_Win_flush(0, w.win));
    }
    long long *all = must(malloc(sizeof(long long) * (size_t)(rounds * n)), "malloc", 0);
    MPI_OK(MPI_Allgather(got, rounds, MPI_LONG_LONG, all, rounds, MPI_LONG_LONG,
                         MPI_COMM_WORLD));
    qsort(all, (size_t)(rounds * n), sizeof(long long), cmp_ll);
    int ok = 1;
    for (int i = 0; i < rounds * n; i++)
        ok &= all[i] == i;
    long long final = -1;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Fetch_and_op(NULL, &final, MPI_LONG_LONG, 0, cdisp, MPI_NO_OP, w.win));
    MPI_OK(MPI_Win_flush(0, w.win));
    CHECK(ok, "E: the fetched counter values are not 0..%d", rounds * n - 1);
    CHECK(final == rounds * n, "E: the counter is %lld, expected %d", final, rounds * n);
    out("E contended Fetch_and_op: %d increments, fetched values 0..%d %s, counter %lld",
        rounds * n, rounds * n - 1, ok ? "each once" : "WRONG", final);
    free(got);
    free(all);

    /* contended: everyone swaps 0 -> me + 1 on rank 0; one wins */
    phase("E contended Compare_and_swap");
    int zero = 0, newv = me + 1, res = -1;
    MPI_Aint slot = cdisp + 1;
    MPI_OK(MPI_Compare_and_swap(&newv, &zero, &res, MPI_INT, 0, slot, w.win));
    MPI_OK(MPI_Win_flush(0, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int final_cas = -1;
    MPI_OK(MPI_Fetch_and_op(NULL, &final_cas, MPI_INT, 0, slot, MPI_NO_OP, w.win));
    MPI_OK(MPI_Win_flush(0, w.win));
    int *allres = must(malloc(sizeof(int) * (size_t)n), "malloc", 0);
    MPI_OK(MPI_Allgather(&res, 1, MPI_INT, allres, 1, MPI_INT, MPI_COMM_WORLD));
    int winners = 0, others_ok = 1;
    for (int i = 0; i < n; i++) {
        if (allres[i] == 0) {
            winners++;
            others_ok &= final_cas == i + 1;
        } else {
            others_ok &= allres[i] == final_cas;
        }
    }
    CHECK(winners == 1 && others_ok, "E contended Compare_and_swap: %d winners", winners);
    out("E contended Compare_and_swap: %d winner, the others fetched its value: %s", winners,
        others_ok ? "yes" : "NO");
    free(allres);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_unlock_all(w.win));
    rw_free(&w);
}

/* ------------------------------------------------------------------------ */
/* F. synchronisation                                                       */
/* ------------------------------------------------------------------------ */

#define FW_INTS 1024

static void sync_modes(void)
{
    const int me = g_me, n = g_n;
    rwin w;
    rw_create(&w, usable(F_MALLOC), FW_INTS * 4, 4, NULL, MPI_COMM_WORLD, MPI_INFO_NULL);
    int *mine = (int *)w.base;
    static int exp[FW_INTS];
    for (int i = 0; i < FW_INTS; i++)
        mine[i] = exp[i] = a_init(me, i);
    MPI_Group wg;
    MPI_OK(MPI_Win_get_group(w.win, &wg));
    int buf[64], gb[64];

    /* F1: PSCW in pairs (0,1), (2,3), ...; a lone last rank pairs with itself */
    phase("F PSCW pairs");
    int partner = (me ^ 1) < n ? (me ^ 1) : me;
    MPI_Group gp;
    MPI_OK(MPI_Group_incl(wg, 1, &partner, &gp));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the initial stores are done */
    MPI_OK(MPI_Win_post(gp, 0, w.win));
    MPI_OK(MPI_Win_start(gp, 0, w.win));
    for (int i = 0; i < 64; i++)
        buf[i] = pat(me, partner, 11, i);
    MPI_OK(MPI_Put(buf, 64, MPI_INT, partner, 0, 64, MPI_INT, w.win));
    MPI_OK(MPI_Win_complete(w.win));
    MPI_OK(MPI_Win_wait(w.win));
    for (int i = 0; i < 64; i++)
        exp[i] = pat(partner, me, 11, i);
    CHECK(memcmp(mine, exp, sizeof exp) == 0, "F PSCW pairs: the window is wrong");
    /* round 2: only gets, nothing stored locally since */
    MPI_OK(MPI_Win_post(gp, MPI_MODE_NOSTORE | MPI_MODE_NOPUT, w.win));
    MPI_OK(MPI_Win_start(gp, 0, w.win));
    MPI_OK(MPI_Get(gb, 64, MPI_INT, partner, 0, 64, MPI_INT, w.win));
    MPI_OK(MPI_Win_complete(w.win));
    {
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Win_test(w.win, &flag));
    }
    int ok = 1;
    for (int i = 0; i < 64; i++)
        ok &= gb[i] == pat(me, partner, 11, i);
    CHECK(ok, "F PSCW pairs: Get from the partner is wrong");
    out("F PSCW with rank %d: window checksum %016llx, Get %s", partner,
        (unsigned long long)hash_ints(mine, FW_INTS), ok ? "right" : "WRONG");
    MPI_OK(MPI_Group_free(&gp));

    /* F2: a star: rank 0 exposes to all the others (Win_test loop). The
     * barrier first: stock MPICH 4.0.2 hangs now and then (at 4 ranks) when
     * a post of this star reaches a rank still in its pair epochs, or the
     * star's epochs overlap the next PSCW of other groups on the window. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    phase("F PSCW star");
    if (n > 1) {
        if (me == 0) {
            int *others = must(malloc(sizeof(int) * (size_t)n), "malloc", 0);
            for (int i = 1; i < n; i++)
                others[i - 1] = i;
            MPI_Group go;
            MPI_OK(MPI_Group_incl(wg, n - 1, others, &go));
            MPI_OK(MPI_Win_post(go, 0, w.win));
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Win_test(w.win, &flag));
            MPI_OK(MPI_Group_free(&go));
            free(others);
            for (int q = 1; q < n; q++) {
                for (int i = 0; i < 16; i++)
                    exp[128 + q * 16 + i] = pat(q, 0, 12, i);
                exp[256] += q * 3;
            }
        } else {
            MPI_Group g0;
            int zero = 0;
            MPI_OK(MPI_Group_incl(wg, 1, &zero, &g0));
            MPI_OK(MPI_Win_start(g0, 0, w.win));
            for (int i = 0; i < 16; i++)
                buf[i] = pat(me, 0, 12, i);
            int add = me * 3;
            MPI_OK(MPI_Put(buf, 16, MPI_INT, 0, 128 + me * 16, 16, MPI_INT, w.win));
            MPI_OK(MPI_Accumulate(&add, 1, MPI_INT, 0, 256, 1, MPI_INT, MPI_SUM, w.win));
            MPI_OK(MPI_Win_complete(w.win));
            MPI_OK(MPI_Group_free(&g0));
        }
        CHECK(memcmp(mine, exp, sizeof exp) == 0, "F PSCW star: the window is wrong");
        out("F PSCW star: window checksum %016llx", (unsigned long long)hash_ints(mine, FW_INTS));
    } else {
        out("F PSCW star: not at 1 rank");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* F3: read-modify-write of a counter on rank 0 under an exclusive lock */
    phase("F exclusive lock counter");
    const int rounds = g_big ? 5 : 20;
    int *seen = must(malloc(sizeof(int) * (size_t)rounds), "malloc", 0);
    for (int r = 0; r < rounds; r++) {
        int v = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win));
        MPI_OK(MPI_Get(&v, 1, MPI_INT, 0, 300, 1, MPI_INT, w.win));
        MPI_OK(MPI_Win_flush(0, w.win));
        seen[r] = v;
        v++;
        MPI_OK(MPI_Put(&v, 1, MPI_INT, 0, 300, 1, MPI_INT, w.win));
        MPI_OK(MPI_Win_unlock(0, w.win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int *allseen = must(malloc(sizeof(int) * (size_t)(rounds * n)), "malloc", 0);
    MPI_OK(MPI_Allgather(seen, rounds, MPI_INT, allseen, rounds, MPI_INT, MPI_COMM_WORLD));
    {
        long long *s = must(malloc(sizeof(long long) * (size_t)(rounds * n)), "malloc", 0);
        for (int i = 0; i < rounds * n; i++)
            s[i] = allseen[i];
        qsort(s, (size_t)(rounds * n), sizeof(long long), cmp_ll);
        int base = a_init(0, 300);
        ok = 1;
        for (int i = 0; i < rounds * n; i++)
            ok &= s[i] == base + i;
        free(s);
        CHECK(ok, "F exclusive lock: the values read are not consecutive");
        int fin = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w.win));
        MPI_OK(MPI_Get(&fin, 1, MPI_INT, 0, 300, 1, MPI_INT, w.win));
        MPI_OK(MPI_Win_unlock(0, w.win));
        CHECK(fin == base + rounds * n, "F exclusive lock: counter %d", fin);
        out("F exclusive lock: %d read-modify-writes, each value seen once: %s, counter +%d",
            rounds * n, ok ? "yes" : "NO", fin - base);
        if (me == 0)
            exp[300] = fin;
    }
    free(seen);
    free(allseen);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* F4: shared locks with MPI_MODE_NOCHECK (nobody takes an exclusive
     * lock in this phase), Flush_local and reuse of the origin buffer */
    phase("F NOCHECK and Flush_local");
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, MPI_MODE_NOCHECK, w.win));
        for (int i = 0; i < 8; i++)
            buf[i] = pat(me, t, 13, i);
        MPI_OK(MPI_Put(buf, 8, MPI_INT, t, 400 + me * 16, 8, MPI_INT, w.win));
        MPI_OK(MPI_Win_flush_local(t, w.win));
        for (int i = 0; i < 8; i++)
            buf[i] = pat(me, t, 14, i);
        MPI_OK(MPI_Put(buf, 8, MPI_INT, t, 400 + me * 16 + 8, 8, MPI_INT, w.win));
        MPI_OK(MPI_Win_unlock(t, w.win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < 8; i++) {
            exp[400 + q * 16 + i] = pat(q, me, 13, i);
            exp[400 + q * 16 + 8 + i] = pat(q, me, 14, i);
        }
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w.win));
    CHECK(memcmp(mine, exp, sizeof exp) == 0, "F NOCHECK: the window is wrong");
    out("F Lock(MPI_MODE_NOCHECK) and Flush_local: window checksum %016llx",
        (unsigned long long)hash_ints(mine, FW_INTS));
    MPI_OK(MPI_Win_unlock(me, w.win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_OK(MPI_Group_free(&wg));
    rw_free(&w);
}

/* ------------------------------------------------------------------------ */
/* G. shared memory windows                                                 */
/* ------------------------------------------------------------------------ */

static size_t g_seg(int r)
{
    return r == 1 ? 0 : 1000 + 24 * (size_t)r;
}

/* The first rank after r (cyclically) with a segment; r itself if none. */
static int next_with_seg(int r, int n)
{
    int q = r;
    do
        q = (q + 1) % n;
    while (g_seg(q) == 0 && q != r);
    return q;
}

static void shared_on(MPI_Comm comm, const char *cname, int noncontig)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    unsigned char *mybase = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_shared((MPI_Aint)g_seg(me), 8, info, comm, &mybase, &win));
    if (info != MPI_INFO_NULL)
        MPI_OK(MPI_Info_free(&info));
    const char *nc = noncontig ? " (alloc_shared_noncontig)" : "";
    unsigned char **ptr = must(calloc((size_t)n, sizeof *ptr), "calloc", 0);
    int contiguous = 1;
    for (int q = 0; q < n; q++) {
        MPI_Aint sz = -1;
        int du = -1;
        void *p = NULL;
        MPI_OK(MPI_Win_shared_query(win, q, &sz, &du, &p));
        ptr[q] = p;
        /* with alloc_shared_noncontig stock Open MPI gives the size rounded
         * up to a page: only "at least the size asked for" is printed */
        int size_ok = noncontig ? (size_t)sz >= g_seg(q) : (size_t)sz == g_seg(q);
        CHECK(size_ok && du == 8, "G: Win_shared_query(%d): size %ld, disp_unit %d", q, (long)sz,
              du);
        if (q == me)
            CHECK(p == (void *)mybase || g_seg(q) == 0, "G: Win_shared_query(me) is not my base");
        if (q > 0 && g_seg(q) > 0 && g_seg(q - 1) > 0 && !noncontig)
            contiguous &= ptr[q] == ptr[q - 1] + g_seg(q - 1);
        if (noncontig)
            out("G %s%s: rank %d's segment: size at least %zu: %s, disp_unit %d", cname, nc, q,
                g_seg(q), size_ok ? "yes" : "no", du);
        else
            out("G %s%s: rank %d's segment: size %ld, disp_unit %d", cname, nc, q, (long)sz, du);
    }
    if (!noncontig) {
        CHECK(contiguous, "G %s: the segments are not contiguous", cname);
        out("G %s: segments contiguous: %s", cname, contiguous ? "yes" : "no");
    }
    {
        MPI_Aint sz = -1;
        int du = -1;
        void *p = NULL;
        MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p));
        int who = -1;
        for (int q = n - 1; q >= 0; q--)
            if (g_seg(q) > 0 && ptr[q] == p)
                who = q;
        CHECK(who >= 0 && (noncontig ? (size_t)sz >= g_seg(who) : (size_t)sz == g_seg(who)),
              "G: Win_shared_query(MPI_PROC_NULL): rank %d's segment, size %ld", who, (long)sz);
        out("G %s%s: Win_shared_query(MPI_PROC_NULL): rank %d's segment", cname, nc, who);
    }
    /* stores into my segment, loads from everyone's */
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    if (g_seg(me) > 0)
        pattern_fill(mybase, 0, g_seg(me), me, 21);
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Win_sync(win));
    uint64_t h = 0;
    for (int q = 0; q < n; q++) {
        char what[64];
        snprintf(what, sizeof what, "G %s: rank %d's segment", cname, q);
        if (g_seg(q) > 0) {
            pattern_check(ptr[q], 0, g_seg(q), q, 21, what);
            h = hash_bytes(h, ptr[q], g_seg(q));
        }
    }
    out("G %s%s: loads of every segment: checksum %016llx", cname, nc, (unsigned long long)h);
    MPI_OK(MPI_Barrier(comm));
    /* stores straight into the next segment (8 bytes at 8 * me), then an
     * Accumulate into every segment (a long long at byte 80) */
    int next = next_with_seg(me, n);
    if (g_seg(next) > 0)
        for (int i = 0; i < 8; i++)
            ptr[next][8 * me + i] = (unsigned char)(me * 16 + i);
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Win_sync(win));
    long long one = me + 1;
    for (int q = 0; q < n; q++)
        if (g_seg(q) > 0)
            MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, q, 10, 1, MPI_LONG_LONG, MPI_SUM, win));
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Win_sync(win));
    if (g_seg(me) > 0) {
        unsigned char *ex = must(malloc(g_seg(me)), "malloc", g_seg(me));
        pattern_fill(ex, 0, g_seg(me), me, 21);
        int writers = 0;
        for (int q = 0; q < n; q++)
            if (next_with_seg(q, n) == me) {
                writers++;
                for (int i = 0; i < 8; i++)
                    ex[8 * q + i] = (unsigned char)(q * 16 + i);
            }
        unsigned long long v;
        memcpy(&v, ex + 80, 8);
        for (int q = 0; q < n; q++)
            v += (unsigned long long)(q + 1);
        memcpy(ex + 80, &v, 8);
        CHECK(memcmp(ex, mybase, g_seg(me)) == 0,
              "G %s: my segment after the stores and Accumulate is wrong", cname);
        out("G %s%s: after stores of %d rank%s and Accumulate: my segment's checksum %016llx",
            cname, nc, writers, writers == 1 ? "" : "s",
            (unsigned long long)hash_bytes(0, mybase, g_seg(me)));
        free(ex);
    }
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));
    free(ptr);
}

static void shared_windows(void)
{
    phase("G shared windows");
    shared_on(MPI_COMM_WORLD, "MPI_COMM_WORLD", 0);
    if (!g_big)
        shared_on(MPI_COMM_WORLD, "MPI_COMM_WORLD", 1);
    MPI_Comm pair;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, g_me / 2, g_me, &pair));
    shared_on(pair, "pair", 0);
    MPI_OK(MPI_Comm_free(&pair));
}

/* ------------------------------------------------------------------------ */
/* H. dynamic windows: attach, detach                                       */
/* ------------------------------------------------------------------------ */

static int g_dyn_global[256];

static void dynamic_windows(void)
{
    phase("H dynamic windows");
    if (!flavour_works(F_DYNAMIC)) {
        out("H: left out (stock Open MPI cannot create a dynamic window on one process)");
        return;
    }
    const int me = g_me, n = g_n, right = (me + 1) % n, left = (me + n - 1) % n;
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    size_t bigb = g_big ? (256 << 10) : (1 << 20);
    int *small = must(malloc(64 * sizeof(int)), "malloc", 0);
    unsigned char *big = must(malloc(bigb), "malloc", bigb);
    for (int i = 0; i < 64; i++)
        small[i] = a_init(me, i);
    memset(big, 0, bigb);
    MPI_OK(MPI_Win_attach(win, small, 64 * sizeof(int)));
    MPI_OK(MPI_Win_attach(win, big, (MPI_Aint)bigb));
    MPI_Aint mine[2], *addr = must(malloc(sizeof(MPI_Aint) * 2 * (size_t)n), "malloc", 0);
    MPI_OK(MPI_Get_address(small, &mine[0]));
    MPI_OK(MPI_Get_address(big, &mine[1]));
    MPI_OK(MPI_Allgather(mine, 2, MPI_AINT, addr, 2, MPI_AINT, MPI_COMM_WORLD));
    unsigned char *o = must(malloc(bigb), "malloc", bigb);
    wpattern_fill(o, bigb, (uint64_t)me + 31);
    int v[8];
    for (int i = 0; i < 8; i++)
        v[i] = pat(me, right, 31, i);
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(v, 8, MPI_INT, right, MPI_Aint_add(addr[2 * right], 8 * 4), 8, MPI_INT, win));
    MPI_OK(MPI_Put(o, (int)bigb - 5, MPI_BYTE, right, MPI_Aint_add(addr[2 * right + 1], 5),
                   (int)bigb - 5, MPI_BYTE, win));
    MPI_OK(MPI_Win_fence(0, win));
    int ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= small[8 + i] == pat(left, me, 31, i);
    CHECK(ok, "H: Put into the small region is wrong");
    wpattern_check(big + 5, bigb - 5, (uint64_t)left + 31, "H: Put into the big region");
    out("H two regions attached: checksums %016llx %016llx",
        (unsigned long long)hash_ints(small, 64), (unsigned long long)hash_bytes(0, big, bigb));
    /* detach the small region, attach a global array */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody accesses `small` any more */
    MPI_OK(MPI_Win_detach(win, small));
    for (int i = 0; i < 256; i++)
        g_dyn_global[i] = a_init(me, i);
    MPI_OK(MPI_Win_attach(win, g_dyn_global, sizeof g_dyn_global));
    MPI_OK(MPI_Get_address(g_dyn_global, &mine[0]));
    MPI_OK(MPI_Allgather(mine, 2, MPI_AINT, addr, 2, MPI_AINT, MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock_all(0, win));
    int add[4] = {me + 1, me + 2, me + 3, me + 4};
    for (int t = 0; t < n; t++)
        MPI_OK(MPI_Accumulate(add, 4, MPI_INT, t, MPI_Aint_add(addr[2 * t], 100 * 4), 4, MPI_INT,
                              MPI_SUM, win));
    int g[8];
    MPI_OK(MPI_Get(g, 8, MPI_INT, left, addr[2 * left + 1] + 5, 8, MPI_INT, win));
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(win));
    ok = 1;
    for (int i = 0; i < 4; i++) {
        int e = a_init(me, 100 + i);
        for (int q = 0; q < n; q++)
            e += q + 1 + i;
        ok &= g_dyn_global[100 + i] == e;
    }
    CHECK(ok, "H: Accumulate into the global region is wrong");
    /* what I got from the left neighbour's big region: its left's pattern */
    {
        unsigned char ex[32];
        int ll = (left + n - 1) % n;
        for (size_t i = 0; i < 32; i++)
            ex[i] = wpattern_byte((uint64_t)ll + 31, i);
        CHECK(memcmp(g, ex, 32) == 0, "H: Get from the big region is wrong");
    }
    out("H after detach and attach: global region checksum %016llx, Get checksum %016llx",
        (unsigned long long)hash_ints(g_dyn_global, 256), (unsigned long long)hash_ints(g, 8));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_detach(win, g_dyn_global));
    MPI_OK(MPI_Win_detach(win, big));
    MPI_OK(MPI_Win_free(&win));
    free(small);
    free(big);
    free(o);
    free(addr);
}

/* ------------------------------------------------------------------------ */
/* I. names, info, error handlers                                           */
/* ------------------------------------------------------------------------ */

static int g_handler_calls, g_handler_class;

static void win_handler(MPI_Win *win, int *code, ...)
{
    (void)win;
    g_handler_calls++;
    MPI_Error_class(*code, &g_handler_class);
}

static void print_hints(const char *what, MPI_Win win)
{
    static const char *const keys[] = {"no_locks",       "accumulate_ordering",
                                       "accumulate_ops", "same_size",
                                       "same_disp_unit", "alloc_shared_noncontig"};
    MPI_Info info;
    MPI_OK(MPI_Win_get_info(win, &info));
    char line[512] = "";
    size_t len = 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        char val[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_OK(MPI_Info_get(info, keys[k], MPI_MAX_INFO_VAL, val, &flag));
        if (flag)
            len += (size_t)snprintf(line + len, sizeof line - len, " %s=%s", keys[k], val);
    }
    out("%s:%s", what, len ? line : " none of the standard hints");
    MPI_OK(MPI_Info_free(&info));
}

static void names_info_errhandlers(void)
{
    phase("I names, info, error handlers");
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "accumulate_ordering", "none"));
    MPI_OK(MPI_Info_set(info, "heapmpi_test_unknown_key", "1"));
    void *base;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(256, 1, info, MPI_COMM_WORLD, &base, &win));
    MPI_OK(MPI_Info_free(&info));
    char name[MPI_MAX_OBJECT_NAME + 1];
    int len = -1;
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len >= 0 && len < MPI_MAX_OBJECT_NAME, "I: default name of length %d", len);
    MPI_OK(MPI_Win_set_name(win, "rma_basic window"));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, "rma_basic window") == 0 && len == 16, "I: name '%s' (%d)", name, len);
    out("I Win_get_name after Win_set_name: '%s' (%d)", name, len);
    print_hints("I Win_get_info (accumulate_ordering=none given)", win);
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "accumulate_ops", "same_op"));
    MPI_OK(MPI_Win_set_info(win, info));
    MPI_OK(MPI_Info_free(&info));
    print_hints("I Win_get_info after Win_set_info(accumulate_ops=same_op)", win);

    MPI_Errhandler eh;
    MPI_OK(MPI_Win_get_errhandler(win, &eh));
    int fatal = eh == MPI_ERRORS_ARE_FATAL;
    CHECK(fatal, "I: the default error handler is not MPI_ERRORS_ARE_FATAL");
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_get_errhandler(win, &eh));
    int ret = eh == MPI_ERRORS_RETURN;
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(ret, "I: Win_get_errhandler after setting MPI_ERRORS_RETURN");
    out("I error handler: default MPI_ERRORS_ARE_FATAL %s, then MPI_ERRORS_RETURN %s",
        fatal ? "yes" : "no", ret ? "yes" : "no");
    MPI_Errhandler mine;
    MPI_OK(MPI_Win_create_errhandler(win_handler, &mine));
    MPI_OK(MPI_Win_set_errhandler(win, mine));
    MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    MPI_OK(MPI_Win_get_errhandler(win, &eh));
    int same = eh == mine;
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Errhandler_free(&mine));
    CHECK(g_handler_calls == 1 && g_handler_class == MPI_ERR_OTHER && same,
          "I: user error handler: %d calls, class %d", g_handler_calls, g_handler_class);
    out("I user error handler: %d call, class %s, Win_get_errhandler gives it: %s",
        g_handler_calls, err_class_name(g_handler_class), same ? "yes" : "no");
    /* the window still works */
    MPI_OK(MPI_Win_fence(0, win));
    unsigned char c = (unsigned char)(0x40 + g_me);
    MPI_OK(MPI_Put(&c, 1, MPI_BYTE, (g_me + 1) % g_n, 3, 1, MPI_BYTE, win));
    MPI_OK(MPI_Win_fence(0, win));
    unsigned char want = (unsigned char)(0x40 + (g_me + g_n - 1) % g_n);
    CHECK(((unsigned char *)base)[3] == want, "I: Put after the error handlers is wrong");
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "I: Win_free did not set MPI_WIN_NULL");
    out("I Win_free: handle is MPI_WIN_NULL: %s", win == MPI_WIN_NULL ? "yes" : "no");
}

/* ------------------------------------------------------------------------ */
/* J. disp units, windows of size 0                                         */
/* ------------------------------------------------------------------------ */

static void disp_units_and_zero(void)
{
    phase("J disp units and size 0");
    const int me = g_me, n = g_n;
    const int dus[3] = {1, 4, 8};
    for (int k = 0; k < 2; k++) {
        int fl = k == 0 ? usable(F_MALLOC) : F_ALLOCATE;
        /* the last rank of several has a window of size 0 */
        int zero = n > 1 ? n - 1 : -1;
        size_t sz = me == zero ? 0 : 256;
        int du = dus[me % 3];
        rwin w;
        rw_create(&w, fl, sz, du, NULL, MPI_COMM_WORLD, MPI_INFO_NULL);
        if (sz)
            memset(w.base, 0, sz);
        char what[64];
        snprintf(what, sizeof what, "J %s", flav_name[fl]);
        attributes(what, &w, MPI_COMM_WORLD);
        MPI_OK(MPI_Win_fence(0, w.win));
        for (int t = 0; t < n; t++) {
            long long v = 1000 * me + t;
            if (t == zero) {
                /* zero elements to a window of size 0 */
                MPI_OK(MPI_Put(&v, 0, MPI_LONG_LONG, t, 0, 0, MPI_LONG_LONG, w.win));
                continue;
            }
            MPI_Aint d = (MPI_Aint)(8 * me) / dus[t % 3];
            MPI_OK(MPI_Put(&v, 1, MPI_LONG_LONG, t, d, 1, MPI_LONG_LONG, w.win));
            int add = me + 1;
            MPI_OK(MPI_Accumulate(&add, 1, MPI_INT, t, (MPI_Aint)(128 / dus[t % 3]), 1, MPI_INT,
                                  MPI_SUM, w.win));
        }
        MPI_OK(MPI_Win_fence(0, w.win));
        if (sz) {
            int ok = 1;
            for (int q = 0; q < n; q++) {
                long long v;
                memcpy(&v, w.base + 8 * q, 8);
                ok &= v == 1000 * q + me;
            }
            int s;
            memcpy(&s, w.base + 128, 4);
            ok &= s == n * (n + 1) / 2;
            CHECK(ok, "%s: disp_unit %d: the window is wrong", what, du);
            out("%s: disp_unit %d, window checksum %016llx", what, du,
                (unsigned long long)hash_bytes(0, w.base, sz));
        } else {
            out("%s: disp_unit %d, size 0", what, du);
        }
        /* Get with the target's disp_unit */
        long long g = -1;
        int t = (me + 1) % n;
        if (t != zero)
            MPI_OK(MPI_Get(&g, 1, MPI_LONG_LONG, t, (MPI_Aint)(8 * me) / dus[t % 3], 1,
                           MPI_LONG_LONG, w.win));
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
        if (t != zero)
            CHECK(g == 1000 * me + t, "%s: Get with disp_unit %d: %lld", what, dus[t % 3], g);
        rw_free(&w);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_n = size;
    g_big = size >= 4;
    g_trace = getenv("RMA_TRACE") != NULL;
    if (size > MAXN) {
        if (rank == 0)
            fprintf(stderr, "rma_basic: at most %d ranks\n", MAXN);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int fl = 0; fl < NFLAV; fl++)
        exercise(fl);
    if (!g_big) {
        sizes(F_ALLOCATE);
        sizes(usable(F_MALLOC));
        datatypes(usable(F_ALLOCMEM));
    }
    datatypes(F_ALLOCATE);
    accumulate_types();
    get_accumulate_types();
    fetch_and_op();
    compare_and_swap();
    sync_modes();
    shared_windows();
    dynamic_windows();
    if (!g_big)
        names_info_errhandlers();
    disp_units_and_zero();
    return coll_finish("rma", rank, size);
}

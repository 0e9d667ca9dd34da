/*
 * rma_sweep.c - one-sided conformance: every accumulate kernel over every
 * (operation x predefined type x layout x call x window flavour).
 *
 * Why: heapmpi applies accumulates on node-local windows itself (hardware
 * atomics for aligned 4- and 8-byte integers; otherwise under a lock, with
 * its own kernels or the real MPI_Reduce_local on packed data), and must
 * give what the stock MPI gives for every combination the MPI accepts, and
 * refuse with the stock MPI's error class every combination it refuses.
 * Two bugs got through the older, narrower tests (MAXLOC of
 * MPI_LONG_DOUBLE_INT through a vector datatype: packed pairs with padding
 * reduced as if they were laid out natively; Fetch_and_op of MPI_SUM on
 * MPI_CHAR refused though both stock MPIs perform it): this program sweeps
 * the whole space instead.
 *
 * The sweep:
 *  - window flavours: Win_create over MPI_Alloc_mem memory (disp_unit 1),
 *    Win_create over malloc memory (disp_unit 8), Win_allocate (disp_unit
 *    16), Win_allocate_shared (disp_unit 1); every window has
 *    MPI_ERRORS_RETURN;
 *  - calls: MPI_Accumulate, MPI_Get_accumulate, MPI_Raccumulate + Wait,
 *    MPI_Rget_accumulate + Wait, and MPI_Fetch_and_op (one-element layout
 *    only);
 *  - layouts (origin / target / result datatypes):
 *      one:      1 x T on every side;
 *      contig5:  5 x T on every side;
 *      vector:   vector(3, 2, 4, T) on every side (gaps of 2 elements that
 *                must stay untouched, in the window and in the result);
 *      contig>vector: 6 x T at the origin and the result, the vector at
 *                the target;
 *      derived2: derived types of derived types: the origin is 4 x
 *                resized(T, extent 2), the target and the result
 *                contiguous(2, resized(vector(2, 1, 2, T), extent 5));
 *  - types: every predefined type of the C header usable from C: the C
 *    integer types (MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR,
 *    MPI_WCHAR, short, int, long, long long and their unsigned forms, the
 *    fixed-width integers), MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_BYTE,
 *    MPI_C_BOOL, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, the C complex
 *    types, the Fortran types (MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION,
 *    MPI_LOGICAL, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_CHARACTER,
 *    MPI_INTEGER1/2/4/8, MPI_REAL4/8, MPI_COMPLEX8/16; not MPI_REAL16 and
 *    MPI_COMPLEX32, whose representation, x87 or IEEE quad, the C side
 *    cannot know) and every pair type (MPI_FLOAT_INT, MPI_DOUBLE_INT,
 *    MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
 *    MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION);
 *  - operations: MPI_MAX, MIN, SUM, PROD, LAND, LOR, LXOR, BAND, BOR, BXOR,
 *    MAXLOC, MINLOC, REPLACE, and MPI_NO_OP for the fetching calls;
 *  - synchronisation: one passive epoch (Win_lock_all) for every (call,
 *    layout); the same with Win_lock, shared or exclusive (alternating);
 *    and with fence (Accumulate, Get_accumulate and Fetch_and_op: the
 *    request-based calls are for passive target only).
 *
 * Batching: one window per flavour, one slot per (type, operation). Each
 * case (flavour, synchronisation, call, layout) fills the window, then
 * every rank issues all its (type, operation) calls to rank (rank+1)%size
 * in one epoch. One origin per slot, so every result is determined: the
 * values are small integers (and small dyadic reals and complex numbers)
 * so every result is exact; the pairs' values repeat often, and a tie must
 * resolve to the lower index.
 *
 * Which combinations are valid is not written here: the MPI decides. A
 * refused call prints its error class; a refused call must leave the
 * target and the result buffer as they were. For an accepted call the
 * program checks what it can compute itself: every combination the
 * standard defines (MPI-4.0 §6.9.2, REPLACE and NO_OP on every type), and
 * the natural extensions the MPIs accept (the integer operations on
 * MPI_CHAR, MPI_WCHAR, MPI_CHARACTER and on the Fortran integers; MAX, MIN,
 * the logical and the bitwise operations on 0/1 booleans and logicals; the
 * logical operations on the C floating types); every other accepted combination
 * is only printed (its checksum compared with the stock run). Everywhere,
 * the bytes of the slot outside the target's elements (the vector's gaps)
 * and of the result buffer outside the result's elements must be
 * untouched. A failed check names the case (flavour, synchronisation,
 * call, layout, type, operation, element, values) on stderr and the
 * program exits non-zero.
 *
 * Output (stdout, rank 0, rank order): one line per (flavour,
 * synchronisation, call, layout, type) and rank: a checksum of the rank's
 * window slots of that type (what its left neighbour did to them) and of
 * what it fetched from its right neighbour, over the data components only
 * (never padding: a long double's unused 6 bytes and the pairs' struct
 * padding are undefined), then the operations refused, by error class;
 * then "rank N: sweep ok". Exit status 0 on success, 1 on a failed check.
 *
 * How much runs (the whole program must take seconds, stock Open MPI's
 * accumulates on Win_create windows cost a few hundred microseconds each):
 * under lock_all on Win_allocate at 1 and 2 ranks, every layout for every
 * type, one epoch per (call, layout); everywhere else one epoch per (call)
 * in which every type takes one layout, rotating with the type, the
 * flavour, the synchronisation and the call, so that every type meets
 * several layouts on every flavour. On the Win_create flavours (where stock
 * Open MPI is slowest) each epoch takes half of the types, rotating. At 4
 * ranks (oversubscribed on two cores, where stock MPICH takes a
 * millisecond per fetching call) the lock and fence epochs run on
 * Win_allocate only, and each epoch takes a quarter of the types,
 * rotating.
 *
 * Stock bugs worked around (stock_bug() says exactly which combinations
 * are left out; a left-out call is printed as such, in both runs):
 *  - stock Open MPI 4.1.4 cannot create a window with Win_create on a
 *    communicator of one process (MPI_ERR_WIN): at 1 rank those flavours
 *    are left out there;
 *  - stock Open MPI 4.1.4: Fetch_and_op with an (operation, type) pair its
 *    other calls refuse crashes (SIGSEGV); MPI_MAX and MPI_MIN compare
 *    MPI_OFFSET as unsigned; on Win_create windows, MPI_LAND/LOR/LXOR on
 *    the 4- and 8-byte integers do nothing, MPI_SUM on the 8-byte complex
 *    types adds the bits as one integer, 5 contiguous pairs with padding
 *    move count x size bytes (the last pairs are left alone and the heap
 *    is corrupted), MPI_SHORT_INT through derived datatypes gives wrong
 *    pairs and Get_accumulate and Fetch_and_op of it fetch a garbage
 *    index, and Get_accumulate through a non-contiguous target
 *    datatype fetches garbage for the operations of its atomic path; on
 *    Win_allocate windows MAXLOC/MINLOC of MPI_SHORT_INT through a
 *    non-contiguous target datatype give wrong pairs;
 *  - stock MPICH 4.0.2 checks no (operation, type) pair in one-sided
 *    calls: the pairs it applies with its operation table and its
 *    MPI_Reduce_local refuses hang the epoch forever (154 pairs: MAXLOC on
 *    the integers, MAX on the complex types, BAND on MPI_DOUBLE, ...); it
 *    aborts on MPI_LAND/LOR of the C floating types and on MPI_2INT and
 *    MPI_2INTEGER with anything but MAXLOC/MINLOC; it does nothing with
 *    any reduction on MPI_WCHAR.
 *
 * For manual runs: SWEEP_FLAVOUR, SWEEP_SYNC ("lock" for both lock kinds),
 * SWEEP_CALL, SWEEP_LAYOUT, SWEEP_TYPE and SWEEP_OP restrict the sweep to
 * the cases of that name; SWEEP_ALLFAILS=1 reports every wrong element
 * (not three per line); RMA_TRACE=1 prints every case on stderr as it
 * starts.
 */
#define _GNU_SOURCE
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "coll_util.h"

static int g_me, g_n, g_big, g_trace;
static int g_allfails; /* SWEEP_ALLFAILS=1: report every wrong element, not 3 per line */

#include "sweep_types.h"

/* ------------------------------------------------------------------------ */
/* layouts                                                                  */
/* ------------------------------------------------------------------------ */

enum { L_ONE, L_CONTIG, L_VEC, L_CVEC, L_DD, NLAY };
static const char *const LNAME[NLAY] = {"one", "contig5", "vector", "contig>vector",
                                        "derived2"};
#define SPAN 10 /* elements a slot covers */
#define MAXE 6
static const int LN[NLAY] = {1, 5, 6, 6, 4};
/* element positions (in units of the type's extent), in type-map order */
static const int OPOS[NLAY][MAXE] = {
    {0}, {0, 1, 2, 3, 4}, {0, 1, 4, 5, 8, 9}, {0, 1, 2, 3, 4, 5}, {0, 2, 4, 6}};
static const int TPOS[NLAY][MAXE] = {
    {0}, {0, 1, 2, 3, 4}, {0, 1, 4, 5, 8, 9}, {0, 1, 4, 5, 8, 9}, {0, 2, 5, 7}};
static const int RPOS[NLAY][MAXE] = {
    {0}, {0, 1, 2, 3, 4}, {0, 1, 4, 5, 8, 9}, {0, 1, 2, 3, 4, 5}, {0, 2, 5, 7}};

/* Per type: vector(3, 2, 4, T); resized(T, extent 2); contiguous(2,
 * resized(vector(2, 1, 2, T), extent 5)). */
typedef struct {
    MPI_Datatype vec, res2, c2;
} dtypes;
static dtypes DT[NT];

static void make_types(void)
{
    for (int ti = 0; ti < NT; ti++) {
        MPI_Datatype t = TYPES[ti].dt, v2;
        MPI_Aint lb, ext;
        MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
        CHECK(lb == 0 && ext == TYPES[ti].size, "%s: lb %ld extent %ld, expected 0 and %d",
              TYPES[ti].name, (long)lb, (long)ext, TYPES[ti].size);
        MPI_OK(MPI_Type_vector(3, 2, 4, t, &DT[ti].vec));
        MPI_OK(MPI_Type_create_resized(t, 0, 2 * ext, &DT[ti].res2));
        MPI_OK(MPI_Type_vector(2, 1, 2, t, &v2));
        MPI_Datatype r5;
        MPI_OK(MPI_Type_create_resized(v2, 0, 5 * ext, &r5));
        MPI_OK(MPI_Type_contiguous(2, r5, &DT[ti].c2));
        MPI_OK(MPI_Type_free(&v2));
        MPI_OK(MPI_Type_free(&r5));
        MPI_OK(MPI_Type_commit(&DT[ti].vec));
        MPI_OK(MPI_Type_commit(&DT[ti].res2));
        MPI_OK(MPI_Type_commit(&DT[ti].c2));
    }
}

static void free_types(void)
{
    for (int ti = 0; ti < NT; ti++) {
        MPI_OK(MPI_Type_free(&DT[ti].vec));
        MPI_OK(MPI_Type_free(&DT[ti].res2));
        MPI_OK(MPI_Type_free(&DT[ti].c2));
    }
}

/* The (datatype, count) of a side: 0 origin, 1 target, 2 result. */
static void side(int ti, int lay, int which, MPI_Datatype *dt, int *count)
{
    MPI_Datatype t = TYPES[ti].dt;
    *dt = t;
    *count = 1;
    switch (lay) {
    case L_CONTIG: *count = 5; break;
    case L_VEC: *dt = DT[ti].vec; break;
    case L_CVEC:
        if (which == 1)
            *dt = DT[ti].vec;
        else
            *count = 6;
        break;
    case L_DD:
        if (which == 0) {
            *dt = DT[ti].res2;
            *count = 4;
        } else {
            *dt = DT[ti].c2;
        }
        break;
    }
}

/* ------------------------------------------------------------------------ */
/* windows                                                                  */
/* ------------------------------------------------------------------------ */

enum { F_ALLOCMEM, F_MALLOC, F_ALLOCATE, F_SHARED, NFLAV };
static const char *const FNAME[NFLAV] = {"create/Alloc_mem", "create/malloc", "allocate",
                                         "allocate_shared"};
static const int FDU[NFLAV] = {1, 8, 16, 1};

enum { S_LOCKALL, S_LOCK, S_FENCE, NSYNC };
enum { C_ACC, C_GACC, C_RACC, C_RGACC, C_FAO, NCALL };
static const char *const CNAME[NCALL] = {"Accumulate", "Get_accumulate", "Raccumulate",
                                         "Rget_accumulate", "Fetch_and_op"};
static int fetching(int c)
{
    return c == C_GACC || c == C_RGACC || c == C_FAO;
}

/* The slot of (type, op): SPAN elements, rounded up to 64 bytes. */
static size_t SLOT[NT], TOFF[NT], WBYTES;

static void make_slots(void)
{
    size_t off = 0;
    for (int ti = 0; ti < NT; ti++) {
        SLOT[ti] = ((size_t)(SPAN * TYPES[ti].size) + 63) / 64 * 64;
        TOFF[ti] = off;
        off += SLOT[ti] * NOPS;
    }
    WBYTES = off;
}

static size_t slot_off(int ti, int o)
{
    return TOFF[ti] + (size_t)o * SLOT[ti];
}

/* The filler of the bytes of slots and result buffers. */
static unsigned char fill_byte(uint64_t seed, size_t i)
{
    return (unsigned char)(mix64(seed, i) >> 17);
}

/* Whether the MPI's own MPI_Reduce_local accepts (type, op) (REPLACE and
 * NO_OP: not reduction operations, always 1): both stock MPIs fail at
 * some of the combinations their Reduce_local refuses, instead of refusing
 * them (see stock_bug). Reduce_local is not intercepted by heapmpi. */
static int g_rl_ok[NT][NOPS];

static void probe_reduce_local(void)
{
    for (int ti = 0; ti < NT; ti++)
        for (int o = 0; o < NOPS; o++) {
            g_rl_ok[ti][o] = 1;
            if (o == O_REPLACE || o == O_NOOP)
                continue;
#ifdef MPICH_VERSION
            /* its Reduce_local aborts on these (see stock_bug) */
            MPI_Datatype t = TYPES[ti].dt;
            if ((o == O_LAND || o == O_LOR) &&
                (t == MPI_FLOAT || t == MPI_DOUBLE || t == MPI_LONG_DOUBLE))
                continue;
#endif
            unsigned char a[2 * 32], b[2 * 32];
            memset(a, 0, sizeof a);
            memset(b, 0, sizeof b);
            g_rl_ok[ti][o] =
                MPI_Reduce_local(a, b, 2, TYPES[ti].dt, op_handle(o)) == MPI_SUCCESS;
        }
}

#ifdef MPICH_VERSION
/* Whether stock MPICH 4.0.2 applies (type, op) at the target with yaksa
 * (MPIR_Typerep_reduce_is_supported): not for MPI_MAXLOC and MPI_MINLOC,
 * the unsigned C types, MPI_DOUBLE, MPI_LONG_DOUBLE, the complex types,
 * and the logical operations on the C floating types. */
static int mpich_yaksa(const tdesc *d, int o)
{
    MPI_Datatype t = d->dt;
    if (o == O_MAXLOC || o == O_MINLOC)
        return 0;
    if ((d->kind == K_UINT && t != MPI_BYTE && t != MPI_CHARACTER) || d->kind == K_CPLX ||
        t == MPI_DOUBLE || t == MPI_LONG_DOUBLE)
        return 0;
    if ((o == O_LAND || o == O_LOR || o == O_LXOR) && t == MPI_FLOAT)
        return 0;
    return 1;
}
#endif

/* What stock gets wrong (or crashes on): NULL, or why the combination is
 * left out. */
static const char *stock_bug(int fl, int sync, int call, int lay, int ti, int o)
{
    (void)sync;
    const tdesc *d = &TYPES[ti];
    MPI_Datatype t = d->dt;
    int reduction = o != O_REPLACE && o != O_NOOP;
#ifdef MPICH_VERSION
    (void)fl;
    (void)call;
    (void)lay;
    /* Stock MPICH 4.0.2 accepts MPI_LAND and MPI_LOR on MPI_FLOAT,
     * MPI_DOUBLE and MPI_LONG_DOUBLE (MPI_LXOR too, which works), then the
     * target aborts when it applies them ("Assertion failed in file
     * src/mpi/coll/op/opland.c at line 60", oplor.c likewise): every call,
     * layout and flavour. */
    if ((o == O_LAND || o == O_LOR) &&
        (t == MPI_FLOAT || t == MPI_DOUBLE || t == MPI_LONG_DOUBLE))
        return "MPICH aborts";
    /* It checks no (operation, type) pair at the origin. At the target it
     * applies the operation with yaksa where yaksa takes it (mpich_yaksa),
     * otherwise with its operation table: there the pairs its
     * MPI_Reduce_local refuses raise an error nobody hears, the target
     * never answers, and the epoch never ends (MPI_MAXLOC on MPI_INT, MPI_MAX
     * on MPI_C_FLOAT_COMPLEX, MPI_BAND on MPI_DOUBLE, ...: 154 pairs, every
     * call, layout and flavour); and yaksa aborts on MPI_2INT and
     * MPI_2INTEGER with anything but MAXLOC and MINLOC ("yaksi_iunpack_
     * backend.c:73: unpack_backend: Assertion `0' failed"). */
    if (reduction && !mpich_yaksa(d, o) && !g_rl_ok[ti][o])
        return "MPICH hangs";
    if (reduction && mpich_yaksa(d, o) && (t == MPI_2INT || t == MPI_2INTEGER))
        return "MPICH aborts";
    /* yaksa takes every reduction on MPI_WCHAR and leaves the target as it
     * was (or nearly: MPI_SUM of 20 and 6 gives 20). */
    if (reduction && t == MPI_WCHAR)
        return "MPICH ignores the operation";
#else
    int create = fl == F_ALLOCMEM || fl == F_MALLOC;
    /* Stock Open MPI 4.1.4 checks no (operation, type) pair in
     * Fetch_and_op: those its MPI_Reduce_local refuses (refused by its
     * other calls) crash it (SIGSEGV, a call through a NULL pointer), on
     * every flavour. */
    if (call == C_FAO && reduction && !g_rl_ok[ti][o])
        return "Open MPI crashes";
    /* It compares MPI_OFFSET as unsigned in MPI_MAX and MPI_MIN (the
     * maximum of -26 and 37 is -26), every flavour. */
    if ((o == O_MAX || o == O_MIN) && t == MPI_OFFSET)
        return "Open MPI compares as unsigned";
    /* On windows of Win_create (osc/rdma): MPI_LAND, MPI_LOR and MPI_LXOR
     * on the 4- and 8-byte C integers leave the target as it was (and
     * Get_accumulate fetches zeros). */
    if (create && (o == O_LAND || o == O_LOR || o == O_LXOR) &&
        (d->kind == K_SINT || d->kind == K_UINT) && (d->size == 4 || d->size == 8) &&
        t != MPI_WCHAR && t != MPI_INTEGER && t != MPI_INTEGER4)
        return "Open MPI ignores the operation";
    /* There, MPI_SUM on the 8-byte complex types adds them as one 64-bit
     * integer. */
    if (create && o == O_SUM && d->kind == K_CPLX && d->size == 8)
        return "Open MPI adds the bits";
    /* There, 5 contiguous pairs with padding (MPI_DOUBLE_INT,
     * MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT) as origin and
     * target: count x size bytes move, not count x extent: the last pairs
     * are left as they were, and the heap is corrupted (glibc aborts later
     * in malloc). */
    if (create && d->kind == K_PAIR && d->vsz + d->isz < d->size && lay == L_CONTIG)
        return "Open MPI drops the padding";
    int gacc = call == C_GACC || call == C_RGACC || call == C_FAO;
    /* There, MPI_SHORT_INT (2 bytes of padding between value and index):
     * through any derived datatype the target gets wrong pairs, and
     * Get_accumulate and Fetch_and_op fetch the packed pair as if it were
     * laid out natively (the index is garbage), also of one element. */
    if (create && t == MPI_SHORT_INT && (lay != L_ONE || gacc))
        return "Open MPI mixes up the pairs";
    /* There, Get_accumulate with a non-contiguous target datatype fetches
     * zeros or garbage (the target is updated right) where the operation
     * goes through its atomic path: the 4- and 8-byte integers with
     * MPI_MAX, MIN, SUM, BAND, BOR, BXOR and REPLACE, and the other
     * 8-byte types (MPI_2INT, MPI_2INTEGER, MPI_FLOAT_INT, the 8-byte
     * complex types) with MPI_REPLACE. */
    int noncontig = lay == L_VEC || lay == L_CVEC || lay == L_DD;
    int atomic_int = (d->kind == K_SINT || d->kind == K_UINT) && (d->size == 4 || d->size == 8) &&
                     (o == O_MAX || o == O_MIN || o == O_SUM || o == O_BAND || o == O_BOR ||
                      o == O_BXOR || o == O_REPLACE);
    int atomic_8 = d->size == 8 && (d->kind == K_PAIR || d->kind == K_CPLX) && o == O_REPLACE;
    if (create && gacc && noncontig && (atomic_int || atomic_8))
        return "Open MPI fetches garbage";
    /* On windows of Win_allocate and Win_allocate_shared, MPI_MAXLOC and
     * MPI_MINLOC on MPI_SHORT_INT through a non-contiguous target datatype
     * give wrong pairs. */
    if (!create && noncontig && t == MPI_SHORT_INT && (o == O_MAXLOC || o == O_MINLOC))
        return "Open MPI reduces the pairs wrong";
#endif
    return NULL;
}

/* Sentinel result of a call left out (stock_bug). */
#define RC_LEFT_OUT (-1)

typedef struct {
    int fl, sync, call, lockexcl;
    int lay[NT]; /* the layout of each type in this epoch; -1: not in it */
} scase;

static uint64_t case_seed(const scase *c, int ti)
{
    return seed6((uint64_t)c->fl, (uint64_t)c->sync, (uint64_t)c->call, (uint64_t)c->lay[ti],
                 (uint64_t)ti, 77);
}

/* Origin element k of (type, op) of rank r; initial target element k. */
static num origin_val(const scase *c, int ti, int o, int r, int k)
{
    return gen(&TYPES[ti], o, mix64(mix64(case_seed(c, ti), (uint64_t)o * 131 + 1),
                                    (uint64_t)r * 1000 + (uint64_t)k));
}
static num target_val(const scase *c, int ti, int o, int r, int k)
{
    return gen(&TYPES[ti], o, mix64(mix64(case_seed(c, ti), (uint64_t)o * 131 + 2),
                                    (uint64_t)r * 1000 + (uint64_t)k));
}
static uint64_t slot_seed(const scase *c, int ti, int o, int r, int what)
{
    return mix64(mix64(case_seed(c, ti), (uint64_t)o * 131 + 3 + (uint64_t)what), (uint64_t)r);
}

/* Manual runs: SWEEP_FLAVOUR, SWEEP_SYNC, SWEEP_CALL, SWEEP_LAYOUT,
 * SWEEP_TYPE, SWEEP_OP restrict the sweep to the cases whose name is the
 * variable's value (e.g. SWEEP_TYPE=MPI_INT SWEEP_OP=SUM), for finding
 * which combination misbehaves. */
static const char *g_only[6];
enum { ONLY_FLAVOUR, ONLY_SYNC, ONLY_CALL, ONLY_LAYOUT, ONLY_TYPE, ONLY_OP };
static int only(int which, const char *name)
{
    return g_only[which] == NULL || strcmp(g_only[which], name) == 0;
}

/* Whether op o is issued with call c at all. */
static int op_in_call(int c, int o)
{
    return (o != O_NOOP || fetching(c)) && only(ONLY_OP, ONAME[o]);
}

static const char *short_class(int rc)
{
    if (rc == RC_LEFT_OUT)
        return "left out (stock bug)";
#define RMA_CLASS(x)                                                    \
    if (rc == MPI_ERR_##x)                                              \
        return #x;
    RMA_CLASS(WIN)
    RMA_CLASS(BASE)
    RMA_CLASS(SIZE)
    RMA_CLASS(DISP)
    RMA_CLASS(LOCKTYPE)
    RMA_CLASS(ASSERT)
    RMA_CLASS(RMA_CONFLICT)
    RMA_CLASS(RMA_SYNC)
    RMA_CLASS(RMA_RANGE)
    RMA_CLASS(RMA_ATTACH)
    RMA_CLASS(RMA_SHARED)
    RMA_CLASS(RMA_FLAVOR)
    RMA_CLASS(UNSUPPORTED_OPERATION)
#undef RMA_CLASS
    const char *s = err_class_name(rc);
    return strncmp(s, "MPI_ERR_", 8) == 0 ? s + 8 : s;
}

/* Is element position e (in extents) one of the layout's positions? */
static int in_pos(const int *pos, int n, int e)
{
    for (int k = 0; k < n; k++)
        if (pos[k] == e)
            return 1;
    return 0;
}

static const char *sync_name(const scase *c)
{
    if (c->sync == S_LOCKALL)
        return "lock_all";
    if (c->sync == S_FENCE)
        return "fence";
    return c->lockexcl ? "lock exclusive" : "lock shared";
}

/* ------------------------------------------------------------------------ */
/* one case                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
    MPI_Win win;
    unsigned char *base;
    int fl;
} swin;

static unsigned char *g_obuf, *g_rbuf, *g_wimg, *g_rimg;

static void run_case(swin *w, const scase *c)
{
    const int me = g_me, n = g_n, right = (me + 1) % n, left = (me + n - 1) % n;
    const tdesc *T = TYPES;
    char cname[160];
    snprintf(cname, sizeof cname, "%s %s %s", FNAME[c->fl], sync_name(c), CNAME[c->call]);
    section(cname);
    if (g_trace)
        fprintf(stderr, "rank %d: %s\n", me, cname);
    const int du = FDU[c->fl];
    if (!only(ONLY_SYNC, sync_name(c)) && !only(ONLY_SYNC, c->sync == S_LOCK ? "lock" : "-"))
        return;
    if (!only(ONLY_CALL, CNAME[c->call]))
        return;

    /* fill: my window (target of my left neighbour), my origin and result
     * buffers */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, w->win));
    for (int ti = 0; ti < NT; ti++) {
        int lay = c->lay[ti];
        if (lay < 0)
            continue;
        for (int o = 0; o < NOPS; o++) {
            size_t off = slot_off(ti, o);
            uint64_t sw = slot_seed(c, ti, o, me, 0), sr = slot_seed(c, ti, o, me, 1),
                     so = slot_seed(c, ti, o, me, 2);
            for (size_t i = 0; i < SLOT[ti]; i++) {
                w->base[off + i] = fill_byte(sw, i);
                g_rbuf[off + i] = fill_byte(sr, i);
                g_obuf[off + i] = fill_byte(so, i);
            }
            for (int k = 0; k < LN[lay]; k++) {
                store(&T[ti], w->base + off + (size_t)TPOS[lay][k] * T[ti].size,
                      target_val(c, ti, o, me, k));
                store(&T[ti], g_obuf + off + (size_t)OPOS[lay][k] * T[ti].size,
                      origin_val(c, ti, o, me, k));
            }
            memcpy(g_wimg + off, w->base + off, SLOT[ti]);
            memcpy(g_rimg + off, g_rbuf + off, SLOT[ti]);
        }
    }
    MPI_OK(MPI_Win_unlock(me, w->win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* the epoch */
    static int rc[NT][NOPS], trc[NT][NOPS];
    switch (c->sync) {
    case S_LOCKALL: MPI_OK(MPI_Win_lock_all(0, w->win)); break;
    case S_LOCK:
        MPI_OK(MPI_Win_lock(c->lockexcl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, right, 0,
                            w->win));
        break;
    case S_FENCE: MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win)); break;
    }
    for (int ti = 0; ti < NT; ti++) {
        int lay = c->lay[ti];
        MPI_Request rq[NOPS];
        for (int o = 0; o < NOPS; o++) {
            rq[o] = MPI_REQUEST_NULL;
            rc[ti][o] = MPI_SUCCESS;
            if (lay < 0 || !op_in_call(c->call, o))
                continue;
            if (stock_bug(c->fl, c->sync, c->call, lay, ti, o) != NULL) {
                rc[ti][o] = RC_LEFT_OUT;
                continue;
            }
            MPI_Datatype odt, tdt, rdt;
            int ocnt, tcnt, rcnt;
            side(ti, lay, 0, &odt, &ocnt);
            side(ti, lay, 1, &tdt, &tcnt);
            side(ti, lay, 2, &rdt, &rcnt);
            size_t off = slot_off(ti, o);
            void *ob = g_obuf + off, *rb = g_rbuf + off;
            MPI_Aint disp = (MPI_Aint)(off / (size_t)du);
            MPI_Op op = op_handle(o);
            int r = MPI_SUCCESS;
            switch (c->call) {
            case C_ACC:
                r = MPI_Accumulate(ob, ocnt, odt, right, disp, tcnt, tdt, op, w->win);
                break;
            case C_GACC:
                r = MPI_Get_accumulate(ob, ocnt, odt, rb, rcnt, rdt, right, disp, tcnt, tdt, op,
                                       w->win);
                break;
            case C_RACC:
                r = MPI_Raccumulate(ob, ocnt, odt, right, disp, tcnt, tdt, op, w->win, &rq[o]);
                break;
            case C_RGACC:
                r = MPI_Rget_accumulate(ob, ocnt, odt, rb, rcnt, rdt, right, disp, tcnt, tdt, op,
                                        w->win, &rq[o]);
                break;
            case C_FAO:
                r = MPI_Fetch_and_op(ob, rb, T[ti].dt, right, disp, op, w->win);
                break;
            }
            rc[ti][o] = r == MPI_SUCCESS ? MPI_SUCCESS : err_class(r);
            if (r != MPI_SUCCESS)
                rq[o] = MPI_REQUEST_NULL;
        }
        for (int o = 0; o < NOPS; o++)
            if (rq[o] != MPI_REQUEST_NULL) {
                MPI_OK(MPI_Wait(&rq[o], MPI_STATUS_IGNORE));
                CHECK(rq[o] == MPI_REQUEST_NULL, "%s: Wait did not free the request", cname);
            }
    }
    switch (c->sync) {
    case S_LOCKALL: MPI_OK(MPI_Win_unlock_all(w->win)); break;
    case S_LOCK: MPI_OK(MPI_Win_unlock(right, w->win)); break;
    case S_FENCE: MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win)); break;
    }
    /* what the left neighbour's calls returned */
    MPI_OK(MPI_Sendrecv(rc, NT * NOPS, MPI_INT, right, 7, trc, NT * NOPS, MPI_INT, left, 7,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* check my window and what I fetched */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w->win));
    for (int ti = 0; ti < NT; ti++) {
        int lay = c->lay[ti];
        if (lay < 0)
            continue;
        const tdesc *d = &T[ti];
        const int es = d->size;
        uint64_t ht = 0, hf = 0;
        int bad = 0;
        char what[256];
        for (int o = 0; o < NOPS; o++) {
            size_t off = slot_off(ti, o);
            const unsigned char *tw = w->base + off, *tr = g_rbuf + off;
            snprintf(what, sizeof what, "%s %s %s %s %s %s (origin rank %d, target rank %d)",
                     FNAME[c->fl], sync_name(c), CNAME[c->call], LNAME[lay], d->name, ONAME[o],
                     left, me);
            int issued = op_in_call(c->call, o);
            /* my window: slots written by my left neighbour */
            if (!issued || trc[ti][o] != MPI_SUCCESS) {
                if (memcmp(tw, g_wimg + off, SLOT[ti]) != 0 && (bad++ < 3 || g_allfails))
                    CHECK(0, "%s: %s call changed the target", what,
                          issued ? "a refused" : "no");
            } else {
                for (int e = 0; e < SPAN; e++)
                    if (!in_pos(TPOS[lay], LN[lay], e) &&
                        memcmp(tw + e * es, g_wimg + off + (size_t)e * es, (size_t)es) != 0 &&
                        (bad++ < 3 || g_allfails))
                        CHECK(0, "%s: target element %d (a gap) changed", what, e);
                for (size_t b = (size_t)SPAN * es; b < SLOT[ti]; b++)
                    if (tw[b] != g_wimg[off + b] && (bad++ < 3 || g_allfails)) {
                        CHECK(0, "%s: target byte %zu (after the span) changed", what, b);
                        break;
                    }
                if (checkable(d, o))
                    for (int k = 0; k < LN[lay]; k++) {
                        num got = load(d, tw + (size_t)TPOS[lay][k] * es);
                        num want = apply(d, o, origin_val(c, ti, o, left, k),
                                         target_val(c, ti, o, me, k));
                        if (!num_eq(got, want) && (bad++ < 3 || g_allfails)) {
                            char gs[64], ws[64], os[64], is[64];
                            show(gs, sizeof gs, d, got);
                            show(ws, sizeof ws, d, want);
                            show(os, sizeof os, d, origin_val(c, ti, o, left, k));
                            show(is, sizeof is, d, target_val(c, ti, o, me, k));
                            CHECK(0, "%s: target element %d is %s, expected %s (origin %s, "
                                     "target was %s)", what, k, gs, ws, os, is);
                        }
                    }
            }
            for (int k = 0; k < LN[lay]; k++)
                ht = hash_elem(ht, d, tw + (size_t)TPOS[lay][k] * es);
            /* what I fetched from my right neighbour */
            if (!fetching(c->call) || !issued)
                continue;
            snprintf(what, sizeof what, "%s %s %s %s %s %s (origin rank %d, target rank %d)",
                     FNAME[c->fl], sync_name(c), CNAME[c->call], LNAME[lay], d->name, ONAME[o],
                     me, right);
            int rlay = c->call == C_FAO ? L_ONE : lay;
            if (rc[ti][o] != MPI_SUCCESS) {
                if (memcmp(tr, g_rimg + off, SLOT[ti]) != 0 && (bad++ < 3 || g_allfails))
                    CHECK(0, "%s: a refused call wrote the result buffer", what);
                continue;
            }
            for (int e = 0; e < SPAN; e++)
                if (!in_pos(RPOS[rlay], LN[rlay], e) &&
                    memcmp(tr + e * es, g_rimg + off + (size_t)e * es, (size_t)es) != 0 &&
                    (bad++ < 3 || g_allfails))
                    CHECK(0, "%s: result element %d (a gap) changed", what, e);
            for (int k = 0; k < LN[rlay]; k++) {
                const unsigned char *p = tr + (size_t)RPOS[rlay][k] * es;
                num got = load(d, p), want = target_val(c, ti, o, right, k);
                if (!num_eq(got, want) && (bad++ < 3 || g_allfails)) {
                    char gs[64], ws[64];
                    show(gs, sizeof gs, d, got);
                    show(ws, sizeof ws, d, want);
                    CHECK(0, "%s: fetched element %d is %s, expected %s", what, k, gs, ws);
                }
                hf = hash_elem(hf, d, p);
            }
        }
        /* the line: checksums, then the refused operations by class */
        char line[768];
        int len = snprintf(line, sizeof line, "%s %s %s %s %s: target %016llx", FNAME[c->fl],
                           sync_name(c), CNAME[c->call], LNAME[lay], d->name,
                           (unsigned long long)ht);
        if (fetching(c->call))
            len += snprintf(line + len, sizeof line - (size_t)len, ", fetched %016llx",
                            (unsigned long long)hf);
        int done[NOPS] = {0};
        for (int o = 0; o < NOPS; o++) {
            if (done[o] || !op_in_call(c->call, o) || rc[ti][o] == MPI_SUCCESS)
                continue;
            len += snprintf(line + len, sizeof line - (size_t)len, "; %s:",
                            short_class(rc[ti][o]));
            for (int q = o; q < NOPS; q++)
                if (!done[q] && op_in_call(c->call, q) && rc[ti][q] == rc[ti][o]) {
                    done[q] = 1;
                    len += snprintf(line + len, sizeof line - (size_t)len, " %s", ONAME[q]);
                }
        }
        out("%s", line);
    }
    MPI_OK(MPI_Win_unlock(me, w->win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ------------------------------------------------------------------------ */
/* the sweep                                                                */
/* ------------------------------------------------------------------------ */

/* Stock Open MPI 4.1.4 cannot create a window with Win_create on a
 * communicator of one process (MPI_ERR_WIN). */
static int flavour_works(int fl)
{
#ifdef OPEN_MPI
    return !(g_n == 1 && (fl == F_ALLOCMEM || fl == F_MALLOC));
#else
    (void)fl;
    return 1;
#endif
}

static void sweep_flavour(int fl)
{
    char what[96];
    snprintf(what, sizeof what, "window %s", FNAME[fl]);
    section(what);
    if (!only(ONLY_FLAVOUR, FNAME[fl]))
        return;
    if (!flavour_works(fl)) {
        out("%s: left out (stock Open MPI cannot create it on one process)", FNAME[fl]);
        return;
    }
    swin w = {MPI_WIN_NULL, NULL, fl};
    void *p = NULL;
    switch (fl) {
    case F_ALLOCMEM:
        MPI_OK(MPI_Alloc_mem((MPI_Aint)WBYTES, MPI_INFO_NULL, &p));
        w.base = p;
        MPI_OK(MPI_Win_create(p, (MPI_Aint)WBYTES, FDU[fl], MPI_INFO_NULL, MPI_COMM_WORLD,
                              &w.win));
        break;
    case F_MALLOC:
        w.base = must(malloc(WBYTES), "malloc", WBYTES);
        MPI_OK(MPI_Win_create(w.base, (MPI_Aint)WBYTES, FDU[fl], MPI_INFO_NULL,
                              MPI_COMM_WORLD, &w.win));
        break;
    case F_ALLOCATE:
        MPI_OK(MPI_Win_allocate((MPI_Aint)WBYTES, FDU[fl], MPI_INFO_NULL, MPI_COMM_WORLD, &p,
                                &w.win));
        w.base = p;
        break;
    case F_SHARED:
        MPI_OK(MPI_Win_allocate_shared((MPI_Aint)WBYTES, FDU[fl], MPI_INFO_NULL,
                                       MPI_COMM_WORLD, &p, &w.win));
        w.base = p;
        break;
    }
    MPI_OK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
    for (int sync = 0; sync < NSYNC; sync++)
        for (int call = 0; call < NCALL; call++) {
            if (sync == S_FENCE && (call == C_RACC || call == C_RGACC))
                continue; /* request-based calls: passive target only */
            /* at 4 ranks, the lock and fence epochs on Win_allocate only */
            if (g_big && sync != S_LOCKALL && fl != F_ALLOCATE)
                continue;
            /* every layout for every type: Win_allocate, lock_all, at 1 and
             * 2 ranks; otherwise one epoch in which each type takes one
             * layout, rotating */
            int rotate = g_big || sync != S_LOCKALL || fl != F_ALLOCATE;
            int nl = call == C_FAO || rotate ? 1 : NLAY;
            for (int l = 0; l < nl; l++) {
                scase c;
                c.fl = fl;
                c.sync = sync;
                c.call = call;
                c.lockexcl = (fl + call + l) % 2;
                for (int ti = 0; ti < NT; ti++) {
                    c.lay[ti] = call == C_FAO ? L_ONE
                                : rotate      ? (ti + fl + sync + call) % NLAY
                                              : l;
                    if (!only(ONLY_TYPE, TYPES[ti].name) || !only(ONLY_LAYOUT, LNAME[c.lay[ti]]))
                        c.lay[ti] = -1;
                    /* at 4 ranks a quarter of the types per epoch, on the
                     * Win_create flavours half of them, rotating */
                    if (g_big && (ti + fl + sync + call) % 4 != 0)
                        c.lay[ti] = -1;
                    if ((fl == F_ALLOCMEM || fl == F_MALLOC) && (ti + fl + sync + call) % 2 != 0)
                        c.lay[ti] = -1;
                }
                run_case(&w, &c);
            }
        }
    MPI_OK(MPI_Win_free(&w.win));
    if (fl == F_ALLOCMEM)
        MPI_OK(MPI_Free_mem(w.base));
    else if (fl == F_MALLOC)
        free(w.base);
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_n = size;
    g_big = size > 2;
    g_trace = getenv("RMA_TRACE") != NULL;
    g_allfails = getenv("SWEEP_ALLFAILS") != NULL;
    static const char *const ONLY_VARS[6] = {"SWEEP_FLAVOUR", "SWEEP_SYNC", "SWEEP_CALL",
                                             "SWEEP_LAYOUT",  "SWEEP_TYPE", "SWEEP_OP"};
    for (int i = 0; i < 6; i++)
        g_only[i] = getenv(ONLY_VARS[i]);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    make_types();
    probe_reduce_local();
    make_slots();
    g_obuf = must(malloc(WBYTES), "malloc", WBYTES);
    g_rbuf = must(malloc(WBYTES), "malloc", WBYTES);
    g_wimg = must(malloc(WBYTES), "malloc", WBYTES);
    g_rimg = must(malloc(WBYTES), "malloc", WBYTES);
    for (int fl = 0; fl < NFLAV; fl++)
        sweep_flavour(fl);
    free(g_obuf);
    free(g_rbuf);
    free(g_wimg);
    free(g_rimg);
    free_types();
    return coll_finish("sweep", rank, size);
}

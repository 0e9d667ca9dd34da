/*
 * coll_sweep.c - collective conformance: every reduction kernel over every
 * (operation x predefined type x layout x collective).
 *
 * Why: heapmpi folds the contributions of a node-local communicator's
 * members itself (src/coll, src/op.rs: its own kernels for some pairs, the
 * real MPI_Reduce_local for the others) and hands what it does not take to
 * the real MPI. Whatever the path, a reduction must give what the stock MPI
 * gives for every (operation, type) the MPI accepts, contiguous or through
 * a derived datatype, and must be refused with the stock MPI's error class
 * where the MPI refuses it. coll_reduce covers the standard's table on
 * contiguous data; this program sweeps every predefined type the C header
 * has against every predefined reduction operation, and derived layouts,
 * letting the MPI decide which are valid.
 *
 * The sweep:
 *  - collectives: MPI_Reduce (the root rotating with the type and the
 *    layout), MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Scan,
 *    MPI_Exscan, on a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN;
 *  - layouts: count 1; count 5 with MPI_IN_PLACE (at the root of Reduce;
 *    everywhere for the others); count 1000; 2 x vector(3, 2, 4, T) (gaps
 *    of 2 elements, which must stay untouched in the receive buffer); 1 x
 *    contiguous(2, vector(2, 1, 2, T)) (a derived type of a derived type);
 *  - types: the C integer types (MPI_CHAR, MPI_SIGNED_CHAR,
 *    MPI_UNSIGNED_CHAR, MPI_WCHAR, short, int, long, long long and their
 *    unsigned forms, the fixed-width integers), MPI_AINT, MPI_OFFSET,
 *    MPI_COUNT, MPI_BYTE, MPI_C_BOOL, MPI_FLOAT, MPI_DOUBLE,
 *    MPI_LONG_DOUBLE, the C complex types, the Fortran types usable from C
 *    (MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_LOGICAL,
 *    MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_CHARACTER, MPI_INTEGER1/2/4/8,
 *    MPI_REAL4/8, MPI_COMPLEX8/16) and every pair type (MPI_FLOAT_INT,
 *    MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
 *    MPI_LONG_DOUBLE_INT, MPI_2INTEGER, MPI_2REAL,
 *    MPI_2DOUBLE_PRECISION);
 *  - operations: MPI_MAX, MIN, SUM, PROD, LAND, LOR, LXOR, BAND, BOR, BXOR,
 *    MAXLOC, MINLOC (MPI_REPLACE and MPI_NO_OP are not reduction
 *    operations; coll_errors covers them).
 *
 * The values are small integers (small dyadic reals and complex numbers,
 * 0/1 logicals; pairs with few values, many ties, which must resolve to the
 * lowest index) so that every result is exact whatever the order of
 * combination. Every rank passes the same (type, operation), so either
 * every rank's call is refused or none is. A refused call prints its error
 * class and must leave the receive buffer alone. For an accepted call the
 * program checks every result element it can compute itself (the
 * standard's table, the integer operations on MPI_CHAR, MPI_WCHAR,
 * MPI_CHARACTER and the Fortran integers, MAX, MIN, the logical and the
 * bitwise operations on 0/1 booleans and logicals, the logical operations
 * on the C floating types) against the rank-order reference computed locally,
 * and for every accepted call that the receive buffer's bytes outside the
 * result elements (gaps, and guard elements after the result) are
 * untouched and the send buffer unchanged.
 *
 * Output (stdout, rank 0, rank order): one line per (collective, layout,
 * type) and rank: a checksum of this rank's results of that type (every
 * operation, data components only: never a long double's 6 unused bytes
 * or a pair's padding), then the refused operations by error class; then
 * "rank N: csweep ok". Exit status 0 on success, 1 on a failed check.
 *
 * At 4 ranks (oversubscribed on two cores, where stock MPICH takes
 * milliseconds per collective) every type runs one (collective, layout),
 * rotating with the type; at 1 and 2 ranks every combination runs.
 *
 * Stock bugs worked around (stock_bug() says exactly which combinations
 * are left out; a left-out call is printed as such, in both runs): stock
 * MPICH 4.0.2 accepts MPI_LAND and MPI_LOR on MPI_FLOAT, MPI_DOUBLE and
 * MPI_LONG_DOUBLE and aborts when it combines two values; stock Open MPI
 * 4.1.4 compares MPI_OFFSET as unsigned in MPI_MAX and MPI_MIN.
 * (Both MPIs refuse every predefined operation on a derived datatype with
 * MPI_ERR_OP; MPICH applies MPI_LAND, LOR and LXOR to the Fortran reals as
 * to logicals, outside the standard: printed, not checked.)
 * For manual runs: CSWEEP_COLL, CSWEEP_LAYOUT, CSWEEP_TYPE, CSWEEP_OP
 * restrict the sweep to the cases of that name; COLL_TRACE=1 prints every
 * call on stderr before it is made.
 */
#define _GNU_SOURCE
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "coll_util.h"

static int g_me, g_n, g_big, g_trace;

#include "sweep_types.h"

/* ------------------------------------------------------------------------ */
/* layouts                                                                  */
/* ------------------------------------------------------------------------ */

enum { L_ONE, L_FIVE, L_THOUSAND, L_VEC, L_CV, NLAY };
static const char *const LNAME[NLAY] = {"count 1", "count 5 in place", "count 1000",
                                        "2 x vector", "contig(vector)"};
static const int LCOUNT[NLAY] = {1, 5, 1000, 2, 1};
/* per unit of the datatype: its span and its elements' positions (in
 * extents of the type), in type-map order */
static const int USPAN[NLAY] = {1, 1, 1, 10, 6};
static const int UN[NLAY] = {1, 1, 1, 6, 4};
static const int UPOS[NLAY][6] = {{0}, {0}, {0}, {0, 1, 4, 5, 8, 9}, {0, 2, 3, 5}};

/* Per type: vector(3, 2, 4, T) and contiguous(2, vector(2, 1, 2, T)). */
static MPI_Datatype DVEC[NT], DCV[NT];

static void make_types(void)
{
    for (int ti = 0; ti < NT; ti++) {
        MPI_Datatype t = TYPES[ti].dt, v2;
        MPI_Aint lb, ext;
        MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
        CHECK(lb == 0 && ext == TYPES[ti].size, "%s: lb %ld extent %ld, expected 0 and %d",
              TYPES[ti].name, (long)lb, (long)ext, TYPES[ti].size);
        MPI_OK(MPI_Type_vector(3, 2, 4, t, &DVEC[ti]));
        MPI_OK(MPI_Type_vector(2, 1, 2, t, &v2));
        MPI_OK(MPI_Type_contiguous(2, v2, &DCV[ti]));
        MPI_OK(MPI_Type_free(&v2));
        MPI_OK(MPI_Type_commit(&DVEC[ti]));
        MPI_OK(MPI_Type_commit(&DCV[ti]));
    }
}

static void free_types(void)
{
    for (int ti = 0; ti < NT; ti++) {
        MPI_OK(MPI_Type_free(&DVEC[ti]));
        MPI_OK(MPI_Type_free(&DCV[ti]));
    }
}

static MPI_Datatype layout_type(int ti, int lay)
{
    return lay == L_VEC ? DVEC[ti] : lay == L_CV ? DCV[ti] : TYPES[ti].dt;
}

/* ------------------------------------------------------------------------ */
/* collectives                                                              */
/* ------------------------------------------------------------------------ */

enum { C_REDUCE, C_ALLREDUCE, C_RSB, C_SCAN, C_EXSCAN, NCOLL };
static const char *const CNAME[NCOLL] = {"Reduce", "Allreduce", "Reduce_scatter_block",
                                         "Scan", "Exscan"};
#define NROP 12 /* MAX .. MINLOC */

/* What stock gets wrong (or crashes on): NULL, or why the combination is
 * left out. */
static const char *stock_bug(int coll, int lay, int ti, int o)
{
    (void)coll;
    (void)lay;
    MPI_Datatype t = TYPES[ti].dt;
#ifdef MPICH_VERSION
    /* Stock MPICH 4.0.2 accepts MPI_LAND and MPI_LOR on MPI_FLOAT,
     * MPI_DOUBLE and MPI_LONG_DOUBLE, then aborts when it combines two
     * values ("Assertion failed in file src/mpi/coll/op/opland.c at line
     * 60", oplor.c likewise). */
    if ((o == O_LAND || o == O_LOR) &&
        (t == MPI_FLOAT || t == MPI_DOUBLE || t == MPI_LONG_DOUBLE))
        return "MPICH aborts";
#else
    /* Stock Open MPI 4.1.4 compares MPI_OFFSET as unsigned in MPI_MAX and
     * MPI_MIN (the maximum of -46 and 32 is -46). */
    if ((o == O_MAX || o == O_MIN) && t == MPI_OFFSET)
        return "Open MPI compares as unsigned";
#endif
    return NULL;
}
#define RC_LEFT_OUT (-1)

static const char *g_only[4];
enum { ONLY_COLL, ONLY_LAYOUT, ONLY_TYPE, ONLY_OP };
static int only(int which, const char *name)
{
    return g_only[which] == NULL || strcmp(g_only[which], name) == 0;
}

static const char *short_class(int rc)
{
    if (rc == RC_LEFT_OUT)
        return "left out (stock bug)";
    const char *s = err_class_name(rc);
    return strncmp(s, "MPI_ERR_", 8) == 0 ? s + 8 : s;
}

static num input(uint64_t seed, const tdesc *d, int o, int r, size_t j)
{
    return gen(d, o, mix64(seed, (uint64_t)r * 1000003u + j));
}

#define GUARD_UNITS 2

/* One (collective, layout, type): every operation. Returns nothing; prints
 * the line. */
static void run_one(MPI_Comm comm, int coll, int lay, int ti)
{
    const int me = g_me, n = g_n;
    const tdesc *d = &TYPES[ti];
    const size_t es = (size_t)d->size;
    const int c = LCOUNT[lay];
    const size_t ubytes = (size_t)USPAN[lay] * es;
    const int inplace = lay == L_FIVE;
    const int root = (ti + lay + coll) % n;
    MPI_Datatype dt = layout_type(ti, lay);
    /* units of input per rank; the result: units [r0, r0 + rn) */
    size_t nin = (size_t)c, r0 = 0, rn = (size_t)c;
    if (coll == C_RSB) {
        nin = (size_t)c * (size_t)n;
        r0 = (size_t)c * (size_t)me;
    }
    const int has = !(coll == C_REDUCE && me != root) && !(coll == C_EXSCAN && me == 0);
    /* in place: the input is in the receive buffer (Reduce: at the root) */
    const int really_inplace = inplace && !(coll == C_REDUCE && me != root);
    size_t rcap = (really_inplace ? nin : rn) + GUARD_UNITS;
    unsigned char *sb = must(malloc(nin * ubytes), "malloc", nin * ubytes);
    unsigned char *sb0 = must(malloc(nin * ubytes), "malloc", nin * ubytes);
    unsigned char *rb = must(malloc(rcap * ubytes), "malloc", rcap * ubytes);
    unsigned char *rb0 = must(malloc(rcap * ubytes), "malloc", rcap * ubytes);
    uint64_t h = 0;
    int rcs[NROP];
    int bad = 0;
    for (int o = 0; o < NROP; o++) {
        rcs[o] = MPI_SUCCESS;
        if (!only(ONLY_OP, ONAME[o]))
            continue;
        char what[256];
        if (coll == C_REDUCE)
            snprintf(what, sizeof what, "%s root %d, %s, %s, %s", CNAME[coll], root,
                     LNAME[lay], d->name, ONAME[o]);
        else
            snprintf(what, sizeof what, "%s, %s, %s, %s", CNAME[coll], LNAME[lay], d->name,
                     ONAME[o]);
        if (stock_bug(coll, lay, ti, o) != NULL) {
            rcs[o] = RC_LEFT_OUT;
            continue;
        }
        uint64_t seed = seed6((uint64_t)ti, (uint64_t)o, (uint64_t)coll, (uint64_t)lay, 5, 9);
        /* fill: bytes from a pattern, then the elements */
        unsigned char *in = really_inplace ? rb : sb;
        uint32_t x = (uint32_t)seed | 1;
        for (size_t b = 0; b < nin * ubytes; b++)
            sb[b] = (unsigned char)((x = x * 1664525u + 1013904223u) >> 24);
        for (size_t b = 0; b < rcap * ubytes; b++)
            rb[b] = (unsigned char)((x = x * 1664525u + 1013904223u) >> 24);
        for (size_t u = 0; u < nin; u++)
            for (int k = 0; k < UN[lay]; k++)
                store(d, in + u * ubytes + (size_t)UPOS[lay][k] * es,
                      input(seed, d, o, me, u * (size_t)UN[lay] + (size_t)k));
        memcpy(sb0, sb, nin * ubytes);
        memcpy(rb0, rb, rcap * ubytes);
        void *S = really_inplace ? MPI_IN_PLACE : (void *)sb;
        MPI_Op op = op_handle(o);
        if (g_trace)
            fprintf(stderr, "rank %d: %s\n", me, what);
        int r = MPI_SUCCESS;
        switch (coll) {
        case C_REDUCE: r = MPI_Reduce(S, rb, c, dt, op, root, comm); break;
        case C_ALLREDUCE: r = MPI_Allreduce(S, rb, c, dt, op, comm); break;
        case C_RSB: r = MPI_Reduce_scatter_block(S, rb, c, dt, op, comm); break;
        case C_SCAN: r = MPI_Scan(S, rb, c, dt, op, comm); break;
        case C_EXSCAN: r = MPI_Exscan(S, rb, c, dt, op, comm); break;
        }
        rcs[o] = r == MPI_SUCCESS ? MPI_SUCCESS : err_class(r);
        if (r != MPI_SUCCESS) {
            if ((memcmp(rb, rb0, rcap * ubytes) != 0 || memcmp(sb, sb0, nin * ubytes) != 0) &&
                bad++ < 3)
                CHECK(0, "%s: a refused call changed the buffers", what);
            continue;
        }
        if (!really_inplace && memcmp(sb, sb0, nin * ubytes) != 0 && bad++ < 3)
            CHECK(0, "%s: the send buffer changed", what);
        if (!has)
            continue;
        /* the result: units [0, rn) of rb hold input units [r0, r0 + rn) */
        int last = coll == C_SCAN ? me : coll == C_EXSCAN ? me - 1 : n - 1;
        for (size_t u = 0; u < rn; u++)
            for (int k = 0; k < UN[lay]; k++) {
                size_t j = (r0 + u) * (size_t)UN[lay] + (size_t)k;
                const unsigned char *p = rb + u * ubytes + (size_t)UPOS[lay][k] * es;
                h = hash_elem(h, d, p);
                if (!checkable(d, o))
                    continue;
                num want = input(seed, d, o, 0, j);
                for (int q = 1; q <= last; q++)
                    want = apply(d, o, input(seed, d, o, q, j), want);
                num got = load(d, p);
                if (!num_eq(got, want) && bad++ < 3) {
                    char gs[64], ws[64];
                    show(gs, sizeof gs, d, got);
                    show(ws, sizeof ws, d, want);
                    CHECK(0, "%s: result element %zu is %s, expected %s", what, j, gs, ws);
                }
            }
        /* gaps and guards: every element position of the receive buffer
         * that is not a result element */
        size_t from = really_inplace ? nin : rn;
        for (size_t u = 0; u < rcap; u++)
            for (int e = 0; e < USPAN[lay]; e++) {
                int res = 0;
                if (u < rn)
                    for (int k = 0; k < UN[lay]; k++)
                        res |= UPOS[lay][k] == e;
                if (really_inplace && u >= rn && u < from)
                    res = 1; /* in place: the other inputs (undefined after) */
                size_t off = u * ubytes + (size_t)e * es;
                if (!res && memcmp(rb + off, rb0 + off, es) != 0 && bad++ < 3)
                    CHECK(0, "%s: receive buffer element %d of unit %zu (not a result) changed",
                          what, e, u);
            }
    }
    free(sb);
    free(sb0);
    free(rb);
    free(rb0);
    char line[512];
    int len = snprintf(line, sizeof line, "%s", CNAME[coll]);
    if (coll == C_REDUCE)
        len += snprintf(line + len, sizeof line - (size_t)len, " root %d", root);
    len += snprintf(line + len, sizeof line - (size_t)len, ", %s, %s: ", LNAME[lay], d->name);
    if (has)
        len += snprintf(line + len, sizeof line - (size_t)len, "results %016llx",
                        (unsigned long long)h);
    else
        len += snprintf(line + len, sizeof line - (size_t)len, "no result here");
    int done[NROP] = {0};
    for (int o = 0; o < NROP; o++) {
        if (done[o] || rcs[o] == MPI_SUCCESS)
            continue;
        len += snprintf(line + len, sizeof line - (size_t)len, "; %s:", short_class(rcs[o]));
        for (int q = o; q < NROP; q++)
            if (!done[q] && rcs[q] == rcs[o]) {
                done[q] = 1;
                len += snprintf(line + len, sizeof line - (size_t)len, " %s", ONAME[q]);
            }
    }
    out("%s", line);
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_n = size;
    g_big = size > 2;
    g_trace = getenv("COLL_TRACE") != NULL;
    static const char *const ONLY_VARS[4] = {"CSWEEP_COLL", "CSWEEP_LAYOUT", "CSWEEP_TYPE",
                                             "CSWEEP_OP"};
    for (int i = 0; i < 4; i++)
        g_only[i] = getenv(ONLY_VARS[i]);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    make_types();
    for (int coll = 0; coll < NCOLL; coll++) {
        if (!only(ONLY_COLL, CNAME[coll]))
            continue;
        section(CNAME[coll]);
        for (int lay = 0; lay < NLAY; lay++) {
            if (!only(ONLY_LAYOUT, LNAME[lay]))
                continue;
            for (int ti = 0; ti < NT; ti++) {
                if (!only(ONLY_TYPE, TYPES[ti].name))
                    continue;
                /* 4 ranks: each type in one (collective, layout) */
                if (g_big && (ti * 7 + coll * NLAY + lay) % (NCOLL * NLAY) != 0)
                    continue;
                run_one(comm, coll, lay, ti);
            }
        }
    }
    free_types();
    MPI_OK(MPI_Comm_free(&comm));
    return coll_finish("csweep", rank, size);
}

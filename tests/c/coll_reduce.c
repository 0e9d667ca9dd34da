/*
 * coll_reduce.c - collective conformance: the reductions.
 *
 * Why: heapmpi folds the contributions of a node-local communicator's
 * members itself (inline in their cells, or split among the members for
 * large counts), with its own kernels for every predefined operation and
 * datatype, and calls user-defined operations itself. It must give what MPI
 * says for every (operation, type) pair, keep rank order for
 * non-commutative operations, give every member the same bits, honour
 * MPI_IN_PLACE, write nothing outside the result, and leave send buffers
 * alone. Reduce_scatter_block, Reduce_scatter, Scan and Exscan may run
 * through heapmpi or through the real MPI; either way they must behave as
 * stock.
 *
 * Sections:
 *  A. exact data: every predefined operation on every C type it applies to
 *     (MAX/MIN/SUM/PROD on the integer types, MPI_AINT and the floating
 *     types; LAND/LOR/LXOR on the integer types and MPI_C_BOOL;
 *     BAND/BOR/BXOR on the integer types and MPI_BYTE; SUM/PROD on the C
 *     complex types; MAXLOC/MINLOC on MPI_DOUBLE_INT, MPI_2INT,
 *     MPI_FLOAT_INT, MPI_LONG_INT and MPI_SHORT_INT, with many ties and
 *     indices unrelated to the ranks, so that a tie must resolve to the
 *     lowest index); the same on the Fortran and multi-language types
 *     (MPI_INTEGER[1248], MPI_OFFSET, MPI_COUNT without the logical
 *     operations, MPI_REAL[48], MPI_DOUBLE_PRECISION, MPI_COMPLEX,
 *     MPI_DOUBLE_COMPLEX, MPI_LOGICAL, MPI_2INTEGER, MPI_2REAL,
 *     MPI_2DOUBLE_PRECISION); and four user-defined operations: two commutative ones
 *     (sum modulo a prime on MPI_INT, and on ints each followed by a hole:
 *     MPI_INT resized to an extent of 8; the function must get the caller's
 *     layout and the holes of the result must not change) and two
 *     non-commutative ones on derived contiguous types (2x2 integer matrix
 *     product modulo a prime on 4 ints; concatenation of hex digits on 2
 *     uint64, which records the order in which the ranks' contributions
 *     were combined)
 *     x Reduce (rotating root), Allreduce, Reduce_scatter_block,
 *     Reduce_scatter (uneven counts, some zero), Scan, Exscan
 *     x counts 0, 1, 7, 1000 x normal / MPI_IN_PLACE x buffers from malloc
 *     or static arrays (outside heapmpi's heap; the kind differs between
 *     the ranks of one call). The input values are
 *     chosen so that every result is exact whatever the order of
 *     combination (small integers; floating-point values with few
 *     significant bits; no overflow), so the results must equal the
 *     rank-order reference computed locally bit for bit. At 1 and 2 ranks
 *     every combination runs; at 4 ranks (oversubscribed on two cores,
 *     where stock MPICH takes 5 to 20 ms per collective) one case per
 *     (operation, type), rotating through the collectives, counts and
 *     forms.
 *  B. large counts for a few operations (integer and floating sums,
 *     MAXLOC, BXOR on bytes, PROD on floats, the matrix user operation):
 *     5000 elements on every collective (on a third of them at 4 ranks) and
 *     300000 on one collective per operation (at 4 ranks: only the
 *     Allreduce of doubles).
 *  C. inexact data (values in [0.5, 1.5)): SUM and PROD on float, double
 *     and long double, counts 7 and 1000, Allreduce (every member must hold
 *     the same bits: compared through an Allgather of a hash as MPI_BYTE),
 *     Reduce, Reduce_scatter_block, Scan: within a relative 1e-5 (float),
 *     1e-12 (double), 1e-15 (long double) of the rank-order reference. The
 *     lines print the reference (computed locally, so the same under any
 *     MPI) rounded to 6 significant digits, and the verdict.
 *
 * Everywhere: the elements of the receive buffer after the result (guard
 * elements) must be unchanged, and so must the send buffer; non-roots of
 * Reduce pass a NULL receive buffer every other time; the user functions
 * check that they get the datatype of the call.
 *
 * Output (stdout, rank 0, rank order): per rank and (operation, type), the
 * number of cases and a checksum of all its results; one line per case of
 * sections B and C; then "rank N: reduce ok". Exit status 0 on success, 1
 * on a failed check.
 */
#define _GNU_SOURCE
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_util.h"

/* ------------------------------------------------------------------ */
/* operations and element types                                         */
/* ------------------------------------------------------------------ */

enum {
    O_MAX,
    O_MIN,
    O_SUM,
    O_PROD,
    O_LAND,
    O_LOR,
    O_LXOR,
    O_BAND,
    O_BOR,
    O_BXOR,
    O_MAXLOC,
    O_MINLOC,
    O_USER, /* the type's own user-defined operation */
    NOPS
};
static const char *ONAME[NOPS] = {"MAX",  "MIN",  "SUM",  "PROD",   "LAND",   "LOR", "LXOR",
                                  "BAND", "BOR",  "BXOR", "MAXLOC", "MINLOC", "user"};
static MPI_Op g_mpi_op[NOPS];

/* exact data, or values in [0.5, 1.5) */
enum { EXACT, INEXACT };

typedef struct tdesc {
    const char *name;
    MPI_Datatype dt;
    size_t size;
    /* writes one element for operation op from the hash h */
    void (*gen)(void *p, int op, int mode, uint64_t h);
    /* io = in op io (one element), MPI's order: in is the lower ranks' */
    void (*apply)(int op, const void *in, void *io);
    /* the meaningful bytes are equal */
    int (*eq)(const void *a, const void *b);
    /* |got - ref| <= tol |ref| (floating types) */
    int (*near)(const void *got, const void *ref);
    /* folds the meaningful bytes into h */
    uint64_t (*hash)(uint64_t h, const void *p);
    /* the value, for the output (floating types) */
    void (*show)(char *s, size_t n, const void *p);
    const char *user_name; /* of the type's user operation */
} tdesc;

static uint64_t hash_mem(uint64_t h, const void *p, size_t n)
{
    return hash_bytes(h, p, n);
}

/* ---- integer types ---- */

#define INT_TYPE(NAME, T, SIGNED, TOPCLEAR)                                             \
    static void gen_##NAME(void *p, int op, int mode, uint64_t h)               \
    {                                                                           \
        (void)mode;                                                             \
        T v;                                                                    \
        switch (op) {                                                           \
        case O_SUM:                                                             \
            v = SIGNED ? (T)((int)(h % 61) - 30) : (T)(h % 61);                 \
            break;                                                              \
        case O_PROD: {                                                          \
            int m = 1 + (int)(h % 3);                                           \
            if ((h >> 8) % 8 == 0)                                              \
                m = 0;                                                          \
            if (SIGNED && ((h >> 16) & 1))                                      \
                m = -m;                                                         \
            v = (T)m;                                                           \
            break;                                                              \
        }                                                                       \
        case O_LAND:                                                            \
        case O_LOR:                                                             \
        case O_LXOR:                                                            \
            v = (T)(h % 3);                                                     \
            break;                                                              \
        default:                                                                \
            v = (T)h;                                                           \
            if (TOPCLEAR)                                                       \
                v = (T)(v & (T) ~((T)1 << (8 * sizeof(T) - 1)));                \
            break;                                                              \
        }                                                                       \
        memcpy(p, &v, sizeof v);                                                \
    }                                                                           \
    static void apply_##NAME(int op, const void *in, void *io)                  \
    {                                                                           \
        T a, b, r = 0;                                                          \
        memcpy(&a, in, sizeof a);                                               \
        memcpy(&b, io, sizeof b);                                               \
        switch (op) {                                                           \
        case O_MAX:                                                             \
            r = a > b ? a : b;                                                  \
            break;                                                              \
        case O_MIN:                                                             \
            r = a < b ? a : b;                                                  \
            break;                                                              \
        case O_SUM:                                                             \
            r = (T)(a + b);                                                     \
            break;                                                              \
        case O_PROD:                                                            \
            r = (T)(a * b);                                                     \
            break;                                                              \
        case O_LAND:                                                            \
            r = (T)(a && b);                                                    \
            break;                                                              \
        case O_LOR:                                                             \
            r = (T)(a || b);                                                    \
            break;                                                              \
        case O_LXOR:                                                            \
            r = (T)(!a != !b);                                                  \
            break;                                                              \
        case O_BAND:                                                            \
            r = (T)(a & b);                                                     \
            break;                                                              \
        case O_BOR:                                                             \
            r = (T)(a | b);                                                     \
            break;                                                              \
        case O_BXOR:                                                            \
            r = (T)(a ^ b);                                                     \
            break;                                                              \
        }                                                                       \
        memcpy(io, &r, sizeof r);                                               \
    }                                                                           \
    static int eq_##NAME(const void *a, const void *b)                          \
    {                                                                           \
        return memcmp(a, b, sizeof(T)) == 0;                                    \
    }                                                                           \
    static uint64_t hash_##NAME(uint64_t h, const void *p)                      \
    {                                                                           \
        return hash_mem(h, p, sizeof(T));                                       \
    }

/* MAX / MIN values of unsigned types keep their top bit clear where the
 * stock MPI compares them as signed: Open MPI 4.1.4 does so for
 * MPI_UNSIGNED_LONG (0x8000000000000000 < 1), MPICH 4.0.2 for every
 * unsigned type (MPI_MAX of the unsigned chars 200 and 1 gives 1). */
#ifdef OPEN_MPI
#define ULONG_TOP 1
#define UNSIGNED_TOP 0
#else
#define ULONG_TOP 1
#define UNSIGNED_TOP 1
#endif

/* Stock Intel MPI 2021.18 on an Intel CPU (not on an AMD one) writes the
 * holes of the result of a Reduce with a user-defined operation on
 * MPI_INT resized to an extent of 8, at root 0, counts 1 and 1000:
 * there the holes are not checked. */
#ifdef I_MPI_VERSION
#define STOCK_REDUCE_WRITES_HOLES 1
#else
#define STOCK_REDUCE_WRITES_HOLES 0
#endif
#define ALL 0
INT_TYPE(int, int, 1, ALL)
INT_TYPE(long, long, 1, ALL)
INT_TYPE(llong, long long, 1, ALL)
INT_TYPE(short, short, 1, ALL)
INT_TYPE(ushort, unsigned short, 0, UNSIGNED_TOP)
INT_TYPE(uint, unsigned, 0, UNSIGNED_TOP)
INT_TYPE(ulong, unsigned long, 0, ULONG_TOP)
INT_TYPE(ullong, unsigned long long, 0, UNSIGNED_TOP)
INT_TYPE(schar, signed char, 1, ALL)
INT_TYPE(uchar, unsigned char, 0, UNSIGNED_TOP)
INT_TYPE(i8, int8_t, 1, ALL)
INT_TYPE(u16, uint16_t, 0, UNSIGNED_TOP)
INT_TYPE(i32, int32_t, 1, ALL)
INT_TYPE(u64, uint64_t, 0, UNSIGNED_TOP)
INT_TYPE(aint, MPI_Aint, 1, ALL)
/* Open MPI 4.1.4 compares MPI_OFFSET as unsigned in MPI_MAX / MPI_MIN. */
INT_TYPE(offs, MPI_Offset, 1, 1)
INT_TYPE(byte, unsigned char, 0, ALL)

#define INT_DESC(NAME, MPIT, T)                                                   \
    {#MPIT, MPIT, sizeof(T), gen_##NAME, apply_##NAME, eq_##NAME, NULL, hash_##NAME, \
     NULL, NULL}

/* ---- C_BOOL ---- */

static void gen_bool(void *p, int op, int mode, uint64_t h)
{
    (void)op;
    (void)mode;
    bool v = (h >> 5) & 1;
    memcpy(p, &v, sizeof v);
}
static void apply_bool(int op, const void *in, void *io)
{
    bool a, b, r = 0;
    memcpy(&a, in, sizeof a);
    memcpy(&b, io, sizeof b);
    if (op == O_LAND)
        r = a && b;
    else if (op == O_LOR)
        r = a || b;
    else
        r = a != b;
    memcpy(io, &r, sizeof r);
}
static int eq_bool(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(bool)) == 0;
}
static uint64_t hash_bool(uint64_t h, const void *p)
{
    return hash_mem(h, p, sizeof(bool));
}

/* ---- floating types ---- */

/* products of four of these are exact in float */
static const double PROD_VALUES[12] = {0.5, -0.5, 1, -1, 1.5, -1.5, 2, -2, 3, -3, 0.25, 0.75};

/* meaningful bytes of a long double (x87 extended: 10 of 16) */
#define LD_BYTES 10

#define FLT_TYPE(NAME, T, TOL, NBYTES, FMT)                                     \
    static void gen_##NAME(void *p, int op, int mode, uint64_t h)               \
    {                                                                           \
        T v;                                                                    \
        if (mode == INEXACT)                                                    \
            v = (T)0.5 + (T)(h >> 11) * (T)0x1p-53;                             \
        else if (op == O_SUM)                                                   \
            v = (T)((int)(h % 161) - 80) / 4;                                   \
        else if (op == O_PROD)                                                  \
            v = (T)PROD_VALUES[h % 12];                                         \
        else                                                                    \
            v = (T)((double)(int32_t)h / 1024.0);                               \
        memset(p, 0, sizeof v);                                                 \
        memcpy(p, &v, NBYTES);                                                  \
    }                                                                           \
    static void apply_##NAME(int op, const void *in, void *io)                  \
    {                                                                           \
        T a, b, r = 0;                                                          \
        memcpy(&a, in, sizeof a);                                               \
        memcpy(&b, io, sizeof b);                                               \
        switch (op) {                                                           \
        case O_MAX:                                                             \
            r = a > b ? a : b;                                                  \
            break;                                                              \
        case O_MIN:                                                             \
            r = a < b ? a : b;                                                  \
            break;                                                              \
        case O_SUM:                                                             \
            r = a + b;                                                          \
            break;                                                              \
        case O_PROD:                                                            \
            r = a * b;                                                          \
            break;                                                              \
        }                                                                       \
        memcpy(io, &r, NBYTES);                                                 \
    }                                                                           \
    static int eq_##NAME(const void *a, const void *b)                          \
    {                                                                           \
        return memcmp(a, b, NBYTES) == 0;                                       \
    }                                                                           \
    static int near_##NAME(const void *got, const void *ref)                    \
    {                                                                           \
        T g, r;                                                                 \
        memcpy(&g, got, sizeof g);                                              \
        memcpy(&r, ref, sizeof r);                                              \
        T d = g - r;                                                            \
        if (d < 0)                                                              \
            d = -d;                                                             \
        T m = r < 0 ? -r : r;                                                   \
        return d <= (T)(TOL) * m;                                               \
    }                                                                           \
    static uint64_t hash_##NAME(uint64_t h, const void *p)                      \
    {                                                                           \
        return hash_mem(h, p, NBYTES);                                          \
    }                                                                           \
    static void show_##NAME(char *s, size_t n, const void *p)                   \
    {                                                                           \
        T v;                                                                    \
        memcpy(&v, p, sizeof v);                                                \
        snprintf(s, n, FMT, v);                                                 \
    }

FLT_TYPE(float, float, 1e-5, sizeof(float), "%.6g")
FLT_TYPE(double, double, 1e-12, sizeof(double), "%.6g")
FLT_TYPE(ldouble, long double, 1e-15L, LD_BYTES, "%.6Lg")

#define FLT_DESC(NAME, MPIT, T)                                                  \
    {#MPIT, MPIT, sizeof(T), gen_##NAME, apply_##NAME, eq_##NAME, near_##NAME,   \
     hash_##NAME, show_##NAME, NULL}

/* ---- complex types ---- */

#define CPLX_TYPE(NAME, T, R, NBYTES)                                           \
    static void gen_##NAME(void *p, int op, int mode, uint64_t h)               \
    {                                                                           \
        R re, im;                                                               \
        if (mode == INEXACT) {                                                  \
            re = (R)0.5 + (R)(h >> 40) * (R)0x1p-24;                            \
            im = (R)0.5 + (R)((h >> 8) & 0xffffff) * (R)0x1p-24;                \
        } else if (op == O_SUM) {                                               \
            re = (R)((int)(h % 161) - 80) / 4;                                  \
            im = (R)((int)((h >> 16) % 161) - 80) / 4;                          \
        } else {                                                                \
            static const R V[8] = {0, 0.5, -0.5, 1, -1, 2, -2, 1.5};            \
            re = V[h % 8];                                                      \
            im = V[(h >> 8) % 8];                                               \
        }                                                                       \
        memset(p, 0, sizeof(T));                                                \
        memcpy(p, &re, NBYTES);                                                 \
        memcpy((char *)p + sizeof(R), &im, NBYTES);                             \
    }                                                                           \
    static void apply_##NAME(int op, const void *in, void *io)                  \
    {                                                                           \
        R a[2], b[2], r[2];                                                     \
        memcpy(a, in, sizeof a);                                                \
        memcpy(b, io, sizeof b);                                                \
        if (op == O_SUM) {                                                      \
            r[0] = a[0] + b[0];                                                 \
            r[1] = a[1] + b[1];                                                 \
        } else {                                                                \
            r[0] = a[0] * b[0] - a[1] * b[1];                                   \
            r[1] = a[0] * b[1] + a[1] * b[0];                                   \
        }                                                                       \
        memcpy(io, &r[0], NBYTES);                                              \
        memcpy((char *)io + sizeof(R), &r[1], NBYTES);                          \
    }                                                                           \
    /* A zero part of a product may come out as +0 or -0 depending on the   \
     * order of the factors: compared and hashed as +0 (x + 0 is +0 for     \
     * x = -0). */                                                          \
    static void parts_##NAME(const void *p, R *re, R *im)                      \
    {                                                                           \
        R v[2] = {0, 0};                                                        \
        memcpy(&v[0], p, NBYTES);                                               \
        memcpy(&v[1], (const char *)p + sizeof(R), NBYTES);                     \
        *re = v[0] + (R)0;                                                      \
        *im = v[1] + (R)0;                                                      \
    }                                                                           \
    static int eq_##NAME(const void *a, const void *b)                          \
    {                                                                           \
        R ar, ai, br, bi;                                                       \
        parts_##NAME(a, &ar, &ai);                                              \
        parts_##NAME(b, &br, &bi);                                              \
        return memcmp(&ar, &br, NBYTES) == 0 && memcmp(&ai, &bi, NBYTES) == 0;  \
    }                                                                           \
    static uint64_t hash_##NAME(uint64_t h, const void *p)                      \
    {                                                                           \
        R re, im;                                                               \
        parts_##NAME(p, &re, &im);                                              \
        h = hash_mem(h, &re, NBYTES);                                           \
        return hash_mem(h, &im, NBYTES);                                        \
    }

CPLX_TYPE(cfloat, float _Complex, float, sizeof(float))
CPLX_TYPE(cdouble, double _Complex, double, sizeof(double))
CPLX_TYPE(cldouble, long double _Complex, long double, LD_BYTES)

#define CPLX_DESC(NAME, MPIT, T)                                                  \
    {#MPIT, MPIT, sizeof(T), gen_##NAME, apply_##NAME, eq_##NAME, NULL, hash_##NAME, \
     NULL, NULL}

/* ---- value-index pairs ---- */

#define PAIR_TYPE(NAME, VT) PAIR_TYPE_I(NAME, VT, int)
#define PAIR_TYPE_I(NAME, VT, IT)                                               \
    typedef struct {                                                            \
        VT v;                                                                   \
        IT i;                                                                   \
    } NAME##_t;                                                                 \
    static void gen_##NAME(void *p, int op, int mode, uint64_t h)               \
    {                                                                           \
        (void)op;                                                               \
        (void)mode;                                                             \
        NAME##_t x;                                                             \
        memset(&x, 0, sizeof x);                                                \
        x.v = (VT)(h % 4) - (VT)1; /* few values: many ties */                  \
        x.i = (IT)((int)((h >> 8) % 13) - 2);                                   \
        memcpy(p, &x, sizeof x);                                                \
    }                                                                           \
    static void apply_##NAME(int op, const void *in, void *io)                  \
    {                                                                           \
        NAME##_t a, b;                                                          \
        memcpy(&a, in, sizeof a);                                               \
        memcpy(&b, io, sizeof b);                                               \
        int a_wins = op == O_MAXLOC ? a.v > b.v : a.v < b.v;                    \
        if (a_wins)                                                             \
            b = a;                                                              \
        else if (a.v == b.v && a.i < b.i)                                       \
            b.i = a.i;                                                          \
        memcpy(io, &b, sizeof b);                                               \
    }                                                                           \
    static int eq_##NAME(const void *a, const void *b)                          \
    {                                                                           \
        NAME##_t x, y;                                                          \
        memcpy(&x, a, sizeof x);                                                \
        memcpy(&y, b, sizeof y);                                                \
        return x.v == y.v && x.i == y.i;                                        \
    }                                                                           \
    static uint64_t hash_##NAME(uint64_t h, const void *p)                      \
    {                                                                           \
        NAME##_t x;                                                             \
        memcpy(&x, p, sizeof x);                                                \
        h = hash_mem(h, &x.v, sizeof x.v);                                      \
        return hash_mem(h, &x.i, sizeof x.i);                                   \
    }

PAIR_TYPE(double_int, double)
PAIR_TYPE(two_int, int)
PAIR_TYPE(float_int, float)
PAIR_TYPE(long_int, long)
PAIR_TYPE(short_int, short)
PAIR_TYPE_I(two_real, float, float)
PAIR_TYPE_I(two_dprec, double, double)

/* ---- Fortran LOGICAL (gfortran: a 4-byte integer, .TRUE. is 1) ---- */

static void gen_flog(void *p, int op, int mode, uint64_t h)
{
    (void)op;
    (void)mode;
    int v = (h >> 7) & 1;
    memcpy(p, &v, sizeof v);
}

#define PAIR_DESC(NAME, MPIT)                                                     \
    {#MPIT, MPIT, sizeof(NAME##_t), gen_##NAME, apply_##NAME, eq_##NAME, NULL,    \
     hash_##NAME, NULL, NULL}

/* ---- user-defined operations ---- */

#define PRIME 65521

/* Commutative: sum modulo PRIME on MPI_INT. */
static void gen_umod(void *p, int op, int mode, uint64_t h)
{
    (void)op;
    (void)mode;
    int v = (int)(h % PRIME);
    memcpy(p, &v, sizeof v);
}
static void apply_umod(int op, const void *in, void *io)
{
    (void)op;
    int a, b;
    memcpy(&a, in, sizeof a);
    memcpy(&b, io, sizeof b);
    b = (a + b) % PRIME;
    memcpy(io, &b, sizeof b);
}

/* Non-commutative: 2x2 matrices modulo PRIME, row-major, io = in x io. */
static void gen_umat(void *p, int op, int mode, uint64_t h)
{
    (void)op;
    (void)mode;
    int m[4];
    for (int i = 0; i < 4; i++)
        m[i] = (int)(mix64(h, (uint64_t)i) % PRIME);
    memcpy(p, m, sizeof m);
}
static void apply_umat(int op, const void *in, void *io)
{
    (void)op;
    int a[4], b[4], r[4];
    memcpy(a, in, sizeof a);
    memcpy(b, io, sizeof b);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            r[2 * i + j] = (int)(((int64_t)a[2 * i] * b[j] + (int64_t)a[2 * i + 1] * b[2 + j]) %
                                 PRIME);
    memcpy(io, r, sizeof r);
}

/* Non-commutative: (digits, length) pairs of hex digits, concatenated:
 * io = in followed by io. The result spells the ranks' digits in the order
 * the operation combined them. */
static void gen_ucat(void *p, int op, int mode, uint64_t h)
{
    (void)op;
    (void)mode;
    uint64_t x[2] = {h % 16, 1};
    memcpy(p, x, sizeof x);
}
static void apply_ucat(int op, const void *in, void *io)
{
    (void)op;
    uint64_t a[2], b[2], r[2];
    memcpy(a, in, sizeof a);
    memcpy(b, io, sizeof b);
    r[0] = b[1] >= 16 ? b[0] : (a[0] << (4 * b[1])) | b[0];
    r[1] = a[1] + b[1];
    memcpy(io, r, sizeof r);
}
static int eq_16(const void *a, const void *b)
{
    return memcmp(a, b, 16) == 0;
}
static uint64_t hash_16(uint64_t h, const void *p)
{
    return hash_mem(h, p, 16);
}

/* Commutative, on a type with holes: sum modulo PRIME of ints each followed
 * by a 4-byte hole (MPI_INT resized to an extent of 8). The function must
 * be given the caller's layout; the holes of the result must stay as they
 * were. */
static void gen_uhole(void *p, int op, int mode, uint64_t h)
{
    (void)op;
    (void)mode;
    int v = (int)(h % PRIME);
    memcpy(p, &v, sizeof v); /* bytes 4..7: left as they are */
}
static int eq_uhole(const void *a, const void *b)
{
    return memcmp(a, b, 4) == 0;
}
static uint64_t hash_uhole(uint64_t h, const void *p)
{
    return hash_mem(h, p, 4);
}

static MPI_Datatype T_MAT, T_CAT; /* contiguous 4 x MPI_INT, 2 x MPI_UINT64_T */
static MPI_Datatype T_HOLE;       /* MPI_INT resized to extent 8 */

/* The MPI callbacks: check the datatype, then apply element by element. */
static void user_check(MPI_Datatype *dt, MPI_Datatype want, int *len, const char *what)
{
    CHECK(*dt == want, "user operation %s called with another datatype", what);
    CHECK(*len >= 0, "user operation %s called with count %d", what, *len);
}
static void fn_umod(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_check(dt, MPI_INT, len, "sum mod p");
    for (int i = 0; i < *len; i++)
        apply_umod(O_USER, (char *)in + 4 * i, (char *)io + 4 * i);
}
static void fn_umat(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_check(dt, T_MAT, len, "matrix product");
    for (int i = 0; i < *len; i++)
        apply_umat(O_USER, (char *)in + 16 * i, (char *)io + 16 * i);
}
static void fn_uhole(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_check(dt, T_HOLE, len, "sum mod p on ints with holes");
    for (int i = 0; i < *len; i++)
        apply_umod(O_USER, (char *)in + 8 * i, (char *)io + 8 * i);
}
static void fn_ucat(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_check(dt, T_CAT, len, "concatenation");
    for (int i = 0; i < *len; i++)
        apply_ucat(O_USER, (char *)in + 16 * i, (char *)io + 16 * i);
}
static MPI_Op OP_UMOD, OP_UMAT, OP_UCAT, OP_UHOLE;

/* ------------------------------------------------------------------ */
/* the combinations                                                     */
/* ------------------------------------------------------------------ */

static tdesc TD_INT[] = {
    INT_DESC(int, MPI_INT, int),
    INT_DESC(long, MPI_LONG, long),
    INT_DESC(llong, MPI_LONG_LONG, long long),
    INT_DESC(short, MPI_SHORT, short),
    INT_DESC(ushort, MPI_UNSIGNED_SHORT, unsigned short),
    INT_DESC(uint, MPI_UNSIGNED, unsigned),
    INT_DESC(ulong, MPI_UNSIGNED_LONG, unsigned long),
    INT_DESC(ullong, MPI_UNSIGNED_LONG_LONG, unsigned long long),
    INT_DESC(schar, MPI_SIGNED_CHAR, signed char),
    INT_DESC(uchar, MPI_UNSIGNED_CHAR, unsigned char),
    INT_DESC(i8, MPI_INT8_T, int8_t),
    INT_DESC(u16, MPI_UINT16_T, uint16_t),
    INT_DESC(i32, MPI_INT32_T, int32_t),
    INT_DESC(u64, MPI_UINT64_T, uint64_t),
    INT_DESC(aint, MPI_AINT, MPI_Aint),
};
#define N_INT ((int)(sizeof TD_INT / sizeof TD_INT[0]))
static tdesc TD_BYTE = INT_DESC(byte, MPI_BYTE, unsigned char);
static tdesc TD_BOOL = {"MPI_C_BOOL", MPI_C_BOOL, sizeof(bool), gen_bool, apply_bool,
                        eq_bool, NULL, hash_bool, NULL, NULL};
static tdesc TD_FLT[] = {
    FLT_DESC(float, MPI_FLOAT, float),
    FLT_DESC(double, MPI_DOUBLE, double),
    FLT_DESC(ldouble, MPI_LONG_DOUBLE, long double),
};
static tdesc TD_CPLX[] = {
    CPLX_DESC(cfloat, MPI_C_FLOAT_COMPLEX, float _Complex),
    CPLX_DESC(cdouble, MPI_C_DOUBLE_COMPLEX, double _Complex),
    CPLX_DESC(cldouble, MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
};
static tdesc TD_PAIR[] = {
    PAIR_DESC(double_int, MPI_DOUBLE_INT), PAIR_DESC(two_int, MPI_2INT),
    PAIR_DESC(float_int, MPI_FLOAT_INT),   PAIR_DESC(long_int, MPI_LONG_INT),
    PAIR_DESC(short_int, MPI_SHORT_INT),
};
/* Fortran and multi-language types, used from C as MPI allows (gfortran's
 * default INTEGER and REAL are 4 bytes). MPI-4.0 §6.9.2: the logical
 * operations are not defined on Fortran integers, only on LOGICAL. */
static tdesc TD_FINT[] = {
    INT_DESC(int, MPI_INTEGER, int),       INT_DESC(int, MPI_INTEGER4, int32_t),
    INT_DESC(llong, MPI_INTEGER8, int64_t), INT_DESC(short, MPI_INTEGER2, int16_t),
    INT_DESC(i8, MPI_INTEGER1, int8_t),     INT_DESC(offs, MPI_OFFSET, MPI_Offset),
    INT_DESC(llong, MPI_COUNT, MPI_Count),
};
#define N_FINT ((int)(sizeof TD_FINT / sizeof TD_FINT[0]))
static tdesc TD_FREAL[] = {
    FLT_DESC(float, MPI_REAL, float),
    FLT_DESC(double, MPI_DOUBLE_PRECISION, double),
    FLT_DESC(float, MPI_REAL4, float),
    FLT_DESC(double, MPI_REAL8, double),
};
static tdesc TD_FCPLX[] = {
    CPLX_DESC(cfloat, MPI_COMPLEX, float _Complex),
    CPLX_DESC(cdouble, MPI_DOUBLE_COMPLEX, double _Complex),
};
static tdesc TD_FLOG = {"MPI_LOGICAL", MPI_LOGICAL, sizeof(int), gen_flog, apply_int,
                        eq_int, NULL, hash_int, NULL, NULL};
static tdesc TD_FPAIR[] = {
    PAIR_DESC(two_int, MPI_2INTEGER),
    PAIR_DESC(two_real, MPI_2REAL),
    PAIR_DESC(two_dprec, MPI_2DOUBLE_PRECISION),
};
static tdesc TD_UMOD = {"MPI_INT", MPI_INT, sizeof(int), gen_umod, apply_umod, eq_int,
                        NULL, hash_int, NULL, "sum mod 65521 (commutative)"};
static tdesc TD_UMAT = {"contiguous(4, MPI_INT)", MPI_DATATYPE_NULL, 16, gen_umat,
                        apply_umat, eq_16, NULL, hash_16, NULL,
                        "2x2 matrix product mod 65521 (non-commutative)"};
static tdesc TD_UHOLE = {"resized(MPI_INT, extent 8)", MPI_DATATYPE_NULL, 8, gen_uhole,
                         apply_umod, eq_uhole, NULL, hash_uhole, NULL,
                         "sum mod 65521 (commutative)"};
static tdesc TD_UCAT = {"contiguous(2, MPI_UINT64_T)", MPI_DATATYPE_NULL, 16, gen_ucat,
                        apply_ucat, eq_16, NULL, hash_16, NULL,
                        "digit concatenation (non-commutative)"};

typedef struct {
    tdesc *t;
    int op;
    MPI_Op mop;
} combo_t;

#define MAX_COMBOS 512
static combo_t g_combos[MAX_COMBOS];
static int g_ncombos;

static void add(tdesc *t, int op, MPI_Op mop)
{
    if (g_ncombos >= MAX_COMBOS) {
        FAIL("too many combinations");
        return;
    }
    g_combos[g_ncombos++] = (combo_t){t, op, mop};
}

static void make_combos(void)
{
    MPI_Op pre[NOPS] = {MPI_MAX,  MPI_MIN, MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_LOR,
                        MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC,
                        MPI_OP_NULL};
    memcpy(g_mpi_op, pre, sizeof pre);
    for (int i = 0; i < N_INT; i++)
        for (int op = O_MAX; op <= O_BXOR; op++)
            add(&TD_INT[i], op, pre[op]);
    for (int i = 0; i < 3; i++)
        for (int op = O_MAX; op <= O_PROD; op++)
            add(&TD_FLT[i], op, pre[op]);
    for (int op = O_LAND; op <= O_LXOR; op++)
        add(&TD_BOOL, op, pre[op]);
    for (int op = O_BAND; op <= O_BXOR; op++)
        add(&TD_BYTE, op, pre[op]);
    for (int i = 0; i < 3; i++)
        for (int op = O_SUM; op <= O_PROD; op++)
            add(&TD_CPLX[i], op, pre[op]);
    for (int i = 0; i < 5; i++)
        for (int op = O_MAXLOC; op <= O_MINLOC; op++)
            add(&TD_PAIR[i], op, pre[op]);
    for (int i = 0; i < N_FINT; i++)
        for (int op = O_MAX; op <= O_BXOR; op++)
            if (op < O_LAND || op > O_LXOR)
                add(&TD_FINT[i], op, pre[op]);
    for (int i = 0; i < 4; i++)
        for (int op = O_MAX; op <= O_PROD; op++)
            add(&TD_FREAL[i], op, pre[op]);
    for (int i = 0; i < 2; i++)
        for (int op = O_SUM; op <= O_PROD; op++)
            add(&TD_FCPLX[i], op, pre[op]);
    for (int op = O_LAND; op <= O_LXOR; op++)
        add(&TD_FLOG, op, pre[op]);
    for (int i = 0; i < 3; i++)
        for (int op = O_MAXLOC; op <= O_MINLOC; op++)
            add(&TD_FPAIR[i], op, pre[op]);
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &T_MAT));
    MPI_OK(MPI_Type_commit(&T_MAT));
    MPI_OK(MPI_Type_contiguous(2, MPI_UINT64_T, &T_CAT));
    MPI_OK(MPI_Type_commit(&T_CAT));
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 8, &T_HOLE));
    MPI_OK(MPI_Type_commit(&T_HOLE));
    TD_UMAT.dt = T_MAT;
    TD_UCAT.dt = T_CAT;
    TD_UHOLE.dt = T_HOLE;
    MPI_OK(MPI_Op_create(fn_umod, 1, &OP_UMOD));
    MPI_OK(MPI_Op_create(fn_umat, 0, &OP_UMAT));
    MPI_OK(MPI_Op_create(fn_ucat, 0, &OP_UCAT));
    MPI_OK(MPI_Op_create(fn_uhole, 1, &OP_UHOLE));
    add(&TD_UMOD, O_USER, OP_UMOD);
    add(&TD_UMAT, O_USER, OP_UMAT);
    add(&TD_UCAT, O_USER, OP_UCAT);
    add(&TD_UHOLE, O_USER, OP_UHOLE);
}

static const char *combo_name(const combo_t *c, char *s, size_t n)
{
    if (c->op == O_USER)
        snprintf(s, n, "%s on %s", c->t->user_name, c->t->name);
    else
        snprintf(s, n, "%s on %s", ONAME[c->op], c->t->name);
    return s;
}

/* ------------------------------------------------------------------ */
/* one case                                                             */
/* ------------------------------------------------------------------ */

enum { R_REDUCE, R_ALLREDUCE, R_RSB, R_RS, R_SCAN, R_EXSCAN, NCOLL };
static const char *CNAME[NCOLL] = {"Reduce", "Allreduce", "Reduce_scatter_block",
                                   "Reduce_scatter", "Scan", "Exscan"};

#define GUARD_ELEMS 4
#define GUARD_BYTE 0xC5
#define STATIC_BYTES (8 * MIB)
static unsigned char g_static[2][STATIC_BYTES] __attribute__((aligned(64)));

static int g_rank_, g_size_;
/* COLL_TRACE=1: every case on stderr before it runs. */
static int g_trace;

/* Element j of rank r's input. */
static void input(const combo_t *cb, int mode, uint64_t seed, int r, size_t j, void *p)
{
    cb->t->gen(p, cb->op, mode, mix64(seed ^ ((uint64_t)r * 0x5851f42d4c957f2dull), j));
}

typedef struct {
    int ok;        /* all checks passed */
    uint64_t hash; /* of this rank's result (0 if it has none) */
    int has;       /* this rank has a defined result */
    int same;      /* Allreduce, inexact: all members hold the same bits */
    unsigned char first_ref[32]; /* reference element 0 of the result */
} result_t;

/* Runs one case on comm. mode: EXACT or INEXACT; kind: 0 malloc, 1 static.
 * null_root_buf: Reduce's non-roots pass recvbuf NULL. */
static result_t run_case(const combo_t *cb, int coll, int inplace, int c, int kind,
                         int root, int null_root_buf, int mode, uint64_t seed,
                         MPI_Comm comm, const char *what)
{
    result_t res = {1, 0, 0, 1, {0}};
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    const size_t es = cb->t->size;
    /* input elements per rank, and this rank's result: [r0, r0 + rn) of the
     * input vector */
    size_t nin = (size_t)c, r0 = 0, rn = (size_t)c;
    int *rcounts = must(calloc((size_t)n, sizeof(int)), "calloc", 0);
    if (coll == R_RSB) {
        nin = (size_t)c * (size_t)n;
        r0 = (size_t)c * (size_t)me;
    } else if (coll == R_RS) {
        nin = 0;
        for (int i = 0; i < n; i++) {
            rcounts[i] = (int)(((long)c * (i + 1)) % (c + 1));
            if (i < me)
                r0 += (size_t)rcounts[i];
            nin += (size_t)rcounts[i];
        }
        rn = (size_t)rcounts[me];
    }
    res.has = !(coll == R_REDUCE && me != root) && !(coll == R_EXSCAN && me == 0);

    /* buffers: send (nin), receive (nin when in place, else rn) + guards */
    size_t sbytes = nin * es;
    size_t rcap = (inplace ? nin : rn) + GUARD_ELEMS;
    size_t rbytes = rcap * es;
    int s_static = kind == 1 && sbytes <= STATIC_BYTES;
    int r_static = kind == 1 && rbytes <= STATIC_BYTES;
    unsigned char *sb = s_static ? g_static[0] : must(malloc(sbytes + 1), "malloc", sbytes);
    unsigned char *rb = r_static ? g_static[1] : must(malloc(rbytes), "malloc", rbytes);
    unsigned char *copy = must(malloc(sbytes + 1), "malloc", sbytes);
    memset(sb, 0, sbytes);
    memset(rb, GUARD_BYTE, rbytes);
    unsigned char *in = inplace ? rb : sb;
    for (size_t j = 0; j < nin; j++)
        input(cb, mode, seed, me, j, in + j * es);
    /* Reduce: the root's input stays where it is at the root only */
    int really_inplace = inplace && !(coll == R_REDUCE && me != root);
    if (inplace && !really_inplace) {
        /* a non-root of an in-place Reduce sends from sb as usual */
        for (size_t j = 0; j < nin; j++)
            input(cb, mode, seed, me, j, sb + j * es);
        memset(rb, GUARD_BYTE, rbytes);
    }
    memcpy(copy, sb, sbytes);

    void *S = really_inplace ? MPI_IN_PLACE : (void *)sb;
    void *R = rb;
    if (coll == R_REDUCE && me != root && null_root_buf)
        R = NULL;
    MPI_Datatype dt = cb->t->dt;
    MPI_Op op = cb->mop;
    if (g_trace)
        fprintf(stderr, "rank %d: %s\n", g_rank_, what);
    switch (coll) {
    case R_REDUCE:
        MPI_OK(MPI_Reduce(S, R, c, dt, op, root, comm));
        break;
    case R_ALLREDUCE:
        MPI_OK(MPI_Allreduce(S, R, c, dt, op, comm));
        break;
    case R_RSB:
        MPI_OK(MPI_Reduce_scatter_block(S, R, c, dt, op, comm));
        break;
    case R_RS:
        MPI_OK(MPI_Reduce_scatter(S, R, rcounts, dt, op, comm));
        break;
    case R_SCAN:
        MPI_OK(MPI_Scan(S, R, c, dt, op, comm));
        break;
    case R_EXSCAN:
        MPI_OK(MPI_Exscan(S, R, c, dt, op, comm));
        break;
    }

    /* reference and comparison */
    int last = coll == R_SCAN ? me : coll == R_EXSCAN ? me - 1 : n - 1;
    unsigned char acc[64], tmp[64];
    uint64_t h = 0;
    for (size_t k = 0; res.has && k < rn; k++) {
        size_t j = r0 + k;
        input(cb, mode, seed, 0, j, acc);
        for (int r = 1; r <= last; r++) {
            input(cb, mode, seed, r, j, tmp);
            cb->t->apply(cb->op, acc, tmp);
            memcpy(acc, tmp, es);
        }
        const unsigned char *got = rb + k * es;
        int good = mode == EXACT ? cb->t->eq(got, acc) : cb->t->near(got, acc);
        if (!good && res.ok) {
            char gs[64] = "", ws[64] = "";
            if (cb->t->show != NULL) {
                cb->t->show(gs, sizeof gs, got);
                cb->t->show(ws, sizeof ws, acc);
            }
            CHECK(0, "%s: result element %zu (of %zu) wrong %s %s", what, k, rn, gs, ws);
            res.ok = 0;
        }
        if (k == 0)
            memcpy(res.first_ref, acc, es);
        h = cb->t->hash(h, got);
    }
    res.hash = res.has ? h : 0;
    /* the holes of a type with holes keep their bytes (GUARD_BYTE: the
     * receive buffer's fill, or in place the input's, written around them) */
    if (cb->t == &TD_UHOLE && res.has && !(STOCK_REDUCE_WRITES_HOLES && coll == R_REDUCE)) {
        for (size_t k = 0; k < rn; k++)
            if (memcmp(rb + k * 8 + 4, "\xC5\xC5\xC5\xC5", 4) != 0) {
                CHECK(0, "%s: the hole after result element %zu was written", what, k);
                res.ok = 0;
                break;
            }
    }
    /* the guard elements after the result */
    if (R != NULL) {
        size_t from = (inplace ? nin : rn) * es;
        if (!(coll == R_REDUCE && me != root) || !inplace) {
            for (size_t b = from; b < rbytes; b++)
                if (rb[b] != GUARD_BYTE) {
                    CHECK(0, "%s: receive buffer changed %zu bytes after the result", what,
                          b - from);
                    res.ok = 0;
                    break;
                }
        }
        /* Reduce: the non-roots' receive buffers (insignificant) are not
         * checked. */
    }
    if (!really_inplace && memcmp(copy, sb, sbytes) != 0) {
        CHECK(0, "%s: the send buffer changed", what);
        res.ok = 0;
    }
    if (coll == R_ALLREDUCE && mode == INEXACT)
        res.same = same_on_all(comm, h, what);
    if (!s_static)
        free(sb);
    if (!r_static)
        free(rb);
    free(copy);
    free(rcounts);
    return res;
}

/* ------------------------------------------------------------------ */
/* sections                                                             */
/* ------------------------------------------------------------------ */

static const int COUNTS[4] = {0, 1, 7, 1000};

/* The root of a Reduce: stock MPICH 4.0.2 crashes (SIGSEGV at the address
 * MPI_IN_PLACE) in an in-place Reduce of more than 2048 bytes at a root
 * other than 0, so under MPICH those have root 0. */
static int reduce_root(int root, int coll, int inplace, size_t bytes)
{
#ifdef MPICH_VERSION
    if (coll == R_REDUCE && inplace && bytes > 2048)
        return 0;
#else
    (void)coll;
    (void)inplace;
    (void)bytes;
#endif
    return root;
}

static void exact_matrix(void)
{
    section("A exact");
    const int n = g_size_;
    /* every case at 1 and 2 ranks; at more, one case per combination,
     * rotating through the collectives, counts and forms */
    const int stride = n <= 2 ? 1 : 2 * 4 * NCOLL;
    for (int ci = 0; ci < g_ncombos; ci++) {
        const combo_t *cb = &g_combos[ci];
        char cname[128];
        combo_name(cb, cname, sizeof cname);
        int cases = 0, unit = 0;
        uint64_t h = 0;
        for (int coll = 0; coll < NCOLL; coll++)
            for (int q = 0; q < 4; q++)
                for (int inplace = 0; inplace < 2; inplace++, unit++) {
                    if ((unit + ci) % stride != 0)
                        continue;
                    int root = reduce_root((ci + q + inplace) % n, coll, inplace,
                                           (size_t)COUNTS[q] * cb->t->size);
                    char what[256];
                    snprintf(what, sizeof what, "A %s, %s, count %d%s, root %d", cname,
                             CNAME[coll], COUNTS[q], inplace ? ", in place" : "", root);
                    uint64_t seed = seed6(1, (uint64_t)ci, (uint64_t)coll, (uint64_t)q,
                                          (uint64_t)inplace, 0);
                    result_t r = run_case(cb, coll, inplace, COUNTS[q],
                                          (unit + g_rank_) % 2, root,
                                          (unit / 2) % 2, EXACT, seed, MPI_COMM_WORLD, what);
                    h = mix64(h, r.hash);
                    cases++;
                }
        out("A %s: %d cases, checksum %016llx", cname, cases, (unsigned long long)h);
    }
}

static void large_counts(void)
{
    section("B large counts");
    const int n = g_size_;
    /* (type, op) */
    struct {
        tdesc *t;
        int op;
    } L[] = {
        {&TD_INT[0], O_SUM},  {&TD_FLT[1], O_SUM},   {&TD_PAIR[0], O_MAXLOC},
        {&TD_BYTE, O_BXOR},   {&TD_FLT[0], O_PROD},  {&TD_UMAT, O_USER},
    };
    const int nl = (int)(sizeof L / sizeof L[0]);
    static const int BIGC[2] = {5000, 300000};
    for (int li = 0; li < nl; li++) {
        combo_t cb = {L[li].t, L[li].op, L[li].op == O_USER ? OP_UMAT : g_mpi_op[L[li].op]};
        char cname[128];
        combo_name(&cb, cname, sizeof cname);
        for (int b = 0; b < 2; b++)
            for (int coll = 0; coll < NCOLL; coll++) {
                /* 300000 elements: one collective per operation, at more
                 * than 2 ranks only the Allreduce of doubles; 5000
                 * elements: every collective, at more than 2 ranks a third
                 * of them (time) */
                if (b == 1 && coll != li % NCOLL)
                    continue;
                if (b == 1 && n > 2 && li != 1)
                    continue;
                if (b == 0 && n > 2 && (coll + li) % 3 != 0)
                    continue;
                int inplace = (li + coll + b) % 2;
                int root = reduce_root((li + coll) % n, coll, inplace,
                                       (size_t)BIGC[b] * cb.t->size);
                char what[256];
                snprintf(what, sizeof what, "B %s, %s, count %d%s, root %d", cname,
                         CNAME[coll], BIGC[b], inplace ? ", in place" : "", root);
                uint64_t seed = seed6(2, (uint64_t)li, (uint64_t)coll, (uint64_t)b, 0, 0);
                result_t r = run_case(&cb, coll, inplace, BIGC[b], (li + coll + g_rank_) % 2,
                                      root,
                                      coll % 2, EXACT, seed, MPI_COMM_WORLD, what);
                out("%s: %s, checksum %016llx", what, r.ok ? "right" : "WRONG",
                    (unsigned long long)r.hash);
            }
    }
}

static void inexact(void)
{
    section("C inexact");
    const int n = g_size_;
    static const int COLLS[4] = {R_ALLREDUCE, R_REDUCE, R_RSB, R_SCAN};
    static const int IC[2] = {7, 1000};
    int unit = 0;
    const int stride = n <= 2 ? 1 : 4;
    for (int ti = 0; ti < 3; ti++)
        for (int op = O_SUM; op <= O_PROD; op++) {
            combo_t cb = {&TD_FLT[ti], op, g_mpi_op[op]};
            char cname[128];
            combo_name(&cb, cname, sizeof cname);
            for (int k = 0; k < 4; k++)
                for (int q = 0; q < 2; q++, unit++) {
                    if (unit % stride != 0 && !(n > 2 && COLLS[k] == R_ALLREDUCE && q == 1))
                        continue;
                    int coll = COLLS[k];
                    int root = reduce_root(unit % n, coll, unit % 3 == 0,
                                           (size_t)IC[q] * cb.t->size);
                    char what[256];
                    snprintf(what, sizeof what, "C %s, %s, count %d, root %d", cname,
                             CNAME[coll], IC[q], root);
                    uint64_t seed = seed6(3, (uint64_t)ti, (uint64_t)op, (uint64_t)k,
                                          (uint64_t)q, 0);
                    result_t r = run_case(&cb, coll, unit % 3 == 0, IC[q], unit % 2, root,
                                          0, INEXACT, seed, MPI_COMM_WORLD, what);
                    char ref[64] = "-";
                    if (r.has)
                        cb.t->show(ref, sizeof ref, r.first_ref);
                    if (coll == R_ALLREDUCE)
                        out("%s: %s the rank-order reference (element 0: %s), same bits "
                            "on every rank: %s", what, r.ok ? "within tolerance of" : "OFF",
                            ref, r.same ? "yes" : "NO");
                    else
                        out("%s: %s the rank-order reference (element 0: %s)", what,
                            r.ok ? "within tolerance of" : "OFF", ref);
                }
        }
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_rank_ = rank;
    g_size_ = size;
    g_trace = getenv("COLL_TRACE") != NULL;
    make_combos();
    exact_matrix();
    large_counts();
    inexact();
    MPI_Op_free(&OP_UMOD);
    MPI_Op_free(&OP_UMAT);
    MPI_Op_free(&OP_UCAT);
    MPI_Op_free(&OP_UHOLE);
    MPI_Type_free(&T_HOLE);
    MPI_Type_free(&T_MAT);
    MPI_Type_free(&T_CAT);
    return coll_finish("reduce", rank, size);
}

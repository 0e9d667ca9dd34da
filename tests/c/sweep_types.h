/*
 * sweep_types.h - the predefined types, operations and reference arithmetic
 * shared by the sweep programs (coll_sweep.c: every reduction kernel;
 * rma_sweep.c: every accumulate kernel): the type table (C, Fortran and
 * pair types with their storage, meaningful bytes and kind), the
 * operations, loading and storing an element as a long double or a
 * complex or pair value, the reference result of an operation where the
 * program can compute one, and the generated values. Include it after
 * coll_util.h (and <complex.h>, <stdbool.h>, <stddef.h>, <wchar.h>).
 */
#ifndef HEAPMPI_SWEEP_TYPES_H
#define HEAPMPI_SWEEP_TYPES_H

/* ------------------------------------------------------------------------ */
/* types                                                                    */
/* ------------------------------------------------------------------------ */

/* How the program stores and combines an element. */
enum { K_SINT, K_UINT, K_BOOL, K_FLT, K_CPLX, K_PAIR };

typedef struct {
    const char *name;
    MPI_Datatype dt;
    int kind;
    int size;   /* the C type's size: the MPI type's extent */
    int vsz;    /* bytes of the value (of each part, complex) */
    int vbytes; /* meaningful bytes of it (10 of a long double's 16) */
    int vflt;   /* the value (pairs) is floating */
    int ioff, isz, iflt; /* pairs: the index */
} tdesc;

#define LDB 10 /* meaningful bytes of an x87 long double */

#define TI(M, T, K) {#M, M, K, sizeof(T), sizeof(T), sizeof(T), 0, 0, 0, 0}
#define TF(M, T) {#M, M, K_FLT, sizeof(T), sizeof(T), sizeof(T) == 16 ? LDB : sizeof(T), 1, 0, 0, 0}
#define TC(M, T, R)                                                                            \
    {#M, M, K_CPLX, sizeof(T), sizeof(R), sizeof(R) == 16 ? LDB : sizeof(R), 1, 0, 0, 0}
#define TP(M, S, VT, IT, VF, IF)                                                               \
    {#M, M, K_PAIR, sizeof(S), sizeof(VT), sizeof(VT) == 16 ? LDB : sizeof(VT), VF,           \
     offsetof(S, i), sizeof(IT), IF}

typedef struct { float v; int i; } p_float_int;
typedef struct { double v; int i; } p_double_int;
typedef struct { long v; int i; } p_long_int;
typedef struct { int v; int i; } p_2int;
typedef struct { short v; int i; } p_short_int;
typedef struct { long double v; int i; } p_ldouble_int;
typedef struct { float v; float i; } p_2real;
typedef struct { double v; double i; } p_2dprec;

static tdesc TYPES[] = {
    TI(MPI_CHAR, char, K_SINT),
    TI(MPI_SIGNED_CHAR, signed char, K_SINT),
    TI(MPI_UNSIGNED_CHAR, unsigned char, K_UINT),
    TI(MPI_WCHAR, wchar_t, K_SINT),
    TI(MPI_SHORT, short, K_SINT),
    TI(MPI_UNSIGNED_SHORT, unsigned short, K_UINT),
    TI(MPI_INT, int, K_SINT),
    TI(MPI_UNSIGNED, unsigned, K_UINT),
    TI(MPI_LONG, long, K_SINT),
    TI(MPI_UNSIGNED_LONG, unsigned long, K_UINT),
    TI(MPI_LONG_LONG, long long, K_SINT),
    TI(MPI_UNSIGNED_LONG_LONG, unsigned long long, K_UINT),
    TI(MPI_INT8_T, int8_t, K_SINT),
    TI(MPI_INT16_T, int16_t, K_SINT),
    TI(MPI_INT32_T, int32_t, K_SINT),
    TI(MPI_INT64_T, int64_t, K_SINT),
    TI(MPI_UINT8_T, uint8_t, K_UINT),
    TI(MPI_UINT16_T, uint16_t, K_UINT),
    TI(MPI_UINT32_T, uint32_t, K_UINT),
    TI(MPI_UINT64_T, uint64_t, K_UINT),
    TI(MPI_AINT, MPI_Aint, K_SINT),
    TI(MPI_OFFSET, MPI_Offset, K_SINT),
    TI(MPI_COUNT, MPI_Count, K_SINT),
    TI(MPI_BYTE, unsigned char, K_UINT),
    TI(MPI_C_BOOL, bool, K_BOOL),
    TF(MPI_FLOAT, float),
    TF(MPI_DOUBLE, double),
    TF(MPI_LONG_DOUBLE, long double),
    TC(MPI_C_FLOAT_COMPLEX, float _Complex, float),
    TC(MPI_C_DOUBLE_COMPLEX, double _Complex, double),
    TC(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, long double),
    TI(MPI_INTEGER, int32_t, K_SINT),
    TF(MPI_REAL, float),
    TF(MPI_DOUBLE_PRECISION, double),
    TI(MPI_LOGICAL, int32_t, K_BOOL),
    TC(MPI_COMPLEX, float _Complex, float),
    TC(MPI_DOUBLE_COMPLEX, double _Complex, double),
    TI(MPI_CHARACTER, unsigned char, K_UINT),
    TI(MPI_INTEGER1, int8_t, K_SINT),
    TI(MPI_INTEGER2, int16_t, K_SINT),
    TI(MPI_INTEGER4, int32_t, K_SINT),
    TI(MPI_INTEGER8, int64_t, K_SINT),
    TF(MPI_REAL4, float),
    TF(MPI_REAL8, double),
    TC(MPI_COMPLEX8, float _Complex, float),
    TC(MPI_COMPLEX16, double _Complex, double),
    TP(MPI_FLOAT_INT, p_float_int, float, int, 1, 0),
    TP(MPI_DOUBLE_INT, p_double_int, double, int, 1, 0),
    TP(MPI_LONG_INT, p_long_int, long, int, 0, 0),
    TP(MPI_2INT, p_2int, int, int, 0, 0),
    TP(MPI_SHORT_INT, p_short_int, short, int, 0, 0),
    TP(MPI_LONG_DOUBLE_INT, p_ldouble_int, long double, int, 1, 0),
    TP(MPI_2INTEGER, p_2int, int, int, 0, 0),
    TP(MPI_2REAL, p_2real, float, float, 1, 1),
    TP(MPI_2DOUBLE_PRECISION, p_2dprec, double, double, 1, 1),
};
#define NT ((int)(sizeof TYPES / sizeof TYPES[0]))

/* ------------------------------------------------------------------------ */
/* operations                                                               */
/* ------------------------------------------------------------------------ */

enum {
    O_MAX, O_MIN, O_SUM, O_PROD, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR,
    O_MAXLOC, O_MINLOC, O_REPLACE, O_NOOP, NOPS
};
static const char *const ONAME[NOPS] = {"MAX",  "MIN", "SUM",  "PROD",   "LAND",   "LOR",
                                        "LXOR", "BAND", "BOR", "BXOR",   "MAXLOC", "MINLOC",
                                        "REPLACE", "NO_OP"};
static MPI_Op op_handle(int o)
{
    switch (o) {
    case O_MAX: return MPI_MAX;
    case O_MIN: return MPI_MIN;
    case O_SUM: return MPI_SUM;
    case O_PROD: return MPI_PROD;
    case O_LAND: return MPI_LAND;
    case O_LOR: return MPI_LOR;
    case O_LXOR: return MPI_LXOR;
    case O_BAND: return MPI_BAND;
    case O_BOR: return MPI_BOR;
    case O_BXOR: return MPI_BXOR;
    case O_MAXLOC: return MPI_MAXLOC;
    case O_MINLOC: return MPI_MINLOC;
    case O_REPLACE: return MPI_REPLACE;
    default: return MPI_NO_OP;
    }
}

/* A value: integers and reals in a, complex numbers in (a, b), pairs as
 * (value a, index b). Every value the program makes is exact in a long
 * double. */
typedef struct {
    long double a, b;
} num;

static long double ld_load(const void *p, int sz, int flt, int sgn)
{
    if (flt) {
        if (sz == 4) { float v; memcpy(&v, p, 4); return v; }
        if (sz == 8) { double v; memcpy(&v, p, 8); return v; }
        long double v = 0;
        memcpy(&v, p, LDB);
        return v;
    }
    if (sgn) {
        switch (sz) {
        case 1: { int8_t v; memcpy(&v, p, 1); return v; }
        case 2: { int16_t v; memcpy(&v, p, 2); return v; }
        case 4: { int32_t v; memcpy(&v, p, 4); return v; }
        default: { int64_t v; memcpy(&v, p, 8); return (long double)v; }
        }
    }
    switch (sz) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return (long double)v; }
    }
}

static void ld_store(void *p, int sz, int flt, long double x)
{
    if (flt) {
        if (sz == 4) { float v = (float)x; memcpy(p, &v, 4); }
        else if (sz == 8) { double v = (double)x; memcpy(p, &v, 8); }
        else memcpy(p, &x, LDB);
        return;
    }
    int64_t v = (int64_t)x;
    memcpy(p, &v, (size_t)sz); /* little endian: the low bytes */
}

static num load(const tdesc *d, const void *p)
{
    num r = {0, 0};
    switch (d->kind) {
    case K_SINT: r.a = ld_load(p, d->vsz, 0, 1); break;
    case K_UINT:
    case K_BOOL: r.a = ld_load(p, d->vsz, 0, 0); break;
    case K_FLT: r.a = ld_load(p, d->vsz, 1, 1); break;
    case K_CPLX:
        r.a = ld_load(p, d->vsz, 1, 1);
        r.b = ld_load((const char *)p + d->vsz, d->vsz, 1, 1);
        break;
    case K_PAIR:
        r.a = ld_load(p, d->vsz, d->vflt, 1);
        r.b = ld_load((const char *)p + d->ioff, d->isz, d->iflt, 1);
        break;
    }
    return r;
}

/* Writes the data components of one element (padding left as it is). */
static void store(const tdesc *d, void *p, num v)
{
    switch (d->kind) {
    case K_SINT:
    case K_UINT:
    case K_BOOL: ld_store(p, d->vsz, 0, v.a); break;
    case K_FLT: ld_store(p, d->vsz, 1, v.a); break;
    case K_CPLX:
        ld_store(p, d->vsz, 1, v.a);
        ld_store((char *)p + d->vsz, d->vsz, 1, v.b);
        break;
    case K_PAIR:
        ld_store(p, d->vsz, d->vflt, v.a);
        ld_store((char *)p + d->ioff, d->isz, d->iflt, v.b);
        break;
    }
}

/* Folds the data components of one element into h: a complex zero part is
 * folded as +0 (its sign may depend on the order of a product's terms). */
static uint64_t hash_elem(uint64_t h, const tdesc *d, const unsigned char *p)
{
    switch (d->kind) {
    case K_CPLX: {
        num v = load(d, p);
        unsigned char b[2 * 16];
        memset(b, 0, sizeof b);
        ld_store(b, d->vsz, 1, v.a + 0.0L);
        ld_store(b + 16, d->vsz, 1, v.b + 0.0L);
        h = hash_bytes(h, b, (size_t)d->vbytes);
        return hash_bytes(h, b + 16, (size_t)d->vbytes);
    }
    case K_PAIR:
        h = hash_bytes(h, p, (size_t)d->vbytes);
        return hash_bytes(h, p + d->ioff, (size_t)d->isz);
    default:
        return hash_bytes(h, p, (size_t)d->vbytes);
    }
}

/* Whether the program knows what op does to d (see the header). */
static int checkable(const tdesc *d, int o)
{
    if (o == O_REPLACE || o == O_NOOP)
        return 1;
    switch (d->kind) {
    case K_SINT:
    case K_UINT: return o <= O_BXOR;
    case K_BOOL: return o != O_SUM && o != O_PROD && o <= O_BXOR;
    case K_FLT: /* the logical operations: on the C types only (MPICH applies them to
                 * Fortran reals as to logicals: 2.5 LAND 1 is 2.5) */
        return o <= O_PROD ||
               (o <= O_LXOR && (d->dt == MPI_FLOAT || d->dt == MPI_DOUBLE ||
                                d->dt == MPI_LONG_DOUBLE));
    case K_CPLX: return o == O_SUM || o == O_PROD;
    default: return o == O_MAXLOC || o == O_MINLOC;
    }
}

/* Wraps an integer result to the type's width. */
static long double wrap(const tdesc *d, long long x)
{
    int bits = 8 * d->vsz;
    if (bits >= 64)
        return d->kind == K_UINT ? (long double)(unsigned long long)x : (long double)x;
    unsigned long long m = (1ull << bits) - 1, u = (unsigned long long)x & m;
    if (d->kind == K_SINT && (u >> (bits - 1)))
        return (long double)(long long)(u | ~m);
    return (long double)u;
}

/* What target element t becomes when origin element v is applied to it. */
static num apply(const tdesc *d, int o, num v, num t)
{
    if (o == O_REPLACE)
        return v;
    if (o == O_NOOP)
        return t;
    num r = t;
    if (d->kind == K_PAIR) {
        int v_wins = o == O_MAXLOC ? v.a > t.a : v.a < t.a;
        if (v_wins)
            r = v;
        else if (v.a == t.a && v.b < t.b)
            r.b = v.b;
        return r;
    }
    if (d->kind == K_CPLX) {
        if (o == O_SUM) {
            r.a = v.a + t.a;
            r.b = v.b + t.b;
        } else {
            r.a = v.a * t.a - v.b * t.b;
            r.b = v.a * t.b + v.b * t.a;
        }
        return r;
    }
    long double x = v.a, y = t.a;
    switch (o) {
    case O_MAX: r.a = x > y ? x : y; return r;
    case O_MIN: r.a = x < y ? x : y; return r;
    case O_LAND: r.a = (x != 0) && (y != 0); return r;
    case O_LOR: r.a = (x != 0) || (y != 0); return r;
    case O_LXOR: r.a = (x != 0) != (y != 0); return r;
    default: break;
    }
    if (d->kind == K_FLT) {
        r.a = o == O_SUM ? x + y : x * y;
        return r;
    }
    long long a = (long long)x, b = (long long)y, z = 0;
    switch (o) {
    case O_SUM: z = a + b; break;
    case O_PROD: z = a * b; break;
    case O_BAND: z = a & b; break;
    case O_BOR: z = a | b; break;
    case O_BXOR: z = a ^ b; break;
    }
    r.a = wrap(d, z);
    return r;
}

static int num_eq(num x, num y)
{
    return x.a == y.a && x.b == y.b;
}

static void show(char *s, size_t n, const tdesc *d, num v)
{
    if (d->kind == K_CPLX || d->kind == K_PAIR)
        snprintf(s, n, "(%Lg, %Lg)", v.a, v.b);
    else
        snprintf(s, n, "%Lg", v.a);
}

/* Element k of a value set: small integers, dyadic reals, 0/1 logicals;
 * pairs with few values (many ties) and small indices. */
static num gen(const tdesc *d, int o, uint64_t h)
{
    static const long double PRODV[10] = {0.5, -0.5, 1, -1, 1.5, -1.5, 2, -2, 3, 0};
    static const long double CPV[8] = {0, 0.5, -0.5, 1, -1, 2, -2, 1.5};
    static const long double LOGV[3] = {0, 1, 2.5};
    num r = {0, 0};
    switch (d->kind) {
    case K_SINT:
        switch (o) {
        case O_SUM: r.a = (long double)((int)(h % 41) - 20); break;
        case O_PROD: r.a = (long double)((int)(h % 7) - 3); break;
        case O_LAND: case O_LOR: case O_LXOR: r.a = (long double)(h % 3); break;
        case O_BAND: case O_BOR: case O_BXOR: r.a = (long double)((int)(h % 200) - 100); break;
        default: r.a = (long double)((int)(h % 101) - 50); break;
        }
        break;
    case K_UINT:
        switch (o) {
        case O_SUM: r.a = (long double)(h % 41); break;
        case O_PROD: r.a = (long double)(h % 4); break;
        case O_LAND: case O_LOR: case O_LXOR: r.a = (long double)(h % 3); break;
        case O_BAND: case O_BOR: case O_BXOR: r.a = (long double)(h % 200); break;
        default: r.a = (long double)(h % 101); break;
        }
        break;
    case K_BOOL:
        r.a = (long double)(h & 1);
        break;
    case K_FLT:
        switch (o) {
        case O_PROD: r.a = PRODV[h % 10]; break;
        case O_MAX: case O_MIN: r.a = (long double)((int)(h % 129) - 64) / 8; break;
        case O_LAND: case O_LOR: case O_LXOR: r.a = LOGV[h % 3]; break;
        default: r.a = (long double)((int)(h % 161) - 80) / 4; break;
        }
        break;
    case K_CPLX:
        if (o == O_PROD) {
            r.a = CPV[h % 8];
            r.b = CPV[(h >> 8) % 8];
        } else {
            r.a = (long double)((int)(h % 161) - 80) / 4;
            r.b = (long double)((int)((h >> 16) % 161) - 80) / 4;
        }
        break;
    case K_PAIR:
        r.a = (long double)((int)(h % 4) - 1);
        r.b = (long double)((h >> 8) % 6);
        break;
    }
    return r;
}

#endif /* HEAPMPI_SWEEP_TYPES_H */

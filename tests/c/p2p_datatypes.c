/*
 * p2p_datatypes.c - point-to-point conformance: derived (non-contiguous)
 * datatypes.
 *
 * Why: heapmpi must carry derived datatypes for node-local peers itself (by
 * packing or by a typed copy): every message between two local ranks goes
 * through its queues, or ordering breaks. The data must land exactly where
 * the receive type map says, in type-map order (not memory order), gaps
 * untouched, and the status must give the real MPI's MPI_Get_count /
 * MPI_Get_elements answers, also for a partially filled receive.
 *
 * Every rank sends to its right neighbour and receives from its left one
 * (Sendrecv, or Isend/Irecv), so with pretend nodes some pairs are remote.
 * Source values are (sender rank, index) codes so misplaced data is noticed.
 *
 * Sections:
 *  A. vector (10 blocks of 3 ints, stride 7): vector -> contiguous ints,
 *     contiguous -> vector (holes untouched), vector -> vector;
 *  B. indexed with out-of-order displacements -> contiguous and -> indexed;
 *     hindexed with a negative displacement;
 *  C. struct with gaps (char, double, int[3], short; resized to the C
 *     struct): -> struct (gap bytes untouched), -> MPI_BYTE (packed type-map
 *     order, 23 bytes per record); a struct type listing the fields in
 *     another order than memory: -> MPI_BYTE and -> the same type;
 *  D. contiguous of vector of doubles -> doubles;
 *  E. resized MPI_INT (extent 3 ints) both ways;
 *  F. MPI_BOTTOM with absolute addresses (MPI_Get_address + struct) of a
 *     static, a stack and a heap variable at both ends;
 *  G. Get_count / Get_elements of a partially received derived type
 *     (10 ints into 5 x contiguous(4 ints); int,double,int into 2 x
 *     struct{int,double});
 *  H. a large vector (2000 blocks of 50 doubles, 800 KB) both ways;
 *  I. a zero-size derived type.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: datatypes ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

static int g_left, g_right, g_me;

static int val(int src, int i)
{
    return src * 1000000 + i;
}

static double dval(int src, int i)
{
    return src * 1000000.0 + i + 0.25;
}

static const char *count_str(int c, char *buf, size_t n)
{
    if (c == MPI_UNDEFINED)
        snprintf(buf, n, "undefined");
    else
        snprintf(buf, n, "%d", c);
    return buf;
}

/* Sendrecv to the right / from the left; returns the receive's byte count. */
static int xchg(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                MPI_Datatype rt, int tag)
{
    MPI_Status s;
    MPI_OK(MPI_Sendrecv(sb, sc, st, g_right, tag, rb, rc, rt, g_left, tag,
                        MPI_COMM_WORLD, &s));
    CHECK(s.MPI_SOURCE == g_left && s.MPI_TAG == tag, "status %d %d",
          s.MPI_SOURCE, s.MPI_TAG);
    int c = -1;
    MPI_OK(MPI_Get_count(&s, MPI_BYTE, &c));
    return c;
}

/* Isend + Irecv + Waitall variant of xchg. */
static int xchg_nb(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                   MPI_Datatype rt, int tag)
{
    MPI_Request r[2];
    MPI_Status s[2];
    MPI_OK(MPI_Irecv(rb, rc, rt, g_left, tag, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Isend(sb, sc, st, g_right, tag, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Waitall(2, r, s));
    CHECK(s[0].MPI_SOURCE == g_left && s[0].MPI_TAG == tag, "status %d %d",
          s[0].MPI_SOURCE, s[0].MPI_TAG);
    int c = -1;
    MPI_OK(MPI_Get_count(&s[0], MPI_BYTE, &c));
    return c;
}

/* ---- A: vector ---- */

static void vector(void)
{
    section("A vector");
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(10, 3, 7, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    int src[200], dst[200], flat[60];
    for (int i = 0; i < 200; i++)
        src[i] = val(g_me, i);
    /* where element k of the type map of 2 x v sits (extent 66 ints) */
    int pos[60];
    for (int e = 0, k = 0; e < 2; e++)
        for (int b = 0; b < 10; b++)
            for (int j = 0; j < 3; j++)
                pos[k++] = e * 66 + b * 7 + j;

    int bad1 = 0, bad2 = 0, bad3 = 0;
    for (int i = 0; i < 60; i++)
        flat[i] = -1;
    int n = xchg(src, 2, v, flat, 60, MPI_INT, 1);
    for (int k = 0; k < 60; k++)
        bad1 += flat[k] != val(g_left, pos[k]);
    CHECK(n == 240 && bad1 == 0, "vector -> ints: %d bytes, %d wrong", n, bad1);

    int csrc[60];
    for (int k = 0; k < 60; k++)
        csrc[k] = val(g_me, k);
    for (int i = 0; i < 200; i++)
        dst[i] = -1;
    n = xchg_nb(csrc, 60, MPI_INT, dst, 2, v, 2);
    int in_map[200] = {0};
    for (int k = 0; k < 60; k++) {
        in_map[pos[k]] = 1;
        bad2 += dst[pos[k]] != val(g_left, k);
    }
    for (int i = 0; i < 200; i++)
        bad2 += !in_map[i] && dst[i] != -1;
    CHECK(n == 240 && bad2 == 0, "ints -> vector: %d bytes, %d wrong", n, bad2);

    for (int i = 0; i < 200; i++)
        dst[i] = -1;
    n = xchg(src, 2, v, dst, 2, v, 3);
    for (int i = 0; i < 200; i++)
        bad3 += in_map[i] ? dst[i] != val(g_left, i) : dst[i] != -1;
    CHECK(n == 240 && bad3 == 0, "vector -> vector: %d bytes, %d wrong", n, bad3);
    out("A vector->ints %d wrong, ints->vector %d wrong, vector->vector %d wrong",
        bad1, bad2, bad3);
    MPI_Type_free(&v);
}

/* ---- B: indexed, hindexed ---- */

static void indexed(void)
{
    section("B indexed");
    int bl[4] = {2, 1, 3, 4}, disp[4] = {10, 0, 5, 20};
    MPI_Datatype t;
    MPI_OK(MPI_Type_indexed(4, bl, disp, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    int order[10] = {10, 11, 0, 5, 6, 7, 20, 21, 22, 23};
    int src[30], dst[30], flat[10];
    for (int i = 0; i < 30; i++)
        src[i] = val(g_me, i);
    for (int i = 0; i < 10; i++)
        flat[i] = -1;
    int bad1 = 0, bad2 = 0, bad3 = 0;
    int n = xchg(src, 1, t, flat, 10, MPI_INT, 10);
    for (int k = 0; k < 10; k++)
        bad1 += flat[k] != val(g_left, order[k]);
    CHECK(n == 40 && bad1 == 0, "indexed -> ints: %d bytes %d wrong", n, bad1);
    for (int i = 0; i < 30; i++)
        dst[i] = -1;
    n = xchg_nb(src, 1, t, dst, 1, t, 11);
    for (int i = 0; i < 30; i++) {
        int in = 0;
        for (int k = 0; k < 10; k++)
            in |= order[k] == i;
        bad2 += in ? dst[i] != val(g_left, i) : dst[i] != -1;
    }
    CHECK(n == 40 && bad2 == 0, "indexed -> indexed: %d bytes %d wrong", n, bad2);
    MPI_Type_free(&t);

    /* hindexed with a negative displacement, sent from the middle of an
     * array: elements 8, 9, 12, 13. */
    int hb[2] = {2, 2};
    MPI_Aint hd[2] = {-2 * (MPI_Aint)sizeof(int), 2 * (MPI_Aint)sizeof(int)};
    MPI_Datatype h;
    MPI_OK(MPI_Type_create_hindexed(2, hb, hd, MPI_INT, &h));
    MPI_OK(MPI_Type_commit(&h));
    int four[4] = {-1, -1, -1, -1};
    n = xchg(src + 10, 1, h, four, 4, MPI_INT, 12);
    int want[4] = {8, 9, 12, 13};
    for (int k = 0; k < 4; k++)
        bad3 += four[k] != val(g_left, want[k]);
    CHECK(n == 16 && bad3 == 0, "hindexed (negative displacement): %d wrong", bad3);
    MPI_Type_free(&h);
    out("B indexed->ints %d wrong, indexed->indexed %d wrong, hindexed with "
        "negative displacement %d wrong", bad1, bad2, bad3);
}

/* ---- C: structs ---- */

struct rec {
    char c;
    double d;
    int i[3];
    short s;
};
#define NREC 5
#define PACKED 23 /* 1 + 8 + 12 + 2 */

static void fill_rec(struct rec *r, int src, int k)
{
    memset(r, 0, sizeof *r);
    r->c = (char)('A' + src * 7 + k);
    r->d = dval(src, k);
    for (int j = 0; j < 3; j++)
        r->i[j] = val(src, 10 * k + j);
    r->s = (short)(src * 100 + k);
}

static int rec_ok(const struct rec *r, int src, int k)
{
    struct rec w;
    fill_rec(&w, src, k);
    return r->c == w.c && r->d == w.d && r->i[0] == w.i[0] &&
           r->i[1] == w.i[1] && r->i[2] == w.i[2] && r->s == w.s;
}

static int in_field(size_t b, size_t off, size_t len)
{
    return b - off < len; /* off <= b < off + len */
}

/* Bytes of the record that no field covers (padding) still hold 0xEE. */
static int gaps_untouched(const struct rec *r)
{
    const unsigned char *p = (const unsigned char *)r;
    for (size_t b = 0; b < sizeof *r; b++) {
        int field = in_field(b, offsetof(struct rec, c), 1) ||
                    in_field(b, offsetof(struct rec, d), 8) ||
                    in_field(b, offsetof(struct rec, i), 12) ||
                    in_field(b, offsetof(struct rec, s), 2);
        if (!field && p[b] != 0xEE)
            return 0;
    }
    return 1;
}

static MPI_Datatype rec_type(int reordered)
{
    /* memory order c, d, i, s; reordered lists i, c, s, d */
    int bl[4] = {1, 1, 3, 1};
    MPI_Aint off[4] = {offsetof(struct rec, c), offsetof(struct rec, d),
                       offsetof(struct rec, i), offsetof(struct rec, s)};
    MPI_Datatype ty[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT};
    int perm[4] = {0, 1, 2, 3};
    if (reordered) {
        perm[0] = 2;
        perm[1] = 0;
        perm[2] = 3;
        perm[3] = 1;
    }
    int pb[4];
    MPI_Aint po[4];
    MPI_Datatype pt[4];
    for (int j = 0; j < 4; j++) {
        pb[j] = bl[perm[j]];
        po[j] = off[perm[j]];
        pt[j] = ty[perm[j]];
    }
    MPI_Datatype t, r;
    MPI_OK(MPI_Type_create_struct(4, pb, po, pt, &t));
    MPI_OK(MPI_Type_create_resized(t, 0, sizeof(struct rec), &r));
    MPI_OK(MPI_Type_commit(&r));
    MPI_Type_free(&t);
    return r;
}

/* The packed bytes of a record in type-map order. */
static void pack_rec(unsigned char *p, const struct rec *r, int reordered)
{
    if (!reordered) {
        memcpy(p, &r->c, 1);
        memcpy(p + 1, &r->d, 8);
        memcpy(p + 9, r->i, 12);
        memcpy(p + 21, &r->s, 2);
    } else {
        memcpy(p, r->i, 12);
        memcpy(p + 12, &r->c, 1);
        memcpy(p + 13, &r->s, 2);
        memcpy(p + 15, &r->d, 8);
    }
}

static void structs(void)
{
    section("C struct");
    struct rec src[NREC], dst[NREC];
    for (int k = 0; k < NREC; k++)
        fill_rec(&src[k], g_me, k);
    int results[4] = {0};
    for (int reordered = 0; reordered < 2; reordered++) {
        MPI_Datatype t = rec_type(reordered);
        int size = -1;
        MPI_Type_size(t, &size);
        CHECK(size == PACKED, "type size %d", size);
        /* -> the same struct type: fields right, gaps untouched */
        memset(dst, 0xEE, sizeof dst);
        int n = xchg(src, NREC, t, dst, NREC, t, 20 + reordered);
        int ok = n == NREC * PACKED;
        for (int k = 0; k < NREC; k++)
            ok &= rec_ok(&dst[k], g_left, k) && gaps_untouched(&dst[k]);
        CHECK(ok, "struct%s -> same struct: wrong (%d bytes)",
              reordered ? " (reordered)" : "", n);
        results[2 * reordered] = ok;
        /* -> MPI_BYTE: packed in type-map order */
        unsigned char bytes[NREC * PACKED + 8], want[NREC * PACKED];
        memset(bytes, 0xEE, sizeof bytes);
        n = xchg_nb(src, NREC, t, bytes, (int)sizeof bytes, MPI_BYTE, 22 + reordered);
        struct rec w;
        for (int k = 0; k < NREC; k++) {
            fill_rec(&w, g_left, k);
            pack_rec(want + k * PACKED, &w, reordered);
        }
        ok = n == NREC * PACKED && memcmp(bytes, want, sizeof want) == 0 &&
             bytes[NREC * PACKED] == 0xEE;
        CHECK(ok, "struct%s -> MPI_BYTE: wrong (%d bytes)",
              reordered ? " (reordered)" : "", n);
        results[2 * reordered + 1] = ok;
        MPI_Type_free(&t);
    }
    /* MPI_BYTE -> struct: the packed bytes land in the fields. */
    MPI_Datatype t = rec_type(0);
    unsigned char packed[NREC * PACKED];
    for (int k = 0; k < NREC; k++)
        pack_rec(packed + k * PACKED, &src[k], 0);
    memset(dst, 0xEE, sizeof dst);
    int n = xchg(packed, NREC * PACKED, MPI_BYTE, dst, NREC, t, 24);
    int ok = n == NREC * PACKED;
    for (int k = 0; k < NREC; k++)
        ok &= rec_ok(&dst[k], g_left, k) && gaps_untouched(&dst[k]);
    CHECK(ok, "MPI_BYTE -> struct: wrong");
    MPI_Type_free(&t);
    out("C struct with gaps: ->struct %s, ->bytes %s; reordered: ->same %s, "
        "->bytes %s; bytes->struct %s", results[0] ? "right" : "WRONG",
        results[1] ? "right" : "WRONG", results[2] ? "right" : "WRONG",
        results[3] ? "right" : "WRONG", ok ? "right" : "WRONG");
}

/* ---- D: contiguous of vector ---- */

static void contig_of_vector(void)
{
    section("D contiguous of vector");
    MPI_Datatype v, c;
    MPI_OK(MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &v));
    MPI_OK(MPI_Type_contiguous(3, v, &c));
    MPI_OK(MPI_Type_commit(&c));
    MPI_Aint lb, ext;
    MPI_Type_get_extent(v, &lb, &ext);
    int vext = (int)(ext / (MPI_Aint)sizeof(double)); /* 17 */
    double src[2 * 3 * 17 + 8], flat[48];
    for (int i = 0; i < (int)(sizeof src / sizeof src[0]); i++)
        src[i] = dval(g_me, i);
    for (int i = 0; i < 48; i++)
        flat[i] = -1;
    int n = xchg(src, 2, c, flat, 48, MPI_DOUBLE, 30);
    int bad = 0, k = 0;
    for (int e = 0; e < 2 * 3; e++)
        for (int b = 0; b < 4; b++)
            for (int j = 0; j < 2; j++)
                bad += flat[k++] != dval(g_left, e * vext + b * 5 + j);
    CHECK(n == 48 * 8 && bad == 0, "contiguous(vector) -> doubles: %d wrong", bad);
    out("D contiguous(3, vector(4,2,5 doubles)) x2 -> 48 doubles: %d wrong", bad);
    MPI_Type_free(&v);
    MPI_Type_free(&c);
}

/* ---- E: resized ---- */

static void resized(void)
{
    section("E resized");
    MPI_Datatype r;
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &r));
    MPI_OK(MPI_Type_commit(&r));
    int src[21], dst[21], flat[7];
    for (int i = 0; i < 21; i++)
        src[i] = val(g_me, i);
    for (int i = 0; i < 7; i++)
        flat[i] = -1;
    int n = xchg(src, 7, r, flat, 7, MPI_INT, 40);
    int bad1 = 0, bad2 = 0;
    for (int k = 0; k < 7; k++)
        bad1 += flat[k] != val(g_left, 3 * k);
    CHECK(n == 28 && bad1 == 0, "resized -> ints: %d wrong", bad1);
    for (int i = 0; i < 21; i++)
        dst[i] = -1;
    n = xchg_nb(src, 7, MPI_INT, dst, 7, r, 41);
    for (int i = 0; i < 21; i++)
        bad2 += i % 3 == 0 ? dst[i] != val(g_left, i / 3) : dst[i] != -1;
    CHECK(n == 28 && bad2 == 0, "ints -> resized: %d wrong", bad2);
    out("E resized int (extent 3 ints): ->ints %d wrong, ints-> %d wrong", bad1, bad2);
    MPI_Type_free(&r);
}

/* ---- F: MPI_BOTTOM ---- */

static int s_abs_send[5], s_abs_recv[5];

static MPI_Datatype abs_type(int *a5, double *b3, int *c4)
{
    int bl[3] = {5, 3, 4};
    MPI_Aint ad[3];
    MPI_OK(MPI_Get_address(a5, &ad[0]));
    MPI_OK(MPI_Get_address(b3, &ad[1]));
    MPI_OK(MPI_Get_address(c4, &ad[2]));
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_INT}, t;
    MPI_OK(MPI_Type_create_struct(3, bl, ad, ty, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

static void bottom(void)
{
    section("F MPI_BOTTOM");
    double sb[3], rb[3];
    int *sc = must(malloc(4 * sizeof(int)), "malloc", 16);
    int *rc = must(malloc(4 * sizeof(int)), "malloc", 16);
    for (int i = 0; i < 5; i++) {
        s_abs_send[i] = val(g_me, i);
        s_abs_recv[i] = -1;
    }
    for (int i = 0; i < 3; i++) {
        sb[i] = dval(g_me, 10 + i);
        rb[i] = -1;
    }
    for (int i = 0; i < 4; i++) {
        sc[i] = val(g_me, 20 + i);
        rc[i] = -1;
    }
    MPI_Datatype st = abs_type(s_abs_send, sb, sc);
    MPI_Datatype rt = abs_type(s_abs_recv, rb, rc);
    int n = xchg(MPI_BOTTOM, 1, st, MPI_BOTTOM, 1, rt, 50);
    int bad = 0;
    for (int i = 0; i < 5; i++)
        bad += s_abs_recv[i] != val(g_left, i);
    for (int i = 0; i < 3; i++)
        bad += rb[i] != dval(g_left, 10 + i);
    for (int i = 0; i < 4; i++)
        bad += rc[i] != val(g_left, 20 + i);
    CHECK(n == 5 * 4 + 3 * 8 + 4 * 4 && bad == 0, "MPI_BOTTOM: %d bytes, %d wrong",
          n, bad);
    /* and nonblocking */
    for (int i = 0; i < 5; i++)
        s_abs_recv[i] = -1;
    n = xchg_nb(MPI_BOTTOM, 1, st, MPI_BOTTOM, 1, rt, 51);
    int bad2 = 0;
    for (int i = 0; i < 5; i++)
        bad2 += s_abs_recv[i] != val(g_left, i);
    CHECK(bad2 == 0, "MPI_BOTTOM nonblocking: %d wrong", bad2);
    out("F MPI_BOTTOM (static, stack, heap): %d wrong, nonblocking %d wrong", bad,
        bad2);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    free(sc);
    free(rc);
}

/* ---- G: partial receives ---- */

static void partial(void)
{
    section("G partial");
    MPI_Datatype c4;
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &c4));
    MPI_OK(MPI_Type_commit(&c4));
    int src[10], dst[20];
    for (int i = 0; i < 10; i++)
        src[i] = val(g_me, i);
    for (int i = 0; i < 20; i++)
        dst[i] = -1;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(src, 10, MPI_INT, g_right, 60, dst, 5, c4, g_left, 60,
                        MPI_COMM_WORLD, &st));
    int cnt_t, el_t, cnt_i;
    MPI_Count el_x;
    MPI_OK(MPI_Get_count(&st, c4, &cnt_t));
    MPI_OK(MPI_Get_elements(&st, c4, &el_t));
    MPI_OK(MPI_Get_elements_x(&st, c4, &el_x));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt_i));
    int bad = 0;
    for (int i = 0; i < 20; i++)
        bad += i < 10 ? dst[i] != val(g_left, i) : dst[i] != -1;
    CHECK(cnt_t == MPI_UNDEFINED && el_t == 10 && el_x == 10 && cnt_i == 10 &&
          bad == 0, "partial contiguous(4): count %d elements %d/%lld ints %d, "
          "%d wrong", cnt_t, el_t, (long long)el_x, cnt_i, bad);
    char b1[16];
    out("G 10 ints into 5 x contiguous(4 ints): Get_count %s, Get_elements %d, "
        "elements_x %lld, count(MPI_INT) %d, %d wrong", count_str(cnt_t, b1, sizeof b1),
        el_t, (long long)el_x, cnt_i, bad);
    MPI_Type_free(&c4);

    /* struct {int; double} received twice, but only int, double, int sent. */
    struct id {
        int i;
        double d;
    } rs[2], ss[2];
    int bl[2] = {1, 1};
    MPI_Aint off[2] = {offsetof(struct id, i), offsetof(struct id, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t0, t;
    MPI_OK(MPI_Type_create_struct(2, bl, off, ty, &t0));
    MPI_OK(MPI_Type_create_resized(t0, 0, sizeof(struct id), &t));
    MPI_OK(MPI_Type_commit(&t));
    /* sender: the first record and the int of the second (an indexed type
     * over the struct layout) */
    int sbl[3] = {1, 1, 1};
    MPI_Aint soff[3] = {offsetof(struct id, i), offsetof(struct id, d),
                        sizeof(struct id) + offsetof(struct id, i)};
    MPI_Datatype sty[3] = {MPI_INT, MPI_DOUBLE, MPI_INT}, s3;
    MPI_OK(MPI_Type_create_struct(3, sbl, soff, sty, &s3));
    MPI_OK(MPI_Type_commit(&s3));
    for (int k = 0; k < 2; k++) {
        ss[k].i = val(g_me, k);
        ss[k].d = dval(g_me, k);
        rs[k].i = -1;
        rs[k].d = -1;
    }
    MPI_OK(MPI_Sendrecv(ss, 1, s3, g_right, 61, rs, 2, t, g_left, 61,
                        MPI_COMM_WORLD, &st));
    int c2, e2, cb;
    MPI_OK(MPI_Get_count(&st, t, &c2));
    MPI_OK(MPI_Get_elements(&st, t, &e2));
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cb));
    int ok = rs[0].i == val(g_left, 0) && rs[0].d == dval(g_left, 0) &&
             rs[1].i == val(g_left, 1) && rs[1].d == -1;
    CHECK(c2 == MPI_UNDEFINED && e2 == 3 && cb == 16 && ok,
          "partial struct: count %d elements %d bytes %d data %s", c2, e2, cb,
          ok ? "right" : "wrong");
    out("G int,double,int into 2 x struct{int,double}: Get_count %s, "
        "Get_elements %d, bytes %d, data %s", count_str(c2, b1, sizeof b1), e2, cb,
        ok ? "right" : "WRONG");
    MPI_Type_free(&t0);
    MPI_Type_free(&t);
    MPI_Type_free(&s3);
}

/* ---- H: large vector ---- */

static void large_vector(void)
{
    section("H large vector");
    const int nb = 2000, bl = 50, stride = 80;
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(nb, bl, stride, MPI_DOUBLE, &v));
    MPI_OK(MPI_Type_commit(&v));
    size_t span = (size_t)nb * stride, flatn = (size_t)nb * bl;
    double *src = must(malloc(span * sizeof(double)), "malloc", span * 8);
    double *dst = must(malloc(span * sizeof(double)), "malloc", span * 8);
    double *flat = must(malloc(flatn * sizeof(double)), "malloc", flatn * 8);
    for (size_t i = 0; i < span; i++)
        src[i] = dval(g_me, (int)i);
    for (size_t i = 0; i < flatn; i++)
        flat[i] = -1;
    int n = xchg(src, 1, v, flat, (int)flatn, MPI_DOUBLE, 70);
    long bad1 = 0, bad2 = 0;
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < bl; j++)
            bad1 += flat[(size_t)b * bl + j] != dval(g_left, b * stride + j);
    CHECK(n == (int)(flatn * 8) && bad1 == 0, "large vector -> doubles: %ld wrong",
          bad1);
    for (size_t i = 0; i < flatn; i++)
        flat[i] = dval(g_me, (int)i);
    for (size_t i = 0; i < span; i++)
        dst[i] = -1;
    n = xchg_nb(flat, (int)flatn, MPI_DOUBLE, dst, 1, v, 71);
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < stride; j++) {
            double x = dst[(size_t)b * stride + j];
            bad2 += j < bl ? x != dval(g_left, b * bl + j) : x != -1;
        }
    CHECK(n == (int)(flatn * 8) && bad2 == 0, "doubles -> large vector: %ld wrong",
          bad2);
    out("H vector(2000 x 50 doubles, stride 80): ->doubles %ld wrong, doubles-> "
        "%ld wrong", bad1, bad2);
    free(src);
    free(dst);
    free(flat);
    MPI_Type_free(&v);
}

/* ---- I: zero-size type ---- */

static void zero_size(void)
{
    section("I zero-size type");
    MPI_Datatype z;
    MPI_OK(MPI_Type_contiguous(0, MPI_INT, &z));
    MPI_OK(MPI_Type_commit(&z));
    int buf[4] = {1, 2, 3, 4}, rb[4] = {-1, -1, -1, -1};
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(buf, 3, z, g_right, 80, rb, 4, MPI_INT, g_left, 80,
                        MPI_COMM_WORLD, &st));
    int c = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &c));
    int untouched = rb[0] == -1 && rb[3] == -1;
    CHECK(c == 0 && untouched, "zero-size type: count %d", c);
    out("I 3 x contiguous(0 ints): count %d, buffer %s", c,
        untouched ? "untouched" : "WRITTEN");
    MPI_Type_free(&z);
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_left = (rank - 1 + size) % size;
    g_right = (rank + 1) % size;
    vector();
    indexed();
    structs();
    contig_of_vector();
    resized();
    bottom();
    partial();
    large_vector();
    zero_size();
    return p2p_finish("datatypes", rank, size);
}

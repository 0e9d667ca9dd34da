/*
 * p2p_strided.c - point-to-point conformance: derived datatypes too large
 * to go inline, which heapmpi moves by their layouts (src/dt/plan.rs): the
 * receiver copies from the sender's buffer block by block, without
 * MPI_Pack/MPI_Unpack.
 *
 * Why: the copy must put every byte where the receive type map says, in
 * type-map order, gaps untouched, for every pair of layouts (vectors,
 * hvectors with negative strides, subarrays in C and Fortran order,
 * resized and single-block struct types, MPI_BOTTOM with absolute
 * addresses), for a partial last element and a truncated message, with
 * the datatypes freed while the operations are pending, with persistent
 * and synchronous sends, from a buffer outside the shared heap, and when
 * the sender stops waiting for a late receiver or the receive is matched
 * while its rank sleeps.
 *
 * The expected receive buffer is computed with the real MPI's MPI_Pack of
 * the sender's layout (rebuilt on the receiver from the same pattern) and
 * MPI_Unpack into the receive layout; the whole receive span is compared,
 * gaps included.
 *
 * Ranks 0 and 1 exchange; further ranks only take part in the report.
 * Output (stdout, rank order): one line per case with a hash of the
 * received span, then "rank N: strided ok".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2p_util.h"

/* A layout: count elements of a datatype over a buffer of `span` bytes,
 * the elements starting `at` bytes into it. */
typedef struct {
    MPI_Datatype t;
    int count;
    size_t span;
    size_t at;
} lay;

static lay mk(MPI_Datatype t, int count)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
    MPI_OK(MPI_Type_get_true_extent(t, &tlb, &text));
    /* from the lowest byte touched to one past the highest */
    MPI_Aint lo = tlb, hi = tlb + text;
    if (count > 1) {
        MPI_Aint reach = (MPI_Aint)(count - 1) * ext;
        if (reach < 0)
            lo += reach;
        else
            hi += reach;
    }
    lay l = {t, count, (size_t)(hi - lo) + 64, (size_t)(-lo) + 32};
    return l;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 9)) % 251u + 1u);
}

/* What the receive buffer must hold: the sender's pattern packed by its
 * layout, unpacked by the receive layout over a buffer of 0xEE (`bytes`
 * limits a partial receive). */
static unsigned char *expected(const lay *s, unsigned seed, const lay *r, int bytes)
{
    unsigned char *src = must(malloc(s->span), "malloc", s->span);
    fill(src, s->span, seed);
    int psize = 0;
    MPI_OK(MPI_Pack_size(s->count, s->t, MPI_COMM_SELF, &psize));
    unsigned char *packed = must(malloc((size_t)psize + 1), "malloc", 0);
    int pos = 0;
    MPI_OK(MPI_Pack(src + s->at, s->count, s->t, packed, psize, &pos, MPI_COMM_SELF));
    unsigned char *want = must(malloc(r->span), "malloc", r->span);
    memset(want, 0xEE, r->span);
    int rsize = 0;
    MPI_OK(MPI_Type_size(r->t, &rsize));
    int n = bytes < pos ? bytes : pos;
    if (rsize > 0) {
        int whole = n / rsize, rest = n % rsize;
        int upos = 0;
        MPI_OK(MPI_Unpack(packed, psize, &upos, want + r->at, whole, r->t, MPI_COMM_SELF));
        if (rest > 0) {
            /* a partial element: the bytes there are, in type-map order,
             * through a contiguous byte view of one element's packed form */
            unsigned char *one = must(malloc((size_t)rsize), "malloc", 0);
            /* unpack a full element built from the rest and what the
             * buffer already holds there (0xEE), then restore it */
            MPI_Aint lb, ext;
            MPI_OK(MPI_Type_get_extent(r->t, &lb, &ext));
            unsigned char *elem = want + r->at + (size_t)whole * (size_t)ext;
            int q = 0;
            MPI_OK(MPI_Pack(elem, 1, r->t, one, rsize, &q, MPI_COMM_SELF));
            memcpy(one, packed + (size_t)whole * (size_t)rsize, (size_t)rest);
            q = 0;
            MPI_OK(MPI_Unpack(one, rsize, &q, elem, 1, r->t, MPI_COMM_SELF));
            free(one);
        }
    }
    free(packed);
    free(src);
    return want;
}

static void report(const char *name, const unsigned char *got, const unsigned char *want,
                   size_t n)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    CHECK(bad == 0, "%s: %zu of %zu bytes differ, the first at %zu (got %u, want %u)", name,
          bad, n, first, got[first], want[first]);
    out("%s: %zu bytes, hash %08x", name, n, fnv1a(FNV_INIT, got, n));
}

/* Rank 0 sends `s` to rank 1, which receives it into `r` (and the other
 * way round when `both`); `how` picks the calls. */
enum how { PLAIN, ISEND_FREE, SSEND, PERSIST, STACK, LATE_RECV, SLEEPING_RECV };

static void one_way(int rank, const char *name, lay s, lay r, enum how how, int from)
{
    int peer = 1 - rank;
    if (rank > 1)
        return;
    unsigned seed = (unsigned)(from * 17 + 3);
    int rounds = how == PERSIST ? 3 : 1;
    for (int round = 0; round < rounds; round++) {
        unsigned sd = seed + (unsigned)round;
        if (rank == from) {
            unsigned char stackbuf[96 << 10];
            unsigned char *buf;
            if (how == STACK) {
                CHECK(s.span <= sizeof stackbuf, "stack case too large");
                buf = stackbuf;
            } else {
                buf = must(malloc(s.span), "malloc", s.span);
            }
            fill(buf, s.span, sd);
            MPI_Request q;
            switch (how) {
            case SSEND:
                MPI_OK(MPI_Ssend(buf + s.at, s.count, s.t, peer, 7, MPI_COMM_WORLD));
                break;
            case ISEND_FREE: {
                MPI_Datatype t;
                MPI_OK(MPI_Type_dup(s.t, &t));
                MPI_OK(MPI_Isend(buf + s.at, s.count, t, peer, 7, MPI_COMM_WORLD, &q));
                MPI_OK(MPI_Type_free(&t));
                MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
                break;
            }
            case PERSIST:
                MPI_OK(MPI_Send_init(buf + s.at, s.count, s.t, peer, 7, MPI_COMM_WORLD, &q));
                MPI_OK(MPI_Start(&q));
                MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
                MPI_OK(MPI_Request_free(&q));
                break;
            default:
                MPI_OK(MPI_Send(buf + s.at, s.count, s.t, peer, 7, MPI_COMM_WORLD));
            }
            if (buf != stackbuf)
                free(buf);
        } else {
            unsigned char *buf = must(malloc(r.span), "malloc", r.span);
            memset(buf, 0xEE, r.span);
            MPI_Status st;
            MPI_Request q;
            switch (how) {
            case ISEND_FREE: {
                MPI_Datatype t;
                MPI_OK(MPI_Type_dup(r.t, &t));
                MPI_OK(MPI_Irecv(buf + r.at, r.count, t, peer, 7, MPI_COMM_WORLD, &q));
                MPI_OK(MPI_Type_free(&t));
                MPI_OK(MPI_Wait(&q, &st));
                break;
            }
            case PERSIST:
                MPI_OK(MPI_Recv_init(buf + r.at, r.count, r.t, peer, 7, MPI_COMM_WORLD, &q));
                MPI_OK(MPI_Start(&q));
                MPI_OK(MPI_Wait(&q, &st));
                MPI_OK(MPI_Request_free(&q));
                break;
            case LATE_RECV:
                usleep(300 * 1000);
                MPI_OK(MPI_Recv(buf + r.at, r.count, r.t, peer, 7, MPI_COMM_WORLD, &st));
                break;
            case SLEEPING_RECV:
                MPI_OK(MPI_Irecv(buf + r.at, r.count, r.t, peer, 7, MPI_COMM_WORLD, &q));
                usleep(300 * 1000);
                MPI_OK(MPI_Wait(&q, &st));
                break;
            default:
                MPI_OK(MPI_Recv(buf + r.at, r.count, r.t, peer, 7, MPI_COMM_WORLD, &st));
            }
            int bytes = 0, elems = 0;
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &bytes));
            MPI_OK(MPI_Get_elements(&st, r.t, &elems));
            unsigned char *want = expected(&s, sd, &r, bytes);
            char what[160];
            snprintf(what, sizeof what, "%s (round %d, %d bytes, %d elements)", name, round,
                     bytes, elems);
            report(what, buf, want, r.span);
            free(want);
            free(buf);
        }
    }
}

static void both_ways(int rank, const char *name, lay a, lay b, enum how how)
{
    char n[128];
    snprintf(n, sizeof n, "%s, 0 to 1", name);
    one_way(rank, n, a, b, how, 0);
    snprintf(n, sizeof n, "%s, 1 to 0", name);
    one_way(rank, n, b, a, how, 1);
}

static MPI_Datatype vec(int n, int bl, int stride, MPI_Datatype base)
{
    MPI_Datatype t;
    MPI_OK(MPI_Type_vector(n, bl, stride, base, &t));
    return t;
}

static MPI_Datatype contig(int n, MPI_Datatype base)
{
    MPI_Datatype t;
    MPI_OK(MPI_Type_contiguous(n, base, &t));
    return t;
}

static void freel(lay *l)
{
    MPI_OK(MPI_Type_free(&l->t));
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);

    section("vector, contiguous");
    {
        lay v = mk(vec(3000, 3, 7, MPI_INT), 1);
        lay c = mk(contig(9000, MPI_INT), 1);
        lay w = mk(vec(1000, 9, 11, MPI_INT), 1);
        both_ways(rank, "vector(3000,3,7) int / 9000 int", v, c, PLAIN);
        both_ways(rank, "vector(3000,3,7) int / vector(1000,9,11) int", v, w, PLAIN);
        both_ways(rank, "vector / vector, synchronous", v, w, SSEND);
        both_ways(rank, "vector / vector, types freed while pending", v, w, ISEND_FREE);
        both_ways(rank, "vector / vector, persistent", v, w, PERSIST);
        both_ways(rank, "vector / vector, from the stack", v, w, STACK);
        one_way(rank, "vector / vector, late receiver", v, w, LATE_RECV, 0);
        one_way(rank, "vector / vector, receive matched while asleep", v, w, SLEEPING_RECV, 0);
        freel(&v);
        freel(&c);
        freel(&w);
    }

    section("negative strides, several elements");
    {
        MPI_Datatype h;
        MPI_OK(MPI_Type_create_hvector(6000, 1, -16, MPI_DOUBLE, &h));
        lay neg = mk(h, 1);
        lay v3 = mk(vec(2000, 1, 2, MPI_DOUBLE), 3);
        both_ways(rank, "hvector(6000,1,-16 B) double / 3 x vector(2000,1,2) double", neg, v3,
                  PLAIN);
        freel(&neg);
        freel(&v3);
    }

    section("subarrays");
    {
        MPI_Datatype a, b;
        int sz[3] = {20, 30, 40}, sub[3] = {20, 30, 4}, st[3] = {0, 0, 36};
        MPI_OK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &a));
        int fsz[3] = {8, 30, 20}, fsub[3] = {4, 30, 20}, fst[3] = {2, 0, 0};
        MPI_OK(MPI_Type_create_subarray(3, fsz, fsub, fst, MPI_ORDER_FORTRAN, MPI_DOUBLE, &b));
        lay sa = mk(a, 1), sb = mk(b, 1);
        both_ways(rank, "subarray C (4 planes of 20x30x40) / subarray Fortran (4 of 8x30x20)", sa, sb,
                  PLAIN);
        int sz2[2] = {100, 100}, sub2[2] = {80, 60}, st2[2] = {20, 25};
        MPI_OK(MPI_Type_create_subarray(2, sz2, sub2, st2, MPI_ORDER_C, MPI_INT, &a));
        lay s2 = mk(a, 1);
        lay c2 = mk(contig(4800, MPI_INT), 1);
        both_ways(rank, "subarray C 80x60 of 100x100 int / 4800 int", s2, c2, PLAIN);
        freel(&sa);
        freel(&sb);
        freel(&s2);
        freel(&c2);
    }

    section("resized, struct of one block");
    {
        MPI_Datatype r;
        MPI_OK(MPI_Type_create_resized(vec(4, 2, 3, MPI_INT), 0, 64, &r));
        lay rs = mk(r, 1000);
        lay c = mk(contig(8000, MPI_INT), 1);
        both_ways(rank, "1000 x resized(vector(4,2,3) int, 64) / 8000 int", rs, c, PLAIN);
        int bl = 5000;
        MPI_Aint disp = 24;
        MPI_Datatype types[1] = {MPI_DOUBLE}, s;
        MPI_OK(MPI_Type_create_struct(1, &bl, &disp, types, &s));
        lay st = mk(s, 1);
        lay v = mk(vec(2500, 2, 3, MPI_DOUBLE), 1);
        both_ways(rank, "struct{5000 double at 24} / vector(2500,2,3) double", st, v, PLAIN);
        freel(&rs);
        freel(&c);
        freel(&st);
        freel(&v);
    }

    section("MPI_BOTTOM");
    if (rank <= 1) {
        MPI_Datatype inner = vec(4000, 2, 3, MPI_INT);
        MPI_OK(MPI_Type_commit(&inner));
        size_t n = 4000 * 3 * sizeof(int);
        unsigned char *buf = must(malloc(n), "malloc", n);
        MPI_Aint addr;
        MPI_OK(MPI_Get_address(buf, &addr));
        int one = 1;
        MPI_Datatype abs_t;
        MPI_OK(MPI_Type_create_struct(1, &one, &addr, &inner, &abs_t));
        MPI_OK(MPI_Type_commit(&abs_t));
        if (rank == 0) {
            fill(buf, n, 99);
            MPI_OK(MPI_Send(MPI_BOTTOM, 1, abs_t, 1, 9, MPI_COMM_WORLD));
        } else {
            memset(buf, 0xEE, n);
            MPI_OK(MPI_Recv(MPI_BOTTOM, 1, abs_t, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            lay l = {inner, 1, n, 0};
            unsigned char *want = expected(&l, 99, &l, 1 << 30);
            report("MPI_BOTTOM, absolute struct of vector(4000,2,3) int", buf, want, n);
            free(want);
        }
        free(buf);
        MPI_OK(MPI_Type_free(&abs_t));
        MPI_OK(MPI_Type_free(&inner));
    }

    section("partial last element");
    {
        lay c = mk(contig(5000, MPI_INT), 1);
        lay v = mk(vec(100, 3, 7, MPI_INT), 20); /* room for 6000 ints */
        one_way(rank, "5000 int into 20 x vector(100,3,7) int", c, v, PLAIN, 0);
        freel(&c);
        freel(&v);
    }

    section("truncated");
    if (rank <= 1) {
        MPI_Comm comm;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
        lay big = mk(vec(3000, 3, 7, MPI_INT), 1);
        lay small = mk(vec(2000, 3, 7, MPI_INT), 1);
        if (rank == 0) {
            unsigned char *buf = must(malloc(big.span), "malloc", big.span);
            fill(buf, big.span, 5);
            MPI_OK(MPI_Send(buf + big.at, 1, big.t, 1, 3, comm));
            free(buf);
        } else {
            unsigned char *buf = must(malloc(small.span), "malloc", small.span);
            memset(buf, 0xEE, small.span);
            MPI_Status st;
            int rc = MPI_Recv(buf + small.at, 1, small.t, 0, 3, comm, &st);
            int cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            out("vector(3000,3,7) int into vector(2000,3,7) int: %s", err_class_name(cls));
            free(buf);
        }
        freel(&big);
        freel(&small);
        MPI_OK(MPI_Comm_free(&comm));
    }

    section("16 MiB vector of doubles");
    {
        lay a = mk(vec(2 << 20, 1, 2, MPI_DOUBLE), 1);
        lay b = mk(vec(1 << 20, 2, 3, MPI_DOUBLE), 1);
        both_ways(rank, "vector(2M,1,2) double / vector(1M,2,3) double", a, b, PLAIN);
        freel(&a);
        freel(&b);
    }

    return p2p_finish("strided", rank, size);
}

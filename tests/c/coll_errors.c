/*
 * coll_errors.c - collective conformance: errors under MPI_ERRORS_RETURN.
 *
 * Why: heapmpi takes the collectives of node-local communicators itself,
 * and leaves arguments it does not judge to the real MPI. Whatever the path,
 * an invalid argument must give the error class the stock MPI gives,
 * through the communicator's error handler (MPI_ERRORS_RETURN is respected:
 * the call returns, nothing aborts, nothing hangs), and the (operation,
 * datatype) pairs the standard does not define must be accepted or refused
 * exactly as the stock MPI does (Open MPI and MPICH differ there: each
 * heapmpi run is compared with the stock run of the same MPI). Afterwards,
 * collectives must still work.
 *
 * Every rank passes the same invalid argument, in a position that is
 * significant on every rank, so that no rank enters a collective that
 * another one refused.
 *
 * Sections (on a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN; the
 * handlers of MPI_COMM_WORLD and MPI_COMM_SELF are MPI_ERRORS_RETURN too):
 *  A. root -1 and root = size: Bcast, Reduce, Gather, Scatter, Gatherv,
 *     Scatterv;
 *  B. MPI_OP_NULL: Reduce, Allreduce, Reduce_scatter_block, Reduce_scatter,
 *     Scan, Exscan;
 *  C. MPI_DATATYPE_NULL and an uncommitted datatype: every collective;
 *  D. count -1: every collective with a count;
 *  E. MPI_COMM_NULL: every collective;
 *  F. (operation, type) pairs outside the standard's table: Allreduce and
 *     Reduce of MPI_SUM on MPI_BYTE, MPI_CHAR, MPI_WCHAR, MPI_2INT, a
 *     contiguous type of 2 ints and a duplicate of MPI_INT, MPI_LAND on MPI_LONG_DOUBLE, MPI_MAX on
 *     MPI_C_BOOL and MPI_C_DOUBLE_COMPLEX, MPI_BAND on MPI_DOUBLE,
 *     MPI_MAXLOC on MPI_INT, MPI_REPLACE and MPI_NO_OP on MPI_INT: the class,
 *     and the result where the MPI accepts the pair;
 *  G. afterwards: Barrier, Bcast, Allreduce, Allgather on the duplicate and
 *     on MPI_COMM_WORLD are right.
 *
 * Output (stdout, rank 0, rank order): per-rank lines with error classes by
 * name, then "rank N: errors ok". Exit status 0 on success, 1 on a failed
 * check.
 */
#define _GNU_SOURCE
#include <complex.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "coll_util.h"

static int g_me, g_n;

static int g_trace; /* COLL_TRACE=1: every call on stderr before it runs */

/* An erroneous call: prints its class. (The standard does not require an
 * MPI to detect errors: both stock MPIs let some of these pass, and what
 * is printed is compared with the stock run, not judged.) */
#define TRY(what, call)                                                  \
    do {                                                                 \
        if (g_trace)                                                     \
            fprintf(stderr, "rank %d: %s\n", g_me, what);                \
        int try_rc_ = (call);                                            \
        out("%s: %s", what, err_class_name(err_class(try_rc_)));         \
    } while (0)

#define BUFN 64

static void invalid_roots(MPI_Comm d)
{
    section("A roots");
    int sb[BUFN] = {0}, rb[BUFN * 8] = {0};
    int cnt[8] = {1, 1, 1, 1, 1, 1, 1, 1}, dsp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const int roots[2] = {-1, g_n};
    const char *rn[2] = {"-1", "size"};
    char w[128];
    for (int i = 0; i < 2; i++) {
        int root = roots[i];
        snprintf(w, sizeof w, "A Bcast root %s", rn[i]);
        TRY(w, MPI_Bcast(sb, 1, MPI_INT, root, d));
        snprintf(w, sizeof w, "A Reduce root %s", rn[i]);
        TRY(w, MPI_Reduce(sb, rb, 1, MPI_INT, MPI_SUM, root, d));
        snprintf(w, sizeof w, "A Gather root %s", rn[i]);
        TRY(w, MPI_Gather(sb, 1, MPI_INT, rb, 1, MPI_INT, root, d));
        snprintf(w, sizeof w, "A Scatter root %s", rn[i]);
        TRY(w, MPI_Scatter(sb, 1, MPI_INT, rb, 1, MPI_INT, root, d));
        snprintf(w, sizeof w, "A Gatherv root %s", rn[i]);
        TRY(w, MPI_Gatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, root, d));
        snprintf(w, sizeof w, "A Scatterv root %s", rn[i]);
        TRY(w, MPI_Scatterv(sb, cnt, dsp, MPI_INT, rb, 1, MPI_INT, root, d));
    }
}

static void op_null(MPI_Comm d)
{
    section("B MPI_OP_NULL");
    int sb[BUFN] = {0}, rb[BUFN * 8] = {0};
    int rc[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    TRY("B Reduce MPI_OP_NULL", MPI_Reduce(sb, rb, 1, MPI_INT, MPI_OP_NULL, 0, d));
    TRY("B Allreduce MPI_OP_NULL", MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_OP_NULL, d));
    TRY("B Reduce_scatter_block MPI_OP_NULL",
        MPI_Reduce_scatter_block(sb, rb, 1, MPI_INT, MPI_OP_NULL, d));
    TRY("B Reduce_scatter MPI_OP_NULL",
        MPI_Reduce_scatter(sb, rb, rc, MPI_INT, MPI_OP_NULL, d));
    TRY("B Scan MPI_OP_NULL", MPI_Scan(sb, rb, 1, MPI_INT, MPI_OP_NULL, d));
    TRY("B Exscan MPI_OP_NULL", MPI_Exscan(sb, rb, 1, MPI_INT, MPI_OP_NULL, d));
}

static void bad_types(MPI_Comm d)
{
    section("C datatypes");
    int sb[BUFN * 8] = {0}, rb[BUFN * 8] = {0};
    int cnt[8] = {1, 1, 1, 1, 1, 1, 1, 1}, dsp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    MPI_Datatype unc;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &unc));
    MPI_Datatype ts[2] = {MPI_DATATYPE_NULL, unc};
    const char *tn[2] = {"MPI_DATATYPE_NULL", "an uncommitted type"};
    char w[160];
    for (int i = 0; i < 2; i++) {
        MPI_Datatype t = ts[i];
#define T(name, call)                                                    \
    do {                                                                 \
        snprintf(w, sizeof w, "C %s with %s", name, tn[i]);              \
        TRY(w, call);                                                    \
    } while (0)
        T("Bcast", MPI_Bcast(sb, 1, t, 0, d));
        if (i == 0) {
            /* predefined operations on the uncommitted (derived) type are
             * section F's business */
            T("Reduce", MPI_Reduce(sb, rb, 1, t, MPI_SUM, 0, d));
            T("Allreduce", MPI_Allreduce(sb, rb, 1, t, MPI_SUM, d));
            T("Reduce_scatter_block", MPI_Reduce_scatter_block(sb, rb, 1, t, MPI_SUM, d));
            T("Scan", MPI_Scan(sb, rb, 1, t, MPI_SUM, d));
            T("Exscan", MPI_Exscan(sb, rb, 1, t, MPI_SUM, d));
        }
        T("Gather (send type)", MPI_Gather(sb, 1, t, rb, 1, MPI_INT, 0, d));
        T("Scatter (receive type)", MPI_Scatter(sb, 1, MPI_INT, rb, 1, t, 0, d));
        T("Allgather (send type)", MPI_Allgather(sb, 1, t, rb, 1, MPI_INT, d));
        T("Allgather (receive type)", MPI_Allgather(sb, 1, MPI_INT, rb, 1, t, d));
        T("Alltoall (send type)", MPI_Alltoall(sb, 1, t, rb, 1, MPI_INT, d));
        T("Gatherv (send type)", MPI_Gatherv(sb, 1, t, rb, cnt, dsp, MPI_INT, 0, d));
        T("Scatterv (receive type)", MPI_Scatterv(sb, cnt, dsp, MPI_INT, rb, 1, t, 0, d));
        T("Allgatherv (send type)", MPI_Allgatherv(sb, 1, t, rb, cnt, dsp, MPI_INT, d));
        T("Alltoallv (send type)", MPI_Alltoallv(sb, cnt, dsp, t, rb, cnt, dsp, MPI_INT, d));
#undef T
    }
    MPI_Type_free(&unc);
}

static void negative_counts(MPI_Comm d)
{
    section("D counts");
    int sb[BUFN * 8] = {0}, rb[BUFN * 8] = {0};
    int neg[8] = {-1, -1, -1, -1, -1, -1, -1, -1}, dsp[8] = {0};
    TRY("D Bcast count -1", MPI_Bcast(sb, -1, MPI_INT, 0, d));
#ifndef MPICH_VERSION
    /* Stock MPICH 4.0.2 does not check the count of the reductions (Reduce,
     * Allreduce, Reduce_scatter_block, Scan, Exscan): it returns
     * MPI_SUCCESS at one rank and crashes at more (SIGSEGV in MPI_Reduce;
     * "Assertion failed in typerep_yaksa_pack.c" in MPI_Scan). */
    TRY("D Reduce count -1", MPI_Reduce(sb, rb, -1, MPI_INT, MPI_SUM, 0, d));
    TRY("D Allreduce count -1", MPI_Allreduce(sb, rb, -1, MPI_INT, MPI_SUM, d));
#endif
    TRY("D Gather sendcount -1", MPI_Gather(sb, -1, MPI_INT, rb, 1, MPI_INT, 0, d));
    TRY("D Scatter recvcount -1", MPI_Scatter(sb, 1, MPI_INT, rb, -1, MPI_INT, 0, d));
    TRY("D Allgather sendcount -1", MPI_Allgather(sb, -1, MPI_INT, rb, 1, MPI_INT, d));
    TRY("D Alltoall sendcount -1", MPI_Alltoall(sb, -1, MPI_INT, rb, 1, MPI_INT, d));
#ifndef MPICH_VERSION
    TRY("D Reduce_scatter_block count -1",
        MPI_Reduce_scatter_block(sb, rb, -1, MPI_INT, MPI_SUM, d));
#endif
    TRY("D Reduce_scatter recvcounts -1",
        MPI_Reduce_scatter(sb, rb, neg, MPI_INT, MPI_SUM, d));
#ifndef MPICH_VERSION
    TRY("D Scan count -1", MPI_Scan(sb, rb, -1, MPI_INT, MPI_SUM, d));
    TRY("D Exscan count -1", MPI_Exscan(sb, rb, -1, MPI_INT, MPI_SUM, d));
#endif
    TRY("D Allgatherv sendcount -1",
        MPI_Allgatherv(sb, -1, MPI_INT, rb, neg, dsp, MPI_INT, d));
}

static void comm_null(void)
{
    section("E MPI_COMM_NULL");
    int sb[BUFN * 8] = {0}, rb[BUFN * 8] = {0};
    int cnt[8] = {1, 1, 1, 1, 1, 1, 1, 1}, dsp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    MPI_Comm c = MPI_COMM_NULL;
    TRY("E Barrier on MPI_COMM_NULL", MPI_Barrier(c));
    TRY("E Bcast on MPI_COMM_NULL", MPI_Bcast(sb, 1, MPI_INT, 0, c));
    TRY("E Reduce on MPI_COMM_NULL", MPI_Reduce(sb, rb, 1, MPI_INT, MPI_SUM, 0, c));
    TRY("E Allreduce on MPI_COMM_NULL", MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_SUM, c));
    TRY("E Gather on MPI_COMM_NULL", MPI_Gather(sb, 1, MPI_INT, rb, 1, MPI_INT, 0, c));
    TRY("E Scatter on MPI_COMM_NULL", MPI_Scatter(sb, 1, MPI_INT, rb, 1, MPI_INT, 0, c));
#ifndef OPEN_MPI
    /* stock Open MPI 4.1.4 dereferences the communicator before checking it
     * (SIGSEGV at address 0x8) */
    TRY("E Allgather on MPI_COMM_NULL", MPI_Allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, c));
#endif
    TRY("E Alltoall on MPI_COMM_NULL", MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, c));
    TRY("E Gatherv on MPI_COMM_NULL",
        MPI_Gatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, 0, c));
    TRY("E Allgatherv on MPI_COMM_NULL",
        MPI_Allgatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, c));
    TRY("E Reduce_scatter_block on MPI_COMM_NULL",
        MPI_Reduce_scatter_block(sb, rb, 1, MPI_INT, MPI_SUM, c));
    TRY("E Scan on MPI_COMM_NULL", MPI_Scan(sb, rb, 1, MPI_INT, MPI_SUM, c));
    TRY("E Exscan on MPI_COMM_NULL", MPI_Exscan(sb, rb, 1, MPI_INT, MPI_SUM, c));
}

/* ---- F: pairs outside the standard ---- */

static void odd_pairs(MPI_Comm d)
{
    section("F odd pairs");
    MPI_Datatype c2;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &c2));
    MPI_OK(MPI_Type_commit(&c2));
    MPI_Datatype dup;
    MPI_OK(MPI_Type_dup(MPI_INT, &dup));
    struct {
        const char *name;
        MPI_Op op;
        MPI_Datatype t;
        size_t size;
    } P[] = {
        {"MPI_SUM on MPI_BYTE", MPI_SUM, MPI_BYTE, 1},
        {"MPI_SUM on MPI_CHAR", MPI_SUM, MPI_CHAR, 1},
        {"MPI_SUM on MPI_WCHAR", MPI_SUM, MPI_WCHAR, sizeof(wchar_t)},
        {"MPI_SUM on MPI_2INT", MPI_SUM, MPI_2INT, 8},
        {"MPI_SUM on contiguous(2, MPI_INT)", MPI_SUM, c2, 8},
        {"MPI_SUM on Type_dup(MPI_INT)", MPI_SUM, dup, 4},
#ifndef MPICH_VERSION
        /* stock MPICH 4.0.2 accepts the pair, then aborts when it combines
         * two values ("Assertion failed in file src/mpi/coll/op/opland.c") */
        {"MPI_LAND on MPI_LONG_DOUBLE", MPI_LAND, MPI_LONG_DOUBLE, sizeof(long double)},
#endif
        {"MPI_MAX on MPI_C_BOOL", MPI_MAX, MPI_C_BOOL, sizeof(bool)},
        {"MPI_MAX on MPI_C_DOUBLE_COMPLEX", MPI_MAX, MPI_C_DOUBLE_COMPLEX, 16},
        {"MPI_BAND on MPI_DOUBLE", MPI_BAND, MPI_DOUBLE, 8},
        {"MPI_MAXLOC on MPI_INT", MPI_MAXLOC, MPI_INT, 4},
        {"MPI_REPLACE on MPI_INT", MPI_REPLACE, MPI_INT, 4},
        {"MPI_NO_OP on MPI_INT", MPI_NO_OP, MPI_INT, 4},
    };
    const int np = (int)(sizeof P / sizeof P[0]);
    for (int i = 0; i < np; i++) {
        for (int k = 0; k < 2; k++) {
            /* 4 elements: small integers in every byte-sized slot, so a sum is
             * representable in any of these types */
            unsigned char sb[64], rb[64];
            memset(sb, 0, sizeof sb);
            memset(rb, 0, sizeof rb);
            for (size_t j = 0; j < 4 * P[i].size; j++)
                sb[j] = (unsigned char)(j % P[i].size == 0 ? g_me + 1 : 0);
            if (P[i].t == MPI_LONG_DOUBLE) {
                long double v[4] = {g_me + 1.0L, 0.0L, 1.0L, 2.0L};
                memset(sb, 0, sizeof sb);
                for (int j = 0; j < 4; j++)
                    memcpy(sb + j * sizeof(long double), &v[j], 10);
            }
            int rc = k == 0 ? MPI_Allreduce(sb, rb, 4, P[i].t, P[i].op, d)
                            : MPI_Reduce(sb, rb, 4, P[i].t, P[i].op, 0, d);
            char val[128] = "";
            int has_val = rc == MPI_SUCCESS && (k == 0 || g_me == 0);
            if (has_val) {
                /* the result's bytes (first byte of each slot for the
                 * byte-wise types; the whole values otherwise) */
                uint64_t h = hash_bytes(0, rb, 4 * P[i].size);
                if (P[i].t == MPI_LONG_DOUBLE) {
                    h = 0;
                    for (int j = 0; j < 4; j++)
                        h = hash_bytes(h, rb + j * sizeof(long double), 10);
                }
                snprintf(val, sizeof val, ", result checksum %016llx",
                         (unsigned long long)h);
            }
            out("F %s %s: %s%s", k == 0 ? "Allreduce" : "Reduce", P[i].name,
                err_class_name(err_class(rc)), val);
        }
    }
    MPI_Type_free(&c2);
    MPI_Type_free(&dup);
}

/* ---- G: afterwards ---- */

static void afterwards(MPI_Comm d)
{
    section("G afterwards");
    MPI_Comm cs[2] = {d, MPI_COMM_WORLD};
    const char *cn[2] = {"the duplicate", "MPI_COMM_WORLD"};
    for (int k = 0; k < 2; k++) {
        MPI_Comm c = cs[k];
        int ok = 1;
        MPI_OK(MPI_Barrier(c));
        int b[2] = {g_me == g_n - 1 ? 99 : -1, g_me == g_n - 1 ? 98 : -1};
        MPI_OK(MPI_Bcast(b, 2, MPI_INT, g_n - 1, c));
        ok &= b[0] == 99 && b[1] == 98;
        int x = g_me + 1, s = 0;
        MPI_OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, c));
        ok &= s == g_n * (g_n + 1) / 2;
        int *ag = must(calloc((size_t)g_n, sizeof(int)), "calloc", 0);
        MPI_OK(MPI_Allgather(&x, 1, MPI_INT, ag, 1, MPI_INT, c));
        for (int i = 0; i < g_n; i++)
            ok &= ag[i] == i + 1;
        free(ag);
        CHECK(ok, "collectives on %s after the errors are wrong", cn[k]);
        out("G Barrier, Bcast, Allreduce, Allgather on %s after the errors: %s", cn[k],
            ok ? "right" : "WRONG");
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    g_me = rank;
    g_n = size;
    g_trace = getenv("COLL_TRACE") != NULL;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    /* a first collective on the duplicate (heapmpi sets up its node state
     * for it) before the errors */
    MPI_OK(MPI_Barrier(d));
    invalid_roots(d);
    op_null(d);
    bad_types(d);
    negative_counts(d);
    comm_null();
    odd_pairs(d);
    afterwards(d);
    MPI_OK(MPI_Comm_free(&d));
    return coll_finish("errors", rank, size);
}

/*
 * p2p_errors.c - point-to-point conformance: errors under MPI_ERRORS_RETURN.
 *
 * Why: heapmpi handles node-local messages itself, so it also has to detect
 * and report the errors the real MPI would: truncation as MPI_ERR_TRUNCATE
 * (in the return code, and in the statuses of MPI_Waitall as
 * MPI_ERR_IN_STATUS), and invalid ranks, tags, counts, datatypes and
 * communicators with the same error class the stock MPI gives, through the
 * communicator's error handler (MPI_ERRORS_RETURN is respected: the call
 * returns, nothing aborts). After the errors, ordinary traffic must still
 * work: no hang, no corrupted or stray message.
 *
 * Only error CLASSES are printed (MPI_Error_class), by name. Classes may
 * differ between Open MPI and MPICH; each heapmpi run is compared with the
 * stock run of the same MPI.
 *
 * Sections:
 *  A. truncation (the sender sends 100 ints to the right, the receiver
 *     offers 10): MPI_Recv's return code; Irecv + Wait; Waitall over three
 *     receives of which the middle one truncates (MPI_ERR_IN_STATUS, the
 *     statuses' MPI_ERROR: SUCCESS, TRUNCATE, and SUCCESS or PENDING); a
 *     1 MiB message into a 1000-byte buffer (MPICH only: stock Open MPI
 *     corrupts memory); in every case nothing is written past the receive
 *     buffer and the sender's send succeeds;
 *  B. invalid arguments, each by every rank: destination / source size+5
 *     and MPI_ANY_SOURCE as a destination, negative tag on a send, tag above
 *     MPI_TAG_UB, tag -5 on a receive, negative count, MPI_DATATYPE_NULL,
 *     MPI_COMM_NULL (errors on MPI_COMM_SELF and MPI_COMM_WORLD return),
 *     for blocking and nonblocking sends and receives and for probes;
 *  C. afterwards: no stray message arrived (Iprobe after a barrier), and a
 *     ring exchange (8 B and 1 MiB, both directions) is intact.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines (error classes
 * by name), then "rank N: errors ok". Exit status 0 on success, 1 on a
 * failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define MIB (1 << 20)

static int g_size_;

/* ---- A: truncation ---- */

static int guard_untouched(const int *p, int from, int to)
{
    for (int i = from; i < to; i++)
        if (p[i] != -7)
            return 0;
    return 1;
}

static void truncation(int rank, int size)
{
    section("A truncation");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int sb[100], rb[200];
    for (int i = 0; i < 100; i++)
        sb[i] = rank * 1000 + i;

    /* A1: MPI_Recv. */
    for (int i = 0; i < 200; i++)
        rb[i] = -7;
    MPI_Request s;
    MPI_OK(MPI_Isend(sb, 100, MPI_INT, right, 10, MPI_COMM_WORLD, &s));
    MPI_Status st;
    int rc = MPI_Recv(rb, 10, MPI_INT, left, 10, MPI_COMM_WORLD, &st);
    int src_ok = st.MPI_SOURCE == left && st.MPI_TAG == 10;
    int src_rc = MPI_Wait(&s, MPI_STATUS_IGNORE);
    CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "Recv truncation: %s",
          err_class_name(err_class(rc)));
    CHECK(src_rc == MPI_SUCCESS, "sender's Wait after truncation: %s",
          err_class_name(err_class(src_rc)));
    CHECK(guard_untouched(rb, 10, 200), "Recv truncation wrote past 10 ints");
    CHECK(src_ok, "Recv truncation: status source %d tag %d", st.MPI_SOURCE,
          st.MPI_TAG);
    out("A Recv 100 ints into 10: %s, status source/tag %s, past the buffer "
        "%s, sender %s", err_class_name(err_class(rc)), src_ok ? "right" : "WRONG",
        guard_untouched(rb, 10, 200) ? "untouched" : "WRITTEN",
        err_class_name(err_class(src_rc)));

    /* A2: Irecv + Wait. */
    for (int i = 0; i < 200; i++)
        rb[i] = -7;
    MPI_Request r;
    MPI_OK(MPI_Irecv(rb, 10, MPI_INT, left, 11, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Isend(sb, 100, MPI_INT, right, 11, MPI_COMM_WORLD, &s));
    rc = MPI_Wait(&r, &st);
    src_rc = MPI_Wait(&s, MPI_STATUS_IGNORE);
    CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "Wait truncation: %s",
          err_class_name(err_class(rc)));
    CHECK(r == MPI_REQUEST_NULL, "Wait with an error did not free the request");
    CHECK(guard_untouched(rb, 10, 200), "Irecv truncation wrote past 10 ints");
    out("A Irecv+Wait 100 ints into 10: %s, request %s, past the buffer %s, "
        "sender %s", err_class_name(err_class(rc)),
        r == MPI_REQUEST_NULL ? "freed" : "NOT FREED",
        guard_untouched(rb, 10, 200) ? "untouched" : "WRITTEN",
        err_class_name(err_class(src_rc)));

    /* A3: Waitall over three receives, the middle one truncates. */
    int r3[3][100];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 100; i++)
            r3[j][i] = -7;
    MPI_Request rr[3], ss[3];
    for (int j = 0; j < 3; j++)
        MPI_OK(MPI_Irecv(r3[j], j == 1 ? 10 : 100, MPI_INT, left, 20 + j,
                         MPI_COMM_WORLD, &rr[j]));
    for (int j = 0; j < 3; j++)
        MPI_OK(MPI_Isend(sb, 100, MPI_INT, right, 20 + j, MPI_COMM_WORLD, &ss[j]));
    MPI_Status sts[3];
    for (int j = 0; j < 3; j++)
        sts[j].MPI_ERROR = -12345;
    rc = MPI_Waitall(3, rr, sts);
    src_rc = MPI_Waitall(3, ss, MPI_STATUSES_IGNORE);
    int cls[3];
    for (int j = 0; j < 3; j++)
        cls[j] = sts[j].MPI_ERROR == -12345 ? -12345 : err_class(sts[j].MPI_ERROR);
    CHECK(err_class(rc) == MPI_ERR_IN_STATUS, "Waitall: %s",
          err_class_name(err_class(rc)));
    CHECK(cls[0] == MPI_SUCCESS && cls[1] == MPI_ERR_TRUNCATE &&
          (cls[2] == MPI_SUCCESS || cls[2] == MPI_ERR_PENDING),
          "Waitall statuses: %d %d %d", cls[0], cls[1], cls[2]);
    /* The third receive: MPI_SUCCESS (completed; Open MPI), or
     * MPI_ERR_PENDING (MPICH stops at the first error: the request is still
     * active and is completed here). Either is correct MPI. */
    if (cls[2] == MPI_ERR_PENDING) {
        CHECK(rr[2] != MPI_REQUEST_NULL, "MPI_ERR_PENDING, yet the request is freed");
        if (rr[2] != MPI_REQUEST_NULL)
            MPI_OK(MPI_Wait(&rr[2], MPI_STATUS_IGNORE));
    } else {
        CHECK(rr[2] == MPI_REQUEST_NULL, "completed, yet the request is not freed");
    }
    CHECK(rr[0] == MPI_REQUEST_NULL && rr[1] == MPI_REQUEST_NULL,
          "completed requests not freed by Waitall");
    int data_ok = 1;
    for (int i = 0; i < 100; i++) {
        data_ok &= r3[0][i] == left * 1000 + i && r3[2][i] == left * 1000 + i;
        if (i >= 10)
            data_ok &= r3[1][i] == -7;
    }
    CHECK(data_ok, "Waitall with truncation: data of the other receives wrong "
          "or past the truncated buffer written");
    out("A Waitall (middle receive truncated): %s, statuses %s %s %s, data %s, "
        "senders %s", err_class_name(err_class(rc)),
        cls[0] == -12345 ? "unset" : err_class_name(cls[0]),
        cls[1] == -12345 ? "unset" : err_class_name(cls[1]),
        cls[2] == MPI_SUCCESS || cls[2] == MPI_ERR_PENDING ? "SUCCESS-or-PENDING"
                                                            : err_class_name(cls[2]),
        data_ok ? "right" : "WRONG", err_class_name(err_class(src_rc)));

    /* A4: 1 MiB into 1000 bytes (the large-message protocols). Not under
     * Open MPI: stock Open MPI 4.1.4 (vader + CMA) copies the whole message
     * into the short buffer and corrupts the receiver's heap ("Read -1,
     * expected 1048576", then "malloc(): corrupted top size"). */
#ifndef OPEN_MPI
    unsigned char *big = must(malloc(MIB), "malloc", MIB);
    unsigned char *small = must(malloc(2000), "malloc", 2000);
    wpattern_fill(big, MIB, (uint64_t)rank);
    memset(small, 0xA5, 2000);
    MPI_OK(MPI_Isend(big, MIB, MPI_BYTE, right, 30, MPI_COMM_WORLD, &s));
    rc = MPI_Recv(small, 1000, MPI_BYTE, left, 30, MPI_COMM_WORLD, &st);
    src_rc = MPI_Wait(&s, MPI_STATUS_IGNORE);
    int past = 0;
    for (int i = 1000; i < 2000; i++)
        past += small[i] != 0xA5;
    CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "1 MiB into 1000 B: %s",
          err_class_name(err_class(rc)));
    CHECK(past == 0, "1 MiB into 1000 B: %d bytes past the buffer written", past);
    out("A Recv 1 MiB into 1000 B: %s, past the buffer %s, sender %s",
        err_class_name(err_class(rc)), past ? "WRITTEN" : "untouched",
        err_class_name(err_class(src_rc)));
    free(big);
    free(small);
#endif
}

/* ---- B: invalid arguments ---- */

#define TRY(what, call)                                                  \
    do {                                                                 \
        int try_rc_ = (call);                                            \
        out("B %s: %s", what, err_class_name(err_class(try_rc_)));       \
        CHECK(try_rc_ != MPI_SUCCESS, "%s succeeded", what);             \
    } while (0)

/* A nonblocking call that fails must return an error; if it returned a
 * request anyway, complete it. */
#define TRY_NB(what, call, req)                                          \
    do {                                                                 \
        req = MPI_REQUEST_NULL;                                          \
        int try_rc_ = (call);                                            \
        out("B %s: %s", what, err_class_name(err_class(try_rc_)));       \
        CHECK(try_rc_ != MPI_SUCCESS, "%s succeeded", what);             \
        if (req != MPI_REQUEST_NULL)                                     \
            MPI_Wait(&req, MPI_STATUS_IGNORE);                           \
    } while (0)

static void invalid_arguments(int rank, int size)
{
    section("B invalid arguments");
    int right = (rank + 1) % size;
    int buf[16] = {0};
    int bad_rank = size + 5;
    int *ub = NULL, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    int big_tag = flag && ub != NULL && *ub < 0x7fffffff ? *ub + 1 : -1000;
    MPI_Status st;
    MPI_Request req;

    TRY("Send to rank size+5", MPI_Send(buf, 4, MPI_INT, bad_rank, 1, MPI_COMM_WORLD));
    TRY("Send to MPI_ANY_SOURCE",
        MPI_Send(buf, 4, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD));
    TRY("Recv from rank size+5",
        MPI_Recv(buf, 4, MPI_INT, bad_rank, 1, MPI_COMM_WORLD, &st));
    TRY_NB("Isend to rank size+5",
           MPI_Isend(buf, 4, MPI_INT, bad_rank, 1, MPI_COMM_WORLD, &req), req);
    TRY_NB("Irecv from rank size+5",
           MPI_Irecv(buf, 4, MPI_INT, bad_rank, 1, MPI_COMM_WORLD, &req), req);
    TRY("Ssend to rank size+5",
        MPI_Ssend(buf, 4, MPI_INT, bad_rank, 1, MPI_COMM_WORLD));
    TRY("Probe rank size+5", MPI_Probe(bad_rank, 1, MPI_COMM_WORLD, &st));
    TRY("Iprobe rank size+5", MPI_Iprobe(bad_rank, 1, MPI_COMM_WORLD, &flag, &st));

    TRY("Send with tag -5", MPI_Send(buf, 4, MPI_INT, right, -5, MPI_COMM_WORLD));
    TRY("Send with tag MPI_ANY_TAG",
        MPI_Send(buf, 4, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD));
    TRY("Send with tag TAG_UB+1",
        MPI_Send(buf, 4, MPI_INT, right, big_tag, MPI_COMM_WORLD));
    TRY_NB("Isend with tag -5",
           MPI_Isend(buf, 4, MPI_INT, right, -5, MPI_COMM_WORLD, &req), req);
    TRY("Recv with tag -5",
        MPI_Recv(buf, 4, MPI_INT, right, -5, MPI_COMM_WORLD, &st));
    TRY_NB("Irecv with tag -5",
           MPI_Irecv(buf, 4, MPI_INT, right, -5, MPI_COMM_WORLD, &req), req);

    TRY("Send with count -1", MPI_Send(buf, -1, MPI_INT, right, 1, MPI_COMM_WORLD));
    TRY("Recv with count -1",
        MPI_Recv(buf, -1, MPI_INT, right, 1, MPI_COMM_WORLD, &st));
    TRY_NB("Isend with count -1",
           MPI_Isend(buf, -1, MPI_INT, right, 1, MPI_COMM_WORLD, &req), req);
    TRY_NB("Irecv with count -1",
           MPI_Irecv(buf, -1, MPI_INT, right, 1, MPI_COMM_WORLD, &req), req);

    TRY("Send with MPI_DATATYPE_NULL",
        MPI_Send(buf, 4, MPI_DATATYPE_NULL, right, 1, MPI_COMM_WORLD));
    TRY("Recv with MPI_DATATYPE_NULL",
        MPI_Recv(buf, 4, MPI_DATATYPE_NULL, right, 1, MPI_COMM_WORLD, &st));
    TRY_NB("Isend with MPI_DATATYPE_NULL",
           MPI_Isend(buf, 4, MPI_DATATYPE_NULL, right, 1, MPI_COMM_WORLD, &req), req);
    TRY_NB("Irecv with MPI_DATATYPE_NULL",
           MPI_Irecv(buf, 4, MPI_DATATYPE_NULL, right, 1, MPI_COMM_WORLD, &req), req);

    MPI_Datatype unc;
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &unc));
    TRY("Send with an uncommitted type",
        MPI_Send(buf, 1, unc, right, 1, MPI_COMM_WORLD));
    TRY("Recv with an uncommitted type",
        MPI_Recv(buf, 1, unc, right, 1, MPI_COMM_WORLD, &st));
    TRY_NB("Isend with an uncommitted type",
           MPI_Isend(buf, 1, unc, right, 1, MPI_COMM_WORLD, &req), req);
    MPI_Type_free(&unc);

    TRY("Send from NULL with count 4",
        MPI_Send(NULL, 4, MPI_INT, right, 1, MPI_COMM_WORLD));
    TRY_NB("Isend from NULL with count 4",
           MPI_Isend(NULL, 4, MPI_INT, right, 1, MPI_COMM_WORLD, &req), req);

    TRY("Send on MPI_COMM_NULL", MPI_Send(buf, 4, MPI_INT, right, 1, MPI_COMM_NULL));
    TRY("Recv on MPI_COMM_NULL",
        MPI_Recv(buf, 4, MPI_INT, right, 1, MPI_COMM_NULL, &st));
    TRY_NB("Isend on MPI_COMM_NULL",
           MPI_Isend(buf, 4, MPI_INT, right, 1, MPI_COMM_NULL, &req), req);
    TRY_NB("Irecv on MPI_COMM_NULL",
           MPI_Irecv(buf, 4, MPI_INT, right, 1, MPI_COMM_NULL, &req), req);
    /* Not MPI_Probe on MPI_COMM_NULL: stock Open MPI 4.1.4 raises that error
     * on MPI_COMM_NULL's own handler, MPI_ERRORS_ARE_FATAL, and aborts. */
}

/* ---- C: traffic still works ---- */

static void still_works(int rank, int size)
{
    section("C afterwards");
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 0;
    MPI_Status st;
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "a stray message from %d tag %d arrived", st.MPI_SOURCE, st.MPI_TAG);
    /* nobody sends before every rank has looked */
    MPI_Barrier(MPI_COMM_WORLD);
    static const size_t sizes[2] = {8, MIB};
    int good = 0;
    for (int k = 0; k < 2; k++)
        for (int dir = 0; dir < 2; dir++) {
            size_t n = sizes[k];
            int dst = dir ? (rank + 1) % size : (rank - 1 + size) % size;
            int src = dir ? (rank - 1 + size) % size : (rank + 1) % size;
            unsigned char *sb = must(malloc(n), "malloc", n);
            unsigned char *rb = must(malloc(n), "malloc", n);
            wpattern_fill(sb, n, (uint64_t)rank * 10 + (uint64_t)(2 * k + dir));
            MPI_OK(MPI_Sendrecv(sb, (int)n, MPI_BYTE, dst, 40, rb, (int)n, MPI_BYTE,
                                src, 40, MPI_COMM_WORLD, &st));
            good += wpattern_check(rb, n, (uint64_t)src * 10 + (uint64_t)(2 * k + dir),
                                   "exchange after the errors");
            free(sb);
            free(rb);
        }
    out("C afterwards: stray message %s, %d of 4 exchanges right",
        flag ? "FOUND" : "none", good);
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    g_size_ = size;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    truncation(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    invalid_arguments(rank, size);
    still_works(rank, size);
    return p2p_finish("errors", rank, size);
}

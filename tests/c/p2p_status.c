/*
 * p2p_status.c - point-to-point conformance: what every call that returns
 * a status writes into it.
 *
 * Why: MPI says only the multiple-completion calls may write MPI_ERROR,
 * and only when they return MPI_ERR_IN_STATUS; beyond that the MPIs
 * differ (which calls set it to MPI_SUCCESS anyway, what a completed send's
 * or a null request's status holds). A program that reads a field must read
 * under heapmpi exactly what it reads under the same MPI stock. Every
 * status here starts filled with 0x5a bytes and a sentinel in MPI_ERROR,
 * and the program prints every public field as the call left it (the
 * sentinel as "kept"), plus MPI_Get_count / MPI_Get_elements /
 * MPI_Test_cancelled where MPI defines them; the harness compares the
 * output with the stock run's.
 *
 * Sections (peers: even rank s with s+1, and each rank with itself):
 *  A. single completion of a receive: Recv, Irecv+Wait, Irecv+Test,
 *     Request_get_status, Probe, Iprobe, Mprobe+Mrecv, Improbe+Imrecv+Wait,
 *     Sendrecv, Sendrecv_replace;
 *  B. multiple completion: Waitall/Testall over a receive and a send,
 *     Waitany/Testany/Waitsome/Testsome over a receive, over a send, and
 *     over a null entry; MPI_STATUS(ES)_IGNORE;
 *  C. empty statuses: Wait/Test/Request_get_status of MPI_REQUEST_NULL and
 *     of an inactive persistent request, Waitall with both, Waitany and
 *     Testany with nothing active;
 *  D. counts: a 0-byte message, a derived type (count, elements), a
 *     partial derived type (count MPI_UNDEFINED, elements the basic ones),
 *     MPI_PROC_NULL, a cancelled receive, a truncated receive returned under
 *     MPI_ERRORS_RETURN;
 *  E. a matched send's status that the program never initialised (filled
 *     with 0xff bytes): MPI_Test_cancelled after Wait, Test, Waitall,
 *     Waitany, Testany, Waitsome and Testsome, after an MPI_Cancel that
 *     came too late (the receive was done), 4 B and 400 KB. MPICH writes
 *     only the cancelled bit there (the MPICH suite's pt2pt/scancel2).
 *
 * Output (stdout, rank 0, rank order): one line per status, then
 * "rank N: status ok".
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define SENT 0x5a5a5a5a

static int g_me, g_size;
static MPI_Comm g_c; /* a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN */

static void fill(MPI_Status *s, int n)
{
    memset(s, 0x5a, sizeof *s * (size_t)n);
    for (int i = 0; i < n; i++)
        s[i].MPI_ERROR = SENT;
}

/* The value of a public field, as printed. */
static const char *field(int v, char *tmp, size_t n)
{
    if (v == SENT)
        return "kept";
    if (v == MPI_ANY_SOURCE)
        return "ANY_SOURCE";
    if (v == MPI_PROC_NULL)
        return "PROC_NULL";
    snprintf(tmp, n, "%d", v);
    return tmp;
}

/* Prints status s of case `what`; with `counts`, its count and elements in
 * `dt` and whether it is cancelled (which MPI defines for receives and empty
 * statuses only). Sources are printed relative to the peer. */
static void show(const char *what, const MPI_Status *s, int counts, MPI_Datatype dt, int peer)
{
    char a[32], b[32], c[32];
    int src = s->MPI_SOURCE;
    const char *srcs = src == peer && peer >= 0 ? "peer" : field(src, a, sizeof a);
    const char *err = s->MPI_ERROR == SENT ? "kept"
                      : s->MPI_ERROR == MPI_SUCCESS ? "SUCCESS"
                                                    : err_class_name(err_class(s->MPI_ERROR));
    if (!counts) {
        out("%s: source=%s tag=%s error=%s", what, srcs, field(s->MPI_TAG, b, sizeof b), err);
        return;
    }
    int cnt = -7, el = -7, cancelled = -7;
    MPI_Get_count(s, dt, &cnt);
    MPI_Get_elements(s, dt, &el);
    MPI_Test_cancelled(s, &cancelled);
    char d[32];
    out("%s: source=%s tag=%s error=%s count=%s elements=%s cancelled=%d", what, srcs,
        field(s->MPI_TAG, b, sizeof b), err,
        cnt == MPI_UNDEFINED ? "UNDEFINED" : field(cnt, c, sizeof c),
        el == MPI_UNDEFINED ? "UNDEFINED" : field(el, d, sizeof d), cancelled);
}

/* A message of n ints with tag t to `to` (nonblocking; completed by the
 * caller through the returned request). */
static MPI_Request isend_ints(const int *v, int n, int to, int t)
{
    MPI_Request r;
    MPI_OK(MPI_Isend(v, n, MPI_INT, to, t, g_c, &r));
    return r;
}

/* Section A with peer p (the rank itself, or its pair). */
static void single(int p, const char *who)
{
    int v[4] = {1, 2, 3, 4}, w[4];
    MPI_Status s[2];
    MPI_Request r, q;
    char name[96];
    int flag;

#define NAME(x) (snprintf(name, sizeof name, "A %s %s", who, x), name)
    fill(s, 1);
    q = isend_ints(v, 4, p, 1);
    MPI_OK(MPI_Recv(w, 4, MPI_INT, p, 1, g_c, s));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("Recv"), s, 1, MPI_INT, p);

    fill(s, 1);
    MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 2, g_c, &r));
    q = isend_ints(v, 3, p, 2);
    MPI_OK(MPI_Wait(&r, s));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("Irecv+Wait"), s, 1, MPI_INT, p);

    fill(s, 1);
    MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 3, g_c, &r));
    q = isend_ints(v, 2, p, 3);
    do
        MPI_OK(MPI_Test(&r, &flag, s));
    while (!flag);
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("Irecv+Test"), s, 1, MPI_INT, p);

    fill(s, 1);
    MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 4, g_c, &r));
    q = isend_ints(v, 1, p, 4);
    do
        MPI_OK(MPI_Request_get_status(r, &flag, s));
    while (!flag);
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("Request_get_status"), s, 1, MPI_INT, p);

    fill(s, 1);
    q = isend_ints(v, 4, p, 5);
    MPI_OK(MPI_Probe(p, 5, g_c, s));
    MPI_OK(MPI_Recv(w, 4, MPI_INT, p, 5, g_c, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("Probe"), s, 1, MPI_INT, p);

    fill(s, 1);
    q = isend_ints(v, 3, p, 6);
    do
        MPI_OK(MPI_Iprobe(p, 6, g_c, &flag, s));
    while (!flag);
    MPI_OK(MPI_Recv(w, 4, MPI_INT, p, 6, g_c, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("Iprobe"), s, 1, MPI_INT, p);

    MPI_Message m;
    fill(s, 2);
    q = isend_ints(v, 2, p, 7);
    MPI_OK(MPI_Mprobe(p, 7, g_c, &m, &s[0]));
    MPI_OK(MPI_Mrecv(w, 4, MPI_INT, &m, &s[1]));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("Mprobe"), &s[0], 1, MPI_INT, p);
    show(NAME("Mrecv"), &s[1], 1, MPI_INT, p);

    fill(s, 2);
    q = isend_ints(v, 1, p, 8);
    do
        MPI_OK(MPI_Improbe(p, 8, g_c, &flag, &m, &s[0]));
    while (!flag);
    MPI_OK(MPI_Imrecv(w, 4, MPI_INT, &m, &r));
    MPI_OK(MPI_Wait(&r, &s[1]));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("Improbe"), &s[0], 1, MPI_INT, p);
    show(NAME("Imrecv+Wait"), &s[1], 1, MPI_INT, p);

    fill(s, 1);
    MPI_OK(MPI_Sendrecv(v, 4, MPI_INT, p, 9, w, 4, MPI_INT, p, 9, g_c, s));
    show(NAME("Sendrecv"), s, 1, MPI_INT, p);

    fill(s, 1);
    memcpy(w, v, sizeof v);
    MPI_OK(MPI_Sendrecv_replace(w, 3, MPI_INT, p, 10, p, 10, g_c, s));
    show(NAME("Sendrecv_replace"), s, 1, MPI_INT, p);
#undef NAME
}

/* Section B with peer p. */
static void multiple(int p, const char *who)
{
    int v[4] = {1, 2, 3, 4}, w[4];
    MPI_Status s[3];
    MPI_Request rq[3];
    char name[96];
    int flag, idx, outc, ind[3];

#define NAME(x) (snprintf(name, sizeof name, "B %s %s", who, x), name)
    /* Waitall / Testall over [receive, send]. */
    fill(s, 2);
    MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 20, g_c, &rq[0]));
    rq[1] = isend_ints(v, 4, p, 20);
    MPI_OK(MPI_Waitall(2, rq, s));
    show(NAME("Waitall receive"), &s[0], 1, MPI_INT, p);
    show(NAME("Waitall send"), &s[1], 0, MPI_INT, -1);

    fill(s, 2);
    MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 21, g_c, &rq[0]));
    rq[1] = isend_ints(v, 3, p, 21);
    do
        MPI_OK(MPI_Testall(2, rq, &flag, s));
    while (!flag);
    show(NAME("Testall receive"), &s[0], 1, MPI_INT, p);
    show(NAME("Testall send"), &s[1], 0, MPI_INT, -1);

    /* Any/some over one receive, then over one send (its receive done). */
    for (int k = 0; k < 4; k++) {
        static const char *names[4] = {"Waitany", "Testany", "Waitsome", "Testsome"};
        for (int send = 0; send < 2; send++) {
            MPI_Request r, other;
            fill(s, 1);
            if (send) {
                r = isend_ints(v, 2, p, 30 + k);
                MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 30 + k, g_c, &other));
                MPI_OK(MPI_Wait(&other, MPI_STATUS_IGNORE));
            } else {
                MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 30 + k, g_c, &r));
                other = isend_ints(v, 2, p, 30 + k);
            }
            flag = 0;
            while (!flag) {
                switch (k) {
                case 0: MPI_OK(MPI_Waitany(1, &r, &idx, s)); flag = 1; break;
                case 1: MPI_OK(MPI_Testany(1, &r, &idx, &flag, s)); break;
                case 2: MPI_OK(MPI_Waitsome(1, &r, &outc, ind, s)); flag = 1; break;
                default: MPI_OK(MPI_Testsome(1, &r, &outc, ind, s)); flag = outc > 0; break;
                }
            }
            if (!send)
                MPI_OK(MPI_Wait(&other, MPI_STATUS_IGNORE));
            char nm[64];
            snprintf(nm, sizeof nm, "%s %s", names[k], send ? "send" : "receive");
            show(NAME(nm), s, !send, MPI_INT, send ? -1 : p);
        }
    }

    /* Ignored statuses: nothing is written, nothing breaks. */
    MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 40, g_c, &rq[0]));
    rq[1] = isend_ints(v, 4, p, 40);
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Irecv(w, 4, MPI_INT, p, 41, g_c, &rq[0]));
    rq[1] = isend_ints(v, 4, p, 41);
    do
        MPI_OK(MPI_Testsome(2, rq, &outc, ind, MPI_STATUSES_IGNORE));
    while (outc != MPI_UNDEFINED && (rq[0] != MPI_REQUEST_NULL || rq[1] != MPI_REQUEST_NULL));
    out("B %s ignored statuses: requests %s", who,
        rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL ? "completed" : "LEFT");
#undef NAME
}

/* Section C (local: persistent requests to the pair peer p). */
static void empty(int p)
{
    MPI_Status s[3];
    MPI_Request rq[3], pers;
    int w[4], flag, idx;
    MPI_OK(MPI_Recv_init(w, 4, MPI_INT, p, 50, g_c, &pers));

    fill(s, 1);
    rq[0] = MPI_REQUEST_NULL;
    MPI_OK(MPI_Wait(&rq[0], s));
    show("C Wait null", s, 1, MPI_INT, -1);
    fill(s, 1);
    MPI_OK(MPI_Test(&rq[0], &flag, s));
    show("C Test null", s, 1, MPI_INT, -1);
    fill(s, 1);
    MPI_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, s));
    show("C Request_get_status null", s, 1, MPI_INT, -1);

    fill(s, 1);
    MPI_OK(MPI_Wait(&pers, s));
    show("C Wait inactive", s, 1, MPI_INT, -1);
    fill(s, 1);
    MPI_OK(MPI_Test(&pers, &flag, s));
    show("C Test inactive", s, 1, MPI_INT, -1);
    fill(s, 1);
    MPI_OK(MPI_Request_get_status(pers, &flag, s));
    show("C Request_get_status inactive", s, 1, MPI_INT, -1);

    fill(s, 2);
    rq[0] = MPI_REQUEST_NULL;
    rq[1] = pers;
    MPI_OK(MPI_Waitall(2, rq, s));
    show("C Waitall null", &s[0], 1, MPI_INT, -1);
    show("C Waitall inactive", &s[1], 1, MPI_INT, -1);

    fill(s, 1);
    rq[0] = MPI_REQUEST_NULL;
    rq[1] = pers;
    MPI_OK(MPI_Waitany(2, rq, &idx, s));
    show("C Waitany nothing active", s, 1, MPI_INT, -1);
    out("C Waitany nothing active: index %s", idx == MPI_UNDEFINED ? "UNDEFINED" : "set");
    fill(s, 1);
    MPI_OK(MPI_Testany(2, rq, &idx, &flag, s));
    show("C Testany nothing active", s, 1, MPI_INT, -1);
    out("C Testany nothing active: flag %d index %s", flag,
        idx == MPI_UNDEFINED ? "UNDEFINED" : "set");
    MPI_OK(MPI_Request_free(&pers));
}

/* Section D with peer p. */
static void counts(int p, const char *who)
{
    int v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[8];
    MPI_Status s[1];
    MPI_Request q, r;
    char name[96];
#define NAME(x) (snprintf(name, sizeof name, "D %s %s", who, x), name)

    fill(s, 1);
    q = isend_ints(v, 0, p, 60);
    MPI_OK(MPI_Recv(w, 8, MPI_INT, p, 60, g_c, s));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("0 bytes"), s, 1, MPI_INT, p);

    MPI_Datatype three;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &three));
    MPI_OK(MPI_Type_commit(&three));
    fill(s, 1);
    q = isend_ints(v, 6, p, 61);
    MPI_OK(MPI_Recv(w, 2, three, p, 61, g_c, s));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("derived whole"), s, 1, three, p);
    fill(s, 1);
    q = isend_ints(v, 4, p, 62);
    MPI_OK(MPI_Recv(w, 2, three, p, 62, g_c, s));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    show(NAME("derived partial"), s, 1, three, p);
    MPI_OK(MPI_Type_free(&three));

    fill(s, 1);
    MPI_OK(MPI_Recv(w, 8, MPI_INT, MPI_PROC_NULL, 63, g_c, s));
    show(NAME("PROC_NULL"), s, 1, MPI_INT, -1);

    fill(s, 1);
    MPI_OK(MPI_Irecv(w, 8, MPI_INT, p, 64, g_c, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, s));
    int cancelled = -1;
    MPI_Test_cancelled(s, &cancelled);
    out("D %s cancelled receive: cancelled=%d", who, cancelled);

    fill(s, 1);
    q = isend_ints(v, 8, p, 65);
    int rc = MPI_Recv(w, 4, MPI_INT, p, 65, g_c, s);
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    out("D %s truncated Recv returns %s", who, err_class_name(err_class(rc)));
    show(NAME("truncated Recv"), s, 0, MPI_INT, p);
#undef NAME
}

/* Section E with the pair p. */
static void late_cancel(int p)
{
    static int v[100000], w[100000];
    const char *calls[] = {"Wait", "Test", "Waitall", "Waitany", "Testany", "Waitsome",
                           "Testsome"};
    for (int big = 0; big < 2; big++) {
        int n = big ? 100000 : 1;
        for (int c = 0; c < 7; c++) {
            MPI_Request q = isend_ints(v, n, p, 40 + c);
            MPI_OK(MPI_Recv(w, n, MPI_INT, p, 40 + c, g_c, MPI_STATUS_IGNORE));
            /* the peer has received our message too */
            MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, p, 50, NULL, 0, MPI_INT, p, 50, g_c,
                                MPI_STATUS_IGNORE));
            MPI_OK(MPI_Cancel(&q));
            MPI_Status s;
            memset(&s, 0xff, sizeof s);
            int flag = 0, idx = -1, outcount = 0;
            switch (c) {
            case 0: MPI_OK(MPI_Wait(&q, &s)); break;
            case 1:
                do
                    MPI_OK(MPI_Test(&q, &flag, &s));
                while (!flag);
                break;
            case 2: MPI_OK(MPI_Waitall(1, &q, &s)); break;
            case 3: MPI_OK(MPI_Waitany(1, &q, &idx, &s)); break;
            case 4:
                do
                    MPI_OK(MPI_Testany(1, &q, &idx, &flag, &s));
                while (!flag);
                break;
            case 5: MPI_OK(MPI_Waitsome(1, &q, &outcount, &idx, &s)); break;
            default:
                do
                    MPI_OK(MPI_Testsome(1, &q, &outcount, &idx, &s));
                while (outcount == 0);
            }
            int cancelled = -7;
            MPI_OK(MPI_Test_cancelled(&s, &cancelled));
            out("E %s of a matched %d B send cancelled too late: cancelled=%d", calls[c],
                4 * n, cancelled);
        }
    }
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv, &g_me, &g_size);
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &g_c));
    MPI_OK(MPI_Comm_set_errhandler(g_c, MPI_ERRORS_RETURN));
    int pair = g_me ^ 1;
    int has_pair = pair < g_size;

    section("A single completion");
    single(g_me, "self");
    if (has_pair)
        single(pair, "pair");
    section("B multiple completion");
    multiple(g_me, "self");
    if (has_pair)
        multiple(pair, "pair");
    section("C empty statuses");
    empty(has_pair ? pair : g_me);
    section("D counts");
    counts(g_me, "self");
    if (has_pair)
        counts(pair, "pair");
    section("E late cancel");
    if (has_pair)
        late_cancel(pair);

    MPI_OK(MPI_Comm_free(&g_c));
    return p2p_finish("status", g_me, g_size);
}

/*
 * p2p_probe.c - point-to-point conformance: MPI_Probe / MPI_Iprobe,
 * matched probes (MPI_Mprobe / MPI_Mrecv, MPI_Improbe / MPI_Imrecv) and
 * MPI_MESSAGE_NO_PROC.
 *
 * Why: a probe must see a message without taking it, and report its source,
 * tag and size through the real MPI's MPI_Get_count, whether the message sits
 * in heapmpi's queues or in the real MPI's (with pretend nodes some peers are
 * remote). A matched probe removes the message from matching: a receive
 * posted afterwards must get the next message, and MPI_Mrecv the probed one.
 *
 * Sections:
 *  A. Probe(ANY_SOURCE, ANY_TAG) -> Get_count -> malloc -> Recv(source, tag)
 *     of 8 messages from every peer (0 B .. 1 MiB, tag = sequence number):
 *     sizes, contents and per-sender order checked, counts per source printed;
 *  B. Iprobe: false while the sender cannot have sent (it waits for a
 *     barrier), for a specific and for a wildcard probe; then an Iprobe loop
 *     until the message is there; a probe for a later tag skips an earlier
 *     message of another tag; zero-byte messages;
 *  C. Mprobe(ANY_SOURCE) of the first of two same-tag messages from a
 *     sender, then an Irecv for that sender, then Mrecv: the Mrecv gets the
 *     first message, the Irecv the second;
 *  D. Improbe: flag 0 before the sender can have sent, then a loop; Imrecv
 *     + Wait; 1 MiB messages;
 *  E. MPI_PROC_NULL: Probe / Iprobe give source MPI_PROC_NULL, tag
 *     MPI_ANY_TAG, count 0; Mprobe / Improbe give MPI_MESSAGE_NO_PROC, and
 *     Mrecv / Imrecv on it complete at once with that status.
 *
 * Output (stdout, rank 0, rank order): per-rank result lines, then
 * "rank N: probe ok". Exit status 0 on success, 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2p_util.h"

#define MIB (1 << 20)
#define NP 8

static uint64_t seed_of(int src, int dst, int tag)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 36) ^ (uint64_t)tag;
}

static size_t probe_size(int src, int k)
{
    static const size_t sz[NP] = {0, 8, 1000, 4096, 65536, 100000, MIB, 17};
    return sz[(k + 3 * src) % NP];
}

static int status_is(const MPI_Status *st, int src, int tag, int count)
{
    int c = -1;
    MPI_Get_count(st, MPI_BYTE, &c);
    return st->MPI_SOURCE == src && st->MPI_TAG == tag && c == count;
}

static void probe_get_count_recv(int rank, int size)
{
    section("A Probe+Get_count+Recv");
    int nreq = 0;
    MPI_Request *reqs = must(calloc((size_t)size * NP, sizeof *reqs), "calloc", 0);
    unsigned char **bufs = must(calloc((size_t)size * NP, sizeof *bufs), "calloc", 0);
    for (int k = 0; k < NP; k++)
        for (int i = 1; i < size; i++) {
            int dst = (rank + i) % size;
            size_t n = probe_size(rank, k);
            bufs[nreq] = must(malloc(n + 1), "malloc", n + 1);
            wpattern_fill(bufs[nreq], n, seed_of(rank, dst, k));
            MPI_OK(MPI_Isend(bufs[nreq], (int)n, MPI_BYTE, dst, k, MPI_COMM_WORLD,
                             &reqs[nreq]));
            nreq++;
        }
    int *next = must(calloc((size_t)size, sizeof *next), "calloc", 0);
    int good = 0;
    for (int m = 0; m < (size - 1) * NP; m++) {
        MPI_Status st;
        MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int src = st.MPI_SOURCE, tag = st.MPI_TAG, n = -1;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
        if (src < 0 || src >= size || src == rank || n < 0) {
            CHECK(0, "probe %d: source %d count %d", m, src, n);
            break;
        }
        int k = next[src]++;
        CHECK(tag == k && n == (int)probe_size(src, k),
              "probe %d from %d: tag %d count %d, expected message %d (%zu B)",
              m, src, tag, n, k, probe_size(src, k));
        unsigned char *b = must(malloc((size_t)n + 1), "malloc", (size_t)n + 1);
        MPI_Status rs;
        MPI_OK(MPI_Recv(b, n, MPI_BYTE, src, tag, MPI_COMM_WORLD, &rs));
        CHECK(status_is(&rs, src, tag, n), "Recv after Probe: status differs");
        char what[64];
        snprintf(what, sizeof what, "message %d from %d", k, src);
        if (tag == k && status_is(&rs, src, tag, n) &&
            wpattern_check(b, (size_t)n, seed_of(src, rank, k), what))
            good++;
        free(b);
    }
    MPI_OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    for (int s = 0; s < size; s++)
        if (s != rank)
            out("A Probe(ANY_SOURCE, ANY_TAG)+Get_count+Recv: from %d: %d messages",
                s, next[s]);
    out("A Probe+Get_count+Recv: %d of %d right and in order", good,
        (size - 1) * NP);
    for (int i = 0; i < nreq; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    free(next);
}

static void iprobe(int rank, int size)
{
    section("B Iprobe");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int early = 0, flag = 0;
    MPI_OK(MPI_Iprobe(left, 100, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    early += flag;
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                      MPI_STATUS_IGNORE));
    early += flag;
    CHECK(early == 0, "Iprobe found a message before anything was sent");
    MPI_Barrier(MPI_COMM_WORLD);
    /* Three messages to the right: tag 101 (0 B), tag 100 (3000 B), tag 102
     * (0 B). */
    unsigned char *sb = must(malloc(3000), "malloc", 3000);
    unsigned char *rb = must(malloc(3000), "malloc", 3000);
    wpattern_fill(sb, 3000, seed_of(rank, right, 100));
    MPI_Request r[3];
    MPI_OK(MPI_Isend(NULL, 0, MPI_BYTE, right, 101, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Isend(sb, 3000, MPI_BYTE, right, 100, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Isend(NULL, 0, MPI_BYTE, right, 102, MPI_COMM_WORLD, &r[2]));
    MPI_Status st;
    do {
        MPI_OK(MPI_Iprobe(left, 100, MPI_COMM_WORLD, &flag, &st));
    } while (!flag);
    int ok_skip = status_is(&st, left, 100, 3000);
    CHECK(ok_skip, "Iprobe(left, 100) status source %d tag %d", st.MPI_SOURCE,
          st.MPI_TAG);
    /* Probed twice: still there. */
    MPI_OK(MPI_Iprobe(left, 100, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag && status_is(&st, left, 100, 3000), "second Iprobe lost the message");
    MPI_OK(MPI_Recv(rb, 3000, MPI_BYTE, left, 100, MPI_COMM_WORLD, &st));
    int ok_data = wpattern_check(rb, 3000, seed_of(left, rank, 100), "tag 100");
    /* The zero-byte ones, via a wildcard Iprobe loop: tag 101 first. */
    int zero_ok = 0;
    for (int j = 0; j < 2; j++) {
        do {
            MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        } while (!flag);
        zero_ok += status_is(&st, left, 101 + j, 0);
        MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG,
                        MPI_COMM_WORLD, &st));
        zero_ok += status_is(&st, left, 101 + j, 0);
    }
    CHECK(zero_ok == 4, "zero-byte probes/receives: %d of 4 right", zero_ok);
    MPI_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    out("B Iprobe: %s before the send; probe for a later tag %s; data %s; "
        "zero-byte probes %d of 4 right", early ? "FOUND" : "nothing",
        ok_skip ? "right" : "WRONG", ok_data ? "right" : "WRONG", zero_ok);
    free(sb);
    free(rb);
}

static void mprobe_mrecv(int rank, int size)
{
    section("C Mprobe/Mrecv");
    const int tag = 200;
    int nreq = 0;
    MPI_Request *reqs = must(calloc((size_t)size * 2, sizeof *reqs), "calloc", 0);
    int (*pay)[2] = must(calloc((size_t)size * 2, sizeof *pay), "calloc", 0);
    for (int i = 1; i < size; i++) {
        int dst = (rank + i) % size;
        for (int k = 0; k < 2; k++) {
            pay[nreq][0] = rank;
            pay[nreq][1] = k;
            MPI_OK(MPI_Isend(pay[nreq], 2, MPI_INT, dst, tag, MPI_COMM_WORLD,
                             &reqs[nreq]));
            nreq++;
        }
    }
    int good = 0;
    int *seen = must(calloc((size_t)size, sizeof *seen), "calloc", 0);
    for (int i = 1; i < size; i++) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &msg, &st));
        int src = st.MPI_SOURCE, c = -1;
        MPI_Get_count(&st, MPI_INT, &c);
        if (src < 0 || src >= size || src == rank || seen[src]) {
            CHECK(0, "Mprobe returned source %d", src);
            break;
        }
        seen[src] = 1;
        CHECK(msg != MPI_MESSAGE_NULL && c == 2 && st.MPI_TAG == tag,
              "Mprobe: message %s count %d tag %d",
              msg == MPI_MESSAGE_NULL ? "NULL" : "set", c, st.MPI_TAG);
        int second[2] = {-1, -1}, first[2] = {-1, -1};
        MPI_Request r;
        MPI_OK(MPI_Irecv(second, 2, MPI_INT, src, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Mrecv(first, 2, MPI_INT, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NULL, "Mrecv did not reset the message handle");
        CHECK(status_is(&st, src, tag, 8), "Mrecv status");
        MPI_Status st2;
        MPI_OK(MPI_Wait(&r, &st2));
        CHECK(status_is(&st2, src, tag, 8), "Irecv after Mprobe: status");
        int ok = first[0] == src && first[1] == 0 && second[0] == src &&
                 second[1] == 1;
        CHECK(ok, "from %d: Mrecv got (%d,%d), later Irecv got (%d,%d)", src,
              first[0], first[1], second[0], second[1]);
        good += ok;
    }
    MPI_OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    out("C Mprobe(ANY_SOURCE)+Irecv+Mrecv: %d of %d senders right (Mrecv got "
        "the probed message, the Irecv the next)", good, size - 1);
    free(seen);
    free(pay);
    free(reqs);
}

static void improbe_imrecv(int rank, int size)
{
    section("D Improbe/Imrecv");
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int flag = -1;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_OK(MPI_Improbe(left, 300, MPI_COMM_WORLD, &flag, &msg, &st));
    int early = flag;
    CHECK(flag == 0, "Improbe found a message before anything was sent");
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char *sb = must(malloc(MIB), "malloc", MIB);
    unsigned char *rb = must(malloc(MIB), "malloc", MIB);
    wpattern_fill(sb, MIB, seed_of(rank, right, 300));
    MPI_Request s;
    MPI_OK(MPI_Isend(sb, MIB, MPI_BYTE, right, 300, MPI_COMM_WORLD, &s));
    do {
        MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, 300, MPI_COMM_WORLD, &flag, &msg, &st));
    } while (!flag);
    int ok_probe = status_is(&st, left, 300, MIB) && msg != MPI_MESSAGE_NULL;
    CHECK(ok_probe, "Improbe status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    MPI_Request r;
    MPI_OK(MPI_Imrecv(rb, MIB, MPI_BYTE, &msg, &r));
    CHECK(msg == MPI_MESSAGE_NULL, "Imrecv did not reset the message handle");
    MPI_OK(MPI_Wait(&r, &st));
    int ok_recv = status_is(&st, left, 300, MIB) &&
                  wpattern_check(rb, MIB, seed_of(left, rank, 300), "Imrecv");
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    out("D Improbe: %s before the send, probe %s, Imrecv %s",
        early ? "FOUND" : "nothing", ok_probe ? "right" : "WRONG",
        ok_recv ? "right" : "WRONG");
    free(sb);
    free(rb);
}

static int proc_null_status(const MPI_Status *st)
{
    return status_is(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
}

static void proc_null(void)
{
    section("E PROC_NULL");
    MPI_Status st;
    int ok = 0, flag = -1;
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    ok += proc_null_status(&st);
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &st));
    ok += flag == 1 && proc_null_status(&st);
    MPI_Message msg = MPI_MESSAGE_NULL;
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
    int no_proc = msg == MPI_MESSAGE_NO_PROC;
    ok += proc_null_status(&st);
    int buf[4] = {1, 2, 3, 4};
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Mrecv(buf, 4, MPI_INT, &msg, &st));
    ok += proc_null_status(&st);
    int reset = msg == MPI_MESSAGE_NULL;
    msg = MPI_MESSAGE_NULL;
    flag = -1;
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
    no_proc += flag == 1 && msg == MPI_MESSAGE_NO_PROC;
    ok += proc_null_status(&st);
    MPI_Request r;
    MPI_OK(MPI_Imrecv(buf, 4, MPI_INT, &msg, &r));
    reset += msg == MPI_MESSAGE_NULL;
    memset(&st, 0x4d, sizeof st);
    MPI_OK(MPI_Wait(&r, &st));
    ok += proc_null_status(&st);
    int touched = buf[0] != 1 || buf[1] != 2 || buf[2] != 3 || buf[3] != 4;
    CHECK(ok == 6, "%d of 6 PROC_NULL statuses right", ok);
    CHECK(no_proc == 2, "Mprobe/Improbe(PROC_NULL): MPI_MESSAGE_NO_PROC %d of 2",
          no_proc);
    CHECK(reset == 2, "Mrecv/Imrecv(NO_PROC) reset the handle %d of 2", reset);
    CHECK(!touched, "Mrecv from PROC_NULL wrote the buffer");
    out("E PROC_NULL: %d of 6 statuses PROC_NULL/ANY_TAG/0, MESSAGE_NO_PROC %d of "
        "2, handles reset %d of 2, buffer %s", ok, no_proc, reset,
        touched ? "WRITTEN" : "untouched");
}

int main(int argc, char **argv)
{
    int rank, size;
    p2p_init(&argc, &argv, &rank, &size);
    probe_get_count_recv(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    iprobe(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    mprobe_mrecv(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    improbe_imrecv(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    proc_null();
    return p2p_finish("probe", rank, size);
}

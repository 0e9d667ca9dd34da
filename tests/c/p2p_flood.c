/*
 * p2p_flood.c - point-to-point conformance: a sender far ahead of its
 * receiver.
 *
 * Why: heapmpi leaves fast-box records in the box while the receiver has
 * no posted receive, and a standard send that finds the box full goes
 * through the global queue and completes only when the receiver takes it
 * (or after a while). So a flood of small messages sent before any
 * receive is posted lies partly in the box, partly in the global queue and
 * partly in the receiver's unexpected queue; receives by tag, by wildcard,
 * probes and matched probes must still see each sender's messages in
 * sending order, and every send must complete.
 *
 * Each rank Isends NMSG messages to its right ring neighbour: message i
 * has tag i % NTAG and a size of (i * 7) % 41 bytes, except every 97th,
 * which has 3000 bytes (not a fast-box message); the payload is a pattern
 * of (source, i). Then, without a barrier, each rank receives its left
 * neighbour's messages:
 *  A. every message of tag 4 with a blocking Recv (source and tag given);
 *  B. every message of tag 3 found by an MPI_Iprobe loop (source given,
 *     MPI_ANY_TAG would see others: tag 3 given) then received;
 *  C. every message of tag 2 by MPI_Mprobe + MPI_Mrecv with MPI_ANY_SOURCE;
 *  D. the rest (tags 0 and 1) with MPI_ANY_SOURCE + MPI_ANY_TAG, whose
 *     order must be the sending order of those two tags merged.
 * Every message is checked: its index is the next of its tag (of the
 * remaining ones in D), its size and bytes are right. Then Waitall on the
 * sends. The whole is done twice, the second time with the receiver
 * posting one Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) at a time and testing it
 * in a loop (as HPCC RandomAccess does).
 *
 * Output (stdout, rank 0, rank order): per rank the counts received per
 * section, then "rank N: flood ok". Exit status 1 on a failed check.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_util.h"

#define NMSG 3000
#define NTAG 5
#define BIG 3000

static int g_me, g_size, g_left, g_right;

static int msg_size(int i) { return i % 97 == 96 ? BIG : (i * 7) % 41; }

static unsigned char pat(int src, int i, int k) { return (unsigned char)(src * 31 + i * 7 + k * 13 + 1); }

static void fill(unsigned char *b, int src, int i) {
    for (int k = 0; k < msg_size(i); k++) b[k] = pat(src, i, k);
}

/* Checks a received message: `i` is the index it must have. */
static void check(const unsigned char *b, const MPI_Status *st, int i, const char *what) {
    int n;
    MPI_Get_count(st, MPI_BYTE, &n);
    CHECK(st->MPI_SOURCE == g_left && st->MPI_TAG == i % NTAG && n == msg_size(i),
          "%s: expected message %d (tag %d, %d B) from %d, got tag %d, %d B from %d", what, i, i % NTAG,
          msg_size(i), g_left, st->MPI_TAG, n, st->MPI_SOURCE);
    if (st->MPI_TAG != i % NTAG || n != msg_size(i)) return;
    int k = 0;
    while (k < n && b[k] == pat(g_left, i, k)) k++;
    CHECK(k == n, "%s: message %d byte %d wrong", what, i, k);
}

/* The index of the next message of tag `t` after index `i` (-1: none). */
static int next_of_tag(int t, int i) {
    for (int j = i + 1; j < NMSG; j++)
        if (j % NTAG == t) return j;
    return -1;
}

static unsigned char **send_all(MPI_Request *reqs) {
    unsigned char **bufs = must(malloc(sizeof(*bufs) * NMSG), "malloc", sizeof(*bufs) * NMSG);
    for (int i = 0; i < NMSG; i++) {
        bufs[i] = must(malloc(msg_size(i) + 1), "malloc", msg_size(i) + 1);
        fill(bufs[i], g_me, i);
        MPI_Isend(bufs[i], msg_size(i), MPI_BYTE, g_right, i % NTAG, MPI_COMM_WORLD, &reqs[i]);
    }
    return bufs;
}

static void finish_sends(MPI_Request *reqs, unsigned char **bufs) {
    MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < NMSG; i++) free(bufs[i]);
    free(bufs);
}

/* Round 1: by tag, probes, matched probes, wildcards. */
static void round_by_kind(int counts[4]) {
    MPI_Request *reqs = must(malloc(sizeof(MPI_Request) * NMSG), "malloc", sizeof(MPI_Request) * NMSG);
    unsigned char **bufs = send_all(reqs);
    unsigned char *b = must(malloc(BIG), "malloc", BIG);
    MPI_Status st;
    /* A: tag 4, blocking receives. */
    for (int i = next_of_tag(4, -1); i >= 0; i = next_of_tag(4, i)) {
        MPI_Recv(b, BIG, MPI_BYTE, g_left, 4, MPI_COMM_WORLD, &st);
        check(b, &st, i, "A");
        counts[0]++;
    }
    /* B: tag 3 found by Iprobe. */
    for (int i = next_of_tag(3, -1); i >= 0; i = next_of_tag(3, i)) {
        int flag = 0;
        while (!flag) MPI_Iprobe(g_left, 3, MPI_COMM_WORLD, &flag, &st);
        int n;
        MPI_Get_count(&st, MPI_BYTE, &n);
        CHECK(n == msg_size(i), "B: probe says %d B for message %d", n, i);
        MPI_Recv(b, BIG, MPI_BYTE, g_left, 3, MPI_COMM_WORLD, &st);
        check(b, &st, i, "B");
        counts[1]++;
    }
    /* C: tag 2 by Mprobe + Mrecv, any source. */
    for (int i = next_of_tag(2, -1); i >= 0; i = next_of_tag(2, i)) {
        MPI_Message m;
        MPI_Mprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(b, BIG, MPI_BYTE, &m, &st);
        check(b, &st, i, "C");
        counts[2]++;
    }
    /* D: tags 0 and 1 with both wildcards, in sending order. */
    for (int i = 0; i < NMSG; i++) {
        if (i % NTAG > 1) continue;
        MPI_Recv(b, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        check(b, &st, i, "D");
        counts[3]++;
    }
    free(b);
    finish_sends(reqs, bufs);
}

/* Round 2: one wildcard Irecv at a time, tested in a loop. */
static int round_polled(void) {
    MPI_Request *reqs = must(malloc(sizeof(MPI_Request) * NMSG), "malloc", sizeof(MPI_Request) * NMSG);
    unsigned char **bufs = send_all(reqs);
    unsigned char *b = must(malloc(BIG), "malloc", BIG);
    MPI_Status st;
    int got = 0;
    for (int i = 0; i < NMSG; i++) {
        MPI_Request r;
        int flag = 0;
        MPI_Irecv(b, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
        while (!flag) MPI_Test(&r, &flag, &st);
        check(b, &st, i, "polled");
        got++;
    }
    free(b);
    finish_sends(reqs, bufs);
    return got;
}

int main(int argc, char **argv) {
    p2p_init(&argc, &argv, &g_me, &g_size);
    g_left = (g_me + g_size - 1) % g_size;
    g_right = (g_me + 1) % g_size;
    int c[5] = {0, 0, 0, 0, 0};
    section("by kind");
    round_by_kind(c);
    MPI_Barrier(MPI_COMM_WORLD);
    section("polled");
    c[4] = round_polled();
    MPI_Barrier(MPI_COMM_WORLD);
    out("A %d B %d C %d D %d polled %d", c[0], c[1], c[2], c[3], c[4]);
    return p2p_finish("flood", g_me, g_size);
}

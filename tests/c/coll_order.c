/*
 * coll_order.c - floating-point reductions bit for bit as the stock MPI
 * computes them.
 *
 * Why: floating-point addition and multiplication are not associative, and
 * each MPI combines the members' contributions in an order of its own that
 * depends on the algorithm it picks (by communicator size and message
 * size): recursive doubling pairs neighbours first, Open MPI's ring folds
 * each block from its owner, linear reductions fold from one end, MPICH's
 * scans combine aligned blocks. heapmpi once folded every reduction as
 * x0 + (x1 + (x2 + x3)), so LAMMPS, OpenFOAM and CP2K printed different last
 * digits at 4 ranks than stock did. Unlike the other coll programs, this
 * one prints checksums of inexact results on purpose: heapmpi must follow
 * the MPI's association (src/coll/order.rs) or hand the call to the MPI.
 *
 * The values mix magnitudes (1e16 and 1 in the same sums, signs
 * alternating) so that nearly every change of association changes bits.
 *
 * Sweep: communicators MPI_COMM_WORLD, its first three ranks (a split),
 * WORLD in reverse rank order (a split with key -rank; WORLD only with the
 * argument "world", for the larger runs); counts around both
 * MPIs' switch points (MPICH 2048 bytes; Open MPI 16, 4096, 8192, 16384,
 * 65536, 262144, 524288 and 1048576 bytes) and off the powers of two;
 * MPI_DOUBLE and MPI_FLOAT with MPI_SUM, MPI_DOUBLE with MPI_PROD, and a
 * user-defined commutative and non-commutative double sum; Allreduce (out
 * of place and in place), Reduce at every root, Scan, Exscan,
 * Reduce_scatter_block and Reduce_scatter (uneven blocks).
 *
 * Output: every rank's report (in rank order), one line per case with a
 * result on that rank: the case, the rank in the communicator, the
 * checksum of the result.
 */
#define _GNU_SOURCE
#include "coll_util.h"

static const int counts[] = {1, 3, 100, 257, 511, 1000, 2049, 8191, 40000,
                             140000};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    double *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] + b[i];
}

/* The value of element i on member r: large and small terms, alternating
 * signs; near 1 for products. */
static double value(int r, long i, int prod)
{
    if (prod)
        return 1.0 + 1e-3 * (double)((r * 7 + i) % 11) + 1.0 / (r + 3);
    double big = (i % 7 == 0) ? 1e16 : 1.0;
    return big * (((r + i) % 2) ? -1.0 : 1.0) + 0.1 * (r + 1) * (double)(i % 13 + 1) +
           1.0 / (r + 3);
}

struct kind {
    const char *name;
    MPI_Datatype dt;
    MPI_Op op;
    int prod;
};

static void fill(void *p, long n, int r, const struct kind *k)
{
    for (long i = 0; i < n; i++) {
        double v = value(r, i, k->prod);
        if (k->dt == MPI_FLOAT)
            ((float *)p)[i] = (float)v * (k->prod ? 1.0f : 1e-12f);
        else
            ((double *)p)[i] = v;
    }
}

/* This member's checksum of `bytes` result bytes (0 bytes: no result),
 * one line in its report (out_flush prints the ranks' reports in rank
 * order: no collective per case). */
static void report(MPI_Comm comm, const char *what, const void *p, size_t bytes)
{
    int r;
    MPI_Comm_rank(comm, &r);
    if (bytes)
        out("%s [%d]: %016llx\n", what, r, (unsigned long long)hash_bytes(0, p, bytes));
}

static void run(MPI_Comm comm, const char *cname, const struct kind *k, int count)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    size_t esz = k->dt == MPI_FLOAT ? 4 : 8;
    long total = (long)count * n + (long)n * n;
    char *in = must(malloc((size_t)total * esz), "malloc", (size_t)total * esz);
    char *res = must(malloc((size_t)total * esz), "malloc", (size_t)total * esz);
    fill(in, total, r, k);
    char what[160];
    size_t b = (size_t)count * esz;

    MPI_OK(MPI_Allreduce(in, res, count, k->dt, k->op, comm));
    snprintf(what, sizeof what, "%s %s allreduce %d", cname, k->name, count);
    report(comm, what, res, b);

    memcpy(res, in, b);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, res, count, k->dt, k->op, comm));
    snprintf(what, sizeof what, "%s %s allreduce in place %d", cname, k->name, count);
    report(comm, what, res, b);

    for (int root = 0; root < n; root++) {
        memset(res, 0, b);
        MPI_OK(MPI_Reduce(in, res, count, k->dt, k->op, root, comm));
        snprintf(what, sizeof what, "%s %s reduce root %d %d", cname, k->name, root, count);
        report(comm, what, res, r == root ? b : 0);
    }

    MPI_OK(MPI_Scan(in, res, count, k->dt, k->op, comm));
    snprintf(what, sizeof what, "%s %s scan %d", cname, k->name, count);
    report(comm, what, res, b);

    MPI_OK(MPI_Exscan(in, res, count, k->dt, k->op, comm));
    snprintf(what, sizeof what, "%s %s exscan %d", cname, k->name, count);
    report(comm, what, res, r == 0 ? 0 : b);

    MPI_OK(MPI_Reduce_scatter_block(in, res, count, k->dt, k->op, comm));
    snprintf(what, sizeof what, "%s %s reduce_scatter_block %d", cname, k->name, count);
    report(comm, what, res, b);

    int *rc = must(malloc((size_t)n * sizeof(int)), "malloc", (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        rc[i] = count + i;
    MPI_OK(MPI_Reduce_scatter(in, res, rc, k->dt, k->op, comm));
    snprintf(what, sizeof what, "%s %s reduce_scatter %d", cname, k->name, count);
    report(comm, what, res, (size_t)rc[r] * esz);
    free(rc);
    free(in);
    free(res);
}

int main(int argc, char **argv)
{
    int rank, size;
    coll_init(&argc, &argv, &rank, &size);
    MPI_Op usum, usum_nc;
    MPI_OK(MPI_Op_create(user_sum, 1, &usum));
    MPI_OK(MPI_Op_create(user_sum, 0, &usum_nc));
    const struct kind kinds[] = {
        {"double sum", MPI_DOUBLE, MPI_SUM, 0},
        {"float sum", MPI_FLOAT, MPI_SUM, 0},
        {"double prod", MPI_DOUBLE, MPI_PROD, 1},
        {"double user sum", MPI_DOUBLE, usum, 0},
        {"double user sum (non-commutative)", MPI_DOUBLE, usum_nc, 0},
    };
    MPI_Comm three, reversed;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank < 3 ? 0 : 1, rank, &three));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &reversed));
    struct {
        MPI_Comm comm;
        const char *name;
        int mine;
    } comms[] = {
        {MPI_COMM_WORLD, "world", 1},
        {three, "first three", rank < 3},
        {reversed, "reversed", 1},
    };
    int ncomms = (argc > 1 && strcmp(argv[1], "world") == 0) ? 1 : 3;
    for (int c = 0; c < ncomms; c++) {
        /* The split's second part (ranks 3 and up) runs too, unprinted by
         * rank 0 of WORLD: its own rank 0 prints. */
        for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            for (int i = 0; i < NCOUNTS; i++) {
                /* The user operations and products at fewer sizes. */
                if (k >= 2 && i % 2 != 0)
                    continue;
                run(comms[c].comm, comms[c].mine ? comms[c].name : "last ranks",
                    &kinds[k], counts[i]);
            }
        out_flush();
    }
    MPI_OK(MPI_Comm_free(&three));
    MPI_OK(MPI_Comm_free(&reversed));
    MPI_OK(MPI_Op_free(&usum));
    MPI_OK(MPI_Op_free(&usum_nc));
    return coll_finish("order", rank, size);
}

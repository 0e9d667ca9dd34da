/* ucx_yield.c: makes a stock MPICH rank give up its core while it waits.
 *
 * The test harness preloads this into the ranks of stock reference runs of
 * an MPI built on UCX (Debian's MPICH is ch4:ucx), nowhere else. MPICH's
 * ch4 device busy-polls in every blocking call and, unlike ch3 or Open MPI
 * (mpi_yield_when_idle), has no setting that makes it yield: with more
 * ranks than cores (the suites' 3- to 6-rank runs on 2 cores, and two
 * jobs at once), a waiting rank spins through its whole time slice while
 * the rank it waits for is descheduled, and a 0.4 s program takes 6-10 s.
 *
 * ch4's progress loop calls ucp_worker_progress() on every turn, through
 * the PLT, so a preloaded definition sees each turn: after 64 turns in a
 * row with no UCX event the rank calls sched_yield() on each further idle
 * turn. What a program computes and prints does not change (MPI makes no
 * promise about scheduling), only how long its waits take: that is all a
 * reference run is for. heapmpi's own runs never get this.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stddef.h>

typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    /* Resolved once per thread; the lookup itself is thread-safe. */
    static __thread progress_fn real;
    static __thread unsigned idle;
    if (real == NULL)
        real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    unsigned events = real(worker);
    if (events != 0)
        idle = 0;
    else if (++idle >= 64)
        sched_yield();
    return events;
}

//! Steering clear of a bug of the MPI library heapmpi runs on, where a
//! stock program hangs or not depending on how many collectives it made
//! before, and heapmpi's own use of MPI moves that count.
//!
//! Open MPI up to 4.1.8 and 5.0.10 (open-mpi/ompi#13918, fixed by #13931
//! and #14211: released in 5.0.11, in no 4.1 release yet):
//! `MPI_Dist_graph_create` exchanges the graph's edges over the parent
//! communicator with the internal tags -50 and -51, receiving from any
//! source. Those tags are inside the range the nonblocking collectives
//! (libnbc) take theirs from: each one on a communicator takes the next
//! tag down from -27, so its 24th and 25th get -50 and -51. When one of
//! these is the all-reduce by which `MPI_Dist_graph_create` itself agrees
//! on the new communicator's id, a rank still receiving edges can take
//! another rank's all-reduce message for an edge, and the job hangs in
//! `ompi_comm_nextcid`. Every communicator creation makes such
//! all-reduces on its parent, so which call of a program meets the window
//! depends on everything it did before, heapmpi's start-up included (the
//! node communicator split from `MPI_COMM_WORLD` in `MPI_Init`): the MPICH
//! test suite's `topo/distgraph1` (4 ranks) passes stock and hung one run
//! in three under heapmpi, and the same program with three more
//! `MPI_Ibarrier`s on `MPI_COMM_WORLD` hangs stock as often.
//!
//! The way out: before the first `MPI_Dist_graph_create` on a communicator
//! heapmpi knows, [`STEPS`] one-integer nonblocking all-reduces (the call
//! the id agreement makes, so the same component and the same counter)
//! take its tag counter past -51, which it does not come back to before
//! 2^30 nonblocking collectives. Collective, like the call it precedes:
//! every member gets here at the same point, with the same flag.

use core::ffi::c_int;
use std::sync::atomic::Ordering;

use mpi_sys as ffi;

use crate::version::Library;

/// Nonblocking collectives that take a fresh communicator's tag counter
/// past -51 (from -27, one tag each): from whatever point it was at, it is
/// below the window afterwards.
pub const STEPS: usize = 25;

/// Whether the library has the tag collision (see the module
/// documentation).
pub fn affected(lib: Library) -> bool {
    match lib {
        Library::OpenMpi(v) => v < (4, 1, 9) || ((5, 0, 0)..(5, 0, 11)).contains(&v),
        _ => false,
    }
}

/// Before `MPI_Dist_graph_create` on `comm`: the first time on a
/// communicator heapmpi knows, where the library has the collision, moves
/// its nonblocking tag counter past the window.
pub fn before_dist_graph_create(comm: ffi::MPI_Comm) {
    if !affected(crate::version::library()) {
        return;
    }
    // SAFETY: reading an MPI constant.
    if comm == unsafe { ffi::RSMPI_COMM_NULL } {
        return;
    }
    let Some(info) = super::lookup(comm) else {
        return;
    };
    // Relaxed: collective calls on one communicator are ordered by the
    // program (MPI forbids concurrent ones), so only the thread making
    // this collective call reads or writes the flag now.
    if info.dist_graph_tags_clear.swap(true, Ordering::Relaxed) {
        return;
    }
    advance(comm);
}

/// [`STEPS`] one-integer nonblocking all-reduces on `comm`, then their
/// completion.
fn advance(comm: ffi::MPI_Comm) {
    let send = [0 as c_int; STEPS];
    let mut recv = [0 as c_int; STEPS];
    // SAFETY: reading an MPI constant.
    let mut reqs = [unsafe { ffi::RSMPI_REQUEST_NULL }; STEPS];
    let mut started = 0;
    for i in 0..STEPS {
        // SAFETY: one int each way, buffers live until the Waitall below;
        // every member makes the same calls (see the module documentation).
        let rc = unsafe {
            ffi::PMPI_Iallreduce(
                (&send[i] as *const c_int).cast(),
                (&mut recv[i] as *mut c_int).cast(),
                1,
                ffi::RSMPI_INT32_T,
                ffi::RSMPI_MAX,
                comm,
                &mut reqs[i],
            )
        };
        if rc != 0 {
            break;
        }
        started += 1;
    }
    // SAFETY: the requests started above; statuses ignored.
    unsafe {
        ffi::PMPI_Waitall(
            started as c_int,
            reqs.as_mut_ptr(),
            ffi::RSMPI_STATUSES_IGNORE,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_mpi_releases_before_the_fix_are_affected() {
        for v in [
            (4, 0, 7),
            (4, 1, 4),
            (4, 1, 8),
            (5, 0, 0),
            (5, 0, 8),
            (5, 0, 10),
        ] {
            assert!(affected(Library::OpenMpi(v)), "{v:?}");
        }
        for v in [(4, 1, 9), (5, 0, 11), (5, 1, 0), (6, 0, 0)] {
            assert!(!affected(Library::OpenMpi(v)), "{v:?}");
        }
    }

    #[test]
    fn other_libraries_are_not() {
        assert!(!affected(Library::Mpich((4, 0, 2))));
        assert!(!affected(Library::IntelMpi((2021, 18, 0))));
        assert!(!affected(Library::Other));
    }
}

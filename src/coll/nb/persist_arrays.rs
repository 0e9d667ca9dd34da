//! The copies of their arrays that the persistent `v` and `w` collectives'
//! requests hold (`CollArgs::arrays`, opaque to the requests' layer), and
//! their reading back: [`super::persist_v`] makes them at the
//! initialisation, [`super::persist`] hands them to the nonblocking call
//! (or the real MPI's fallback) at every start. Below both, so that the
//! start does not reach into the initialisation's module.

use core::ffi::c_int;

use mpi_sys as ffi;

use crate::p2p::engine::CollArgs;

/// The `v` forms' arrays (send counts and displacements, receive counts
/// and displacements), copied at the initialisation; an empty one was
/// null or is not significant on this member.
pub(super) struct Arrays([Vec<c_int>; 4]);

impl Arrays {
    /// The copies, in that order.
    pub(super) fn new(copies: [Vec<c_int>; 4]) -> Arrays {
        Arrays(copies)
    }

    /// Array `k`'s copy as a pointer (null when empty).
    fn ptr(&self, k: usize) -> *const c_int {
        if self.0[k].is_empty() {
            core::ptr::null()
        } else {
            self.0[k].as_ptr()
        }
    }
}

/// The arrays `a` holds (none: every pointer null).
pub(super) fn arrays(a: &CollArgs) -> impl Fn(usize) -> *const c_int + '_ {
    // SAFETY: the arrays live as long as the request `a` belongs to,
    // which its initialisation or start holds.
    let arr = a
        .arrays
        .as_ref()
        .and_then(|x| unsafe { x.get() }.downcast_ref::<Arrays>());
    move |k| arr.map_or(core::ptr::null(), |x| x.ptr(k))
}

/// The `w` forms' arrays, send then receive: counts, displacements (`int`
/// for `Alltoallw`, `MPI_Aint` for `Neighbor_alltoallw`: the other pair
/// is empty) and datatypes (derived ones replaced by the request's
/// duplicates), copied at the initialisation.
pub(super) struct WArrays {
    counts: [Vec<c_int>; 2],
    displs_int: [Vec<c_int>; 2],
    displs_aint: [Vec<ffi::MPI_Aint>; 2],
    types: [Vec<ffi::MPI_Datatype>; 2],
}

// SAFETY: the datatype handles are plain values (pointers in Open MPI's
// bindings) that are only passed back to the MPI, by whichever thread
// starts the request; nothing is read through them here.
unsafe impl Send for WArrays {}
// SAFETY: as above: shared references only copy the handles.
unsafe impl Sync for WArrays {}

/// `v` as a pointer (null when empty).
fn ptr_of<T>(v: &[T]) -> *const T {
    if v.is_empty() {
        core::ptr::null()
    } else {
        v.as_ptr()
    }
}

impl WArrays {
    /// The copies, send then receive each (`displs_int` or `displs_aint`
    /// empty, by the form).
    pub(super) fn new(
        counts: [Vec<c_int>; 2],
        displs_int: [Vec<c_int>; 2],
        displs_aint: [Vec<ffi::MPI_Aint>; 2],
        types: [Vec<ffi::MPI_Datatype>; 2],
    ) -> WArrays {
        WArrays {
            counts,
            displs_int,
            displs_aint,
            types,
        }
    }

    /// Counts `k` (0: send, 1: receive).
    pub(super) fn counts(&self, k: usize) -> *const c_int {
        ptr_of(&self.counts[k])
    }

    /// `int` displacements `k`.
    pub(super) fn displs_int(&self, k: usize) -> *const c_int {
        ptr_of(&self.displs_int[k])
    }

    /// `MPI_Aint` displacements `k`.
    pub(super) fn displs_aint(&self, k: usize) -> *const ffi::MPI_Aint {
        ptr_of(&self.displs_aint[k])
    }

    /// Datatypes `k`.
    pub(super) fn types(&self, k: usize) -> *const ffi::MPI_Datatype {
        ptr_of(&self.types[k])
    }
}

/// The `w` arrays `a` holds, if any.
pub(super) fn w_arrays(a: &CollArgs) -> Option<&WArrays> {
    // SAFETY: as in [`arrays`]: the arrays live as long as the request.
    unsafe { a.arrays.as_ref()?.get() }.downcast_ref::<WArrays>()
}

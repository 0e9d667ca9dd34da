//! What the initialisations of the persistent neighbourhood, `v` and `w`
//! collectives build with (the initialisations themselves are written
//! next to their nonblocking forms, `nb_entry!`): the `v` forms keep
//! copies of their count and displacement arrays, made where they are
//! significant and kept in the request (`CollArgs::arrays`, opaque to the
//! requests' layer), which every start hands to the nonblocking call; the
//! `w` forms (`MPI_Alltoallw_init`, `Neighbor_alltoallw_init`) copies of
//! their datatype arrays too, each derived datatype replaced by a
//! duplicate the request holds.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::to_real;
use super::persist::{args, dup_derived, init, init_with};
use crate::p2p::engine::{CollArgs, CollArrays};

/// The `v` forms' arrays (send counts and displacements, receive counts
/// and displacements), copied at the initialisation; an empty one was
/// null or is not significant on this member.
pub(super) struct Arrays([Vec<c_int>; 4]);

impl Arrays {
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

/// An array not significant on any member, for [`v_init`].
pub(super) const NONE: (*const c_int, bool, bool) = (core::ptr::null(), false, false);

/// An array significant on every member, for [`v_init`].
pub(super) fn all(p: *const c_int) -> (*const c_int, bool, bool) {
    (p, true, true)
}

/// The initialisation of a `v` form: `a` with copies of the arrays
/// `given` (send counts and displacements, receive counts and
/// displacements; each with whether it is significant on a member that is
/// the root, and on one that is not), of `lens` entries (`None`: one per
/// member), then [`init`].
///
/// # Safety
/// As [`init`]; every significant array holds its entries.
pub(super) unsafe fn v_init(
    mut a: CollArgs,
    given: [(*const c_int, bool, bool); 4],
    lens: Option<[usize; 4]>,
    request: *mut ffi::MPI_Request,
    real: impl FnOnce() -> c_int,
) -> c_int {
    let (mut rank, mut size) = (-1, 0);
    // SAFETY: out-pointers; an invalid communicator fails here and the real
    // initialisation reports it.
    let known = unsafe {
        ffi::PMPI_Comm_rank(a.comm, &mut rank) == 0 && ffi::PMPI_Comm_size(a.comm, &mut size) == 0
    };
    if !known || size < 1 {
        return to_real(real);
    }
    let root = rank == a.root;
    let lens = lens.unwrap_or([size as usize; 4]);
    let mut k = 0;
    let copy = |(p, at_root, elsewhere): (*const c_int, bool, bool)| {
        let len = lens[k];
        k += 1;
        if p.is_null() || len == 0 || !(if root { at_root } else { elsewhere }) {
            Vec::new()
        } else {
            // SAFETY: a significant array holds `len` entries.
            unsafe { core::slice::from_raw_parts(p, len) }.to_vec()
        }
    };
    a.arrays = Some(CollArrays::new(Box::new(Arrays(given.map(copy)))));
    // SAFETY: per the contract.
    unsafe { init(a, request, real) }
}

/// The lengths of a neighbourhood collective's arrays on `comm` (send
/// ones: out-degree, receive ones: in-degree), if heapmpi has read its
/// topology (else the initialisation is the real MPI's).
pub(super) fn degrees(comm: ffi::MPI_Comm) -> Option<[usize; 4]> {
    let nb = super::super::info(comm)?.topo.get()?.as_ref()?;
    let (o, i) = (nb.blocks, nb.indegree());
    Some([o, o, i, i])
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
    // SAFETY: as in `arrays`.
    unsafe { a.arrays.as_ref()?.get() }.downcast_ref::<WArrays>()
}

/// `len` entries at `p` (none when null).
///
/// # Safety
/// A non-null `p` holds `len` entries.
pub(super) unsafe fn copy<T: Copy>(p: *const T, len: usize) -> Vec<T> {
    if p.is_null() || len == 0 {
        Vec::new()
    } else {
        // SAFETY: per the contract.
        unsafe { core::slice::from_raw_parts(p, len) }.to_vec()
    }
}

/// The initialisation of a `w` form of `call`: copies of its arrays
/// (`lens`: send and receive entries; displacements by `displs`), each
/// derived datatype duplicated once, then [`init_with`].
///
/// # Safety
/// As [`init`]; the arrays hold `lens` entries each.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn w_init(
    call: u8,
    sbuf: *const c_void,
    rbuf: *mut c_void,
    comm: ffi::MPI_Comm,
    counts: [*const c_int; 2],
    displs: impl FnOnce([usize; 2]) -> ([Vec<c_int>; 2], [Vec<ffi::MPI_Aint>; 2]),
    types: [*const ffi::MPI_Datatype; 2],
    lens: [usize; 2],
    request: *mut ffi::MPI_Request,
    real: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: per the contract.
    let (counts, mut types) = unsafe {
        (
            [copy(counts[0], lens[0]), copy(counts[1], lens[1])],
            [copy(types[0], lens[0]), copy(types[1], lens[1])],
        )
    };
    let (displs_int, displs_aint) = displs(lens);
    // One duplicate per derived datatype, however many blocks use it.
    let mut dups: Vec<(ffi::MPI_Datatype, ffi::MPI_Datatype)> = Vec::new();
    let mut ok = true;
    for t in types.iter_mut().flatten() {
        if let Some(&(_, d)) = dups.iter().find(|(orig, _)| orig == t) {
            *t = d;
            continue;
        }
        match dup_derived(*t) {
            Some(Ok(d)) => {
                dups.push((*t, d));
                *t = d;
            }
            Some(Err(())) => ok = false,
            None => {}
        }
    }
    let held: Vec<_> = dups.into_iter().map(|(_, d)| d).collect();
    if !ok {
        for mut t in held {
            // SAFETY: our duplicate, unused.
            unsafe { ffi::PMPI_Type_free(&mut t) };
        }
        return to_real(real);
    }
    let mut a = args(call, comm);
    a.sbuf = sbuf;
    a.rbuf = rbuf;
    a.arrays = Some(CollArrays::new(Box::new(WArrays {
        counts,
        displs_int,
        displs_aint,
        types,
    })));
    // SAFETY: per the contract.
    unsafe { init_with(a, held, request, real) }
}

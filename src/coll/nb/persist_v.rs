//! What the initialisations of the persistent neighbourhood, `v` and `w`
//! collectives build with (the initialisations themselves are written
//! next to their nonblocking forms, `nb_entry!`): the `v` forms keep
//! copies of their count and displacement arrays, made where they are
//! significant and kept in the request (`CollArgs::arrays`, opaque to the
//! requests' layer; [`super::persist_arrays`]), which every start hands
//! to the nonblocking call; the `w` forms (`MPI_Alltoallw_init`,
//! `Neighbor_alltoallw_init`) copies of their datatype arrays too, each
//! derived datatype replaced by a duplicate the request holds. Above
//! [`super::persist`]: each ends in its [`init`] or [`init_with`].

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::to_real;
use super::persist::{args, dup_derived, init, init_with};
use super::persist_arrays::{Arrays, WArrays};
use crate::p2p::engine::{CollArgs, CollArrays};

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
    a.arrays = Some(CollArrays::new(Box::new(Arrays::new(given.map(copy)))));
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
    a.arrays = Some(CollArrays::new(Box::new(WArrays::new(
        counts,
        displs_int,
        displs_aint,
        types,
    ))));
    // SAFETY: per the contract.
    unsafe { init_with(a, held, request, real) }
}

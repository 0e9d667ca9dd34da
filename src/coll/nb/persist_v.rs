//! The initialisations of the persistent neighbourhood and `v`
//! collectives (`MPI_Neighbor_allgather_init`, `Neighbor_alltoall_init`,
//! `Gatherv_init`, `Scatterv_init`, `Allgatherv_init`, `Alltoallv_init`,
//! `Reduce_scatter_init`, `Neighbor_allgatherv_init`,
//! `Neighbor_alltoallv_init`), made as [`super::persist`]'s; the `v`
//! forms with copies of their count and displacement arrays, made where
//! they are significant and kept in the request (`CollArgs::arrays`,
//! opaque to the requests' layer), which every start hands to the
//! nonblocking call; the `w` forms (`MPI_Alltoallw_init`,
//! `Neighbor_alltoallw_init`) with copies of their datatype arrays too,
//! each derived datatype replaced by a duplicate the request holds.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::{in_place, to_real};
use super::persist::NEIGHBOR_ALLTOALLV;
use super::persist::{args, blocks_args, dup_derived, init, init_with};
use super::persist::{ALLGATHERV, ALLTOALLV, GATHERV, REDUCE_SCATTER, SCATTERV};
use super::persist::{ALLTOALLW, NEIGHBOR_ALLTOALLW};
use super::persist::{NEIGHBOR_ALLGATHER, NEIGHBOR_ALLGATHERV, NEIGHBOR_ALLTOALL};
use crate::p2p::engine::{CollArgs, CollArrays};

persist_init! {
    "MPI_Neighbor_allgather_init": neighbor_allgather_init(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    );
    args = blocks_args(NEIGHBOR_ALLGATHER, sbuf, scount, sdt, rbuf, rcount, rdt, 0, comm);
    real = ffi::PMPI_Neighbor_allgather_init;
}

persist_init! {
    "MPI_Neighbor_alltoall_init": neighbor_alltoall_init(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    );
    args = blocks_args(NEIGHBOR_ALLTOALL, sbuf, scount, sdt, rbuf, rcount, rdt, 0, comm);
    real = ffi::PMPI_Neighbor_alltoall_init;
}

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
const NONE: (*const c_int, bool, bool) = (core::ptr::null(), false, false);

/// An array significant on every member, for [`v_init`].
fn all(p: *const c_int) -> (*const c_int, bool, bool) {
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
unsafe fn v_init(
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

persist_init! {
    "MPI_Gatherv_init": gatherv_init(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        displs: *const c_int,
        rdt: ffi::MPI_Datatype,
        root: c_int,
        comm: ffi::MPI_Comm,
    ) with (request, real) {
        let a = blocks_args(GATHERV, sbuf, scount, sdt, rbuf, 0, rdt, root, comm);
        let at_root = |p| (p, true, false);
        v_init(a, [NONE, NONE, at_root(rcounts), at_root(displs)], None, request, real)
    }
    real = ffi::PMPI_Gatherv_init;
}

persist_init! {
    "MPI_Scatterv_init": scatterv_init(
        sbuf: *const c_void,
        scounts: *const c_int,
        displs: *const c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        root: c_int,
        comm: ffi::MPI_Comm,
    ) with (request, real) {
        let a = blocks_args(SCATTERV, sbuf, 0, sdt, rbuf, rcount, rdt, root, comm);
        let at_root = |p| (p, true, false);
        v_init(a, [at_root(scounts), at_root(displs), NONE, NONE], None, request, real)
    }
    real = ffi::PMPI_Scatterv_init;
}

persist_init! {
    "MPI_Allgatherv_init": allgatherv_init(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        displs: *const c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) with (request, real) {
        // Root -1: no member is one; every array is significant everywhere.
        let a = blocks_args(ALLGATHERV, sbuf, scount, sdt, rbuf, 0, rdt, -1, comm);
        v_init(a, [NONE, NONE, all(rcounts), all(displs)], None, request, real)
    }
    real = ffi::PMPI_Allgatherv_init;
}

persist_init! {
    "MPI_Alltoallv_init": alltoallv_init(
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) with (request, real) {
        let a = blocks_args(ALLTOALLV, sbuf, 0, sdt, rbuf, 0, rdt, -1, comm);
        // The send arrays are not significant in place.
        let sends = sbuf != in_place();
        let send = |p| (p, sends, sends);
        let arrays = [send(scounts), send(sdispls), all(rcounts), all(rdispls)];
        v_init(a, arrays, None, request, real)
    }
    real = ffi::PMPI_Alltoallv_init;
}

/// The lengths of a neighbourhood collective's arrays on `comm` (send
/// ones: out-degree, receive ones: in-degree), if heapmpi has read its
/// topology (else the initialisation is the real MPI's).
fn degrees(comm: ffi::MPI_Comm) -> Option<[usize; 4]> {
    let nb = super::super::info(comm)?.topo.get()?.as_ref()?;
    let (o, i) = (nb.blocks, nb.indegree());
    Some([o, o, i, i])
}

persist_init! {
    "MPI_Neighbor_allgatherv_init": neighbor_allgatherv_init(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        displs: *const c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) with (request, real) {
        let a = blocks_args(NEIGHBOR_ALLGATHERV, sbuf, scount, sdt, rbuf, 0, rdt, -1, comm);
        let Some(lens) = degrees(comm) else {
            return to_real(real);
        };
        // MPI requires in-degree entries.
        let arrays = [NONE, NONE, all(rcounts), all(displs)];
        v_init(a, arrays, Some(lens), request, real)
    }
    real = ffi::PMPI_Neighbor_allgatherv_init;
}

persist_init! {
    "MPI_Neighbor_alltoallv_init": neighbor_alltoallv_init(
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) with (request, real) {
        let a = blocks_args(NEIGHBOR_ALLTOALLV, sbuf, 0, sdt, rbuf, 0, rdt, -1, comm);
        let Some(lens) = degrees(comm) else {
            return to_real(real);
        };
        // MPI requires out-degree (in-degree) entries.
        let arrays = [all(scounts), all(sdispls), all(rcounts), all(rdispls)];
        v_init(a, arrays, Some(lens), request, real)
    }
    real = ffi::PMPI_Neighbor_alltoallv_init;
}

persist_init! {
    "MPI_Reduce_scatter_init": reduce_scatter_init(
        sbuf: *const c_void,
        rbuf: *mut c_void,
        counts: *const c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        comm: ffi::MPI_Comm,
    ) with (request, real) {
        let a = CollArgs {
            sbuf,
            rbuf,
            sdt: dt,
            op,
            root: -1,
            ..args(REDUCE_SCATTER, comm)
        };
        v_init(a, [NONE, NONE, all(counts), NONE], None, request, real)
    }
    real = ffi::PMPI_Reduce_scatter_init;
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
unsafe fn copy<T: Copy>(p: *const T, len: usize) -> Vec<T> {
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
unsafe fn w_init(
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

persist_init! {
    "MPI_Alltoallw_init": alltoallw_init(
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const c_int,
        stypes: *const ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const c_int,
        rtypes: *const ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) with (request, real) {
        let mut size = 0;
        // An invalid communicator fails here and the real initialisation
        // reports it.
        if ffi::PMPI_Comm_size(comm, &mut size) != 0 || size < 1 {
            return to_real(real);
        }
        // The send arrays are not significant in place; MPI requires n
        // entries in each significant one.
        let n = size as usize;
        let lens = [if sbuf == in_place() { 0 } else { n }, n];
        let displs = |l: [usize; 2]| {
            (
                [copy(sdispls, l[0]), copy(rdispls, l[1])],
                [Vec::new(), Vec::new()],
            )
        };
        let (counts, types) = ([scounts, rcounts], [stypes, rtypes]);
        w_init(ALLTOALLW, sbuf, rbuf, comm, counts, displs, types, lens, request, real)
    }
    real = ffi::PMPI_Alltoallw_init;
}

persist_init! {
    "MPI_Neighbor_alltoallw_init": neighbor_alltoallw_init(
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const ffi::MPI_Aint,
        stypes: *const ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const ffi::MPI_Aint,
        rtypes: *const ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) with (request, real) {
        let Some([o, _, i, _]) = degrees(comm) else {
            return to_real(real);
        };
        // MPI requires out-degree (in-degree) entries in each array.
        let displs = |l: [usize; 2]| {
            (
                [Vec::new(), Vec::new()],
                [copy(sdispls, l[0]), copy(rdispls, l[1])],
            )
        };
        let (counts, types) = ([scounts, rcounts], [stypes, rtypes]);
        w_init(NEIGHBOR_ALLTOALLW, sbuf, rbuf, comm, counts, displs, types, [o, i], request, real)
    }
    real = ffi::PMPI_Neighbor_alltoallw_init;
}

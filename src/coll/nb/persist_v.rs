//! The initialisations of the persistent neighbourhood and `v`
//! collectives (`MPI_Neighbor_allgather_init`, `Neighbor_alltoall_init`,
//! `Gatherv_init`, `Scatterv_init`, `Allgatherv_init`, `Alltoallv_init`,
//! `Reduce_scatter_init`, `Neighbor_allgatherv_init`,
//! `Neighbor_alltoallv_init`), made as [`super::persist`]'s; the `v`
//! forms with copies of their count and displacement arrays, made where
//! they are significant and kept in the request (`CollArgs::arrays`,
//! opaque to the requests' layer), which every start hands to the
//! nonblocking call.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::{in_place, to_real};
use super::persist::NEIGHBOR_ALLTOALLV;
use super::persist::{args, blocks_args, init};
use super::persist::{ALLGATHERV, ALLTOALLV, GATHERV, REDUCE_SCATTER, SCATTERV};
use super::persist::{NEIGHBOR_ALLGATHER, NEIGHBOR_ALLGATHERV, NEIGHBOR_ALLTOALL};
use crate::p2p::engine::CollArgs;

/// `MPI_Neighbor_allgather_init`.
///
/// # Safety
/// As `MPI_Neighbor_allgather_init`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn neighbor_allgather_init(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    info: ffi::MPI_Info,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let a = blocks_args(
        NEIGHBOR_ALLGATHER,
        sbuf,
        scount,
        sdt,
        rbuf,
        rcount,
        rdt,
        0,
        comm,
    );
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        init(a, request, || {
            ffi::PMPI_Neighbor_allgather_init(
                sbuf, scount, sdt, rbuf, rcount, rdt, comm, info, request,
            )
        })
    }
}

/// `MPI_Neighbor_alltoall_init`.
///
/// # Safety
/// As `MPI_Neighbor_alltoall_init`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn neighbor_alltoall_init(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    info: ffi::MPI_Info,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let a = blocks_args(
        NEIGHBOR_ALLTOALL,
        sbuf,
        scount,
        sdt,
        rbuf,
        rcount,
        rdt,
        0,
        comm,
    );
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        init(a, request, || {
            ffi::PMPI_Neighbor_alltoall_init(
                sbuf, scount, sdt, rbuf, rcount, rdt, comm, info, request,
            )
        })
    }
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
    let arr = a.arrays.as_deref().and_then(|x| x.downcast_ref::<Arrays>());
    move |k| arr.map_or(core::ptr::null(), |x| x.ptr(k))
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
    a.arrays = Some(std::sync::Arc::new(Arrays(given.map(copy))));
    // SAFETY: per the contract.
    unsafe { init(a, request, real) }
}

/// `MPI_Gatherv_init`.
///
/// # Safety
/// As `MPI_Gatherv_init`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gatherv_init(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    info: ffi::MPI_Info,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let a = blocks_args(GATHERV, sbuf, scount, sdt, rbuf, 0, rdt, root, comm);
    let none = (core::ptr::null(), false, false);
    let at_root = |p| (p, true, false);
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        v_init(
            a,
            [none, none, at_root(rcounts), at_root(displs)],
            None,
            request,
            || {
                ffi::PMPI_Gatherv_init(
                    sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, info, request,
                )
            },
        )
    }
}

/// `MPI_Scatterv_init`.
///
/// # Safety
/// As `MPI_Scatterv_init`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn scatterv_init(
    sbuf: *const c_void,
    scounts: *const c_int,
    displs: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
    info: ffi::MPI_Info,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let a = blocks_args(SCATTERV, sbuf, 0, sdt, rbuf, rcount, rdt, root, comm);
    let none = (core::ptr::null(), false, false);
    let at_root = |p| (p, true, false);
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        v_init(
            a,
            [at_root(scounts), at_root(displs), none, none],
            None,
            request,
            || {
                ffi::PMPI_Scatterv_init(
                    sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, info, request,
                )
            },
        )
    }
}

/// `MPI_Allgatherv_init`.
///
/// # Safety
/// As `MPI_Allgatherv_init`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn allgatherv_init(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    info: ffi::MPI_Info,
    request: *mut ffi::MPI_Request,
) -> c_int {
    // Root -1: no member is one; every array is significant everywhere.
    let a = blocks_args(ALLGATHERV, sbuf, scount, sdt, rbuf, 0, rdt, -1, comm);
    let none = (core::ptr::null(), false, false);
    let all = |p| (p, true, true);
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        v_init(
            a,
            [none, none, all(rcounts), all(displs)],
            None,
            request,
            || {
                ffi::PMPI_Allgatherv_init(
                    sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, info, request,
                )
            },
        )
    }
}

/// `MPI_Alltoallv_init`.
///
/// # Safety
/// As `MPI_Alltoallv_init`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn alltoallv_init(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    info: ffi::MPI_Info,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let a = blocks_args(ALLTOALLV, sbuf, 0, sdt, rbuf, 0, rdt, -1, comm);
    // The send arrays are not significant in place.
    let sends = sbuf != in_place();
    let send = |p| (p, sends, sends);
    let all = |p| (p, true, true);
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        v_init(
            a,
            [send(scounts), send(sdispls), all(rcounts), all(rdispls)],
            None,
            request,
            || {
                ffi::PMPI_Alltoallv_init(
                    sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, info, request,
                )
            },
        )
    }
}

/// The lengths of a neighbourhood collective's arrays on `comm` (send
/// ones: out-degree, receive ones: in-degree), if heapmpi has read its
/// topology (else the initialisation is the real MPI's).
fn degrees(comm: ffi::MPI_Comm) -> Option<[usize; 4]> {
    let nb = super::super::info(comm)?.topo.get()?.as_ref()?;
    let (o, i) = (nb.blocks, nb.indegree());
    Some([o, o, i, i])
}

/// `MPI_Neighbor_allgatherv_init`.
///
/// # Safety
/// As `MPI_Neighbor_allgatherv_init`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn neighbor_allgatherv_init(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    info: ffi::MPI_Info,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let a = blocks_args(
        NEIGHBOR_ALLGATHERV,
        sbuf,
        scount,
        sdt,
        rbuf,
        0,
        rdt,
        -1,
        comm,
    );
    let real = || {
        // SAFETY: the caller's arguments, forwarded.
        unsafe {
            ffi::PMPI_Neighbor_allgatherv_init(
                sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, info, request,
            )
        }
    };
    let Some(lens) = degrees(comm) else {
        return to_real(real);
    };
    let none = (core::ptr::null(), false, false);
    let all = |p| (p, true, true);
    // SAFETY: the caller's arguments; MPI requires in-degree entries.
    unsafe {
        v_init(
            a,
            [none, none, all(rcounts), all(displs)],
            Some(lens),
            request,
            real,
        )
    }
}

/// `MPI_Neighbor_alltoallv_init`.
///
/// # Safety
/// As `MPI_Neighbor_alltoallv_init`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn neighbor_alltoallv_init(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
    info: ffi::MPI_Info,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let a = blocks_args(NEIGHBOR_ALLTOALLV, sbuf, 0, sdt, rbuf, 0, rdt, -1, comm);
    let real = || {
        // SAFETY: the caller's arguments, forwarded.
        unsafe {
            ffi::PMPI_Neighbor_alltoallv_init(
                sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, info, request,
            )
        }
    };
    let Some(lens) = degrees(comm) else {
        return to_real(real);
    };
    let all = |p| (p, true, true);
    // SAFETY: the caller's arguments; MPI requires out-degree (in-degree)
    // entries.
    unsafe {
        v_init(
            a,
            [all(scounts), all(sdispls), all(rcounts), all(rdispls)],
            Some(lens),
            request,
            real,
        )
    }
}

/// `MPI_Reduce_scatter_init`.
///
/// # Safety
/// As `MPI_Reduce_scatter_init`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce_scatter_init(
    sbuf: *const c_void,
    rbuf: *mut c_void,
    counts: *const c_int,
    dt: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
    info: ffi::MPI_Info,
    request: *mut ffi::MPI_Request,
) -> c_int {
    let a = CollArgs {
        sbuf,
        rbuf,
        sdt: dt,
        op,
        root: -1,
        ..args(REDUCE_SCATTER, comm)
    };
    let none = (core::ptr::null(), false, false);
    // SAFETY: the caller's arguments; the real call forwards them.
    unsafe {
        v_init(
            a,
            [none, none, (counts, true, true), none],
            None,
            request,
            || ffi::PMPI_Reduce_scatter_init(sbuf, rbuf, counts, dt, op, comm, info, request),
        )
    }
}

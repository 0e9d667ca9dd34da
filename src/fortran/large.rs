//! MPICH's `use mpi_f08` large-count procedures (`mpi_x_f08_large_`, the
//! specifics the generic `MPI_X` resolves to when a count, size or
//! displacement unit is of kind `MPI_COUNT_KIND` or `MPI_ADDRESS_KIND`)
//! that call the real MPI's `PMPI_*_c` directly: without heapmpi's own
//! definitions, a window made by `MPI_Win_allocate(size, 4_MPI_ADDRESS_KIND,
//! ...)` would be the real MPI's (never on the shared heap), and a buffer
//! detached by `MPI_Buffer_detach` with an `MPI_COUNT_KIND` size would stay
//! attached as far as heapmpi's buffered sends know. Its other
//! large-count procedures call the C `MPI_*_c`, which heapmpi intercepts
//! (`crate::large`), or only read statuses and datatypes.
//!
//! Arguments as MPICH's binding gets them: every one by reference; handles
//! are `TYPE(MPI_X)`, one `INTEGER` (MPICH's C handle); a `TYPE(C_PTR)`
//! out-argument is the address of the pointer; `ierror` is optional (null).

use super::*;
use crate::large;
use conv::{comm, info, set_win, win};
use ffi::{MPI_Aint as Aint, MPI_Count as Count};

/// `MPI_Buffer_detach` with an `INTEGER(MPI_COUNT_KIND)` size.
///
/// # Safety
/// MPICH's binding contract: `buf` and `size` writable, `ierr` null or
/// writable.
pub unsafe fn buffer_detach(buf: *mut c_void, size: *mut Count, ierr: *mut Fint) {
    // SAFETY: per the contract.
    unsafe { set_ierr(ierr, large::buffer_detach(buf, size)) }
}

/// `MPI_Win_allocate` (`shared` false) and `MPI_Win_allocate_shared` with
/// an `INTEGER(MPI_ADDRESS_KIND)` displacement unit.
///
/// # Safety
/// MPICH's binding contract: `size`, `unit`, `inf`, `c` readable; `baseptr`
/// the address of a `TYPE(C_PTR)`; `w` writable; `ierr` null or writable.
#[allow(clippy::too_many_arguments)]
pub unsafe fn win_allocate(
    shared: bool,
    size: *const Aint,
    unit: *const Aint,
    inf: *const Fint,
    c: *const Fint,
    baseptr: *mut c_void,
    w: *mut Fint,
    ierr: *mut Fint,
) {
    // SAFETY: per the contract.
    unsafe {
        let mut cw = ffi::RSMPI_WIN_NULL;
        let rc = large::win_allocate(shared, *size, *unit, info(inf), comm(c), baseptr, &mut cw);
        if rc == 0 {
            set_win(w, cw);
        }
        set_ierr(ierr, rc);
    }
}

/// `MPI_Win_shared_query` with an `INTEGER(MPI_ADDRESS_KIND)` displacement
/// unit.
///
/// # Safety
/// MPICH's binding contract: `w`, `rank` readable; `size`, `unit` writable;
/// `baseptr` the address of a `TYPE(C_PTR)`; `ierr` null or writable.
pub unsafe fn win_shared_query(
    w: *const Fint,
    rank: *const Fint,
    size: *mut Aint,
    unit: *mut Aint,
    baseptr: *mut c_void,
    ierr: *mut Fint,
) {
    // SAFETY: per the contract.
    unsafe {
        set_ierr(
            ierr,
            large::win_shared_query(win(w), *rank, size, unit, baseptr),
        )
    }
}

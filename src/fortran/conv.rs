//! The Fortran sentinels, and the conversions between Fortran and C
//! arguments that heapmpi's own bindings make, as the MPIs' own bindings
//! make them (Open MPI: `ompi/mpi/fortran/base`; MPICH's handles are the
//! Fortran integers themselves).

use super::*;

/// The Fortran sentinels of the bindings heapmpi implements: Open MPI's
/// `mpif.h` ones (common blocks its C library defines), MPICH's
/// `mpi_f08` ones (objects its C library defines). A Fortran argument is
/// the sentinel when it is the sentinel's address.
#[cfg(not(heapmpi_mpich))]
mod sentinel {
    use super::*;

    extern "C" {
        static mpi_fortran_bottom_: c_int;
        static mpi_fortran_status_ignore_: c_int;
        static mpi_fortran_statuses_ignore_: c_int;
        static mpi_fortran_unweighted_: c_int;
        static mpi_fortran_weights_empty_: c_int;
    }

    /// `MPI_BOTTOM`, `MPI_STATUS_IGNORE`, `MPI_STATUSES_IGNORE`,
    /// `MPI_UNWEIGHTED`, `MPI_WEIGHTS_EMPTY`.
    pub fn all() -> [*const c_int; 5] {
        // Taking the addresses of extern statics reads nothing.
        [
            core::ptr::addr_of!(mpi_fortran_bottom_),
            core::ptr::addr_of!(mpi_fortran_status_ignore_),
            core::ptr::addr_of!(mpi_fortran_statuses_ignore_),
            core::ptr::addr_of!(mpi_fortran_unweighted_),
            core::ptr::addr_of!(mpi_fortran_weights_empty_),
        ]
    }

    /// `MPI_IN_PLACE`.
    pub fn in_place() -> *const c_int {
        extern "C" {
            static mpi_fortran_in_place_: c_int;
        }
        // Taking the address of an extern static reads nothing.
        core::ptr::addr_of!(mpi_fortran_in_place_)
    }

    /// Open MPI's C `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY` (`mpi.h`).
    pub const UNWEIGHTED: usize = 2;
    /// See [`UNWEIGHTED`].
    pub const WEIGHTS_EMPTY: usize = 3;
}

#[cfg(heapmpi_mpich)]
mod sentinel {
    use super::*;

    extern "C" {
        static MPIR_F08_MPI_BOTTOM: c_int;
        static MPIR_F08_MPI_STATUS_IGNORE_OBJ: c_int;
        static MPIR_F08_MPI_STATUSES_IGNORE_OBJ: c_int;
    }

    /// As Open MPI's (MPICH's `mpi_f08` procedures heapmpi implements take
    /// no weights: those two never match).
    pub fn all() -> [*const c_int; 5] {
        // Taking the addresses of extern statics reads nothing.
        [
            core::ptr::addr_of!(MPIR_F08_MPI_BOTTOM),
            core::ptr::addr_of!(MPIR_F08_MPI_STATUS_IGNORE_OBJ),
            core::ptr::addr_of!(MPIR_F08_MPI_STATUSES_IGNORE_OBJ),
            core::ptr::null(),
            core::ptr::null(),
        ]
    }

    /// `MPI_IN_PLACE`.
    pub fn in_place() -> *const c_int {
        extern "C" {
            static MPIR_F08_MPI_IN_PLACE: c_int;
        }
        // Taking the address of an extern static reads nothing.
        core::ptr::addr_of!(MPIR_F08_MPI_IN_PLACE)
    }

    /// MPICH's C `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY` are variables;
    /// unused here (see [`all`]).
    pub const UNWEIGHTED: usize = 0;
    /// See [`UNWEIGHTED`].
    pub const WEIGHTS_EMPTY: usize = 0;
}

// A Fortran status is `MPI_STATUS_SIZE` integers laid out as the C
// status (Open MPI: 6, MPICH: 5 4-byte integers), so it is passed as
// one, as the MPIs' bindings do.
const _: () = assert!(core::mem::size_of::<ffi::MPI_Status>() % 4 == 0);

/// `MPI_BOTTOM` becomes the C `MPI_BOTTOM` (null).
pub fn buf(p: *const c_void) -> *mut c_void {
    if p == sentinel::all()[0] as *const c_void {
        core::ptr::null_mut()
    } else {
        p as *mut c_void
    }
}

/// A collective's buffer that may be `MPI_IN_PLACE`: that becomes the C
/// `MPI_IN_PLACE`, `MPI_BOTTOM` the C `MPI_BOTTOM`.
pub fn in_place_or_bottom(p: *const c_void) -> *mut c_void {
    if p == sentinel::in_place() as *const c_void {
        crate::coll::in_place() as *mut c_void
    } else {
        buf(p)
    }
}

/// The C operation of a Fortran one.
///
/// # Safety
/// `f` points at an `INTEGER`.
pub unsafe fn op(f: *const Fint) -> ffi::MPI_Op {
    #[cfg(not(heapmpi_mpich))]
    // SAFETY: per the contract.
    return unsafe { ffi::PMPI_Op_f2c(*f) };
    #[cfg(heapmpi_mpich)]
    // SAFETY: per the contract.
    return ffi::MPI_Op(unsafe { *f });
}

/// A Fortran status argument as a C one.
pub fn status(f: *mut Fint) -> *mut ffi::MPI_Status {
    if core::ptr::eq(f, sentinel::all()[1]) {
        // SAFETY: reading an MPI constant.
        unsafe { ffi::RSMPI_STATUS_IGNORE }
    } else {
        f.cast()
    }
}

/// A Fortran array of statuses as a C one.
pub fn statuses(f: *mut Fint) -> *mut ffi::MPI_Status {
    if core::ptr::eq(f, sentinel::all()[2]) {
        // SAFETY: reading an MPI constant.
        unsafe { ffi::RSMPI_STATUSES_IGNORE }
    } else {
        f.cast()
    }
}

/// A weights argument of the distributed graph constructors.
pub fn weights(f: *const Fint) -> *const c_int {
    let s = sentinel::all();
    if !s[3].is_null() && f == s[3] {
        sentinel::UNWEIGHTED as *const c_int
    } else if !s[4].is_null() && f == s[4] {
        sentinel::WEIGHTS_EMPTY as *const c_int
    } else {
        f
    }
}

/// The C communicator of a Fortran one.
///
/// # Safety
/// `f` points at an `INTEGER`.
pub unsafe fn comm(f: *const Fint) -> ffi::MPI_Comm {
    #[cfg(not(heapmpi_mpich))]
    // SAFETY: per the contract.
    return unsafe { ffi::PMPI_Comm_f2c(*f) };
    #[cfg(heapmpi_mpich)]
    // SAFETY: per the contract.
    return ffi::MPI_Comm(unsafe { *f });
}

/// The C datatype of a Fortran one.
///
/// # Safety
/// As [`comm`].
pub unsafe fn dtype(f: *const Fint) -> ffi::MPI_Datatype {
    #[cfg(not(heapmpi_mpich))]
    // SAFETY: per the contract.
    return unsafe { ffi::PMPI_Type_f2c(*f) };
    #[cfg(heapmpi_mpich)]
    // SAFETY: per the contract.
    return ffi::MPI_Datatype(unsafe { *f });
}

/// The C group of a Fortran one.
///
/// # Safety
/// As [`comm`].
pub unsafe fn group(f: *const Fint) -> ffi::MPI_Group {
    #[cfg(not(heapmpi_mpich))]
    // SAFETY: per the contract.
    return unsafe { ffi::PMPI_Group_f2c(*f) };
    #[cfg(heapmpi_mpich)]
    // SAFETY: per the contract.
    return ffi::MPI_Group(unsafe { *f });
}

/// The C info of a Fortran one.
///
/// # Safety
/// As [`comm`].
pub unsafe fn info(f: *const Fint) -> ffi::MPI_Info {
    #[cfg(not(heapmpi_mpich))]
    // SAFETY: per the contract.
    return unsafe { ffi::PMPI_Info_f2c(*f) };
    #[cfg(heapmpi_mpich)]
    // SAFETY: per the contract.
    return ffi::MPI_Info(unsafe { *f });
}

/// The C window of a Fortran one.
///
/// # Safety
/// As [`comm`].
pub unsafe fn win(f: *const Fint) -> ffi::MPI_Win {
    #[cfg(not(heapmpi_mpich))]
    // SAFETY: per the contract.
    return unsafe { ffi::PMPI_Win_f2c(*f) };
    #[cfg(heapmpi_mpich)]
    // SAFETY: per the contract.
    return ffi::MPI_Win(unsafe { *f });
}

/// Stores a C window in a Fortran one.
///
/// # Safety
/// `out` points at a writable `INTEGER`.
pub unsafe fn set_win(out: *mut Fint, c: ffi::MPI_Win) {
    #[cfg(not(heapmpi_mpich))]
    // SAFETY: per the contract.
    unsafe {
        *out = ffi::PMPI_Win_c2f(c)
    };
    #[cfg(heapmpi_mpich)]
    // SAFETY: per the contract.
    unsafe {
        *out = c.0
    };
}

/// Stores a C communicator in a Fortran one.
///
/// # Safety
/// `out` points at a writable `INTEGER`.
pub unsafe fn set_comm(out: *mut Fint, c: ffi::MPI_Comm) {
    #[cfg(not(heapmpi_mpich))]
    // SAFETY: per the contract.
    unsafe {
        *out = ffi::PMPI_Comm_c2f(c)
    };
    #[cfg(heapmpi_mpich)]
    // SAFETY: per the contract.
    unsafe {
        *out = c.0
    };
}

/// The C request of a Fortran one (heapmpi's included).
///
/// # Safety
/// As [`comm`].
pub unsafe fn request(f: *const Fint) -> ffi::MPI_Request {
    // SAFETY: per the contract.
    crate::req::handle::request_f2c(unsafe { *f })
}

/// Stores a C request in a Fortran one.
///
/// # Safety
/// As [`set_comm`].
pub unsafe fn set_request(out: *mut Fint, r: ffi::MPI_Request) {
    // SAFETY: per the contract.
    unsafe { *out = crate::req::handle::request_c2f(r) };
}

/// A Fortran array of `n` requests as C requests.
///
/// # Safety
/// `f` points at `n` integers.
pub unsafe fn requests(f: *const Fint, n: Fint) -> Vec<ffi::MPI_Request> {
    // SAFETY: per the contract.
    (0..n.max(0) as usize)
        .map(|i| unsafe { request(f.add(i)) })
        .collect()
}

/// Writes C requests back into a Fortran array.
///
/// # Safety
/// `f` has room for `c.len()` integers.
pub unsafe fn set_requests(f: *mut Fint, c: &[ffi::MPI_Request]) {
    for (i, &r) in c.iter().enumerate() {
        // SAFETY: per the contract.
        unsafe { set_request(f.add(i), r) };
    }
}

/// A Fortran `LOGICAL` from a C flag (gfortran's `.TRUE.` is 1).
pub fn logical(flag: c_int) -> Fint {
    (flag != 0) as Fint
}

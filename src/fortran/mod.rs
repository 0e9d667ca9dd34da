//! The Fortran bindings (`mpif.h`, `use mpi`, `use mpi_f08`) of every call
//! heapmpi intercepts in C.
//!
//! Every message between two ranks of a node must take one channel, or a
//! message sent with `mpi_send` never reaches a receive waiting in
//! heapmpi's queues (and C and Fortran sends of one sender would not keep
//! their order). Where a binding of the MPI calls the C `MPI_*` function,
//! heapmpi is reached already; where it calls `PMPI_*`, heapmpi must define
//! the binding itself:
//!
//! - **Open MPI**: its `mpif.h`/`use mpi` bindings (`mpi_send_`, alias
//!   `ompi_send_f`) call `PMPI_*`, and its `use mpi_f08` procedures call
//!   `ompi_send_f`. heapmpi defines both names (module `own` of [`p2p`]
//!   and of [`coll`]): each converts its Fortran arguments as Open MPI's binding does (handles with
//!   `PMPI_*_f2c`, `MPI_BOTTOM` and `MPI_STATUS(ES)_IGNORE` by the address
//!   of their common block, 1-based indices) and calls the same heapmpi
//!   entry point as the C call, which serves it or hands it to the real
//!   MPI. One-sided calls likewise ([`rma`]).
//! - **MPICH**: its `mpif.h`/`use mpi` bindings call the C `MPI_*`; heapmpi's
//!   definitions of them forward to MPICH's (module `real`). Its `use mpi_f08`
//!   procedures call `MPI_*` for sends and receives but `PMPI_*` for
//!   waits, tests, starts, probes, request and communicator calls: heapmpi
//!   defines those (`mpi_wait_f08_`, ...) itself (module `own`, with MPICH's
//!   `mpi_f08` sentinels; its handles are the Fortran integers). So too
//!   the window synchronisation and allocation of `use mpi_f08`, and
//!   `MPI_Win_get_attr` of every form ([`rma`]).
//! - `MPI_Init` and `MPI_Finalize` call the MPI's own binding (it does
//!   Fortran set-up), with heapmpi's start-up after and shut-down before.
//!
//! Only gfortran's names (`mpi_send_`, and `mpi_send__` as both MPIs also
//! provide) are defined; `src/ffi/fortran.rs` exports them and picks, per
//! MPI, which of `own`, `real` and `real_f08` serves each name.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

/// A Fortran `INTEGER` (both MPIs here: a C `int`).
pub type Fint = c_int;

/// Defines each Fortran binding of a family three ways, as three modules of
/// the family: heapmpi's own (`own`: converts the arguments and calls the
/// C entry point), and forwards to the MPI's own binding of the `mpif.h`
/// name (`real`) and of the `use mpi_f08` name (`real_f08`).
/// `src/ffi/fortran.rs` exports the one each MPI needs under each name.
macro_rules! binding {
    ($( $(#[doc = $doc:expr])* fn $name:ident($($a:ident: $t:ty),* $(,)?) $body:block )*) => {
        /// heapmpi's own bindings.
        pub mod own {
            #[allow(unused_imports)]
            use super::*;
            $(
                $(#[doc = $doc])*
                ///
                /// # Safety
                /// The Fortran binding's contract: every argument points at
                /// what the Fortran caller passed (`ierr` may be null).
                #[allow(clippy::too_many_arguments)]
                pub unsafe fn $name($($a: $t),*) $body
            )*
        }

        /// Forwards to the MPI's own `mpif.h` bindings (`mpi_x_`).
        pub mod real {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[doc = concat!("The MPI's own `mpi_", stringify!($name), "_`.")]
                ///
                /// # Safety
                /// As the binding.
                #[allow(clippy::too_many_arguments)]
                pub unsafe fn $name($($a: $t),*) {
                    type Real = unsafe extern "C" fn($($t),*);
                    static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
                    let f = own_binding(concat!("mpi_", stringify!($name), "_\0"), &REAL);
                    // SAFETY: the MPI's own binding of the same name, which
                    // has this signature.
                    let f: Real = unsafe { core::mem::transmute::<usize, Real>(f) };
                    // SAFETY: the caller's arguments, unchanged.
                    unsafe { f($($a),*) }
                }
            )*
        }

        /// Forwards to the MPI's own `use mpi_f08` procedures (`mpi_x_f08_`,
        /// which take the same arguments by reference).
        pub mod real_f08 {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[doc = concat!("The MPI's own `mpi_", stringify!($name), "_f08_`.")]
                ///
                /// # Safety
                /// As the binding.
                #[allow(clippy::too_many_arguments)]
                pub unsafe fn $name($($a: $t),*) {
                    type Real = unsafe extern "C" fn($($t),*);
                    static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
                    let f = own_binding(concat!("mpi_", stringify!($name), "_f08_\0"), &REAL);
                    // SAFETY: as in `real`.
                    let f: Real = unsafe { core::mem::transmute::<usize, Real>(f) };
                    // SAFETY: the caller's arguments, unchanged.
                    unsafe { f($($a),*) }
                }
            )*
        }
    };
}

/// The address of the next definition of `name` (NUL-terminated) after
/// the one that called: the MPI's own Fortran binding.
fn lookup(name: &str) -> usize {
    // SAFETY: a NUL-terminated name; RTLD_NEXT searches the objects loaded
    // after the caller's.
    unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) as usize }
}

/// A Fortran binding of the MPI itself, looked up once by name
/// (NUL-terminated); an abort if it is missing (a program that calls a
/// Fortran binding has the MPI's Fortran library loaded).
fn own_binding(name: &'static str, cache: &'static std::sync::OnceLock<usize>) -> usize {
    let f = *cache.get_or_init(|| lookup(name));
    if f == 0 {
        crate::eprint_noalloc!(
            "heapmpi: error: the MPI's own Fortran binding {} is missing",
            name.trim_end_matches('\0')
        );
        std::process::abort();
    }
    f
}

/// Stores a C return code in the Fortran `ierr` (optional in `mpi_f08`).
///
/// # Safety
/// `ierr` is null or a writable `INTEGER`.
unsafe fn set_ierr(ierr: *mut Fint, rc: c_int) {
    if !ierr.is_null() {
        // SAFETY: per the contract.
        unsafe { *ierr = rc };
    }
}

pub mod coll;
mod conv;
#[cfg(heapmpi_mpi4)]
pub mod large;
pub mod p2p;
pub mod rma;

/// `MPI_Init` of `use mpi_f08` (MPICH's calls `PMPI_Init` directly; Open
/// MPI's calls `ompi_init_f`, heapmpi's `p2p::own::init`): the MPI's own binding,
/// then heapmpi's start-up (once).
///
/// # Safety
/// The binding's contract (`ierr` may be null: it is optional).
pub unsafe fn init_f08(ierr: *mut Fint) {
    static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let f = own_binding("mpi_init_f08_\0", &REAL);
    // SAFETY: the MPI's `mpi_init_f08_(MPI_Fint *ierror)`.
    let f: unsafe extern "C" fn(*mut Fint) = unsafe { core::mem::transmute(f) };
    // SAFETY: the caller's argument.
    unsafe { f(ierr) };
    crate::mpi::after_fortran_init();
}

/// `MPI_Init_thread` of `use mpi_f08` (see [`init_f08`]).
///
/// # Safety
/// As [`init_f08`].
pub unsafe fn init_thread_f08(required: *const Fint, provided: *mut Fint, ierr: *mut Fint) {
    static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let f = own_binding("mpi_init_thread_f08_\0", &REAL);
    // SAFETY: the MPI's `mpi_init_thread_f08_`.
    let f: unsafe extern "C" fn(*const Fint, *mut Fint, *mut Fint) =
        unsafe { core::mem::transmute(f) };
    // SAFETY: the caller's arguments.
    unsafe { f(required, provided, ierr) };
    crate::mpi::after_fortran_init();
}

/// `MPI_Finalize` of `use mpi_f08`: heapmpi's shut-down, then the MPI's
/// own binding.
///
/// # Safety
/// As [`init_f08`].
pub unsafe fn finalize_f08(ierr: *mut Fint) {
    static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let f = own_binding("mpi_finalize_f08_\0", &REAL);
    crate::mpi::before_finalize();
    // SAFETY: the MPI's `mpi_finalize_f08_`.
    let f: unsafe extern "C" fn(*mut Fint) = unsafe { core::mem::transmute(f) };
    // SAFETY: the caller's argument.
    unsafe { f(ierr) };
}

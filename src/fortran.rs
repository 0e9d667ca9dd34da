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
//!   `ompi_send_f`. heapmpi defines both names ([`own`]): each converts its
//!   Fortran arguments as Open MPI's binding does (handles with
//!   `PMPI_*_f2c`, `MPI_BOTTOM` and `MPI_STATUS(ES)_IGNORE` by the address
//!   of their common block, 1-based indices) and calls the same heapmpi
//!   entry point as the C call, which serves it or hands it to the real
//!   MPI.
//! - **MPICH**: its `mpif.h`/`use mpi` bindings call the C `MPI_*`; heapmpi's
//!   definitions of them forward to MPICH's ([`real`]). Its `use mpi_f08`
//!   procedures call `MPI_*` for sends and receives but `PMPI_*` for
//!   waits, tests, starts, probes, request and communicator calls: heapmpi
//!   defines those (`mpi_wait_f08_`, ...) itself ([`own`], with MPICH's
//!   `mpi_f08` sentinels; its handles are the Fortran integers).
//! - `MPI_Init` and `MPI_Finalize` call the MPI's own binding (it does
//!   Fortran set-up), with heapmpi's start-up after and shut-down before.
//!
//! Only gfortran's names (`mpi_send_`, and `mpi_send__` as both MPIs also
//! provide) are defined; `src/ffi/fortran.rs` exports them and picks, per
//! MPI, which of [`own`], [`real`] and [`real_f08`] serves each name.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

/// A Fortran `INTEGER` (both MPIs here: a C `int`).
pub type Fint = c_int;

/// Defines each Fortran binding three ways: heapmpi's own (module
/// [`own`]: converts the arguments and calls the C entry point), and
/// forwards to the MPI's own binding of the `mpif.h` name ([`real`]) and of
/// the `use mpi_f08` name ([`real_f08`]). `src/ffi/fortran.rs` exports the
/// one each MPI needs under each name.
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

    /// MPICH's C `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY` are variables;
    /// unused here (see [`all`]).
    pub const UNWEIGHTED: usize = 0;
    /// See [`UNWEIGHTED`].
    pub const WEIGHTS_EMPTY: usize = 0;
}

/// Conversions between Fortran and C arguments, as the MPIs' own bindings
/// make them (Open MPI: `ompi/mpi/fortran/base`; MPICH's handles are the
/// Fortran integers themselves).
mod conv {
    use super::*;
    use crate::p2p::api;

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
        api::request_f2c(unsafe { *f })
    }

    /// Stores a C request in a Fortran one.
    ///
    /// # Safety
    /// As [`set_comm`].
    pub unsafe fn set_request(out: *mut Fint, r: ffi::MPI_Request) {
        // SAFETY: per the contract.
        unsafe { *out = api::request_c2f(r) };
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
}

use conv::*;

use crate::p2p::api;
use crate::p2p::engine::Mode;

binding! {
    /// `MPI_INIT`: the MPI's own binding, then heapmpi's start-up.
    fn init(ierr: *mut Fint) {
        static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let f = own_binding("ompi_init_f\0", &REAL);
        // SAFETY: Open MPI's `ompi_init_f(MPI_Fint *ierr)`.
        let f: unsafe extern "C" fn(*mut Fint) = unsafe { core::mem::transmute(f) };
        // SAFETY: the caller's argument.
        unsafe { f(ierr) };
        crate::mpi::after_fortran_init();
    }
    /// `MPI_INIT_THREAD` (see [`init`]).
    fn init_thread(required: *const Fint, provided: *mut Fint, ierr: *mut Fint) {
        static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let f = own_binding("ompi_init_thread_f\0", &REAL);
        // SAFETY: Open MPI's `ompi_init_thread_f`.
        let f: unsafe extern "C" fn(*const Fint, *mut Fint, *mut Fint) = unsafe { core::mem::transmute(f) };
        // SAFETY: the caller's arguments.
        unsafe { f(required, provided, ierr) };
        crate::mpi::after_fortran_init();
    }
    /// `MPI_FINALIZE`: heapmpi's shut-down, then the MPI's own binding.
    fn finalize(ierr: *mut Fint) {
        static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let f = own_binding("ompi_finalize_f\0", &REAL);
        crate::mpi::before_finalize();
        // SAFETY: Open MPI's `ompi_finalize_f`.
        let f: unsafe extern "C" fn(*mut Fint) = unsafe { core::mem::transmute(f) };
        // SAFETY: the caller's argument.
        unsafe { f(ierr) };
    }

    /// `MPI_SEND`.
    fn send(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, ierr: *mut Fint) {
        // SAFETY: the caller's arguments, converted.
        unsafe { set_ierr(ierr, api::send(conv::buf(buf), *count, dtype(dt), *dest, *tag, conv::comm(comm), Mode::Standard, false)) }
    }
    /// `MPI_SSEND`.
    fn ssend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { set_ierr(ierr, api::send(conv::buf(buf), *count, dtype(dt), *dest, *tag, conv::comm(comm), Mode::Sync, false)) }
    }
    /// `MPI_RSEND`.
    fn rsend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { set_ierr(ierr, api::send(conv::buf(buf), *count, dtype(dt), *dest, *tag, conv::comm(comm), Mode::Standard, true)) }
    }
    /// `MPI_BSEND`.
    fn bsend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { set_ierr(ierr, api::send(conv::buf(buf), *count, dtype(dt), *dest, *tag, conv::comm(comm), Mode::Buffered, false)) }
    }
    /// `MPI_ISEND`.
    fn isend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { request_send(api::isend, buf, count, dt, dest, tag, comm, req, ierr, Mode::Standard, false) }
    }
    /// `MPI_ISSEND`.
    fn issend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { request_send(api::isend, buf, count, dt, dest, tag, comm, req, ierr, Mode::Sync, false) }
    }
    /// `MPI_IRSEND`.
    fn irsend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { request_send(api::isend, buf, count, dt, dest, tag, comm, req, ierr, Mode::Standard, true) }
    }
    /// `MPI_IBSEND`.
    fn ibsend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { request_send(api::isend, buf, count, dt, dest, tag, comm, req, ierr, Mode::Buffered, false) }
    }
    /// `MPI_RECV`.
    fn recv(buf: *mut c_void, count: *const Fint, dt: *const Fint, src: *const Fint, tag: *const Fint, comm: *const Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { set_ierr(ierr, api::recv(conv::buf(buf), *count, dtype(dt), *src, *tag, conv::comm(comm), status(st))) }
    }
    /// `MPI_IRECV`.
    fn irecv(buf: *mut c_void, count: *const Fint, dt: *const Fint, src: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut r = api::req_null();
            let rc = api::irecv(conv::buf(buf), *count, dtype(dt), *src, *tag, conv::comm(comm), &mut r);
            if rc == 0 {
                set_request(req, r);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_SENDRECV`.
    fn sendrecv(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, dest: *const Fint, stag: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, src: *const Fint, rtag: *const Fint, comm: *const Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            set_ierr(ierr, api::sendrecv(conv::buf(sbuf), *scount, dtype(sdt), *dest, *stag, conv::buf(rbuf), *rcount, dtype(rdt), *src, *rtag, conv::comm(comm), status(st)))
        }
    }
    /// `MPI_SENDRECV_REPLACE`.
    fn sendrecv_replace(buf: *mut c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, stag: *const Fint, src: *const Fint, rtag: *const Fint, comm: *const Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            set_ierr(ierr, api::sendrecv_replace(conv::buf(buf), *count, dtype(dt), *dest, *stag, *src, *rtag, conv::comm(comm), status(st)))
        }
    }
    /// `MPI_PROBE`.
    fn probe(src: *const Fint, tag: *const Fint, comm: *const Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { set_ierr(ierr, api::probe(*src, *tag, conv::comm(comm), core::ptr::null_mut(), None, status(st), true)) }
    }
    /// `MPI_IPROBE`.
    fn iprobe(src: *const Fint, tag: *const Fint, comm: *const Fint, flag: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut f: c_int = 0;
            let rc = api::probe(*src, *tag, conv::comm(comm), &mut f, None, status(st), false);
            *flag = logical(f);
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_MPROBE`.
    fn mprobe(src: *const Fint, tag: *const Fint, comm: *const Fint, msg: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut m = api::message_f2c(*msg);
            let rc = api::probe(*src, *tag, conv::comm(comm), core::ptr::null_mut(), Some(&mut m), status(st), true);
            if rc == 0 {
                *msg = api::message_c2f(m);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_IMPROBE`.
    fn improbe(src: *const Fint, tag: *const Fint, comm: *const Fint, flag: *mut Fint, msg: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut m = api::message_f2c(*msg);
            let mut f: c_int = 0;
            let rc = api::probe(*src, *tag, conv::comm(comm), &mut f, Some(&mut m), status(st), false);
            if rc == 0 && f != 0 {
                *msg = api::message_c2f(m);
            }
            *flag = logical(f);
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_MRECV`.
    fn mrecv(buf: *mut c_void, count: *const Fint, dt: *const Fint, msg: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut m = api::message_f2c(*msg);
            let rc = api::mrecv(conv::buf(buf), *count, dtype(dt), &mut m, status(st), None);
            if rc == 0 {
                *msg = api::message_c2f(m);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_IMRECV`.
    fn imrecv(buf: *mut c_void, count: *const Fint, dt: *const Fint, msg: *mut Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut m = api::message_f2c(*msg);
            let mut r = api::req_null();
            let rc = api::mrecv(conv::buf(buf), *count, dtype(dt), &mut m, ffi::RSMPI_STATUS_IGNORE, Some(&mut r));
            if rc == 0 {
                *msg = api::message_c2f(m);
                set_request(req, r);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_WAIT`.
    fn wait(req: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut r = request(req);
            let rc = api::wait(&mut r, status(st));
            if rc == 0 {
                set_request(req, r);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_TEST`.
    fn test(req: *mut Fint, flag: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut r = request(req);
            let mut f: c_int = 0;
            let rc = api::test(&mut r, &mut f, status(st));
            if rc == 0 {
                set_request(req, r);
                *flag = logical(f);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_WAITALL`.
    fn waitall(count: *const Fint, reqs: *mut Fint, sts: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`; the arrays have `count` entries.
        unsafe {
            let mut c = requests(reqs, *count);
            let rc = api::waitall(*count, c.as_mut_ptr(), statuses(sts));
            set_requests(reqs, &c);
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_TESTALL`.
    fn testall(count: *const Fint, reqs: *mut Fint, flag: *mut Fint, sts: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `waitall`.
        unsafe {
            let mut c = requests(reqs, *count);
            let mut f: c_int = 0;
            let rc = api::testall(*count, c.as_mut_ptr(), &mut f, statuses(sts));
            set_requests(reqs, &c);
            *flag = logical(f);
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_WAITANY` (indices are 1-based in Fortran).
    fn waitany(count: *const Fint, reqs: *mut Fint, index: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `waitall`.
        unsafe {
            let mut c = requests(reqs, *count);
            let mut i: c_int = 0;
            let rc = api::waitany(*count, c.as_mut_ptr(), &mut i, core::ptr::null_mut(), status(st), true);
            set_requests(reqs, &c);
            *index = one_based(i);
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_TESTANY`.
    fn testany(count: *const Fint, reqs: *mut Fint, index: *mut Fint, flag: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `waitall`.
        unsafe {
            let mut c = requests(reqs, *count);
            let (mut i, mut f): (c_int, c_int) = (0, 0);
            let rc = api::waitany(*count, c.as_mut_ptr(), &mut i, &mut f, status(st), false);
            set_requests(reqs, &c);
            *index = one_based(i);
            *flag = logical(f);
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_WAITSOME`.
    fn waitsome(count: *const Fint, reqs: *mut Fint, outcount: *mut Fint, indices: *mut Fint, sts: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `waitall`.
        unsafe { some(count, reqs, outcount, indices, sts, ierr, true) }
    }
    /// `MPI_TESTSOME`.
    fn testsome(count: *const Fint, reqs: *mut Fint, outcount: *mut Fint, indices: *mut Fint, sts: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `waitall`.
        unsafe { some(count, reqs, outcount, indices, sts, ierr, false) }
    }
    /// `MPI_REQUEST_FREE`.
    fn request_free(req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut r = request(req);
            let rc = api::request_free(&mut r);
            if rc == 0 {
                set_request(req, r);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_REQUEST_GET_STATUS`.
    fn request_get_status(req: *const Fint, flag: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut f: c_int = 0;
            let rc = api::request_get_status(request(req), &mut f, status(st));
            *flag = logical(f);
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_CANCEL`.
    fn cancel(req: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut r = request(req);
            set_ierr(ierr, api::cancel(&mut r));
        }
    }
    /// `MPI_SEND_INIT`.
    fn send_init(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { request_send(api::send_init, buf, count, dt, dest, tag, comm, req, ierr, Mode::Standard, false) }
    }
    /// `MPI_SSEND_INIT`.
    fn ssend_init(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { request_send(api::send_init, buf, count, dt, dest, tag, comm, req, ierr, Mode::Sync, false) }
    }
    /// `MPI_RSEND_INIT`.
    fn rsend_init(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { request_send(api::send_init, buf, count, dt, dest, tag, comm, req, ierr, Mode::Standard, true) }
    }
    /// `MPI_BSEND_INIT`.
    fn bsend_init(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { request_send(api::send_init, buf, count, dt, dest, tag, comm, req, ierr, Mode::Buffered, false) }
    }
    /// `MPI_RECV_INIT`.
    fn recv_init(buf: *mut c_void, count: *const Fint, dt: *const Fint, src: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut r = api::req_null();
            let rc = api::recv_init(conv::buf(buf), *count, dtype(dt), *src, *tag, conv::comm(comm), &mut r);
            if rc == 0 {
                set_request(req, r);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_START`.
    fn start(req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut r = request(req);
            let rc = api::start(&mut r);
            set_request(req, r);
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_STARTALL`.
    fn startall(count: *const Fint, reqs: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `waitall`.
        unsafe {
            let mut c = requests(reqs, *count);
            let rc = api::startall(*count, c.as_mut_ptr());
            set_requests(reqs, &c);
            set_ierr(ierr, rc);
        }
    }

    /// `MPI_COMM_DUP`.
    fn comm_dup(comm: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Comm_dup(conv::comm(comm), c)) }
    }
    /// `MPI_COMM_DUP_WITH_INFO`.
    fn comm_dup_with_info(comm: *const Fint, inf: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Comm_dup_with_info(conv::comm(comm), info(inf), c)) }
    }
    /// `MPI_COMM_SPLIT`.
    fn comm_split(comm: *const Fint, color: *const Fint, key: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Comm_split(conv::comm(comm), *color, *key, c)) }
    }
    /// `MPI_COMM_SPLIT_TYPE`.
    fn comm_split_type(comm: *const Fint, split_type: *const Fint, key: *const Fint, inf: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Comm_split_type(conv::comm(comm), *split_type, *key, info(inf), c)) }
    }
    /// `MPI_COMM_CREATE`.
    fn comm_create(comm: *const Fint, grp: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Comm_create(conv::comm(comm), group(grp), c)) }
    }
    /// `MPI_COMM_CREATE_GROUP`.
    fn comm_create_group(comm: *const Fint, grp: *const Fint, tag: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Comm_create_group(conv::comm(comm), group(grp), *tag, c)) }
    }
    /// `MPI_CART_CREATE` (a gfortran `LOGICAL` is a C `int` holding 0 or 1).
    fn cart_create(comm: *const Fint, ndims: *const Fint, dims: *const Fint, periods: *const Fint, reorder: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`; the arrays have `ndims` entries.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Cart_create(conv::comm(comm), *ndims, dims as _, periods as _, *reorder, c)) }
    }
    /// `MPI_CART_SUB`.
    fn cart_sub(comm: *const Fint, remain: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `cart_create`.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Cart_sub(conv::comm(comm), remain as _, c)) }
    }
    /// `MPI_GRAPH_CREATE`.
    fn graph_create(comm: *const Fint, nnodes: *const Fint, index: *const Fint, edges: *const Fint, reorder: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `cart_create`.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Graph_create(conv::comm(comm), *nnodes, index as _, edges as _, *reorder, c)) }
    }
    /// `MPI_DIST_GRAPH_CREATE`.
    fn dist_graph_create(comm: *const Fint, n: *const Fint, sources: *const Fint, degrees: *const Fint, dests: *const Fint, w: *const Fint, inf: *const Fint, reorder: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `cart_create`.
        unsafe {
            created(newcomm, ierr, |c| {
                ffi::PMPI_Dist_graph_create(conv::comm(comm), *n, sources as _, degrees as _, dests as _, weights(w) as _, info(inf), *reorder, c)
            })
        }
    }
    /// `MPI_DIST_GRAPH_CREATE_ADJACENT`.
    fn dist_graph_create_adjacent(comm: *const Fint, indegree: *const Fint, sources: *const Fint, sw: *const Fint, outdegree: *const Fint, dests: *const Fint, dw: *const Fint, inf: *const Fint, reorder: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `cart_create`.
        unsafe {
            created(newcomm, ierr, |c| {
                ffi::PMPI_Dist_graph_create_adjacent(conv::comm(comm), *indegree, sources as _, weights(sw) as _, *outdegree, dests as _, weights(dw) as _, info(inf), *reorder, c)
            })
        }
    }
    /// `MPI_INTERCOMM_MERGE`.
    fn intercomm_merge(comm: *const Fint, high: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe { created(newcomm, ierr, |c| ffi::PMPI_Intercomm_merge(conv::comm(comm), *high, c)) }
    }
    /// `MPI_BUFFER_ATTACH`: the MPI's own binding, recorded (buffered
    /// sends check the attached size as the real MPI does).
    fn buffer_attach(buf: *mut c_void, size: *const Fint, ierr: *mut Fint) {
        // SAFETY: the caller's arguments, forwarded unchanged.
        unsafe {
            real::buffer_attach(buf, size, ierr);
            api::attached(if ierr.is_null() { 0 } else { *ierr }, *size);
        }
    }
    /// `MPI_BUFFER_DETACH` (see [`own::buffer_attach`]).
    fn buffer_detach(buf: *mut c_void, size: *mut Fint, ierr: *mut Fint) {
        // SAFETY: the caller's arguments, forwarded unchanged.
        unsafe {
            real::buffer_detach(buf, size, ierr);
            api::detached(if ierr.is_null() { 0 } else { *ierr });
        }
    }
    /// `MPI_COMM_FREE`.
    fn comm_free(comm: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut c = conv::comm(comm);
            let rc = api::comm_free(&mut c);
            if rc == 0 {
                set_comm(comm, c);
            }
            set_ierr(ierr, rc);
        }
    }
}

/// A 0-based C index as a Fortran one (`MPI_UNDEFINED` stays).
fn one_based(i: c_int) -> Fint {
    // SAFETY: reading an MPI constant.
    if i == unsafe { ffi::RSMPI_UNDEFINED } {
        i
    } else {
        i + 1
    }
}

/// The signature of [`api::isend`] and [`api::send_init`].
type StartSend = unsafe fn(
    *const c_void,
    c_int,
    ffi::MPI_Datatype,
    c_int,
    c_int,
    ffi::MPI_Comm,
    Mode,
    bool,
    *mut ffi::MPI_Request,
) -> c_int;

/// The nonblocking (`api::isend`) and persistent (`api::send_init`) sends
/// of every mode: `start` makes the request.
///
/// # Safety
/// As [`isend`].
#[allow(clippy::too_many_arguments)]
unsafe fn request_send(
    start: StartSend,
    buf: *const c_void,
    count: *const Fint,
    dt: *const Fint,
    dest: *const Fint,
    tag: *const Fint,
    comm: *const Fint,
    req: *mut Fint,
    ierr: *mut Fint,
    mode: Mode,
    ready: bool,
) {
    // SAFETY: the caller's arguments, converted.
    unsafe {
        let mut r = api::req_null();
        let rc = start(
            conv::buf(buf),
            *count,
            dtype(dt),
            *dest,
            *tag,
            conv::comm(comm),
            mode,
            ready,
            &mut r,
        );
        if rc == 0 {
            set_request(req, r);
        }
        set_ierr(ierr, rc);
    }
}

/// `MPI_WAITSOME` (`blocking`) and `MPI_TESTSOME`.
///
/// # Safety
/// As [`waitsome`].
unsafe fn some(
    count: *const Fint,
    reqs: *mut Fint,
    outcount: *mut Fint,
    indices: *mut Fint,
    sts: *mut Fint,
    ierr: *mut Fint,
    blocking: bool,
) {
    // SAFETY: the caller's arrays have `count` entries.
    unsafe {
        let mut c = requests(reqs, *count);
        let rc = api::waitsome(
            *count,
            c.as_mut_ptr(),
            outcount,
            indices,
            statuses(sts),
            blocking,
        );
        set_requests(reqs, &c);
        // SAFETY: reading an MPI constant.
        if *outcount != ffi::RSMPI_UNDEFINED {
            for k in 0..(*outcount).max(0) as usize {
                *indices.add(k) += 1;
            }
        }
        set_ierr(ierr, rc);
    }
}

/// A communicator constructor: runs `make` on a C out-handle, registers
/// the new communicator with heapmpi as the C call does, and stores it.
///
/// # Safety
/// `newcomm` is a writable `INTEGER`; `make` is the constructor's real call.
unsafe fn created(
    newcomm: *mut Fint,
    ierr: *mut Fint,
    make: impl FnOnce(*mut ffi::MPI_Comm) -> c_int,
) {
    // SAFETY: reading an MPI constant; the constructor's out-handle.
    unsafe {
        let mut c = ffi::RSMPI_COMM_NULL;
        let rc = crate::comm::created(make(&mut c), &mut c);
        if rc == 0 {
            set_comm(newcomm, c);
        }
        set_ierr(ierr, rc);
    }
}

/// `MPI_Init` of `use mpi_f08` (MPICH's calls `PMPI_Init` directly; Open
/// MPI's calls `ompi_init_f`, heapmpi's [`init`]): the MPI's own binding,
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

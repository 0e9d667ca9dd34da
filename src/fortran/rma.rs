//! The Fortran bindings of one-sided communication: window creation and
//! free, `MPI_Alloc_mem`/`Free_mem`, the attributes heapmpi answers itself,
//! `Win_shared_query`, the communication calls and the synchronisation
//! calls.
//!
//! A window must see every call through heapmpi or none: a window heapmpi
//! runs opens its epochs in heapmpi, and an operation that finds none open
//! goes to the real window (correct, but not accelerated); a fence the real
//! MPI sees alone never opens heapmpi's epoch.
//!
//! - **Open MPI**: its `mpif.h`/`use mpi` bindings (`mpi_put_`, alias
//!   `ompi_put_f`, which its `use mpi_f08` procedures call; `pmpi_win_test_`
//!   and `pmpi_win_get_attr_` for the two with a `LOGICAL`) call `PMPI_*`,
//!   so without these a Fortran program's windows stayed wholly in the real
//!   MPI. `use mpi` gives `Win_allocate`, `Win_allocate_shared`,
//!   `Win_shared_query` and `Alloc_mem` a second specific for a
//!   `TYPE(C_PTR)` base (`mpi_win_allocate_cptr_`, ...), which takes the
//!   same arguments.
//! - **MPICH**: its `mpif.h`/`use mpi` bindings call the C `MPI_*`
//!   (forwarded to, as in [`super::p2p`]), except `MPI_Win_get_attr`, which
//!   reads the attribute inside MPICH. Its `use mpi_f08` communication
//!   calls, `Win_create`, `Win_attach`, `Win_detach` and `Free_mem` call the
//!   C `MPI_*` too; its `Alloc_mem`, `Win_allocate(_shared)`,
//!   `Win_create_dynamic`, `Win_free`, `Win_shared_query`, `Win_get_attr`
//!   and every synchronisation call `PMPI_*` (`mpi_win_fence_f08_`, ...),
//!   which heapmpi defines (marked `f08` in `src/ffi/fortran.rs`).
//!
//! Each binding converts as Open MPI's does (`ompi/mpi/fortran/mpif-h`):
//! handles with `PMPI_*_f2c` (MPICH's are the integers); sizes and
//! displacements are `INTEGER(KIND=MPI_ADDRESS_KIND)`, the C `MPI_Aint`;
//! the base of `Win_allocate(_shared)`, `Alloc_mem` and `Win_shared_query`
//! is an out-argument holding an address (`INTEGER(KIND=MPI_ADDRESS_KIND)`
//! or `TYPE(C_PTR)`, both a C pointer passed by reference), which the C call
//! writes as its `void *` out-argument; a request is heapmpi's Fortran
//! integer ([`crate::req::handle::request_c2f`]), since the `R` forms may
//! return point-to-point's completed request. `MPI_BOTTOM` becomes the C
//! `MPI_BOTTOM` on every buffer of the communication calls (Open MPI's own
//! converts the origin of `Put`, `Get`, `Accumulate` and their `R` forms
//! only; the standard allows it on every choice buffer); the window base of
//! `Win_create` and `Win_attach` is taken as it is, as Open MPI does.
//! Then each calls the same entry point as the C call ([`crate::rma`]),
//! which serves it or hands it to the real MPI.

use super::*;
use crate::rma;
use conv::{buf as bottom, comm, dtype, group, info, logical, op, set_request, set_win, win};
use ffi::MPI_Aint as Aint;

/// The Fortran keyvals of the predefined window attributes are the C ones
/// plus this: Open MPI's are the same, MPICH's the C value + 1
/// (`MPII_ATTR_C_TO_FORTRAN`; its `mpif.h` has `MPI_WIN_BASE` =
/// 0x66000002 for the C 0x66000001).
#[cfg(not(heapmpi_mpich))]
const FORTRAN_KEYVAL: c_int = 0;
#[cfg(heapmpi_mpich)]
const FORTRAN_KEYVAL: c_int = 1;

/// The C keyval of a Fortran `MPI_WIN_BASE` or `MPI_WIN_CREATE_FLAVOR`
/// (the attributes [`rma::get_attr`] answers itself for heapmpi's
/// windows); `None` for every other key.
fn own_attr(key: Fint) -> Option<c_int> {
    [
        ffi::MPI_WIN_BASE as c_int,
        ffi::MPI_WIN_CREATE_FLAVOR as c_int,
    ]
    .into_iter()
    .find(|&c| c + FORTRAN_KEYVAL == key)
}

/// Ends a call that makes a window: stores it on success, and the code.
///
/// # Safety
/// `w` is a writable `INTEGER`, `ierr` one or null.
unsafe fn made(w: *mut Fint, ierr: *mut Fint, rc: c_int, c: ffi::MPI_Win) {
    // SAFETY: per the contract.
    unsafe {
        if rc == 0 {
            set_win(w, c);
        }
        set_ierr(ierr, rc);
    }
}

/// A null C window for an out-argument.
fn win_null() -> ffi::MPI_Win {
    // SAFETY: reading an MPI constant.
    unsafe { ffi::RSMPI_WIN_NULL }
}

binding! {
    /// `MPI_ALLOC_MEM` (`BASEPTR` receives the address).
    fn alloc_mem(size: *const Aint, inf: *const Fint, baseptr: *mut c_void, ierr: *mut Fint) {
        // SAFETY: the caller's arguments, converted.
        unsafe { set_ierr(ierr, rma::alloc_mem(*size, info(inf), baseptr)) }
    }
    /// `MPI_ALLOC_MEM` with a `TYPE(C_PTR)` base (`use mpi` of Open MPI).
    fn alloc_mem_cptr(size: *const Aint, inf: *const Fint, baseptr: *mut c_void, ierr: *mut Fint) {
        // SAFETY: the same arguments (a `C_PTR` by reference is a `void **`).
        unsafe { alloc_mem(size, inf, baseptr, ierr) }
    }
    /// `MPI_FREE_MEM` (`BASE` is the memory itself, by reference).
    fn free_mem(base: *mut c_void, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::free_mem(base)) }
    }
    /// `MPI_WIN_CREATE`.
    fn win_create(base: *mut c_void, size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, w: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut cw = win_null();
            let rc = rma::create(base, *size, *unit, info(inf), comm(c), &mut cw);
            made(w, ierr, rc, cw);
        }
    }
    /// `MPI_WIN_ALLOCATE`.
    fn win_allocate(size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut cw = win_null();
            let rc = rma::win_allocate(*size, *unit, info(inf), comm(c), baseptr, &mut cw);
            made(w, ierr, rc, cw);
        }
    }
    /// `MPI_WIN_ALLOCATE` with a `TYPE(C_PTR)` base.
    fn win_allocate_cptr(size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem_cptr`.
        unsafe { win_allocate(size, unit, inf, c, baseptr, w, ierr) }
    }
    /// `MPI_WIN_ALLOCATE_SHARED`.
    fn win_allocate_shared(size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut cw = win_null();
            let rc = rma::win_allocate_shared(*size, *unit, info(inf), comm(c), baseptr, &mut cw);
            made(w, ierr, rc, cw);
        }
    }
    /// `MPI_WIN_ALLOCATE_SHARED` with a `TYPE(C_PTR)` base.
    fn win_allocate_shared_cptr(size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem_cptr`.
        unsafe { win_allocate_shared(size, unit, inf, c, baseptr, w, ierr) }
    }
    /// `MPI_WIN_CREATE_DYNAMIC`.
    fn win_create_dynamic(inf: *const Fint, c: *const Fint, w: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut cw = win_null();
            let rc = rma::create_dynamic(info(inf), comm(c), &mut cw);
            made(w, ierr, rc, cw);
        }
    }
    /// `MPI_WIN_ATTACH`.
    fn win_attach(w: *const Fint, base: *mut c_void, size: *const Aint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::attach(win(w), base, *size)) }
    }
    /// `MPI_WIN_DETACH`.
    fn win_detach(w: *const Fint, base: *const c_void, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::detach(win(w), base)) }
    }
    /// `MPI_WIN_FREE`: `MPI_WIN_NULL` on success.
    fn win_free(w: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut cw = win(w);
            let rc = rma::free(&mut cw);
            made(w, ierr, rc, cw);
        }
    }
    /// `MPI_WIN_GET_ATTR` (`ATTRIBUTE_VAL` is `INTEGER(KIND=MPI_ADDRESS_KIND)`,
    /// `FLAG` a `LOGICAL`): `MPI_WIN_CREATE_FLAVOR` and `MPI_WIN_BASE` as
    /// the C call answers them (the flavour the program asked for, the
    /// memory heapmpi allocated), as Fortran values: the flavour, the
    /// address. Every other key is the MPI's own binding's.
    fn win_get_attr(w: *const Fint, key: *const Fint, val: *mut Aint, flag: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        let Some(ckey) = own_attr(unsafe { *key }) else {
            // The `mpif.h` binding always writes `ierr`, which is optional
            // in `use mpi_f08`.
            let mut rc: Fint = 0;
            let e = if ierr.is_null() { &mut rc as *mut Fint } else { ierr };
            // SAFETY: the caller's arguments, and an `ierr` to write.
            return unsafe { real::win_get_attr(w, key, val, flag, e) };
        };
        let mut p: *mut c_void = core::ptr::null_mut();
        let mut f: c_int = 0;
        // SAFETY: as `alloc_mem`; `p` receives the C attribute value (a
        // pointer), `f` the flag.
        unsafe {
            let rc = rma::get_attr(win(w), ckey, (&mut p as *mut *mut c_void).cast(), &mut f);
            if rc == 0 {
                *flag = logical(f);
                if f != 0 {
                    *val = if ckey == ffi::MPI_WIN_BASE as c_int {
                        p as Aint
                    } else {
                        // The C value of the flavour points at an int.
                        *(p as *const c_int) as Aint
                    };
                }
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_WIN_SHARED_QUERY` (`SIZE` `INTEGER(KIND=MPI_ADDRESS_KIND)`,
    /// `BASEPTR` receives the address).
    fn win_shared_query(w: *const Fint, rank: *const Fint, size: *mut Aint, unit: *mut Fint, baseptr: *mut c_void, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::shared_query(win(w), *rank, size, unit, baseptr)) }
    }
    /// `MPI_WIN_SHARED_QUERY` with a `TYPE(C_PTR)` base.
    fn win_shared_query_cptr(w: *const Fint, rank: *const Fint, size: *mut Aint, unit: *mut Fint, baseptr: *mut c_void, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem_cptr`.
        unsafe { win_shared_query(w, rank, size, unit, baseptr, ierr) }
    }

    /// `MPI_PUT`.
    fn put(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let rc = rma::put(bottom(oaddr), *ocount, dtype(odt), *rank, *disp, *tcount, dtype(tdt), win(w));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_GET`.
    fn get(oaddr: *mut c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let rc = rma::get(bottom(oaddr), *ocount, dtype(odt), *rank, *disp, *tcount, dtype(tdt), win(w));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_RPUT`.
    fn rput(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, w: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut r = crate::p2p::api::req_null();
            let rc = rma::rput(bottom(oaddr), *ocount, dtype(odt), *rank, *disp, *tcount, dtype(tdt), win(w), &mut r);
            requested(req, ierr, rc, r)
        }
    }
    /// `MPI_RGET`.
    fn rget(oaddr: *mut c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, w: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut r = crate::p2p::api::req_null();
            let rc = rma::rget(bottom(oaddr), *ocount, dtype(odt), *rank, *disp, *tcount, dtype(tdt), win(w), &mut r);
            requested(req, ierr, rc, r)
        }
    }
    /// `MPI_ACCUMULATE`.
    fn accumulate(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, o: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let rc = rma::accumulate(bottom(oaddr), *ocount, dtype(odt), *rank, *disp, *tcount, dtype(tdt), op(o), win(w));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_RACCUMULATE`.
    fn raccumulate(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, o: *const Fint, w: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut r = crate::p2p::api::req_null();
            let rc = rma::raccumulate(bottom(oaddr), *ocount, dtype(odt), *rank, *disp, *tcount, dtype(tdt), op(o), win(w), &mut r);
            requested(req, ierr, rc, r)
        }
    }
    /// `MPI_GET_ACCUMULATE`.
    fn get_accumulate(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, raddr: *mut c_void, rcount: *const Fint, rdt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, o: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let rc = rma::get_accumulate(bottom(oaddr), *ocount, dtype(odt), bottom(raddr), *rcount, dtype(rdt), *rank, *disp, *tcount, dtype(tdt), op(o), win(w));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_RGET_ACCUMULATE`.
    fn rget_accumulate(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, raddr: *mut c_void, rcount: *const Fint, rdt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, o: *const Fint, w: *const Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut r = crate::p2p::api::req_null();
            let rc = rma::rget_accumulate(bottom(oaddr), *ocount, dtype(odt), bottom(raddr), *rcount, dtype(rdt), *rank, *disp, *tcount, dtype(tdt), op(o), win(w), &mut r);
            requested(req, ierr, rc, r)
        }
    }
    /// `MPI_FETCH_AND_OP`.
    fn fetch_and_op(oaddr: *const c_void, raddr: *mut c_void, dt: *const Fint, rank: *const Fint, disp: *const Aint, o: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let rc = rma::fetch_and_op(bottom(oaddr), bottom(raddr), dtype(dt), *rank, *disp, op(o), win(w));
            set_ierr(ierr, rc)
        }
    }
    /// `MPI_COMPARE_AND_SWAP`.
    fn compare_and_swap(oaddr: *const c_void, caddr: *const c_void, raddr: *mut c_void, dt: *const Fint, rank: *const Fint, disp: *const Aint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let rc = rma::compare_and_swap(bottom(oaddr), bottom(caddr), bottom(raddr), dtype(dt), *rank, *disp, win(w));
            set_ierr(ierr, rc)
        }
    }

    /// `MPI_WIN_FENCE`.
    fn win_fence(assert: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::fence(*assert, win(w))) }
    }
    /// `MPI_WIN_POST`.
    fn win_post(grp: *const Fint, assert: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::post(group(grp), *assert, win(w))) }
    }
    /// `MPI_WIN_START`.
    fn win_start(grp: *const Fint, assert: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::win_start(group(grp), *assert, win(w))) }
    }
    /// `MPI_WIN_COMPLETE`.
    fn win_complete(w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::win_complete(win(w))) }
    }
    /// `MPI_WIN_WAIT`.
    fn win_wait(w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::wait(win(w))) }
    }
    /// `MPI_WIN_TEST` (`FLAG` a `LOGICAL`).
    fn win_test(w: *const Fint, flag: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe {
            let mut f: c_int = 0;
            let rc = rma::test(win(w), &mut f);
            if rc == 0 {
                *flag = logical(f);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_WIN_LOCK`.
    fn win_lock(kind: *const Fint, rank: *const Fint, assert: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::lock(*kind, *rank, *assert, win(w))) }
    }
    /// `MPI_WIN_UNLOCK`.
    fn win_unlock(rank: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::unlock(*rank, win(w))) }
    }
    /// `MPI_WIN_LOCK_ALL`.
    fn win_lock_all(assert: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::lock_all(*assert, win(w))) }
    }
    /// `MPI_WIN_UNLOCK_ALL`.
    fn win_unlock_all(w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::unlock_all(win(w))) }
    }
    /// `MPI_WIN_FLUSH`.
    fn win_flush(rank: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::flush(*rank, win(w))) }
    }
    /// `MPI_WIN_FLUSH_LOCAL`.
    fn win_flush_local(rank: *const Fint, w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::flush_local(*rank, win(w))) }
    }
    /// `MPI_WIN_FLUSH_ALL`.
    fn win_flush_all(w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::flush_all(win(w))) }
    }
    /// `MPI_WIN_FLUSH_LOCAL_ALL`.
    fn win_flush_local_all(w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::flush_local_all(win(w))) }
    }
    /// `MPI_WIN_SYNC`.
    fn win_sync(w: *const Fint, ierr: *mut Fint) {
        // SAFETY: as `alloc_mem`.
        unsafe { set_ierr(ierr, rma::win_sync(win(w))) }
    }
}

/// Ends an `R` form: stores its request (heapmpi's Fortran integer) on
/// success, and the code.
///
/// # Safety
/// `req` is a writable `INTEGER`, `ierr` one or null.
unsafe fn requested(req: *mut Fint, ierr: *mut Fint, rc: c_int, r: ffi::MPI_Request) {
    // SAFETY: per the contract.
    unsafe {
        if rc == 0 {
            set_request(req, r);
        }
        set_ierr(ierr, rc);
    }
}

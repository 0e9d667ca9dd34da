//! The one-sided MPI entry points (logic in [`crate::rma`]). Each body
//! forwards its arguments unchanged.

use core::ffi::{c_int, c_void};

use mpi_sys::{
    MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Group, MPI_Info, MPI_Op, MPI_Request, MPI_Win,
};

use crate::rma;

c_exports! {
    /// `MPI_Alloc_mem`.
    fn MPI_Alloc_mem(size: MPI_Aint, info: MPI_Info, baseptr: *mut c_void) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::alloc_mem(size, info, baseptr) }
    }
    /// `MPI_Free_mem`.
    fn MPI_Free_mem(base: *mut c_void) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::free_mem(base) }
    }
    /// `MPI_Win_create`.
    fn MPI_Win_create(base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::create(base, size, disp_unit, info, comm, win) }
    }
    /// `MPI_Win_allocate`.
    fn MPI_Win_allocate(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::win_allocate(size, disp_unit, info, comm, baseptr, win) }
    }
    /// `MPI_Win_allocate_shared`.
    fn MPI_Win_allocate_shared(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::win_allocate_shared(size, disp_unit, info, comm, baseptr, win) }
    }
    /// `MPI_Win_create_dynamic`.
    fn MPI_Win_create_dynamic(info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::create_dynamic(info, comm, win) }
    }
    /// `MPI_Win_attach`.
    fn MPI_Win_attach(win: MPI_Win, base: *mut c_void, size: MPI_Aint) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::attach(win, base, size) }
    }
    /// `MPI_Win_detach`.
    fn MPI_Win_detach(win: MPI_Win, base: *const c_void) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::detach(win, base) }
    }
    /// `MPI_Win_free`.
    fn MPI_Win_free(win: *mut MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::free(win) }
    }
    /// `MPI_Win_get_attr`.
    fn MPI_Win_get_attr(win: MPI_Win, key: c_int, val: *mut c_void, flag: *mut c_int) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::get_attr(win, key, val, flag) }
    }
    /// `MPI_Win_shared_query`.
    fn MPI_Win_shared_query(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_int, baseptr: *mut c_void) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::shared_query(win, rank, size, disp_unit, baseptr) }
    }
    /// `MPI_Put`.
    fn MPI_Put(oaddr: *const c_void, ocount: c_int, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, tdt: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::put(oaddr, ocount, odt, rank, disp, tcount, tdt, win) }
    }
    /// `MPI_Get`.
    fn MPI_Get(oaddr: *mut c_void, ocount: c_int, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, tdt: MPI_Datatype, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::get(oaddr, ocount, odt, rank, disp, tcount, tdt, win) }
    }
    /// `MPI_Rput`.
    fn MPI_Rput(oaddr: *const c_void, ocount: c_int, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, tdt: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::rput(oaddr, ocount, odt, rank, disp, tcount, tdt, win, req) }
    }
    /// `MPI_Rget`.
    fn MPI_Rget(oaddr: *mut c_void, ocount: c_int, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, tdt: MPI_Datatype, win: MPI_Win, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::rget(oaddr, ocount, odt, rank, disp, tcount, tdt, win, req) }
    }
    /// `MPI_Accumulate`.
    fn MPI_Accumulate(oaddr: *const c_void, ocount: c_int, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, tdt: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::accumulate(oaddr, ocount, odt, rank, disp, tcount, tdt, op, win) }
    }
    /// `MPI_Raccumulate`.
    fn MPI_Raccumulate(oaddr: *const c_void, ocount: c_int, odt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, tdt: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::raccumulate(oaddr, ocount, odt, rank, disp, tcount, tdt, op, win, req) }
    }
    /// `MPI_Get_accumulate`.
    fn MPI_Get_accumulate(oaddr: *const c_void, ocount: c_int, odt: MPI_Datatype, raddr: *mut c_void, rcount: c_int, rdt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, tdt: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::get_accumulate(oaddr, ocount, odt, raddr, rcount, rdt, rank, disp, tcount, tdt, op, win) }
    }
    /// `MPI_Rget_accumulate`.
    fn MPI_Rget_accumulate(oaddr: *const c_void, ocount: c_int, odt: MPI_Datatype, raddr: *mut c_void, rcount: c_int, rdt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, tdt: MPI_Datatype, op: MPI_Op, win: MPI_Win, req: *mut MPI_Request) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::rget_accumulate(oaddr, ocount, odt, raddr, rcount, rdt, rank, disp, tcount, tdt, op, win, req) }
    }
    /// `MPI_Fetch_and_op`.
    fn MPI_Fetch_and_op(oaddr: *const c_void, raddr: *mut c_void, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, op: MPI_Op, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::fetch_and_op(oaddr, raddr, dt, rank, disp, op, win) }
    }
    /// `MPI_Compare_and_swap`.
    fn MPI_Compare_and_swap(oaddr: *const c_void, caddr: *const c_void, raddr: *mut c_void, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::compare_and_swap(oaddr, caddr, raddr, dt, rank, disp, win) }
    }
    /// `MPI_Win_fence`.
    fn MPI_Win_fence(assert: c_int, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::fence(assert, win) }
    }
    /// `MPI_Win_post`.
    fn MPI_Win_post(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::post(group, assert, win) }
    }
    /// `MPI_Win_start`.
    fn MPI_Win_start(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::win_start(group, assert, win) }
    }
    /// `MPI_Win_complete`.
    fn MPI_Win_complete(win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::win_complete(win) }
    }
    /// `MPI_Win_wait`.
    fn MPI_Win_wait(win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::wait(win) }
    }
    /// `MPI_Win_test`.
    fn MPI_Win_test(win: MPI_Win, flag: *mut c_int) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::test(win, flag) }
    }
    /// `MPI_Win_lock`.
    fn MPI_Win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::lock(lock_type, rank, assert, win) }
    }
    /// `MPI_Win_unlock`.
    fn MPI_Win_unlock(rank: c_int, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::unlock(rank, win) }
    }
    /// `MPI_Win_lock_all`.
    fn MPI_Win_lock_all(assert: c_int, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::lock_all(assert, win) }
    }
    /// `MPI_Win_unlock_all`.
    fn MPI_Win_unlock_all(win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::unlock_all(win) }
    }
    /// `MPI_Win_flush`.
    fn MPI_Win_flush(rank: c_int, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::flush(rank, win) }
    }
    /// `MPI_Win_flush_local`.
    fn MPI_Win_flush_local(rank: c_int, win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::flush_local(rank, win) }
    }
    /// `MPI_Win_flush_all`.
    fn MPI_Win_flush_all(win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::flush_all(win) }
    }
    /// `MPI_Win_flush_local_all`.
    fn MPI_Win_flush_local_all(win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::flush_local_all(win) }
    }
    /// `MPI_Win_sync`.
    fn MPI_Win_sync(win: MPI_Win) -> c_int {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { rma::win_sync(win) }
    }
}

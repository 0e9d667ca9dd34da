//! The Fortran bindings heapmpi defines (logic in [`crate::fortran`]),
//! under gfortran's names:
//! - `mpi_x_` and `mpi_x__` (both MPIs provide the second too), with
//!   `__wrap_` twins for `-Wl,--wrap`: heapmpi's own binding for Open MPI
//!   (whose own ones call `PMPI_*`), a forward to MPICH's (which call the
//!   C `MPI_*`, heapmpi's);
//! - `ompi_x_f` and `pmpi_x_`, which Open MPI's `use mpi_f08` procedures
//!   call (the second for those with `LOGICAL` arguments): the same;
//! - `mpi_x_f08_`, with `__wrap_` twins, for the procedures of MPICH's
//!   `use mpi_f08` that call `PMPI_*` (marked `f08` below): heapmpi's own
//!   for MPICH, a forward to Open MPI's (which call `ompi_x_f`);
//! - a few one-sided bindings heapmpi serves itself under both MPIs
//!   ([`rma_own`]);
//! - `mpi_init_f08_`, `mpi_init_thread_f08_`, `mpi_finalize_f08_`: the
//!   MPI's own, with heapmpi's start-up after and shut-down before.

use core::ffi::c_void;

use crate::fortran::Fint;

/// Defines each binding once per exported name, each a call into
/// [`crate::fortran`].
macro_rules! fortran_exports {
    ($( fn $name:ident($($a:ident: $t:ty),* $(,)?) $($f08:ident)?; )*) => {
        fortran_exports!(@variant underscore, mpif, "mpi_", "_", $( fn $name($($a: $t),*); )*);
        fortran_exports!(@variant double, mpif, "mpi_", "__", $( fn $name($($a: $t),*); )*);
        fortran_exports!(@variant ompi, mpif, "ompi_", "_f", $( fn $name($($a: $t),*); )*);
        fortran_exports!(@variant pmpi_underscore, mpif, "pmpi_", "_", $( fn $name($($a: $t),*); )*);
        fortran_exports!(@variant pmpi_double, mpif, "pmpi_", "__", $( fn $name($($a: $t),*); )*);
        fortran_exports!(@variant wrap_underscore, mpif, "__wrap_mpi_", "_", $( fn $name($($a: $t),*); )*);
        fortran_exports!(@variant wrap_double, mpif, "__wrap_mpi_", "__", $( fn $name($($a: $t),*); )*);
        fortran_exports!(@f08 f08_names, "mpi_", $( fn $name($($a: $t),*) $($f08)?; )*);
        fortran_exports!(@f08 wrap_f08_names, "__wrap_mpi_", $( fn $name($($a: $t),*) $($f08)?; )*);
    };
    (@variant $m:ident, $via:ident, $pre:literal, $post:literal, $( fn $name:ident($($a:ident: $t:ty),*); )*) => {
        #[doc = concat!("The bindings named `", $pre, "x", $post, "`.")]
        pub mod $m {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[doc = concat!("`", $pre, stringify!($name), $post, "`.")]
                ///
                /// # Safety
                /// The Fortran binding's contract.
                #[cfg_attr(not(test), export_name = concat!($pre, stringify!($name), $post))]
                pub unsafe extern "C" fn $name($($a: $t),*) {
                    static SLOT: crate::profile::Slot =
                        crate::profile::Slot::new(concat!($pre, stringify!($name), $post));
                    let token = crate::profile::enter();
                    // A tool before heapmpi wraps PMPI_*: the MPI's own
                    // binding then (`tooled`), which calls PMPI_X as stock
                    // does, through the tool, to heapmpi's PMPI_X (see
                    // `mpi::next`). Start-up and shut-down stay heapmpi's.
                    let via_tool = crate::mpi::next::tool_wraps_pmpi()
                        && !matches!(stringify!($name), "init" | "init_thread" | "finalize");
                    // SAFETY: the caller's arguments, forwarded.
                    unsafe {
                        if via_tool {
                            tooled::$name($($a),*)
                        } else {
                            $via::$name($($a),*)
                        }
                    };
                    crate::profile::leave(&SLOT, token);
                }
            )*
        }
    };
    (@f08 $m:ident, $pre:literal, $( fn $name:ident($($a:ident: $t:ty),*) $($f08:ident)?; )*) => {
        #[doc = concat!("The `use mpi_f08` procedures named `", $pre, "x_f08_`.")]
        pub mod $m {
            #[allow(unused_imports)]
            use super::*;
            $( fortran_exports!(@f08one $pre, fn $name($($a: $t),*) $($f08)?); )*
        }
    };
    (@f08one $pre:literal, fn $name:ident($($a:ident: $t:ty),*) f08) => {
        #[doc = concat!("`", $pre, stringify!($name), "_f08_`.")]
        ///
        /// # Safety
        /// The Fortran binding's contract.
        #[cfg_attr(not(test), export_name = concat!($pre, stringify!($name), "_f08_"))]
        pub unsafe extern "C" fn $name($($a: $t),*) {
            static SLOT: crate::profile::Slot =
                crate::profile::Slot::new(concat!($pre, stringify!($name), "_f08_"));
            let token = crate::profile::enter();
            // SAFETY: the caller's arguments, forwarded.
            unsafe { f08_impl::$name($($a),*) };
            crate::profile::leave(&SLOT, token);
        }
    };
    (@f08one $pre:literal, fn $name:ident($($a:ident: $t:ty),*)) => {};
}

/// The point-to-point, completion, persistent-request and communicator
/// bindings.
pub mod p2p {
    use super::*;

    // The modules of `crate::fortran` that serve the `mpif.h` and the
    // `mpi_f08` names here.
    #[cfg(not(heapmpi_mpich))]
    use crate::fortran::p2p::own as mpif;
    #[cfg(heapmpi_mpich)]
    use crate::fortran::p2p::own as f08_impl;
    #[cfg(heapmpi_mpich)]
    use crate::fortran::p2p::real as mpif;
    #[cfg(not(heapmpi_mpich))]
    use crate::fortran::p2p::real_f08 as f08_impl;
    // The `mpif.h` names when a tool before heapmpi wraps PMPI_*: the MPI's
    // own bindings (Open MPI's call PMPI_*, which reach the tool and then
    // heapmpi; MPICH's are `mpif` already).
    use crate::fortran::p2p::real as tooled;

    fortran_exports! {
        fn init(ierr: *mut Fint);
        fn init_thread(required: *const Fint, provided: *mut Fint, ierr: *mut Fint);
        fn finalize(ierr: *mut Fint);
        fn send(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, ierr: *mut Fint);
        fn ssend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, ierr: *mut Fint);
        fn rsend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, ierr: *mut Fint);
        fn bsend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, ierr: *mut Fint);
        fn isend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn issend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn irsend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn ibsend(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn recv(buf: *mut c_void, count: *const Fint, dt: *const Fint, src: *const Fint, tag: *const Fint, comm: *const Fint, st: *mut Fint, ierr: *mut Fint);
        fn irecv(buf: *mut c_void, count: *const Fint, dt: *const Fint, src: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn sendrecv(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, dest: *const Fint, stag: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, src: *const Fint, rtag: *const Fint, comm: *const Fint, st: *mut Fint, ierr: *mut Fint);
        fn sendrecv_replace(buf: *mut c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, stag: *const Fint, src: *const Fint, rtag: *const Fint, comm: *const Fint, st: *mut Fint, ierr: *mut Fint);
        fn probe(src: *const Fint, tag: *const Fint, comm: *const Fint, st: *mut Fint, ierr: *mut Fint) f08;
        fn iprobe(src: *const Fint, tag: *const Fint, comm: *const Fint, flag: *mut Fint, st: *mut Fint, ierr: *mut Fint) f08;
        fn mprobe(src: *const Fint, tag: *const Fint, comm: *const Fint, msg: *mut Fint, st: *mut Fint, ierr: *mut Fint) f08;
        fn improbe(src: *const Fint, tag: *const Fint, comm: *const Fint, flag: *mut Fint, msg: *mut Fint, st: *mut Fint, ierr: *mut Fint) f08;
        fn mrecv(buf: *mut c_void, count: *const Fint, dt: *const Fint, msg: *mut Fint, st: *mut Fint, ierr: *mut Fint);
        fn imrecv(buf: *mut c_void, count: *const Fint, dt: *const Fint, msg: *mut Fint, req: *mut Fint, ierr: *mut Fint);
        fn wait(req: *mut Fint, st: *mut Fint, ierr: *mut Fint) f08;
        fn test(req: *mut Fint, flag: *mut Fint, st: *mut Fint, ierr: *mut Fint) f08;
        fn waitall(count: *const Fint, reqs: *mut Fint, sts: *mut Fint, ierr: *mut Fint) f08;
        fn testall(count: *const Fint, reqs: *mut Fint, flag: *mut Fint, sts: *mut Fint, ierr: *mut Fint) f08;
        fn waitany(count: *const Fint, reqs: *mut Fint, index: *mut Fint, st: *mut Fint, ierr: *mut Fint) f08;
        fn testany(count: *const Fint, reqs: *mut Fint, index: *mut Fint, flag: *mut Fint, st: *mut Fint, ierr: *mut Fint) f08;
        fn waitsome(count: *const Fint, reqs: *mut Fint, outcount: *mut Fint, indices: *mut Fint, sts: *mut Fint, ierr: *mut Fint) f08;
        fn testsome(count: *const Fint, reqs: *mut Fint, outcount: *mut Fint, indices: *mut Fint, sts: *mut Fint, ierr: *mut Fint) f08;
        fn request_free(req: *mut Fint, ierr: *mut Fint) f08;
        fn request_get_status(req: *const Fint, flag: *mut Fint, st: *mut Fint, ierr: *mut Fint) f08;
        fn cancel(req: *const Fint, ierr: *mut Fint) f08;
        fn send_init(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn ssend_init(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn rsend_init(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn bsend_init(buf: *const c_void, count: *const Fint, dt: *const Fint, dest: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn recv_init(buf: *mut c_void, count: *const Fint, dt: *const Fint, src: *const Fint, tag: *const Fint, comm: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn start(req: *mut Fint, ierr: *mut Fint) f08;
        fn startall(count: *const Fint, reqs: *mut Fint, ierr: *mut Fint) f08;
        fn comm_dup(comm: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn comm_dup_with_info(comm: *const Fint, inf: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn comm_split(comm: *const Fint, color: *const Fint, key: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn comm_split_type(comm: *const Fint, split_type: *const Fint, key: *const Fint, inf: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn comm_create(comm: *const Fint, grp: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn comm_create_group(comm: *const Fint, grp: *const Fint, tag: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn cart_create(comm: *const Fint, ndims: *const Fint, dims: *const Fint, periods: *const Fint, reorder: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn cart_sub(comm: *const Fint, remain: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn graph_create(comm: *const Fint, nnodes: *const Fint, index: *const Fint, edges: *const Fint, reorder: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn dist_graph_create(comm: *const Fint, n: *const Fint, sources: *const Fint, degrees: *const Fint, dests: *const Fint, w: *const Fint, inf: *const Fint, reorder: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn dist_graph_create_adjacent(comm: *const Fint, indegree: *const Fint, sources: *const Fint, sw: *const Fint, outdegree: *const Fint, dests: *const Fint, dw: *const Fint, inf: *const Fint, reorder: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn intercomm_merge(comm: *const Fint, high: *const Fint, newcomm: *mut Fint, ierr: *mut Fint) f08;
        fn buffer_attach(buf: *mut c_void, size: *const Fint, ierr: *mut Fint);
        fn buffer_detach(buf: *mut c_void, size: *mut Fint, ierr: *mut Fint) f08;
        fn comm_free(comm: *mut Fint, ierr: *mut Fint) f08;
    }
}

/// The collective bindings.
pub mod coll {
    use super::*;

    // The modules of `crate::fortran` that serve the `mpif.h` and the
    // `mpi_f08` names here.
    #[cfg(not(heapmpi_mpich))]
    use crate::fortran::coll::own as mpif;
    #[cfg(heapmpi_mpich)]
    use crate::fortran::coll::own as f08_impl;
    #[cfg(heapmpi_mpich)]
    use crate::fortran::coll::real as mpif;
    #[cfg(not(heapmpi_mpich))]
    use crate::fortran::coll::real_f08 as f08_impl;
    // The `mpif.h` names when a tool before heapmpi wraps PMPI_*: the MPI's
    // own bindings (Open MPI's call PMPI_*, which reach the tool and then
    // heapmpi; MPICH's are `mpif` already).
    use crate::fortran::coll::real as tooled;

    fortran_exports! {
        fn barrier(c: *const Fint, ierr: *mut Fint) f08;
        fn bcast(buf: *mut c_void, count: *const Fint, dt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn reduce(sbuf: *const c_void, rbuf: *mut c_void, count: *const Fint, dt: *const Fint, o: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn allreduce(sbuf: *const c_void, rbuf: *mut c_void, count: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn gather(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn gatherv(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, displs: *const Fint, rdt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn scatter(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn scatterv(sbuf: *const c_void, scounts: *const Fint, displs: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, root: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn allgather(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn allgatherv(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, displs: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn alltoall(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn alltoallv(sbuf: *const c_void, scounts: *const Fint, sdispls: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, rdispls: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn neighbor_allgather(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn neighbor_allgatherv(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, displs: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn neighbor_alltoall(sbuf: *const c_void, scount: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcount: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn neighbor_alltoallv(sbuf: *const c_void, scounts: *const Fint, sdispls: *const Fint, sdt: *const Fint, rbuf: *mut c_void, rcounts: *const Fint, rdispls: *const Fint, rdt: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn reduce_scatter_block(sbuf: *const c_void, rbuf: *mut c_void, rcount: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn reduce_scatter(sbuf: *const c_void, rbuf: *mut c_void, rcounts: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn scan(sbuf: *const c_void, rbuf: *mut c_void, count: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint);
        fn exscan(sbuf: *const c_void, rbuf: *mut c_void, count: *const Fint, dt: *const Fint, o: *const Fint, c: *const Fint, ierr: *mut Fint);
    }
}

/// The one-sided bindings (see [`crate::fortran::rma`]).
pub mod rma {
    use super::*;
    use mpi_sys::MPI_Aint as Aint;

    // The modules of `crate::fortran` that serve the `mpif.h` and the
    // `mpi_f08` names here.
    #[cfg(not(heapmpi_mpich))]
    use crate::fortran::rma::own as mpif;
    #[cfg(heapmpi_mpich)]
    use crate::fortran::rma::own as f08_impl;
    #[cfg(heapmpi_mpich)]
    use crate::fortran::rma::real as mpif;
    #[cfg(not(heapmpi_mpich))]
    use crate::fortran::rma::real_f08 as f08_impl;
    // One-sided calls stay heapmpi's own under a PMPI tool (they serve
    // heapmpi's windows, which Open MPI's bindings would not know).
    use mpif as tooled;

    fortran_exports! {
        fn alloc_mem(size: *const Aint, inf: *const Fint, baseptr: *mut c_void, ierr: *mut Fint) f08;
        fn free_mem(base: *mut c_void, ierr: *mut Fint);
        fn win_create(base: *mut c_void, size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, w: *mut Fint, ierr: *mut Fint);
        fn win_allocate(size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint) f08;
        fn win_allocate_shared(size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint) f08;
        fn win_create_dynamic(inf: *const Fint, c: *const Fint, w: *mut Fint, ierr: *mut Fint) f08;
        fn win_attach(w: *const Fint, base: *mut c_void, size: *const Aint, ierr: *mut Fint);
        fn win_detach(w: *const Fint, base: *const c_void, ierr: *mut Fint);
        fn win_free(w: *mut Fint, ierr: *mut Fint) f08;
        fn win_shared_query(w: *const Fint, rank: *const Fint, size: *mut Aint, unit: *mut Fint, baseptr: *mut c_void, ierr: *mut Fint) f08;
        fn put(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, w: *const Fint, ierr: *mut Fint);
        fn get(oaddr: *mut c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, w: *const Fint, ierr: *mut Fint);
        fn rput(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, w: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn rget(oaddr: *mut c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, w: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn accumulate(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, o: *const Fint, w: *const Fint, ierr: *mut Fint);
        fn raccumulate(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, o: *const Fint, w: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn get_accumulate(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, raddr: *mut c_void, rcount: *const Fint, rdt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, o: *const Fint, w: *const Fint, ierr: *mut Fint);
        fn rget_accumulate(oaddr: *const c_void, ocount: *const Fint, odt: *const Fint, raddr: *mut c_void, rcount: *const Fint, rdt: *const Fint, rank: *const Fint, disp: *const Aint, tcount: *const Fint, tdt: *const Fint, o: *const Fint, w: *const Fint, req: *mut Fint, ierr: *mut Fint);
        fn fetch_and_op(oaddr: *const c_void, raddr: *mut c_void, dt: *const Fint, rank: *const Fint, disp: *const Aint, o: *const Fint, w: *const Fint, ierr: *mut Fint);
        fn compare_and_swap(oaddr: *const c_void, caddr: *const c_void, raddr: *mut c_void, dt: *const Fint, rank: *const Fint, disp: *const Aint, w: *const Fint, ierr: *mut Fint);
        fn win_fence(assert: *const Fint, w: *const Fint, ierr: *mut Fint) f08;
        fn win_post(grp: *const Fint, assert: *const Fint, w: *const Fint, ierr: *mut Fint) f08;
        fn win_start(grp: *const Fint, assert: *const Fint, w: *const Fint, ierr: *mut Fint) f08;
        fn win_complete(w: *const Fint, ierr: *mut Fint) f08;
        fn win_wait(w: *const Fint, ierr: *mut Fint) f08;
        fn win_test(w: *const Fint, flag: *mut Fint, ierr: *mut Fint) f08;
        fn win_lock(kind: *const Fint, rank: *const Fint, assert: *const Fint, w: *const Fint, ierr: *mut Fint) f08;
        fn win_unlock(rank: *const Fint, w: *const Fint, ierr: *mut Fint) f08;
        fn win_lock_all(assert: *const Fint, w: *const Fint, ierr: *mut Fint) f08;
        fn win_unlock_all(w: *const Fint, ierr: *mut Fint) f08;
        fn win_flush(rank: *const Fint, w: *const Fint, ierr: *mut Fint) f08;
        fn win_flush_local(rank: *const Fint, w: *const Fint, ierr: *mut Fint) f08;
        fn win_flush_all(w: *const Fint, ierr: *mut Fint) f08;
        fn win_flush_local_all(w: *const Fint, ierr: *mut Fint) f08;
        fn win_sync(w: *const Fint, ierr: *mut Fint) f08;
    }
}

/// The one-sided bindings heapmpi serves itself under both MPIs:
/// `MPI_Win_get_attr` (MPICH's own reads the attribute inside MPICH,
/// where a heap `Win_allocate` window has the real window's `Win_create`
/// flavour) and the `TYPE(C_PTR)` specifics of Open MPI's `use mpi`
/// (`mpi_win_allocate_cptr_`, ...; MPICH has none to forward to, and
/// heapmpi's own serves its handles too).
pub mod rma_own {
    use super::*;
    use mpi_sys::MPI_Aint as Aint;

    use crate::fortran::rma::own as mpif;
    #[cfg(heapmpi_mpich)]
    use crate::fortran::rma::own as f08_impl;
    #[cfg(not(heapmpi_mpich))]
    use crate::fortran::rma::real_f08 as f08_impl;
    use mpif as tooled;

    fortran_exports! {
        fn win_get_attr(w: *const Fint, key: *const Fint, val: *mut Aint, flag: *mut Fint, ierr: *mut Fint) f08;
        fn alloc_mem_cptr(size: *const Aint, inf: *const Fint, baseptr: *mut c_void, ierr: *mut Fint);
        fn win_allocate_cptr(size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint);
        fn win_allocate_shared_cptr(size: *const Aint, unit: *const Fint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint);
        fn win_shared_query_cptr(w: *const Fint, rank: *const Fint, size: *mut Aint, unit: *mut Fint, baseptr: *mut c_void, ierr: *mut Fint);
    }
}

/// The `use mpi_f08` start-up and shut-down, as `NAME` and `__wrap_NAME`.
pub mod f08_lifecycle {
    use super::*;

    c_exports! {
        /// `mpi_init_f08_` (the `use mpi_f08` module's `MPI_Init`).
        fn mpi_init_f08_(ierr: *mut Fint) -> () {
            // SAFETY: the caller's argument, forwarded.
            unsafe { crate::fortran::init_f08(ierr) }
        }
        /// `mpi_init_thread_f08_`.
        fn mpi_init_thread_f08_(required: *const Fint, provided: *mut Fint, ierr: *mut Fint) -> () {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { crate::fortran::init_thread_f08(required, provided, ierr) }
        }
        /// `mpi_finalize_f08_`.
        fn mpi_finalize_f08_(ierr: *mut Fint) -> () {
            // SAFETY: the caller's argument, forwarded.
            unsafe { crate::fortran::finalize_f08(ierr) }
        }
    }
}

/// MPICH's `use mpi_f08` large-count procedures that call `PMPI_*_c`
/// (see [`crate::fortran::large`]), as `NAME` and `__wrap_NAME`
/// (`linker-scripts/mpi4.list`).
#[cfg(heapmpi_mpi4)]
pub mod f08_large {
    use super::*;
    use crate::fortran::large;
    use mpi_sys::{MPI_Aint as Aint, MPI_Count as Count};

    c_exports! {
        /// `mpi_buffer_detach_f08_large_`.
        fn mpi_buffer_detach_f08_large_(buf: *mut c_void, size: *mut Count, ierr: *mut Fint) -> () {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { large::buffer_detach(buf, size, ierr) }
        }
        /// `mpi_win_allocate_f08_large_`.
        fn mpi_win_allocate_f08_large_(size: *const Aint, unit: *const Aint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint) -> () {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { large::win_allocate(false, size, unit, inf, c, baseptr, w, ierr) }
        }
        /// `mpi_win_allocate_shared_f08_large_`.
        fn mpi_win_allocate_shared_f08_large_(size: *const Aint, unit: *const Aint, inf: *const Fint, c: *const Fint, baseptr: *mut c_void, w: *mut Fint, ierr: *mut Fint) -> () {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { large::win_allocate(true, size, unit, inf, c, baseptr, w, ierr) }
        }
        /// `mpi_win_shared_query_f08_large_`.
        fn mpi_win_shared_query_f08_large_(w: *const Fint, rank: *const Fint, size: *mut Aint, unit: *mut Aint, baseptr: *mut c_void, ierr: *mut Fint) -> () {
            // SAFETY: the caller's arguments, forwarded.
            unsafe { large::win_shared_query(w, rank, size, unit, baseptr, ierr) }
        }
    }
}

//! The Fortran bindings of heapmpi's point-to-point calls, the Wait/Test
//! family, persistent requests and the communicator constructors (see the
//! module above for which MPI calls which).

use super::*;

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
            let mut m = crate::req::handle::message_f2c(*msg);
            let rc = api::probe(*src, *tag, conv::comm(comm), core::ptr::null_mut(), Some(&mut m), status(st), true);
            if rc == 0 {
                *msg = crate::req::handle::message_c2f(m);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_IMPROBE`.
    fn improbe(src: *const Fint, tag: *const Fint, comm: *const Fint, flag: *mut Fint, msg: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut m = crate::req::handle::message_f2c(*msg);
            let mut f: c_int = 0;
            let rc = api::probe(*src, *tag, conv::comm(comm), &mut f, Some(&mut m), status(st), false);
            if rc == 0 && f != 0 {
                *msg = crate::req::handle::message_c2f(m);
            }
            *flag = logical(f);
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_MRECV`.
    fn mrecv(buf: *mut c_void, count: *const Fint, dt: *const Fint, msg: *mut Fint, st: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut m = crate::req::handle::message_f2c(*msg);
            let rc = api::mrecv(conv::buf(buf), *count, dtype(dt), &mut m, status(st), None);
            if rc == 0 {
                *msg = crate::req::handle::message_c2f(m);
            }
            set_ierr(ierr, rc);
        }
    }
    /// `MPI_IMRECV`.
    fn imrecv(buf: *mut c_void, count: *const Fint, dt: *const Fint, msg: *mut Fint, req: *mut Fint, ierr: *mut Fint) {
        // SAFETY: as `send`.
        unsafe {
            let mut m = crate::req::handle::message_f2c(*msg);
            let mut r = api::req_null();
            let rc = api::mrecv(conv::buf(buf), *count, dtype(dt), &mut m, ffi::RSMPI_STATUS_IGNORE, Some(&mut r));
            if rc == 0 {
                *msg = crate::req::handle::message_c2f(m);
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
            let old = conv::comm(comm);
            crate::comm::quirks::before_dist_graph_create(old);
            created(newcomm, ierr, |c| {
                ffi::PMPI_Dist_graph_create(old, *n, sources as _, degrees as _, dests as _, weights(w) as _, info(inf), *reorder, c)
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
        // The MPI's `mpif.h` binding always writes `ierr`, which `use
        // mpi_f08` callers may leave out (null): it gets a local one then.
        let mut rc: Fint = 0;
        // SAFETY: the caller's arguments, forwarded, and an `ierr` to write.
        unsafe {
            real::buffer_attach(buf, size, &mut rc);
            set_ierr(ierr, rc);
            api::attached(rc, buf, (*size).max(0) as usize);
        }
    }
    /// `MPI_BUFFER_DETACH` (see [`own::buffer_attach`]).
    fn buffer_detach(buf: *mut c_void, size: *mut Fint, ierr: *mut Fint) {
        // A local `ierr` as in `buffer_attach` (MPICH's binding segfaulted
        // on a `use mpi_f08` call without one).
        let mut rc: Fint = 0;
        // SAFETY: the caller's arguments, forwarded, and an `ierr` to write.
        unsafe {
            real::buffer_detach(buf, size, &mut rc);
            set_ierr(ierr, rc);
            api::detached(rc);
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

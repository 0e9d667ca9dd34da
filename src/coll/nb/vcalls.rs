//! The entry points of the nonblocking "v" and "w" collectives
//! (`MPI_Igatherv`, `MPI_Iscatterv`, `MPI_Iallgatherv`, `MPI_Ialltoallv`,
//! `MPI_Ialltoallw`): each checks its arguments, plans the operation of
//! [`super::vector`] (`_op`, also what a persistent form's initialisation
//! asks) and queues it under a new or a persistent request (`_to`), or
//! makes the real MPI's call.

use core::ffi::{c_int, c_void};

use mpi_sys as ffi;

use super::super::offer::VBuf;
use super::super::{in_place, profile_alltoallv, Buf, Peers};
use super::schedule::nb_node;
use super::vector::{plan, vop, Held, VHow};

nb_entry! {
    "MPI_Igatherv": igatherv / igatherv_to(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        displs: *const c_int,
        rdt: ffi::MPI_Datatype,
        root: c_int,
        comm: ffi::MPI_Comm,
    ) on comm, data(scount, sdt);
    op = igatherv_op {
        let node = nb_node(comm)?;
        // SAFETY: the caller's arguments.
        unsafe {
            let k = plan(
                VHow::Gatherv,
                node,
                sbuf,
                None,
                scount,
                core::ptr::null(),
                sdt,
                rbuf,
                Some(rcounts),
                0,
                displs,
                rdt,
                Some(root),
            )?;
            Some((node, k))
        }
    }
    real = ffi::PMPI_Igatherv;
    persistent "MPI_Gatherv_init": gatherv_init with (request, real) {
        let a = blocks_args(GATHERV, sbuf, scount, sdt, rbuf, 0, rdt, root, comm);
        let at_root = |p| (p, true, false);
        v_init(a, [NONE, NONE, at_root(rcounts), at_root(displs)], None, request, real)
    }
    init_real = ffi::PMPI_Gatherv_init;
}

nb_entry! {
    "MPI_Iscatterv": iscatterv / iscatterv_to(
        sbuf: *const c_void,
        scounts: *const c_int,
        displs: *const c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcount: c_int,
        rdt: ffi::MPI_Datatype,
        root: c_int,
        comm: ffi::MPI_Comm,
    ) on comm, data(rcount, rdt);
    op = iscatterv_op {
        let node = nb_node(comm)?;
        // SAFETY: the caller's arguments.
        unsafe {
            let k = plan(
                VHow::Scatterv,
                node,
                sbuf,
                Some(scounts),
                0,
                displs,
                sdt,
                rbuf,
                None,
                rcount,
                core::ptr::null(),
                rdt,
                Some(root),
            )?;
            Some((node, k))
        }
    }
    real = ffi::PMPI_Iscatterv;
    persistent "MPI_Scatterv_init": scatterv_init with (request, real) {
        let a = blocks_args(SCATTERV, sbuf, 0, sdt, rbuf, rcount, rdt, root, comm);
        let at_root = |p| (p, true, false);
        v_init(a, [at_root(scounts), at_root(displs), NONE, NONE], None, request, real)
    }
    init_real = ffi::PMPI_Scatterv_init;
}

nb_entry! {
    "MPI_Iallgatherv": iallgatherv / iallgatherv_to(
        sbuf: *const c_void,
        scount: c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        displs: *const c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, data(scount, sdt);
    op = iallgatherv_op {
        let node = nb_node(comm)?;
        // SAFETY: the caller's arguments.
        unsafe {
            let k = plan(
                VHow::Allgatherv,
                node,
                sbuf,
                None,
                scount,
                core::ptr::null(),
                sdt,
                rbuf,
                Some(rcounts),
                0,
                displs,
                rdt,
                None,
            )?;
            Some((node, k))
        }
    }
    real = ffi::PMPI_Iallgatherv;
    persistent "MPI_Allgatherv_init": allgatherv_init with (request, real) {
        // Root -1: no member is one; every array is significant everywhere.
        let a = blocks_args(ALLGATHERV, sbuf, scount, sdt, rbuf, 0, rdt, -1, comm);
        v_init(a, [NONE, NONE, all(rcounts), all(displs)], None, request, real)
    }
    init_real = ffi::PMPI_Allgatherv_init;
}

nb_entry! {
    "MPI_Ialltoallv": ialltoallv / ialltoallv_to(
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const c_int,
        sdt: ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const c_int,
        rdt: ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, after(profile_alltoallv(
        comm,
        Peers::Members,
        sbuf,
        scounts,
        (sdt, core::ptr::null()),
        rcounts,
        (rdt, core::ptr::null()),
    ));
    op = ialltoallv_op {
        let node = nb_node(comm)?;
        // SAFETY: the caller's arguments.
        unsafe {
            let k = plan(
                VHow::Alltoallv,
                node,
                sbuf,
                Some(scounts),
                0,
                sdispls,
                sdt,
                rbuf,
                Some(rcounts),
                0,
                rdispls,
                rdt,
                None,
            )?;
            Some((node, k))
        }
    }
    real = ffi::PMPI_Ialltoallv;
    persistent "MPI_Alltoallv_init": alltoallv_init with (request, real) {
        let a = blocks_args(ALLTOALLV, sbuf, 0, sdt, rbuf, 0, rdt, -1, comm);
        // The send arrays are not significant in place.
        let sends = sbuf != in_place();
        let send = |p| (p, sends, sends);
        let arrays = [send(scounts), send(sdispls), all(rcounts), all(rdispls)];
        v_init(a, arrays, None, request, real)
    }
    init_real = ffi::PMPI_Alltoallv_init;
}

nb_entry! {
    /// A count and a datatype per block, byte displacements; each derived
    /// receive datatype is held.
    "MPI_Ialltoallw": ialltoallw / ialltoallw_to(
        sbuf: *const c_void,
        scounts: *const c_int,
        sdispls: *const c_int,
        stypes: *const ffi::MPI_Datatype,
        rbuf: *mut c_void,
        rcounts: *const c_int,
        rdispls: *const c_int,
        rtypes: *const ffi::MPI_Datatype,
        comm: ffi::MPI_Comm,
    ) on comm, after(profile_alltoallv(
        comm,
        Peers::Members,
        sbuf,
        scounts,
        (ffi::RSMPI_DATATYPE_NULL, stypes),
        rcounts,
        (ffi::RSMPI_DATATYPE_NULL, rtypes),
    ));
    op = ialltoallw_op {
        let node = nb_node(comm)?;
        let (me, n) = (node.me, node.n);
        // SAFETY: the caller's arguments (MPI requires n entries in each array,
        // the send ones unless in place).
        unsafe {
            let recv = VBuf::new_w_int(rbuf, rcounts, rdispls, rtypes, n)?;
            let inplace = sbuf == in_place();
            let send = if inplace {
                None
            } else {
                Some(VBuf::new_w_int(sbuf, scounts, sdispls, stypes, n)?)
            };
            // In place, the blocks we send are where we receive, and we
            // overwrite them while the others read (staged).
            let src = send.as_ref().unwrap_or(&recv);
            let blocks: Vec<Option<Buf>> = (0..n).map(|m| Some(src.piece(m))).collect();
            let mut held = Held::default();
            let mut into = Vec::with_capacity(n);
            for m in 0..n {
                into.push((m, me, held.hold(recv.piece(m))?));
            }
            Some((node, vop(node, &blocks, inplace, into, held.take())))
        }
    }
    real = ffi::PMPI_Ialltoallw;
    persistent "MPI_Alltoallw_init": alltoallw_init with (request, real) {
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
    init_real = ffi::PMPI_Alltoallw_init;
}

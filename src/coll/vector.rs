//! The "v" collectives: `MPI_Gatherv`, `MPI_Scatterv`, `MPI_Allgatherv`
//! and `MPI_Alltoallv`, where counts and displacements differ per member,
//! and `MPI_Alltoallw`, where datatypes do too.
//!
//! Only some members know every count (the root of `Gatherv` and
//! `Scatterv`, each member its own row of `Alltoallv`), so a member that
//! owns counts publishes, with the address of its data, a table of
//! (offset, length) pairs, one per member, in its cell (or in a staging
//! buffer when the table does not fit). The others look up their own entry
//! and copy once: for `Gatherv` each member writes its piece straight into
//! the root's receive buffer, for `Scatterv` and `Alltoallv` each member
//! reads its piece straight from the owner's send buffer. A buffer that is
//! not one dense run inside the heap is packed into a staging buffer
//! first. `Allgatherv` needs no table: every member knows all counts, and
//! it runs as the allgather does.
//!
//! Every decision to hand the call to the real MPI instead (no shared
//! memory for staging) is taken by a member whose publication every member
//! reads, so all of them make the real call together.

use core::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use mpi_sys as ffi;

use super::gather::{all_read_all, any_failed, pack_limited};
use super::{flat, gave_up, in_place, ran, rank_ok, to_real, Buf, Peers, Stage, FAIL};
use crate::comm::node::Node;
use crate::heap;

/// A buffer of pieces (one per member, or per neighbour): piece `m` is
/// `counts[m]` elements at displacement `displs[m]` (in extents) of the
/// buffer argument, or, for the `w` forms, its own count and datatype at a
/// byte displacement.
pub(super) struct VBuf {
    /// The buffer argument: table offsets are relative to it.
    base: *mut u8,
    pieces: Pieces,
}

/// A [`VBuf`]'s pieces: listed, or `n` consecutive pieces like the first,
/// described without an allocation (the non-v forms: a halo exchange of 8
/// bytes spent 10% of its call building and freeing the list).
enum Pieces {
    List(Vec<Buf>),
    Uniform(Buf, usize),
}

impl VBuf {
    /// The argument, if heapmpi takes it (counts non-negative).
    ///
    /// # Safety
    /// `counts` and `displs` hold `n` ints each (or are null: then `None`).
    pub(super) unsafe fn new(
        ptr: *const c_void,
        counts: *const c_int,
        displs: *const c_int,
        dt: ffi::MPI_Datatype,
        n: usize,
    ) -> Option<VBuf> {
        if counts.is_null() || displs.is_null() {
            return None;
        }
        // SAFETY: per the contract.
        let (c, d) = unsafe {
            (
                core::slice::from_raw_parts(counts, n),
                core::slice::from_raw_parts(displs, n),
            )
        };
        if c.iter().any(|&x| x < 0) {
            return None;
        }
        let base = Buf::new(ptr, 0, dt)?;
        if ptr.is_null() && c.iter().any(|&x| x > 0) && base.d.contig {
            return None;
        }
        let extent = base.l.extent as isize;
        let pieces = c
            .iter()
            .zip(d)
            .map(|(&count, &displ)| Buf {
                ptr: base.ptr.wrapping_offset(displ as isize * extent),
                count: count as usize,
                ..base
            })
            .collect();
        Some(VBuf {
            base: base.ptr,
            pieces: Pieces::List(pieces),
        })
    }

    /// `n` consecutive pieces of `count` elements each (the non-v forms'
    /// layout), without count and displacement arrays.
    pub(super) fn uniform(
        ptr: *const c_void,
        count: c_int,
        dt: ffi::MPI_Datatype,
        n: usize,
    ) -> Option<VBuf> {
        let one = Buf::new(ptr, count, dt)?;
        Some(VBuf {
            base: one.ptr,
            pieces: Pieces::Uniform(one, n),
        })
    }

    /// The `w` form's argument: piece `m` is `counts[m]` elements of
    /// `types[m]` at `displs[m]` bytes (`MPI_Aint`), if heapmpi takes every
    /// one (counts non-negative, datatypes valid).
    ///
    /// # Safety
    /// The three arrays hold `n` entries each (or are null: then `None`).
    pub(super) unsafe fn new_w(
        ptr: *const c_void,
        counts: *const c_int,
        displs: *const ffi::MPI_Aint,
        types: *const ffi::MPI_Datatype,
        n: usize,
    ) -> Option<VBuf> {
        if displs.is_null() && n > 0 {
            return None;
        }
        // `MPI_Aint` is `isize` in Open MPI's bindings, `i64` in MPICH's.
        #[allow(clippy::unnecessary_cast)]
        // SAFETY: per the contract, `m < n`.
        let displ = |m: usize| unsafe { *displs.add(m) } as isize;
        // SAFETY: per the contract.
        unsafe { Self::from_w(ptr, counts, displ, types, n) }
    }

    /// [`VBuf::new_w`] with `int` byte displacements (`MPI_Alltoallw`'s).
    ///
    /// # Safety
    /// As [`VBuf::new_w`].
    pub(super) unsafe fn new_w_int(
        ptr: *const c_void,
        counts: *const c_int,
        displs: *const c_int,
        types: *const ffi::MPI_Datatype,
        n: usize,
    ) -> Option<VBuf> {
        if displs.is_null() && n > 0 {
            return None;
        }
        // SAFETY: per the contract, `m < n`.
        let displ = |m: usize| unsafe { *displs.add(m) } as isize;
        // SAFETY: per the contract.
        unsafe { Self::from_w(ptr, counts, displ, types, n) }
    }

    /// The `w` pieces, displacement `m` in bytes given by `displ(m)`.
    ///
    /// # Safety
    /// `counts` and `types` hold `n` entries each (or are null: then
    /// `None`); `displ` may be called for `m < n`.
    unsafe fn from_w(
        ptr: *const c_void,
        counts: *const c_int,
        displ: impl Fn(usize) -> isize,
        types: *const ffi::MPI_Datatype,
        n: usize,
    ) -> Option<VBuf> {
        if n > 0 && (counts.is_null() || types.is_null()) {
            return None;
        }
        let mut pieces = Vec::with_capacity(n);
        for m in 0..n {
            // SAFETY: per the contract, `m < n`.
            let (c, t) = unsafe { (*counts.add(m), *types.add(m)) };
            let at = (ptr as *const u8).wrapping_offset(displ(m));
            pieces.push(Buf::new(at.cast(), c, t)?);
        }
        Some(VBuf {
            base: ptr as *mut u8,
            pieces: Pieces::List(pieces),
        })
    }

    /// How many pieces.
    fn len(&self) -> usize {
        match &self.pieces {
            Pieces::List(v) => v.len(),
            Pieces::Uniform(_, n) => *n,
        }
    }

    /// Piece `m`.
    pub(super) fn piece(&self, m: usize) -> Buf {
        match &self.pieces {
            Pieces::List(v) => v[m],
            Pieces::Uniform(one, n) => {
                assert!(m < *n, "piece {m} of {n}");
                one.piece(m)
            }
        }
    }

    /// Packed bytes of piece `m`.
    fn bytes(&self, m: usize) -> usize {
        self.piece(m).bytes()
    }

    /// Whether every piece lies, dense, inside the heap: then the pieces
    /// are read or written in place.
    fn in_place_ok(&self) -> bool {
        (0..self.len())
            .map(|m| self.piece(m))
            .all(|p| p.count == 0 || (p.d.contig && heap::in_region(p.ptr, p.bytes())))
    }
}

/// Where a member's pieces are offered: the address of the data, the
/// (offset, length) table, and the staging buffers that back them.
pub(super) struct Offer {
    pub(super) addr: u64,
    pub(super) table: u64,
    /// The cell's length word: 0, or [`UNIFORM`] with the length of every
    /// piece when they sit in the cell without a table.
    pub(super) len: u64,
    /// The table and the data are in the offerer's cell: it need not wait
    /// for the readers before returning (the cell's gate covers its reuse).
    pub(super) inline: bool,
    _stages: Vec<Stage>,
}

/// Marks a cell's length word: the pieces lie in the cell one after the
/// other, all of the length in the low bits, with no table.
const UNIFORM: u64 = 1 << 63;

/// Offers `v`'s pieces in this member's cell of step `s` when the table
/// and every piece fit there, as the small cases of `MPI_Alltoall` do:
/// the owner then returns as soon as it has read its own pieces, without
/// waiting for the readers (a small halo exchange took two node-wide
/// steps, now one). The table sits where readers look for it
/// ([`entry_in`]), the data right after it; `None` when that does not fit.
/// Pieces all of one length need no table: they go first in the cell, in
/// the flag's line when they fit there, and the readers find piece `j` at
/// `j` lengths (a halo of 8 bytes to each of 4 neighbours read three lines
/// of its source's cell, table, data and flag, and now reads one).
///
/// # Safety
/// `v` describes the caller's buffer.
unsafe fn offer_inline(node: &Node, s: u64, v: &VBuf) -> Option<Offer> {
    let n = v.len();
    let total: usize = (0..n).map(|m| v.bytes(m)).sum();
    let each = if n > 0 { v.bytes(0) } else { 0 };
    if n > 0 && total <= node.inline_max && (0..n).all(|m| v.bytes(m) == each) {
        node.gate(s);
        let data = node.data(node.me, s, total);
        for m in 0..n {
            // SAFETY: piece `m`'s room inside the cell (`total` fits, the
            // gate passed); the caller's piece.
            unsafe { v.piece(m).pack_to(data.add(m * each)) };
        }
        return Some(Offer {
            addr: data as u64,
            table: 0,
            len: UNIFORM | each as u64,
            inline: true,
            _stages: Vec::new(),
        });
    }
    let tbytes = 16 * n;
    let fits = tbytes + total <= node.inline_max
        && node.data(node.me, s, tbytes) == node.data(node.me, s, tbytes + total);
    if !fits {
        return None;
    }
    node.gate(s);
    let t = node.data(node.me, s, tbytes + total);
    // SAFETY: the cell holds `inline_max` bytes from `t` (the gate passed,
    // no reader is left in it).
    let data = unsafe { t.add(tbytes) };
    let mut off = 0usize;
    for m in 0..n {
        let len = v.bytes(m);
        // SAFETY: entry `m` of the table and piece `m`'s room, inside the
        // cell (checked above); the caller's piece.
        unsafe {
            let e = t.cast::<u64>().add(2 * m);
            e.write_unaligned(off as u64);
            e.add(1).write_unaligned(len as u64);
            v.piece(m).pack_to(data.add(off));
        }
        off += len;
    }
    Some(Offer {
        addr: data as u64,
        table: 0,
        len: 0,
        inline: true,
        _stages: Vec::new(),
    })
}

/// Lays out `v`'s pieces for the others (in place, or packed into a
/// stage) and writes the table, after the gate of step `s`. With `fill`
/// false a stage is left empty (the others write into it).
///
/// # Safety
/// `v` describes the caller's buffer.
pub(super) unsafe fn offer(node: &Node, s: u64, v: &VBuf, fill: bool, force_stage: bool) -> Offer {
    if fill {
        // SAFETY: per the contract.
        if let Some(o) = unsafe { offer_inline(node, s, v) } {
            return o;
        }
    }
    let n = v.len();
    let mut stages = Vec::new();
    let mut table: Vec<u64> = Vec::with_capacity(2 * n);
    let addr = if v.in_place_ok() && !force_stage {
        for m in 0..n {
            let p = v.piece(m);
            table.push((p.ptr as u64).wrapping_sub(v.base as u64));
            table.push(v.bytes(m) as u64);
        }
        v.base as u64
    } else {
        let total: usize = (0..n).map(|m| v.bytes(m)).sum();
        match Stage::new(total) {
            Some(st) => {
                let mut off = 0usize;
                for m in 0..n {
                    table.push(off as u64);
                    table.push(v.bytes(m) as u64);
                    if fill {
                        // SAFETY: the caller's piece; the stage has room.
                        unsafe { v.piece(m).pack_to(st.0.add(off)) };
                    }
                    off += v.bytes(m);
                }
                let p = st.0 as u64;
                stages.push(st);
                p
            }
            None => FAIL,
        }
    };
    let tbytes = table.len() * 8;
    node.gate(s);
    let table_addr = if tbytes <= node.inline_max {
        // SAFETY: the cell holds `inline_max` bytes (the gate passed).
        unsafe {
            crate::dt::copy_disjoint(
                table.as_ptr().cast::<u8>(),
                node.data(node.me, s, tbytes),
                tbytes,
            )
        };
        0
    } else {
        match Stage::new(tbytes) {
            Some(st) => {
                // SAFETY: the stage has room.
                unsafe { crate::dt::copy_disjoint(table.as_ptr().cast::<u8>(), st.0, tbytes) };
                let p = st.0 as u64;
                stages.push(st);
                p
            }
            None => 0,
        }
    };
    let failed = addr == FAIL || (tbytes > node.inline_max && table_addr == 0);
    Offer {
        addr: if failed { FAIL } else { addr },
        table: table_addr,
        len: 0,
        inline: false,
        _stages: stages,
    }
}

/// Member `m`'s table entry for member `j` in step `s`: (address, length).
fn entry(node: &Node, m: usize, s: u64, j: usize) -> (*mut u8, usize) {
    entry_in(node, m, s, j, node.n)
}

/// Member `m`'s table entry `j` in step `s`, when its table has `pieces`
/// entries (its offer's pieces: one per member in the v collectives, one
/// per neighbour in the neighbourhood ones).
pub(super) fn entry_in(node: &Node, m: usize, s: u64, j: usize, pieces: usize) -> (*mut u8, usize) {
    let c = node.cell(m, s);
    // Relaxed: ordered by the Acquire of the step (`wait_cell`/`wait_all`).
    let (addr, t, len) = (
        c.addr.load(Ordering::Relaxed),
        c.aux.load(Ordering::Relaxed),
        c.len.load(Ordering::Relaxed),
    );
    if len & UNIFORM != 0 {
        // No table: `pieces` pieces of `each` bytes, as `offer_inline` put
        // them (it asked `data` for the same length).
        let each = (len & !UNIFORM) as usize;
        // SAFETY: piece `j < pieces` lies inside the cell's data.
        return (
            unsafe { node.data(m, s, pieces * each).add(j * each) },
            each,
        );
    }
    let t = if t == 0 {
        node.data(m, s, 16 * pieces) as *const u64
    } else {
        t as *const u64
    };
    // SAFETY: member `m` offers a table of `pieces` entries there until we
    // are done (`j < pieces`).
    let (off, len) = unsafe {
        (
            t.add(2 * j).read_unaligned(),
            t.add(2 * j + 1).read_unaligned(),
        )
    };
    ((addr.wrapping_add(off)) as *mut u8, len as usize)
}

/// Ends step `s` for every member when the root cannot take part (its
/// arguments are left to the real MPI): they all make the real call.
fn give_up_step(node: &Node, s: u64) {
    node.gate(s);
    node.publish(s, FAIL, 0, 0);
    node.finish(s);
    gave_up();
}

/// The root's side of a rooted "v" call: publishes `off`, runs `own` (its
/// own piece) while the others copy, and waits until they are done.
/// False when it could not offer (every member then makes the real call).
fn root_publishes(node: &Node, s: u64, off: &Offer, own: impl FnOnce()) -> bool {
    node.publish(s, off.addr, off.len, off.table);
    own();
    if off.addr != FAIL && !off.inline {
        node.wait_done(s);
    }
    node.finish(s);
    if off.addr == FAIL {
        gave_up();
    }
    off.addr != FAIL
}

/// A non-root's side of a rooted "v" call: waits for the root's offer and
/// returns this member's (address, length) in it; `None` (step ended) when
/// the root could not offer. The caller finishes the step after copying.
fn from_root(node: &Node, root: usize, s: u64) -> Option<(*mut u8, usize)> {
    let c = node.wait_cell(root, s);
    // Relaxed: ordered by the Acquire of the step in `wait_cell`.
    if c.addr.load(Ordering::Relaxed) == FAIL {
        node.finish(s);
        gave_up();
        return None;
    }
    Some(entry(node, root, s, node.me))
}

/// `MPI_Allgatherv`.
///
/// # Safety
/// As `MPI_Allgatherv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn allgatherv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm)
        })
    };
    let Some(node) = flat(comm) else {
        return real();
    };
    // SAFETY: MPI requires n counts and displacements.
    let Some(recv) = (unsafe { VBuf::new(rbuf, rcounts, displs, rdt, node.n) }) else {
        return real();
    };
    let inplace = sbuf == in_place();
    let send = if inplace {
        recv.piece(node.me)
    } else {
        match Buf::new(sbuf, scount, sdt) {
            Some(b) => b,
            None => return real(),
        }
    };
    // SAFETY: the caller's buffers.
    if unsafe { all_read_all(node, &send, inplace, |m| recv.piece(m)) } {
        ran();
        0
    } else {
        real()
    }
}

/// `MPI_Gatherv`.
///
/// # Safety
/// As `MPI_Gatherv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gatherv(
    sbuf: *const c_void,
    scount: c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(scount as i64, sdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm)
        })
    };
    let Some(node) = flat(comm) else {
        return real();
    };
    let Some(root) = rank_ok(root, node.n) else {
        return real();
    };
    let me = node.me;
    let inplace = sbuf == in_place();
    if inplace && me != root {
        return real();
    }
    let send = if inplace {
        None
    } else {
        match Buf::new(sbuf, scount, sdt) {
            Some(b) => Some(b),
            None => return real(),
        }
    };
    let s = node.begin(1);
    if me == root {
        // SAFETY: MPI requires n counts and displacements at the root.
        let Some(recv) = (unsafe { VBuf::new(rbuf, rcounts, displs, rdt, node.n) }) else {
            // Every member has begun the step: end it for them, the same
            // way as a failed stage, so they all make the real call.
            give_up_step(node, s);
            return real();
        };
        // The others write into our buffer, or into a stage we unpack.
        // SAFETY: the caller's buffer.
        let off = unsafe { offer(node, s, &recv, false, false) };
        let offered = root_publishes(node, s, &off, || {
            if let Some(send) = send {
                // SAFETY: the caller's buffers.
                unsafe { send.copy_to(&recv.piece(me)) };
            }
        });
        if !offered {
            return real();
        }
        if !recv.in_place_ok() {
            for m in (0..node.n).filter(|&m| m != me) {
                let (p, len) = entry(node, me, s, m);
                // SAFETY: member `m` wrote its piece into our stage.
                unsafe { recv.piece(m).unpack_from(p, len) };
            }
        }
    } else {
        let send = send.expect("a non-root sends");
        let Some((p, len)) = from_root(node, root, s) else {
            return real();
        };
        // SAFETY: the root offers room for our piece there until every
        // member is done.
        unsafe { pack_limited(&send, p, len) };
        node.finish(s);
    }
    ran();
    0
}

/// `MPI_Scatterv`.
///
/// # Safety
/// As `MPI_Scatterv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn scatterv(
    sbuf: *const c_void,
    scounts: *const c_int,
    displs: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcount: c_int,
    rdt: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> c_int {
    crate::profile::data(rcount as i64, rdt);
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm)
        })
    };
    let Some(node) = flat(comm) else {
        return real();
    };
    let Some(root) = rank_ok(root, node.n) else {
        return real();
    };
    let me = node.me;
    let inplace = core::ptr::eq(rbuf, in_place());
    if inplace && me != root {
        return real();
    }
    let recv = if inplace {
        None
    } else {
        match Buf::new(rbuf, rcount, rdt) {
            Some(b) => Some(b),
            None => return real(),
        }
    };
    let s = node.begin(1);
    if me == root {
        // SAFETY: MPI requires n counts and displacements at the root.
        let Some(send) = (unsafe { VBuf::new(sbuf, scounts, displs, sdt, node.n) }) else {
            give_up_step(node, s);
            return real();
        };
        // SAFETY: the caller's buffer.
        let off = unsafe { offer(node, s, &send, true, false) };
        let offered = root_publishes(node, s, &off, || {
            if let Some(recv) = recv {
                // SAFETY: the caller's buffers.
                unsafe { send.piece(me).copy_to(&recv) };
            }
        });
        if !offered {
            return real();
        }
    } else {
        let recv = recv.expect("a non-root receives");
        let Some((p, len)) = from_root(node, root, s) else {
            return real();
        };
        // SAFETY: the root offers our piece there until every member is
        // done.
        unsafe { recv.unpack_from(p, len) };
        node.finish(s);
    }
    ran();
    0
}

/// `MPI_Alltoallw`: a count and a datatype per block, byte
/// displacements; runs as [`alltoallv`] does.
///
/// # Safety
/// As `MPI_Alltoallw`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn alltoallw(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    stypes: *const ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtypes: *const ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Alltoallw(
                sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
            )
        })
    };
    // SAFETY: MPI requires n counts, displacements and datatypes on every
    // member (the send ones unless in place).
    unsafe {
        let rc = all_to_all(
            comm,
            sbuf == in_place(),
            |n| VBuf::new_w_int(sbuf, scounts, sdispls, stypes, n),
            |n| VBuf::new_w_int(rbuf, rcounts, rdispls, rtypes, n),
            real,
        );
        if rc == 0 {
            let none = ffi::RSMPI_DATATYPE_NULL;
            super::profile_alltoallv(
                comm,
                Peers::Members,
                sbuf,
                scounts,
                (none, stypes),
                rcounts,
                (none, rtypes),
            );
        }
        rc
    }
}

/// `MPI_Alltoallv`.
///
/// # Safety
/// As `MPI_Alltoallv`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn alltoallv(
    sbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let real = || {
        to_real(|| unsafe {
            ffi::PMPI_Alltoallv(
                sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm,
            )
        })
    };
    // SAFETY: MPI requires n counts and displacements on every member (the
    // send ones unless in place).
    unsafe {
        let rc = all_to_all(
            comm,
            sbuf == in_place(),
            |n| VBuf::new(sbuf, scounts, sdispls, sdt, n),
            |n| VBuf::new(rbuf, rcounts, rdispls, rdt, n),
            real,
        );
        if rc == 0 {
            let null = core::ptr::null();
            super::profile_alltoallv(
                comm,
                Peers::Members,
                sbuf,
                scounts,
                (sdt, null),
                rcounts,
                (rdt, null),
            );
        }
        rc
    }
}

/// `Alltoallv` or `Alltoallw` on `comm`: the buffers as `send(n)` and
/// `recv(n)` describe them for `n` members (`send` unused in place), over
/// the heap, or `real()` when heapmpi does not take the call or a member
/// could not stage.
///
/// # Safety
/// `send` and `recv` describe the caller's buffers.
unsafe fn all_to_all(
    comm: ffi::MPI_Comm,
    inplace: bool,
    send: impl FnOnce(usize) -> Option<VBuf>,
    recv: impl FnOnce(usize) -> Option<VBuf>,
    real: impl Fn() -> c_int,
) -> c_int {
    let Some(node) = flat(comm) else {
        return real();
    };
    let Some(recv) = recv(node.n) else {
        return real();
    };
    let send = if inplace {
        None
    } else {
        match send(node.n) {
            Some(v) => Some(v),
            None => return real(),
        }
    };
    // SAFETY: per the contract.
    if unsafe { exchange(node, send.as_ref(), &recv) } {
        0
    } else {
        real()
    }
}

/// The all-to-all of `Alltoallv` and `Alltoallw`: each member offers its
/// send pieces (`None`: in place, the receive pieces) and reads its piece
/// of every other member's offer. False when a member could not stage:
/// every member then makes the real call.
///
/// # Safety
/// `send` and `recv` describe the caller's buffers, one piece per member.
unsafe fn exchange(node: &Node, send: Option<&VBuf>, recv: &VBuf) -> bool {
    let me = node.me;
    let inplace = send.is_none();
    let s = node.begin(1);
    // In place, the receive buffer is the send buffer: offer a copy, since
    // we overwrite it while the others read.
    let src = send.unwrap_or(recv);
    // SAFETY: the caller's buffer.
    let off = unsafe { offer(node, s, src, true, inplace) };
    node.publish(s, off.addr, off.len, off.table);
    if let Some(send) = send {
        // SAFETY: the caller's buffers.
        unsafe { send.piece(me).copy_to(&recv.piece(me)) };
    }
    node.wait_all(s);
    if any_failed(node, s) {
        node.finish(s);
        gave_up();
        return false;
    }
    for m in (0..node.n).filter(|&m| m != me) {
        let (p, len) = entry(node, m, s, me);
        // SAFETY: member `m` offers our piece there until we are done.
        unsafe { recv.piece(m).unpack_from(p, len) };
    }
    node.finish(s);
    if !off.inline {
        node.wait_done(s);
    }
    drop(off);
    ran();
    true
}

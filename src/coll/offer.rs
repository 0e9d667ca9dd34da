//! A member's pieces in the "v" and neighbourhood collectives ([`VBuf`]:
//! one per member or neighbour, each its own count and displacement, or
//! datatype for the `w` forms) and how it offers them to the others
//! ([`offer`]): the address of its data and a table of (offset, length)
//! pairs, one per piece, in its cell, or in a staging buffer when the
//! table does not fit; with the data in the cell too when everything fits
//! there (as the small cases of `MPI_Alltoall` do), and without a table
//! when every piece has one length. A reader looks up its own entry
//! ([`entry_in`]) and copies once. A buffer that is not one dense run
//! inside the heap is packed into a staging buffer first.

use core::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use mpi_sys as ffi;

use super::{Buf, Stage, FAIL};
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
    pub(super) fn in_place_ok(&self) -> bool {
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
pub(super) fn entry(node: &Node, m: usize, s: u64, j: usize) -> (*mut u8, usize) {
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

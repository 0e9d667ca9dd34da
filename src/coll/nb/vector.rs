//! The nonblocking "v" collectives: `MPI_Igatherv`, `MPI_Iscatterv`,
//! `MPI_Iallgatherv` and `MPI_Ialltoallv`, where counts and displacements
//! differ per member, and `MPI_Ialltoallw`, where datatypes do too: the
//! operation and how it runs (their entry points are in [`super::vcalls`]).
//!
//! Only some members know every count (the root of `Igatherv` and
//! `Iscatterv`, each member its own row of `Ialltoallv`), so, as the
//! blocking forms do ([`super::super::vector`]), every member that sends
//! publishes one step: the address of a table of (address, length) pairs,
//! one per member, saying where the block for that member lies. Each
//! receiver looks up its entry in the table of every member it receives
//! from and copies once, straight from the sender's buffer when it is a
//! dense run inside the heap, else from a packed copy in the same staging
//! allocation as the table. A sender's request completes once every member
//! is done with the step (its buffer is read until then).
//!
//! A member cannot ask the others to hand such a call to the real MPI
//! half-way, so when it gets no staging memory (heap full) it publishes a
//! private table instead, with its blocks in its own buffers or in a
//! private packed copy, marked for reading through cross-memory attach
//! (`process_vm_readv`, [`crate::sys::cma`]): the single-copy fallback the
//! point-to-point engine takes for the same reason (Open MPI's `smsc/cma`
//! does the same for its single-copy path).

use core::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use mpi_sys as ffi;

use super::super::{in_place, rank_ok, Buf, Stage};
use super::{dup, Kind, Pending};
use crate::comm::node::Node;

/// Which call.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum VHow {
    Gatherv,
    Scatterv,
    Allgatherv,
    Alltoallv,
}

/// One pending v collective on this member.
pub(super) struct Vop {
    /// What this member publishes, if it sends.
    offer: Option<Offer>,
    /// What this member receives: from which member, which entry of its
    /// table, into which block of the receive buffer.
    recv: Vec<(usize, usize, Buf)>,
    /// Duplicates of the derived receive datatypes (the program may free
    /// its own while the call is pending): one at most but for the `w`
    /// forms.
    held: Vec<ffi::MPI_Datatype>,
}

/// A sender's table, and what keeps its blocks alive.
struct Offer {
    /// Where the table of (address, length) pairs lies.
    table: *const [u64; 2],
    /// Its entries.
    entries: usize,
    /// 0 when the table and blocks are in the heap; else this process's
    /// id + 1: read them through cross-memory attach.
    cma: u64,
    /// The staging allocation (table, then packed blocks), if any.
    _stage: Option<Stage>,
    /// The private table and packed blocks, when there is no stage.
    _private: Option<(Vec<[u64; 2]>, Vec<u8>)>,
    /// A small offer, copied into the cell at the step: the table (its
    /// entries hold offsets from its start) and the packed blocks after
    /// it. Nobody reads this member's memory then.
    inline: Option<Vec<u64>>,
}

impl Vop {
    /// Whether the other members read this member's memory (its request
    /// must wait until they are all done).
    pub(super) fn drains(&self) -> bool {
        self.offer.as_ref().is_some_and(|o| o.inline.is_none())
    }

    /// The datatype duplicates it holds.
    pub(super) fn held(&self) -> &[ffi::MPI_Datatype] {
        &self.held
    }
}

/// Builds this member's offer of `blocks` (one per member; `None` or
/// empty: nothing for it), at the call: inline in its cell when the table
/// and the packed blocks fit `inline_max` bytes, else in the heap.
/// `stage_always`: a block in the heap is staged anyway (the member
/// overwrites it while others read).
///
/// # Safety
/// The blocks are the caller's buffers.
unsafe fn offer(blocks: &[Option<Buf>], stage_always: bool, inline_max: usize) -> Offer {
    let n = blocks.len();
    // SAFETY: per the contract.
    if let Some(o) = unsafe { small(blocks, inline_max) } {
        return o;
    }
    let direct = |b: &Buf| (!stage_always).then(|| b.shared()).flatten();
    // One staging allocation: the table, then the blocks that are not read
    // in place (16-byte aligned each). An identical block (all-gather)
    // is staged once.
    let mut packed_len = 0usize;
    let mut at = vec![usize::MAX; n];
    for (m, b) in blocks.iter().enumerate() {
        let Some(b) = b else { continue };
        if b.bytes() == 0 || direct(b).is_some() {
            continue;
        }
        if let Some(k) = (0..m).find(|&k| same(&blocks[k], b)) {
            at[m] = at[k];
            continue;
        }
        at[m] = packed_len;
        packed_len += b.bytes().next_multiple_of(16);
    }
    let head = (n * 16).next_multiple_of(64);
    let fill = |table: &mut [[u64; 2]], data: *mut u8| {
        for (m, b) in blocks.iter().enumerate() {
            table[m] = match b {
                Some(b) if b.bytes() > 0 => match direct(b) {
                    Some(p) => [p as u64, b.bytes() as u64],
                    None => [data.wrapping_add(at[m]) as u64, b.bytes() as u64],
                },
                _ => [0, 0],
            };
        }
        for (m, b) in blocks.iter().enumerate() {
            if let Some(b) = b {
                if at[m] != usize::MAX && (0..m).all(|k| at[k] != at[m]) {
                    // SAFETY: the caller's buffer; `data + at[m]` has room
                    // for its packed bytes.
                    unsafe { b.pack_to(data.add(at[m])) };
                }
            }
        }
    };
    if let Some(st) = Stage::new(head + packed_len) {
        // SAFETY: the stage has room for the table (`head` bytes) and the
        // packed blocks after it; 64-byte aligned.
        let table = unsafe { core::slice::from_raw_parts_mut(st.0 as *mut [u64; 2], n) };
        // SAFETY: within the stage.
        fill(table, unsafe { st.0.add(head) });
        return Offer {
            table: st.0 as *const [u64; 2],
            entries: n,
            cma: 0,
            _stage: Some(st),
            _private: None,
            inline: None,
        };
    }
    // No shared memory: a private table; dense blocks are read where they
    // are, the others from a private packed copy.
    let mut table = vec![[0u64; 2]; n];
    let mut data = vec![0u8; packed_len];
    for (m, b) in blocks.iter().enumerate() {
        let Some(b) = b else { continue };
        if b.bytes() == 0 {
            continue;
        }
        if b.d.contig && !stage_always {
            table[m] = [b.ptr as u64, b.bytes() as u64];
            at[m] = usize::MAX;
        }
    }
    let base = data.as_mut_ptr();
    for (m, b) in blocks.iter().enumerate() {
        let Some(b) = b else { continue };
        if at[m] == usize::MAX || b.bytes() == 0 {
            continue;
        }
        if (0..m).all(|k| at[k] != at[m]) {
            // SAFETY: the caller's buffer; `base + at[m]` has room.
            unsafe { b.pack_to(base.add(at[m])) };
        }
        table[m] = [base.wrapping_add(at[m]) as u64, b.bytes() as u64];
    }
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u64;
    Offer {
        table: table.as_ptr(),
        entries: n,
        cma: pid + 1,
        _stage: None,
        _private: Some((table, data)),
        inline: None,
    }
}

/// [`offer`] inline, if the table and the packed blocks (an identical
/// block once) fit `inline_max` bytes.
///
/// # Safety
/// As [`offer`].
unsafe fn small(blocks: &[Option<Buf>], inline_max: usize) -> Option<Offer> {
    let n = blocks.len();
    let mut at = vec![usize::MAX; n];
    let mut len = n * 16;
    for (m, b) in blocks.iter().enumerate() {
        let Some(b) = b.filter(|b| b.bytes() > 0) else {
            continue;
        };
        if let Some(k) = (0..m).find(|&k| same(&blocks[k], &b)) {
            at[m] = at[k];
            continue;
        }
        at[m] = len;
        len += b.bytes().next_multiple_of(8);
        if len > inline_max {
            return None;
        }
    }
    let mut v = vec![0u64; len / 8];
    let base = v.as_mut_ptr() as *mut u8;
    for (m, b) in blocks.iter().enumerate() {
        let Some(b) = b.filter(|b| b.bytes() > 0) else {
            continue;
        };
        v[2 * m] = at[m] as u64;
        v[2 * m + 1] = b.bytes() as u64;
        if (0..m).all(|k| at[k] != at[m]) {
            // SAFETY: the caller's buffer; `v` has room for its packed
            // bytes at `at[m]`.
            unsafe { b.pack_to(base.add(at[m])) };
        }
    }
    Some(Offer {
        table: core::ptr::null(),
        entries: n,
        cma: 0,
        _stage: None,
        _private: None,
        inline: Some(v),
    })
}

/// Whether two blocks describe the same bytes (an all-gather's one block,
/// repeated for every member).
fn same(a: &Option<Buf>, b: &Buf) -> bool {
    a.as_ref()
        .is_some_and(|a| a.ptr == b.ptr && a.count == b.count && a.dt == b.dt)
}

/// The block `b` at `displ` elements of `base`'s datatype from `base`.
fn at(base: &Buf, displ: c_int, count: c_int) -> Option<Buf> {
    (count >= 0).then(|| Buf {
        ptr: base
            .ptr
            .wrapping_offset(displ as isize * base.l.extent as isize),
        count: count as usize,
        ..*base
    })
}

/// The duplicates of a call's derived receive datatypes, one per
/// datatype however many blocks use it (the program may free its own
/// while the call is pending). Dropped before it is taken (a call that
/// goes to the real MPI after all), it frees them.
#[derive(Default)]
pub(super) struct Held(Vec<(ffi::MPI_Datatype, ffi::MPI_Datatype)>);

impl Held {
    /// `b` with a held duplicate of its datatype if derived; `None` when
    /// it could not be duplicated.
    pub(super) fn hold(&mut self, b: Buf) -> Option<Buf> {
        if b.d.contig {
            return Some(b);
        }
        let t = match self.0.iter().find(|(orig, _)| *orig == b.dt) {
            Some(&(_, t)) => t,
            None => {
                let t = dup(b.dt)?;
                self.0.push((b.dt, t));
                t
            }
        };
        Some(Buf { dt: t, ..b })
    }

    /// The duplicates, now the operation's to free.
    pub(super) fn take(mut self) -> Vec<ffi::MPI_Datatype> {
        core::mem::take(&mut self.0)
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        for &(_, t) in &self.0 {
            let mut t = t;
            // SAFETY: our duplicate, never used by an operation.
            unsafe { ffi::PMPI_Type_free(&mut t) };
        }
    }
}

/// Builds the operation at the call (checks every argument it uses;
/// `None`: the real MPI's call).
///
/// # Safety
/// The caller's arguments.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn plan(
    how: VHow,
    node: &Node,
    sbuf: *const c_void,
    scounts: Option<*const c_int>,
    scount: c_int,
    sdispls: *const c_int,
    sdt: ffi::MPI_Datatype,
    rbuf: *mut c_void,
    rcounts: Option<*const c_int>,
    rcount: c_int,
    rdispls: *const c_int,
    rdt: ffi::MPI_Datatype,
    root: Option<c_int>,
) -> Option<Kind> {
    let (me, n) = (node.me, node.n);
    let root = match root {
        Some(r) => Some(rank_ok(r, n)?),
        None => None,
    };
    let is_root = root == Some(me);
    // SAFETY: the caller's count and displacement arrays hold `n` entries
    // where MPI says they are significant (checked non-null first).
    let entry = |a: *const c_int, m: usize| unsafe { *a.add(m) };
    let arr = |a: Option<*const c_int>| a.filter(|p| !p.is_null());
    let sin = sbuf == in_place();
    let rin = core::ptr::eq(rbuf, in_place());
    let (mut blocks, mut recv): (Vec<Option<Buf>>, Vec<Option<Buf>>) =
        (vec![None; n], vec![None; n]);
    let mut held = Held::default();
    let mut stage_always = false;
    let mut recv_base = |count: c_int| held.hold(Buf::new(rbuf, count, rdt)?);
    match how {
        VHow::Gatherv => {
            let root = root?;
            if sin && !is_root {
                return None;
            }
            if is_root {
                let (rc, rd) = (arr(rcounts)?, rdispls);
                if rd.is_null() {
                    return None;
                }
                let base = recv_base(0)?;
                for (m, slot) in recv.iter_mut().enumerate() {
                    if m == me && sin {
                        continue;
                    }
                    *slot = Some(at(&base, entry(rd, m), entry(rc, m))?);
                }
            }
            if !(is_root && sin) {
                blocks[root] = Some(Buf::new(sbuf, scount, sdt)?);
            }
        }
        VHow::Scatterv => {
            let root = root?;
            if is_root {
                let (sc, sd) = (arr(scounts)?, sdispls);
                if sd.is_null() {
                    return None;
                }
                let base = Buf::new(sbuf, 0, sdt)?;
                for (m, slot) in blocks.iter_mut().enumerate() {
                    *slot = Some(at(&base, entry(sd, m), entry(sc, m))?);
                }
                if !rin {
                    let mine = Buf::new(rbuf, rcount, rdt)?;
                    // The root's own block, now.
                    // SAFETY: the caller's buffers.
                    unsafe { blocks[me].as_ref()?.copy_to(&mine) };
                }
                blocks[me] = None;
            } else {
                recv[root] = Some(recv_base(rcount)?);
            }
        }
        VHow::Allgatherv => {
            let (rc, rd) = (arr(rcounts)?, rdispls);
            if rd.is_null() {
                return None;
            }
            let base = recv_base(0)?;
            for (m, slot) in recv.iter_mut().enumerate() {
                if m == me && sin {
                    continue;
                }
                *slot = Some(at(&base, entry(rd, m), entry(rc, m))?);
            }
            let mine = if sin {
                // Our block in place in the receive buffer: the others read
                // it while we write the other blocks.
                at(&Buf::new(rbuf, 0, rdt)?, entry(rd, me), entry(rc, me))?
            } else {
                Buf::new(sbuf, scount, sdt)?
            };
            blocks.iter_mut().for_each(|b| *b = Some(mine));
        }
        VHow::Alltoallv => {
            let (rc, rd) = (arr(rcounts)?, rdispls);
            if rd.is_null() {
                return None;
            }
            let base = recv_base(0)?;
            for (m, slot) in recv.iter_mut().enumerate() {
                *slot = Some(at(&base, entry(rd, m), entry(rc, m))?);
            }
            let (sbase, sc, sd) = if sin {
                // In place: the blocks we send are where we receive, and
                // we overwrite them while the others read (staged).
                stage_always = true;
                (Buf::new(rbuf, 0, rdt)?, rc, rd)
            } else {
                (Buf::new(sbuf, 0, sdt)?, arr(scounts)?, sdispls)
            };
            if sd.is_null() {
                return None;
            }
            for (m, slot) in blocks.iter_mut().enumerate() {
                *slot = Some(at(&sbase, entry(sd, m), entry(sc, m))?);
            }
        }
    }
    let recv = recv
        .into_iter()
        .enumerate()
        .filter_map(|(m, b)| Some((m, me, b?)))
        .collect();
    // SAFETY: the caller's buffers.
    Some(unsafe { vop(node, &blocks, stage_always, recv, held.take()) })
}

/// The operation of a member that sends `blocks` (entry `k` of its table:
/// the block for the member, or the neighbour, `k`) and receives `recv`.
///
/// # Safety
/// The caller's buffers.
pub(super) unsafe fn vop(
    node: &Node,
    blocks: &[Option<Buf>],
    stage_always: bool,
    recv: Vec<(usize, usize, Buf)>,
    held: Vec<ffi::MPI_Datatype>,
) -> Kind {
    let sends = blocks.iter().any(|b| b.is_some());
    // SAFETY: the caller's buffers.
    let offer = sends.then(|| unsafe { offer(blocks, stage_always, node.inline_max) });
    Kind::Vector(Box::new(Vop { offer, recv, held }))
}

/// Publishes this member's table on the operation's step, if it sends.
/// False: its cell is not free yet.
pub(super) fn begin(p: &mut Pending) -> bool {
    let (node, s) = (p.node, p.s);
    let Kind::Vector(v) = &p.kind else {
        unreachable!("a v collective")
    };
    if let Some(o) = &v.offer {
        if !node.gate_open(s) {
            return false;
        }
        match &o.inline {
            Some(t) => {
                let len = t.len() * 8;
                // SAFETY: our cell holds `inline_max` >= len bytes
                // (checked in `small`).
                unsafe {
                    crate::dt::copy_disjoint(
                        t.as_ptr() as *const u8,
                        node.data(node.me, s, len),
                        len,
                    )
                };
                node.publish(s, 0, len as u64, 0);
            }
            None => node.publish(s, o.table as u64, o.entries as u64, o.cma),
        }
    }
    true
}

/// Where a sender's table is.
#[derive(Clone, Copy)]
enum Table {
    /// In a cell or in our own memory: entries are offsets from it.
    Inline(*const u8),
    /// In the heap at this address: entries are addresses.
    Shared(u64),
    /// In process `pid` at this address: entries are its addresses.
    Cma(u64, i32),
}

/// Reads this member's blocks once every member it receives from has
/// published; true when done.
///
/// # Safety
/// `p`'s buffers are the caller's (see `post`).
pub(super) unsafe fn work(p: &mut Pending, may_call_mpi: bool) -> bool {
    let (node, s) = (p.node, p.s);
    let me = node.me;
    let Kind::Vector(v) = &p.kind else {
        unreachable!("a v collective")
    };
    if !v
        .recv
        .iter()
        .all(|&(m, _, _)| m == me || node.published(m, s).is_some())
    {
        return false;
    }
    // Unpacking a type that is not dense calls the MPI, which the progress
    // thread may not: it keeps such pieces' bytes for a calling thread
    // (`Pending::stash`: per piece, in `recv` order, its length as 8
    // bytes and the bytes; see `unstash`) and the step finishes, so the
    // other members' later operations do not wait at this member's gate
    // while its calling thread sits in the real MPI.
    let mut stash = (!may_call_mpi && v.recv.iter().any(|(_, _, b)| !b.d.contig)).then(Vec::new);
    for &(m, entry, ref b) in &v.recv {
        let table = if m == me {
            let o = v
                .offer
                .as_ref()
                .expect("a member receiving from itself sends");
            match &o.inline {
                Some(t) => Table::Inline(t.as_ptr() as *const u8),
                // Our own memory, private or shared, read directly.
                None => Table::Shared(o.table as u64),
            }
        } else {
            let c = node.cell(m, s);
            // Relaxed: ordered by the Acquire in `published`.
            let (addr, len, aux) = (
                c.addr.load(Ordering::Relaxed),
                c.len.load(Ordering::Relaxed),
                c.aux.load(Ordering::Relaxed),
            );
            match (addr, aux) {
                (0, _) => Table::Inline(node.data(m, s, len as usize)),
                (a, 0) => Table::Shared(a),
                (a, pid) => Table::Cma(a, (pid - 1) as i32),
            }
        };
        match &mut stash {
            // SAFETY: the sender's table holds `n` entries and its blocks
            // stay readable until every member finished the step (we have
            // not).
            Some(st) if !b.d.contig => unsafe { keep_block(table, entry, b, st) },
            // SAFETY: as above (inline: its cell until then); the piece
            // is the caller's.
            _ => unsafe { read_block(table, entry, b) },
        }
    }
    if let Some(st) = stash {
        p.stash = Some(st);
    }
    true
}

/// Entry `k` of `table`: the offset or address of the block, and its
/// length.
///
/// # Safety
/// As [`work`].
unsafe fn entry(table: Table, k: usize) -> [u64; 2] {
    let mut e = [0u64; 2];
    match table {
        // SAFETY: per the contract; 8-byte aligned (a cell's data, a
        // `Vec<u64>` or a stage).
        Table::Inline(t) => e = unsafe { *(t.add(k * 16) as *const [u64; 2]) },
        // SAFETY: as above.
        Table::Shared(t) => e = unsafe { *((t as usize + k * 16) as *const [u64; 2]) },
        // SAFETY: `e` has room for 16 bytes.
        Table::Cma(t, pid) => unsafe {
            cma_read(pid, t as usize + k * 16, e.as_mut_ptr().cast(), 16)
        },
    }
    e
}

/// Appends entry `k` of `table`'s block, as many bytes as `b` takes, to
/// `stash` (its length as 8 bytes, then the bytes), for [`unstash`].
///
/// # Safety
/// As [`work`].
unsafe fn keep_block(table: Table, k: usize, b: &Buf, stash: &mut Vec<u8>) {
    // SAFETY: per the contract.
    let e = unsafe { entry(table, k) };
    let len = (e[1] as usize).min(b.bytes());
    stash.extend_from_slice(&(len as u64).to_le_bytes());
    let at = stash.len();
    stash.resize(at + len, 0);
    if len == 0 {
        return;
    }
    let dst = stash[at..].as_mut_ptr();
    match table {
        // SAFETY: the block holds `e[1]` >= len bytes at that offset;
        // `dst` has room for `len`.
        Table::Inline(t) => unsafe { crate::dt::copy_disjoint(t.add(e[0] as usize), dst, len) },
        // SAFETY: as above, at that address.
        Table::Shared(_) => unsafe { crate::dt::copy_disjoint(e[0] as *const u8, dst, len) },
        // SAFETY: `dst` has room for `len`.
        Table::Cma(_, pid) => unsafe { cma_read(pid, e[0] as usize, dst, len) },
    }
}

/// Unpacks what [`work`] kept in `stash` for the pieces of `v` that are not
/// dense. A calling thread: unpacking calls the MPI.
///
/// # Safety
/// `v`'s pieces are the caller's; `stash` is the one `work` made for it.
pub(super) unsafe fn unstash(v: &Vop, stash: &[u8]) {
    let mut at = 0;
    for (_, _, b) in v.recv.iter().filter(|(_, _, b)| !b.d.contig) {
        let len = u64::from_le_bytes(stash[at..at + 8].try_into().expect("8 bytes")) as usize;
        at += 8;
        if len > 0 {
            // SAFETY: the stash holds `len` <= `b.bytes()` bytes for this
            // piece; the piece is the caller's.
            unsafe { b.unpack_from(stash[at..].as_ptr(), len) };
        }
        at += len;
    }
}

/// Reads entry `k` of `table` and its block into `b`.
///
/// # Safety
/// As [`work`].
unsafe fn read_block(table: Table, k: usize, b: &Buf) {
    // SAFETY: per the contract.
    let e = unsafe { entry(table, k) };
    let len = (e[1] as usize).min(b.bytes());
    if len == 0 {
        return;
    }
    match table {
        // SAFETY: the block holds `e[1]` bytes at that offset.
        Table::Inline(t) => unsafe { b.unpack_from(t.add(e[0] as usize), len) },
        // SAFETY: the block holds `e[1]` bytes.
        Table::Shared(_) => unsafe { b.unpack_from(e[0] as *const u8, len) },
        // SAFETY: the caller's dense piece holds `bytes()` >= len.
        Table::Cma(_, pid) if b.d.contig => unsafe { cma_read(pid, e[0] as usize, b.ptr, len) },
        Table::Cma(_, pid) => {
            let mut tmp = vec![0u8; len];
            // SAFETY: `tmp` has room; then unpacked from it.
            unsafe {
                cma_read(pid, e[0] as usize, tmp.as_mut_ptr(), len);
                b.unpack_from(tmp.as_ptr(), len);
            }
        }
    }
}

/// Reads `len` bytes at `remote` in process `pid`.
///
/// # Safety
/// `local` has room for `len` bytes.
unsafe fn cma_read(pid: i32, remote: usize, local: *mut u8, len: usize) {
    // SAFETY: per the contract.
    if !unsafe { crate::sys::cma::read(pid, remote, local, len) } {
        crate::eprint_noalloc!(
            "heapmpi: error: cannot read a nonblocking collective's data from process {} \
             (process_vm_readv: errno {}); shared heap exhausted and cross-memory attach refused",
            pid,
            crate::sys::errno()
        );
    }
}

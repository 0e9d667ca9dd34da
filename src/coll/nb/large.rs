//! Nonblocking broadcasts, reductions and block moves (`MPI_Ibcast`,
//! `Ireduce`, `Iallreduce`, `Iscan`, `Iexscan`, `Ireduce_scatter_block`,
//! `Ireduce_scatter`, `Igather`, `Iallgather`, `Ialltoall`, `Iscatter`)
//! whose payload does not fit a cell inline: read in place, with one copy,
//! as the blocking collectives read large buffers
//! ([`super::super::fold`], [`super::super::gather`]). A reduce-scatter's
//! member folds only its block or part of every contribution.
//!
//! An operation of `bytes` takes `1 + k` steps at the call, `k` the chunks
//! of at most a cell's inline size the payload would make (the same on
//! every member: MPI makes the type signatures match). On its first step
//! every member that contributes data publishes where the others can read
//! it: its buffer when it lies in the shared heap (not in place: a member
//! writing its result there would change what the others read), else a
//! staging copy in its part of the heap. Once every contribution is known
//! each receiver reads them straight from those addresses (one copy, or
//! the fold that is the reduction), and every contributor keeps its
//! request open until every member is done with the operation's last step,
//! so its buffer stays valid while the others read it (the rendezvous of
//! the shared-memory transports, e.g. Open MPI's `smsc`/XPMEM single-copy
//! path, with a flag where they exchange a message).
//!
//! A member that can get no staging memory (heap full) publishes `FAIL`
//! instead. A nonblocking call cannot hand the operation to the real MPI
//! then (the others have queued it on the heap, and may call other
//! collectives on the communicator meanwhile), so every member, seeing a
//! `FAIL` among the contributions, moves the payload through the cells
//! instead: chunk `j` on step `1 + j`, each chunk published in the
//! writers' cells and read as a small operation is, pipelined over the
//! cells' ring. Slower, but it needs no memory, so it cannot fail.

use super::super::{assist, Stage, FAIL};
use super::small::{block_senders, stash_blocks};
use super::{Fold, How, Kind, Pending};
use crate::comm::node::Node;

/// Bytes a receiver of a direct reduction folds at a time: a chunk, its
/// accumulator and the inputs' lines stay in the L1/L2 caches (the
/// blocking reductions' choice, measured there).
const FOLD_CHUNK: usize = 16 << 10;

/// A payload larger than a cell: how this member offers and receives it.
pub(super) struct Large {
    /// Chunks the payload makes, each on its own step after the first
    /// (used only when some member published `FAIL`).
    k: u64,
    /// Bytes of a chunk (a whole number of elements for reductions).
    chunk: usize,
    /// Bytes of the payload.
    bytes: usize,
    /// Bytes of one element of a reduction (0 for other operations).
    elem: usize,
    /// What this member published on the first step: the address of its
    /// contribution, 0 for none (a broadcast's receivers), or `FAIL`.
    offer: u64,
    /// Where this member's contribution is read from for the chunks: its
    /// offer, or its own buffer (packed copy) when it could not offer one.
    src: *const u8,
    /// The staging copy the offer points at, if any (freed with this).
    _stage: Option<Stage>,
    /// A root's packed derived-type data or a member's packed blocks
    /// (what `src` points at when no staging copy could be made).
    packed: Vec<u8>,
    /// A receiver's chunks, gathered for one unpack at the end
    /// (derived-type broadcasts, block moves).
    acc: Vec<u8>,
    mode: Mode,
}

/// Where a published operation stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Waiting for the offers it needs.
    Deciding,
    /// Reading in place.
    Direct,
    /// Moving chunk `j` through the cells; `put`: ours is published;
    /// `got`: we have read the chunk.
    Chunked { j: u64, put: bool, got: bool },
}

impl Large {
    /// Steps the operation takes beyond its first.
    pub(super) fn extra_steps(&self) -> u64 {
        self.k
    }

    /// Whether other members read this member's memory in place, so its
    /// request must wait until they are all done.
    pub(super) fn drains(&self) -> bool {
        self.mode == Mode::Direct && self.offer != 0 && self.offer != FAIL
    }

    /// Whether this member is the root of a broadcast large enough for its
    /// readers to ask for help ([`assist`]): it then copies their blocks
    /// while it drains, and finishes its step only once they are done (a
    /// reader's job lives in its cell of the step, reused once every
    /// member, the root included, finished it).
    pub(super) fn serves(&self, kind: &Kind) -> bool {
        matches!(kind, Kind::Bcast { .. }) && self.drains() && self.bytes >= assist::MIN
    }

    /// One round of the root's help (see [`Large::serves`]).
    pub(super) fn serve(&self, node: &Node, s: u64) {
        assist::serve_once(node, s, self.src, self.bytes);
    }
}

/// Whether `kind` can run as a large operation on `node` if it does not
/// fit a cell: a broadcast, a block move, or a reduction whose elements
/// fit a cell whole (each receiver folds its part of the contributions:
/// all of them, or its block or part for the reduce-scatters).
pub(super) fn takes(node: &Node, kind: &Kind) -> bool {
    match kind {
        Kind::Bcast { .. } | Kind::Blocks { .. } => true,
        Kind::Reduce { .. } => (1..=node.inline_max).contains(&elem_size(node, kind)),
        Kind::Barrier | Kind::Vector(_) => false,
    }
}

/// Bytes of one element of a reduction (0 when its contributions are
/// empty, or for another operation).
fn elem_size(node: &Node, kind: &Kind) -> usize {
    match kind {
        Kind::Reduce {
            count, bytes, fold, ..
        } => bytes
            .checked_div(fold.elements(*count, node.n))
            .unwrap_or(0),
        _ => 0,
    }
}

/// The payload of `kind` on a communicator of `n` members (what the
/// writers publish; what [`takes`] checks the size of): the same on every
/// member.
pub(super) fn payload(kind: &Kind, n: usize) -> usize {
    match kind {
        Kind::Bcast { buf, .. } => buf.bytes(),
        Kind::Reduce { bytes, .. } => *bytes,
        Kind::Blocks { how, pb, .. } => match how {
            How::Gather => *pb,
            How::Alltoall | How::Scatter => n * *pb,
        },
        Kind::Barrier | Kind::Vector(_) => 0,
    }
}

/// This member's offer for `kind`, whose payload is larger than a cell
/// (checked by [`takes`] at the call): made at the call, where the MPI
/// may be called (packing) and the send buffer holds the data.
///
/// # Safety
/// `kind`'s buffers are the caller's.
pub(super) unsafe fn prepare(node: &Node, kind: &mut Kind) -> Box<Large> {
    let bytes = payload(kind, node.n);
    let me = node.me;
    let mut large = Large {
        k: 0,
        chunk: node.inline_max,
        bytes,
        elem: elem_size(node, kind),
        offer: 0,
        src: core::ptr::null(),
        _stage: None,
        packed: Vec::new(),
        acc: Vec::new(),
        mode: Mode::Deciding,
    };
    match kind {
        Kind::Bcast {
            root, buf, packed, ..
        } => {
            if *root == me {
                let from: *const u8 = match packed {
                    Some(v) => v.as_ptr(),
                    None => buf.ptr,
                };
                if let Some(p) = buf.shared() {
                    large.offer = p as u64;
                    large.src = p;
                } else if let Some(st) = Stage::new(bytes) {
                    // SAFETY: `from` holds `bytes` packed bytes (the
                    // caller's dense buffer or our packed copy); the
                    // stage has room.
                    unsafe { crate::dt::copy_disjoint(from, st.0, bytes) };
                    large.offer = st.0 as u64;
                    large.src = st.0;
                    large._stage = Some(st);
                } else {
                    large.offer = FAIL;
                    large.src = from;
                }
                // Keep the packed copy alive as long as `src` may point
                // into it.
                large.packed = packed.take().unwrap_or_default();
            }
        }
        Kind::Reduce {
            send, recv, bytes, ..
        } => {
            // Chunks of whole elements (`takes`: an element fits a cell).
            large.chunk = node.inline_max / large.elem * large.elem;
            let in_place = core::ptr::eq(*send, *recv);
            if !in_place && crate::heap::in_region(*send, *bytes) {
                large.offer = *send as u64;
                large.src = *send;
            } else if let Some(st) = Stage::new(*bytes) {
                // SAFETY: the contribution holds `bytes` bytes; the stage
                // has room.
                unsafe { crate::dt::copy_disjoint(*send, st.0, *bytes) };
                large.offer = st.0 as u64;
                large.src = st.0;
                large._stage = Some(st);
            } else {
                // In place, chunk `j` is read from the receive buffer
                // before this member's result for it is written there.
                large.offer = FAIL;
                large.src = *send;
            }
        }
        Kind::Blocks { src, .. } => {
            if let Some((b, stage_always)) = src {
                if let Some(p) = b.shared().filter(|_| !*stage_always) {
                    large.offer = p as u64;
                    large.src = p;
                } else if let Some(st) = Stage::new(bytes) {
                    // SAFETY: the caller's buffer; the stage has room.
                    unsafe { b.pack_to(st.0) };
                    large.offer = st.0 as u64;
                    large.src = st.0;
                    large._stage = Some(st);
                } else {
                    // Packed privately for the chunks (at the call, where
                    // the MPI may be called).
                    large.packed = vec![0u8; bytes];
                    // SAFETY: the caller's buffer; `packed` has room.
                    unsafe { b.pack_to(large.packed.as_mut_ptr()) };
                    large.offer = FAIL;
                    large.src = large.packed.as_ptr();
                }
            }
        }
        Kind::Barrier | Kind::Vector(_) => unreachable!("no payload here"),
    }
    large.k = bytes.div_ceil(large.chunk) as u64;
    Box::new(large)
}

/// Whether this member writes data for `kind` (its cells or its offer).
fn writes(kind: &Kind, me: usize) -> bool {
    match kind {
        Kind::Bcast { root, .. } => *root == me,
        Kind::Blocks {
            how: How::Scatter,
            root,
            ..
        } => *root == Some(me),
        _ => true,
    }
}

/// The only member that writes `kind`, if one does (a broadcast's or a
/// scatter's root); else every member writes.
fn sole_writer(kind: &Kind) -> Option<usize> {
    match kind {
        Kind::Bcast { root, .. } => Some(*root),
        Kind::Blocks {
            how: How::Scatter,
            root,
            ..
        } => *root,
        _ => None,
    }
}

/// Whether this member receives a broadcast's or a reduction's result,
/// and from which members (`0..=last`; a broadcast: its root).
fn receives(kind: &Kind, node: &Node) -> Option<usize> {
    let me = node.me;
    match kind {
        Kind::Bcast { root, .. } => (*root != me).then_some(*root),
        Kind::Reduce { root, fold, .. } => match fold {
            Fold::Scan => Some(me),
            Fold::Exscan => me.checked_sub(1),
            _ => root.is_none_or(|r| r == me).then_some(node.n - 1),
        },
        _ => None,
    }
}

/// Publishes this member's offer on the operation's first step, if it
/// writes one. False: its cell is not free yet.
pub(super) fn begin(p: &mut Pending) -> bool {
    let (node, s) = (p.node, p.s);
    let l = p.large.as_ref().expect("a large operation");
    if writes(&p.kind, node.me) {
        if !node.gate_open(s) {
            return false;
        }
        node.publish(s, l.offer, l.bytes as u64, 0);
    }
    true
}

/// Moves a published large operation on; true once this member has its
/// result (and, in chunks, has finished every step: `first` says whether
/// it may finish steps now, every earlier operation of the communicator
/// being finished here).
///
/// # Safety
/// `p`'s buffers are the caller's (see `post`).
pub(super) unsafe fn work(p: &mut Pending, first: bool, may_call_mpi: bool) -> bool {
    let (node, s) = (p.node, p.s);
    let me = node.me;
    let from = receives(&p.kind, node);
    let l = p.large.as_mut().expect("a large operation");
    if l.mode == Mode::Deciding {
        // The offers every member must see to choose the same way: a
        // broadcast's or scatter's root's, else every member's (a member
        // that reads none still chunks its part if another failed).
        let mut failed = l.offer == FAIL;
        let needed: &mut dyn Iterator<Item = usize> = match sole_writer(&p.kind) {
            Some(root) => &mut core::iter::once(root),
            None => &mut (0..node.n),
        };
        for m in needed.filter(|&m| m != me) {
            let Some(c) = node.published(m, s) else {
                return false;
            };
            // Relaxed: ordered by the Acquire in `published`.
            failed |= c.addr.load(std::sync::atomic::Ordering::Relaxed) == FAIL;
        }
        l.mode = if failed {
            Mode::Chunked {
                j: 0,
                put: false,
                got: false,
            }
        } else {
            Mode::Direct
        };
    }
    if l.mode == Mode::Direct {
        if let Kind::Blocks { .. } = &p.kind {
            // SAFETY: per the contract; the offers stay valid until we
            // finish the operation's steps.
            return unsafe { direct_blocks(&p.kind, node, s, l, may_call_mpi, &mut p.stash) };
        }
        let Some(last) = from else {
            return true;
        };
        // SAFETY: per the contract; the offers stay valid until we finish
        // the operation's steps.
        return unsafe { direct(&p.kind, node, s, l, last, may_call_mpi, &mut p.stash) };
    }
    // SAFETY: per the contract.
    unsafe { chunks(&p.kind, node, s, l, from, first, may_call_mpi, &mut p.stash) }
}

/// The address member `m` offered on step `s` (ours: our own offer).
fn offer_of(node: &Node, s: u64, l: &Large, m: usize) -> *const u8 {
    if m == node.me {
        return l.offer as *const u8;
    }
    // Relaxed: the publication was seen with Acquire (deciding).
    node.cell(m, s)
        .addr
        .load(std::sync::atomic::Ordering::Relaxed) as *const u8
}

/// Reads the result in place from the offers (`last`: the last member
/// combined, or a broadcast's root).
///
/// # Safety
/// As [`work`].
unsafe fn direct(
    kind: &Kind,
    node: &Node,
    s: u64,
    l: &Large,
    last: usize,
    may_call_mpi: bool,
    stash: &mut Option<Vec<u8>>,
) -> bool {
    match kind {
        Kind::Bcast { buf, .. } => {
            let src = offer_of(node, s, l, last);
            if !buf.d.contig && !may_call_mpi {
                // Unpacking a derived type calls the MPI: keep the bytes
                // for a calling thread (see `Pending::stash`).
                // SAFETY: the root's offer holds `bytes` packed bytes
                // until every member finished.
                *stash = Some(unsafe { core::slice::from_raw_parts(src, l.bytes) }.to_vec());
                return true;
            }
            if l.bytes >= assist::MIN && buf.shared().is_some() && node.gate_open(s) {
                // The root copies blocks for us (it serves until we finish
                // step `s`, see `Large::serves`). Our cell of step `s` is
                // free (the gate), and no earlier operation of ours still
                // reads it (`run` starts none while one `CELLS` steps back
                // is published).
                // SAFETY: as below; our buffer is dense, in the heap, and
                // the caller's until the operation completes.
                unsafe { assist::read_gated(node, s, src, buf.ptr, l.bytes) };
            } else {
                // SAFETY: the root's offer holds `bytes` packed bytes until
                // every member finished; the buffer is the caller's.
                unsafe { buf.unpack_from(src, l.bytes) };
            }
        }
        Kind::Reduce {
            recv,
            count,
            red,
            fold,
            ..
        } => {
            // This member's part of every contribution: elements
            // `first..first + count` (all of them but for the
            // reduce-scatters).
            let (first, count) = fold.part(*count, node.me);
            let elem = l.elem;
            let per = (FOLD_CHUNK / elem).max(1);
            let mut at = 0;
            while at < count {
                let n = per.min(count - at);
                let (from, to) = ((first + at) * elem, at * elem);
                // x0 op (x1 op (... op x(last))), as the small
                // reductions, chunk by chunk.
                // SAFETY: every offer holds `bytes` bytes, `first + count`
                // elements at least, until every member finished; `recv`
                // holds `count` elements and is none of them (in place
                // contributions are staged). `count` > 0 here, so `recv`
                // is a real buffer.
                unsafe {
                    crate::dt::copy_disjoint(
                        offer_of(node, s, l, last).add(from),
                        recv.add(to),
                        n * elem,
                    );
                    for m in (0..last).rev() {
                        red.apply(offer_of(node, s, l, m).add(from), recv.add(to), n);
                    }
                }
                at += n;
            }
        }
        Kind::Barrier | Kind::Blocks { .. } | Kind::Vector(_) => {
            unreachable!("only broadcasts and reductions")
        }
    }
    true
}

/// A block move's receiver reads its blocks in place from the offers.
///
/// # Safety
/// As [`work`].
unsafe fn direct_blocks(
    kind: &Kind,
    node: &Node,
    s: u64,
    l: &Large,
    may_call_mpi: bool,
    stash: &mut Option<Vec<u8>>,
) -> bool {
    let Kind::Blocks {
        how,
        pb,
        recv: Some(r),
        ..
    } = kind
    else {
        return true;
    };
    if !r.buf.d.contig && !may_call_mpi {
        // Unpacking a derived type calls the MPI: keep the blocks for a
        // calling thread (see `Pending::stash`).
        // SAFETY: member m's offer holds its payload, `lo + pb` bytes of
        // it at least, until every member finished.
        let v = unsafe { stash_blocks(kind, node, |m, lo| offer_of(node, s, l, m).add(lo)) };
        *stash = Some(v);
        return true;
    }
    for (m, lo) in block_senders(kind, node) {
        let into = if *how == How::Scatter {
            r.buf
        } else {
            r.buf.piece(m)
        };
        // SAFETY: member m's offer holds its payload, `lo + pb` bytes of
        // it at least, until every member finished; the piece is the
        // caller's.
        unsafe { into.unpack_from(offer_of(node, s, l, m).add(lo), *pb) };
    }
    true
}

/// Moves the payload chunk by chunk through the cells (some member could
/// not offer it): returns true once every chunk is through here. A
/// receive type that is not dense is unpacked from the gathered chunks by
/// a calling thread: the progress thread hands them over as `stash`.
///
/// # Safety
/// As [`work`].
#[allow(clippy::too_many_arguments)]
unsafe fn chunks(
    kind: &Kind,
    node: &Node,
    s: u64,
    l: &mut Large,
    from: Option<usize>,
    first: bool,
    may_call_mpi: bool,
    stash: &mut Option<Vec<u8>>,
) -> bool {
    let me = node.me;
    // Receivers that gather the chunks for one unpack at the end: a
    // derived-type broadcast, every block move (its blocks are parts of
    // the senders' payloads, which the chunks cut anywhere).
    let gathers = match kind {
        Kind::Bcast { buf, .. } => !buf.d.contig && from.is_some(),
        Kind::Blocks { recv, .. } => recv.is_some(),
        _ => false,
    };
    if gathers && l.acc.is_empty() {
        let len = match kind {
            Kind::Blocks { pb, .. } => node.n * *pb,
            _ => l.bytes,
        };
        l.acc = vec![0u8; len];
    }
    let receiving = from.is_some() || matches!(kind, Kind::Blocks { recv: Some(_), .. });
    while let Mode::Chunked { j, put, got } = l.mode {
        if j == l.k {
            break;
        }
        let t = s + 1 + j;
        let off = j as usize * l.chunk;
        let len = l.chunk.min(l.bytes - off);
        if !put && writes(kind, me) {
            if !node.gate_open(t) {
                return false;
            }
            // SAFETY: `src` holds `bytes` bytes of this member's
            // contribution (chunk `j` not yet overwritten by a result:
            // results are written after the chunk is published); the
            // cell holds `inline_max` >= `len`.
            unsafe { crate::dt::copy_disjoint(l.src.add(off), node.data(me, t, len), len) };
            node.publish(t, 0, len as u64, 0);
        }
        l.mode = Mode::Chunked { j, put: true, got };
        if !got && receiving {
            // SAFETY: per the contract.
            if !unsafe { take_chunk(kind, node, t, l, from, off, len) } {
                return false;
            }
            l.mode = Mode::Chunked {
                j,
                put: true,
                got: true,
            };
        }
        if !first {
            // Steps are finished in order: an earlier operation of the
            // communicator is not finished here yet.
            return false;
        }
        node.finish(t);
        l.mode = Mode::Chunked {
            j: j + 1,
            put: false,
            got: false,
        };
    }
    if gathers {
        if !may_call_mpi && !contiguous_receive(kind) {
            // Unpacking a derived type calls the MPI: keep the bytes for a
            // calling thread (see `Pending::stash`) in the layout
            // `unstash` reads, so that the operation finishes here (the
            // others' later operations wait at this member's gate until
            // it does). `acc` has it already but for a scatter, whose one
            // block sits in the root's slot and goes at 0.
            let acc = core::mem::take(&mut l.acc);
            *stash = Some(match kind {
                Kind::Blocks {
                    how: How::Scatter,
                    pb,
                    ..
                } => {
                    // SAFETY: slot m of `acc` holds member m's `pb` bytes.
                    unsafe { stash_blocks(kind, node, |m, _| acc.as_ptr().add(m * pb)) }
                }
                _ => acc,
            });
            return true;
        }
        match kind {
            Kind::Bcast { buf, .. } => {
                // SAFETY: the payload, whole; the caller's buffer.
                unsafe { buf.unpack_from(l.acc.as_ptr(), l.acc.len()) };
            }
            Kind::Blocks {
                how,
                pb,
                recv: Some(r),
                ..
            } => {
                for (m, _) in block_senders(kind, node) {
                    let into = if *how == How::Scatter {
                        r.buf
                    } else {
                        r.buf.piece(m)
                    };
                    // SAFETY: slot m of `acc` holds member m's block;
                    // the piece is the caller's.
                    unsafe { into.unpack_from(l.acc.as_ptr().add(m * pb), *pb) };
                }
            }
            _ => {}
        }
        l.acc = Vec::new();
    }
    true
}

/// Whether a receiver's buffer is dense (unpacking it calls no MPI).
fn contiguous_receive(kind: &Kind) -> bool {
    match kind {
        Kind::Bcast { buf, .. } => buf.d.contig,
        Kind::Blocks { recv: Some(r), .. } => r.buf.d.contig,
        _ => true,
    }
}

/// Reads chunk `[off, off + len)` of the senders' payloads on step `t`,
/// if every sender has published it. False: not yet.
///
/// # Safety
/// As [`work`].
unsafe fn take_chunk(
    kind: &Kind,
    node: &Node,
    t: u64,
    l: &mut Large,
    from: Option<usize>,
    off: usize,
    len: usize,
) -> bool {
    let me = node.me;
    let ready = |m: usize| m == me || node.published(m, t).is_some();
    match kind {
        Kind::Bcast { buf, .. } => {
            let root = from.expect("a receiving member");
            if !ready(root) {
                return false;
            }
            let at = node.data(root, t, len);
            let to = if buf.d.contig {
                buf.ptr
            } else {
                l.acc.as_mut_ptr()
            };
            // SAFETY: the root's cell holds `len` bytes; the caller's
            // dense buffer (or `acc`) holds `bytes`.
            unsafe { crate::dt::copy_disjoint(at, to.add(off), len) };
        }
        Kind::Reduce {
            recv,
            red,
            count,
            fold,
            ..
        } => {
            let last = from.expect("a receiving member");
            if !(0..=last).all(ready) {
                return false;
            }
            // The bytes of this chunk within this member's part of the
            // contributions, `[lo, hi)`: all of it but for the
            // reduce-scatters. Chunks and parts are whole elements.
            let (first, count) = fold.part(*count, node.me);
            let (lo, hi) = (first * l.elem, (first + count) * l.elem);
            let (a, b) = (off.max(lo), (off + len).min(hi));
            if a < b {
                // In place, the result lands at `a - lo` <= `a`, in chunks
                // this member has already published (see `chunks`).
                // SAFETY: every sender's cell holds the chunk's `len`
                // bytes from `off`, `[a, b)` within; `recv` holds the
                // part's `hi - lo` bytes and overlaps no cell.
                unsafe {
                    let to = recv.add(a - lo);
                    crate::dt::copy_disjoint(node.data(last, t, len).add(a - off), to, b - a);
                    for m in (0..last).rev() {
                        red.apply(node.data(m, t, len).add(a - off), to, (b - a) / l.elem);
                    }
                }
            }
        }
        Kind::Blocks { pb, .. } => {
            if !block_senders(kind, node).all(|(m, _)| ready(m)) {
                return false;
            }
            for (m, lo) in block_senders(kind, node) {
                // The part of this chunk inside the block we take.
                let (a, b) = (off.max(lo), (off + len).min(lo + pb));
                if a < b {
                    // SAFETY: member m's cell holds `len` bytes from
                    // `off`; slot m of `acc` holds `pb`, `a - lo + (b - a)`
                    // <= pb of them.
                    unsafe {
                        crate::dt::copy_disjoint(
                            node.data(m, t, len).add(a - off),
                            l.acc.as_mut_ptr().add(m * pb + (a - lo)),
                            b - a,
                        )
                    };
                }
            }
        }
        Kind::Barrier | Kind::Vector(_) => unreachable!("no payload here"),
    }
    true
}

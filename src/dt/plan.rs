//! Strided layouts ("plans") of derived datatypes, and the copy between
//! two of them.
//!
//! A plan describes the bytes of `count` elements of a datatype as nested
//! loops around one contiguous block: up to [`MAX_DIMS`] dimensions of
//! (count, stride in bytes), outermost first, and the block's offset from
//! the buffer address. The packed representation is the blocks' bytes in
//! loop order. That covers the datatypes stencil and transpose codes send:
//! vectors and hvectors (columns, planes of a 3-D array), subarrays (halo
//! slabs), contiguous and resized repetitions of them, single-block
//! structs (BigMPI's large messages), nested up to the four dimensions;
//! anything else has no plan and is packed by the real MPI as before.
//!
//! With both sides' plans, the receiver of a message copies straight from
//! the sender's buffer (in the shared heap) into its own: one copy,
//! instead of the sender's `MPI_Pack` into a staging buffer and the
//! receiver's `MPI_Unpack` out of it (which, for a large message, is also
//! a staging buffer as large as the message). It is the representation of
//! MPICH's dataloops and Yaksa's type descriptors (vector of vector of
//! block) reduced to what a single copy needs; the copy walks both
//! layouts at once, block against block, as Open MPI's convertor walks one
//! against a packed stream. The decoding is that of [`super::run`]
//! (`MPI_Type_get_envelope`/`MPI_Type_get_contents`, MPI-4.0 §5.1.13).

use core::ffi::c_int;

use mpi_sys as ffi;

use super::run::{dense_named, kind, Kind};
use super::{contents, envelope, extents, free_if_derived};

/// Most loop dimensions a plan has (after merging); deeper layouts are
/// packed by the real MPI.
pub const MAX_DIMS: usize = 4;

/// How deep the decoding follows nested datatypes.
const DEPTH: u32 = 8;

/// The layout of some elements of a datatype: `dims` loops (outermost
/// first) of `block` bytes at `off` from the buffer address. Plain data
/// (`repr(C)`): a sender publishes its plan in the message header, in the
/// shared heap, for the receiver to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Plan {
    /// Offset of the first block from the buffer address.
    pub off: i64,
    /// Bytes of one block (never 0).
    pub block: u64,
    /// Dimensions in use.
    pub nd: u64,
    /// (count, stride in bytes) of each loop, outermost first.
    pub dims: [(u64, i64); MAX_DIMS],
}

impl Plan {
    /// One run of `bytes` bytes at the buffer address (`None` for 0).
    pub fn dense(bytes: usize) -> Option<Plan> {
        (bytes > 0).then_some(Plan {
            off: 0,
            block: bytes as u64,
            nd: 0,
            dims: [(0, 0); MAX_DIMS],
        })
    }

    /// Bytes the layout holds.
    pub fn bytes(&self) -> u64 {
        self.dims[..self.nd as usize]
            .iter()
            .fold(self.block, |a, &(n, _)| a.saturating_mul(n))
    }

    /// `n` copies of this layout, `stride` bytes apart, one after the other
    /// in the packed order; `None` for no copies or too many dimensions.
    pub fn repeat(&self, n: u64, stride: i64) -> Option<Plan> {
        if n == 0 {
            return None;
        }
        let mut p = *self;
        if n == 1 {
            return Some(p);
        }
        if p.nd == 0 && stride == p.block as i64 {
            p.block = p.block.checked_mul(n)?;
            return Some(p);
        }
        if p.nd > 0 {
            let (n0, s0) = p.dims[0];
            if (n0 as i64).checked_mul(s0) == Some(stride) {
                p.dims[0].0 = n0.checked_mul(n)?;
                return Some(p);
            }
        }
        if p.nd as usize == MAX_DIMS {
            return None;
        }
        p.dims.copy_within(0..p.nd as usize, 1);
        p.dims[0] = (n, stride);
        p.nd += 1;
        Some(p)
    }

    /// The layout moved by `by` bytes.
    pub fn shift(&self, by: i64) -> Option<Plan> {
        Some(Plan {
            off: self.off.checked_add(by)?,
            ..*self
        })
    }

    /// The bytes the layout touches, from the buffer address:
    /// `(lowest, one past the highest)`.
    pub fn span(&self) -> (i64, i64) {
        let (mut lo, mut hi) = (self.off, self.off.saturating_add(self.block as i64));
        for &(n, s) in &self.dims[..self.nd as usize] {
            let reach = (n as i64 - 1).saturating_mul(s);
            if reach < 0 {
                lo = lo.saturating_add(reach);
            } else {
                hi = hi.saturating_add(reach);
            }
        }
        (lo, hi)
    }
}

/// The plan of `count` elements of `dt`, or `None` when the datatype is
/// not one [`Plan`] describes (or the MPI refuses to describe it). Makes a
/// few MPI calls per constructor level: for messages, not for every call.
pub fn of(dt: ffi::MPI_Datatype, count: c_int) -> Option<Plan> {
    if count <= 0 {
        return None;
    }
    let mut size: ffi::MPI_Count = 0;
    // SAFETY: a datatype handle and an out-pointer; an invalid handle gives
    // an error code.
    if unsafe { ffi::PMPI_Type_size_x(dt, &mut size) } != 0 || size <= 0 {
        return None;
    }
    let (_, ext, _, _) = extents(dt);
    // The cast is needed where MPI_Aint is not `i64`.
    #[allow(clippy::unnecessary_cast)]
    let p = element(dt, DEPTH)?.repeat(count as u64, ext as i64)?;
    // A description that does not account for every byte (a type this
    // decoding misreads) is not used.
    (p.bytes() == (size as u64).checked_mul(count as u64)?).then_some(p)
}

/// The plan of one element of `dt`.
fn element(dt: ffi::MPI_Datatype, depth: u32) -> Option<Plan> {
    let env = envelope(dt)?;
    let k = kind(env.comb);
    if k == Kind::Named {
        // Only predefined types without holes (not MPI_SHORT_INT's kind).
        return Plan::dense(dense_named(dt)? as usize);
    }
    // A struct of several blocks is not followed: known from the envelope
    // (one datatype per block), before reading its contents.
    if depth == 0 || k == Kind::Other || (k == Kind::Struct && env.nd != 1) {
        return None;
    }
    let c = contents(dt, &env)?;
    let r = (|| {
        let v = &c.values;
        // The plan and extent of the i-th datatype argument.
        let base = |i: usize| -> Option<(Plan, i64)> {
            let t = *c.types.get(i)?;
            let p = element(t, depth - 1)?;
            let (_, ext, _, _) = extents(t);
            // The cast is needed where MPI_Aint is not `i64`.
            #[allow(clippy::unnecessary_cast)]
            Some((p, ext as i64))
        };
        let count = |x: i64| u64::try_from(x).ok();
        match k {
            // Neither changes the type map.
            Kind::Dup | Kind::Resized => Some(base(0)?.0),
            Kind::Contiguous => {
                let (p, ext) = base(0)?;
                p.repeat(count(*v.first()?)?, ext)
            }
            Kind::Vector | Kind::Hvector => {
                let (n, bl, stride) = (*v.first()?, *v.get(1)?, *v.get(2)?);
                let (p, ext) = base(0)?;
                let stride = if k == Kind::Vector {
                    stride.checked_mul(ext)?
                } else {
                    stride
                };
                p.repeat(count(bl)?, ext)?.repeat(count(n)?, stride)
            }
            Kind::Struct => {
                // One block: BigMPI's large messages, a shifted base.
                if *v.first()? != 1 {
                    return None;
                }
                let (bl, disp) = (*v.get(1)?, *v.get(2)?);
                let (p, ext) = base(0)?;
                p.repeat(count(bl)?, ext)?.shift(disp)
            }
            Kind::Subarray => subarray(v, env.nc, base(0)?),
            Kind::Named | Kind::Other => None,
        }
    })();
    c.types.into_iter().for_each(free_if_derived);
    r
}

/// A subarray (classic constructor: ndims, sizes, subsizes, starts,
/// order): one loop per dimension, the fastest-varying innermost.
fn subarray(v: &[i64], nc: usize, (p, ext): (Plan, i64)) -> Option<Plan> {
    // The large-count constructor's arguments are split between integers
    // and counts, which `contents` does not merge: not followed.
    if nc != 0 {
        return None;
    }
    let nd = usize::try_from(*v.first()?).ok()?;
    if nd == 0 || v.len() != 3 * nd + 2 {
        return None;
    }
    let (sizes, subs, starts) = (
        &v[1..1 + nd],
        &v[1 + nd..1 + 2 * nd],
        &v[1 + 2 * nd..1 + 3 * nd],
    );
    // The cast: the constant's type differs between MPIs' bindings.
    #[allow(clippy::unnecessary_cast)]
    let c_order = v[1 + 3 * nd] == ffi::MPI_ORDER_C as i64;
    // Dimensions from the fastest-varying out.
    let order: Vec<usize> = if c_order {
        (0..nd).rev().collect()
    } else {
        (0..nd).collect()
    };
    let (mut plan, mut stride, mut shift) = (p, ext, 0i64);
    for d in order {
        let n = u64::try_from(subs[d]).ok()?;
        plan = plan.repeat(n, stride)?;
        shift = shift.checked_add(starts[d].checked_mul(stride)?)?;
        stride = stride.checked_mul(sizes[d])?;
    }
    plan.shift(shift)
}

/// A position in a plan's blocks, over the buffer at `base`.
struct Cursor {
    p: Plan,
    /// Loop indices.
    idx: [u64; MAX_DIMS],
    /// Address of the current block.
    blk: usize,
    /// Bytes of the current block already passed.
    at: usize,
    base: usize,
}

impl Cursor {
    fn new(base: usize, p: Plan) -> Cursor {
        Cursor {
            p,
            idx: [0; MAX_DIMS],
            blk: base.wrapping_add(p.off as usize),
            at: 0,
            base,
        }
    }

    /// Bytes left in the current block.
    #[inline]
    fn left(&self) -> usize {
        self.p.block as usize - self.at
    }

    /// Blocks left in the innermost loop (the current one included) and
    /// their stride.
    #[inline]
    fn inner(&self) -> (usize, isize) {
        match self.p.nd as usize {
            0 => (1, 0),
            nd => {
                let (n, s) = self.p.dims[nd - 1];
                ((n - self.idx[nd - 1]) as usize, s as isize)
            }
        }
    }

    /// Moves to the start of the `k`-th next block (`k` at most
    /// [`Cursor::inner`]'s count).
    fn next_blocks(&mut self, k: usize) {
        self.at = 0;
        let nd = self.p.nd as usize;
        if nd == 0 {
            return;
        }
        self.idx[nd - 1] += k as u64;
        for d in (1..nd).rev() {
            if self.idx[d] < self.p.dims[d].0 {
                break;
            }
            self.idx[d] = 0;
            self.idx[d - 1] += 1;
        }
        let mut a = self.base.wrapping_add(self.p.off as usize);
        for d in 0..nd {
            a = a.wrapping_add((self.idx[d] as i64).wrapping_mul(self.p.dims[d].1) as usize);
        }
        self.blk = a;
    }

    /// Passes `c` bytes of the current block (at most [`Cursor::left`]).
    #[inline]
    fn pass(&mut self, c: usize) {
        self.at += c;
        if self.at == self.p.block as usize {
            self.next_blocks(1);
        }
    }

    /// The current address.
    #[inline]
    fn here(&self) -> usize {
        self.blk + self.at
    }

    /// How many `b`-byte pieces this side can take from here in one
    /// strided run, and their stride: whole blocks along the innermost
    /// loop when at a block start and blocks are `b` bytes, else pieces
    /// of the current block.
    #[inline]
    fn run_of(&self, b: usize) -> (usize, isize, bool) {
        if self.at == 0 && self.p.block as usize == b {
            let (k, s) = self.inner();
            (k, s, true)
        } else {
            (self.left() / b, b as isize, false)
        }
    }

    /// Passes `k` pieces taken as [`Cursor::run_of`] said.
    #[inline]
    fn take(&mut self, k: usize, b: usize, whole_blocks: bool) {
        if whole_blocks {
            self.next_blocks(k);
        } else {
            self.pass(k * b);
        }
    }
}

/// Copies the first `n` bytes of the layout `sp` over `src` into the
/// layout `dp` over `dst`, in packed order.
///
/// # Safety
/// Both plans hold at least `n` bytes; their blocks lie in readable
/// (`src`) and writable (`dst`) memory that does not overlap.
pub unsafe fn copy(src: *const u8, sp: &Plan, dst: *mut u8, dp: &Plan, n: usize) {
    let mut s = Cursor::new(src as usize, *sp);
    let mut d = Cursor::new(dst as usize, *dp);
    let mut left = n;
    while left > 0 {
        // Runs of equal pieces: a side's whole blocks against the other's
        // blocks of the same size, or against a piece of a larger block.
        let b = if s.at == 0 && (s.p.block as usize) <= left {
            s.p.block as usize
        } else if d.at == 0 && (d.p.block as usize) <= left {
            d.p.block as usize
        } else {
            0
        };
        if b > 0 {
            let (ks, ss, sw) = s.run_of(b);
            let (kd, ds, dw) = d.run_of(b);
            let k = ks.min(kd).min(left / b);
            if k > 0 {
                // SAFETY: `k` pieces of `b` bytes along each side's stride
                // are within its plan's first `n` bytes (the contract).
                unsafe { strided(s.here(), ss, d.here(), ds, b, k) };
                s.take(k, b, sw);
                d.take(k, b, dw);
                left -= k * b;
                continue;
            }
        }
        let c = s.left().min(d.left()).min(left);
        // SAFETY: `c` bytes within the current block of each side.
        unsafe { super::bytes::copy_disjoint(s.here() as *const u8, d.here() as *mut u8, c) };
        s.pass(c);
        d.pass(c);
        left -= c;
    }
}

/// Copies `k` pieces of `b` bytes, `ss` apart from `s` to `ds` apart at
/// `d`.
///
/// # Safety
/// As [`copy`], for the pieces.
#[inline]
unsafe fn strided(s: usize, ss: isize, d: usize, ds: isize, b: usize, k: usize) {
    if ss == b as isize && ds == b as isize {
        // SAFETY: one run on each side.
        unsafe { super::bytes::copy_disjoint(s as *const u8, d as *mut u8, k * b) };
        return;
    }
    let at =
        |base: usize, stride: isize, i: usize| base.wrapping_add((i as isize * stride) as usize);
    // SAFETY (each arm): piece `i` is `b` readable bytes at `at(s, ss, i)`
    // and `b` writable ones at `at(d, ds, i)`; unaligned accesses.
    match b {
        8 => (0..k).for_each(|i| unsafe {
            let v = (at(s, ss, i) as *const u64).read_unaligned();
            (at(d, ds, i) as *mut u64).write_unaligned(v)
        }),
        4 => (0..k).for_each(|i| unsafe {
            let v = (at(s, ss, i) as *const u32).read_unaligned();
            (at(d, ds, i) as *mut u32).write_unaligned(v)
        }),
        16 => (0..k).for_each(|i| unsafe {
            let v = (at(s, ss, i) as *const u128).read_unaligned();
            (at(d, ds, i) as *mut u128).write_unaligned(v)
        }),
        _ => (0..k).for_each(|i| unsafe {
            super::bytes::copy_disjoint(at(s, ss, i) as *const u8, at(d, ds, i) as *mut u8, b)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte offsets a plan's packed bytes come from, in order.
    fn offsets(p: &Plan) -> Vec<i64> {
        let mut out = Vec::new();
        let nd = p.nd as usize;
        let mut idx = vec![0u64; nd];
        loop {
            let a = p.off
                + idx
                    .iter()
                    .zip(&p.dims)
                    .map(|(&i, &(_, s))| i as i64 * s)
                    .sum::<i64>();
            out.extend((0..p.block as i64).map(|j| a + j));
            let mut d = nd;
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < p.dims[d].0 {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    fn vector(n: u64, bl: u64, stride: i64, base: Plan, ext: i64) -> Plan {
        base.repeat(bl, ext)
            .unwrap()
            .repeat(n, stride * ext)
            .unwrap()
    }

    #[test]
    fn repeat_merges_what_abuts() {
        let d8 = Plan::dense(8).unwrap();
        // contiguous(4, double): one block.
        assert_eq!(d8.repeat(4, 8).unwrap(), Plan::dense(32).unwrap());
        // vector(3, 2, 2): blocks of 2 doubles, 32 bytes apart.
        let v = vector(3, 2, 4, d8, 8);
        assert_eq!((v.block, v.nd, v.dims[0]), (16, 1, (3, 32)));
        // vector(3, 2, 2) with stride == blocklength: dense.
        assert_eq!(vector(3, 2, 2, d8, 8), Plan::dense(48).unwrap());
        // Two elements of extent 96 after a vector of 3 x 32: one loop of 6.
        let two = v.repeat(2, 96).unwrap();
        assert_eq!((two.nd, two.dims[0]), (1, (6, 32)));
        // Five levels that do not merge: too deep.
        let mut p = d8;
        for i in 0..MAX_DIMS as i64 {
            p = p.repeat(2, 10i64.pow(i as u32 + 2)).unwrap();
        }
        assert_eq!(p.nd, MAX_DIMS as u64);
        assert!(p.repeat(2, 7).is_none());
        assert!(d8.repeat(0, 8).is_none());
    }

    #[test]
    fn span_covers_negative_strides() {
        let p = Plan::dense(4)
            .unwrap()
            .repeat(3, -16)
            .unwrap()
            .shift(40)
            .unwrap();
        assert_eq!(offsets(&p)[..5], [40, 41, 42, 43, 24]);
        assert_eq!(p.span(), (8, 44));
    }

    /// Copies `n` bytes between two plans over distinct buffers and checks
    /// every byte against the reference of their offsets.
    fn check(sp: Plan, dp: Plan, n: usize) {
        let (so, dof) = (offsets(&sp), offsets(&dp));
        assert!(so.len() >= n && dof.len() >= n);
        let span = |o: &[i64]| (*o.iter().min().unwrap(), *o.iter().max().unwrap());
        let (slo, shi) = span(&so);
        let (dlo, dhi) = span(&dof);
        let src: Vec<u8> = (0..(shi - slo + 1)).map(|i| (i * 7 % 251) as u8).collect();
        let mut dst = vec![0u8; (dhi - dlo + 1) as usize];
        let mut want = dst.clone();
        for i in 0..n {
            want[(dof[i] - dlo) as usize] = src[(so[i] - slo) as usize];
        }
        // SAFETY: buffers shifted so every offset of both plans is inside.
        unsafe {
            copy(
                src.as_ptr().wrapping_offset(-slo as isize),
                &sp,
                dst.as_mut_ptr().wrapping_offset(-dlo as isize),
                &dp,
                n,
            )
        };
        assert_eq!(dst, want, "{sp:?} -> {dp:?}, {n} bytes");
    }

    #[test]
    fn copy_matches_the_packed_order() {
        let d8 = Plan::dense(8).unwrap();
        let d4 = Plan::dense(4).unwrap();
        let plans = [
            vector(100, 1, 2, d8, 8),                          // 8-byte blocks
            vector(50, 2, 3, d8, 8),                           // 16-byte blocks
            vector(200, 1, 3, d4, 4),                          // 4-byte blocks
            vector(40, 5, 7, Plan::dense(1).unwrap(), 1),      // 5-byte blocks
            vector(10, 1, 2, vector(10, 1, 3, d8, 8), 240),    // 2 loops
            Plan::dense(4).unwrap().repeat(200, -12).unwrap(), // negative stride
            Plan::dense(800).unwrap(),                         // dense
            vector(4, 1, 2, vector(5, 2, 4, d4, 4), 160)
                .shift(12)
                .unwrap(), // nested, shifted
        ];
        for sp in &plans {
            for dp in &plans {
                let n = sp.bytes().min(dp.bytes()) as usize;
                for m in [n, n - 1, n / 2 + 3, 1, 13] {
                    check(*sp, *dp, m.min(n));
                }
            }
        }
    }
}

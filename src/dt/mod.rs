//! Datatypes: which buffers are one contiguous run of bytes, and packing the
//! others.
//!
//! A message travels in the MPI library's native packed representation
//! (`MPI_Pack`), which on one node is the raw bytes of the basic elements in
//! type-map order. A predefined datatype whose size equals its extent (no
//! holes, as with `MPI_INT` but not `MPI_DOUBLE_INT`), a contiguous type or
//! a duplicate of one, and a large derived type whose blocks abut in order
//! ([`run`]) are
//! copied with `memcpy`; everything else is packed by the sender and
//! unpacked by the receiver with the real MPI's `PMPI_Pack`/`PMPI_Unpack`
//! ([`pack`]), which handle every derived type, `MPI_BOTTOM` with absolute
//! addresses included, 2 GiB and more in pieces.

use core::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

use mpi_sys as ffi;

use crate::raw::RawHandle;

pub mod bytes;
mod pack;
pub mod plan;
mod run;

pub use bytes::{copy_disjoint, copy_small};
pub use pack::{pack, unpack_prefix};

/// What a send or receive needs to know about its datatype.
#[derive(Clone, Copy, Debug)]
pub struct Dt {
    /// The elements are one dense run starting at the buffer address.
    pub contig: bool,
    /// Bytes of data per element (`MPI_Type_size`).
    pub size: usize,
    /// A predefined datatype (never freed, so never held by a request).
    pub named: bool,
}

/// `MPI_COMBINER_NAMED` of the MPI in use (learned at init; MPICH and Open
/// MPI give it different values). Written once at init, before any
/// communication: Relaxed is enough (MPI_Init synchronises).
static NAMED: AtomicI32 = AtomicI32::new(i32::MIN);

/// `MPI_COMBINER_CONTIGUOUS` of the MPI in use (learned at init, as
/// [`NAMED`]).
static CONTIGUOUS: AtomicI32 = AtomicI32::new(i32::MIN);

/// A private duplicate of `MPI_COMM_SELF` with `MPI_ERRORS_RETURN`, for
/// probing datatypes without raising errors on the program's handlers.
/// Set once at init (before any communication).
static CHECK_COMM: std::sync::OnceLock<crate::raw::Comm> = std::sync::OnceLock::new();

/// The private duplicate of `MPI_COMM_SELF` whose errors return (made at
/// init), for local work that must not raise on the program's handlers.
pub fn check_comm() -> Option<ffi::MPI_Comm> {
    CHECK_COMM.get().map(|c| c.0)
}

/// Learns the MPI's value of `MPI_COMBINER_NAMED` and makes the checking
/// communicator.
pub fn init() {
    // SAFETY: reading an MPI constant.
    let mut c = unsafe { ffi::RSMPI_COMM_NULL };
    // SAFETY: MPI is initialised; valid out-pointer; the handle is kept for
    // the life of the process.
    unsafe {
        if ffi::PMPI_Comm_dup(ffi::RSMPI_COMM_SELF, &mut c) == 0 {
            ffi::PMPI_Comm_set_errhandler(c, ffi::RSMPI_ERRORS_RETURN);
            let _ = CHECK_COMM.set(crate::raw::Comm(c));
        }
    }
    let (mut ni, mut na, mut nd, mut comb) = (0, 0, 0, 0);
    // SAFETY: a predefined datatype, valid out-pointers.
    if unsafe {
        ffi::PMPI_Type_get_envelope(ffi::RSMPI_INT32_T, &mut ni, &mut na, &mut nd, &mut comb)
    } == 0
    {
        NAMED.store(comb, Ordering::Relaxed);
    }
    // SAFETY: reading an MPI constant.
    let mut t = unsafe { ffi::RSMPI_DATATYPE_NULL };
    // SAFETY: a predefined base, valid out-pointers; the type is freed.
    unsafe {
        if ffi::PMPI_Type_contiguous(2, ffi::RSMPI_INT32_T, &mut t) == 0 {
            if ffi::PMPI_Type_get_envelope(t, &mut ni, &mut na, &mut nd, &mut comb) == 0 {
                CONTIGUOUS.store(comb, Ordering::Relaxed);
            }
            ffi::PMPI_Type_free(&mut t);
        }
    }
    run::learn();
}

const CACHE: usize = 8;

/// Recently seen predefined datatypes (handle, size, contiguous), kept by
/// the engine (under its lock). Predefined handles never change meaning, so
/// entries never go stale; derived types are not cached (their handles are
/// reused after free).
pub struct Cache([(usize, u32, bool); CACHE]);

impl Default for Cache {
    fn default() -> Self {
        Cache::new()
    }
}

impl Cache {
    /// An empty cache.
    pub const fn new() -> Cache {
        Cache([(0, 0, false); CACHE])
    }

    /// [`info`], remembered for predefined types.
    #[inline]
    pub fn get(&mut self, dt: ffi::MPI_Datatype) -> Option<Dt> {
        let bits = dt.0.to_bits();
        if let Some(e) = self.0.iter().find(|e| e.0 == bits && bits != 0) {
            return Some(Dt {
                contig: e.2,
                size: e.1 as usize,
                named: true,
            });
        }
        let (d, named) = lookup(dt)?;
        if named {
            self.0.rotate_right(1);
            self.0[0] = (bits, d.size as u32, d.contig);
        }
        Some(d)
    }
}

/// The datatype's [`Dt`], or `None` if it is not a valid datatype (the
/// caller then lets the real MPI report the error).
pub fn info(dt: ffi::MPI_Datatype) -> Option<Dt> {
    lookup(dt).map(|(d, _)| d)
}

/// [`info`], and whether the type is predefined.
fn lookup(dt: ffi::MPI_Datatype) -> Option<(Dt, bool)> {
    // SAFETY: reading an MPI constant.
    if dt == unsafe { ffi::RSMPI_DATATYPE_NULL } {
        return None;
    }
    let mut size: ffi::MPI_Count = 0;
    // SAFETY: an MPI handle and a valid out-pointer; an invalid handle gives
    // an error code (heapmpi then defers to the real call). The `_x` form:
    // a type of 2 GiB or more (MPI_Type_contiguous_c, or a classic
    // constructor over a large one) has a size `MPI_Type_size` cannot give,
    // and heapmpi must still serve it, or the peer's classic receive of the
    // same bytes would wait in heapmpi's queues for a message that went to
    // the real MPI.
    if unsafe { ffi::PMPI_Type_size_x(dt, &mut size) } != 0 || size < 0 {
        return None;
    }
    let env = envelope(dt)?;
    let named = env.comb == NAMED.load(Ordering::Relaxed);
    if !named {
        // A derived type must be committed: packing zero elements fails
        // otherwise (both MPIs), and heapmpi then leaves the call to the
        // real MPI, which reports it. Without the checking communicator the
        // type is not used here at all.
        let comm = CHECK_COMM.get()?.0;
        let (mut out, mut pos) = (0u8, 0 as c_int);
        // SAFETY: zero elements are read; one byte of room; a valid
        // communicator whose errors return.
        let inb = &out as *const u8;
        if unsafe {
            ffi::PMPI_Pack(
                inb.cast(),
                0,
                dt,
                (&mut out as *mut u8).cast(),
                1,
                &mut pos,
                comm,
            )
        } != 0
        {
            return None;
        }
    }
    // Dense: a predefined type without holes, a contiguous type of such a
    // type (the large counts of the `_c` routines come as those), or a
    // duplicate of either (`MPI_Type_dup`: the MPICH suite's nonblocking
    // collectives receive into one; a receive type that is not dense is
    // unpacked through the MPI, which the progress thread may not call).
    let one_base = env.comb == CONTIGUOUS.load(Ordering::Relaxed) || run::is_dup(env.comb);
    let dense_parts = named
        || (one_base && env.nd == 1 && {
            let types = contents_types(dt, &env).unwrap_or_default();
            let dense = types
                .first()
                .is_some_and(|&b| lookup(b).is_some_and(|(d, _)| d.contig));
            types.into_iter().for_each(free_if_derived);
            dense
        });
    // A large derived element whose blocks abut (see [`run`]): worth the
    // few calls that decode it, and beyond 2 GiB the only way that does
    // not go through `MPI_Pack`'s `int` sizes.
    let dense_parts =
        dense_parts || (size as u64 >= RUN_MIN && run::single_run(dt) == Some((0, size as i64)));
    let mut contig = false;
    if dense_parts {
        let (lb, ext, tlb, text) = extents(dt);
        contig = lb == 0 && tlb == 0 && ext == size as ffi::MPI_Aint && text == ext;
    }
    let d = Dt {
        contig,
        size: size as usize,
        named,
    };
    Some((d, named))
}

/// Elements of a derived datatype from this size are decoded to find
/// whether they are one run of bytes (see [`run`]); smaller ones are
/// packed (decoding costs a few MPI calls per send).
const RUN_MIN: u64 = 64 << 10;

/// (lower bound, extent, true lower bound, true extent) of a valid
/// datatype.
fn extents(dt: ffi::MPI_Datatype) -> (ffi::MPI_Aint, ffi::MPI_Aint, ffi::MPI_Aint, ffi::MPI_Aint) {
    let (mut lb, mut ext, mut tlb, mut text) = (0, 0, 0, 0);
    // SAFETY: a valid datatype and out-pointers.
    unsafe {
        ffi::PMPI_Type_get_extent(dt, &mut lb, &mut ext);
        ffi::PMPI_Type_get_true_extent(dt, &mut tlb, &mut text);
    }
    (lb, ext, tlb, text)
}

/// Bytes `count` elements of `dt` occupy when packed.
pub fn packed_size(count: c_int, dt: &Dt) -> usize {
    count as usize * dt.size
}

/// The layout of `count` elements of a datatype in memory: the span of
/// bytes they touch, relative to the buffer address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Offset of the first byte touched (the true lower bound).
    pub lo: isize,
    /// Bytes from `lo` to one past the last byte touched.
    pub len: usize,
    /// Extent of one element.
    pub extent: usize,
}

/// A datatype's [`Dt`] and its extents: all a collective needs to lay
/// out buffers.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// Size, contiguity, whether predefined.
    pub d: Dt,
    /// True lower bound.
    pub true_lb: isize,
    /// True extent of one element.
    pub true_extent: usize,
    /// Extent of one element.
    pub extent: usize,
}

impl Layout {
    /// The span of `count` elements.
    pub fn span(&self, count: usize) -> Span {
        Span {
            lo: self.true_lb,
            len: if count == 0 {
                0
            } else {
                (count - 1) * self.extent + self.true_extent
            },
            extent: self.extent,
        }
    }
}

/// Entries of the per-thread layout cache.
const LAYOUTS: usize = 8;

thread_local! {
    /// Layouts of recently used predefined datatypes (their handles never
    /// change meaning; derived types are never entered, since their handles
    /// are reused after `MPI_Type_free`), most recent first.
    static RECENT: Recent = const { core::cell::RefCell::new([(0, None); LAYOUTS]) };
}

/// The recent layouts of one thread (see [`RECENT`]).
type Recent = core::cell::RefCell<[(usize, Option<Layout>); LAYOUTS]>;

/// The owner thread's [`RECENT`] (`crate::sys::tls`: no `__tls_get_addr`
/// on the thread that makes the calls).
static OWNER_RECENT: crate::sys::tls::Owned<Recent> =
    crate::sys::tls::Owned::new(core::cell::RefCell::new([(0, None); LAYOUTS]));

/// The layout of `dt`, or `None` if it is not a valid datatype (the
/// caller then lets the real MPI report the error). Cached per thread for
/// predefined types.
#[inline]
pub fn layout(dt: ffi::MPI_Datatype) -> Option<Layout> {
    let bits = dt.0.to_bits();
    if let Some(l) = OWNER_RECENT.with(&RECENT, |r| {
        r.borrow().iter().find(|e| e.0 == bits).and_then(|e| e.1)
    }) {
        return Some(l);
    }
    let (d, named) = lookup(dt)?;
    let (_, ext, tlb, text) = extents(dt);
    let l = Layout {
        d,
        // The cast is needed where MPI_Aint is `long` (MPICH).
        #[allow(clippy::unnecessary_cast)]
        true_lb: tlb as isize,
        true_extent: text.max(0) as usize,
        extent: ext.max(0) as usize,
    };
    if named {
        OWNER_RECENT.with(&RECENT, |r| {
            let mut r = r.borrow_mut();
            r.rotate_right(1);
            r[0] = (bits, Some(l));
        });
    }
    Some(l)
}

/// `count` elements of a datatype at an address: one buffer argument of a
/// collective or one-sided call.
#[derive(Clone, Copy)]
pub struct Buf {
    /// Address.
    pub ptr: *mut u8,
    /// Elements.
    pub count: usize,
    /// Their datatype.
    pub dt: ffi::MPI_Datatype,
    /// Its size and contiguity.
    pub d: Dt,
    /// The datatype's layout.
    pub l: Layout,
}

impl Buf {
    /// The argument, if heapmpi takes it (a valid datatype and count; a
    /// null buffer only when it holds no data, or with a derived type that
    /// may hold absolute addresses).
    #[inline]
    pub fn new(ptr: *const c_void, count: c_int, dt: ffi::MPI_Datatype) -> Option<Buf> {
        if count < 0 {
            return None;
        }
        let l = layout(dt)?;
        if ptr.is_null() && count > 0 && l.d.contig && l.d.size > 0 {
            return None;
        }
        Some(Buf {
            ptr: ptr as *mut u8,
            count: count as usize,
            dt,
            d: l.d,
            l,
        })
    }

    /// Packed bytes.
    #[inline]
    pub fn bytes(&self) -> usize {
        self.count * self.d.size
    }

    /// Piece `i` of a buffer holding consecutive pieces of `count`
    /// elements each.
    pub fn piece(&self, i: usize) -> Buf {
        Buf {
            ptr: self.ptr.wrapping_add(i * self.count * self.l.extent),
            ..*self
        }
    }

    /// The same datatype, `k` times as many elements.
    pub fn times(&self, k: usize) -> Buf {
        Buf {
            count: self.count * k,
            ..*self
        }
    }

    /// Where every member can read the packed bytes in place: a dense
    /// buffer inside the shared heap.
    #[inline]
    pub fn shared(&self) -> Option<*const u8> {
        (self.d.contig && crate::heap::in_region(self.ptr, self.bytes())).then_some(self.ptr)
    }

    /// Writes the packed bytes to `dst`.
    ///
    /// # Safety
    /// The buffer holds its elements; `dst` has room for `bytes()`.
    pub unsafe fn pack_to(&self, dst: *mut u8) {
        let n = self.bytes();
        if n == 0 {
            return;
        }
        if self.d.contig {
            // SAFETY: per the contract; distinct buffers (one is the
            // caller's, the other a cell or a peer's buffer). Collective
            // blocks of a few bytes (a halo's) are copied in registers.
            unsafe { copy_small(self.ptr, dst, n) };
        } else if let Some(c) = check_comm() {
            // SAFETY: per the contract.
            unsafe { pack(self.ptr, self.count as c_int, self.dt, dst, n, c) };
        }
    }

    /// Reads up to `len` packed bytes from `src` into the buffer.
    ///
    /// # Safety
    /// `src` holds `len` bytes; the buffer has room for its elements.
    pub unsafe fn unpack_from(&self, src: *const u8, len: usize) {
        let n = len.min(self.bytes());
        if n == 0 {
            return;
        }
        if self.d.contig {
            // SAFETY: per the contract (as in `pack_to`).
            unsafe { copy_small(src, self.ptr, n) };
        } else if let Some(c) = check_comm() {
            // SAFETY: per the contract.
            unsafe { unpack_prefix(src, n, self.ptr, self.count as c_int, self.dt, &self.d, c) };
        }
    }

    /// Copies this buffer's data into `to` (a member's own piece).
    ///
    /// # Safety
    /// Both buffers hold their elements.
    pub unsafe fn copy_to(&self, to: &Buf) {
        if self.d.contig {
            // SAFETY: per the contract.
            unsafe { to.unpack_from(self.ptr, self.bytes()) };
        } else {
            let mut tmp = vec![0u8; self.bytes()];
            // SAFETY: per the contract; `tmp` has room.
            unsafe {
                self.pack_to(tmp.as_mut_ptr());
                to.unpack_from(tmp.as_ptr(), tmp.len());
            }
        }
    }
}

/// The one predefined datatype `dt` is built from (`dt` itself when it is
/// predefined), or `None`: built from several, or not a valid datatype.
/// One-sided accumulates take only such types (MPI-4.0 §12.3.4).
pub fn base_type(dt: ffi::MPI_Datatype) -> Option<ffi::MPI_Datatype> {
    // SAFETY: reading an MPI constant.
    if dt == unsafe { ffi::RSMPI_DATATYPE_NULL } {
        return None;
    }
    let env = envelope(dt)?;
    if env.comb == NAMED.load(Ordering::Relaxed) {
        return Some(dt);
    }
    let types = contents_types(dt, &env)?;
    let mut base: Option<Option<ffi::MPI_Datatype>> = None;
    for t in types {
        let b = base_type(t);
        base = match base {
            None => Some(b),
            Some(prev) if prev.map(|p| p.0.to_bits()) == b.map(|p| p.0.to_bits()) => Some(prev),
            Some(_) => Some(None),
        };
        free_if_derived(t);
    }
    base.flatten()
}

/// What `MPI_Type_get_envelope` tells of a datatype.
struct Envelope {
    /// The combiner.
    comb: c_int,
    /// Integers, addresses, large counts (MPI-4.0) and datatypes that
    /// describe it.
    ni: usize,
    na: usize,
    nc: usize,
    nd: usize,
}

/// The envelope of a valid datatype, or `None` when the MPI refuses. In an
/// MPI with the large-count routines this is `MPI_Type_get_envelope_c`:
/// the classic call raises an error on a type built with large counts.
fn envelope(dt: ffi::MPI_Datatype) -> Option<Envelope> {
    #[cfg(heapmpi_mpi4)]
    {
        let (mut ni, mut na, mut nc, mut nd, mut comb) = (0, 0, 0, 0, 0);
        // SAFETY: an MPI handle and valid out-pointers; an invalid handle
        // gives an error code.
        let rc = unsafe {
            ffi::PMPI_Type_get_envelope_c(dt, &mut ni, &mut na, &mut nc, &mut nd, &mut comb)
        };
        (rc == 0).then_some(Envelope {
            comb,
            ni: ni.max(0) as usize,
            na: na.max(0) as usize,
            nc: nc.max(0) as usize,
            nd: nd.max(0) as usize,
        })
    }
    #[cfg(not(heapmpi_mpi4))]
    {
        let (mut ni, mut na, mut nd, mut comb) = (0, 0, 0, 0);
        // SAFETY: as above.
        let rc = unsafe { ffi::PMPI_Type_get_envelope(dt, &mut ni, &mut na, &mut nd, &mut comb) };
        (rc == 0).then_some(Envelope {
            comb,
            ni: ni.max(0) as usize,
            na: na.max(0) as usize,
            nc: 0,
            nd: nd.max(0) as usize,
        })
    }
}

/// The datatypes a derived datatype is built from (the caller frees them
/// with [`free_if_derived`]).
fn contents_types(dt: ffi::MPI_Datatype, env: &Envelope) -> Option<Vec<ffi::MPI_Datatype>> {
    contents(dt, env).map(|c| c.types)
}

/// What `MPI_Type_get_contents` tells of a derived datatype.
struct Contents {
    /// The constructor's arguments in its order: the integers then the
    /// addresses, or the large counts of a type built with the
    /// large-count constructors (MPI-4.0 §5.1.13 lists them alike).
    values: Vec<i64>,
    /// The datatypes it is built from (the caller frees them with
    /// [`free_if_derived`]).
    types: Vec<ffi::MPI_Datatype>,
}

/// The contents of a derived datatype whose envelope is `env`.
fn contents(dt: ffi::MPI_Datatype, env: &Envelope) -> Option<Contents> {
    let mut ints = vec![0 as c_int; env.ni];
    let mut addrs = vec![0 as ffi::MPI_Aint; env.na];
    // SAFETY: reading an MPI constant.
    let mut types = vec![unsafe { ffi::RSMPI_DATATYPE_NULL }; env.nd];
    #[cfg_attr(not(heapmpi_mpi4), allow(unused_mut))]
    let mut counts = vec![0 as ffi::MPI_Count; env.nc];
    #[cfg(heapmpi_mpi4)]
    // SAFETY: arrays of the sizes the envelope gave.
    let rc = unsafe {
        ffi::PMPI_Type_get_contents_c(
            dt,
            env.ni as ffi::MPI_Count,
            env.na as ffi::MPI_Count,
            env.nc as ffi::MPI_Count,
            env.nd as ffi::MPI_Count,
            ints.as_mut_ptr(),
            addrs.as_mut_ptr(),
            counts.as_mut_ptr(),
            types.as_mut_ptr(),
        )
    };
    #[cfg(not(heapmpi_mpi4))]
    // SAFETY: arrays of the sizes the envelope gave.
    let rc = unsafe {
        let _ = env.nc;
        ffi::PMPI_Type_get_contents(
            dt,
            env.ni as c_int,
            env.na as c_int,
            env.nd as c_int,
            ints.as_mut_ptr(),
            addrs.as_mut_ptr(),
            types.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return None;
    }
    // The casts are needed where MPI_Aint or MPI_Count is `long`.
    #[allow(clippy::unnecessary_cast)]
    let values = if counts.is_empty() {
        ints.iter()
            .map(|&i| i as i64)
            .chain(addrs.iter().map(|&a| a as i64))
            .collect()
    } else {
        counts.iter().map(|&c| c as i64).collect()
    };
    Some(Contents { values, types })
}

/// Frees a datatype `MPI_Type_get_contents` returned, unless predefined
/// (which must not be freed).
fn free_if_derived(mut t: ffi::MPI_Datatype) {
    if envelope(t).is_some_and(|e| e.comb != NAMED.load(Ordering::Relaxed)) {
        // SAFETY: a derived handle MPI_Type_get_contents returned: ours.
        unsafe { ffi::PMPI_Type_free(&mut t) };
    }
}

/// A large-count argument (`MPI_Count`, the MPI-4.0 `_c` routines) as the
/// `int` count heapmpi's paths take: the count itself when it fits, else
/// one element of a contiguous datatype of `count` elements, freed when
/// this is dropped (an operation still pending then holds its own
/// duplicate, as for any derived type a program frees). So a message sent
/// with `MPI_Send_c` goes through the same matching and ordering as one
/// sent with `MPI_Send`, whatever its count.
#[cfg(heapmpi_mpi4)]
pub struct Narrow {
    /// The count to pass.
    pub count: c_int,
    /// The datatype to pass.
    pub dt: ffi::MPI_Datatype,
    owned: bool,
}

#[cfg(heapmpi_mpi4)]
impl Narrow {
    /// `count` elements of `dt`, or `None` for a negative count or a
    /// datatype the real MPI refuses (the caller makes the real `_c` call,
    /// which raises the error).
    pub fn new(count: ffi::MPI_Count, dt: ffi::MPI_Datatype) -> Option<Narrow> {
        if count < 0 {
            return None;
        }
        if count <= c_int::MAX as ffi::MPI_Count {
            // The classic path checks the datatype as for any call.
            return Some(Narrow {
                count: count as c_int,
                dt,
                owned: false,
            });
        }
        info(dt)?;
        // SAFETY: reading an MPI constant.
        let mut t = unsafe { ffi::RSMPI_DATATYPE_NULL };
        // SAFETY: a valid datatype (checked above), a valid out-pointer.
        let ok = unsafe {
            ffi::PMPI_Type_contiguous_c(count, dt, &mut t) == 0
                && ffi::PMPI_Type_commit(&mut t) == 0
        };
        ok.then_some(Narrow {
            count: 1,
            dt: t,
            owned: true,
        })
    }
}

#[cfg(heapmpi_mpi4)]
impl Drop for Narrow {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: the datatype made in `new`; pending operations hold
            // their own references.
            unsafe { ffi::PMPI_Type_free(&mut self.dt) };
        }
    }
}

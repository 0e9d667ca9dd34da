//! The malloc family over the shared heap, with glibc as the fallback.
//!
//! Until [`setup::activate`] runs (at `MPI_Init`), and whenever the shared heap
//! cannot serve a request, allocations come from glibc. Frees and size
//! queries are routed by address, so a block keeps working whichever side it
//! came from:
//!
//! | address | owner | `free` |
//! |---|---|---|
//! | in this rank's part | this rank's dlmalloc | returned to it |
//! | elsewhere in the region | another rank (or, in a forked child, the parent) | left alone |
//! | outside the region | glibc | `__libc_free` |
//!
//! Each rank allocates only from its own part, so the dlmalloc instance needs
//! no cross-process lock; a process-local mutex serialises the rank's threads.
//!
//! What `fork()` does to the heap is [`fork`]'s.

pub mod arena;
pub mod check;
pub mod fork;
pub mod guard;
pub mod pool;
pub mod region;
pub mod setup;
pub mod state;
pub mod tcache;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::stats;
use crate::sys::glibc;
use pool::Pool;
pub use state::{in_region, is_active, owner, Owner};
use state::{serving, MINE_HI, MINE_LO, OWN_LO, REGION_LO};

/// The alignment every `malloc` result has (that of `max_align_t`).
pub const MIN_ALIGN: usize = 16;

/// This rank's allocator over its part of the region (under
/// `HEAPMPI_CHECK`, over the part's program blocks only: [`guard`]).
static POOL: Mutex<Pool> = Mutex::new(Pool::new());
/// Under `HEAPMPI_CHECK`, the allocator of heapmpi's own blocks
/// ([`alloc_shared`]), over the part's second range, which every local
/// rank may write ([`guard`]); unconfigured otherwise.
static OWN_POOL: Mutex<Pool> = Mutex::new(Pool::new());
/// Whether the "heap full" warning has been printed by this process.
static FULL_WARNED: AtomicBool = AtomicBool::new(false);

fn pool() -> MutexGuard<'static, Pool> {
    // With panic=abort nothing can poison the lock; accept it either way.
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The pool that serves heapmpi's own blocks.
fn own_pool() -> MutexGuard<'static, Pool> {
    if OWN_LO.load(Ordering::Relaxed) == 0 {
        return pool();
    }
    OWN_POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The pool a block of this rank's part belongs to.
fn pool_of(p: *const u8) -> MutexGuard<'static, Pool> {
    let own = OWN_LO.load(Ordering::Relaxed);
    if own != 0 && p as usize >= own {
        return OWN_POOL.lock().unwrap_or_else(|e| e.into_inner());
    }
    pool()
}

/// Records a glibc block that was wanted from the shared heap. Requests
/// glibc cannot serve either (e.g. `malloc(SIZE_MAX)`) were never going to
/// fit and are not counted or warned about.
#[cold]
#[inline(never)]
fn fallback(p: *mut u8, size: usize) -> *mut u8 {
    if !p.is_null() {
        note_fallback();
    }
    count_glibc(p, size)
}

#[cold]
#[inline(never)]
fn note_fallback() {
    stats::FALLBACKS.add(1);
    if !FULL_WARNED.swap(true, Ordering::Relaxed) {
        let (lo, hi) = (
            MINE_LO.load(Ordering::Relaxed),
            MINE_HI.load(Ordering::Relaxed),
        );
        crate::eprint_noalloc!(
            "heapmpi: warning: this rank's shared heap ({}) is full or /dev/shm is out of space; \
             allocations that do not fit now come from private memory (raise HEAPMPI_HEAP_SIZE \
             or the size of /dev/shm)",
            stats::Bytes((hi - lo) as u64)
        );
    }
}

/// Allocates from this rank's part; null if full (or not active).
#[inline]
fn shared_alloc(align: usize, size: usize, zero: bool) -> *mut u8 {
    alloc_from(pool(), align, size, zero)
}

/// Allocates from pool `p`.
#[inline]
fn alloc_from(mut p: MutexGuard<'static, Pool>, align: usize, size: usize, zero: bool) -> *mut u8 {
    let b = if align <= MIN_ALIGN && !zero {
        p.malloc(size)
    } else {
        p.memalign(align, size, zero)
    };
    p.maybe_purge();
    b
}

/// Allocates `size` bytes aligned to `align` from this rank's part of the
/// shared heap only (for message headers and staging buffers, which other
/// ranks must be able to read). Null if the heap is inactive or full; never
/// falls back to glibc and never warns. Free with [`free`].
pub fn alloc_shared(align: usize, size: usize) -> *mut u8 {
    if !is_active() {
        return core::ptr::null_mut();
    }
    let p = if check::on() {
        checked_from(own_pool(), align.max(MIN_ALIGN), size.max(1), false)
    } else {
        shared_alloc(align.max(MIN_ALIGN), size.max(1), false)
    };
    if !p.is_null() {
        count_shared(p, size);
    }
    p
}

/// `HEAPMPI_CHECK`: a block of `n` bytes from the shared heap with a
/// canary after it ([`check`]); null if the heap cannot serve it.
#[cold]
fn checked_shared(align: usize, n: usize, zero: bool) -> *mut u8 {
    checked_from(pool(), align, n, zero)
}

/// As [`checked_shared`], from pool `pl`.
#[cold]
fn checked_from(pl: MutexGuard<'static, Pool>, align: usize, n: usize, zero: bool) -> *mut u8 {
    let Some(req) = check::padded(n) else {
        return core::ptr::null_mut();
    };
    let p = alloc_from(pl, align, req, zero);
    if !p.is_null() {
        // SAFETY: a fresh block of this rank's part, at least `req` bytes.
        unsafe { check::stamp(p, n, arena::usable_size(p)) };
    }
    p
}

/// Who owns the part holding `p` (a block of the region), for
/// `HEAPMPI_CHECK`'s message: this rank, or another local rank.
fn part_owner(p: *const u8) -> String {
    let (lo, mine_lo, mine_hi) = (
        REGION_LO.load(Ordering::Relaxed),
        MINE_LO.load(Ordering::Relaxed),
        MINE_HI.load(Ordering::Relaxed),
    );
    let a = p as usize;
    if a >= mine_lo && a < mine_hi {
        return "this rank".into();
    }
    let part = mine_hi - mine_lo;
    match (a.checked_sub(lo + region::HEADER_SIZE), part) {
        (Some(off), part) if part > 0 => format!("local rank {}", off / part),
        _ => "another rank".into(),
    }
}

/// Checks the canary of a block of the region at `when`; its requested
/// size. Aborts with a message on a hit.
///
/// # Safety
/// `p` is a live block of the region (this rank's or another's).
unsafe fn checked_size(p: *mut u8, when: &str) -> usize {
    // SAFETY: a live dlmalloc block: its header and bytes are readable in
    // the shared mapping.
    unsafe { check::check(p, arena::usable_size(p), when, &part_owner(p)) }
}

/// `HEAPMPI_CHECK`: a block of this rank's heap given to MPI as a
/// contiguous buffer of `bytes` bytes (`when`: "MPI send", ...) has its
/// canary checked, and a send buffer must lie inside the block. Pointers
/// into a block (not its start) pass: only a block's start has a canary.
/// Aborts with one line on a hit; nothing when the check is off.
#[inline]
pub fn check_buffer(p: *const u8, bytes: usize, send: bool, when: &str) {
    if check::on() && bytes > 0 && owner(p) == Owner::Mine {
        check_buffer_slow(p, bytes, send, when);
    }
}

#[cold]
fn check_buffer_slow(p: *const u8, bytes: usize, send: bool, when: &str) {
    let a = p as usize;
    let lo = MINE_LO.load(Ordering::Relaxed);
    let own = OWN_LO.load(Ordering::Relaxed);
    let end = state::COMMITTED_END.load(Ordering::Relaxed);
    if a < lo + 16 || a % MIN_ALIGN != 0 || (own != 0 && a >= own) || a >= end {
        return;
    }
    // Not the start of an in-use chunk that ends inside committed memory:
    // a pointer into a block.
    // SAFETY: `[a - 16, end)` is this rank's committed program pages.
    let Some((head, size)) = (unsafe { guard::chunk_at(a - 16, end) }) else {
        return;
    };
    if head & guard::CINUSE == 0 {
        return;
    }
    // SAFETY: the chunk `[a - 16, a - 16 + size)` is committed, readable.
    match unsafe { check::verify(p, size - 8) } {
        check::Verdict::Intact(n) if send && bytes > n => {
            crate::eprint_noalloc!(
                "heapmpi: HEAPMPI_CHECK (rank {}, at {when}): this rank's {n}-byte block at \
                 {p:p} is the buffer of a {bytes}-byte message: {} bytes past its end would \
                 be sent; aborting",
                check::rank(),
                bytes - n
            );
            std::process::abort();
        }
        check::Verdict::Intact(_) => {}
        _ => {
            // A broken canary, or a pointer into a block whose bytes only
            // look like a chunk header: the walk from the part's first
            // chunk tells which.
            let hi = if own != 0 { own } else { end };
            // SAFETY: `[lo, end)` is committed and readable.
            if let guard::Found::Block(b, _) = unsafe { guard::find(lo, end.min(hi), a) } {
                if b == a {
                    // SAFETY: a live block of this rank's part.
                    unsafe { checked_size(p as *mut u8, when) };
                }
            }
        }
    }
}

#[inline]
fn count_shared(p: *mut u8, size: usize) -> *mut u8 {
    stats::SHARED_ALLOCS.add(1);
    stats::SHARED_BYTES.add(size as u64);
    p
}

#[inline]
fn count_glibc(p: *mut u8, size: usize) -> *mut u8 {
    if !p.is_null() {
        stats::GLIBC_ALLOCS.add(1);
        stats::GLIBC_BYTES.add(size as u64);
    }
    p
}

/// Serves a request from the shared heap if it is active (`shared`), else
/// or on failure from glibc (`glibc`), and counts it on the side it came from.
/// Always inlined: it sits on `malloc`'s fast path, and the closures must
/// dissolve into the caller.
#[inline(always)]
fn shared_or_glibc(
    size: usize,
    shared: impl FnOnce() -> *mut u8,
    glibc: impl FnOnce() -> *mut u8,
) -> *mut u8 {
    if serving() {
        let p = shared();
        if !p.is_null() {
            return count_shared(p, size);
        }
        return fallback(glibc(), size);
    }
    count_glibc(glibc(), size)
}

/// `malloc`.
#[inline]
pub fn malloc(size: usize) -> *mut u8 {
    if check::on() {
        return shared_or_glibc(
            size,
            || checked_shared(MIN_ALIGN, size, false),
            || glibc::malloc(size),
        );
    }
    shared_or_glibc(
        size,
        || {
            if size <= tcache::MAX_REQUEST {
                tcache::pop(size).unwrap_or_else(|| refill(size))
            } else {
                shared_alloc(MIN_ALIGN, size, false)
            }
        },
        || glibc::malloc(size),
    )
}

/// The thread cache had no block for `size`: take [`tcache::REFILL`] blocks
/// of its class under one lock, keep the extras in the cache, return one.
#[inline(never)]
fn refill(size: usize) -> *mut u8 {
    let req = tcache::class_request(size);
    let mut got = [core::ptr::null_mut::<u8>(); tcache::REFILL];
    let mut pl = pool();
    for slot in got.iter_mut() {
        *slot = pl.malloc(req);
        if slot.is_null() {
            break;
        }
    }
    pl.maybe_purge();
    drop(pl);
    // Cache the extras outside the lock: a thread's first push may allocate.
    for &p in got[1..].iter().take_while(|p| !p.is_null()) {
        // SAFETY: fresh blocks of this rank's instance, owned by nobody else.
        unsafe {
            if !tcache::push(p, arena::chunk_size(p)) {
                free_to_pool(p);
            }
        }
    }
    got[0]
}

/// `calloc`.
pub fn calloc(nmemb: usize, size: usize) -> *mut u8 {
    let Some(total) = nmemb.checked_mul(size) else {
        crate::sys::set_errno(libc::ENOMEM);
        return core::ptr::null_mut();
    };
    if check::on() {
        return shared_or_glibc(
            total,
            || checked_shared(MIN_ALIGN, total, true),
            || glibc::calloc(nmemb, size),
        );
    }
    shared_or_glibc(
        total,
        || shared_alloc(MIN_ALIGN, total, true),
        || glibc::calloc(nmemb, size),
    )
}

/// `memalign` with glibc's argument handling: alignments up to 16 give plain
/// `malloc` alignment, others are rounded up to a power of two.
pub fn memalign(align: usize, size: usize) -> *mut u8 {
    if align <= MIN_ALIGN {
        return malloc(size);
    }
    let Some(align) = align
        .checked_next_power_of_two()
        .filter(|&a| a <= isize::MAX as usize / 2 + 1)
    else {
        crate::sys::set_errno(libc::EINVAL);
        return core::ptr::null_mut();
    };
    if check::on() {
        return shared_or_glibc(
            size,
            || checked_shared(align, size, false),
            || glibc::memalign(align, size),
        );
    }
    shared_or_glibc(
        size,
        || shared_alloc(align, size, false),
        || glibc::memalign(align, size),
    )
}

/// `posix_memalign`: EINVAL unless `align` is a power of two multiple of
/// `sizeof(void *)`; ENOMEM if no memory; `*out` untouched on error.
///
/// # Safety
/// `out` must be valid for a pointer write.
pub unsafe fn posix_memalign(out: *mut *mut u8, align: usize, size: usize) -> i32 {
    if align % core::mem::size_of::<usize>() != 0 || !align.is_power_of_two() {
        return libc::EINVAL;
    }
    let saved = crate::sys::errno();
    let p = memalign(align, size);
    if p.is_null() {
        crate::sys::set_errno(saved);
        return libc::ENOMEM;
    }
    // SAFETY: forwarded from the caller.
    unsafe { out.write(p) };
    0
}

/// `valloc`: page-aligned.
pub fn valloc(size: usize) -> *mut u8 {
    if serving() {
        return memalign(crate::sys::page_size(), size);
    }
    count_glibc(glibc::valloc(size), size)
}

/// `pvalloc`: page-aligned, size rounded up to whole pages.
pub fn pvalloc(size: usize) -> *mut u8 {
    if serving() {
        let page = crate::sys::page_size();
        let Some(rounded) = size.checked_add(page - 1).map(|s| s & !(page - 1)) else {
            crate::sys::set_errno(libc::ENOMEM);
            return core::ptr::null_mut();
        };
        return memalign(page, rounded.max(page));
    }
    count_glibc(glibc::pvalloc(size), size)
}

/// `free`.
///
/// # Safety
/// `p` is null or a live block from this allocator (either side).
#[inline]
pub unsafe fn free(p: *mut u8) {
    if check::on() {
        // SAFETY: forwarded from the caller.
        return unsafe { free_checked(p) };
    }
    match owner(p) {
        Owner::Mine => {
            stats::SHARED_FREES.add(1);
            // SAFETY: `p` is a live block of this rank's instance, given up
            // by the caller: either cached or returned to dlmalloc.
            unsafe {
                let chunk = arena::chunk_size(p);
                if !tcache::push(p, chunk) {
                    free_with_bin(p, chunk);
                }
            }
        }
        Owner::Foreign => stats::FOREIGN_FREES.add(1),
        Owner::Glibc => {
            if !p.is_null() {
                stats::GLIBC_FREES.add(1);
                // SAFETY: outside the region, so a glibc block by the contract.
                unsafe { glibc::free(p) };
            }
        }
    }
}

/// `HEAPMPI_CHECK`'s `free`: the canary of a block of the region is
/// checked (another rank's too, before it is left alone); this rank's
/// blocks go straight back to the pool (the thread cache is bypassed:
/// [`checked_shared`] never takes from it).
///
/// # Safety
/// As [`free`].
#[cold]
unsafe fn free_checked(p: *mut u8) {
    match owner(p) {
        Owner::Mine => {
            stats::SHARED_FREES.add(1);
            // SAFETY: a live block of this rank's part, given up by the
            // caller; checked, then returned once.
            unsafe {
                checked_size(p, "free");
                free_to_pool(p);
            }
        }
        Owner::Foreign => {
            stats::FOREIGN_FREES.add(1);
            // SAFETY: a live block of another rank's part.
            unsafe { checked_size(p, "free") };
        }
        Owner::Glibc => {
            if !p.is_null() {
                stats::GLIBC_FREES.add(1);
                // SAFETY: outside the region, so a glibc block by the contract.
                unsafe { glibc::free(p) };
            }
        }
    }
}

/// Frees `p` and, if its cache bin is full, the whole bin, under one lock.
///
/// # Safety
/// `p` is a live block of this rank's instance with chunk size `chunk`.
#[inline(never)]
unsafe fn free_with_bin(p: *mut u8, chunk: usize) {
    let mut list = tcache::take_bin(chunk);
    let mut pl = pool();
    // SAFETY: `p` and every block on the cached list are live blocks of
    // this rank's pool that nobody else refers to; each is freed once.
    unsafe {
        pl.free(p);
        while !list.is_null() {
            let next = list.cast::<*mut u8>().read();
            pl.free(list);
            list = next;
        }
    }
    pl.maybe_purge();
}

/// Returns a block to this rank's pool.
///
/// # Safety
/// `p` is a live block of this rank's pool.
unsafe fn free_to_pool(p: *mut u8) {
    let mut pl = pool_of(p);
    // SAFETY: forwarded from the caller.
    unsafe { pl.free(p) };
    pl.maybe_purge();
}

/// `malloc_usable_size`.
///
/// # Safety
/// `p` is null or a live block from this allocator (either side).
pub unsafe fn usable_size(p: *mut u8) -> usize {
    if p.is_null() {
        return 0;
    }
    match owner(p) {
        // SAFETY: a live block of the region: what was asked for, as the
        // rest holds the canary.
        Owner::Mine | Owner::Foreign if check::on() => unsafe {
            checked_size(p, "malloc_usable_size")
        },
        // SAFETY: a live dlmalloc block (this rank's or another's; the header
        // word is readable in the shared mapping either way).
        Owner::Mine | Owner::Foreign => unsafe { arena::usable_size(p) },
        // SAFETY: a live glibc block.
        Owner::Glibc => unsafe { glibc::usable_size(p) },
    }
}

/// Copies the old block's contents into a fresh block from `malloc(size)`;
/// the old block is not freed. Null (and errno ENOMEM) if no memory.
///
/// # Safety
/// `p` is a live block whose usable size is `old_usable`.
unsafe fn move_to_new(p: *mut u8, old_usable: usize, size: usize) -> *mut u8 {
    let q = malloc(size);
    if !q.is_null() {
        // SAFETY: both blocks are live, distinct, and at least min(...) long.
        unsafe { core::ptr::copy_nonoverlapping(p, q, old_usable.min(size)) };
    }
    q
}

/// `realloc` (glibc semantics: `realloc(NULL, n)` is `malloc(n)`,
/// `realloc(p, 0)` frees `p` and returns NULL; on failure `p` stays valid).
///
/// Blocks move between glibc and the shared heap as needed: a glibc block
/// reallocated while the heap is active moves into it; a shared block that
/// cannot grow because the part is full moves to glibc; a foreign block (in a
/// forked child) is copied to new memory and left in place.
///
/// # Safety
/// `p` is null or a live block from this allocator (either side).
pub unsafe fn realloc(p: *mut u8, size: usize) -> *mut u8 {
    if p.is_null() {
        return malloc(size);
    }
    if size == 0 {
        // SAFETY: forwarded from the caller.
        unsafe { free(p) };
        return core::ptr::null_mut();
    }
    if check::on() {
        // SAFETY: forwarded from the caller.
        return unsafe { realloc_checked(p, size) };
    }
    match owner(p) {
        Owner::Mine => {
            // SAFETY: `p` is a live block of this rank's instance.
            let q = unsafe { pool().realloc(p, size) };
            if !q.is_null() {
                return count_shared(q, size);
            }
            // SAFETY: `p` is live and owned by this rank.
            let old = unsafe { arena::usable_size(p) };
            // SAFETY: `p` is live with `old` bytes; the new block is fresh.
            unsafe { move_into(p, old, fallback(glibc::malloc(size), size), size) }
        }
        Owner::Glibc => {
            if serving() {
                let q = shared_alloc(MIN_ALIGN, size, false);
                if !q.is_null() {
                    count_shared(q, size);
                    stats::MIGRATIONS.add(1);
                    stats::GLIBC_FREES.add(1);
                    // SAFETY: `p` is a live glibc block; copy then free it once.
                    unsafe {
                        let old = glibc::usable_size(p);
                        core::ptr::copy_nonoverlapping(p, q, old.min(size));
                        glibc::free(p);
                    }
                    return q;
                }
                // SAFETY: a live glibc block.
                return fallback(unsafe { glibc::realloc(p, size) }, size);
            }
            // SAFETY: a live glibc block.
            count_glibc(unsafe { glibc::realloc(p, size) }, size)
        }
        Owner::Foreign => {
            // SAFETY: a live dlmalloc block; its header is readable.
            let old = unsafe { arena::usable_size(p) };
            // SAFETY: `p` is live with `old` usable bytes.
            unsafe { move_to_new(p, old, size) }
        }
    }
}

/// `HEAPMPI_CHECK`'s `realloc` (`p` not null, `size` not 0): the old
/// block's canary is checked, and the contents always move to a new block
/// (with its own canary); a debugging mode need not grow in place.
///
/// # Safety
/// As [`realloc`].
#[cold]
unsafe fn realloc_checked(p: *mut u8, size: usize) -> *mut u8 {
    let old = match owner(p) {
        // SAFETY: a live block of the region.
        Owner::Mine | Owner::Foreign => unsafe { checked_size(p, "realloc") },
        // SAFETY: a live glibc block.
        Owner::Glibc => unsafe { glibc::usable_size(p) },
    };
    // SAFETY: `p` is live with `old` bytes; the new block is fresh.
    unsafe { move_into(p, old, malloc(size), size) }
}

/// A `realloc` that moves: the first `min(old, size)` bytes of `p` go to
/// the fresh block `q`, then `p` is freed (a foreign block is left alone by
/// `free`). Null with errno ENOMEM if `q` is null, `p` untouched.
///
/// # Safety
/// `p` is a live block with at least `old` readable bytes; `q` is null or
/// a fresh block of at least `size` bytes.
unsafe fn move_into(p: *mut u8, old: usize, q: *mut u8, size: usize) -> *mut u8 {
    if q.is_null() {
        crate::sys::set_errno(libc::ENOMEM);
        return q;
    }
    stats::MIGRATIONS.add(1);
    // SAFETY: both live and distinct (`q` is fresh); then `p` is given up
    // exactly once.
    unsafe {
        core::ptr::copy_nonoverlapping(p, q, old.min(size));
        free(p);
    }
    q
}

/// `reallocarray`: `realloc(p, nmemb * size)` with an overflow check.
///
/// # Safety
/// As [`realloc`].
pub unsafe fn reallocarray(p: *mut u8, nmemb: usize, size: usize) -> *mut u8 {
    match nmemb.checked_mul(size) {
        // SAFETY: forwarded from the caller.
        Some(total) => unsafe { realloc(p, total) },
        None => {
            crate::sys::set_errno(libc::ENOMEM);
            core::ptr::null_mut()
        }
    }
}

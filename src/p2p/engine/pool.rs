//! Recycled message headers: one free list per size class, per process.
//! Headers for other ranks come from the shared heap; private copies of
//! unexpected fast-box messages from this process's own memory.

use super::*;

/// Inline headers held before they are returned in one batch.
pub(super) const HOLD_MAX: usize = 32;

/// Header pool classes: 128 B << class.
pub(super) const CLASSES: usize = 11;
/// Keep at most this many bytes of free headers per class.
pub(super) const POOL_KEEP: usize = 1 << 20;

/// This process's recycled headers.
pub(super) struct Pool {
    /// Free headers per class (128 B << class).
    pub(super) free: [Vec<*mut Msg>; CLASSES],
    /// Headers handed out and not yet put back.
    pub(super) live: u64,
    /// Headers for other ranks (shared heap only); else private copies,
    /// which may come from private memory when the shared heap is full.
    pub(super) shared: bool,
}

fn class_for(total: usize) -> Option<usize> {
    (0..CLASSES).find(|&c| (128usize << c) >= total)
}

impl Pool {
    pub(super) fn get(&mut self, total: usize) -> *mut Msg {
        let Some(c) = class_for(total) else {
            return core::ptr::null_mut();
        };
        let m = match self.free[c].pop() {
            Some(m) => m,
            None if self.shared => heap::alloc_shared(64, 128 << c) as *mut Msg,
            None => heap::memalign(64, 128 << c) as *mut Msg,
        };
        if !m.is_null() {
            self.live += 1;
            // SAFETY: a header of this process, not in any queue.
            unsafe { (*m).class = c as u16 };
        }
        m
    }

    pub(super) fn put(&mut self, m: *mut Msg) {
        self.live -= 1;
        // SAFETY: a header of this process, back from its receiver.
        let c = unsafe { (*m).class } as usize;
        if self.free[c].len() * (128 << c) < POOL_KEEP {
            self.free[c].push(m);
        } else {
            // SAFETY: allocated by `heap::alloc_shared` or `heap::memalign`,
            // no longer used.
            unsafe { heap::free(m as *mut u8) };
        }
    }
}

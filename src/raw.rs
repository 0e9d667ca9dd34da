//! The raw value inside the MPI binding's handle newtypes (a pointer for
//! Open MPI, an `int` for MPICH), for code that keys or encodes handles:
//! communicator locality (`comm`), point-to-point's own handles (`p2p`);
//! [`Comm`], a communicator handle that may be kept in a static; and
//! [`HandleCache`], the per-thread cache of handle bits to heapmpi's state
//! that the collectives and one-sided calls keep.

use core::ffi::c_int;

/// The raw value inside an MPI handle newtype: a pointer or an `int`.
pub trait RawHandle: Copy {
    /// The value as a machine word.
    fn to_bits(self) -> usize;
    /// Rebuilds the value from a machine word.
    fn from_bits(bits: usize) -> Self;
    /// True for pointer handles (Open MPI).
    const IS_PTR: bool;
}

impl<T> RawHandle for *mut T {
    fn to_bits(self) -> usize {
        self as usize
    }
    fn from_bits(bits: usize) -> Self {
        bits as *mut T
    }
    const IS_PTR: bool = true;
}

impl RawHandle for c_int {
    fn to_bits(self) -> usize {
        self as u32 as usize
    }
    fn from_bits(bits: usize) -> Self {
        bits as u32 as c_int
    }
    const IS_PTR: bool = false;
}

/// An MPI communicator handle kept in a static or shared state. Open MPI's
/// handles are pointers, hence not `Send`/`Sync` by themselves.
#[derive(Clone, Copy)]
pub struct Comm(pub mpi_sys::MPI_Comm);

// SAFETY: an MPI handle is a process-wide identifier; MPI defines which
// threads may use it, and heapmpi uses each one as MPI allows (the
// communicators it makes for itself only inside calls on the communicator
// they serve).
unsafe impl Send for Comm {}
// SAFETY: as above.
unsafe impl Sync for Comm {}

/// A small per-thread cache of handle bits to the address of heapmpi's
/// state for the handle (a communicator's info, a window), most recent
/// first, emptied whenever its owner's generation counter moved (some
/// state was freed, and a handle may be reused). Kept in a
/// `thread_local!` `RefCell` by its owner.
pub struct HandleCache<const N: usize> {
    gen: u64,
    entries: [(usize, usize); N],
}

impl<const N: usize> HandleCache<N> {
    /// An empty cache.
    pub const fn new() -> Self {
        HandleCache {
            gen: 0,
            entries: [(0, 0); N],
        }
    }

    /// The address cached for `bits` in generation `gen`.
    #[inline]
    pub fn get(&self, gen: u64, bits: usize) -> Option<usize> {
        if self.gen != gen {
            return None;
        }
        self.entries
            .iter()
            .find(|e| e.0 == bits && e.1 != 0)
            .map(|e| e.1)
    }

    /// Caches `addr` for `bits` in generation `gen`.
    pub fn put(&mut self, gen: u64, bits: usize, addr: usize) {
        if self.gen != gen {
            *self = HandleCache::new();
            self.gen = gen;
        }
        self.entries.rotate_right(1);
        self.entries[0] = (bits, addr);
    }
}

impl<const N: usize> Default for HandleCache<N> {
    fn default() -> Self {
        HandleCache::new()
    }
}

#[cfg(test)]
mod tests {
    use super::HandleCache;

    /// Entries are found in their generation only, the oldest falls out,
    /// and a new generation starts empty.
    #[test]
    fn handle_cache_keeps_recent_entries_of_one_generation() {
        let mut c = HandleCache::<2>::new();
        assert_eq!(c.get(0, 7), None);
        c.put(1, 7, 70);
        c.put(1, 8, 80);
        assert_eq!((c.get(1, 7), c.get(1, 8)), (Some(70), Some(80)));
        c.put(1, 9, 90);
        assert_eq!((c.get(1, 7), c.get(1, 9)), (None, Some(90)));
        assert_eq!(
            c.get(2, 9),
            None,
            "a freed handle's state must not be found"
        );
        c.put(2, 5, 50);
        assert_eq!((c.get(2, 5), c.get(2, 8)), (Some(50), None));
    }
}

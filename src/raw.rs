//! The raw value inside the MPI binding's handle newtypes (a pointer for
//! Open MPI, an `int` for MPICH), for code that keys or encodes handles:
//! communicator locality (`comm`), point-to-point's own handles (`p2p`);
//! and [`Comm`], a communicator handle that may be kept in a static.

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

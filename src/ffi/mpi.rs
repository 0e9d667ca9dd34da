//! The MPI entry points heapmpi defines (see [`crate::mpi`] for the logic).

use core::ffi::{c_char, c_int};

c_exports! {
    /// `MPI_Init`.
    fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
        // SAFETY: the arguments are MPI_Init's, forwarded unchanged.
        unsafe { crate::mpi::init(argc, argv) }
    }
    /// `MPI_Init_thread`.
    fn MPI_Init_thread(argc: *mut c_int, argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) -> c_int {
        // SAFETY: the arguments are MPI_Init_thread's, forwarded unchanged.
        unsafe { crate::mpi::init_thread(argc, argv, required, provided) }
    }
    /// `MPI_Finalize`.
    fn MPI_Finalize() -> c_int {
        // SAFETY: called where the program calls MPI_Finalize.
        unsafe { crate::mpi::finalize() }
    }
}

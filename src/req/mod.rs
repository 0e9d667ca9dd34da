//! heapmpi's own requests: what every layer that completes operations
//! itself (point-to-point today; one-sided `MPI_Rput`/`MPI_Rget` and
//! nonblocking collectives next) shares.
//!
//! - [`handle`]: `MPI_Request` and `MPI_Message` handles that the real MPI
//!   can never issue, their Fortran integers, and `c2f`/`f2c`.

pub mod handle;

//! heapmpi's own requests: what every layer that completes operations
//! itself (point-to-point today; one-sided `MPI_Rput`/`MPI_Rget` and
//! nonblocking collectives next) shares.
//!
//! - [`handle`]: `MPI_Request` and `MPI_Message` handles that the real MPI
//!   can never issue, their Fortran integers, and `c2f`/`f2c`.
//! - [`table`]: the request slots, each request's state as one enum, what
//!   a slot holds until it is released, and the rules of completing,
//!   freeing and cancelling (MPI-4.0 §3.7.3–§3.9).
//!
//! The `MPI_Wait`/`MPI_Test` family that drives the slots to completion is
//! `p2p::api::complete` for now: waiting means driving the point-to-point
//! engine, under whose lock the table lives (see [`table`]).

pub mod handle;
pub mod table;

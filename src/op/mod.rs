//! Reduction operators: which (op, datatype) pairs heapmpi reduces itself,
//! and applying one to two buffers. Shared by the collectives (`coll`) and
//! the one-sided accumulates (`rma`).
//!
//! MPI-4.0 §6.9.2 lists which predefined operation applies to which
//! predefined type. heapmpi takes a predefined operation only on the C
//! types of that table (recognised by their standard names, which both MPIs
//! report through `MPI_Type_get_name`); every other predefined pair,
//! including invalid ones, goes to the real MPI, which raises the error
//! class it always raises. A user-defined operation (`MPI_Op_create`) is
//! applied with any datatype: MPI cannot check it either.
//!
//! Applying an operation uses the real MPI's `MPI_Reduce_local`, except for
//! sum, max and min on `double`, `float`, `int` and `long`-sized integers,
//! where a plain loop that the compiler vectorises is faster than the
//! library's dispatch at small counts and as fast at large ones.
//! `reduce_local(in, inout)` computes `inout = in op inout`, the order the
//! collectives rely on for non-commutative operations.
//!
//! The standard's table is [`table`]'s, the kernels [`kernel`]'s, choosing
//! and applying one [`reducer`]'s; [`handles`] names the predefined
//! operations the bindings lack.

mod handles;
mod kernel;
mod reducer;
mod table;

pub use handles::{no_op, null as op_null, replace};
pub use reducer::{real_accepts, ApplyFn, Reducer};
pub use table::{class_of, classify_name, predefined, valid, Class, Elem, Pre, TypeClass};

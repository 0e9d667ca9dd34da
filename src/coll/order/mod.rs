//! The order in which a reduction combines the members' contributions, so
//! that floating-point sums and products come out bit for bit as the MPI
//! underneath computes them.
//!
//! Addition and multiplication of floating-point numbers are commutative
//! but not associative: `(x0 + x1) + (x2 + x3)` and `x0 + (x1 + (x2 + x3))`
//! may differ in the last bits, and a simulation that sums its energy over
//! four ranks then prints, or iterates on, a different number than stock.
//! Each MPI's algorithms fix an association (and a different one per
//! algorithm, which each MPI picks by communicator size and message size);
//! heapmpi, which reads every member's input directly, can evaluate any
//! association at the same cost, so it evaluates the stock one. Only
//! operations where the order shows need it ([`Reducer::exact`] tells):
//! integer arithmetic, `MAX`/`MIN`, the logical and bitwise operations and
//! `MAXLOC`/`MINLOC` give the same bits in any order, and keep heapmpi's own
//! fastest order.
//!
//! The associations, read from the sources and checked against stock runs
//! at 3 and 4 ranks (`tests/c/coll_order.c`):
//!
//! - **Balanced** — recursive doubling (Thakur, Rabenseifner and Gropp,
//!   "Optimization of collective communication operations in MPICH",
//!   IJHPCA 2005) and Rabenseifner's reduce-scatter + allgather: with `p`
//!   the largest power of two at most `n` and `r = n - p`, members `2i` and
//!   `2i + 1` (`i < r`) are combined first, then the `p` values pairwise,
//!   neighbours first (distance 1, 2, 4, ...). Open MPI 4.1's
//!   `allreduce_intra_recursivedoubling` and `_redscat_allgather`, MPICH
//!   4.0's `MPIR_Allreduce_intra_recursive_doubling` and
//!   `_reduce_scatter_allgather`, and MPICH's `_reduce_scatter_gather`
//!   for `MPI_Reduce`.
//! - **Binomial** — MPICH's `MPIR_Reduce_intra_binomial`, on ranks
//!   relative to the root (for a commutative operation): at distance 1, 2,
//!   4, ... a member passes its partial result to the one `distance` below;
//!   the same as balanced but for some sizes (5: `((x0 + x1) + (x2 + x3)) +
//!   x4`, not `((x0 + x1) + x2) + (x3 + x4)`).
//! - **Ring** — Open MPI's `allreduce_intra_ring` (and `_ring_segmented`,
//!   whose phases keep the ring's blocks): the elements are cut into `n`
//!   blocks (the first `count % n` one element longer); block `b` is
//!   folded from the left starting at member `b`:
//!   `((xb + xb+1) + xb+2) + ...`, indices modulo `n`.
//! - **Right fold** — `x0 op (x1 op (... op xn-1))`: Open MPI's
//!   `reduce_intra_basic_linear` (and so its linear allreduce), and
//!   heapmpi's own order elsewhere.
//!
//! - **Open MPI's `MPI_Reduce` trees** — chain, pipeline, binary,
//!   binomial and in-order binary trees (`coll_base_topo.c`), each node
//!   combining its children as `ompi_coll_base_reduce_generic` does (see
//!   [`Topo`]).
//!
//! Which algorithm runs follows the MPI's fixed decision: Open MPI 4.1's
//! `coll_tuned_decision_fixed.c` (by communicator size and bytes), MPICH
//! 4.0's `MPIR_Allreduce_intra_auto` / `MPIR_Reduce_intra_auto` (2048 bytes,
//! a power of two of elements, a predefined operation). A choice heapmpi
//! does not evaluate (Open MPI's Rabenseifner `MPI_Reduce`, which its
//! decision picks only for a few bytes of a small type on three members)
//! is reported as `None`, and the call goes to the real MPI when the order
//! shows.
//!
//! The associations are [`tree`]'s, the MPIs' choices among them
//! [`select`]'s.

mod select;
mod tree;

pub(super) use select::{rules_are_default, scan_tree, stock};
pub(super) use tree::{trees_cached, Shape, Tree};

//! The macros that write the entry points of the nonblocking and
//! persistent collectives from each routine's MPI signature, once: the
//! routine (`MPI_Ibcast`), its form that queues under a new or a
//! persistent request (`ibcast_to`, what `MPI_Start` calls), and the
//! persistent initialisation (`MPI_Bcast_init`), with the same argument
//! list. The generator the MPI Forum's API tables suggest, as
//! `macro_rules!`: the routines' logic (the plans, `persist::init`) stays
//! in plain functions.

/// Writes the two entry points of a nonblocking collective from its MPI
/// signature, once:
/// - `$to`: plans the operation (`plan`, an `Option<(&Node, Kind)>`:
///   `None` for the real MPI) and queues it under a new request or a
///   persistent one being started (`to`), or makes the real call (`real`,
///   with the same arguments and the request) — see `calls::queue_or`;
///   the persistent forms start through it;
/// - `$name`: the routine itself, whose request is new (documented by
///   the doc comment before the routine's name, if any).
///
/// After `real`, `persistent "MPI_X_init": name ...` writes the
/// persistent form too ([`persist_init!`], with the same arguments; its
/// `init_args`/`init_real`, or a `with` body), where the MPI has it.
///
/// The plan is either an expression (`plan = ...;`) or a function of the
/// routine's arguments written in place (`op = name { ... }`).
///
/// `data` names what `HEAPMPI_PROFILE` counts (elements, datatype) where
/// the entry knows it; a plan that learns it later records it itself;
/// `after` runs once the call (heapmpi's or the real one) succeeded: the
/// `v` and `w` all-to-alls count their per-peer arrays there.
/// `plan` runs inside the `unsafe` block that holds the entry's contract
/// (the MPI routine's: valid handles, buffers and arrays as the standard
/// describes them), so it writes no `unsafe` of its own.
macro_rules! nb_entry {
    // `op = name { body }`: the plan is a function of the same arguments,
    // written here once (`name`, also what a persistent form's
    // initialisation asks).
    (
        $(#[doc = $doc:literal])*
        $mpi:literal: $name:ident / $to:ident ( $($arg:ident : $ty:ty),* $(,)? ) on $comm:ident
        $(, data($count:expr, $dt:expr))? $(, after($after:expr))?;
        op = $op:ident $body:block
        real = $real:path;
        $(persistent $impi:literal: $init:ident $($irest:tt)*)?
    ) => {
        #[doc = concat!("The operation of `", $mpi, "`, or `None` for the real MPI.")]
        ///
        /// # Safety
        #[doc = concat!("As `", $mpi, "`.")]
        #[allow(clippy::too_many_arguments)]
        pub(super) unsafe fn $op(
            $($arg: $ty,)*
        ) -> Option<(&'static $crate::comm::node::Node, $crate::coll::nb::Kind)> $body

        nb_entry! {
            $(#[doc = $doc])*
            $mpi: $name / $to($($arg: $ty),*) on $comm $(, data($count, $dt))? $(, after($after))?;
            plan = $op($($arg),*);
            real = $real;
            $(persistent $impi: $init $($irest)*)?
        }
    };
    (
        $(#[doc = $doc:literal])*
        $mpi:literal: $name:ident / $to:ident ( $($arg:ident : $ty:ty),* $(,)? ) on $comm:ident
        $(, data($count:expr, $dt:expr))? $(, after($after:expr))?;
        plan = $plan:expr;
        real = $real:path;
        persistent $impi:literal: $init:ident $($irest:tt)*
    ) => {
        nb_entry! {
            $(#[doc = $doc])*
            $mpi: $name / $to($($arg: $ty),*) on $comm $(, data($count, $dt))? $(, after($after))?;
            plan = $plan;
            real = $real;
        }

        #[cfg(heapmpi_mpi4_base)]
        persist_init! {
            $impi: $init($($arg: $ty),*) $($irest)*
        }
    };
    (
        $(#[doc = $doc:literal])*
        $mpi:literal: $name:ident / $to:ident ( $($arg:ident : $ty:ty),* $(,)? ) on $comm:ident
        $(, data($count:expr, $dt:expr))? $(, after($after:expr))?;
        plan = $plan:expr;
        real = $real:path;
    ) => {
        #[doc = concat!("`", $mpi, "`, its request new or a persistent one being started (`to`).")]
        ///
        /// # Safety
        #[doc = concat!("As `", $mpi, "`; `to` as `queue_or`'s.")]
        #[allow(clippy::too_many_arguments)]
        pub(super) unsafe fn $to(
            $($arg: $ty,)*
            to: $crate::coll::nb::schedule::To,
        ) -> core::ffi::c_int {
            $(crate::profile::data($count as i64, $dt);)?
            // SAFETY: the caller's arguments, as the MPI routine's contract
            // has them (the plan reads them; the real call forwards them
            // unchanged).
            unsafe {
                let planned: Option<(&'static $crate::comm::node::Node, $crate::coll::nb::Kind)> =
                    $plan;
                let rc = $crate::coll::nb::calls::queue_or($comm, planned, to, |request| {
                    $real($($arg,)* request)
                });
                $(if rc == 0 {
                    $after;
                })?
                rc
            }
        }

        #[doc = concat!("`", $mpi, "`.")]
        $(#[doc = $doc])*
        ///
        /// # Safety
        #[doc = concat!("As `", $mpi, "`.")]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $name(
            $($arg: $ty,)*
            request: *mut mpi_sys::MPI_Request,
        ) -> core::ffi::c_int {
            // SAFETY: the caller's arguments.
            unsafe { $to($($arg,)* $crate::coll::nb::schedule::To::New(request)) }
        }

    };
}

/// Writes an MPI-4 persistent collective's initialisation (`MPI_*_init`)
/// from its signature, once: the routine's arguments, then `info` and the
/// request out-pointer, which only the real call reads (heapmpi takes no
/// hint). `init_args = ...` builds the
/// [`CollArgs`](crate::p2p::engine::CollArgs) handed to `persist::init`;
/// the `v` and `w` forms, which copy arrays first, write the body
/// themselves (`with (request, real) { ... }`, naming the out-pointer and
/// the real initialisation, a closure), from [`prelude`]. Written
/// through [`nb_entry!`], next to the nonblocking form.
#[cfg(heapmpi_mpi4_base)]
macro_rules! persist_init {
    (
        $mpi:literal: $name:ident ( $($arg:ident : $ty:ty),* $(,)? );
        init_args = $args:expr;
        init_real = $real:path;
    ) => {
        persist_init! {
            $mpi: $name($($arg: $ty),*) with (request, real) {
                $crate::coll::nb::persist::init($args, request, real)
            }
            init_real = $real;
        }
    };
    (
        $mpi:literal: $name:ident ( $($arg:ident : $ty:ty),* $(,)? )
        with ($request:ident, $realf:ident) $body:block
        init_real = $real:path;
    ) => {
        #[doc = concat!("`", $mpi, "`.")]
        ///
        /// # Safety
        #[doc = concat!("As `", $mpi, "`.")]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $name(
            $($arg: $ty,)*
            info: mpi_sys::MPI_Info,
            $request: *mut mpi_sys::MPI_Request,
        ) -> core::ffi::c_int {
            #[allow(unused_imports)]
            use $crate::coll::nb::entry::prelude::*;
            // SAFETY: the caller's arguments, forwarded unchanged.
            let $realf = || unsafe { $real($($arg,)* info, $request) };
            // SAFETY: the caller's arguments, as the MPI routine's contract
            // has them (valid handles; buffers and arrays as the standard
            // describes them).
            unsafe { $body }
        }
    };
}

/// What the bodies of the initialisations ([`persist_init!`], next to each
/// nonblocking entry) build from: the persistent layer's arguments and
/// routine numbers ([`super::persist`]) and the `v` and `w` forms' array
/// copies ([`super::persist_v`]). Here, beside the macro, so that neither
/// of those two modules re-exports the other.
#[cfg(heapmpi_mpi4_base)]
pub(super) mod prelude {
    pub(in crate::coll::nb) use super::super::super::{in_place, to_real};
    pub(in crate::coll::nb) use super::super::persist::{args, blocks_args, fold_args};
    pub(in crate::coll::nb) use super::super::persist::{
        ALLGATHER, ALLGATHERV, ALLREDUCE, ALLTOALL, ALLTOALLV, ALLTOALLW, BARRIER, BCAST, EXSCAN,
        GATHER, GATHERV, NEIGHBOR_ALLGATHER, NEIGHBOR_ALLGATHERV, NEIGHBOR_ALLTOALL,
        NEIGHBOR_ALLTOALLV, NEIGHBOR_ALLTOALLW, REDUCE, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, SCAN,
        SCATTER, SCATTERV,
    };
    pub(in crate::coll::nb) use super::super::persist_v::{
        all, copy, degrees, v_init, w_init, NONE,
    };
    pub(in crate::coll::nb) use crate::p2p::engine::CollArgs;
}

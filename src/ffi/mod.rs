//! Every C symbol heapmpi exports, and nothing else.
//!
//! Each entry point is written once with `c_exports!`, which defines it
//! under its own name (found by `LD_PRELOAD` interposition) and again as
//! `__wrap_NAME` (reached through `-Wl,--wrap=NAME`, see `linker-scripts/`),
//! and times it for `HEAPMPI_PROFILE` ([`crate::profile`]: one branch
//! while that is off; `c_exports!(@plain ...)` for the malloc family).
//! Bodies are one call into the Rust modules that hold the logic. In unit
//! tests the symbols are not exported, so the test binary keeps glibc's
//! malloc.

/// Defines `extern "C"` entry points under their own names and, in the
/// `wrap` submodule, under `__wrap_` names.
macro_rules! c_exports {
    (@body profile, $name:ident, $ret:ty, $body:block) => {{
        static SLOT: crate::profile::Slot = crate::profile::Slot::new(stringify!($name));
        let token = crate::profile::enter();
        #[allow(clippy::redundant_closure_call, unused_unsafe)]
        let r: $ret = (move || $body)();
        crate::profile::leave(&SLOT, token);
        r
    }};
    (@body plain, $name:ident, $ret:ty, $body:block) => { $body };
    (@emit $prof:ident; $( $(#[doc = $doc:expr])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block )*) => {
        /// The bodies, under Rust's own (mangled) names: both exported
        /// forms call these, never each other. `__wrap_X` calling the
        /// exported `X` was an undefined reference to `X` in its object
        /// file whenever the two fell into different codegen units (a build
        /// without link-time optimisation), and `-Wl,--wrap=X` turns every
        /// undefined `X` into `__wrap_X`: `__wrap_malloc` then called
        /// itself for ever (seen: a `--wrap` program spinning in the first
        /// `malloc` of the progress thread's start).
        pub mod imp {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[doc = concat!("The body of `", stringify!($name), "`.")]
                ///
                /// # Safety
                /// The C contract of the function of the same name.
                // The MPI routine's own parameters, however many.
                #[allow(non_snake_case, clippy::too_many_arguments)]
                #[inline]
                pub unsafe fn $name($($arg: $ty),*) -> $ret {
                    c_exports!(@body $prof, $name, $ret, $body)
                }
            )*
        }

        $(
            $(#[doc = $doc])*
            ///
            /// # Safety
            /// The C contract of the function of the same name.
            #[cfg_attr(not(test), no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                // SAFETY: the caller's contract is the body's.
                unsafe { imp::$name($($arg),*) }
            }
        )*

        /// The same entry points under `__wrap_` names.
        pub mod wrap {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[doc = concat!("`__wrap_", stringify!($name), "`, for `-Wl,--wrap=", stringify!($name), "`.")]
                ///
                /// # Safety
                /// As the plain entry point.
                #[cfg_attr(not(test), export_name = concat!("__wrap_", stringify!($name)))]
                #[allow(non_snake_case)]
                pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                    // SAFETY: same contract as the plain entry point.
                    unsafe { super::imp::$name($($arg),*) }
                }
            )*
        }
    };
    // The malloc family: not MPI calls, never profiled.
    (@plain $($rest:tt)*) => { c_exports!(@emit plain; $($rest)*); };
    ($($rest:tt)*) => { c_exports!(@emit profile; $($rest)*); };
}

pub mod coll;
#[cfg(not(heapmpi_abi))]
pub mod fortran;
pub mod malloc;
pub mod mpi;
#[cfg(heapmpi_mpi4)]
pub mod mpi4;
#[cfg(any(heapmpi_mpi41, heapmpi_toint))]
pub mod mpi41;
#[cfg(heapmpi_mpi4_base)]
pub mod mpi4_base;
pub mod p2p;
pub mod rma;

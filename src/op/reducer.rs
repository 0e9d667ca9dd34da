//! How one reduction is applied ([`Reducer`]): dispatching a (operation,
//! datatype) pair to heapmpi's kernels, to a function of the caller's
//! layer, or to the real MPI's `MPI_Reduce_local` (user-defined
//! operations, predefined pairs without a kernel), and asking the real MPI
//! which predefined pairs it applies beyond the standard's table
//! ([`real_accepts`]).

use core::ffi::c_int;

use mpi_sys as ffi;

use super::handles;
use super::kernel::kernel;
use super::table::{predefined, type_class, valid, Class, Elem, Pre};
use crate::raw::RawHandle;

/// How one reduction is applied.
#[derive(Clone, Copy)]
pub struct Reducer {
    op: ffi::MPI_Op,
    dt: ffi::MPI_Datatype,
    /// Extent of one element.
    ext: usize,
    kernel: Option<(Pre, Elem)>,
    /// The result does not depend on the order in which contributions are
    /// combined (see [`Reducer::exact`]).
    exact: bool,
    /// Applies the operation instead of `MPI_Reduce_local` (a pair the
    /// MPI's accumulates perform and its `MPI_Reduce_local` refuses).
    custom: Option<ApplyFn>,
    /// The operation is commutative (every predefined one is).
    pub commute: bool,
}

/// `inout = in op inout` on `count` elements of a type at an extent:
/// (op, type, extent, in, inout, count).
pub type ApplyFn = unsafe fn(ffi::MPI_Op, ffi::MPI_Datatype, usize, *const u8, *mut u8, usize);

/// Whether the real MPI applies predefined operation `op` to predefined
/// type `dt`, though MPI-4.0 §6.9.2 does not list the pair or heapmpi's
/// table does not know the type (both MPIs accept `MPI_SUM` on `MPI_CHAR`,
/// for one). One-sided accumulates need the answer: inside an epoch
/// heapmpi opened, a call it hands to the real MPI finds no epoch there, so
/// heapmpi must run every pair the MPI underneath accepts, and leaves only
/// the pairs it refuses to the real MPI, which then raises its own class.
///
/// The answer comes from the MPI itself: `MPI_Reduce_local` of one element
/// of zeros, once per pair and process. That call raises its errors on
/// `MPI_COMM_WORLD` (Open MPI) or `MPI_COMM_SELF` (MPICH), so both handlers
/// are `MPI_ERRORS_RETURN` for its duration and then set back.
pub fn real_accepts(op: ffi::MPI_Op, dt: ffi::MPI_Datatype) -> bool {
    /// Pairs probed: (op bits, type bits, accepted).
    static SEEN: std::sync::Mutex<Vec<(usize, usize, bool)>> = std::sync::Mutex::new(Vec::new());
    let key = (op.0.to_bits(), dt.0.to_bits());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = seen.iter().find(|e| (e.0, e.1) == key) {
        return e.2;
    }
    let ok = match crate::dt::layout(dt) {
        Some(l) if l.d.named && l.extent <= 64 => probe_reduce_local(op, dt),
        _ => false,
    };
    seen.push((key.0, key.1, ok));
    ok
}

/// [`real_accepts`], asked of the MPI (under the lock of its cache, so no
/// two probes swap the handlers at once).
fn probe_reduce_local(op: ffi::MPI_Op, dt: ffi::MPI_Datatype) -> bool {
    let mut a = [0u64; 8];
    let mut b = [0u64; 8];
    // SAFETY: reading MPI constants; valid out-pointers; one element of
    // at most 64 bytes (checked by the caller) in each buffer; the saved
    // handlers are set back and their references freed.
    unsafe {
        let comms = [ffi::RSMPI_COMM_WORLD, ffi::RSMPI_COMM_SELF];
        let mut saved = [core::mem::zeroed::<ffi::MPI_Errhandler>(); 2];
        for (c, s) in comms.iter().zip(saved.iter_mut()) {
            ffi::PMPI_Comm_get_errhandler(*c, s);
            ffi::PMPI_Comm_set_errhandler(*c, ffi::RSMPI_ERRORS_RETURN);
        }
        let rc = ffi::PMPI_Reduce_local(a.as_mut_ptr().cast(), b.as_mut_ptr().cast(), 1, dt, op);
        for (c, s) in comms.iter().zip(saved.iter_mut()) {
            ffi::PMPI_Comm_set_errhandler(*c, *s);
            ffi::PMPI_Errhandler_free(s);
        }
        rc == 0
    }
}

impl Reducer {
    /// A reducer that leaves `op` on `dt` (a pair [`real_accepts`]) to
    /// the real MPI's `MPI_Reduce_local`.
    pub fn by_real(op: ffi::MPI_Op, dt: ffi::MPI_Datatype, l: &crate::dt::Layout) -> Reducer {
        Reducer {
            op,
            dt,
            ext: l.extent,
            kernel: None,
            exact: false,
            custom: None,
            commute: true,
        }
    }

    /// A reducer that applies `op` to `dt` with `f` (a pair the caller's
    /// layer knows how the MPI computes).
    pub fn by_fn(
        op: ffi::MPI_Op,
        dt: ffi::MPI_Datatype,
        l: &crate::dt::Layout,
        f: ApplyFn,
    ) -> Reducer {
        Reducer {
            custom: Some(f),
            ..Reducer::by_real(op, dt, l)
        }
    }

    /// How to apply `op` to `dt` (`named`: a predefined type), or `None`
    /// when the real MPI must take the call: an invalid or null operation,
    /// a predefined operation on a type outside heapmpi's table (the real
    /// MPI then accepts it or raises its own error), `MPI_REPLACE` and
    /// `MPI_NO_OP` (one-sided only).
    pub fn new(op: ffi::MPI_Op, dt: ffi::MPI_Datatype, l: &crate::dt::Layout) -> Option<Reducer> {
        let named = l.d.named;
        if op == handles::null() || op == handles::replace() || op == handles::no_op() {
            return None;
        }
        if let Some(p) = predefined(op) {
            let (class, elem) = type_class(dt, named)?;
            if !valid(p, class) {
                return None;
            }
            let kernel = match (p, elem) {
                (Pre::Sum | Pre::Max | Pre::Min, Some(e)) if e.size() == l.extent => Some((p, e)),
                _ => None,
            };
            // Integer arithmetic (wrapping), MAX/MIN and the logical,
            // bitwise and location operations are associative; floating
            // and complex sums and products are not.
            let exact = !(matches!(p, Pre::Sum | Pre::Prod)
                && matches!(class, Class::Float | Class::Complex));
            return Some(Reducer {
                op,
                dt,
                ext: l.extent,
                kernel,
                exact,
                custom: None,
                commute: true,
            });
        }
        let mut commute: c_int = 0;
        // SAFETY: `op` is not null; an invalid handle gives an error code
        // (with the default handler on the world communicator it would be
        // fatal, as it is in the real call), and the call then goes to the
        // real MPI.
        if unsafe { ffi::PMPI_Op_commutative(op, &mut commute) } != 0 {
            return None;
        }
        Some(Reducer {
            op,
            dt,
            ext: l.extent,
            kernel: None,
            exact: false,
            custom: None,
            commute: commute != 0,
        })
    }

    /// Whether every order of combining the contributions gives the same
    /// bits (a predefined operation other than a floating or complex sum
    /// or product); a user-defined operation is never taken to be.
    pub fn exact(&self) -> bool {
        self.exact
    }

    /// Whether the operation runs in heapmpi's own kernels, never calling
    /// the MPI library (a thread that may not call it can apply it).
    pub fn native(&self) -> bool {
        self.kernel.is_some() && self.custom.is_none()
    }

    /// Whether the operation is a predefined one.
    pub fn predefined(&self) -> bool {
        predefined(self.op).is_some()
    }

    /// `inout[i] = in[i] op inout[i]` for `count` elements laid out as the
    /// datatype says.
    ///
    /// # Safety
    /// Both buffers hold `count` elements of the datatype; they do not
    /// overlap.
    pub unsafe fn apply(&self, inb: *const u8, inout: *mut u8, count: usize) {
        if count == 0 {
            return;
        }
        if let Some(f) = self.custom {
            // SAFETY: per the contract, which is `f`'s.
            unsafe { f(self.op, self.dt, self.ext, inb, inout, count) };
            return;
        }
        match self.kernel {
            // SAFETY (all kernels): per the contract, `count` elements of
            // the kernel's type at each address; unaligned access allowed.
            Some((p, Elem::F64)) => unsafe { kernel::<f64>(p, inb, inout, count) },
            Some((p, Elem::F32)) => unsafe { kernel::<f32>(p, inb, inout, count) },
            Some((p, Elem::I32)) => unsafe { kernel::<i32>(p, inb, inout, count) },
            Some((p, Elem::I64)) => unsafe { kernel::<i64>(p, inb, inout, count) },
            Some((p, Elem::U32)) => unsafe { kernel::<u32>(p, inb, inout, count) },
            Some((p, Elem::U64)) => unsafe { kernel::<u64>(p, inb, inout, count) },
            None => {
                // Counts above INT_MAX in pieces.
                let mut done = 0usize;
                let ext = self.ext;
                while done < count {
                    let n = (count - done).min(c_int::MAX as usize);
                    // SAFETY: per the contract, on the elements
                    // [done, done + n).
                    unsafe {
                        ffi::PMPI_Reduce_local(
                            inb.add(done * ext).cast(),
                            inout.add(done * ext).cast(),
                            n as c_int,
                            self.dt,
                            self.op,
                        );
                    }
                    done += n;
                }
            }
        }
    }
}

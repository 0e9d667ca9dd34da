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

use core::ffi::{c_char, c_int};
use std::cell::RefCell;

use mpi_sys as ffi;

use crate::raw::RawHandle;

#[cfg(heapmpi_openmpi)]
mod handles {
    use mpi_sys as ffi;
    extern "C" {
        static ompi_mpi_op_null: u8;
        static ompi_mpi_op_maxloc: u8;
        static ompi_mpi_op_minloc: u8;
        static ompi_mpi_op_replace: u8;
        static ompi_mpi_op_no_op: u8;
    }
    fn op(p: *const u8) -> ffi::MPI_Op {
        ffi::MPI_Op(p as *mut _)
    }
    // Each handle is the address of an Open MPI predefined object, as its
    // `<mpi.h>` defines it; nothing is read.
    /// `MPI_OP_NULL`.
    pub fn null() -> ffi::MPI_Op {
        op(core::ptr::addr_of!(ompi_mpi_op_null))
    }
    /// `MPI_MAXLOC`.
    pub fn maxloc() -> ffi::MPI_Op {
        op(core::ptr::addr_of!(ompi_mpi_op_maxloc))
    }
    /// `MPI_MINLOC`.
    pub fn minloc() -> ffi::MPI_Op {
        op(core::ptr::addr_of!(ompi_mpi_op_minloc))
    }
    /// `MPI_REPLACE`.
    pub fn replace() -> ffi::MPI_Op {
        op(core::ptr::addr_of!(ompi_mpi_op_replace))
    }
    /// `MPI_NO_OP`.
    pub fn no_op() -> ffi::MPI_Op {
        op(core::ptr::addr_of!(ompi_mpi_op_no_op))
    }
}

#[cfg(heapmpi_abi)]
mod handles {
    //! The MPI-5 standard ABI's handles are constants (`<mpi_abi.h>`).
    use mpi_sys as ffi;
    fn op(v: usize) -> ffi::MPI_Op {
        ffi::MPI_Op(core::ptr::without_provenance_mut(v))
    }
    /// `MPI_OP_NULL`.
    pub fn null() -> ffi::MPI_Op {
        op(0x20)
    }
    /// `MPI_MINLOC`.
    pub fn minloc() -> ffi::MPI_Op {
        op(0x38)
    }
    /// `MPI_MAXLOC`.
    pub fn maxloc() -> ffi::MPI_Op {
        op(0x39)
    }
    /// `MPI_REPLACE`.
    pub fn replace() -> ffi::MPI_Op {
        op(0x3c)
    }
    /// `MPI_NO_OP`.
    pub fn no_op() -> ffi::MPI_Op {
        op(0x3d)
    }
}

#[cfg(not(any(heapmpi_openmpi, heapmpi_abi)))]
mod handles {
    //! MPICH's handles are constants of its ABI (`<mpi.h>`).
    use mpi_sys as ffi;
    /// `MPI_OP_NULL`.
    pub fn null() -> ffi::MPI_Op {
        ffi::MPI_Op(0x1800_0000)
    }
    /// `MPI_MINLOC`.
    pub fn minloc() -> ffi::MPI_Op {
        ffi::MPI_Op(0x5800_000b)
    }
    /// `MPI_MAXLOC`.
    pub fn maxloc() -> ffi::MPI_Op {
        ffi::MPI_Op(0x5800_000c)
    }
    /// `MPI_REPLACE`.
    pub fn replace() -> ffi::MPI_Op {
        ffi::MPI_Op(0x5800_000d)
    }
    /// `MPI_NO_OP`.
    pub fn no_op() -> ffi::MPI_Op {
        ffi::MPI_Op(0x5800_000e)
    }
}

pub use handles::{no_op, null as op_null, replace};

/// The classes of predefined types in MPI-4.0 §6.9.2 that heapmpi uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// C integer.
    Int,
    /// Fortran integer and the multi-language types (`MPI_AINT`,
    /// `MPI_COUNT`): as C integers, but not for the logical operations.
    FortranInt,
    /// Floating point.
    Float,
    /// Complex.
    Complex,
    /// Logical (`MPI_C_BOOL`, `MPI_LOGICAL`).
    Logical,
    /// `MPI_BYTE`.
    Byte,
    /// The value-index pairs of `MINLOC`/`MAXLOC`.
    Pair,
}

/// Element kinds with a hand-written kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `double`.
    F64,
    /// `float`.
    F32,
    /// 32-bit signed.
    I32,
    /// 64-bit signed.
    I64,
    /// 32-bit unsigned.
    U32,
    /// 64-bit unsigned.
    U64,
}

/// A predefined type's class and kernel element, from its standard name
/// (the name both MPIs give it; the Fortran types' names are spelt as in
/// Fortran). A kernel is used only where the type's extent is the
/// element's (see [`Reducer::new`]): gfortran's default `INTEGER` and
/// `REAL` are 4 bytes, but a program compiled with `-fdefault-integer-8`
/// does not change what `MPI_INTEGER` is to the C library.
pub fn classify_name(name: &str) -> Option<TypeClass> {
    use Class::*;
    let long64 = core::mem::size_of::<core::ffi::c_long>() == 8;
    Some(match name {
        "MPI_DOUBLE" => (Float, Some(Elem::F64)),
        "MPI_FLOAT" => (Float, Some(Elem::F32)),
        "MPI_LONG_DOUBLE" => (Float, None),
        "MPI_INT" | "MPI_INT32_T" => (Int, Some(Elem::I32)),
        "MPI_UNSIGNED" | "MPI_UINT32_T" => (Int, Some(Elem::U32)),
        "MPI_LONG_LONG_INT" | "MPI_LONG_LONG" | "MPI_INT64_T" => (Int, Some(Elem::I64)),
        "MPI_UNSIGNED_LONG_LONG" | "MPI_UINT64_T" => (Int, Some(Elem::U64)),
        "MPI_LONG" => (Int, Some(if long64 { Elem::I64 } else { Elem::I32 })),
        "MPI_UNSIGNED_LONG" => (Int, Some(if long64 { Elem::U64 } else { Elem::U32 })),
        "MPI_SHORT" | "MPI_UNSIGNED_SHORT" | "MPI_SIGNED_CHAR" | "MPI_UNSIGNED_CHAR"
        | "MPI_INT8_T" | "MPI_INT16_T" | "MPI_UINT8_T" | "MPI_UINT16_T" => (Int, None),
        "MPI_INTEGER" | "MPI_INTEGER4" => (FortranInt, Some(Elem::I32)),
        // Not `MPI_OFFSET`: Open MPI 4.1.4 compares it as unsigned in
        // `MPI_MAX`/`MPI_MIN`, so the real MPI keeps it, bug included.
        "MPI_INTEGER8" | "MPI_AINT" | "MPI_COUNT" => (FortranInt, Some(Elem::I64)),
        "MPI_INTEGER1" | "MPI_INTEGER2" | "MPI_INTEGER16" => (FortranInt, None),
        "MPI_REAL" | "MPI_REAL4" => (Float, Some(Elem::F32)),
        "MPI_DOUBLE_PRECISION" | "MPI_REAL8" => (Float, Some(Elem::F64)),
        "MPI_REAL2" | "MPI_REAL16" => (Float, None),
        "MPI_C_COMPLEX"
        | "MPI_C_FLOAT_COMPLEX"
        | "MPI_C_DOUBLE_COMPLEX"
        | "MPI_C_LONG_DOUBLE_COMPLEX"
        | "MPI_COMPLEX"
        | "MPI_DOUBLE_COMPLEX"
        | "MPI_COMPLEX8"
        | "MPI_COMPLEX16"
        | "MPI_COMPLEX32" => (Complex, None),
        "MPI_C_BOOL" | "MPI_LOGICAL" => (Logical, None),
        "MPI_BYTE" => (Byte, None),
        "MPI_FLOAT_INT"
        | "MPI_DOUBLE_INT"
        | "MPI_LONG_INT"
        | "MPI_2INT"
        | "MPI_SHORT_INT"
        | "MPI_LONG_DOUBLE_INT"
        | "MPI_2REAL"
        | "MPI_2DOUBLE_PRECISION"
        | "MPI_2INTEGER" => (Pair, None),
        _ => return None,
    })
}

/// The predefined operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // the MPI_ names say it
pub enum Pre {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Lor,
    Lxor,
    Band,
    Bor,
    Bxor,
    Maxloc,
    Minloc,
}

/// Whether MPI defines predefined operation `p` on types of class `c`
/// (MPI-4.0 §6.9.2). A pair outside it goes to the real MPI, which accepts
/// it as an extension or raises its own error.
pub fn valid(p: Pre, c: Class) -> bool {
    use Class::*;
    use Pre::*;
    match p {
        Max | Min => matches!(c, Int | FortranInt | Float),
        Sum | Prod => matches!(c, Int | FortranInt | Float | Complex),
        Land | Lor | Lxor => matches!(c, Int | Logical),
        Band | Bor | Bxor => matches!(c, Int | FortranInt | Byte),
        Maxloc | Minloc => c == Pair,
    }
}

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

thread_local! {
    /// The class and kernel element of a predefined datatype, remembered per
    /// handle and thread (predefined handles never change meaning; derived types are never
    /// entered).
    static NAMES: Names = const { RefCell::new(Vec::new()) };
}

/// The remembered classes of one thread (see [`NAMES`]).
type Names = RefCell<Vec<(usize, Option<TypeClass>)>>;

/// The owner thread's [`NAMES`] (`crate::sys::tls`: no `__tls_get_addr`
/// on the thread that makes the calls).
static OWNER_NAMES: crate::sys::tls::Owned<Names> =
    crate::sys::tls::Owned::new(RefCell::new(Vec::new()));

impl Elem {
    /// Bytes of one element.
    pub fn size(self) -> usize {
        match self {
            Elem::F64 | Elem::I64 | Elem::U64 => 8,
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
        }
    }
}

/// A predefined type's class and kernel element.
pub type TypeClass = (Class, Option<Elem>);

/// The class and kernel element of a predefined datatype (`None` for a
/// derived type or one outside heapmpi's table).
pub fn class_of(dt: ffi::MPI_Datatype) -> Option<TypeClass> {
    type_class(dt, true)
}

fn type_class(dt: ffi::MPI_Datatype, named: bool) -> Option<TypeClass> {
    if !named {
        return None;
    }
    let bits = dt.0.to_bits();
    if let Some(c) = OWNER_NAMES.with(&NAMES, |n| {
        n.borrow().iter().find(|e| e.0 == bits).map(|e| e.1)
    }) {
        return c;
    }
    let mut buf = [0 as c_char; 160];
    let mut len: c_int = 0;
    // SAFETY: a valid predefined datatype; the buffer holds
    // MPI_MAX_OBJECT_NAME (at most 128 in both MPIs) characters.
    let rc = unsafe { ffi::PMPI_Type_get_name(dt, buf.as_mut_ptr(), &mut len) };
    let class = if rc == 0 && len > 0 {
        let bytes: Vec<u8> = buf[..len as usize].iter().map(|&c| c as u8).collect();
        core::str::from_utf8(&bytes).ok().and_then(classify_name)
    } else {
        None
    };
    OWNER_NAMES.with(&NAMES, |n| n.borrow_mut().push((bits, class)));
    class
}

/// The predefined operation `op` is, if any.
pub fn predefined(op: ffi::MPI_Op) -> Option<Pre> {
    // SAFETY: reading MPI constants.
    let table = unsafe {
        [
            (ffi::RSMPI_MAX, Pre::Max),
            (ffi::RSMPI_MIN, Pre::Min),
            (ffi::RSMPI_SUM, Pre::Sum),
            (ffi::RSMPI_PROD, Pre::Prod),
            (ffi::RSMPI_LAND, Pre::Land),
            (ffi::RSMPI_LOR, Pre::Lor),
            (ffi::RSMPI_LXOR, Pre::Lxor),
            (ffi::RSMPI_BAND, Pre::Band),
            (ffi::RSMPI_BOR, Pre::Bor),
            (ffi::RSMPI_BXOR, Pre::Bxor),
            (handles::maxloc(), Pre::Maxloc),
            (handles::minloc(), Pre::Minloc),
        ]
    };
    table.iter().find(|e| e.0 == op).map(|e| e.1)
}

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

/// The arithmetic a kernel needs.
trait Num: Copy + PartialOrd {
    fn add(self, o: Self) -> Self;
}

impl Num for f64 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self + o
    }
}
impl Num for f32 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self + o
    }
}
macro_rules! wrapping_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
        }
    )*};
}
wrapping_num!(i32, i64, u32, u64);

/// `inout = in op inout` elementwise (see [`body`]), with the widest
/// vector unit the processor has: the crate is built for the x86-64
/// baseline (SSE2, two doubles an instruction), and Open MPI's own `op`
/// component uses AVX-512 where it exists, which made its accumulates of
/// 64-128 KiB (L2-resident) 10-15% faster than heapmpi's. Every variant
/// runs the same elementwise loop, so the results are the same bits.
///
/// # Safety
/// `count` elements of `T` at each address, not overlapping.
#[inline(never)]
unsafe fn kernel<T: Num>(p: Pre, inb: *const u8, inout: *mut u8, count: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        /// Below this many bytes the feature check is not worth it.
        const WIDE: usize = 256;
        if count * core::mem::size_of::<T>() >= WIDE {
            // `is_x86_feature_detected!` reads std's cached CPUID bits.
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the processor has AVX-512F; the contract is ours.
                return unsafe { kernel_avx512::<T>(p, inb, inout, count) };
            }
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2; the contract is ours.
                return unsafe { kernel_avx2::<T>(p, inb, inout, count) };
            }
        }
    }
    // SAFETY: per the contract.
    unsafe { body::<T>(p, inb, inout, count) }
}

/// [`body`] compiled for AVX-512F.
///
/// # Safety
/// As [`kernel`], on a processor with AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn kernel_avx512<T: Num>(p: Pre, inb: *const u8, inout: *mut u8, count: usize) {
    // SAFETY: per the contract.
    unsafe { body::<T>(p, inb, inout, count) }
}

/// [`body`] compiled for AVX2.
///
/// # Safety
/// As [`kernel`], on a processor with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn kernel_avx2<T: Num>(p: Pre, inb: *const u8, inout: *mut u8, count: usize) {
    // SAFETY: per the contract.
    unsafe { body::<T>(p, inb, inout, count) }
}

/// `inout = in op inout` elementwise, written exactly as both MPIs' loops
/// are (Open MPI's `op_base_functions.c`, MPICH's `MPIR_MAXF`/`MPIR_SUM`),
/// so that NaNs and signed zeros come out bit for bit the same:
/// `inout = inout + in`, `inout = inout > in ? inout : in`,
/// `inout = inout < in ? inout : in`. Always inlined, so that each caller
/// compiles it for its own target features.
///
/// # Safety
/// `count` elements of `T` at each address, not overlapping.
#[inline(always)]
unsafe fn body<T: Num>(p: Pre, inb: *const u8, inout: *mut u8, count: usize) {
    let a = inb as *const T;
    let b = inout as *mut T;
    // SAFETY: per the contract (unaligned reads and writes).
    unsafe {
        match p {
            Pre::Sum => {
                for i in 0..count {
                    b.add(i)
                        .write_unaligned(b.add(i).read_unaligned().add(a.add(i).read_unaligned()));
                }
            }
            Pre::Max => {
                for i in 0..count {
                    let (x, y) = (a.add(i).read_unaligned(), b.add(i).read_unaligned());
                    b.add(i).write_unaligned(if y > x { y } else { x });
                }
            }
            Pre::Min => {
                for i in 0..count {
                    let (x, y) = (a.add(i).read_unaligned(), b.add(i).read_unaligned());
                    b.add(i).write_unaligned(if y < x { y } else { x });
                }
            }
            _ => unreachable!("kernels exist for sum, max and min only"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_standard() {
        assert!(valid(Pre::Sum, Class::Complex));
        assert!(!valid(Pre::Max, Class::Complex));
        assert!(!valid(Pre::Band, Class::Float));
        assert!(valid(Pre::Band, Class::Byte));
        assert!(!valid(Pre::Sum, Class::Byte));
        assert!(valid(Pre::Lor, Class::Logical));
        assert!(!valid(Pre::Maxloc, Class::Float));
        assert!(valid(Pre::Minloc, Class::Pair));
        assert_eq!(
            classify_name("MPI_DOUBLE"),
            Some((Class::Float, Some(Elem::F64)))
        );
        assert_eq!(classify_name("MPI_CHAR"), None);
        assert_eq!(
            classify_name("MPI_DOUBLE_PRECISION"),
            Some((Class::Float, Some(Elem::F64)))
        );
        assert!(valid(Pre::Bxor, Class::FortranInt));
        assert!(!valid(Pre::Land, Class::FortranInt));
        assert!(valid(Pre::Land, Class::Logical));
        assert_eq!(
            classify_name("MPI_DOUBLE_INT").map(|c| c.0),
            Some(Class::Pair)
        );
    }

    /// The dispatched kernels (AVX-512/AVX2 from 256 bytes) give the same
    /// bits as the plain elementwise rule at every length, alignment and
    /// tail, NaNs and signed zeros included.
    #[test]
    fn wide_kernels_match_the_elementwise_rule() {
        macro_rules! check {
            ($t:ty, $vals:expr, $bits:expr) => {{
                let vals: Vec<$t> = $vals;
                let pick = |i: usize, k: usize| vals[(i * 7 + k * 3 + i / 5) % vals.len()];
                for p in [Pre::Sum, Pre::Max, Pre::Min] {
                    for count in [0usize, 1, 31, 64, 65, 127, 200, 257, 1000] {
                        for skew in [0usize, 1] {
                            // Byte buffers with a skew: unaligned elements.
                            let sz = core::mem::size_of::<$t>();
                            let mut a = vec![0u8; (count + 1) * sz];
                            let mut b = vec![0u8; (count + 1) * sz];
                            let mut want = Vec::with_capacity(count);
                            for i in 0..count {
                                let (x, y) = (pick(i, 0), pick(i, 1));
                                // SAFETY: inside the buffers.
                                unsafe {
                                    (a.as_mut_ptr().add(skew + i * sz) as *mut $t)
                                        .write_unaligned(x);
                                    (b.as_mut_ptr().add(skew + i * sz) as *mut $t)
                                        .write_unaligned(y);
                                }
                                want.push(match p {
                                    Pre::Sum => y.add(x),
                                    Pre::Max => {
                                        if y > x {
                                            y
                                        } else {
                                            x
                                        }
                                    }
                                    _ => {
                                        if y < x {
                                            y
                                        } else {
                                            x
                                        }
                                    }
                                });
                            }
                            // SAFETY: `count` elements at each address.
                            unsafe {
                                kernel::<$t>(
                                    p,
                                    a.as_ptr().add(skew),
                                    b.as_mut_ptr().add(skew),
                                    count,
                                )
                            };
                            for (i, w) in want.iter().enumerate() {
                                // SAFETY: inside the buffer.
                                let got = unsafe {
                                    (b.as_ptr().add(skew + i * sz) as *const $t).read_unaligned()
                                };
                                assert_eq!(
                                    $bits(got),
                                    $bits(*w),
                                    "{p:?} count {count} element {i}"
                                );
                            }
                        }
                    }
                }
            }};
        }
        let f = vec![
            1.5f64,
            -0.0,
            0.0,
            f64::NAN,
            -3.25,
            f64::INFINITY,
            1e300,
            -1e-300,
            7.0,
        ];
        check!(f64, f.clone(), f64::to_bits);
        check!(f32, f.iter().map(|&x| x as f32).collect(), f32::to_bits);
        let i = vec![i64::MAX, i64::MIN, -1, 0, 1, 42, -42, 1 << 40];
        check!(i64, i.clone(), |x| x);
        check!(i32, i.iter().map(|&x| x as i32).collect(), |x| x);
        check!(u32, i.iter().map(|&x| x as u32).collect(), |x| x);
        check!(u64, i.iter().map(|&x| x as u64).collect(), |x| x);
    }

    #[test]
    fn kernels() {
        let a = [1.0f64, -2.0, f64::NAN, 4.0];
        let mut b = [0.5f64, 3.0, 1.0, f64::NAN];
        // SAFETY: four f64s each.
        unsafe { kernel::<f64>(Pre::Sum, a.as_ptr().cast(), b.as_mut_ptr().cast(), 4) };
        assert_eq!(&b[..2], &[1.5, 1.0]);
        assert!(b[2].is_nan() && b[3].is_nan());
        // NaN in `inout` loses to the input, as in both MPIs' loops.
        let mut m = [f64::NAN, 1.0];
        // SAFETY: two f64s each.
        unsafe {
            kernel::<f64>(
                Pre::Max,
                [2.0f64, f64::NAN].as_ptr().cast(),
                m.as_mut_ptr().cast(),
                2,
            )
        };
        assert_eq!(m[0], 2.0);
        assert!(m[1].is_nan());
        let a = [5i32, -7, 3];
        let mut b = [4i32, -9, 3];
        // SAFETY: three i32s each.
        unsafe { kernel::<i32>(Pre::Max, a.as_ptr().cast(), b.as_mut_ptr().cast(), 3) };
        assert_eq!(b, [5, -7, 3]);
        let mut c = [i32::MAX, 0, 0];
        // SAFETY: three i32s each.
        unsafe {
            kernel::<i32>(
                Pre::Sum,
                [1i32, 2, 3].as_ptr().cast(),
                c.as_mut_ptr().cast(),
                3,
            )
        };
        assert_eq!(c, [i32::MIN, 2, 3]);
        let mut d = [2u64, 9];
        // SAFETY: two u64s each.
        unsafe {
            kernel::<u64>(
                Pre::Min,
                [3u64, 1].as_ptr().cast(),
                d.as_mut_ptr().cast(),
                2,
            )
        };
        assert_eq!(d, [2, 1]);
    }
}

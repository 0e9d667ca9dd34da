//! MPI-4.0 §6.9.2's table: the predefined operations ([`Pre`]), the
//! classes of predefined types they apply to ([`Class`]), which pair is
//! valid, and the class (and kernel element) of a predefined datatype,
//! recognised by its standard name, which both MPIs report through
//! `MPI_Type_get_name` (remembered per handle and thread).

use core::ffi::{c_char, c_int};
use std::cell::RefCell;

use mpi_sys as ffi;

use super::handles;
use crate::raw::RawHandle;

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
/// element's (see `Reducer::new`): gfortran's default `INTEGER` and
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

impl Elem {
    /// Bytes of one element.
    pub fn size(self) -> usize {
        match self {
            Elem::F64 | Elem::I64 | Elem::U64 => 8,
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
        }
    }
}

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

/// A predefined type's class and kernel element.
pub type TypeClass = (Class, Option<Elem>);

/// The class and kernel element of a predefined datatype (`None` for a
/// derived type or one outside heapmpi's table).
pub fn class_of(dt: ffi::MPI_Datatype) -> Option<TypeClass> {
    type_class(dt, true)
}

pub(super) fn type_class(dt: ffi::MPI_Datatype, named: bool) -> Option<TypeClass> {
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
}

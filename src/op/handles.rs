//! The predefined operation handles that `mpi-sys` does not give
//! (`MPI_OP_NULL`, `MPI_MAXLOC`, `MPI_MINLOC`, `MPI_REPLACE`,
//! `MPI_NO_OP`), as each MPI's header defines them: Open MPI's are the
//! addresses of its predefined objects, MPICH's and the MPI-5 standard
//! ABI's are constants.

#[cfg(heapmpi_openmpi)]
mod imp {
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
mod imp {
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
mod imp {
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

pub use imp::{maxloc, minloc, no_op, null, replace};

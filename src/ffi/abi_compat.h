/*
 * abi_compat.h - what mpi-sys's C shim (its rsmpi.h) needs and the MPI-5
 * standard ABI's <mpi.h> does not declare: MPI_Fint and the
 * MPI_X_c2f / MPI_X_f2c conversions. The ABI fixes no Fortran integer;
 * its conversions of handles to and from int are MPI_X_toint and
 * MPI_X_fromint, which the shim's c2f / f2c wrappers call instead.
 *
 * wrappers/heapmpi-build force-includes this header (CFLAGS for the shim,
 * BINDGEN_EXTRA_CLANG_ARGS for its bindings, with the wrapper's own -D
 * flags such as -DMPI_ABI) when it builds for an MPI whose <mpi.h> is the
 * standard ABI's. Nothing else includes it.
 */
#ifndef HEAPMPI_ABI_COMPAT_H
#define HEAPMPI_ABI_COMPAT_H
#include <mpi.h>

typedef int MPI_Fint;

#define MPI_Comm_c2f MPI_Comm_toint
#define MPI_Comm_f2c MPI_Comm_fromint
#define MPI_Errhandler_c2f MPI_Errhandler_toint
#define MPI_Errhandler_f2c MPI_Errhandler_fromint
#define MPI_File_c2f MPI_File_toint
#define MPI_File_f2c MPI_File_fromint
#define MPI_Group_c2f MPI_Group_toint
#define MPI_Group_f2c MPI_Group_fromint
#define MPI_Info_c2f MPI_Info_toint
#define MPI_Info_f2c MPI_Info_fromint
#define MPI_Message_c2f MPI_Message_toint
#define MPI_Message_f2c MPI_Message_fromint
#define MPI_Op_c2f MPI_Op_toint
#define MPI_Op_f2c MPI_Op_fromint
#define MPI_Request_c2f MPI_Request_toint
#define MPI_Request_f2c MPI_Request_fromint
#define MPI_Type_c2f MPI_Type_toint
#define MPI_Type_f2c MPI_Type_fromint
#define MPI_Win_c2f MPI_Win_toint
#define MPI_Win_f2c MPI_Win_fromint

#endif

! rma_fortran.f90 - one-sided conformance through the Fortran bindings with
! `use mpi`: Win_allocate, Win_allocate_shared, Win_create over
! MPI_Alloc_mem memory and over a Fortran array, Win_create_dynamic; fence,
! PSCW, locks, Lock_all, flushes; Put, Get, Accumulate, Get_accumulate,
! Fetch_and_op, Compare_and_swap and the R forms (see rma_fortran_body.inc).
program rma_fortran
  use mpi
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_f_pointer
  implicit none
  include 'rma_fortran_body.inc'
end program rma_fortran

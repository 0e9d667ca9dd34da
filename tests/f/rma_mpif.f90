! rma_mpif.f90 - one-sided conformance through the Fortran bindings with
! mpif.h (see rma_fortran_body.inc).
program rma_mpif
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_f_pointer
  implicit none
  include 'mpif.h'
  include 'rma_fortran_body.inc'
end program rma_mpif

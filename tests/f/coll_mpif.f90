! coll_mpif.f90 - collective conformance through the Fortran bindings with
! mpif.h: all 16 blocking collectives, exact results, MPI_IN_PLACE,
! MPI_BOTTOM, user operations, error classes (see coll_fortran_body.inc).
program coll_mpif
  implicit none
  include 'mpif.h'
  include 'coll_fortran_body.inc'
end program coll_mpif

include 'coll_fortran_ops.inc'

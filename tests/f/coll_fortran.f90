! coll_fortran.f90 - collective conformance through the Fortran bindings
! with `use mpi`: all 16 blocking collectives, exact results, MPI_IN_PLACE,
! MPI_BOTTOM, user operations, error classes (see coll_fortran_body.inc).
program coll_fortran
  use mpi
  implicit none
  include 'coll_fortran_body.inc'
end program coll_fortran

include 'coll_fortran_ops.inc'

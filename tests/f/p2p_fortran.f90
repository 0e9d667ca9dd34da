! p2p_fortran.f90 - point-to-point conformance through the Fortran
! bindings with `use mpi` (see p2p_fortran_body.inc).
program p2p_fortran
  use mpi
  implicit none
  include 'p2p_fortran_body.inc'
end program p2p_fortran

! p2p_mpif.f90 - point-to-point conformance through the Fortran bindings
! with mpif.h (see p2p_fortran_body.inc).
program p2p_mpif
  implicit none
  include 'mpif.h'
  include 'p2p_fortran_body.inc'
end program p2p_mpif

! The Fortran program of tests/stack.rs: the calls the tool fixtures watch,
! through the mpi module (see stack_app_body.inc).
program stack_app_f
  use mpi
  implicit none
  integer :: req(2)
  include 'stack_app_body.inc'
end program stack_app_f

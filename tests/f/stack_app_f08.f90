! The `use mpi_f08` program of tests/stack.rs: the calls the tool fixtures
! watch, through the mpi_f08 module (see stack_app_body.inc).
program stack_app_f08
  use mpi_f08
  implicit none
  type(MPI_Request) :: req(2)
  include 'stack_app_body.inc'
end program stack_app_f08

! The `use mpi_f08` program of tests/stack.rs: the calls the tool fixtures watch,
! through the mpi_f08 module (stack_app_f.f90 with its types).
program stack_app_f08
  use mpi_f08
  implicit none
  integer :: rank, size, right, left, ierr, k, n
  type(MPI_Request) :: req(2)
  integer :: buf(1000), got(1000)
  integer(8) :: part, tot
  logical :: ok
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  ok = .true.
  tot = 0
  do k = 1, 3
    n = 10 ** (k - 1)
    buf(1:n) = rank * 7 + k
    if (mod(rank, 2) == 0) then
      call MPI_Send(buf, n, MPI_INTEGER, right, k, MPI_COMM_WORLD, ierr)
      call MPI_Recv(got, n, MPI_INTEGER, left, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Recv(got, n, MPI_INTEGER, left, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_Send(buf, n, MPI_INTEGER, right, k, MPI_COMM_WORLD, ierr)
    end if
    ok = ok .and. all(got(1:n) == left * 7 + k)
    call MPI_Irecv(got, n, MPI_INTEGER, left, 10 + k, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(buf, n, MPI_INTEGER, right, 10 + k, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Wait(req(1), MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
    ok = ok .and. all(got(1:n) == left * 7 + k)
    part = got(n)
    call MPI_Allreduce(part, tot, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Bcast(buf, n, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  end do
  print '(a,i0,a,l1,a,i0)', 'rank ', rank, ': ok ', ok, ' ', tot
  call MPI_Finalize(ierr)
end program stack_app_f08

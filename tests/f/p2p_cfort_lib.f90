! p2p_cfort_lib.f90 - the Fortran half of p2p_cfort.c: a library a C main
! calls, which talks MPI through the Fortran bindings (`use mpi`), as a
! Fortran solver called from a C program does.
module p2p_cfort_lib
  use mpi
  use iso_c_binding
  implicit none
contains
  ! Sends `n` integers starting with `first` to `dest` on MPI_COMM_WORLD.
  subroutine fsend(first, n, dest, tag, sync) bind(C, name="fsend")
    integer(c_int), value :: first, n, dest, tag, sync
    integer :: buf(n), i, ierr
    do i = 1, n
      buf(i) = first + i - 1
    end do
    if (sync /= 0) then
      call MPI_Ssend(buf, n, MPI_INTEGER, dest, tag, MPI_COMM_WORLD, ierr)
    else
      call MPI_Send(buf, n, MPI_INTEGER, dest, tag, MPI_COMM_WORLD, ierr)
    end if
  end subroutine fsend

  ! Receives `n` integers from `src`; returns the first one (-1 on error).
  integer(c_int) function frecv(n, src, tag) bind(C, name="frecv")
    integer(c_int), value :: n, src, tag
    integer :: buf(n), ierr, st(MPI_STATUS_SIZE)
    buf = -1
    call MPI_Recv(buf, n, MPI_INTEGER, src, tag, MPI_COMM_WORLD, st, ierr)
    frecv = buf(1)
    if (ierr /= MPI_SUCCESS .or. st(MPI_SOURCE) /= src) frecv = -1
  end function frecv

  ! Nonblocking receive into a C buffer, completed by C (MPI_Wait on the
  ! converted request) or by Fortran (fwait).
  integer(c_int) function firecv(buf, n, src, tag) bind(C, name="firecv")
    integer(c_int), value :: n, src, tag
    integer(c_int) :: buf(n)
    integer :: req, ierr
    call MPI_Irecv(buf, n, MPI_INTEGER, src, tag, MPI_COMM_WORLD, req, ierr)
    firecv = req
  end function firecv

  subroutine fwait(req) bind(C, name="fwait")
    integer(c_int) :: req
    integer :: ierr
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  end subroutine fwait

  ! A communicator made in Fortran, handed to C as a Fortran handle.
  integer(c_int) function fdup() bind(C, name="fdup")
    integer :: c, ierr
    call MPI_Comm_dup(MPI_COMM_WORLD, c, ierr)
    fdup = c
  end function fdup

  ! Sits in a barrier (the real MPI) while a C peer's MPI_Ssend waits.
  subroutine fbarrier() bind(C, name="fbarrier")
    integer :: ierr
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end subroutine fbarrier
end module p2p_cfort_lib

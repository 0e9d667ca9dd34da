! profile_fortran.f90 - a known set of MPI calls from Fortran (`use mpi`),
! for HEAPMPI_PROFILE (tests/profile.rs): rank 0 sends 4 messages of 10
! integers to rank 1 (MPI_Send / MPI_Recv), then every rank makes 3
! MPI_Allreduce of 5 double precision values. Prints nothing; stops with
! an error code if the data is wrong.
program profile_fortran
    use mpi
    implicit none
    integer :: ierr, rank, nranks, i, buf(10), st(MPI_STATUS_SIZE)
    double precision :: a(5), b(5)
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    buf = 7
    do i = 1, 4
        if (rank == 0) then
            call MPI_Send(buf, 10, MPI_INTEGER, 1, i, MPI_COMM_WORLD, ierr)
        else if (rank == 1) then
            buf = 0
            call MPI_Recv(buf, 10, MPI_INTEGER, 0, i, MPI_COMM_WORLD, st, ierr)
            if (buf(10) /= 7) error stop 1
        end if
    end do
    a = 1.0d0
    do i = 1, 3
        call MPI_Allreduce(a, b, 5, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end do
    if (b(5) /= nranks) error stop 2
    call MPI_Finalize(ierr)
end program profile_fortran

! coll_neighbor_f.f90 - the neighbourhood collectives through the Fortran
! bindings (use mpi): MPI_NEIGHBOR_ALLGATHER(V) and MPI_NEIGHBOR_ALLTOALL(V)
! on a 2-D Cartesian grid of all ranks (MPI_DIMS_CREATE), periodic in the
! first dimension, not in the second (MPI_PROC_NULL neighbours at its
! edges), 10 rounds each with 1, 7 and 3000 integers per block.
!
! Under Open MPI the Fortran bindings are heapmpi's own (the MPI's call
! PMPI_*), under MPICH they call the C functions: either way a Fortran halo
! exchange must run on the heap. The program makes no other collective
! call before the report, so HEAPMPI_STATS' "coll: heap=" counts exactly
! these (the test requires all of them).
!
! Every received block is checked against what its source sent: on the
! Cartesian grid what goes +1 arrives from -1, except that with 2 ranks or
! fewer along a dimension the MPIs pair the two blocks between one pair of
! ranks differently (see tests/c/coll_neighbor.c), so there only the source
! is checked; untouched blocks (MPI_PROC_NULL) must keep their sentinel.
! Each rank's checksums of its receive buffers are gathered to rank 0 and
! printed, so stdout is compared with the stock MPI's byte for byte.
program coll_neighbor_f
  use mpi
  implicit none
  integer, parameter :: rounds = 10, big = 3000, sentinel = -77
  integer :: ierr, rank, nranks, grid, dims(2), nbr(4), k, j, r, c, n, nfail
  integer :: sizes(3), calls
  logical :: periods(2)
  integer, allocatable :: sb(:), rb(:), scnt(:), sdsp(:), rcnt(:), rdsp(:)
  integer(kind=8) :: h, hs(4 * 3 * rounds)
  integer(kind=8), allocatable :: all(:)
  integer, allocatable :: fails(:)
  character(len=16) :: names(4)

  names = [character(len=16) :: 'allgather', 'allgatherv', 'alltoall', 'alltoallv']
  sizes = [1, 7, big]
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  dims = 0
  call MPI_DIMS_CREATE(nranks, 2, dims, ierr)
  periods = [.true., .false.]
  call MPI_CART_CREATE(MPI_COMM_WORLD, 2, dims, periods, .false., grid, ierr)
  call MPI_CART_SHIFT(grid, 0, 1, nbr(1), nbr(2), ierr)
  call MPI_CART_SHIFT(grid, 1, 1, nbr(3), nbr(4), ierr)
  allocate(sb(4 * (big + 8)), rb(4 * (big + 8)), scnt(4), sdsp(4), rcnt(4), rdsp(4))
  nfail = 0
  calls = 0
  do c = 1, 4
    do j = 1, 3
      n = sizes(j)
      do r = 1, rounds
        ! Send block k (0-based) holds value(rank, k, i); v forms: the
        ! blocks of dimension d have n + d elements (the same both ways, so
        ! any pairing of the two blocks between one pair of ranks fits),
        ! in reverse order with gaps.
        sb = -1
        rb = sentinel
        do k = 0, 3
          if (c == 2 .or. c == 4) then
            scnt(k + 1) = n + k / 2
            sdsp(k + 1) = (3 - k) * (big + 8)
            rcnt(k + 1) = n + k / 2
            rdsp(k + 1) = (3 - k) * (big + 8)
          else
            scnt(k + 1) = n
            sdsp(k + 1) = k * n
            rcnt(k + 1) = n
            rdsp(k + 1) = k * n
          end if
        end do
        if (c == 2) rcnt = n
        call fill_send()
        select case (c)
        case (1)
          call MPI_NEIGHBOR_ALLGATHER(sb, n, MPI_INTEGER, rb, n, MPI_INTEGER, grid, ierr)
        case (2)
          call MPI_NEIGHBOR_ALLGATHERV(sb, n, MPI_INTEGER, rb, rcnt, rdsp, MPI_INTEGER, grid, ierr)
        case (3)
          call MPI_NEIGHBOR_ALLTOALL(sb, n, MPI_INTEGER, rb, n, MPI_INTEGER, grid, ierr)
        case (4)
          call MPI_NEIGHBOR_ALLTOALLV(sb, scnt, sdsp, MPI_INTEGER, rb, rcnt, rdsp, MPI_INTEGER, grid, ierr)
        end select
        calls = calls + 1
        if (ierr /= MPI_SUCCESS) nfail = nfail + 1
        call check(c, n)
        h = 1469598103934665603_8
        do k = 1, size(rb)
          h = ieor(h, int(rb(k), 8)) * 1099511628211_8
        end do
        hs(((c - 1) * 3 + (j - 1)) * rounds + r) = h
      end do
    end do
  end do
  allocate(all(nranks * size(hs)), fails(nranks))
  call MPI_GATHER(hs, size(hs), MPI_INTEGER8, all, size(hs), MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  call MPI_GATHER(nfail, 1, MPI_INTEGER, fails, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do r = 0, nranks - 1
      do c = 1, 4
        do j = 1, 3
          write(*, '(a,i0,a,a,a,i0,a,z16.16)') 'rank ', r, ': ', trim(names(c)), ' count ', sizes(j), ': ', &
            all(r * size(hs) + ((c - 1) * 3 + (j - 1)) * rounds + rounds)
        end do
      end do
    end do
  end if
  ! Verdicts in rank order, by rank 0.
  if (rank == 0) then
    do r = 0, nranks - 1
      if (fails(r + 1) > 0) then
        write(*, '(a,i0,a,i0,a)') 'rank ', r, ': neighbor FAILED (', fails(r + 1), ')'
      else
        write(*, '(a,i0,a)') 'rank ', r, ': neighbor ok'
      end if
    end do
  end if
  call MPI_COMM_FREE(grid, ierr)
  call MPI_FINALIZE(ierr)
  if (nfail > 0) stop 1

contains

  integer function value(src, blk, i)
    integer, intent(in) :: src, blk, i
    value = src * 1000003 + blk * 7919 + i
  end function value

  subroutine fill_send()
    integer :: kk, ii
    if (c <= 2) then
      do ii = 1, n
        sb(ii) = value(rank, 0, ii)
      end do
    else
      do kk = 0, 3
        do ii = 1, scnt(kk + 1)
          sb(sdsp(kk + 1) + ii) = value(rank, kk, ii)
        end do
      end do
    end if
  end subroutine fill_send

  subroutine check(cc, nn)
    integer, intent(in) :: cc, nn
    integer :: kk, ii, s, want1, want2, got, cnt
    logical :: twin
    do kk = 0, 3
      s = nbr(kk + 1)
      twin = nbr(kk + 1) == nbr(ieor(kk, 1) + 1)
      cnt = rcnt(kk + 1)
      if (cc == 1 .or. cc == 3) cnt = nn
      do ii = 1, cnt
        got = rb(rdsp(kk + 1) + ii)
        if (s == MPI_PROC_NULL) then
          want1 = sentinel
          want2 = sentinel
        else if (cc <= 2) then
          want1 = value(s, 0, ii)
          want2 = want1
        else
          want1 = value(s, ieor(kk, 1), ii)
          want2 = want1
          if (twin) want2 = value(s, kk, ii)
        end if
        if (got /= want1 .and. got /= want2) then
          if (nfail < 5) write(0, '(a,i0,a,a,a,i0,a,i0,a,i0,a,i0,a,i0)') 'rank ', rank, ': FAIL ', trim(names(cc)), &
            ' count ', nn, ' block ', kk, ' element ', ii, ' is ', got, ' want ', want1
          nfail = nfail + 1
          return
        end if
      end do
    end do
  end subroutine check
end program coll_neighbor_f

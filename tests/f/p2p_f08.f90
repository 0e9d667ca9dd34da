! p2p_f08.f90 - point-to-point conformance through the `use mpi_f08`
! bindings: blocking, nonblocking (Waitall, Waitany, Waitsome, Testall,
! Test), persistent, probes, progress (Ssend while the receiver sits in
! MPI_Barrier with its Irecv posted), communicators and buffered mode, as in
! p2p_fortran_body.inc. Rank 0 prints every rank's lines in rank order,
! then "rank N: f08 ok".
program p2p_f08
  use mpi_f08
  use iso_c_binding, only: c_ptr
  implicit none
  integer, parameter :: maxl = 16, linew = 100
  character(len=linew) :: lines(maxl)
  character(len=linew), allocatable :: all(:,:)
  integer :: nlines = 0
  integer :: rank, nprocs, peer, i, k, good, idx, outc, cnt, inds(2), sr, ss
  type(MPI_Status) :: st, sts(2)
  type(MPI_Request) :: reqs(2)
  type(MPI_Message) :: msg
  type(MPI_Comm) :: dupc, splitc
  integer, allocatable, volatile :: a(:), b(:)
  logical :: flag
  character(len=16) :: verdict = 'f08 ok'
  character(len=1), target :: bbuf(65536)
  type(c_ptr) :: bptr
  integer :: bsz

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  peer = ieor(rank, 1)
  if (peer >= nprocs) peer = rank
  allocate(a(300000), b(300000))
  do i = 1, 300000
    a(i) = i * 3 + rank
  end do

  ! ---- A blocking (self through Isend)
  good = 0
  do k = 1, 3
    cnt = merge(1, merge(1000, 300000, k == 2), k == 1)
    b = -1
    if (rank == peer) then
      call MPI_Isend(a, cnt, MPI_INTEGER, peer, 10 + k, MPI_COMM_WORLD, reqs(1))
      call MPI_Recv(b, cnt, MPI_INTEGER, peer, 10 + k, MPI_COMM_WORLD, st)
      call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
    else if (rank < peer) then
      call MPI_Send(a, cnt, MPI_INTEGER, peer, 10 + k, MPI_COMM_WORLD)
      call MPI_Recv(b, cnt, MPI_INTEGER, peer, 10 + k, MPI_COMM_WORLD, st)
    else
      call MPI_Recv(b, cnt, MPI_INTEGER, peer, 10 + k, MPI_COMM_WORLD, st)
      call MPI_Send(a, cnt, MPI_INTEGER, peer, 10 + k, MPI_COMM_WORLD)
    end if
    call MPI_Get_count(st, MPI_INTEGER, i)
    if (i == cnt .and. st%MPI_SOURCE == peer .and. st%MPI_TAG == 10 + k .and. &
        b(cnt) == cnt * 3 + peer) good = good + 1
  end do
  call report('A blocking', good, 3)

  ! ---- B nonblocking
  good = 0
  do k = 1, 5
    b(1:100) = -1
    call MPI_Irecv(b, 100, MPI_INTEGER, MPI_ANY_SOURCE, 30 + k, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(a, 100, MPI_INTEGER, peer, 30 + k, MPI_COMM_WORLD, reqs(2))
    select case (k)
    case (1)
      call MPI_Waitall(2, reqs, sts)
      if (sts(1)%MPI_SOURCE == peer .and. sts(1)%MPI_TAG == 31) good = good + 1
    case (2)
      ! Only the completions are checked, not the index: stock MPICH 4.0's
      ! Fortran bindings return MPI_UNDEFINED + 1 with nothing active
      ! (mpif.h) and the 0-based index (mpi_f08).
      do i = 1, 2
        call MPI_Waitany(2, reqs, idx, st)
      end do
      good = good + 1
    case (3)
      cnt = 0
      do while (cnt < 2)
        call MPI_Waitsome(2, reqs, outc, inds, sts)
        if (outc /= MPI_UNDEFINED) cnt = cnt + outc
      end do
      if (cnt == 2) good = good + 1
    case (4)
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE)
      end do
      good = good + 1
    case (5)
      flag = .false.
      do while (.not. flag)
        call MPI_Test(reqs(1), flag, st)
      end do
      call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
      if (st%MPI_TAG == 35) good = good + 1
    end select
    if (reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL .and. &
        b(100) == 300 + peer) good = good + 1
  end do
  call report('B nonblocking', good, 10)

  ! ---- C persistent
  good = 0
  call MPI_Send_init(a, 50, MPI_INTEGER, peer, 40, MPI_COMM_WORLD, reqs(1))
  call MPI_Recv_init(b, 50, MPI_INTEGER, peer, 40, MPI_COMM_WORLD, reqs(2))
  do k = 1, 100
    a(1) = k * 10 + rank
    call MPI_Startall(2, reqs)
    call MPI_Waitall(2, reqs, sts)
    if (b(1) == k * 10 + peer .and. b(50) == 150 + peer) good = good + 1
  end do
  a(1) = 3 + rank
  call MPI_Request_free(reqs(1))
  call MPI_Request_free(reqs(2))
  call report('C persistent', good, 100)

  ! ---- D probes
  good = 0
  call MPI_Isend(a, 7, MPI_INTEGER, peer, 50, MPI_COMM_WORLD, reqs(1))
  call MPI_Probe(peer, 50, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  if (cnt == 7) good = good + 1
  call MPI_Recv(b, 7, MPI_INTEGER, peer, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  call MPI_Isend(a, 9, MPI_INTEGER, peer, 52, MPI_COMM_WORLD, reqs(1))
  call MPI_Mprobe(peer, 52, MPI_COMM_WORLD, msg, st)
  call MPI_Mrecv(b, 9, MPI_INTEGER, msg, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  if (cnt == 9 .and. b(9) == 27 + peer) good = good + 1
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  call report('D probes', good, 2)

  ! ---- E progress
  good = 0
  if (rank < peer) then
    call MPI_Ssend(a, 100000, MPI_INTEGER, peer, 60, MPI_COMM_WORLD)
    call MPI_Barrier(MPI_COMM_WORLD)
    good = 1
  else if (rank > peer) then
    call MPI_Irecv(b, 100000, MPI_INTEGER, peer, 60, MPI_COMM_WORLD, reqs(1))
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Wait(reqs(1), st)
    if (b(100000) == 300000 + peer) good = 1
  else
    call MPI_Barrier(MPI_COMM_WORLD)
    good = 1
  end if
  call report('E progress', good, 1)

  ! ---- F communicators
  good = 0
  call MPI_Comm_dup(MPI_COMM_WORLD, dupc)
  call MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, splitc)
  call MPI_Sendrecv(a, 5, MPI_INTEGER, peer, 70, b, 5, MPI_INTEGER, peer, 70, dupc, st)
  if (b(5) == 15 + peer) good = good + 1
  call MPI_Comm_rank(splitc, sr)
  call MPI_Comm_size(splitc, ss)
  call MPI_Sendrecv(a, 5, MPI_INTEGER, mod(sr + 1, ss), 71, b, 5, MPI_INTEGER, &
                    mod(sr + ss - 1, ss), 71, splitc, st)
  if (b(5) == 15 + (rank / 2) * 2 + mod(sr + ss - 1, ss)) good = good + 1
  call MPI_Comm_free(splitc)
  call MPI_Comm_free(dupc)
  if (dupc == MPI_COMM_NULL .and. splitc == MPI_COMM_NULL) good = good + 1
  call report('F communicators', good, 3)

  ! Buffered mode, with MPI_Buffer_attach/detach called without ierror (a
  ! null ierr: MPICH's binding wrote it and crashed under heapmpi)
  good = 0
  call MPI_Buffer_attach(bbuf, size(bbuf))
  call MPI_Bsend(a, 5, MPI_INTEGER, peer, 72, MPI_COMM_WORLD)
  call MPI_Recv(b, 5, MPI_INTEGER, peer, 72, MPI_COMM_WORLD, st)
  if (b(5) == 15 + peer) good = good + 1
  call MPI_Buffer_detach(bptr, bsz)
  if (bsz == size(bbuf)) good = good + 1
  call report('G buffered, no ierror', good, 2)

  call flush_report()
  call MPI_Finalize()

contains

  subroutine report(what, got, want)
    character(len=*), intent(in) :: what
    integer, intent(in) :: got, want
    nlines = nlines + 1
    write (lines(nlines), '(a,i0,a,a,a,i0,a,i0,a)') 'rank ', rank, ': ', what, ': ', got, &
      ' of ', want, ' checks'
    if (got /= want) verdict = 'f08 FAILED'
  end subroutine report

  subroutine flush_report()
    integer :: r, j, n
    nlines = nlines + 1
    write (lines(nlines), '(a,i0,a,a)') 'rank ', rank, ': ', trim(verdict)
    n = nlines
    allocate(all(maxl, nprocs))
    call MPI_Gather(lines, maxl * linew, MPI_CHARACTER, all, maxl * linew, MPI_CHARACTER, &
                    0, MPI_COMM_WORLD)
    if (rank == 0) then
      do r = 1, nprocs
        do j = 1, n - 1
          write (*, '(a)') trim(all(j, r))
        end do
      end do
      do r = 1, nprocs
        write (*, '(a)') trim(all(n, r))
      end do
    end if
  end subroutine flush_report
end program p2p_f08

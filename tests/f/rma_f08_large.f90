! rma_f08_large.f90 - the `use mpi_f08` large-count specifics that MPICH
! implements with PMPI_*_c: MPI_Win_allocate and MPI_Win_allocate_shared
! with an INTEGER(MPI_ADDRESS_KIND) displacement unit, MPI_Win_shared_query
! with an INTEGER(MPI_ADDRESS_KIND) unit out, MPI_Buffer_detach with an
! INTEGER(MPI_COUNT_KIND) size (mpi_x_f08_large_ in libmpichfort).
!
! Why: those specifics call the real MPI's PMPI_*_c directly. Without
! heapmpi's own definitions (src/fortran/large.rs) the windows were the
! real MPI's, never on the shared heap (the test checks `rma: windows
! heap=N`, N > 0, at 2 ranks), and a buffer detached this way stayed
! attached for heapmpi's buffered sends: a later MPI_Bsend without a
! buffer succeeded under heapmpi where stock MPICH returns MPI_ERR_BUFFER.
!
! Output (stdout, rank 0, rank order): per rank one line per section, then
! "rank N: f08large ok" (or "f08large FAILED", and exit status 1).
program rma_f08_large
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer, parameter :: maxl = 12, linew = 200
  character(len=linew) :: lines(maxl) = ' '
  character(len=linew), allocatable :: gathered(:, :)
  character(len=24) :: verdict = 'f08large ok'
  integer :: nlines = 0
  integer :: ierr, rank, nprocs, left, right

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  call allocate_section()
  call shared_section()
  call bsend_section()

  call flush_report()
  call MPI_Finalize(ierr)
  if (verdict /= 'f08large ok') error stop 1

contains

  ! Win_allocate, disp unit 4 of kind MPI_ADDRESS_KIND: each rank fills its
  ! window, then gets its right neighbour's words 3..6 and puts its rank
  ! into the left neighbour's word 0 under fences.
  subroutine allocate_section()
    type(MPI_Win) :: win
    type(c_ptr) :: bp
    integer, pointer :: a(:)
    integer :: got(4), i
    integer(kind=MPI_ADDRESS_KIND) :: sz
    character(len=linew) :: s
    sz = 16 * 4
    call MPI_Win_allocate(sz, 4_MPI_ADDRESS_KIND, MPI_INFO_NULL, MPI_COMM_WORLD, bp, win, ierr)
    call check(ierr == MPI_SUCCESS, 'A Win_allocate (large)')
    call c_f_pointer(bp, a, [16])
    a = [(100 * rank + i, i = 0, 15)]
    got = -1
    call MPI_Win_fence(0, win)
    call MPI_Get(got, 4, MPI_INTEGER, right, 3_MPI_ADDRESS_KIND, 4, MPI_INTEGER, win)
    call MPI_Put(rank, 1, MPI_INTEGER, left, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    write (s, '(a,4(1x,i0),a,i0)') 'A got', got, '; word 0 now ', a(1)
    call add(s)
    call check(all(got == [(100 * right + i, i = 3, 6)]), 'A Get through a large-unit window')
    call check(a(1) == right, 'A Put through a large-unit window')
    call MPI_Win_free(win)
  end subroutine allocate_section

  ! Win_allocate_shared, disp unit 8 of kind MPI_ADDRESS_KIND; every rank
  ! queries its right neighbour's segment (size and unit of kind
  ! MPI_ADDRESS_KIND) and reads its first word by load after a fence.
  subroutine shared_section()
    type(MPI_Win) :: win
    type(c_ptr) :: bp, qp
    integer(kind=MPI_ADDRESS_KIND), pointer :: a(:), q(:)
    integer(kind=MPI_ADDRESS_KIND) :: sz, qsz, qunit
    character(len=linew) :: s
    sz = 4 * 8
    call MPI_Win_allocate_shared(sz, 8_MPI_ADDRESS_KIND, MPI_INFO_NULL, MPI_COMM_WORLD, bp, win, ierr)
    call check(ierr == MPI_SUCCESS, 'S Win_allocate_shared (large)')
    call c_f_pointer(bp, a, [4])
    call MPI_Win_fence(0, win)
    a = 1000 + 10 * rank
    call MPI_Win_fence(0, win)
    call MPI_Win_shared_query(win, right, qsz, qunit, qp, ierr)
    call check(ierr == MPI_SUCCESS, 'S Win_shared_query (large)')
    call c_f_pointer(qp, q, [4])
    write (s, '(a,i0,a,i0,a,i0,a,i0)') 'S right ', right, ': size ', qsz, ' unit ', qunit, &
      ' first ', q(1)
    call add(s)
    call check(qsz == sz .and. qunit == 8 .and. q(1) == 1000 + 10 * right, &
               'S the neighbour''s segment')
    call MPI_Win_fence(0, win)
    call MPI_Win_free(win)
  end subroutine shared_section

  ! Buffer_attach and Buffer_detach with MPI_COUNT_KIND sizes around a
  ! Bsend to the right neighbour; then, with no buffer attached, a Bsend
  ! must fail with MPI_ERR_BUFFER (errors returned).
  subroutine bsend_section()
    integer(kind=MPI_COUNT_KIND) :: bsz, dsz
    character, allocatable, target :: buf(:)
    type(c_ptr) :: dp
    integer :: v, w, cls
    type(MPI_Status) :: st
    character(len=linew) :: s
    bsz = 4096
    allocate(buf(bsz))
    call MPI_Buffer_attach(buf, bsz, ierr)
    call check(ierr == MPI_SUCCESS, 'B Buffer_attach (large)')
    v = 7 + rank
    call MPI_Bsend(v, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'B Bsend with a buffer')
    call MPI_Recv(w, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, st)
    call MPI_Buffer_detach(dp, dsz, ierr)
    call check(ierr == MPI_SUCCESS .and. dsz == bsz, 'B Buffer_detach (large)')
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    call MPI_Bsend(v, 1, MPI_INTEGER, right, 6, MPI_COMM_WORLD, ierr)
    cls = -1
    if (ierr /= MPI_SUCCESS) call MPI_Error_class(ierr, cls)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
    write (s, '(a,i0,a,i0,a,l1)') 'B received ', w, '; detached ', dsz, &
      '; Bsend without a buffer fails with MPI_ERR_BUFFER: ', cls == MPI_ERR_BUFFER
    call add(s)
    call check(w == 7 + left, 'B the buffered message')
    call check(cls == MPI_ERR_BUFFER, 'B Bsend after Buffer_detach (large)')
    deallocate(buf)
  end subroutine bsend_section

  subroutine add(msg)
    character(len=*), intent(in) :: msg
    if (nlines >= maxl - 1) then
      verdict = 'f08large FAILED'
      return
    end if
    nlines = nlines + 1
    write (lines(nlines), '(a,i0,a,a)') 'rank ', rank, ': ', trim(msg)
  end subroutine add

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    verdict = 'f08large FAILED'
    call add('FAIL ' // what)
  end subroutine check

  subroutine flush_report()
    integer :: r, j
    nlines = nlines + 1
    write (lines(nlines), '(a,i0,a,a)') 'rank ', rank, ': ', trim(verdict)
    lines(nlines + 1:) = ' '
    allocate(gathered(maxl, nprocs))
    gathered = ' '
    call MPI_Gather(lines, maxl * linew, MPI_CHARACTER, gathered, maxl * linew, MPI_CHARACTER, &
                    0, MPI_COMM_WORLD)
    if (rank == 0) then
      ! Every rank's lines, then the verdicts together at the end.
      do r = 1, nprocs
        do j = 1, maxl
          if (len_trim(gathered(j, r)) == 0) exit
          if (index(gathered(j, r), ': f08large ') /= 0) exit
          write (*, '(a)') trim(gathered(j, r))
        end do
      end do
      do r = 1, nprocs
        do j = 1, maxl
          if (index(gathered(j, r), ': f08large ') /= 0) write (*, '(a)') trim(gathered(j, r))
        end do
      end do
    end if
  end subroutine flush_report
end program rma_f08_large

! rma_f08.f90 - one-sided conformance through the `use mpi_f08` bindings:
! the twin of rma_fortran_body.inc (which see for what each section checks
! and why), with the handles typed (TYPE(MPI_Win), TYPE(MPI_Group),
! TYPE(MPI_Request)), every base address a TYPE(C_PTR) (Win_allocate,
! Alloc_mem, Win_allocate_shared, Win_shared_query, turned into Fortran
! pointers with c_f_pointer), and the optional ierror given only where it
! is checked. It cannot share the include: the declarations of every
! handle differ. Keep the two in step.
!
! Why: under Open MPI, the mpi_f08 procedures call ompi_*_f (pmpi_*_ for
! Win_test and Win_get_attr), which heapmpi defines itself
! (src/fortran/rma.rs); under MPICH, the communication calls, Win_create,
! Win_attach, Win_detach and Free_mem reach heapmpi through the C MPI_*
! functions, while Alloc_mem, Win_allocate(_shared), Win_create_dynamic,
! Win_free, Win_shared_query, Win_get_attr and every synchronisation call
! PMPI_* there and are heapmpi's own (mpi_win_fence_f08_, ...). Either way
! the program must get exactly what the stock MPI gives it, and (at 2
! ranks) its windows must run on the shared heap, fences and locks
! included.
!
! Output (stdout, rank 0, rank order): per rank and section one line of
! values, failures, then "rank N: fortran ok" (or "fortran FAILED", and
! exit status 1).
program rma_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer, parameter :: nw = 16, maxl = 24, linew = 200
  character(len=linew) :: lines(maxl) = ' '
  character(len=linew), allocatable :: gathered(:, :)
  character(len=24) :: verdict = 'fortran ok'
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: libv
  integer :: nlines = 0
  integer :: ierr, rank, nprocs, left, right, k
  logical :: ompi
  ! The window memory of section C: an array in a common block (static,
  ! outside the shared heap, 8-byte aligned: stock MPICH 4.0.2 rounds the
  ! base of a Win_create window down to a multiple of 8 bytes, so a
  ! window over an array at 4 mod 8, as a main-program array may be,
  ! reads and writes the 4 bytes before it there).
  integer :: fa(32)
  common /rma_fortran_fa/ fa

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  call MPI_Get_library_version(libv, k)
  ompi = index(libv, 'Open MPI') /= 0

  call win_allocate_section()
  call shared_section()
  if (ompi .and. nprocs == 1) then
    call add('B C D: no Win_create or Win_create_dynamic on one process under Open MPI')
  else
    call alloc_mem_section()
    call array_section()
    call dynamic_section()
  end if

  call flush_report()
  call MPI_Finalize(ierr)
  if (verdict /= 'fortran ok') error stop 1

contains

  ! ---------------------------------------------------------------- A

  subroutine win_allocate_section()
    type(MPI_Win) :: win
    integer :: i, n1, res, res2, cmp, newv, fetched, total, now1, now2, lockput
    integer(kind=MPI_ADDRESS_KIND) :: sz, disp, val
    type(c_ptr) :: bp
    integer, pointer :: a(:)
    integer :: putv(4), got(4), aflav
    integer, allocatable :: allf(:)
    logical :: flag, ok
    character(len=linew) :: s

    sz = 4 * nw
    call MPI_Win_allocate(sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, bp, win, ierr)
    call check(ierr == MPI_SUCCESS, 'A Win_allocate')
    call c_f_pointer(bp, a, (/ nw /))
    a = (/ (1000 * rank + i, i = 1, nw) /)
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag)
    aflav = int(val)
    call check(flag .and. val == MPI_WIN_FLAVOR_ALLOCATE, 'A flavour')
    call MPI_Win_get_attr(win, MPI_WIN_BASE, val, flag)
    call check(flag .and. val == transfer(bp, val), 'A base is the returned address')
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag)
    call check(flag .and. val == sz, 'A size')

    ! Fence: Put to right, Get from left, Accumulate on rank 0.
    call MPI_Win_fence(0, win)
    putv = (/ (100 * rank + i, i = 1, 4) /)
    disp = 0
    call MPI_Put(putv, 4, MPI_INTEGER, right, disp, 4, MPI_INTEGER, win)
    disp = 8
    call MPI_Get(got, 4, MPI_INTEGER, left, disp, 4, MPI_INTEGER, win)
    n1 = rank + 1
    disp = 4
    call MPI_Accumulate(n1, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_SUM, win)
    call MPI_Win_fence(MPI_MODE_NOSUCCEED, win)
    ok = all(a(1:4) == (/ (100 * left + i, i = 1, 4) /)) .and. &
         all(got == (/ (1000 * left + 8 + i, i = 1, 4) /))
    if (rank == 0) ok = ok .and. a(5) == 5 + nprocs * (nprocs + 1) / 2
    call check(ok, 'A fence put/get/accumulate')
    write (s, '(a,i0,a,4(1x,i0),a,4(1x,i0),a,i0)') 'A Win_allocate flavour ', aflav, &
      '; fence: put', a(1:4), ', get', got, ', acc ', a(5)
    call add(s)

    ! Lock(EXCLUSIVE) on right: Put.
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win)
    disp = 12
    call MPI_Put(rank, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win)
    call MPI_Win_unlock(right, win)
    call MPI_Barrier(MPI_COMM_WORLD)
    lockput = own_int(win, 12_MPI_ADDRESS_KIND)
    call check(lockput == left, 'A lock put')

    ! Lock_all: Fetch_and_op on rank 0's a(14) from every rank.
    call MPI_Win_lock_all(0, win)
    disp = 13
    n1 = 1
    call MPI_Fetch_and_op(n1, fetched, MPI_INTEGER, 0, disp, MPI_SUM, win)
    call MPI_Win_flush(0, win)
    call MPI_Win_unlock_all(win)
    allocate(allf(nprocs))
    call MPI_Allgather(fetched, 1, MPI_INTEGER, allf, 1, MPI_INTEGER, MPI_COMM_WORLD)
    ok = .true.
    do i = 0, nprocs - 1
      ok = ok .and. count(allf == 14 + i) == 1
    end do
    call MPI_Barrier(MPI_COMM_WORLD)
    total = 14 + nprocs
    if (rank == 0) total = own_int(win, 13_MPI_ADDRESS_KIND)
    call check(ok .and. total == 14 + nprocs, 'A fetch_and_op')

    ! Lock(EXCLUSIVE) on right: a Compare_and_swap that swaps, one that
    ! does not.
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win)
    cmp = 1000 * right + 15
    newv = rank
    disp = 14
    call MPI_Compare_and_swap(newv, cmp, res, MPI_INTEGER, right, disp, win)
    call MPI_Win_flush(right, win)
    cmp = -5
    disp = 15
    call MPI_Compare_and_swap(newv, cmp, res2, MPI_INTEGER, right, disp, win)
    call MPI_Win_unlock(right, win)
    call MPI_Barrier(MPI_COMM_WORLD)
    ok = res == 1000 * right + 15 .and. res2 == 1000 * right + 16
    now1 = own_int(win, 14_MPI_ADDRESS_KIND)
    now2 = own_int(win, 15_MPI_ADDRESS_KIND)
    ok = ok .and. now1 == left .and. now2 == 1000 * rank + 16
    call check(ok, 'A compare_and_swap')
    write (s, '(a,i0,a,i0,a,i0,1x,i0,a,i0,1x,i0)') 'A lock put ', lockput, &
      '; fetch_and_op total ', total, '; cas fetched ', res, res2, ', now ', now1, now2
    call add(s)

    call MPI_Win_free(win, ierr)
    call check(ierr == MPI_SUCCESS .and. win == MPI_WIN_NULL, 'A Win_free')
  end subroutine win_allocate_section

  ! The integer at displacement disp of the own window, fetched by a Get
  ! under a shared lock on the own rank.
  integer function own_int(win, disp)
    type(MPI_Win), intent(in) :: win
    integer(kind=MPI_ADDRESS_KIND), intent(in) :: disp
    integer :: v
    call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win)
    call MPI_Get(v, 1, MPI_INTEGER, rank, disp, 1, MPI_INTEGER, win)
    call MPI_Win_unlock(rank, win)
    own_int = v
  end function own_int

  ! ---------------------------------------------------------------- S

  subroutine shared_section()
    type(MPI_Win) :: win
    integer :: du, i, sflav
    integer(kind=MPI_ADDRESS_KIND) :: sz, qsz, val
    type(c_ptr) :: cp, qp
    integer, pointer :: mine(:), theirs(:)
    logical :: flag, ok
    character(len=linew) :: s

    sz = 4 * 8
    call MPI_Win_allocate_shared(sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, cp, win, ierr)
    call check(ierr == MPI_SUCCESS, 'S Win_allocate_shared')
    call c_f_pointer(cp, mine, (/ 8 /))
    call MPI_Win_shared_query(win, right, qsz, du, qp)
    call c_f_pointer(qp, theirs, (/ 8 /))
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag)
    sflav = int(val)
    call check(flag .and. val == MPI_WIN_FLAVOR_SHARED, 'S flavour')
    call MPI_Win_lock_all(MPI_MODE_NOCHECK, win)
    mine = (/ (100 * rank + i, i = 1, 8) /)
    call MPI_Win_sync(win)
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Win_sync(win)
    ok = qsz == sz .and. du == 4 .and. all(theirs == (/ (100 * right + i, i = 1, 8) /))
    call check(ok, 'S shared loads')
    write (s, '(a,i0,a,i0,a,i0,a,8(1x,i0))') 'S Win_allocate_shared flavour ', sflav, &
      '; query right: size ', qsz, ' disp_unit ', du, '; loads', theirs
    call add(s)
    call MPI_Win_unlock_all(win)
    call MPI_Win_free(win, ierr)
  end subroutine shared_section

  ! ---------------------------------------------------------------- B

  subroutine alloc_mem_section()
    type(MPI_Win) :: win
    type(MPI_Group) :: wgrp, pgrp, sgrp
    integer :: i, bflav
    integer(kind=MPI_ADDRESS_KIND) :: sz, disp, val
    type(c_ptr) :: bp
    double precision, pointer :: d(:)
    double precision :: pv(2), acc, gin, gout
    logical :: flag, ok
    character(len=linew) :: s

    sz = 8 * nw
    call MPI_Alloc_mem(sz, MPI_INFO_NULL, bp, ierr)
    call check(ierr == MPI_SUCCESS, 'B Alloc_mem')
    call c_f_pointer(bp, d, (/ nw /))
    d = (/ (rank + 0.25d0 * i, i = 1, nw) /)
    call MPI_Win_create(d, sz, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag)
    bflav = int(val)
    call check(flag .and. val == MPI_WIN_FLAVOR_CREATE, 'B flavour')
    call MPI_Comm_group(MPI_COMM_WORLD, wgrp)
    call MPI_Group_incl(wgrp, 1, (/ left /), pgrp)
    call MPI_Group_incl(wgrp, 1, (/ right /), sgrp)

    call MPI_Win_post(pgrp, 0, win)
    call MPI_Win_start(sgrp, 0, win)
    pv = (/ rank + 0.5d0, rank + 0.25d0 /)
    disp = 0
    call MPI_Put(pv, 2, MPI_DOUBLE_PRECISION, right, disp, 2, MPI_DOUBLE_PRECISION, win)
    acc = 1.5d0 * rank
    disp = 2
    call MPI_Accumulate(acc, 1, MPI_DOUBLE_PRECISION, right, disp, 1, MPI_DOUBLE_PRECISION, &
                        MPI_SUM, win)
    gin = 2.0d0
    disp = 3
    call MPI_Get_accumulate(gin, 1, MPI_DOUBLE_PRECISION, gout, 1, MPI_DOUBLE_PRECISION, &
                            right, disp, 1, MPI_DOUBLE_PRECISION, MPI_SUM, win)
    call MPI_Win_complete(win)
    call MPI_Win_wait(win)
    ok = d(1) == left + 0.5d0 .and. d(2) == left + 0.25d0 .and. &
         d(3) == rank + 0.75d0 + 1.5d0 * left .and. d(4) == rank + 3.0d0 .and. &
         gout == right + 1.0d0
    call check(ok, 'B PSCW put/accumulate/get_accumulate')

    ! A second epoch, ended by a Win_test loop.
    call MPI_Win_post(pgrp, 0, win)
    call MPI_Win_start(sgrp, 0, win)
    pv(1) = 10.0d0 * rank
    disp = 4
    call MPI_Put(pv, 1, MPI_DOUBLE_PRECISION, right, disp, 1, MPI_DOUBLE_PRECISION, win)
    call MPI_Win_complete(win)
    flag = .false.
    do while (.not. flag)
      call MPI_Win_test(win, flag)
    end do
    call check(d(5) == 10.0d0 * left, 'B PSCW Win_test')
    write (s, '(a,i0,a,5(1x,f0.2),a,f0.2)') 'B Win_create over Alloc_mem flavour ', bflav, &
      '; pscw:', d(1:5), '; get_accumulate ', gout
    call add(s)

    call MPI_Group_free(pgrp)
    call MPI_Group_free(sgrp)
    call MPI_Group_free(wgrp)
    call MPI_Win_free(win, ierr)
    call MPI_Free_mem(d(1), ierr)
    call check(ierr == MPI_SUCCESS, 'B Free_mem')
  end subroutine alloc_mem_section

  ! ---------------------------------------------------------------- C

  subroutine array_section()
    type(MPI_Win) :: win
    type(MPI_Request) :: reqs(4)
    integer :: i, mx, got(4), v, r1, inc, gin, gout, tail(4)
    integer(kind=MPI_ADDRESS_KIND) :: sz, disp
    logical :: ok
    character(len=linew) :: s

    fa = (/ (1000 * rank + i, i = 1, 32) /)
    call MPI_Get_address(fa, disp)
    call check(mod(disp, 8_MPI_ADDRESS_KIND) == 0, 'C the array is 8-byte aligned')
    sz = 4 * 32
    call MPI_Win_create(fa, sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    call check(ierr == MPI_SUCCESS, 'C Win_create')
    call MPI_Win_fence(MPI_MODE_NOPRECEDE, win)
    disp = 0
    call MPI_Get(got, 4, MPI_INTEGER, right, disp, 4, MPI_INTEGER, win)
    mx = 5000 + rank
    disp = 4
    call MPI_Accumulate(mx, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_MAX, win)
    call MPI_Win_fence(MPI_MODE_NOSUCCEED, win)
    ok = all(got == (/ (1000 * right + i, i = 1, 4) /))
    if (rank == 0) ok = ok .and. fa(5) == 5000 + nprocs - 1
    call check(ok, 'C fence get/accumulate')

    ! Lock_all: request-based operations, flushes.
    call MPI_Win_lock_all(0, win)
    v = rank + 1
    disp = 10 + rank
    call MPI_Rput(v, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, reqs(1))
    disp = 20
    call MPI_Rget(r1, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, reqs(2))
    inc = 7
    disp = 21
    call MPI_Raccumulate(inc, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, MPI_SUM, win, &
                         reqs(3))
    gin = 0
    disp = 22
    call MPI_Rget_accumulate(gin, 1, MPI_INTEGER, gout, 1, MPI_INTEGER, right, disp, 1, &
                             MPI_INTEGER, MPI_NO_OP, win, reqs(4))
    call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
    ok = ierr == MPI_SUCCESS
    do i = 1, 4
      ok = ok .and. reqs(i) == MPI_REQUEST_NULL
    end do
    call check(ok, 'C Waitall')
    call MPI_Win_flush_local_all(win)
    call MPI_Win_flush_all(win)
    call MPI_Win_flush_local(0, win)
    call MPI_Win_sync(win)
    call MPI_Win_unlock_all(win)
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win)
    disp = 10
    call MPI_Get(tail, 4, MPI_INTEGER, rank, disp, 4, MPI_INTEGER, win)
    disp = 21
    call MPI_Get(v, 1, MPI_INTEGER, rank, disp, 1, MPI_INTEGER, win)
    call MPI_Win_unlock(rank, win)
    ok = r1 == 1000 * right + 21 .and. gout == 1000 * right + 23 .and. v == 1000 * rank + 22 + 7
    if (rank == 0) ok = ok .and. all(tail(1:min(nprocs, 4)) == (/ (i, i = 1, min(nprocs, 4)) /))
    call check(ok, 'C request-based')
    write (s, '(a,4(1x,i0),a,i0,a,i0,1x,i0,a,i0)') 'C Win_create over an array: fence get', got, &
      ', max ', merge(fa(5), -1, rank == 0), '; rget ', r1, gout, ', raccumulate ', v
    call add(s)
    call MPI_Win_free(win, ierr)
  end subroutine array_section

  ! ---------------------------------------------------------------- D

  subroutine dynamic_section()
    type(MPI_Win) :: win
    integer :: i, v, g, dflav
    integer, allocatable, target :: dyn(:)
    integer(kind=MPI_ADDRESS_KIND) :: addr, sz, disp, val
    integer(kind=MPI_ADDRESS_KIND), allocatable :: addrs(:)
    logical :: flag, ok
    character(len=linew) :: s

    allocate(dyn(8), addrs(nprocs))
    dyn = (/ (1000 * rank + i, i = 1, 8) /)
    call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win)
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag)
    dflav = int(val)
    call check(flag .and. val == MPI_WIN_FLAVOR_DYNAMIC, 'D flavour')
    sz = 4 * 8
    call MPI_Win_attach(win, dyn, sz)
    call MPI_Get_address(dyn(1), addr)
    call MPI_Allgather(addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD)
    call MPI_Win_fence(0, win)
    v = 100 + rank
    disp = addrs(right + 1) + 4
    call MPI_Put(v, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win)
    disp = addrs(left + 1) + 8
    call MPI_Get(g, 1, MPI_INTEGER, left, disp, 1, MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    ok = dyn(2) == 100 + left .and. g == 1000 * left + 3
    call check(ok, 'D dynamic put/get')
    write (s, '(a,i0,a,i0,a,i0)') 'D Win_create_dynamic flavour ', dflav, ': put ', dyn(2), &
      ', get ', g
    call add(s)
    call MPI_Win_detach(win, dyn)
    call MPI_Win_free(win, ierr)
    call check(ierr == MPI_SUCCESS, 'D Win_free')
  end subroutine dynamic_section

  ! ---------------------------------------------------------------- report

  subroutine add(msg)
    character(len=*), intent(in) :: msg
    if (nlines >= maxl - 1) then
      verdict = 'fortran FAILED'
      return
    end if
    nlines = nlines + 1
    write (lines(nlines), '(a,i0,a,a)') 'rank ', rank, ': ', trim(msg)
  end subroutine add

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    verdict = 'fortran FAILED'
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
      do r = 1, nprocs
        do j = 1, maxl
          if (len_trim(gathered(j, r)) == 0) exit
          if (index(gathered(j, r), ': fortran ') /= 0) exit
          write (*, '(a)') trim(gathered(j, r))
        end do
      end do
      do r = 1, nprocs
        do j = 1, maxl
          if (index(gathered(j, r), ': fortran ') /= 0) write (*, '(a)') trim(gathered(j, r))
        end do
      end do
    end if
  end subroutine flush_report
end program rma_f08

! coll_f08.f90 - collective conformance through the `use mpi_f08`
! bindings: the twin of coll_fortran_body.inc (which see for what each
! section checks and why), with the handles typed (TYPE(MPI_Comm),
! TYPE(MPI_Datatype), TYPE(MPI_Op)), the optional ierror given only where
! it is checked, and the user operations in the mpi_f08 form
! (TYPE(C_PTR) vectors, TYPE(MPI_Datatype)). It cannot share the include:
! the declarations of every handle differ. Keep the two in step.
!
! Why: under Open MPI, the mpi_f08 procedures call ompi_*_f, which heapmpi
! defines itself for the 16 blocking collectives (src/fortran/coll.rs);
! under MPICH, those with a buffer reach heapmpi through the C MPI_*
! functions, and mpi_barrier_f08_ is heapmpi's own. Either way the program
! must get exactly what the stock MPI gives it.
!
! Sections: A Barrier; B the nine data-movement collectives; C the six
! reductions with 13 (operation, type) pairs including a commutative and a
! non-commutative user operation; D typed Fortran arrays; E MPI_BOTTOM;
! F error classes under MPI_ERRORS_RETURN. Exact values computed locally,
! MPI_IN_PLACE wherever MPI allows it, counts 1, 7 and 5000, rotating
! roots, MPI_COMM_WORLD and a Comm_split with reversed keys, guard words
! and send buffers checked; about 85 collective calls at 4 ranks; the
! same two stock MPICH 4.0.2 bugs avoided under MPICH (as in the include).
!
! Output (stdout, rank 0, rank order): per rank and collective the number
! of cases that passed, the first failure of each collective, the error
! classes, then "rank N: f08 ok" (or "f08 FAILED", and exit status 1).
! P2P_SECTION_TIMES=1 prints the time of each section on stderr.
program coll_f08
  use mpi_f08
  implicit none
  integer, parameter :: maxl = 48, linew = 200
  integer, parameter :: maxr = 8, maxcnt = 5000, ng = 4, maxfail = 8
  integer, parameter :: nwords = (maxcnt + 8) * 4 * maxr + 64
  integer, parameter :: p1 = 1000003, p2 = 10007
  character(len=linew) :: lines(maxl)
  character(len=linew), allocatable :: gathered(:,:)
  character(len=24) :: verdict = 'f08 ok'
  integer :: nlines = 0, nfail = 0, nshown = 0
  ! The collective of the case being checked (1-9: B, 10-15: C; 0:
  ! elsewhere), and those that printed a failure already: one line each.
  integer :: cur = 0
  logical :: shown(0:15) = .false.
  integer :: ierr, rank, nprocs, k, ic, kc, f, o, caseno, good, j
  ! At more than 2 ranks, the (communicator, count, form) combinations
  ! j = (ic - 1) * 6 + (kc - 1) * 2 + f that section B runs for
  ! collective k: bigj(mod(k, 4)) with count 5000, smallj(mod(3 * k, 8))
  ! with count 1 or 7.
  integer, parameter :: bigj(0:3) = (/ 5, 12, 6, 11 /)
  integer, parameter :: smallj(0:7) = (/ 1, 8, 3, 10, 2, 7, 4, 9 /)
  logical :: few
  type(MPI_Comm) :: comms(2), revc
  type(MPI_Datatype) :: mattype
  type(MPI_Op) :: opmod, opmat
  integer :: intdt, matdt
  integer :: counts(3) = (/ 1, 7, maxcnt /)
  integer :: mv_good(9), mv_cases(9), rd_good(6), rd_cases(6)
  ! The user operations (after the program) read the datatypes they must
  ! be called with from here (the MPI_VAL of the handles).
  common /coll_f08_ops/ intdt, matdt
  procedure(MPI_User_function) :: modsum_fn, matmul_fn
  ! Outside heapmpi's heap (gfortran gives large main-program arrays
  ! static storage), and the same size as the allocatable ones.
  integer :: sst(nwords), rst(nwords)
  integer, allocatable :: sal(:), ral(:), ew(:), scopy(:)
  double precision :: t0
  logical :: times, mpich
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: libv
  character(len=8) :: envv

  lines = ' '
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  if (nprocs > maxr) then
    if (rank == 0) write (*, '(a,i0,a)') 'at most ', maxr, ' ranks'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_Get_library_version(libv, k)
  mpich = index(libv, 'MPICH') /= 0
  call get_environment_variable('P2P_SECTION_TIMES', envv)
  times = envv == '1' .and. rank == 0
  t0 = MPI_Wtime()
  few = nprocs >= 3
  allocate(sal(nwords), ral(nwords), ew(nwords), scopy(nwords))
  call MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - 1 - rank, revc)
  comms(1) = MPI_COMM_WORLD
  comms(2) = revc
  call MPI_Type_contiguous(4, MPI_INTEGER, mattype)
  call MPI_Type_commit(mattype)
  intdt = MPI_INTEGER%MPI_VAL
  matdt = mattype%MPI_VAL
  call MPI_Op_create(modsum_fn, .true., opmod)
  call MPI_Op_create(matmul_fn, .false., opmat)

  ! ---- A Barrier
  good = 0
  do ic = 1, 2
    do k = 1, 2
      call MPI_Barrier(comms(ic), ierr)
      if (ierr == MPI_SUCCESS) good = good + 1
    end do
  end do
  call report('A Barrier', good, 4, 'calls')
  call section_time('A')

  ! ---- B data movement
  mv_good = 0
  mv_cases = 0
  caseno = 0
  do k = 1, 9
    do ic = 1, 2
      do kc = 1, 3
        do f = 1, 2
          caseno = caseno + 1
          j = (ic - 1) * 6 + (kc - 1) * 2 + f
          if (few .and. j /= bigj(mod(k, 4)) .and. j /= smallj(mod(3 * k, 8))) cycle
          mv_cases(k) = mv_cases(k) + 1
          if (mod(caseno + rank, 3) == 1) then
            call run_move(k, ic, counts(kc), f == 2, caseno, sst, rst)
          else
            call run_move(k, ic, counts(kc), f == 2, caseno, sal, ral)
          end if
        end do
      end do
    end do
  end do
  do k = 1, 9
    call report('B ' // trim(move_name(k)), mv_good(k), mv_cases(k), 'cases')
  end do
  call section_time('B')

  ! ---- C reductions
  rd_good = 0
  rd_cases = 0
  caseno = 0
  do k = 1, 6
    do o = 1, 13
      do ic = 1, 2
        do kc = 1, 3
          do f = 1, 2
            caseno = caseno + 1
            j = (ic - 1) * 6 + (kc - 1) * 2 + f
            if (few .and. mod(caseno, 23) /= 0 .and. &
                .not. (o == 13 .and. j == mod(5 * k, 12) + 1)) cycle
            rd_cases(k) = rd_cases(k) + 1
            if (mod(caseno + rank, 3) == 1) then
              call run_red(k, ic, o, counts(kc), f == 2, caseno, sst, rst)
            else
              call run_red(k, ic, o, counts(kc), f == 2, caseno, sal, ral)
            end if
          end do
        end do
      end do
    end do
  end do
  do k = 1, 6
    call report('C ' // trim(red_name(k)), rd_good(k), rd_cases(k), 'cases')
  end do
  call section_time('C')

  cur = 0
  call typed_arrays()
  call section_time('D')
  call bottom()
  call section_time('E')
  call errors()
  call section_time('F')

  call MPI_Op_free(opmod)
  call MPI_Op_free(opmat)
  call MPI_Type_free(mattype)
  call MPI_Comm_free(revc)
  call flush_report()
  call MPI_Finalize()
  if (verdict /= 'f08 ok') error stop 1

contains

  ! ---------------------------------------------------------------- values

  ! Words per element of type t: MPI_INTEGER, MPI_DOUBLE_PRECISION,
  ! MPI_REAL, MPI_LOGICAL, MPI_2INTEGER, MPI_2DOUBLE_PRECISION, matrix.
  integer function wid(t)
    integer, intent(in) :: t
    integer, parameter :: w(7) = (/ 1, 2, 1, 1, 2, 4, 4 /)
    wid = w(t)
  end function wid

  type(MPI_Datatype) function dt_of(t)
    integer, intent(in) :: t
    select case (t)
    case (1)
      dt_of = MPI_INTEGER
    case (2)
      dt_of = MPI_DOUBLE_PRECISION
    case (3)
      dt_of = MPI_REAL
    case (4)
      dt_of = MPI_LOGICAL
    case (5)
      dt_of = MPI_2INTEGER
    case (6)
      dt_of = MPI_2DOUBLE_PRECISION
    case default
      dt_of = mattype
    end select
  end function dt_of

  character(len=24) function type_name(t)
    integer, intent(in) :: t
    character(len=24), parameter :: names(7) = (/ character(len=24) :: &
      'MPI_INTEGER', 'MPI_DOUBLE_PRECISION', 'MPI_REAL', 'MPI_LOGICAL', &
      'MPI_2INTEGER', 'MPI_2DOUBLE_PRECISION', '4 x MPI_INTEGER' /)
    type_name = names(t)
  end function type_name

  ! The type of operation o (section C); 0 is no operation (section B).
  integer function op_type(o)
    integer, intent(in) :: o
    integer, parameter :: t(13) = (/ 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 1, 7 /)
    op_type = t(o)
  end function op_type

  type(MPI_Op) function op_of(o)
    integer, intent(in) :: o
    select case (o)
    case (1, 2, 5)
      op_of = MPI_SUM
    case (3)
      op_of = MPI_PROD
    case (4)
      op_of = MPI_MAX
    case (6)
      op_of = MPI_LAND
    case (7)
      op_of = MPI_LOR
    case (8, 10)
      op_of = MPI_MAXLOC
    case (9, 11)
      op_of = MPI_MINLOC
    case (12)
      op_of = opmod
    case default
      op_of = opmat
    end select
  end function op_of

  character(len=24) function op_name(o)
    integer, intent(in) :: o
    character(len=24), parameter :: names(13) = (/ character(len=24) :: &
      'MPI_SUM', 'MPI_SUM', 'MPI_PROD', 'MPI_MAX', 'MPI_SUM', 'MPI_LAND', &
      'MPI_LOR', 'MPI_MAXLOC', 'MPI_MINLOC', 'MPI_MAXLOC', 'MPI_MINLOC', &
      'user sum mod 1000003', 'user matrix product' /)
    op_name = names(o)
  end function op_name

  character(len=24) function move_name(k)
    integer, intent(in) :: k
    character(len=24), parameter :: names(9) = (/ character(len=24) :: &
      'Bcast', 'Gather', 'Gatherv', 'Scatter', 'Scatterv', 'Allgather', &
      'Allgatherv', 'Alltoall', 'Alltoallv' /)
    move_name = names(k)
  end function move_name

  character(len=24) function red_name(k)
    integer, intent(in) :: k
    character(len=24), parameter :: names(6) = (/ character(len=24) :: &
      'Reduce', 'Allreduce', 'Reduce_scatter_block', 'Reduce_scatter', 'Scan', 'Exscan' /)
    red_name = names(k)
  end function red_name

  ! The value of element i that rank r contributes (to rank j, where that
  ! matters) in case salt, for operation o (0: data movement) on type t,
  ! as up to 4 numbers, every one exactly representable in its type.
  subroutine gen(o, t, r, j, i, salt, a)
    integer, intent(in) :: o, t, r, j, i, salt
    double precision, intent(out) :: a(4)
    double precision, parameter :: pv(0:5) = (/ -2d0, -1d0, -0.5d0, 0.5d0, 1d0, 2d0 /)
    integer(kind=8) :: h
    integer :: m
    h = mod(int(r, 8) * 7919_8 + int(j, 8) * 104729_8 + int(i, 8) * 31_8 + &
            int(salt, 8) * 613_8 + int(o, 8) * 7_8, int(p1, 8))
    a = 0
    select case (t)
    case (1)
      if (o == 12) then
        a(1) = dble(mod(h * 997_8, int(p1, 8)))
      else
        a(1) = dble(mod(h, 201_8) - 100)
      end if
    case (2)
      if (o == 3) then
        a(1) = pv(int(mod(h, 6_8)))
      else
        a(1) = dble(mod(h, 201_8) - 100) * 0.5d0
      end if
    case (3)
      a(1) = dble(mod(h, 201_8) - 100) * 0.25d0
    case (4)
      if (o == 6) then
        a(1) = merge(0d0, 1d0, mod(h, 7_8) == 0)
      else if (o == 7) then
        a(1) = merge(1d0, 0d0, mod(h, 7_8) == 0)
      else
        a(1) = dble(mod(h, 2_8))
      end if
    case (5)
      a(1) = dble(mod(h, 3_8))
      a(2) = dble(mod(h / 3_8, 11_8))
    case (6)
      a(1) = dble(mod(h, 3_8) - 1) * 0.5d0
      a(2) = dble(mod(h / 3_8, 11_8))
    case default
      do m = 1, 4
        a(m) = dble(mod(h * int(m + 2, 8) + int(m * m * 101, 8), int(p2, 8)))
      end do
    end select
  end subroutine gen

  ! z = x op y, x from the lower ranks (MPI's invec), y from the higher.
  subroutine combine(o, x, y, z)
    integer, intent(in) :: o
    double precision, intent(in) :: x(4), y(4)
    double precision, intent(out) :: z(4)
    integer(kind=8) :: a(4), b(4), q
    z = 0
    select case (o)
    case (1, 2, 5)
      z(1) = x(1) + y(1)
    case (3)
      z(1) = x(1) * y(1)
    case (4, 7)
      z(1) = max(x(1), y(1))
    case (6)
      z(1) = min(x(1), y(1))
    case (8, 10, 9, 11)
      if (x(1) == y(1)) then
        z(1) = x(1)
        z(2) = min(x(2), y(2))
      else if ((x(1) > y(1)) .eqv. (o == 8 .or. o == 10)) then
        z(1:2) = x(1:2)
      else
        z(1:2) = y(1:2)
      end if
    case (12)
      z(1) = dble(mod(int(x(1), 8) + int(y(1), 8), int(p1, 8)))
    case default
      a = int(x, 8)
      b = int(y, 8)
      q = int(p2, 8)
      ! column-major 2x2: (11, 21, 12, 22)
      z(1) = dble(mod(a(1) * b(1) + a(3) * b(2), q))
      z(2) = dble(mod(a(2) * b(1) + a(4) * b(2), q))
      z(3) = dble(mod(a(1) * b(3) + a(3) * b(4), q))
      z(4) = dble(mod(a(2) * b(3) + a(4) * b(4), q))
    end select
  end subroutine combine

  ! The words of one element of type t holding a.
  subroutine encode(t, a, wds)
    integer, intent(in) :: t
    double precision, intent(in) :: a(4)
    integer, intent(out) :: wds(4)
    wds = 0
    select case (t)
    case (1)
      wds(1) = nint(a(1))
    case (2)
      wds(1:2) = transfer(a(1), wds, 2)
    case (3)
      wds(1) = transfer(real(a(1)), wds(1))
    case (4)
      wds(1) = transfer(a(1) /= 0d0, wds(1))
    case (5)
      wds(1:2) = nint(a(1:2))
    case (6)
      wds(1:2) = transfer(a(1), wds, 2)
      wds(3:4) = transfer(a(2), wds, 2)
    case default
      wds(1:4) = nint(a(1:4))
    end select
  end subroutine encode

  ! Element i (0-based) of buffer b := the data-movement value r -> j, i.
  subroutine put(b, t, r, j, i, elem, salt)
    integer, intent(inout) :: b(nwords)
    integer, intent(in) :: t, r, j, i, elem, salt
    double precision :: a(4)
    integer :: wds(4), w
    w = wid(t)
    call gen(0, t, r, j, i, salt, a)
    call encode(t, a, wds)
    b(elem * w + 1:elem * w + w) = wds(1:w)
  end subroutine put

  integer function sentinel(j)
    integer, intent(in) :: j
    sentinel = -1000000007 + 37 * j
  end function sentinel

  subroutine fill_sentinel(b, nw)
    integer, intent(inout) :: b(nwords)
    integer, intent(in) :: nw
    integer :: j
    do j = 1, nw
      b(j) = sentinel(j)
    end do
  end subroutine fill_sentinel

  ! Counts of the v variants: uneven, 0 for some ranks when cnt is 1.
  integer function vcount(cnt, q)
    integer, intent(in) :: cnt, q
    vcount = max(0, cnt + mod(q, 3) - 1)
  end function vcount

  ! Alltoallv: elements p sends to q (symmetric for MPI_IN_PLACE, which
  ! needs what p sends q to be what q sends p).
  integer function a2count(cnt, p, q, sym)
    integer, intent(in) :: cnt, p, q
    logical, intent(in) :: sym
    if (sym) then
      a2count = max(0, cnt + mod(p + q, 3) - 1)
    else
      a2count = max(0, cnt + mod(p + 2 * q, 3) - 1)
    end if
  end function a2count

  ! ---------------------------------------------------------------- section B

  subroutine run_move(k, ic, cnt, inpl, salt, sb, rb)
    integer, intent(in) :: k, ic, cnt, salt
    logical, intent(in) :: inpl
    integer :: sb(nwords), rb(nwords)
    type(MPI_Comm) :: cm
    type(MPI_Datatype) :: dt
    integer :: me, n, t, w, root, rc, i, j, q, sarea, rarea
    integer :: vc(0:maxr-1), vd(0:maxr-1), sc(0:maxr-1), sd(0:maxr-1), rcs(0:maxr-1)
    logical :: ip
    character(len=linew) :: what

    cur = k
    cm = comms(ic)
    call MPI_Comm_rank(cm, me)
    call MPI_Comm_size(cm, n)
    t = mod(salt, 7) + 1
    w = wid(t)
    dt = dt_of(t)
    root = mod(salt, n)
    ! In-place where MPI allows it: at the root of Gather(v) and Scatter(v),
    ! everywhere for the all-to-all kinds; never for Bcast.
    select case (k)
    case (2, 3, 4, 5)
      ip = inpl .and. me == root
    case (6, 7, 8, 9)
      ip = inpl
    case default
      ip = .false.
    end select
    write (what, '(a,1x,a,a,a,i0,a,a,i0)') trim(move_name(k)), trim(type_name(t)), &
      merge(' world   ', ' reversed', ic == 1), ' count ', cnt, &
      merge(' in place', ' plain   ', inpl), ' root ', root
    do q = 0, n - 1
      vc(q) = vcount(cnt, q)
    end do
    ! Gatherv/Allgatherv receive and Scatterv send displacements: reverse
    ! rank order, one element gap after each block.
    vd(n - 1) = 0
    do q = n - 2, 0, -1
      vd(q) = vd(q + 1) + vc(q + 1) + 1
    end do
    sarea = 0
    rarea = 0
    select case (k)
    case (1, 2, 4, 6, 8)
      sarea = n * cnt
      rarea = n * cnt
    case (3, 5, 7)
      sarea = vd(0) + vc(0) + 1
      rarea = sarea
    case (9)
      sd(0) = 0
      do q = 1, n - 1
        sd(q) = sd(q - 1) + a2count(cnt, me, q - 1, inpl) + 1
      end do
      sarea = sd(n - 1) + a2count(cnt, me, n - 1, inpl) + 1
      vd(n - 1) = 0
      do q = n - 2, 0, -1
        vd(q) = vd(q + 1) + a2count(cnt, q + 1, me, inpl) + 1
      end do
      rarea = vd(0) + a2count(cnt, 0, me, inpl) + 1
      do q = 0, n - 1
        sc(q) = a2count(cnt, me, q, inpl)
        rcs(q) = a2count(cnt, q, me, inpl)
      end do
    end select

    ! The send buffer (the part this rank sends, which MPI may read).
    call fill_sentinel(sb, (sarea + ng) * w)
    select case (k)
    case (2, 6)
      do i = 0, cnt - 1
        call put(sb, t, me, 0, i, i, salt)
      end do
    case (3, 7)
      do i = 0, vc(me) - 1
        call put(sb, t, me, 0, i, i, salt)
      end do
    case (4, 8)
      if (k == 8 .or. me == root) then
        do j = 0, n - 1
          do i = 0, cnt - 1
            call put(sb, t, me, j, i, j * cnt + i, salt)
          end do
        end do
      end if
    case (5)
      if (me == root) then
        do j = 0, n - 1
          do i = 0, vc(j) - 1
            call put(sb, t, me, j, i, vd(j) + i, salt)
          end do
        end do
      end if
    case (9)
      do j = 0, n - 1
        do i = 0, sc(j) - 1
          call put(sb, t, me, j, i, sd(j) + i, salt)
        end do
      end do
    end select
    scopy(1:(sarea + ng) * w) = sb(1:(sarea + ng) * w)

    ! The receive buffer: the pattern, and what MPI_IN_PLACE takes from it.
    call fill_sentinel(rb, (rarea + ng) * w)
    if (k == 1 .and. me == root) then
      do i = 0, cnt - 1
        call put(rb, t, me, 0, i, i, salt)
      end do
    end if
    if (ip) then
      select case (k)
      case (2, 6)
        do i = 0, cnt - 1
          call put(rb, t, me, 0, i, me * cnt + i, salt)
        end do
      case (3, 7)
        do i = 0, vc(me) - 1
          call put(rb, t, me, 0, i, vd(me) + i, salt)
        end do
      case (8)
        do j = 0, n - 1
          do i = 0, cnt - 1
            call put(rb, t, me, j, i, j * cnt + i, salt)
          end do
        end do
      case (9)
        do j = 0, n - 1
          do i = 0, rcs(j) - 1
            call put(rb, t, me, j, i, vd(j) + i, salt)
          end do
        end do
      end select
    end if

    ! What the receive buffer must hold afterwards: the pattern, except
    ! where this rank receives.
    call fill_sentinel(ew, (rarea + ng) * w)
    select case (k)
    case (1)
      do i = 0, cnt - 1
        call put(ew, t, root, 0, i, i, salt)
      end do
    case (2, 6)
      if (k == 6 .or. me == root) then
        do q = 0, n - 1
          do i = 0, cnt - 1
            call put(ew, t, q, 0, i, q * cnt + i, salt)
          end do
        end do
      end if
    case (3, 7)
      if (k == 7 .or. me == root) then
        do q = 0, n - 1
          do i = 0, vc(q) - 1
            call put(ew, t, q, 0, i, vd(q) + i, salt)
          end do
        end do
      end if
    case (4)
      if (.not. ip) then
        do i = 0, cnt - 1
          call put(ew, t, root, me, i, i, salt)
        end do
      end if
    case (5)
      if (.not. ip) then
        do i = 0, vc(me) - 1
          call put(ew, t, root, me, i, i, salt)
        end do
      end if
    case (8)
      do q = 0, n - 1
        do i = 0, cnt - 1
          call put(ew, t, q, me, i, q * cnt + i, salt)
        end do
      end do
    case (9)
      do q = 0, n - 1
        do i = 0, rcs(q) - 1
          call put(ew, t, q, me, i, vd(q) + i, salt)
        end do
      end do
    end select

    select case (k)
    case (1)
      call MPI_Bcast(rb, cnt, dt, root, cm, rc)
    case (2)
      if (ip) then
        call MPI_Gather(MPI_IN_PLACE, cnt, dt, rb, cnt, dt, root, cm, rc)
      else
        call MPI_Gather(sb, cnt, dt, rb, cnt, dt, root, cm, rc)
      end if
    case (3)
      if (ip) then
        call MPI_Gatherv(MPI_IN_PLACE, vc(me), dt, rb, vc, vd, dt, root, cm, rc)
      else
        call MPI_Gatherv(sb, vc(me), dt, rb, vc, vd, dt, root, cm, rc)
      end if
    case (4)
      if (ip) then
        call MPI_Scatter(sb, cnt, dt, MPI_IN_PLACE, cnt, dt, root, cm, rc)
      else
        call MPI_Scatter(sb, cnt, dt, rb, cnt, dt, root, cm, rc)
      end if
    case (5)
      if (ip) then
        call MPI_Scatterv(sb, vc, vd, dt, MPI_IN_PLACE, vc(me), dt, root, cm, rc)
      else
        call MPI_Scatterv(sb, vc, vd, dt, rb, vc(me), dt, root, cm, rc)
      end if
    case (6)
      if (ip) then
        call MPI_Allgather(MPI_IN_PLACE, cnt, dt, rb, cnt, dt, cm, rc)
      else
        call MPI_Allgather(sb, cnt, dt, rb, cnt, dt, cm, rc)
      end if
    case (7)
      if (ip) then
        call MPI_Allgatherv(MPI_IN_PLACE, vc(me), dt, rb, vc, vd, dt, cm, rc)
      else
        call MPI_Allgatherv(sb, vc(me), dt, rb, vc, vd, dt, cm, rc)
      end if
    case (8)
      if (ip) then
        call MPI_Alltoall(MPI_IN_PLACE, cnt, dt, rb, cnt, dt, cm, rc)
      else
        call MPI_Alltoall(sb, cnt, dt, rb, cnt, dt, cm, rc)
      end if
    case (9)
      if (ip) then
        call MPI_Alltoallv(MPI_IN_PLACE, sc, sd, dt, rb, rcs, vd, dt, cm, rc)
      else
        call MPI_Alltoallv(sb, sc, sd, dt, rb, rcs, vd, dt, cm, rc)
      end if
    end select

    if (rc /= MPI_SUCCESS) then
      call fail(what, 'returned an error', 0, rc, MPI_SUCCESS)
    else if (.not. same_words(rb, ew, (rarea + ng) * w, what, 'receive buffer')) then
      continue
    else if (.not. same_words(sb, scopy, (sarea + ng) * w, what, 'send buffer')) then
      continue
    else
      mv_good(k) = mv_good(k) + 1
    end if
  end subroutine run_move

  ! ---------------------------------------------------------------- section C

  subroutine run_red(k, ic, o, cnt, inpl, salt, sb, rb)
    integer, intent(in) :: k, ic, o, cnt, salt
    logical, intent(in) :: inpl
    integer :: sb(nwords), rb(nwords)
    type(MPI_Comm) :: cm
    type(MPI_Datatype) :: dt
    type(MPI_Op) :: mop
    integer :: me, n, t, w, root, rc, i, q, r, nin, nres, roff, last, from
    integer :: rcounts(0:maxr-1), wds(4)
    double precision :: acc(4), x(4), z(4)
    logical :: ip, hasres
    character(len=linew) :: what

    cur = 9 + k
    cm = comms(ic)
    call MPI_Comm_rank(cm, me)
    call MPI_Comm_size(cm, n)
    t = op_type(o)
    w = wid(t)
    dt = dt_of(t)
    mop = op_of(o)
    root = mod(salt, n)
    ! Stock MPICH 4.0.2 crashes (SIGSEGV in memcpy) in an in-place Reduce
    ! of more than 2048 bytes at a root other than 0: under MPICH those
    ! have root 0.
    if (mpich .and. k == 1 .and. inpl .and. cnt * w * 4 > 2048) root = 0
    ip = inpl .and. (k /= 1 .or. me == root)
    write (what, '(a,1x,a,a,a,a,i0,a,a,i0)') trim(red_name(k)), trim(op_name(o)), ' on ', &
      trim(type_name(t)), merge(' world    count ', ' reversed count ', ic == 1), cnt, &
      merge(' in place', ' plain   ', inpl), ' root ', root
    ! nin: elements each rank contributes; nres, roff: the elements of the
    ! full result this rank receives.
    nin = cnt
    nres = cnt
    roff = 0
    if (k == 3) then
      nin = n * cnt
      roff = me * cnt
    else if (k == 4) then
      do q = 0, n - 1
        rcounts(q) = cnt - mod(q, 2) * (cnt / 2 + 1)
      end do
      nin = sum(rcounts(0:n - 1))
      nres = rcounts(me)
      roff = sum(rcounts(0:me - 1))
    end if

    call fill_sentinel(sb, (nin + ng) * w)
    call fill_sentinel(rb, (nin + ng) * w)
    do i = 0, nin - 1
      call gen(o, t, me, 0, i, salt, x)
      call encode(t, x, wds)
      if (ip) then
        rb(i * w + 1:i * w + w) = wds(1:w)
      else
        sb(i * w + 1:i * w + w) = wds(1:w)
      end if
    end do
    scopy(1:(nin + ng) * w) = sb(1:(nin + ng) * w)

    select case (k)
    case (1)
      if (ip) then
        call MPI_Reduce(MPI_IN_PLACE, rb, cnt, dt, mop, root, cm, rc)
      else
        call MPI_Reduce(sb, rb, cnt, dt, mop, root, cm, rc)
      end if
    case (2)
      if (ip) then
        call MPI_Allreduce(MPI_IN_PLACE, rb, cnt, dt, mop, cm, rc)
      else
        call MPI_Allreduce(sb, rb, cnt, dt, mop, cm, rc)
      end if
    case (3)
      if (ip) then
        call MPI_Reduce_scatter_block(MPI_IN_PLACE, rb, cnt, dt, mop, cm, rc)
      else
        call MPI_Reduce_scatter_block(sb, rb, cnt, dt, mop, cm, rc)
      end if
    case (4)
      if (ip) then
        call MPI_Reduce_scatter(MPI_IN_PLACE, rb, rcounts, dt, mop, cm, rc)
      else
        call MPI_Reduce_scatter(sb, rb, rcounts, dt, mop, cm, rc)
      end if
    case (5)
      if (ip) then
        call MPI_Scan(MPI_IN_PLACE, rb, cnt, dt, mop, cm, rc)
      else
        call MPI_Scan(sb, rb, cnt, dt, mop, cm, rc)
      end if
    case (6)
      if (ip) then
        call MPI_Exscan(MPI_IN_PLACE, rb, cnt, dt, mop, cm, rc)
      else
        call MPI_Exscan(sb, rb, cnt, dt, mop, cm, rc)
      end if
    end select

    if (rc /= MPI_SUCCESS) then
      call fail(what, 'returned an error', 0, rc, MPI_SUCCESS)
      return
    end if
    ! The result: the contributions of ranks 0..last folded in rank order.
    last = n - 1
    hasres = .true.
    if (k == 1 .and. me /= root) hasres = .false.
    if (k == 5) last = me
    if (k == 6) then
      last = me - 1
      if (me == 0) hasres = .false.
    end if
    if (hasres) then
      do i = 0, nres - 1
        call gen(o, t, 0, 0, roff + i, salt, acc)
        do r = 1, last
          call gen(o, t, r, 0, roff + i, salt, x)
          call combine(o, acc, x, z)
          acc = z
        end do
        call encode(t, acc, wds)
        do q = 1, w
          if (rb(i * w + q) /= wds(q)) then
            call fail(what, 'wrong result', i * w + q, rb(i * w + q), wds(q))
            return
          end if
        end do
      end do
    end if
    ! Words MPI must not write: after the result (after the input, which
    ! the result partly overwrites, with MPI_IN_PLACE); all of them at a
    ! non-root of Reduce; after the undefined result of Exscan at rank 0.
    if (ip) then
      from = nin * w + 1
    else if (k == 1 .and. me /= root) then
      from = 1
    else
      from = nres * w + 1
    end if
    do q = from, (nin + ng) * w
      if (rb(q) /= sentinel(q)) then
        call fail(what, 'wrote outside the result', q, rb(q), sentinel(q))
        return
      end if
    end do
    if (.not. same_words(sb, scopy, (nin + ng) * w, what, 'send buffer')) return
    rd_good(k) = rd_good(k) + 1
  end subroutine run_red

  ! ---------------------------------------------------------------- section D

  subroutine typed_arrays()
    double precision :: dx(7), pd(2, 3)
    real :: rx(5)
    logical :: lx(3)
    integer :: ix(2, 4), ix2(2, 4), j, root
    logical :: ok
    character(len=linew) :: got
    good = 0
    ! Allreduce in place, SUM of DOUBLE PRECISION.
    do j = 1, 7
      dx(j) = dble((rank + 1) * j) * 0.5d0
    end do
    call MPI_Allreduce(MPI_IN_PLACE, dx, 7, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    ok = ierr == MPI_SUCCESS
    do j = 1, 7
      ok = ok .and. dx(j) == dble(nprocs * (nprocs + 1) / 2 * j) * 0.5d0
    end do
    write (got, '(i0,a,*(1x,g0))') ierr, ',', dx
    call tally(ok, 'D Allreduce MPI_SUM of DOUBLE PRECISION(7) in place', got)
    ! Allreduce LAND and LOR of LOGICAL.
    lx = (/ .true., rank == 0, rank /= nprocs - 1 /)
    call MPI_Allreduce(MPI_IN_PLACE, lx, 3, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
    write (got, '(i0,a,*(1x,l1))') ierr, ',', lx
    call tally(ierr == MPI_SUCCESS .and. lx(1) .and. (lx(2) .eqv. nprocs == 1) .and. &
               .not. lx(3), 'D Allreduce MPI_LAND of LOGICAL(3) in place', got)
    lx = (/ .false., rank == 0, rank == nprocs + 5 /)
    call MPI_Allreduce(MPI_IN_PLACE, lx, 3, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
    write (got, '(i0,a,*(1x,l1))') ierr, ',', lx
    call tally(ierr == MPI_SUCCESS .and. .not. lx(1) .and. lx(2) .and. .not. lx(3), &
               'D Allreduce MPI_LOR of LOGICAL(3) in place', got)
    ! Bcast of REAL from the last rank.
    root = nprocs - 1
    rx = -1
    if (rank == root) rx = (/ 1.25, -2.5, 3.75, 0.125, 1e6 /)
    call MPI_Bcast(rx, 5, MPI_REAL, root, MPI_COMM_WORLD, ierr)
    write (got, '(i0,a,*(1x,g0))') ierr, ',', rx
    call tally(ierr == MPI_SUCCESS .and. all(rx == (/ 1.25, -2.5, 3.75, 0.125, 1e6 /)), &
               'D Bcast of REAL(5)', got)
    ! Reduce MINLOC on INTEGER(2, 4) as MPI_2INTEGER to rank 0, in place
    ! there: the values tie across the ranks in pairs 1 and 3.
    do j = 1, 4
      ix(1, j) = merge(5, 10 * j - rank, mod(j, 2) == 1)
      ix(2, j) = 100 * j + mod(rank * 3 + 1, 7)
    end do
    ix2 = -1
    if (rank == 0) then
      call MPI_Reduce(MPI_IN_PLACE, ix, 4, MPI_2INTEGER, MPI_MINLOC, 0, MPI_COMM_WORLD, ierr)
    else
      call MPI_Reduce(ix, ix2, 4, MPI_2INTEGER, MPI_MINLOC, 0, MPI_COMM_WORLD, ierr)
    end if
    ok = ierr == MPI_SUCCESS
    if (rank == 0) then
      do j = 1, 4
        if (mod(j, 2) == 1) then
          ok = ok .and. ix(1, j) == 5 .and. ix(2, j) == 100 * j + min_index(nprocs)
        else
          ok = ok .and. ix(1, j) == 10 * j - (nprocs - 1) .and. &
               ix(2, j) == 100 * j + mod((nprocs - 1) * 3 + 1, 7)
        end if
      end do
    else
      ok = ok .and. all(ix2 == -1)
    end if
    write (got, '(i0,a,*(1x,i0))') ierr, ',', ix, ix2
    call tally(ok, 'D Reduce MPI_MINLOC of INTEGER(2,4)', got)
    ! Allreduce MAXLOC on DOUBLE PRECISION(2, 3) as MPI_2DOUBLE_PRECISION.
    do j = 1, 3
      pd(1, j) = merge(0.5d0, dble(rank) * 0.25d0, j == 2)
      pd(2, j) = dble(10 * j + mod(rank + 2, 3))
    end do
    call MPI_Allreduce(MPI_IN_PLACE, pd, 3, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, &
                       MPI_COMM_WORLD, ierr)
    ok = ierr == MPI_SUCCESS
    do j = 1, 3
      if (j == 2) then
        ok = ok .and. pd(1, j) == 0.5d0 .and. pd(2, j) == dble(10 * j + min_mod3(nprocs))
      else
        ok = ok .and. pd(1, j) == dble(nprocs - 1) * 0.25d0 .and. &
             pd(2, j) == dble(10 * j + mod(nprocs - 1 + 2, 3))
      end if
    end do
    write (got, '(i0,a,*(1x,g0))') ierr, ',', pd
    call tally(ok, 'D Allreduce MPI_MAXLOC of DOUBLE PRECISION(2,3) in place', got)
    call report('D typed arrays', good, 6, 'checks')
  end subroutine typed_arrays

  ! The lowest mod(r * 3 + 1, 7) over ranks r < n.
  integer function min_index(n)
    integer, intent(in) :: n
    integer :: r
    min_index = 99
    do r = 0, n - 1
      min_index = min(min_index, mod(r * 3 + 1, 7))
    end do
  end function min_index

  ! The lowest mod(r + 2, 3) over ranks r < n.
  integer function min_mod3(n)
    integer, intent(in) :: n
    integer :: r
    min_mod3 = 99
    do r = 0, n - 1
      min_mod3 = min(min_mod3, mod(r + 2, 3))
    end do
  end function min_mod3

  ! ---------------------------------------------------------------- section E

  ! Datatypes of absolute addresses, the buffer argument MPI_BOTTOM.
  subroutine bottom()
    ! Volatile: MPI writes them through addresses the compiler does not see.
    integer, volatile :: bx(2), gy(2), sy(2), z(0:maxr-1)
    integer :: gat(2 * maxr), sc(2 * maxr), mine, j, root, blens(2)
    type(MPI_Datatype) :: stype, types(2)
    integer(kind=MPI_ADDRESS_KIND) :: disps(2)
    logical :: ok
    character(len=linew) :: got
    good = 0
    blens = 1
    types = MPI_INTEGER
    ! Bcast: a struct of the two elements, in reverse order.
    root = mod(1, nprocs)
    bx = -1
    if (rank == root) bx = (/ 100 + rank, 200 + rank /)
    call MPI_Get_address(bx(2), disps(1))
    call MPI_Get_address(bx(1), disps(2))
    call MPI_Type_create_struct(2, blens, disps, types, stype)
    call MPI_Type_commit(stype)
    call MPI_Bcast(MPI_BOTTOM, 1, stype, root, MPI_COMM_WORLD, ierr)
    write (got, '(i0,a,*(1x,i0))') ierr, ',', bx
    call tally(ierr == MPI_SUCCESS .and. bx(1) == 100 + root .and. bx(2) == 200 + root, &
               'E Bcast from MPI_BOTTOM', got)
    call MPI_Type_free(stype)
    ! Gather from MPI_BOTTOM to rank 0.
    gy = (/ 300 + rank, 400 + rank /)
    gat = -1
    call MPI_Get_address(gy(1), disps(1))
    call MPI_Get_address(gy(2), disps(2))
    call MPI_Type_create_struct(2, blens, disps, types, stype)
    call MPI_Type_commit(stype)
    call MPI_Gather(MPI_BOTTOM, 1, stype, gat, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    ok = ierr == MPI_SUCCESS .and. gy(1) == 300 + rank .and. gy(2) == 400 + rank
    if (rank == 0) then
      do j = 0, nprocs - 1
        ok = ok .and. gat(2 * j + 1) == 300 + j .and. gat(2 * j + 2) == 400 + j
      end do
      ok = ok .and. all(gat(2 * nprocs + 1:) == -1)
    else
      ok = ok .and. all(gat == -1)
    end if
    write (got, '(i0,a,*(1x,i0))') ierr, ',', gat(1:2 * nprocs), gy
    call tally(ok, 'E Gather from MPI_BOTTOM', got)
    call MPI_Type_free(stype)
    ! Scatter from the last rank into MPI_BOTTOM.
    root = nprocs - 1
    do j = 0, nprocs - 1
      sc(2 * j + 1) = 500 + j
      sc(2 * j + 2) = 600 + j
    end do
    sy = -1
    call MPI_Get_address(sy(1), disps(1))
    call MPI_Get_address(sy(2), disps(2))
    call MPI_Type_create_struct(2, blens, disps, types, stype)
    call MPI_Type_commit(stype)
    call MPI_Scatter(sc, 2, MPI_INTEGER, MPI_BOTTOM, 1, stype, root, MPI_COMM_WORLD, ierr)
    write (got, '(i0,a,*(1x,i0))') ierr, ',', sy
    call tally(ierr == MPI_SUCCESS .and. sy(1) == 500 + rank .and. sy(2) == 600 + rank, &
               'E Scatter into MPI_BOTTOM', got)
    call MPI_Type_free(stype)
    ! Allgather into MPI_BOTTOM: one MPI_INTEGER at the address of z(0),
    ! extent 4, so rank j's element lands in z(j).
    z = -1
    mine = 700 + rank
    call MPI_Get_address(z(0), disps(1))
    call MPI_Type_create_hindexed(1, blens, disps, MPI_INTEGER, stype)
    call MPI_Type_commit(stype)
    call MPI_Allgather(mine, 1, MPI_INTEGER, MPI_BOTTOM, 1, stype, MPI_COMM_WORLD, ierr)
    ok = ierr == MPI_SUCCESS
    do j = 0, maxr - 1
      ok = ok .and. z(j) == merge(700 + j, -1, j < nprocs)
    end do
    write (got, '(i0,a,*(1x,i0))') ierr, ',', z
    call tally(ok, 'E Allgather into MPI_BOTTOM', got)
    call MPI_Type_free(stype)
    call report('E MPI_BOTTOM', good, 4, 'checks')
  end subroutine bottom

  ! ---------------------------------------------------------------- section F

  ! Invalid arguments on a duplicate with MPI_ERRORS_RETURN: every rank
  ! passes the same one, so that no rank enters a collective another one
  ! refused. The classes are printed, not judged: the stock run decides.
  subroutine errors()
    type(MPI_Comm) :: d
    integer :: rc, buf(4), res(4)
    call MPI_Comm_dup(MPI_COMM_WORLD, d)
    call MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN)
    buf = rank
    res = -1
    call MPI_Bcast(buf, 4, MPI_INTEGER, nprocs, d, rc)
    call error_line('Bcast with root = size', rc)
    call MPI_Scatter(buf, 1, MPI_INTEGER, res, 1, MPI_INTEGER, nprocs, d, rc)
    call error_line('Scatter with root = size', rc)
    call MPI_Reduce(buf, res, 4, MPI_INTEGER, MPI_SUM, -1, d, rc)
    call error_line('Reduce with root -1', rc)
    call MPI_Bcast(buf, -1, MPI_INTEGER, 0, d, rc)
    call error_line('Bcast with count -1', rc)
    ! Stock MPICH 4.0.2 does not check the count of the reductions: it
    ! returns MPI_SUCCESS at one rank and crashes at more.
    if (mpich) then
      if (nlines < maxl - 1) then
        nlines = nlines + 1
        write (lines(nlines), '(a,i0,a)') 'rank ', rank, &
          ': F Allreduce with count -1: not under MPICH'
      end if
    else
      call MPI_Allreduce(buf, res, -1, MPI_INTEGER, MPI_SUM, d, rc)
      call error_line('Allreduce with count -1', rc)
    end if
    ! Afterwards the duplicate works.
    good = 0
    if (all(buf == rank)) good = good + 1
    call MPI_Allreduce(buf, res, 4, MPI_INTEGER, MPI_SUM, d, rc)
    if (rc == MPI_SUCCESS .and. all(res == nprocs * (nprocs - 1) / 2)) good = good + 1
    call MPI_Comm_free(d)
    call report('F afterwards', good, 2, 'checks')
  end subroutine errors

  subroutine error_line(what, rc)
    character(len=*), intent(in) :: what
    integer, intent(in) :: rc
    integer :: cls
    character(len=24) :: name
    call MPI_Error_class(rc, cls)
    if (cls == MPI_SUCCESS) then
      name = 'MPI_SUCCESS'
    else if (cls == MPI_ERR_ROOT) then
      name = 'MPI_ERR_ROOT'
    else if (cls == MPI_ERR_COUNT) then
      name = 'MPI_ERR_COUNT'
    else if (cls == MPI_ERR_ARG) then
      name = 'MPI_ERR_ARG'
    else if (cls == MPI_ERR_BUFFER) then
      name = 'MPI_ERR_BUFFER'
    else if (cls == MPI_ERR_COMM) then
      name = 'MPI_ERR_COMM'
    else if (cls == MPI_ERR_OTHER) then
      name = 'MPI_ERR_OTHER'
    else if (cls == MPI_ERR_INTERN) then
      name = 'MPI_ERR_INTERN'
    else
      write (name, '(a,i0)') 'class ', cls
    end if
    if (nlines >= maxl - 1) return
    nlines = nlines + 1
    write (lines(nlines), '(a,i0,a,a,a,a)') 'rank ', rank, ': F ', what, ': ', trim(name)
  end subroutine error_line

  ! ---------------------------------------------------------------- report

  ! Compares n words; on a difference reports the first one.
  logical function same_words(b, e, n, what, which)
    integer, intent(in) :: b(nwords), e(nwords), n
    character(len=*), intent(in) :: what, which
    integer :: j
    same_words = .true.
    do j = 1, n
      if (b(j) /= e(j)) then
        call fail(what, which // ' differs', j, b(j), e(j))
        same_words = .false.
        return
      end if
    end do
  end function same_words

  subroutine fail(what, how, word, got, want)
    character(len=*), intent(in) :: what, how
    integer, intent(in) :: word, got, want
    character(len=linew) :: msg
    write (msg, '(a,a,a,a,i0,a,i0,a,i0)') trim(what), ': ', how, ' at word ', word, &
      ': got ', got, ', expected ', want
    call add_fail(msg)
  end subroutine fail

  ! A check of sections D and E: got says what the call gave.
  subroutine tally(ok, what, got)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what, got
    if (ok) then
      good = good + 1
    else
      call add_fail(what // ': got ierr ' // trim(got))
    end if
  end subroutine tally

  ! Records a failure; prints the first of each collective (B, C), at most
  ! maxfail in all.
  subroutine add_fail(msg)
    character(len=*), intent(in) :: msg
    verdict = 'f08 FAILED'
    nfail = nfail + 1
    if ((cur /= 0 .and. shown(cur)) .or. nshown >= maxfail .or. nlines >= maxl - 2) return
    shown(cur) = cur /= 0
    nshown = nshown + 1
    nlines = nlines + 1
    write (lines(nlines), '(a,i0,a,a)') 'rank ', rank, ': FAIL ', trim(msg)
  end subroutine add_fail

  subroutine report(what, got, want, unit)
    character(len=*), intent(in) :: what, unit
    integer, intent(in) :: got, want
    if (nlines >= maxl - 1) then
      verdict = 'f08 FAILED'
      return
    end if
    nlines = nlines + 1
    write (lines(nlines), '(a,i0,a,a,a,i0,a,i0,a,a)') 'rank ', rank, ': ', what, ': ', got, &
      ' of ', want, ' ', unit
    if (got /= want) verdict = 'f08 FAILED'
  end subroutine report

  subroutine section_time(what)
    character(len=*), intent(in) :: what
    if (times) then
      write (0, '(a,a,f8.3,a)') 'section ', what, MPI_Wtime() - t0, ' s'
      t0 = MPI_Wtime()
    end if
  end subroutine section_time

  subroutine flush_report()
    integer :: r, j, n
    if (nfail > nshown .and. nlines < maxl - 1) then
      nlines = nlines + 1
      write (lines(nlines), '(a,i0,a,i0,a)') 'rank ', rank, ': ', nfail - nshown, &
        ' more failures'
    end if
    nlines = nlines + 1
    write (lines(nlines), '(a,i0,a,a)') 'rank ', rank, ': ', trim(verdict)
    n = nlines
    allocate(gathered(maxl, nprocs))
    gathered = ' '
    call MPI_Gather(lines, maxl * linew, MPI_CHARACTER, gathered, maxl * linew, MPI_CHARACTER, &
                    0, MPI_COMM_WORLD)
    if (rank == 0) then
      do r = 1, nprocs
        do j = 1, maxl
          if (len_trim(gathered(j, r)) == 0) exit
          if (index(gathered(j, r), ': f08 ') /= 0) exit
          write (*, '(a)') trim(gathered(j, r))
        end do
      end do
      do r = 1, nprocs
        do j = 1, maxl
          if (index(gathered(j, r), ': f08 ') /= 0) write (*, '(a)') trim(gathered(j, r))
        end do
      end do
    end if
  end subroutine flush_report
end program coll_f08

! The user operations, as external procedures (an internal procedure passed
! to MPI_Op_create may need a trampoline on an executable stack). MPI calls
! them from inside a reduction with the datatype of the call, which they
! check against the one the program left in common /coll_f08_ops/: a wrong
! datatype poisons the result (-999), which the checks then see.

! Commutative: sum modulo 1000003 on MPI_INTEGER.
subroutine modsum_fn(invec, inoutvec, len, datatype)
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use mpi_f08, only: MPI_Datatype
  implicit none
  type(c_ptr), value :: invec, inoutvec
  integer :: len
  type(MPI_Datatype) :: datatype
  integer :: intdt, matdt
  common /coll_f08_ops/ intdt, matdt
  integer, pointer :: a(:), b(:)
  integer :: i
  call c_f_pointer(invec, a, (/ len /))
  call c_f_pointer(inoutvec, b, (/ len /))
  do i = 1, len
    if (datatype%MPI_VAL == intdt) then
      b(i) = int(mod(int(a(i), 8) + int(b(i), 8), 1000003_8))
    else
      b(i) = -999
    end if
  end do
end subroutine modsum_fn

! Non-commutative: inoutvec = invec x inoutvec, 2x2 integer matrices
! (column-major: 11, 21, 12, 22) modulo 10007, on a contiguous type of 4
! MPI_INTEGER.
subroutine matmul_fn(invec, inoutvec, len, datatype)
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use mpi_f08, only: MPI_Datatype
  implicit none
  type(c_ptr), value :: invec, inoutvec
  integer :: len
  type(MPI_Datatype) :: datatype
  integer :: intdt, matdt
  common /coll_f08_ops/ intdt, matdt
  integer, pointer :: x(:, :), y(:, :)
  integer(kind=8) :: a(4), b(4)
  integer(kind=8), parameter :: q = 10007_8
  integer :: i
  call c_f_pointer(invec, x, (/ 4, len /))
  call c_f_pointer(inoutvec, y, (/ 4, len /))
  do i = 1, len
    if (datatype%MPI_VAL /= matdt) then
      y(:, i) = -999
      cycle
    end if
    a = int(x(:, i), 8)
    b = int(y(:, i), 8)
    y(1, i) = int(mod(a(1) * b(1) + a(3) * b(2), q))
    y(2, i) = int(mod(a(2) * b(1) + a(4) * b(2), q))
    y(3, i) = int(mod(a(1) * b(3) + a(3) * b(4), q))
    y(4, i) = int(mod(a(2) * b(3) + a(4) * b(4), q))
  end do
end subroutine matmul_fn

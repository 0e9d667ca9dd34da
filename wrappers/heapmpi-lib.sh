# heapmpi-lib.sh — shell functions shared by heapmpirun and heapmpi-exec:
# which MPI a program or a command belongs to. Sourced, not run.

# Normalise a user-supplied MPI name.
norm_flavour() {
    case ${1,,} in
    openmpi | open-mpi | ompi) echo openmpi ;;
    mpich | hydra) echo mpich ;;
    *) return 1 ;;
    esac
}

# What ldd prints for file $1 (its libraries, as the dynamic loader finds
# them, without any LD_PRELOAD), or failure for a file that is not
# dynamically linked. Asks the loader directly, as ldd does after its
# checks: ldd is a shell script whose start-up costs ~10 ms, which every
# heapmpirun paid twice before a 1-second job (GROMACS in bench/run). A
# file no loader listed here takes (another ABI) goes to ldd itself.
# With a second argument "so", $1 is known to be a shared library of this
# machine's ABI (a heapmpi build), and the check ldd makes first, one more
# process, is skipped. The loader runs with LD_PRELOAD empty, which it
# reads as unset (one exec fewer than env -u).
ldd_of() {
    local rtld rc
    for rtld in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 /lib64/ld64.so.2; do
        [[ -x $rtld ]] || continue
        # --verify: 0 = a dynamic file for this loader, 2 = a shared
        # library for it, 1 = not one (static, a script, another ABI).
        rc=0
        if [[ ${2:-} == so ]]; then
            LD_PRELOAD= "$rtld" --list "$1" 2>/dev/null && return
            continue # not this loader's (another ABI): ask the next one
        fi
        LD_PRELOAD= "$rtld" --verify "$1" >/dev/null 2>&1 || rc=$?
        case $rc in
        0 | 2)
            LD_PRELOAD= "$rtld" --list "$1" 2>/dev/null
            return
            ;;
        esac
    done
    env -u LD_PRELOAD ldd "$1" 2>/dev/null
}

# The functions below that answer with a value set REPLY instead of
# printing it: a command substitution costs a process, and a launch went
# through seventeen of them (heapmpi-exec runs on every rank).

# The MPI family of a list of libraries as ldd_of prints them, into REPLY:
# openmpi|mpich, or failure when the list says nothing conclusive. A
# program of the MPI-5 standard ABI (libmpi_abi.so) belongs to the family
# of the MPI whose library the loader found (abi_family).
flavour_of_ldd_output() {
    local lib arrow path ompi=0 mpich=0
    while read -r lib arrow path _; do
        case $lib in
        libmpi_abi.so*)
            [[ $arrow == "=>" && -f $path ]] || continue
            abi_family "$path"
            [[ $REPLY == openmpi ]] && ompi=1 || mpich=1
            ;;
        libmpich*.so* | libmpicxx.so* | libmpifort.so* | libmpi.so.12*) mpich=1 ;;
        libmpi.so.* | libmpi_*.so* | libopen-pal.so* | libopen-rte.so*) ompi=1 ;;
        esac
    done <<<"$1"
    if ((ompi && !mpich)); then REPLY=openmpi
    elif ((mpich && !ompi)); then REPLY=mpich
    else return 1
    fi
}

# The family of the MPI whose standard-ABI library is $1, into REPLY: the
# one whose own libraries sit beside it (MPICH 5 installs libmpi_abi.so
# next to libmpi.so.12; an Open MPI would put it next to libopen-pal).
abi_family() {
    local dir=${1%/*}
    if compgen -G "$dir/libopen-pal.so*" >/dev/null || compgen -G "$dir/libmpi.so.40*" >/dev/null; then
        REPLY=openmpi
    else
        REPLY=mpich
    fi
}

# Whether MPI libraries $1 and $2 (canonical paths, as mpi_library_of
# prints them) are one for heapmpi: the same file, or two libraries of the
# MPI-5 standard ABI with one soname (a build for the ABI links whichever
# the program loads: the loader finds the program's first).
same_mpi_library() {
    [[ $1 == "$2" ]] && return 0
    local a=${1##*/} b=${2##*/}
    [[ $a == libmpi_abi.so.* && $b == libmpi_abi.so.* ]] || return 1
    a=${a#libmpi_abi.so.}
    b=${b#libmpi_abi.so.}
    [[ ${a%%.*} == "${b%%.*}" ]] # the soname's version (libmpi_abi.so.1)
}

# Which MPI does a dynamically linked file use? Prints openmpi|mpich, or
# fails when ldd says nothing conclusive.
flavour_from_ldd() {
    local out
    out=$(ldd_of "$1") || return 1
    flavour_of_ldd_output "$out" && echo "$REPLY"
}

# Which MPI does a launcher / compiler wrapper command belong to? Looks at
# every name along its symlink chain (mpirun -> /etc/alternatives/mpirun ->
# mpirun.openmpi -> orterun), then asks `cmd --version`.
flavour_of_command() {
    local p link name out
    p=$(type -P "$1") || return 1
    for ((hops = 0; hops < 40; hops++)); do
        name=${p##*/}
        case ${name,,} in
        *openmpi* | *orterun* | *opal_wrapper* | *ompi* | *prterun*) echo openmpi; return 0 ;;
        *mpich* | *hydra*) echo mpich; return 0 ;;
        esac
        [[ -L $p ]] || break
        link=$(readlink "$p")
        [[ $link == /* ]] || link=$(dirname "$p")/$link
        p=$link
    done
    case $(readlink -f "$p") in
    *openmpi*) echo openmpi; return 0 ;;
    *mpich*) echo mpich; return 0 ;;
    esac
    out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        timeout 10 "$1" --version 2>&1 </dev/null) || true
    case $out in
    *"Open MPI"* | *"Open RTE"*) echo openmpi ;;
    *HYDRA* | *MPICH*) echo mpich ;;
    *) return 1 ;;
    esac
}

# The MPI library a dynamically linked file loads (libmpi.so.N,
# libmpich.so.N), as a canonical path; fails when ldd names none. Open MPI
# 4.1 and 5.0 are both libmpi.so.40, MPICH 4 and 5 both libmpi.so.12 or
# libmpich.so.12: the soname cannot tell the builds apart, the path can.
mpi_library_of() {
    local out
    out=$(ldd_of "$1" "${2:-}") || return 1
    mpi_library_of_ldd_output "$out" && echo "$REPLY"
}

# The MPI library named in a list of libraries as ldd_of prints them, as
# mpi_library_of prints it, into REPLY.
mpi_library_of_ldd_output() {
    local name arrow path
    while read -r name arrow path _; do
        case $name in
        libmpi.so.* | libmpich.so.* | libmpi_abi.so.*)
            [[ $arrow == "=>" && -f $path ]] || continue
            REPLY=$(readlink -f "$path")
            return 0
            ;;
        esac
    done <<<"$1"
    return 1
}

# The MPI library heapmpi build $1 (a libheapmpi.so) loads, as
# mpi_library_of prints it, into REPLY; fails when it loads none. Asking
# the loader costs a process and milliseconds on every launch, so the
# answer is kept in .heapmpi-mpilib beside the build. The kept answer
# holds while it is newer than the build, than the loader's cache
# (/etc/ld.so.cache, which ldconfig rewrites when a package installs an
# MPI) and than the library it names (a reinstalled MPI, as a wheel's
# upgrade is), and while LD_LIBRARY_PATH, which can send the loader
# elsewhere, is what it was. Where the directory is not writable nothing
# is kept and the loader is asked every time.
build_mpi_library() {
    local so=$1 cache=${1%/*}/.heapmpi-mpilib key k val out
    key="LD_LIBRARY_PATH=${LD_LIBRARY_PATH-}"
    if [[ -f $cache && $cache -nt $so && ! /etc/ld.so.cache -nt $cache ]] &&
        { IFS= read -r k && IFS= read -r val; } <"$cache" &&
        [[ $k == "$key" && -f $val && ! $val -nt $cache ]]; then
        REPLY=$val
        return 0
    fi
    out=$(ldd_of "$so" so) && mpi_library_of_ldd_output "$out" || return 1
    val=$REPLY
    { printf '%s\n%s\n' "$key" "$val" >"$cache.$$" && mv -f "$cache.$$" "$cache"; } 2>/dev/null ||
        rm -f "$cache.$$" 2>/dev/null || true
    REPLY=$val
}

# The file command name $1 runs, searched in PATH as the shell does (a
# name with a slash is itself), into REPLY; fails when there is none.
# `type -P` would print it, through one more process.
path_lookup() {
    local d dirs
    if [[ $1 == */* ]]; then
        REPLY=$1
        [[ -f $1 && -x $1 ]]
        return
    fi
    IFS=: read -r -a dirs <<<"${PATH:-}"
    for d in "${dirs[@]}"; do
        REPLY=${d:-.}/$1
        [[ -f $REPLY && -x $REPLY ]] && return 0
    done
    return 1
}

# The heapmpi build under tree $1 made for MPI library $2 (a canonical path,
# see mpi_library_of), into REPLY: the libheapmpi.so that loads that very
# library (its RUNPATH names its MPI's directory). Prefers
# target/$3/release when given and matching. Fails when no build matches.
build_for_library() {
    local so
    if [[ -n ${3:-} ]]; then
        for so in "$1/target/$3/release/libheapmpi.so" "$1/lib/$3/libheapmpi.so"; do
            if [[ -f $so ]] && build_mpi_library "$so" && same_mpi_library "$REPLY" "$2"; then
                REPLY=$so
                return 0
            fi
        done
    fi
    for so in "$1"/target/*/release/libheapmpi.so "$1"/lib/*/libheapmpi.so; do
        if [[ -f $so ]] && build_mpi_library "$so" && same_mpi_library "$REPLY" "$2"; then
            REPLY=$so
            return 0
        fi
    done
    return 1
}

# The launcher of the MPI whose library is $1 and family $2, into REPLY:
# the one in the library's installation (<prefix>/bin next to
# <prefix>/lib: a Python wheel, a Spack or module prefix), else the
# distribution's name for the family (mpirun.openmpi, mpiexec.mpich), else
# the plain name.
launcher_for_library() {
    local bin cand c
    bin=${1%/*}
    bin=${bin%/*}/bin
    case $2 in
    openmpi) cand=(mpirun) ;;
    mpich) cand=(mpiexec.hydra mpiexec) ;;
    esac
    for c in "${cand[@]}"; do
        if [[ -x $bin/$c && $bin != /usr/bin && $bin != /bin ]]; then
            REPLY=$bin/$c
            return 0
        fi
    done
    case $2 in
    openmpi) cand=(mpirun.openmpi mpirun) ;;
    mpich) cand=(mpiexec.mpich mpiexec.hydra mpiexec) ;;
    esac
    for c in "${cand[@]}"; do
        path_lookup "$c" && return 0
    done
    return 1
}

# The MPI library that compiler wrapper "$@" links programs against (the
# libmpi/libmpich its -show(me) line names, in its -L directories or the
# compiler's own), canonical as mpi_library_of prints it.
mpi_library_of_mpicc() {
    local show word dir libname=""
    show=$("$@" -showme:link 2>/dev/null </dev/null) ||
        show=$("$@" -show 2>/dev/null </dev/null) || return 1
    for word in $show; do
        case $word in
        -lmpich) libname=libmpich.so ;;
        -lmpi_abi) libname=libmpi_abi.so ;;
        -lmpi) [[ -n $libname ]] || libname=libmpi.so ;;
        esac
    done
    [[ -n $libname ]] || return 1
    for word in $show; do
        word=${word//\"/} # Intel MPI quotes its directories
        case $word in
        -L?*)
            dir=${word#-L}
            resolve_dev_library "$dir/$libname" && return 0
            ;;
        esac
    done
    for dir in "/usr/lib/$(gcc -print-multiarch 2>/dev/null)" /usr/lib64 /usr/lib /lib64 /lib; do
        resolve_dev_library "$dir/$libname" && return 0
    done
    return 1
}

# The shared library a link-time name ($1, libmpi.so) stands for,
# canonical, as the dynamic loader will find it: a symlink followed, a
# linker script's INPUT(libmpi.so.40) (Python wheels ship those) resolved
# in its directory, and an ELF file's SONAME looked up there (wheels cannot
# hold symlinks: Intel MPI's has libmpi.so and libmpi.so.12 as copies).
resolve_dev_library() {
    local f word soname
    [[ -e $1 ]] || return 1
    f=$(readlink -f "$1")
    if [[ $(head -c 4 "$f" | od -An -c | tr -d ' ') == 177ELF ]]; then
        soname=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
        if [[ -n $soname && -e $(dirname "$f")/$soname ]]; then
            readlink -f "$(dirname "$f")/$soname"
        else
            echo "$f"
        fi
        return 0
    fi
    word=$(sed -n 's/^[[:space:]]*\(INPUT\|GROUP\)[[:space:]]*([[:space:]]*\([^ )]*\).*/\2/p' "$f" | head -1)
    [[ -n $word ]] || return 1
    [[ $word == /* ]] || word=$(dirname "$f")/$word
    [[ -e $word ]] || return 1
    readlink -f "$word"
}

# The linker options file of tree $1: a checkout's linker-scripts/, an
# installed tree's share/heapmpi/.
tree_ld_opts() {
    local f
    for f in "$1/linker-scripts/heapmpi.ld-opts" "$1/share/heapmpi/heapmpi.ld-opts"; do
        [[ -f $f ]] && { echo "$f"; return 0; }
    done
    return 1
}

# Build $2's directory in tree $1 (a checkout's target/$2/release, an
# installed tree's lib/$2), into REPLY; the checkout's when neither exists
# yet.
tree_build_dir() {
    if [[ -d $1/target/$2/release || ! -d $1/lib/$2 ]]; then
        REPLY=$1/target/$2/release
    else
        REPLY=$1/lib/$2
    fi
}

# preload_with LIB [LIST]: the LD_PRELOAD list LIST (colon- or
# space-separated, as ld.so reads it) with LIB last, where heapmpi belongs:
# closest to the MPI, after any profiler or other PMPI tool already
# there, so that each tool's MPI_X reaches the next through PMPI_X and
# heapmpi answers the last PMPI_X before the MPI library's. Any other
# libheapmpi.so in LIST is dropped (one heapmpi per process). Into REPLY.
#
# preload_with LIB LIST FIRST: the same with FIRST (a sanitizer runtime,
# see sanitizer_runtime_of_ldd_output) in front of everything.
preload_with() {
    local lib=$1 list=${2:-} first=${3:-} out="" e
    [[ -n $first ]] && out="$first:"
    for e in ${list//:/ }; do
        [[ -z $e || ${e##*/} == libheapmpi.so || $e == "$first" ]] && continue
        out+="$e:"
    done
    REPLY=$out$lib
}

# sanitizer_runtime_of_ldd_output OUTPUT: the sanitizer runtime
# (AddressSanitizer, ThreadSanitizer, ...) in a program's ldd output, as
# a path, into REPLY; failure if it has none. Such a runtime must be
# the first library of the process (AddressSanitizer refuses to start
# otherwise), so it goes in front of heapmpi in LD_PRELOAD; heapmpi then
# leaves the program's malloc to it.
sanitizer_runtime_of_ldd_output() {
    local line
    while read -r line; do
        case $line in
        libasan.so* | libtsan.so* | libhwasan.so* | libclang_rt.asan* | libclang_rt.tsan* | libclang_rt.hwasan*)
            REPLY=${line#*=> }
            REPLY=${REPLY%% (*}
            [[ $REPLY == /* ]] && return 0
            ;;
        esac
    done <<<"$1"
    return 1
}

# is_tool_prefix NAME: whether NAME is a tool that runs the program named
# after its own options (valgrind ... ./app): the wrappers then look at
# that program to choose the MPI and the sanitizer runtime.
is_tool_prefix() {
    case ${1##*/} in
    valgrind | valgrind.bin | valgrind-di-server) return 0 ;;
    *) return 1 ;;
    esac
}

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

# Which MPI does a dynamically linked file use? Prints openmpi|mpich, or
# fails when ldd says nothing conclusive.
flavour_from_ldd() {
    local out lib ompi=0 mpich=0
    out=$(env -u LD_PRELOAD ldd "$1" 2>/dev/null) || return 1
    while read -r lib _; do
        case $lib in
        libmpich*.so* | libmpicxx.so* | libmpifort.so* | libmpi.so.12*) mpich=1 ;;
        libmpi.so.* | libmpi_*.so* | libopen-pal.so* | libopen-rte.so*) ompi=1 ;;
        esac
    done <<<"$out"
    if ((ompi && !mpich)); then echo openmpi
    elif ((mpich && !ompi)); then echo mpich
    else return 1
    fi
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

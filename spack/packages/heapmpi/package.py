# Spack recipe for heapmpi: one build per MPI in the spec, installed as the
# relocatable tree of `wrappers/heapmpi-build --prefix` (bin/, lib/<mpi>/,
# share/heapmpi/, share/modulefiles/heapmpi/). tests/deploy.rs runs these
# steps with a minimal stand-in for Spack's package API (tests/spack/),
# since Spack itself is not installed on the test machines.

from spack.package import *


class Heapmpi(Package):
    """One-copy intra-node MPI for unmodified programs: node-local ranks
    share one heap mapped at the same address, and point-to-point,
    collectives and one-sided calls between them move data with one copy.
    Reached by LD_PRELOAD (heapmpi-exec, heapmpirun) or by linking with
    -Wl,--wrap (heapmpicc); everything else goes to the MPI in the spec."""

    homepage = "https://github.com/heapmpi/heapmpi"
    git = "https://github.com/heapmpi/heapmpi.git"

    maintainers("heapmpi")
    license("MIT OR Apache-2.0")

    version("main", branch="main")

    # Linux only: the shared heap is a memfd/POSIX shm mapping, fork
    # handlers and process_vm_readv.
    conflicts("platform=darwin", msg="heapmpi needs Linux")
    conflicts("platform=windows", msg="heapmpi needs Linux")

    depends_on("mpi")
    depends_on("rust@1.80:", type="build")
    # libclang for the bindings mpi-sys generates from the MPI's <mpi.h>
    depends_on("llvm", type="build")
    # the wrappers are bash scripts that read ldd and readelf
    depends_on("bash", type=("build", "run"))
    depends_on("binutils", type="run")

    def install(self, spec, prefix):
        mpi = spec["mpi"]
        env["LIBCLANG_PATH"] = join_path(spec["llvm"].prefix, "lib")
        # Intel MPI's compiler wrappers find their installation here.
        if mpi.name.startswith("intel"):
            env["I_MPI_ROOT"] = mpi.prefix
        bash = which("bash")
        bash(
            "wrappers/heapmpi-build",
            "--mpicc",
            mpi.mpicc,
            "--name",
            mpi.name,
            "--prefix",
            prefix,
        )

    def setup_run_environment(self, env):
        # PATH and HEAPMPI_ROOT only: never LD_PRELOAD. Users start ranks
        # with `heapmpi-exec` (any launcher) or `heapmpirun`.
        env.prepend_path("PATH", self.prefix.bin)
        env.set("HEAPMPI_ROOT", self.prefix)

    def test_heapmpi_exec_picks_this_build(self):
        """a program built with the spec's mpicc gets this build's library"""
        mpi = self.spec["mpi"]
        with open("hello.c", "w") as f:
            f.write(
                "#include <mpi.h>\n"
                "int main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n"
            )
        which(mpi.mpicc)("-o", "hello", "hello.c")
        exec_ = which(join_path(self.prefix.bin, "heapmpi-exec"))
        out = exec_("--heapmpi-dry-run", "./hello", output=str, error=str)
        lib = join_path(self.prefix.lib, mpi.name, "libheapmpi.so")
        assert lib in out, "heapmpi-exec does not preload {0}: {1}".format(lib, out)

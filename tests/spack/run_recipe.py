#!/usr/bin/env python3
"""Runs heapmpi's Spack recipe (spack/packages/heapmpi/package.py) with the
stand-in of tests/spack/spack: the directives, `install` staged in the
checkout, `setup_run_environment`, and every `test_*` method in a scratch
directory. Usage: run_recipe.py CHECKOUT MPI_NAME MPI_PREFIX MPICC LLVM_PREFIX
INSTALL_PREFIX. Prints the run environment as "set NAME VALUE" and
"prepend_path NAME VALUE" lines; exits non-zero on any failure."""

import importlib.util
import os
import sys
import tempfile

checkout, mpi_name, mpi_prefix, mpicc, llvm_prefix, install_prefix = sys.argv[1:7]
sys.path.insert(0, os.path.join(checkout, "tests", "spack"))
import spack.package as sp  # noqa: E402  (the stand-in)

spec_file = os.path.join(checkout, "spack", "packages", "heapmpi", "package.py")
mod_spec = importlib.util.spec_from_file_location("heapmpi_recipe", spec_file)
recipe = importlib.util.module_from_spec(mod_spec)
mod_spec.loader.exec_module(recipe)

# The directives a recipe of an MPI tool must have.
names = {a[0].split("@")[0] for (d, a, k) in sp.DIRECTIVES if d == "depends_on"}
for need in ("mpi", "rust", "llvm"):
    assert need in names, "recipe does not depend on " + need
assert any(d == "version" for (d, a, k) in sp.DIRECTIVES), "recipe has no version"


class Dep:
    def __init__(self, name, prefix, mpicc=None):
        self.name = name
        self.prefix = sp.Prefix(prefix)
        self.mpicc = mpicc


class Spec(dict):
    pass


spec = Spec(mpi=Dep(mpi_name, mpi_prefix, mpicc), llvm=Dep("llvm", llvm_prefix))
pkg = recipe.Heapmpi()
pkg.spec = spec
pkg.prefix = sp.Prefix(install_prefix)

os.chdir(checkout)  # the stage: Spack runs install() in the expanded source
pkg.install(spec, pkg.prefix)


class EnvMods:
    def set(self, name, value):
        print("set", name, value)

    def prepend_path(self, name, value):
        print("prepend_path", name, value)


pkg.setup_run_environment(EnvMods())

tests = [m for m in dir(pkg) if m.startswith("test_")]
assert tests, "recipe has no test method"
for t in tests:
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        getattr(pkg, t)()
        print("test", t, "passed")

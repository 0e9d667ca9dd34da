# A minimal stand-in for Spack, for tests/deploy.rs: just enough of
# `spack.package` to load spack/packages/heapmpi/package.py and run its
# install, run-environment and test methods (see package.py here).

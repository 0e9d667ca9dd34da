"""A minimal stand-in for `spack.package`: the names heapmpi's recipe uses,
with Spack's meaning where the test can observe it.

- Directives (version, depends_on, conflicts, maintainers, license) record
  themselves in DIRECTIVES, which run_recipe.py checks.
- `env` is the build environment (os.environ), `which` finds an executable
  and returns an Executable, which raises ProcessError on failure and
  returns stdout with output=str, as Spack's does.
- Prefix is a path whose attributes are sub-directories (prefix.bin).
- Package instances get `spec` and `prefix` from the driver.
"""

import os
import shutil
import subprocess

DIRECTIVES = []


def _directive(name):
    def record(*args, **kwargs):
        DIRECTIVES.append((name, args, kwargs))

    return record


version = _directive("version")
depends_on = _directive("depends_on")
conflicts = _directive("conflicts")
maintainers = _directive("maintainers")
license = _directive("license")

env = os.environ


class ProcessError(Exception):
    pass


def join_path(*parts):
    return os.path.join(*[str(p) for p in parts])


class Prefix(str):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Prefix(os.path.join(self, name))


class Executable:
    def __init__(self, path):
        self.path = str(path)

    def __call__(self, *args, output=None, error=None):
        r = subprocess.run(
            [self.path] + [str(a) for a in args],
            stdout=subprocess.PIPE if output is str else None,
            stderr=subprocess.PIPE if error is str else None,
            text=True,
        )
        if r.returncode != 0:
            raise ProcessError(
                "{0} {1}: exit {2}\n{3}".format(self.path, " ".join(map(str, args)), r.returncode, r.stderr or "")
            )
        return r.stdout if output is str else None


def which(name):
    path = name if os.path.isabs(str(name)) else shutil.which(str(name))
    return Executable(path) if path and os.access(path, os.X_OK) else None


class Package:
    spec = None
    prefix = None

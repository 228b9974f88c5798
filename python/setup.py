"""Builds the package with the kernel library inside it (ktune/_lib/libktune_kernels.so).

The library comes from $KTUNE_LIBRARY when that names a built libktune_kernels.so (a build tree
you already have); otherwise it is built here from the repository around this folder: CMake,
library only (KTUNE_BUILD_TOOL=OFF), Release, in build/python-package, with whatever backends
the machine has (ci/install-deps installs what they need). Everything else is in pyproject.toml.
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)


def built_library():
    given = os.environ.get("KTUNE_LIBRARY")
    if given:
        if not os.path.isfile(given):
            raise SystemExit(f"KTUNE_LIBRARY={given}: no such file (give the path of a built libktune_kernels.so)")
        return given
    build = os.path.join(REPOSITORY, "build", "python-package")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.check_call(["cmake", "-S", REPOSITORY, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
                           "-DKTUNE_BUILD_TOOL=OFF", "-DKTUNE_BUILD_TESTS=OFF"])
    subprocess.check_call(["cmake", "--build", build, "--target", "ktune_kernels_shared", "-j", str(os.cpu_count())])
    for root, _, files in os.walk(os.path.join(build, "library")):
        if "libktune_kernels.so" in files:
            return os.path.join(root, "libktune_kernels.so")
    raise SystemExit(f"the library build in {build} made no libktune_kernels.so")


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "ktune", "_lib")
        os.makedirs(target, exist_ok=True)
        # The real file under the plain name: the package loads _lib/libktune_kernels.so*.
        shutil.copyfile(os.path.realpath(built_library()), os.path.join(target, "libktune_kernels.so"))


setup(cmdclass={"build_py": BuildWithLibrary})

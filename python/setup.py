# SPDX-License-Identifier: BSD-3-Clause
"""`pip install --no-deps --no-build-isolation ./python`: the collie package, with
libcollie.so built from this source tree by CMake and bundled beside it (or the
one COLLIE_LIBRARY names).  No compiled extension: the package calls the C
library through ctypes, so no Python or PyTorch ABI is baked in."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        lib = os.environ.get("COLLIE_LIBRARY")
        if not lib:
            build = os.path.join(self.build_lib, "..", "collie-cmake")
            subprocess.check_call(["cmake", "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DCOLLIE_BUILD_TRAIN=OFF", "-DCOLLIE_BUILD_TESTS=OFF",
                                   "-DCOLLIE_BUILD_EXAMPLES=OFF"])
            subprocess.check_call(["cmake", "--build", build, "--target", "collie", "-j",
                                   str(os.cpu_count() or 1)])
            lib = os.path.join(build, "libcollie.so")
        shutil.copy(lib, os.path.join(self.build_lib, "collie", "libcollie.so"))


setup(
    name="collie",
    version="0.1.0",
    description="collie: collective communication for data-parallel training (ctypes over libcollie)",
    packages=["collie", "collie.torch"],
    license="BSD-3-Clause",
    classifiers=["License :: OSI Approved :: BSD License"],
    python_requires=">=3.8",
    cmdclass={"build_py": BuildPyWithLibrary},
)

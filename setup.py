"""kiln's wheel (`pip install --no-build-isolation .`): CMake builds kiln and installs it into a staging folder, whose
files are then laid out inside the `kiln` package, so that one folder holds everything and finds it relative to itself:

    kiln/_kiln*.so        the extension (RPATH $ORIGIN/lib)
    kiln/bin/kiln         the CLI (RPATH $ORIGIN/../lib), run by the `kiln` entry-point script
    kiln/lib/             ONNX Runtime (and its CUDA/TensorRT providers when built with KILN_ORT_GPU=ON)
    kiln/share/kiln/      the packaged models and the licences
    kiln/hdf5-plugins/    the zstd filter, put on h5py's search path by `import kiln`

The CMake build folder is KILN_BUILD_DIR, or build/ beside this file (the one `make build` fills, so that `make build`
and then `pip install .` compile once); it is configured here (Release, KILN_ORT_GPU from the environment) only when it
is not yet. Nothing is downloaded: ONNX Runtime and the models come from the kiln cache that `make deps` fills.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.egg_info import egg_info

SOURCE = Path(__file__).resolve().parent
CMAKE_TARGETS = ["_kiln", "kiln_cli", "h5z_kiln_zstd"]


def cmake_build_dir():
    return Path(os.environ.get("KILN_BUILD_DIR") or SOURCE / "build").resolve()


def wheel_work_dir():
    """setuptools' own files (staging, egg-info): beside the CMake build folder, never in it (tools/gpu's bundle ships
    every shared object under the build folder, and the staging holds ONNX Runtime twice)."""
    build_dir = cmake_build_dir()
    return build_dir.parent / (build_dir.name + "-wheel")


def project_version():
    text = (SOURCE / "CMakeLists.txt").read_text()
    return re.search(r"project\(kiln VERSION ([0-9.]+)", text).group(1)


def run(command):
    print("kiln wheel:", " ".join(str(part) for part in command), flush=True)
    subprocess.run([str(part) for part in command], check=True)


class BuildBesideCmakeFolder(build):
    """setuptools' own build files go to wheel_work_dir(), not into build/lib.* where CMake builds."""

    def initialize_options(self):
        super().initialize_options()
        self.build_base = str(wheel_work_dir())


class EggInfoBesideCmakeFolder(egg_info):
    def initialize_options(self):
        super().initialize_options()
        self.egg_base = str(wheel_work_dir())
        os.makedirs(self.egg_base, exist_ok=True)


class CmakeBuild(build_ext):
    """Builds kiln with CMake and copies its installed files into the package (the .py files come from build_py)."""

    def run(self):
        build_dir = cmake_build_dir()
        if not (build_dir / "CMakeCache.txt").is_file():
            run(["cmake", "-S", SOURCE, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                 f"-DKILN_ORT_GPU={os.environ.get('KILN_ORT_GPU', 'OFF')}", f"-DPython3_EXECUTABLE={sys.executable}",
                 "-DKILN_BUILD_PYTHON=ON"])
        jobs = [] if os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") else ["-j", str(os.cpu_count() or 1)]
        run(["cmake", "--build", build_dir, *jobs, "--target", *CMAKE_TARGETS])
        staging = Path(self.build_temp).resolve() / "kiln-install"
        shutil.rmtree(staging, ignore_errors=True)
        run(["cmake", "--install", build_dir, "--prefix", staging])
        package = Path(self.get_ext_fullpath("kiln._kiln")).parent
        self.lay_out(staging, package)

    def lay_out(self, staging, package):
        installed_package = staging / "lib" / "python3" / "dist-packages" / "kiln"
        module = Path(self.get_ext_filename("kiln._kiln")).name
        if not (installed_package / module).is_file():
            built = sorted(p.name for p in installed_package.glob("_kiln*.so"))
            sys.exit(f"kiln wheel: CMake built {built} but this Python ({sys.executable}) loads {module}: "
                     f"configure {cmake_build_dir()} with -DPython3_EXECUTABLE={sys.executable}, or set KILN_BUILD_DIR "
                     "to a new folder")
        package.mkdir(parents=True, exist_ok=True)
        shutil.copy2(installed_package / module, package / module)
        copy_tree(installed_package / "hdf5-plugins", package / "hdf5-plugins")
        (package / "bin").mkdir(exist_ok=True)
        shutil.copy2(staging / "bin" / "kiln", package / "bin" / "kiln")
        (package / "lib").mkdir(exist_ok=True)
        for library in (staging / "lib").glob("*.so*"):
            if not library.is_symlink():  # libonnxruntime.so -> .so.1 is for linking only (a wheel cannot hold links)
                shutil.copy2(library, package / "lib" / library.name)
        copy_tree(staging / "share" / "kiln", package / "share" / "kiln")


def copy_tree(source, target):
    if source.is_dir():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)


setup(
    version=project_version(),
    packages=["kiln"],
    package_dir={"kiln": "python/kiln"},
    ext_modules=[Extension("kiln._kiln", sources=[])],
    cmdclass={"build": BuildBesideCmakeFolder, "egg_info": EggInfoBesideCmakeFolder, "build_ext": CmakeBuild},
    zip_safe=False,
)

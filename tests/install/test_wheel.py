"""pip install of kiln: `pip wheel --no-build-isolation` of the checkout (setup.py: CMake, reusing this build's
folder), installed into a fresh `python3 -m venv --system-site-packages` outside the checkout, then used from another
folder with a clean environment (no PYTHONPATH, LD_LIBRARY_PATH, HDF5_PLUGIN_PATH or KILN_* variables): the `kiln`
command on PATH, `import kiln`, h5py reading kiln's zstd datasets, and a packaged model on a real photo."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SYSTEM_PYTHON = "/usr/bin/python3"
SOURCE_DIR = Path(os.environ.get("KILN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ["KILN_CLI"]).resolve().parent  # the CLI is ${CMAKE_BINARY_DIR}/kiln
PHOTO = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"


def run(command, **kwargs):
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=600, **kwargs)
    assert result.returncode == 0, f"{command} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


def clean_environment(venv):
    """What a user's shell has after activating the venv: nothing pointing into the checkout or its build."""
    return {"HOME": os.environ.get("HOME", "/tmp"), "PATH": f"{venv}/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    dist = tmp_path_factory.mktemp("dist")
    environment = {**os.environ, "KILN_BUILD_DIR": str(BUILD_DIR)}
    run([SYSTEM_PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", dist,
         SOURCE_DIR], env=environment)
    wheels = list(dist.glob("kiln-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    venv = tmp_path_factory.mktemp("venv") / "kiln-env"
    run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv])
    run([venv / "bin" / "python", "-m", "pip", "install", "--no-index", "--no-deps", wheel],
        env=clean_environment(venv))
    return venv


@pytest.fixture
def elsewhere(tmp_path_factory):
    return tmp_path_factory.mktemp("elsewhere")


def python_in(venv, code, cwd):
    return run([venv / "bin" / "python", "-c", code], cwd=cwd, env=clean_environment(venv)).stdout


def test_the_wheel_holds_the_module_the_cli_onnx_runtime_the_models_and_the_plugin(wheel):
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert wheel.name.endswith(f"-{tag}-{tag}-linux_x86_64.whl"), wheel.name  # built for this interpreter
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ["kiln/__init__.py", "kiln/_cli.py", "kiln/bin/kiln", "kiln/lib/libonnxruntime.so.1",
                     "kiln/share/kiln/models/catalog.json", "kiln/share/kiln/models/selfie.onnx",
                     "kiln/hdf5-plugins/libh5z_kiln_zstd.so"]:
        assert required in names, f"{required} is not in {wheel.name}"
    assert any(n.startswith("kiln/_kiln.") and n.endswith(".so") for n in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "kiln = kiln._cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_installed_files_find_onnx_runtime_beside_them(venv):
    package = next((venv / "lib").glob("python3*/site-packages/kiln"))
    module = next(package.glob("_kiln*.so"))
    for binary, rpath in [(module, "$ORIGIN/lib"), (package / "bin" / "kiln", "$ORIGIN/../lib")]:
        dynamic = run(["readelf", "-d", binary]).stdout
        assert rpath in dynamic, f"{binary}: no {rpath} in\n{dynamic}"
        assert str(BUILD_DIR) not in dynamic and str(SOURCE_DIR) not in dynamic
        assert "not found" not in run(["ldd", binary]).stdout


def test_the_kiln_command_on_path_renders_the_demo_from_another_folder(venv, elsewhere):
    result = run(["bash", "-c", "command -v kiln && kiln render --demo -o demo.h5 --quiet"], cwd=elsewhere,
                 env=clean_environment(venv))
    assert result.stdout.splitlines()[0] == str(venv / "bin" / "kiln")
    assert (elsewhere / "demo.h5").is_file()
    out = python_in(venv, "import kiln, h5py\n"
                          "with h5py.File('demo.h5') as f: images = f['images']; "
                          "print(images.shape, images.compression, int(images[0].min()), int(images[-1].max()))",
                    elsewhere)
    assert out.split()[:5] == ["(10000,", "500,", "800)", "None", "0"]  # zstd is a filter h5py names None


def test_import_kiln_lets_h5py_read_zstd_datasets_which_it_cannot_without(venv, elsewhere):
    python_in(venv, "import kiln, numpy as np\n"
                    "walk = np.cumsum(np.random.default_rng(1).normal(size=200))\n"
                    "kiln.create_images_from_data(walk, 'out.h5', seq_len=40, "
                    "resolution={'width': 96, 'height': 64, 'dpi': 100}, storage_config={'format': 'hdf5'})",
              elsewhere)
    read = "import h5py\nprint(int(h5py.File('out.h5')['images'][0].min()))"
    without = subprocess.run([venv / "bin" / "python", "-c", read], cwd=elsewhere, env=clean_environment(venv),
                             capture_output=True, text=True)
    assert without.returncode != 0 and "can't read data" in without.stderr.lower(), without.stderr
    assert python_in(venv, "import kiln\n" + read, elsewhere).strip() == "0"


def test_the_python_module_renders_and_is_the_installed_one(venv, elsewhere):
    out = python_in(venv, "import kiln, numpy as np\n"
                          "print(kiln.__file__)\n"
                          "w = np.cumsum(np.random.default_rng(0).normal(size=(3, 50)), axis=1).astype(np.float32)\n"
                          "images = kiln.render(w, width=120, height=80)\n"
                          "print(images.shape, images.dtype, int(images.min()), int(images.max()))", elsewhere)
    location, shape = out.splitlines()
    assert location.startswith(str(venv)), location
    assert shape == "(3, 80, 120) uint8 0 255"


def test_a_packaged_model_segments_the_person_in_a_photo(venv, elsewhere):
    out = python_in(venv, f"""
import kiln
from skimage import io
spec = next(m for m in kiln.models() if m["name"] == "selfie")
print(spec["file"])
size = spec["input"]
photo = io.imread("{PHOTO}")
batch = kiln.preprocess(photo[None], width=size["width"], height=size["height"], scale=size["scale"],
                        mean=size["mean"], std=size["std"], mode="cpu")
mask = kiln.Model("selfie", device="cpu")(batch)["mask"][0, 0]
print(float(mask[64:192, 96:160].mean()), float(mask[:32, :32].mean()))
""", elsewhere)
    model_file, scores = out.splitlines()
    assert model_file.startswith(str(venv)), model_file  # the wheel's models, not the build's cache
    person, corner = map(float, scores.split())
    assert person > 0.7 and corner < 0.1  # the astronaut fills the middle; the top-left corner is background

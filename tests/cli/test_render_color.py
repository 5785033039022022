"""kiln render --color: RGB charts (N, H, W, 3) in HDF5 and NPY, RGB PNG/JPEG files, the colours and their settings
(flags and the config file), a colour preview, and the outputs that refuse colour."""
import json

import numpy as np
import pytest

from conftest import read_dataset, run_kiln

OPENCL = {"KILN_OPENCL_DEVICE_TYPE": "all"}

CHART = ["--demo", "--demo-points", 120, "--style", "candlestick", "--seq-len", 40, "--volume", "--moving-average",
         "5,20", "--width", 160, "--height", 100, "--color", "--mode", "cpu", "-q"]
UP, DOWN = (0x00, 0x63, 0x40), (0xA0, 0x21, 0x28)  # mplfinance's charles candles
VOLUME_UP, VOLUME_DOWN = (0x00, 0x7A, 0x00), (0xD5, 0x0D, 0x18)
MA = [(0x40, 0xE0, 0xD0), (0xFF, 0x00, 0xFF)]  # the first two of mplfinance's default moving-average colours


def colours(image):
    return {tuple(int(v) for v in c) for c in np.unique(image.reshape(-1, 3), axis=0)}


def test_hdf5_and_npy_hold_rgb_images_in_the_default_colours(tmp_path):
    run_kiln("render", *CHART, "-o", tmp_path / "c.h5")
    run_kiln("render", *CHART, "-o", tmp_path / "c.npy")
    data, attrs = read_dataset(tmp_path / "c.h5")
    images = np.load(tmp_path / "c.npy")
    assert images.shape == (120 - 40 + 1 - 19, 100, 160, 3) and images.dtype == np.uint8
    np.testing.assert_array_equal(data["images"], images)
    assert json.loads(attrs["config"])["color_up"] == "#006340"
    found = colours(images)
    for colour in [(255, 255, 255), UP, DOWN, VOLUME_UP, VOLUME_DOWN, *MA]:
        assert colour in found, colour
    # The volume panel (the bottom fifth) holds only the background and the two volume colours.
    assert colours(images[:, 80:]) <= {(255, 255, 255), VOLUME_UP, VOLUME_DOWN}


def test_flags_and_the_config_file_set_the_colours(tmp_path):
    run_kiln("render", *CHART, "--color-up", "#112233", "--color-background", "000000", "--color-averages",
             "#ff0000", "-o", tmp_path / "flags.npy")
    flags = np.load(tmp_path / "flags.npy")
    found = colours(flags)
    assert {(0x11, 0x22, 0x33), (0, 0, 0), (255, 0, 0)} <= found and UP not in found and MA[1] not in found
    (tmp_path / "config.yaml").write_text(
        "image:\n  color: true\n  color_up: '#112233'\n  color_background: '000000'\n  color_averages: '#ff0000'\n")
    chart = [a for a in CHART if a != "--color"]
    run_kiln("render", *chart, "--config", tmp_path / "config.yaml", "-o", tmp_path / "config.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "config.npy"), flags)
    bad = run_kiln("render", *CHART, "--color-down", "#12345", "-o", tmp_path / "bad.npy", check=False)
    assert bad.returncode != 0 and "#rrggbb" in bad.stderr


def test_png_and_jpeg_files_are_rgb(tmp_path):
    from PIL import Image

    run_kiln("render", *CHART, "--limit", 3, "-o", tmp_path / "c.npy")
    run_kiln("render", *CHART, "--limit", 3, "--format", "png", "-o", tmp_path / "png")
    run_kiln("render", *CHART, "--limit", 3, "--format", "jpeg", "-o", tmp_path / "jpeg")
    images = np.load(tmp_path / "c.npy")
    png = Image.open(tmp_path / "png" / "price_pattern_000001.png")
    assert png.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(png), images[1])
    jpeg = Image.open(tmp_path / "jpeg" / "price_pattern_000001.jpg")
    assert jpeg.mode == "RGB" and jpeg.size == (160, 100)
    assert np.abs(np.asarray(jpeg, np.int32) - images[1]).mean() < 8  # lossy, close on average


def test_preview_is_an_rgb_grid(tmp_path):
    from PIL import Image

    run_kiln("render", *CHART, "-o", tmp_path / "c.h5", "--preview", tmp_path / "p.png")
    preview = Image.open(tmp_path / "p.png")
    assert preview.mode == "RGB" and UP in colours(np.asarray(preview))


@pytest.mark.parametrize("args, needle", [
    (["--preset", "jkx20", "--format", "jkx-dat", "-o", "jkx"], "jkx-dat"),
    (["--style", "gasf", "--seq-len", 20, "-o", "g.npy"], "encodings"),
])
def test_outputs_and_styles_without_colour_refuse_it(tmp_path, args, needle):
    args = [str(tmp_path / a) if a in ("jkx", "g.npy") else a for a in args]
    result = run_kiln("render", "--demo", "--demo-points", 100, "--color", "-q", *args, check=False)
    assert result.returncode != 0 and needle in result.stderr and "color" in result.stderr
    assert not list(tmp_path.iterdir())  # nothing written


def test_opencl_gives_the_cpus_colour_images(tmp_path):
    backends = json.loads(run_kiln("devices", "--json", env=OPENCL).stdout)["backends"]
    if not any(b["name"] == "opencl" and b["available"] for b in backends):
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    chart = [a for a in CHART if a not in ("--mode", "cpu", "-q")]
    run_kiln("render", *chart, "--mode", "cpu", "-q", "-o", tmp_path / "cpu.npy")
    result = run_kiln("render", *chart, "--mode", "gpu", "-o", tmp_path / "gpu.npy", env=OPENCL)
    assert "opencl" in result.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "gpu.npy"), np.load(tmp_path / "cpu.npy"))


def test_shards_and_merged_pieces_keep_the_colour_axis(tmp_path):
    chart = [*CHART, "--limit", 60]
    run_kiln("render", *chart, "-o", tmp_path / "one.h5")
    run_kiln("render", *chart, "-o", tmp_path / "vds.h5", "--images-per-file", 25)
    for i in range(2):
        run_kiln("render", *chart, "-o", tmp_path / "p.h5", "--shard", f"{i}/2")
    run_kiln("merge", *sorted(tmp_path.glob("p.shard-*.h5")), "-o", tmp_path / "merged.h5")
    one, _ = read_dataset(tmp_path / "one.h5")
    assert one["images"].shape == (60, 100, 160, 3)
    for name in ("vds.h5", "merged.h5"):
        data, _ = read_dataset(tmp_path / name)
        np.testing.assert_array_equal(data["images"], one["images"])

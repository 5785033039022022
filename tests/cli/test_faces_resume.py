"""kiln faces killed with SIGKILL after its first part, then --resume: the outputs equal an uninterrupted run's (rows,
paths, JSON lines, crops, dedup across the parts); a damaged part is analyzed again; other settings and a forgotten
--resume are refused."""

import h5py
import numpy as np
import pytest

from conftest import kill_once_made, run_kiln
from test_faces_cli import ASTRONAUT, COFFEE, HOPPER, pytestmark  # noqa: F401 (skips without faces)

ARGS = ["--dedup", 0.7, "--batch-size", 4, "--threads", 2, "-q"]


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """72 real photos: the three, each also mirrored, at several sizes (PNG)."""
    from PIL import Image
    folder = tmp_path_factory.mktemp("photos")
    sources = [Image.open(p).convert("RGB") for p in (ASTRONAUT, HOPPER, COFFEE)]
    rng = np.random.default_rng(3)
    for i in range(72):
        image = sources[i % 3]
        if i % 2:
            image = image.transpose(Image.FLIP_LEFT_RIGHT)
        side = int(rng.integers(300, 520))
        image.resize((side, side * image.height // image.width)).save(folder / f"p{i:03d}.png")
    return folder


def outputs(folder):
    with h5py.File(folder / "faces.h5", "r") as f:
        data = {name: f[name][()] for name in f.keys()}
        settings = f.attrs["settings"]
    lines = (folder / "faces.jsonl").read_text().replace(str(folder), "")
    crops = sorted(p.name for p in (folder / "crops").iterdir())
    return data, settings, lines, crops


def run_args(folder, photos):
    return [photos, "-o", folder / "faces.h5", "--jsonl", folder / "faces.jsonl", "--crops", folder / "crops", *ARGS]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, photos):
    folder = tmp_path_factory.mktemp("reference")
    run_kiln("faces", *run_args(folder, photos))
    return outputs(folder)


def kill_after_first_part(folder, photos):
    kill_once_made(["faces", *run_args(folder, photos)], folder / "faces.h5.parts" / "part-00000000.bin")
    assert not (folder / "faces.h5").exists()


def assert_same(folder, reference):
    data, settings, lines, crops = outputs(folder)
    ref_data, ref_settings, ref_lines, ref_crops = reference
    assert set(data) == set(ref_data) and settings == ref_settings
    for name in ref_data:
        np.testing.assert_array_equal(data[name], ref_data[name], err_msg=name)
    assert lines == ref_lines and crops == ref_crops
    assert not (folder / "faces.h5.parts").exists() and not (folder / "faces.h5.lock").exists()


def test_killed_run_resumes_to_the_uninterrupted_outputs(tmp_path, photos, reference):
    assert reference[2].count('"duplicate_of"') > 40  # faces of later parts duplicate rows of the first
    assert len(reference[0]["embeddings"]) == 2
    kill_after_first_part(tmp_path, photos)
    refused = run_kiln("faces", *run_args(tmp_path, photos), check=False)
    assert refused.returncode != 0 and "--resume" in refused.stderr
    other = run_kiln("faces", *run_args(tmp_path, photos), "--resume", "--min-score", 0.8, check=False)
    assert other.returncode != 0 and "other inputs or settings" in other.stderr
    run_kiln("faces", *run_args(tmp_path, photos), "--resume")
    assert_same(tmp_path, reference)


def test_a_damaged_part_is_analyzed_again(tmp_path, photos, reference):
    kill_after_first_part(tmp_path, photos)
    part = tmp_path / "faces.h5.parts" / "part-00000000.bin"
    data = bytearray(part.read_bytes())
    data[-100] ^= 0x10  # one bit of a row
    part.write_bytes(bytes(data))
    result = run_kiln("faces", *run_args(tmp_path, photos), "--resume")
    assert "part-00000000.bin is damaged" in result.stderr and "checksum" in result.stderr
    assert_same(tmp_path, reference)

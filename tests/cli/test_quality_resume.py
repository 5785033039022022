"""kiln quality --filter-to killed with SIGKILL after its first part, then --resume: the JSON lines, the filter
folder and the --preview sheet equal an uninterrupted run's (no half-copied file left); a damaged part is measured again; other settings, a
forgotten --resume and a --resume with nothing to keep parts in are refused."""
import filecmp
import os

import pytest

from conftest import kill_once_made, run_kiln

ARGS = ["--mode", "cpu", "--threads", "1", "--batch-size", "32", "--min-blur", "100", "--min-sharpness", "40", "-q"]


def quality_photos(folder, count):
    """`count` real photos (two, resized; every third blurred so that it fails), as JPEG."""
    from PIL import Image, ImageFilter
    sources = [Image.open(p).convert("RGB") for p in ("/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
                                                      "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg")]
    for i in range(count):
        image = sources[i % 2].resize((500 + i % 97, 500 + i % 89))
        if i % 3 == 0:
            image = image.filter(ImageFilter.GaussianBlur(3))
        image.save(folder / f"p{i:04d}.jpg", quality=90)
    return folder


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    return quality_photos(tmp_path_factory.mktemp("photos"), 600)


def run_args(folder, photos):
    return [photos, "--json", folder / "q.jsonl", "--filter-to", folder / "passed", "--preview", folder / "q.png", *ARGS]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, photos):
    folder = tmp_path_factory.mktemp("reference")
    run_kiln("quality", *run_args(folder, photos))
    return folder


def kill_after_first_part(folder, photos):
    kill_once_made(["quality", *run_args(folder, photos)], folder / "q.jsonl.parts" / "part-00000000.bin")
    assert not (folder / "q.jsonl").exists()


def assert_same(folder, reference):
    assert (folder / "q.jsonl").read_bytes() == (reference / "q.jsonl").read_bytes()
    assert (folder / "q.png").read_bytes() == (reference / "q.png").read_bytes()  # ranked from the kept parts too
    names = sorted(os.listdir(reference / "passed"))
    assert 300 < len(names) < 600
    assert sorted(os.listdir(folder / "passed")) == names  # no temporary file of a killed copy either
    assert not filecmp.cmpfiles(folder / "passed", reference / "passed", names, shallow=False)[1]
    assert not (folder / "q.jsonl.parts").exists() and not (folder / "q.jsonl.lock").exists()


def test_killed_run_resumes_to_the_uninterrupted_outputs(tmp_path, photos, reference):
    kill_after_first_part(tmp_path, photos)
    # What a copy killed mid-write leaves in the filter folder goes on resume.
    (tmp_path / "passed" / ".p0001.jpg.tmp.AbC123").write_bytes(b"half a copy")
    (tmp_path / ".q.jsonl.tmp.XyZ789").write_bytes(b"half the lines")  # a kill while the lines were assembled
    result = run_kiln("quality", *run_args(tmp_path, photos), "--resume")
    assert "Resumed: " in result.stdout
    assert_same(tmp_path, reference)
    assert not (tmp_path / ".q.jsonl.tmp.XyZ789").exists()


def test_damaged_part_is_measured_again(tmp_path, photos, reference):
    kill_after_first_part(tmp_path, photos)
    part = tmp_path / "q.jsonl.parts" / "part-00000000.bin"
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0x10
    part.write_bytes(bytes(data))
    args = [a for a in run_args(tmp_path, photos) if a != "-q"]
    result = run_kiln("quality", *args, "--resume")
    assert "part-00000000.bin is damaged (checksum mismatch)" in result.stderr
    assert "Resumed: " not in result.stdout
    assert_same(tmp_path, reference)


def test_other_settings_and_forgotten_resume_are_refused(tmp_path, photos):
    kill_after_first_part(tmp_path, photos)
    forgotten = run_kiln("quality", *run_args(tmp_path, photos), check=False)
    assert forgotten.returncode != 0 and "use --resume to continue it" in forgotten.stderr
    other_args = [90 if a == "100" else a for a in run_args(tmp_path, photos)]  # --min-blur 90
    other = run_kiln("quality", *other_args, "--resume", check=False)
    assert other.returncode != 0 and "holds a run with other inputs or settings" in other.stderr
    nothing = run_kiln("quality", photos, "--resume", *ARGS, check=False)
    assert nothing.returncode != 0 and "keeps no parts" in nothing.stderr

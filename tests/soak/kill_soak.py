"""make soak: SIGKILL at KILN_SOAK_KILLS random moments (default 20) of each long job, each followed by --resume,
and the output compared with an uninterrupted run's: a single-file render, a sharded render, a PNG folder render
a faces run and a `kiln quality --filter-to` run. Prints one JSON line per job with the kills, how many landed mid-run and the identical count.
Not part of make test (minutes); CI runs the few kills of tests/cli/test_render_resume.py, test_faces_resume.py and
test_quality_resume.py."""
import filecmp
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
from conftest import KILN, assert_same_output, run_kiln  # noqa: E402
from test_quality_resume import quality_photos  # noqa: E402

KILLS = int(os.environ.get("KILN_SOAK_KILLS", "20"))
RENDER = ["render", "--demo", "--demo-points", 9099, "--width", 200, "--height", 100, "--threads", 2, "-q"]
JOBS = {
    "single_file": (RENDER, "out.h5"),
    "sharded": (RENDER + ["--images-per-file", 2000], "out.h5"),
    "png_folder": (RENDER + ["--format", "png"], "out"),
}


def same_folder(a, b):
    """Every image byte-identical; the manifests equal but for created_at."""
    names = sorted(os.listdir(a))
    assert names == sorted(os.listdir(b))
    mismatch = filecmp.cmpfiles(a, b, [n for n in names if n != "manifest.json"], shallow=False)[1]
    assert not mismatch, mismatch[:5]
    manifests = [json.loads((p / "manifest.json").read_text()) for p in (a, b)]
    for m in manifests:
        m.pop("created_at", None)
    assert manifests[0] == manifests[1]


def output_file(out):
    return ["-o", out]


def soak(tmp_path, args, out_name, compare, output_args=output_file):
    ref = tmp_path / "ref" / out_name
    ref.parent.mkdir()
    started = time.monotonic()
    run_kiln(*args, *output_args(ref))
    duration = time.monotonic() - started
    rng = random.Random(int(os.environ.get("KILN_SOAK_SEED", "1")))
    landed = 0
    for k in range(KILLS):
        out = tmp_path / f"run{k}" / out_name
        out.parent.mkdir()
        proc = subprocess.Popen([KILN, *map(str, [*args, *output_args(out)])], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, duration))
        proc.send_signal(signal.SIGKILL)
        landed += proc.wait() == -signal.SIGKILL
        resumed = run_kiln(*args, *output_args(out), "--resume")
        assert "damaged" not in resumed.stderr, resumed.stderr  # a kill never spoils committed work
        compare(ref, out)
    return {"kills": KILLS, "landed_mid_run": landed, "identical": KILLS, "run_seconds": round(duration, 2)}


@pytest.mark.parametrize("job", sorted(JOBS))
def test_render_soak(tmp_path, job):
    args, out_name = JOBS[job]
    compare = same_folder if job == "png_folder" else assert_same_output
    print(json.dumps({"job": job, **soak(tmp_path, args, out_name, compare)}))


def test_faces_soak(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    from PIL import Image
    sources = [Image.open(p).convert("RGB") for p in ("/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
                                                      "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg")]
    for i in range(128):
        image = sources[i % 2].resize((300 + i, 300 + i))
        image.save(photos / f"p{i:03d}.jpg", quality=90)
    args = ["faces", photos, "--dedup", 0.7, "--batch-size", 4, "--threads", 2, "-q"]

    def compare(a, b):
        assert_same_output(a, b, ignore=())

    print(json.dumps({"job": "faces", **soak(tmp_path, args, "faces.h5", compare)}))


def test_quality_soak(tmp_path):
    """2,400 photos measured and the passing ones copied; a resumed run's JSON lines and filter folder (no file left
    half-copied) equal the uninterrupted run's."""
    photos = tmp_path / "photos"
    photos.mkdir()
    quality_photos(photos, 2400)
    args = ["quality", photos, "--mode", "cpu", "--threads", 2, "--min-blur", 100, "--min-sharpness", 40, "-q"]

    def outputs(out):
        return ["--json", out / "q.jsonl", "--filter-to", out / "passed"]

    def compare(a, b):
        assert (a / "q.jsonl").read_bytes() == (b / "q.jsonl").read_bytes()
        names = sorted(os.listdir(a / "passed"))
        assert sorted(os.listdir(b / "passed")) == names
        assert not filecmp.cmpfiles(a / "passed", b / "passed", names, shallow=False)[1]
        assert sorted(os.listdir(b)) == ["passed", "q.jsonl"]

    print(json.dumps({"job": "quality_filter_to", **soak(tmp_path, args, "out", compare, outputs)}))

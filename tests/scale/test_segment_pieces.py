"""kiln segment --shard I/N over a list of videos (made here from real photographs) and kiln merge: each piece does
its videos, named as a single run names them, with the same frames; the merged manifest lists every output; a
missing piece or a deleted output stops the merge."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import KILN, np, run_kiln

SOURCE_DIR = os.environ.get("KILN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MAKE_VIDEO = os.path.join(SOURCE_DIR, "tools", "video", "make_person_video.py")

pytestmark = pytest.mark.skipif(
    "without ONNX Runtime or FFmpeg" in subprocess.run([KILN, "segment", "--help"], capture_output=True, text=True).stdout
    or shutil.which("ffmpeg") is None,
    reason="this kiln is built without ONNX Runtime or FFmpeg, or the ffmpeg tool is missing (make deps)")


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    folder = tmp_path_factory.mktemp("videos")
    paths = []
    for name, codec in [("a", "h264"), ("b", "vp9"), ("c", "h264")]:
        path = folder / f"{name}.{'webm' if codec == 'vp9' else 'mp4'}"
        subprocess.run([sys.executable, MAKE_VIDEO, "-o", str(path), "--codec", codec, "--seconds", "0.5", "--size",
                        "320x180"], capture_output=True, text=True, check=True)
        paths.append(path)
    return paths


def segment(videos, out, *extra):
    # On the CPU: a GPU forms batches by timing, and its sums depend on the batch size (pieces are compared exactly).
    return run_kiln("segment", *videos, "-o", out, "--output", "npy", "--threads", 2, "--mode", "cpu", "--hw-decode",
                    "none", "-q", *extra)


def test_pieces_and_merge_equal_a_single_run(tmp_path, videos):
    segment(videos, tmp_path / "single")
    pieces = tmp_path / "pieces"
    for i in range(2):
        segment(videos, pieces, "--shard", f"{i}/2")
    records = sorted(pieces.glob("segment.shard-*.json"))
    assert [json.loads(r.read_text())["count"] for r in records] == [1, 2]
    for name in ("a.npy", "b.npy", "c.npy"):
        np.testing.assert_array_equal(np.load(pieces / name), np.load(tmp_path / "single" / name), err_msg=name)
    result = run_kiln("merge", pieces, "-o", pieces / "segment.json")
    assert "Merged 2 pieces (segment, 3 videos)" in result.stdout
    manifest = json.loads((pieces / "segment.json").read_text())
    assert [s["output"] for s in manifest["streams"]] == ["a.npy", "b.npy", "c.npy"]
    assert [s["input"] for s in manifest["streams"]] == [str(v) for v in videos]
    assert manifest["totals"]["frames"] == sum(np.load(pieces / n).shape[0] for n in ("a.npy", "b.npy", "c.npy"))


def test_missing_piece_or_output_stops_the_merge(tmp_path, videos):
    pieces = tmp_path / "pieces"
    for i in range(3):
        segment(videos, pieces, "--shard", f"{i}/3")
    (pieces / "b.npy").unlink()
    (pieces / "segment.shard-00002-of-00003.json").unlink()
    result = run_kiln("merge", pieces, "-o", pieces / "segment.json", check=False)
    assert result.returncode != 0
    assert "b.npy is missing" in result.stderr and "piece 2 of 3 (items 2..2) is missing" in result.stderr
    assert not (pieces / "segment.json").exists()
    refused = run_kiln("segment", videos[0], "-o", tmp_path / "one.npy", "--output", "npy", "--shard", "0/2",
                       check=False)
    assert refused.returncode != 0 and "folder" in refused.stderr


def test_a_malformed_record_is_a_listed_problem(tmp_path, videos):
    pieces = tmp_path / "pieces"
    for i in range(2):
        segment(videos, pieces, "--shard", f"{i}/2")
    record = pieces / "segment.shard-00001-of-00002.json"
    data = json.loads(record.read_text())
    data["complete"] = 1  # valid JSON, wrong type
    record.write_text(json.dumps(data))
    result = run_kiln("merge", pieces, "-o", pieces / "segment.json", check=False)
    assert result.returncode == 2, result.stderr
    assert "segment.shard-00001-of-00002.json: not a kiln segment piece record" in result.stderr

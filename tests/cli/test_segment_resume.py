"""kiln segment killed with SIGKILL once its first output is finished, then --resume: the finished output is kept
(checked against its CRC-32), the others are made, and every output equals an uninterrupted run's; a kept output
that changed is segmented again; a forgotten --resume is refused."""

import pytest

from conftest import kill_once_made, run_kiln
from test_segment_cli import make_video, pytestmark  # noqa: F401 (skips without ONNX Runtime or FFmpeg)

# On the CPU: a GPU forms batches by timing, and its sums depend on the batch size (outputs are compared bytewise).
ARGS = ["--output", "npy", "--threads", 2, "--mode", "cpu", "--hw-decode", "none", "-q"]


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    """A short video and two long ones: the short one is finished long before the others."""
    folder = tmp_path_factory.mktemp("videos")
    for name, seconds in (("a", 0.4), ("b", 2.0), ("c", 2.0)):
        make_video(folder / f"{name}.mp4", seconds=seconds, size="320x180")
    return [folder / f"{name}.mp4" for name in "abc"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, videos):
    out = tmp_path_factory.mktemp("reference") / "out"
    run_kiln("segment", *videos, "-o", out, *ARGS)
    return out


def kill_after_first_output(out, videos):
    kill_once_made(["segment", *videos, "-o", out, *ARGS], out.parent / "out.parts" / "part-00000000.bin")
    assert (out / "a.npy").exists() and not (out / "b.npy").exists()


def assert_same(out, reference):
    names = sorted(p.name for p in reference.iterdir())
    assert sorted(p.name for p in out.iterdir()) == names  # no temporary file of a killed write either
    for name in names:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
    assert not (out.parent / "out.parts").exists() and not (out.parent / "out.lock").exists()


def test_killed_run_keeps_its_finished_output_and_resumes(tmp_path, videos, reference):
    out = tmp_path / "out"
    kill_after_first_output(out, videos)
    finished = (out / "a.npy").stat().st_mtime_ns
    result = run_kiln("segment", *videos, "-o", out, *[a for a in ARGS if a != "-q"], "--resume")
    assert "Resuming: 1 of 3 outputs were finished by the killed run" in result.stderr
    assert (out / "a.npy").stat().st_mtime_ns == finished  # kept, not made again
    assert "a.mp4 -> " in result.stdout  # the kept stream is still reported
    assert_same(out, reference)


def test_changed_output_is_made_again_and_forgotten_resume_refused(tmp_path, videos, reference):
    out = tmp_path / "out"
    kill_after_first_output(out, videos)
    forgotten = run_kiln("segment", *videos, "-o", out, *ARGS, check=False)
    assert forgotten.returncode != 0 and "use --resume to continue it" in forgotten.stderr
    data = bytearray((out / "a.npy").read_bytes())
    data[len(data) // 2] ^= 0x01
    (out / "a.npy").write_bytes(bytes(data))
    result = run_kiln("segment", *videos, "-o", out, *[a for a in ARGS if a != "-q"], "--resume")
    assert "a.npy changed since it was finished: it is segmented again" in result.stderr
    assert_same(out, reference)

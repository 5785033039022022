"""kill -9 at any moment, then --resume: the final output equals an uninterrupted run (except created_at),
and nothing partial is ever visible under the final name."""
import os
import signal
import subprocess
import time

import pytest

from conftest import KILN, assert_same_output, read_dataset, run_kiln

ARGS = ["render", "--demo", "--demo-points", 9099, "--width", 200, "--height", 100, "--threads", 2, "-q"]


def start_run(out, extra=()):
    return subprocess.Popen([KILN, *map(str, ARGS), "-o", str(out), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def leftovers(out):
    return [p for p in os.listdir(out.parent) if p.startswith(out.name) and p != out.name + ".lock"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "ref.h5"
    started = time.monotonic()
    run_kiln(*ARGS, "-o", out)
    return out, time.monotonic() - started


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.6, 0.9, 0.99])
def test_sigkill_then_resume_matches_uninterrupted(tmp_path, reference, fraction):
    ref, duration = reference
    out = tmp_path / "run.h5"
    proc = start_run(out)
    time.sleep(duration * fraction)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if out.exists():  # the run finished before the kill landed: it must be complete
        assert read_dataset(out)[1]["complete"] == 1
    elif leftovers(out):  # partial work exists: a plain rerun must not clobber it
        refused = run_kiln(*ARGS, "-o", out, check=False)
        assert refused.returncode != 0 and "--resume" in refused.stderr
    resumed = run_kiln(*ARGS, "-o", out, "--resume")
    assert "damaged" not in resumed.stderr, resumed.stderr  # a kill never spoils a committed part
    assert_same_output(ref, out)
    assert not os.path.exists(str(out) + ".parts")


def test_repeated_kills_then_resume(tmp_path, reference):
    ref, duration = reference
    out = tmp_path / "run.h5"
    for fraction in (0.2, 0.25, 0.3):
        proc = start_run(out, ["--resume"])
        time.sleep(duration * fraction)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    resumed = run_kiln(*ARGS, "-o", out, "--resume")
    assert "damaged" not in resumed.stderr, resumed.stderr
    assert_same_output(ref, out)


def test_sharded_kill_then_resume(tmp_path):
    args = ARGS + ["--images-per-file", 2000]
    ref = tmp_path / "ref" / "s.h5"
    ref.parent.mkdir()
    started = time.monotonic()
    run_kiln(*args, "-o", ref)
    duration = time.monotonic() - started
    out = tmp_path / "run" / "s.h5"
    out.parent.mkdir()
    proc = subprocess.Popen([KILN, *map(str, args), "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(duration * 0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    visible = [p for p in os.listdir(out.parent) if p.endswith(".h5")]
    for name in visible:  # every shard visible under its final name is complete
        if name != "s.h5":
            assert read_dataset(out.parent / name)[1]["complete"] == 1
    run_kiln(*args, "-o", out, "--resume")
    assert_same_output(ref, out)
    for i in range(5):
        assert_same_output(ref.parent / f"s_batch_{i:04d}.h5", out.parent / f"s_batch_{i:04d}.h5")


def test_resume_with_different_settings_is_refused(tmp_path, reference):
    out = tmp_path / "run.h5"
    proc = start_run(out)
    parts = out.parent / (out.name + ".parts")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if parts.exists() and any(p.name.startswith("part_") and p.suffix == ".h5" for p in parts.iterdir()):
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if out.exists():
        pytest.skip("the run finished before the kill")
    changed = [a if a != 200 else 201 for a in ARGS]
    result = run_kiln(*changed, "-o", out, "--resume", check=False)
    assert result.returncode != 0 and "different settings" in result.stderr

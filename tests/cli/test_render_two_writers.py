"""Two writers, one output: the second kiln render is refused with a clear error while the first runs, and the
first finishes a complete, readable dataset (before the lock, HDF5's own lock failed one of them and the other
marked a dataset complete whose first part was unreadable)."""
import os
import signal
import subprocess
import time

from conftest import KILN, read_dataset, run_kiln

ARGS = ["render", "--demo", "--demo-points", 8099, "--width", 400, "--height", 200, "--threads", 2, "-q"]


def test_second_writer_is_refused_while_the_first_runs(tmp_path):
    out = tmp_path / "out.h5"
    lock = tmp_path / "out.h5.lock"
    first = subprocess.Popen([KILN, *map(str, ARGS), "-o", str(out)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert first.poll() is None, "the first run ended before the second could start"
    # The first run takes about a second here: it is held stopped (its lock still held) while the others try, so
    # that none of them can start after it has finished.
    os.kill(first.pid, signal.SIGSTOP)
    try:
        for extra in ([], ["--resume"], ["--overwrite"]):
            second = run_kiln(*ARGS, "-o", out, *extra, check=False)
            assert second.returncode == 2, second.stderr
            assert f"being written by another process (pid {first.pid}" in second.stderr, second.stderr
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert first.wait(timeout=300) == 0, first.stderr.read()
    data, attrs = read_dataset(out)
    assert attrs["complete"] == 1 and data["images"].shape[0] == 8000
    assert not lock.exists()
    assert not os.path.exists(str(out) + ".parts")

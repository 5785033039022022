"""kiln render --shard I/N and kiln merge: the pieces of a job, merged as a virtual dataset or one copied file, equal
the whole job run on one machine; a missing, incomplete, damaged or foreign piece stops the merge before it writes
anything; the scheduler's index is found in the environment."""
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import KILN, assert_same_data, h5py, np, read_dataset, run_kiln

JOB = ["render", "--demo", "--demo-points", 3100, "--width", 96, "--height", 64, "--line-width", 2,
       "--label-horizon", 5, "--label-threshold", 0.001, "-q"]
PIECES = 4


def render_pieces(folder, count=PIECES, extra=()):
    for i in range(count):
        run_kiln(*JOB, "-o", folder / "demo.h5", "--shard", f"{i}/{count}", *extra)
    return sorted(folder.glob("demo.shard-*.h5"))


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    out = tmp_path_factory.mktemp("whole") / "whole.h5"
    run_kiln(*JOB, "-o", out)
    return out


@pytest.fixture(scope="module")
def rendered_pieces(tmp_path_factory):
    return render_pieces(tmp_path_factory.mktemp("rendered") / "pieces")


@pytest.fixture
def pieces(tmp_path, rendered_pieces):
    """A test's own copy of the job's pieces (rendered once per module): several tests damage or remove one."""
    shutil.copytree(rendered_pieces[0].parent, tmp_path / "pieces")
    return sorted((tmp_path / "pieces").glob("demo.shard-*.h5"))


def test_pieces_hold_their_fixed_ranges(pieces, whole):
    total = read_dataset(whole)[1]["total"]
    firsts = []
    for i, path in enumerate(pieces):
        data, attrs = read_dataset(path)
        assert (attrs["shard_index"], attrs["shard_count"], attrs["total"]) == (i, PIECES, total)
        assert attrs["first_index"] == total * i // PIECES
        assert attrs["count"] == total * (i + 1) // PIECES - total * i // PIECES == len(data["images"])
        firsts.append(attrs["first_index"])
    assert firsts == sorted(firsts)


@pytest.mark.parametrize("copy", [False, True], ids=["vds", "copy"])
def test_merged_pieces_equal_the_whole_job(tmp_path, pieces, whole, copy):
    out = tmp_path / "merged" / "dataset.h5"
    result = run_kiln("merge", pieces[0].parent, "-o", out, *(["--copy"] if copy else []))
    assert "Merged 4 pieces" in result.stdout
    assert_same_data(whole, out)
    data, attrs = read_dataset(out)
    assert attrs["complete"] == 1 and attrs["count"] == attrs["total"] == len(data["images"])
    assert "shard_index" not in attrs
    with h5py.File(out) as f:
        assert f["images"].is_virtual is (not copy)
    info = run_kiln("info", "--verify", out)
    assert "verified" in info.stdout
    if not copy:  # the manifest lists the pieces relative to the dataset, so the dataset can move as a whole
        assert (tmp_path / "merged" / "dataset.manifest.json").exists()
        moved = tmp_path / "moved"
        shutil.copytree(tmp_path / "merged", moved / "merged")
        shutil.copytree(pieces[0].parent, moved / "pieces")
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        data_moved = h5py.File(moved / "merged" / "dataset.h5")["images"][()]
        np.testing.assert_array_equal(data_moved, data["images"])
        assert "0/4" in run_kiln("info", moved / "merged" / "dataset.h5", cwd=elsewhere).stdout


def test_one_piece_of_one_and_more_pieces_than_images(tmp_path, whole):
    one = render_pieces(tmp_path / "one", count=1)
    run_kiln("merge", *one, "-o", tmp_path / "one.h5")
    assert_same_data(whole, tmp_path / "one.h5")
    many = tmp_path / "many"
    job = ["render", "--demo", "--demo-points", 105, "--width", 32, "--height", 32, "-q"]
    run_kiln(*job, "-o", tmp_path / "small.h5")
    for i in range(8):  # 6 images in 8 pieces: two pieces are empty
        run_kiln(*job, "-o", many / "small.h5", "--shard", f"{i}/8")
    run_kiln("merge", many, "-o", tmp_path / "small_merged.h5", "--copy")
    assert_same_data(tmp_path / "small.h5", tmp_path / "small_merged.h5")


def refused(tmp_path, *inputs):
    out = tmp_path / "refused.h5"
    result = run_kiln("merge", *inputs, "-o", out, check=False)
    assert result.returncode != 0
    assert "nothing written" in result.stderr
    assert not out.exists() and not (tmp_path / "refused.manifest.json").exists()
    assert not list(tmp_path.glob("refused*"))
    return result.stderr


def test_missing_piece_is_listed(tmp_path, pieces):
    pieces[2].unlink()
    assert "piece 2 of 4 (items" in refused(tmp_path, pieces[0].parent)


def test_incomplete_and_damaged_pieces_are_listed(tmp_path, pieces):
    with h5py.File(pieces[1], "r+") as f:
        f.attrs["complete"] = np.int8(0)
    size = pieces[3].stat().st_size
    with open(pieces[3], "r+b") as f:  # one flipped bit in the middle of the images
        f.seek(size // 2)
        byte = f.read(1)[0]
        f.seek(size // 2)
        f.write(bytes([byte ^ 0x10]))
    stderr = refused(tmp_path, pieces[0].parent)
    assert "demo.shard-00001-of-00004.h5: incomplete" in stderr
    assert "demo.shard-00003-of-00004.h5" in stderr and "damaged" in stderr


def test_piece_that_crashes_libhdf5_is_listed(tmp_path, pieces):
    import struct
    data = bytearray(pieces[2].read_bytes())
    heap = data.find(b"GCOL")  # the global heap of the string attributes: its first object claims 2^40 bytes
    struct.pack_into("<Q", data, heap + 24, 1 << 40)
    pieces[2].write_bytes(bytes(data))
    stderr = refused(tmp_path, pieces[0].parent)  # read in a child, where libhdf5 crashes
    assert "demo.shard-00002-of-00004.h5 is damaged: the reader " in stderr, stderr  # crashed (sanitizers: failed)


def test_piece_of_another_job_is_listed(tmp_path, pieces):
    other = tmp_path / "other"
    run_kiln(*JOB, "--stride", 2, "-o", other / "demo.h5", "--shard", "1/4")
    stderr = refused(tmp_path, pieces[0], other / "demo.shard-00001-of-00004.h5", pieces[2], pieces[3])
    assert "demo.shard-00001-of-00004.h5: made with other settings than" in stderr
    assert "(stride: 2 here, 1 there)" in stderr


def test_pieces_of_two_jobs_in_one_folder_and_a_stray_file(tmp_path, pieces):
    shutil.copy(pieces[0], pieces[0].parent / "other.shard-00000-of-00001.h5")
    assert "several jobs" in refused(tmp_path, pieces[0].parent)
    (tmp_path / "plain.h5").write_bytes(b"not hdf5")
    stderr = refused(tmp_path, *pieces, tmp_path / "plain.h5")
    assert "plain.h5" in stderr


def test_existing_output_is_kept_unless_overwrite(tmp_path, pieces):
    out = tmp_path / "dataset.h5"
    out.write_bytes(b"keep me")
    result = run_kiln("merge", pieces[0].parent, "-o", out, check=False)
    assert result.returncode != 0 and "--overwrite" in result.stderr
    assert out.read_bytes() == b"keep me"
    run_kiln("merge", pieces[0].parent, "-o", out, "--overwrite")
    assert read_dataset(out)[1]["complete"] == 1


@pytest.mark.parametrize("env, index, count", [
    ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0",
      "SLURM_ARRAY_TASK_MAX": "3"}, 3, 4),
    ({"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_MAX": "8"}, 2, 4),
    ({"JOB_COMPLETION_INDEX": "1"}, 1, 3),
    ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "3"}, 2, 3),
    ({"PMI_RANK": "0", "PMI_SIZE": "2"}, 0, 2),
], ids=["slurm", "slurm-min-max", "kubernetes", "openmpi", "pmi"])
def test_scheduler_index_from_the_environment(tmp_path, env, index, count):
    extra = ["--shard-count", count] if "JOB_COMPLETION_INDEX" in env else []
    result = run_kiln(*JOB[:-1], "-o", tmp_path / "demo.h5", *extra, env=env)
    piece = tmp_path / f"demo.shard-{index:05d}-of-{count:05d}.h5"
    assert piece.exists(), os.listdir(tmp_path)
    assert f"piece {index} of {count}" in result.stdout + result.stderr
    name = next(iter(env))
    assert name in result.stdout, result.stdout  # says which variable it used
    none = run_kiln(*JOB, "-o", tmp_path / "whole.h5", "--shard", "none", env=env)
    assert none.returncode == 0 and (tmp_path / "whole.h5").exists()


def test_kubernetes_index_without_count_and_bad_shards_are_refused(tmp_path):
    for env, args, text in [({"JOB_COMPLETION_INDEX": "1"}, [], "--shard-count"),
                            ({}, ["--shard", "4/4"], "0..3"),
                            ({}, ["--shard", "1/4", "--format", "png"], "HDF5"),
                            ({}, ["--shard", "1/4", "--images-per-file", 100], "images-per-file")]:
        result = run_kiln(*JOB, "-o", tmp_path / "x.h5", *args, check=False, env=env)
        assert result.returncode != 0 and text in result.stderr, result.stderr
        assert not list(tmp_path.iterdir())


def test_killed_piece_resumes_to_the_same_file(tmp_path):
    job = ["render", "--demo", "--demo-points", 18100, "--width", 160, "--height", 96, "--threads", 1, "-q"]
    reference = tmp_path / "ref"
    run_kiln(*job, "-o", reference / "d.h5", "--shard", "1/2")
    out = tmp_path / "run" / "d.h5"
    piece = tmp_path / "run" / "d.shard-00001-of-00002.h5"
    proc = subprocess.Popen([KILN, *map(str, job), "-o", str(out), "--shard", "1/2"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    parts = tmp_path / "run" / "d.shard-00001-of-00002.h5.parts"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(parts.glob("part_*.h5")) and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if not piece.exists():
        assert run_kiln(*job, "-o", out, "--shard", "1/2", check=False).returncode != 0  # partial work is kept
    run_kiln(*job, "-o", out, "--shard", "1/2", "--resume")
    assert_same_data(reference / "d.shard-00001-of-00002.h5", piece)


def test_a_stray_first_piece_is_the_one_named(tmp_path, pieces):
    other = tmp_path / "other"
    run_kiln(*JOB, "--stride", 2, "-o", other / "demo.h5", "--shard", "0/4")
    stray = other / "demo.shard-00000-of-00004.h5"
    stderr = refused(tmp_path, stray, *pieces[1:])
    assert f"{stray}: made with other settings" in stderr
    assert stderr.count("made with other settings") == 1

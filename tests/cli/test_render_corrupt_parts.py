"""Damaged finished parts: every committed HDF5 file carries a content checksum; --resume renders a damaged part or
shard again instead of merging it (before, a part with flipped bytes was merged and the dataset said complete),
a damaged finished file is refused by --resume, and `kiln info --verify` names the damaged file."""
import os
import shutil
import signal
import subprocess
import time

import h5py

from conftest import KILN, assert_same_output, run_kiln

ARGS = ["render", "--demo", "--demo-points", 9099, "--width", 200, "--height", 100, "--threads", 2, "-q"]


def flip_bit_in_image_chunk(path, row):
    """One bit in the middle of the stored (compressed) bytes of image `row` (for a part of a single-file run, in
    the draft its image_refs point into)."""
    with h5py.File(path, "r") as f:
        if "image_refs" in f:
            offset, size, _ = (int(v) for v in f["image_refs"][row])
            path = os.path.join(os.path.dirname(path), f.attrs["images_file"].decode()
                                if isinstance(f.attrs["images_file"], bytes) else f.attrs["images_file"])
        else:
            info = f["images"].id.get_chunk_info_by_coord((row, 0, 0))
            offset, size = info.byte_offset, info.size
    with open(path, "r+b") as f:
        f.seek(offset + size // 2)
        byte = f.read(1)[0]
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte ^ 0x10]))


def finished_shards(tmp_path):
    """A finished job in 4000-image shards (ref) and a copy of it (run) to damage: their VDS paths."""
    ref = tmp_path / "ref" / "v.h5"
    ref.parent.mkdir()
    run_kiln(*ARGS, "--images-per-file", 4000, "-o", ref)
    out = tmp_path / "run" / "v.h5"
    shutil.copytree(ref.parent, out.parent)
    return ref, out


def test_damaged_shard_is_rendered_again_on_resume(tmp_path):
    ref, out = finished_shards(tmp_path)
    flip_bit_in_image_chunk(out.parent / "v_batch_0001.h5", 1234)

    verify = run_kiln("info", "--verify", out, check=False)
    assert verify.returncode == 3
    assert "v_batch_0001.h5 is damaged: images checksum" in verify.stderr, verify.stderr
    assert "v_batch_0000.h5: ok" in verify.stdout

    resumed = run_kiln(*ARGS, "--images-per-file", 4000, "-o", out, "--resume")
    assert "v_batch_0001.h5 is damaged" in resumed.stderr and "rendering it again" in resumed.stderr, resumed.stderr
    assert_same_output(ref, out)
    assert run_kiln("info", "--verify", out).stdout.endswith("verified 3 of 3 files\n")


def test_damaged_part_of_a_killed_run_is_rendered_again(tmp_path):
    ref = tmp_path / "ref.h5"
    run_kiln(*ARGS, "-o", ref)
    out = tmp_path / "run.h5"
    part = tmp_path / "run.h5.parts" / "part_00000.h5"
    proc = subprocess.Popen([KILN, *map(str, ARGS), "-o", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not part.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert part.exists() and not out.exists(), "the run was not caught with a committed first part"
    flip_bit_in_image_chunk(part, 100)
    resumed = run_kiln(*ARGS, "-o", out, "--resume")
    assert "part_00000.h5 is damaged" in resumed.stderr, resumed.stderr
    assert_same_output(ref, out)


def test_damaged_finished_file_is_refused_by_resume_and_named_by_verify(tmp_path):
    out = tmp_path / "out.h5"
    run_kiln(*ARGS, "-o", out)
    assert run_kiln("info", "--verify", out).stdout == f"{out}: ok\nverified 1 of 1 file\n"
    flip_bit_in_image_chunk(out, 8000)
    resumed = run_kiln(*ARGS, "-o", out, "--resume", check=False)
    assert resumed.returncode == 3
    assert "is damaged: images checksum" in resumed.stderr and "--overwrite" in resumed.stderr, resumed.stderr
    verify = run_kiln("info", "--verify", out, check=False)
    assert verify.returncode == 3 and f"{out} is damaged" in verify.stderr


def corrupt_attribute_heap(path):
    """The first object of the file's global heap (where its string attributes live) claims 2^40 bytes: libhdf5 1.10
    reads past its buffer and crashes (SIGSEGV) on the first string attribute it reads."""
    import struct
    data = bytearray(path.read_bytes())
    heap = data.find(b"GCOL")
    assert heap > 0
    struct.pack_into("<Q", data, heap + 24, 1 << 40)
    path.write_bytes(bytes(data))


def test_part_that_crashes_libhdf5_is_reported_and_rendered_again(tmp_path):
    ref, out = finished_shards(tmp_path)
    corrupt_attribute_heap(out.parent / "v_batch_0001.h5")

    verify = run_kiln("info", "--verify", out, check=False)  # read in a child: a crash there is a damaged file
    assert verify.returncode == 3
    # "crashed (signal 11)"; "failed (exit 1)" in a sanitizer build, whose report ends the child first
    assert "v_batch_0001.h5 is damaged: the reader " in verify.stderr, verify.stderr

    resumed = run_kiln(*ARGS, "--images-per-file", 4000, "-o", out, "--resume")
    assert "v_batch_0001.h5 is damaged" in resumed.stderr and "rendering it again" in resumed.stderr, resumed.stderr
    assert_same_output(ref, out)

"""A full disk (a private tmpfs): the job exits non-zero with one line naming the path, completed units stay intact,
nothing partial appears under a final name, and --resume after space is freed equals an uninterrupted run."""
import hashlib
import json
import os
import shutil
import subprocess

import pytest

from conftest import KILN, assert_same_output, run_kiln

HDF5_ARGS = ["render", "--demo", "--demo-points", 9099, "--width", 200, "--height", 100, "--threads", 2, "-q"]
PNG_ARGS = ["render", "--demo", "--demo-points", 3099, "--width", 200, "--height", 100, "--threads", 2, "-q",
            "--format", "png"]

# Runs inside a private mount namespace: a tmpfs of $SIZE at $MNT; the job; a snapshot of what it left; the tmpfs
# grown; the job again with --resume; the result copied out (the tmpfs vanishes with the namespace).
SCRIPT = r"""
set -u
mount -t tmpfs -o size="$SIZE" kiln-full "$MNT" || exit 90
cd "$MNT"
"$KILN" "$@" -o "$MNT/$NAME" 2>"$SAVE/first.err"; echo $? >"$SAVE/first.rc"
(cd "$MNT" && find . -type f | sort) >"$SAVE/left.txt"
cp -a "$MNT" "$SAVE/left"
mount -o remount,size=400m "$MNT"
"$KILN" "$@" -o "$MNT/$NAME" --resume 2>"$SAVE/resume.err"; echo $? >"$SAVE/resume.rc"
cp -a "$MNT/$NAME" "$SAVE/final"
"""


def namespace_prefix():
    """unshare as root; an unprivileged user namespace otherwise; None where neither can mount."""
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):
        probe = subprocess.run([*prefix, "sh", "-c", "mount -t tmpfs -o size=1m t /mnt 2>/dev/null || "
                                "mount -t tmpfs -o size=1m t /tmp"], capture_output=True)
        if probe.returncode == 0:
            return prefix
    return None


PREFIX = namespace_prefix() if shutil.which("unshare") else None
pytestmark = pytest.mark.skipif(PREFIX is None, reason="cannot mount a private tmpfs here (no mount namespace)")


def run_on_small_disk(tmp_path, size, name, args):
    mnt = tmp_path / "mnt"
    save = tmp_path / "save"
    mnt.mkdir()
    save.mkdir()
    env = dict(os.environ, SIZE=size, MNT=str(mnt), SAVE=str(save), NAME=name, KILN=os.path.abspath(KILN))
    done = subprocess.run([*PREFIX, "bash", "-c", SCRIPT, "full-disk", *map(str, args)], env=env, timeout=600)
    assert done.returncode == 0, "the namespace script failed"
    return save


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_one_line_naming_the_disk_full(save, name):
    assert int((save / "first.rc").read_text()) not in (0, 139, 134), (save / "first.err").read_text()
    lines = (save / "first.err").read_text().splitlines()
    errors = [line for line in lines if line.startswith("kiln: ")]
    assert len(errors) == 1, lines
    assert "No space left on device" in errors[0] and name in errors[0], errors[0]
    assert int((save / "resume.rc").read_text()) == 0, (save / "resume.err").read_text()


@pytest.mark.parametrize("size", ["12m", "20m"])
def test_hdf5_render_on_a_full_disk_resumes_to_the_same_dataset(tmp_path, size):
    reference = tmp_path / "ref.h5"
    run_kiln(*HDF5_ARGS, "-o", reference)
    save = run_on_small_disk(tmp_path, size, "out.h5", HDF5_ARGS)
    assert_one_line_naming_the_disk_full(save, "out.h5")
    assert "./out.h5" not in (save / "left.txt").read_text().split()  # never a partial file under the final name
    assert_same_output(reference, save / "final")


def test_png_folder_on_a_full_disk_keeps_finished_images_and_resumes(tmp_path):
    reference = tmp_path / "ref"
    run_kiln(*PNG_ARGS, "-o", reference)
    save = run_on_small_disk(tmp_path, "6m", "pngs", PNG_ARGS)
    assert_one_line_naming_the_disk_full(save, "pngs")
    left = [line[2:] for line in (save / "left.txt").read_text().split()]
    images = [p for p in left if p.startswith("pngs/") and p.endswith(".png")]
    assert images, "some images were finished before the disk filled"
    for image in images:  # every visible image is a whole one, byte for byte the uninterrupted run's
        assert digest(save / "left" / image) == digest(reference / image[len("pngs/"):]), image
    finals = sorted(p.name for p in (save / "final").iterdir())
    assert finals == sorted(p.name for p in reference.iterdir())
    for name in finals:
        if name == "manifest.json":  # equal but for created_at
            final, ref = (json.loads((folder / name).read_text()) for folder in (save / "final", reference))
            final.pop("created_at")
            ref.pop("created_at")
            assert final == ref
        else:
            assert digest(save / "final" / name) == digest(reference / name), name


def test_faces_with_crops_on_a_full_disk_resumes_to_the_same_rows(tmp_path):
    faces = pytest.importorskip("test_faces_resume")
    if "faces" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout:
        pytest.skip("this kiln is built without ONNX Runtime or faiss")
    from PIL import Image
    photos = tmp_path / "photos"
    photos.mkdir()
    source = Image.open(faces.HOPPER).convert("RGB")
    for i in range(64):
        source.resize((520 + 4 * i, 600 + 4 * i)).save(photos / f"p{i:02d}.png")
    args = ["faces", photos, "--batch-size", 4, "--threads", 2, "-q"]
    reference = tmp_path / "ref.h5"
    run_kiln(*args, "-o", reference)
    crops = tmp_path / "mnt" / "crops"
    save = run_on_small_disk(tmp_path, "4m", "faces.h5", [*args, "--crops", crops])  # fills after the first part
    assert int((save / "first.rc").read_text()) not in (0, 139, 134)
    errors = [line for line in (save / "first.err").read_text().splitlines() if line.startswith("kiln: ")]
    assert len(errors) == 1 and "No space left on device" in errors[0] and str(crops) in errors[0], errors
    assert ".tmp" not in errors[0]  # the file asked for, not its temporary name
    left = (save / "left.txt").read_text().split()
    assert "./faces.h5" not in left and any(p.startswith("./faces.h5.parts/part-") for p in left)
    assert int((save / "resume.rc").read_text()) == 0, (save / "resume.err").read_text()
    assert_same_output(reference, save / "final", ignore=())


def test_segment_on_a_full_disk_keeps_its_finished_output_and_resumes(tmp_path):
    segment = pytest.importorskip("test_segment_resume")
    if "without ONNX Runtime or FFmpeg" in subprocess.run([KILN, "segment", "--help"], capture_output=True,
                                                         text=True).stdout or shutil.which("ffmpeg") is None:
        pytest.skip("this kiln is built without ONNX Runtime or FFmpeg, or the ffmpeg tool is missing")
    videos = []
    for name, seconds in (("a", 0.4), ("b", 2.0), ("c", 2.0)):
        segment.make_video(tmp_path / f"{name}.mp4", seconds=seconds, size="320x180")
        videos.append(tmp_path / f"{name}.mp4")
    args = ["segment", *videos, "--output", "npy", "--threads", 2, "-q"]
    reference = tmp_path / "ref"
    run_kiln(*args, "-o", reference)
    # a.npy (4 MB) is finished; b and c (21 MB each) fill the rest of 16 MB side by side.
    save = run_on_small_disk(tmp_path, "16m", "out", args)
    assert_one_line_naming_the_disk_full(save, "out/")
    assert ".tmp" not in (save / "first.err").read_text()  # the output asked for, not its temporary name
    left = (save / "left.txt").read_text().split()
    assert "./out/a.npy" in left and "./out/b.npy" not in left and "./out/c.npy" not in left
    assert digest(save / "left" / "out" / "a.npy") == digest(reference / "a.npy")
    assert "./out.parts/part-00000000.bin" in left  # a's output, recorded
    finals = sorted(p.name for p in (save / "final").iterdir())
    assert finals == sorted(p.name for p in reference.iterdir())
    for name in finals:
        assert digest(save / "final" / name) == digest(reference / name), name

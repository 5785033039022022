"""kiln faces --shard I/N and kiln merge on real photographs: the merged pieces equal a single run, duplicates
across pieces included; a missing piece stops the merge; a piece refuses outputs only the merge can number."""
import json
import shutil
import subprocess

import pytest

from conftest import KILN, face_photos, np, read_dataset, run_kiln

pytestmark = pytest.mark.skipif(
    "faces" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout,
    reason="this kiln is built without ONNX Runtime or faiss")


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    return face_photos(tmp_path_factory.mktemp("photos"))


@pytest.fixture(scope="module")
def single(photos, tmp_path_factory):
    out = tmp_path_factory.mktemp("single") / "faces.h5"
    run_kiln("faces", photos, "-o", out, "--dedup", 0.7, "--threads", 2, "-q")
    return out


def faces_pieces(photos, folder, count=3, extra=(), indexes=None):
    for i in range(count) if indexes is None else indexes:
        run_kiln("faces", photos, "-o", folder / "faces.h5", "--dedup", 0.7, "--threads", 2, "-q",
                 "--shard", f"{i}/{count}", *extra)
    return sorted(folder.glob("faces.shard-*.h5"))


@pytest.fixture(scope="module")
def pieces(photos, tmp_path_factory):
    """The default job's three pieces, made once per module; the tests only read them (one removes a piece of its
    own copy)."""
    return faces_pieces(photos, tmp_path_factory.mktemp("pieces"))


def test_pieces_plus_merge_equal_a_single_run(tmp_path, pieces, single):
    assert len(pieces) == 3
    # A piece keeps every face of its images (the duplicates are decided at the merge).
    assert [read_dataset(p)[0]["embeddings"].shape[0] for p in pieces] == [1, 2, 1]
    result = run_kiln("merge", pieces[0].parent, "-o", tmp_path / "merged.h5")
    assert "2 dropped as duplicates" in result.stdout
    data_single, attrs_single = read_dataset(single)
    data_merged, attrs_merged = read_dataset(tmp_path / "merged.h5")
    assert sorted(data_single) == sorted(data_merged)
    assert data_merged["embeddings"].shape == (2, 512)
    for name in data_single:
        if data_single[name].dtype.kind == "f":
            np.testing.assert_allclose(data_merged[name], data_single[name], atol=2e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(data_merged[name], data_single[name], err_msg=name)
    assert data_merged["image_index"].tolist() == [0.0, 2.0]
    for key in ("settings", "detector", "embedder", "images", "duplicates"):
        assert attrs_merged[key] == attrs_single[key], key
    assert "shard_index" not in attrs_merged


def test_merge_dedup_can_be_changed_and_turned_off(tmp_path, pieces):
    run_kiln("merge", pieces[0].parent, "-o", tmp_path / "all.h5", "--dedup", 0)
    data, attrs = read_dataset(tmp_path / "all.h5")
    assert data["embeddings"].shape[0] == 4 and attrs["duplicates"] == 0
    assert json.loads(attrs["settings"])["dedup"] == 0


def test_merge_dedups_past_the_pieces_exact_limit_or_the_one_given(tmp_path, photos):
    faces_pieces(photos, tmp_path / "pieces", extra=["--dedup-exact-faces", 7])
    run_kiln("merge", tmp_path / "pieces", "-o", tmp_path / "own.h5")
    assert json.loads(read_dataset(tmp_path / "own.h5")[1]["settings"])["dedup_exact_faces"] == 7
    run_kiln("merge", tmp_path / "pieces", "-o", tmp_path / "given.h5", "--dedup-exact-faces", 9)
    assert json.loads(read_dataset(tmp_path / "given.h5")[1]["settings"])["dedup_exact_faces"] == 9


def test_missing_piece_and_outputs_a_piece_cannot_write(tmp_path, photos, pieces):
    shutil.copytree(pieces[0].parent, tmp_path / "pieces")
    (tmp_path / "pieces" / pieces[1].name).unlink()
    result = run_kiln("merge", tmp_path / "pieces", "-o", tmp_path / "m.h5", check=False)
    assert result.returncode != 0 and "piece 1 of 3 (items 2..3) is missing" in result.stderr
    assert not (tmp_path / "m.h5").exists()
    for extra in (["--jsonl", tmp_path / "x.jsonl"], ["--crops", tmp_path / "crops"]):
        refused = run_kiln("faces", photos, "-o", tmp_path / "p.h5", "--shard", "0/3", *extra, check=False)
        assert refused.returncode != 0 and "kiln merge" in refused.stderr
    refused = run_kiln("faces", photos, "-o", tmp_path / "p.npz", "--shard", "0/3", check=False)
    assert refused.returncode != 0 and ".h5" in refused.stderr


def test_pieces_of_other_settings_are_refused(tmp_path, photos, pieces):
    other = faces_pieces(photos, tmp_path / "other", extra=["--min-score", 0.8], indexes=[1])
    result = run_kiln("merge", pieces[0], *other, pieces[2], "-o", tmp_path / "m.h5", check=False)
    assert result.returncode != 0 and "other settings" in result.stderr


def test_pieces_of_another_input_list_are_refused(tmp_path, photos, pieces):
    other = tmp_path / "other_photos"
    other.mkdir()
    for path in sorted(photos.iterdir()):  # as many photos, other names: the same ranges, another job
        (other / ("x_" + path.name)).write_bytes(path.read_bytes())
    foreign = faces_pieces(other, tmp_path / "foreign", indexes=[1])
    result = run_kiln("merge", pieces[0], *foreign, pieces[2], "-o", tmp_path / "m.h5", check=False)
    assert result.returncode != 0 and "another input list" in result.stderr

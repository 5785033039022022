"""kiln faces on real photographs: one row per kept face in the HDF5 output, a JSON line per face and per unreadable
image, exact dedup across the run, and a corrupt image that is reported while the rest continues."""
import json
import shutil
import subprocess

import h5py
import numpy as np
import pytest

from conftest import KILN, run_kiln

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
COFFEE = "/usr/lib/python3/dist-packages/skimage/data/coffee.png"
HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"

pytestmark = pytest.mark.skipif(
    "faces" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout
    or "without ONNX Runtime" in subprocess.run([KILN, "faces", "--help"], capture_output=True, text=True).stdout,
    reason="this kiln is built without ONNX Runtime or faiss")


@pytest.fixture
def photos(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    shutil.copy(ASTRONAUT, folder / "a_astronaut.png")
    shutil.copy(ASTRONAUT, folder / "b_astronaut_again.png")
    shutil.copy(COFFEE, folder / "c_coffee.png")
    shutil.copy(HOPPER, folder / "d_hopper.jpg")
    (folder / "e_truncated.jpg").write_bytes(open(HOPPER, "rb").read()[:3000])
    return folder


def test_faces_writes_rows_records_and_drops_duplicates(tmp_path, photos):
    out = tmp_path / "faces.h5"
    records = tmp_path / "faces.jsonl"
    result = run_kiln("faces", photos, "-o", out, "--jsonl", records, "--dedup", 0.7, "--threads", 2, "-q")
    assert "e_truncated.jpg" in result.stderr
    assert "Faces: 3 found, 2 written" in result.stdout and "1 duplicates dropped" in result.stdout
    with h5py.File(out, "r") as f:
        embeddings = f["embeddings"][()]
        assert embeddings.shape == (2, 512)
        np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1.0, atol=1e-4)
        assert [p.decode() for p in f["paths"][()]] == [str(photos / "a_astronaut.png"), str(photos / "d_hopper.jpg")]
        assert f["image_index"][()].tolist() == [0.0, 3.0]
        assert f["landmarks"].shape == (2, 6, 2) and f["quality"].shape == (2, 5) and f["pose"].shape == (2, 3)
        assert float(embeddings[0] @ embeddings[1]) < 0.4  # two people
        assert json.loads(f.attrs["settings"])["dedup"] == 0.7
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert [r["image"].rsplit("/", 1)[1] for r in lines] == [
        "a_astronaut.png", "b_astronaut_again.png", "d_hopper.jpg", "e_truncated.jpg"]
    assert lines[1]["duplicate_of"] == 0 and lines[1]["duplicate_cosine"] > 0.99
    assert "error" in lines[3] and "bbox" not in lines[3]
    for r in lines[:3]:
        assert set(r["quality"]) == {"blur", "brightness", "contrast", "sharpness", "overall_score"}
        assert isinstance(r["accepted"], bool) and isinstance(r["reasons"], list)


def test_preview_draws_each_face_in_the_colour_of_its_verdict(tmp_path, photos):
    from matplotlib import image

    sheet = tmp_path / "sheet.png"
    records = tmp_path / "faces.jsonl"
    run_kiln("faces", photos, "--jsonl", records, "--dedup", 0.7, "--preview", sheet, "--preview-images", 2,
             "--threads", 2, "-q")
    pixels = np.rint(image.imread(sheet) * 255).astype(int)
    assert pixels.shape == (30 + 210 + 4 + 2 * 14 + 10, 2 * 290 + 10, 3)  # two photos, one face each
    scale = 210 / 512  # the astronaut, 512 x 512, in a 280 x 210 box
    for column, (record, ink) in enumerate(zip(json.loads("[" + ",".join(records.read_text().splitlines()[:2]) + "]"),
                                               [(215, 40, 40), (240, 150, 0)])):  # rejected, duplicate
        x0, y0, x1, _ = record["bbox"]
        top = pixels[30 + round(y0 * scale), 10 + column * 290 + round((x0 + x1) / 2 * scale)]
        assert tuple(top) == ink


def test_without_dedup_every_face_is_written(tmp_path, photos):
    out = tmp_path / "all.h5"
    run_kiln("faces", photos, "-o", out, "--threads", 2, "-q")
    with h5py.File(out, "r") as f:
        assert f["embeddings"].shape == (3, 512)


def test_lanes_give_the_rows_and_records_of_one_analyzer_in_input_order(tmp_path, photos):
    # Batches of 4 photos cut into single photos for three analyzers (the unreadable one is held, not analysed).
    outputs = {}
    for lanes in (1, 3):
        out, records = tmp_path / f"lanes{lanes}.h5", tmp_path / f"lanes{lanes}.jsonl"
        result = run_kiln("faces", photos, "-o", out, "--jsonl", records, "--dedup", 0.7, "--threads", 2,
                          "--batch-size", 4, "--lanes", lanes, "-q")
        assert ("3 analyzers (1 thread each) taking the batches' photos one at a time" in result.stdout) == (lanes == 3)
        with h5py.File(out, "r") as f:
            outputs[lanes] = (f["embeddings"][()], f["image_index"][()].tolist(), f["box"][()])
        lines = [json.loads(line) for line in records.read_text().splitlines()]
        outputs[lanes] += ([(r["image"], r.get("row"), r.get("duplicate_of"), "error" in r) for r in lines],)
    (one, index_one, boxes_one, lines_one), (three, index_three, boxes_three, lines_three) = outputs[1], outputs[3]
    assert index_one == index_three == [0.0, 3.0] and lines_one == lines_three
    np.testing.assert_allclose(boxes_one, boxes_three, atol=1e-3)
    assert np.all(np.sum(one * three, axis=1) > 0.9999)


def test_no_readable_image_is_an_error_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not an image at all")
    out = tmp_path / "none.h5"
    result = run_kiln("faces", bad, "-o", out, check=False)
    assert result.returncode != 0 and "could be read" in result.stderr
    assert not out.exists()


def test_each_stage_follows_its_switch_and_says_why(tmp_path, photos):
    env = {"FACE_DETECTION_GPU": "0", "QUALITY_CHECKS_GPU": "false", "ALL_GPU": "1"}
    result = run_kiln("faces", photos / "d_hopper.jpg", "-o", tmp_path / "f.h5", "--threads", 2, "-q", env=env)
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines() if ": " in line)
    assert lines["Detection"].startswith("cpu (mode cpu, FACE_DETECTION_GPU=0")
    assert lines["Quality"].startswith("cpu (mode cpu, QUALITY_CHECKS_GPU=false")
    assert "FACE_" not in lines["Embedding"]  # ALL_GPU=1: may use a GPU, here none


def test_crops_are_the_face_with_its_margin_a_thumbnail_and_the_aligned_face(tmp_path, photos):
    from PIL import Image
    records = tmp_path / "f.jsonl"
    run_kiln("faces", photos / "d_hopper.jpg", "--jsonl", records, "--crops", tmp_path / "crops", "--margin", 0.25,
             "--threads", 2, "-q")
    record = json.loads(records.read_text())
    crop, thumb, aligned = (Image.open(p) for p in record["crops"])
    x0, y0, x1, y1 = record["bbox"]
    assert abs(crop.width - 1.5 * (x1 - x0)) <= 3 and abs(crop.height - 1.5 * (y1 - y0)) <= 3
    assert crop.format == "JPEG" and max(thumb.size) == 150 and aligned.size == (112, 112) and aligned.format == "PNG"
    face = np.asarray(aligned.convert("RGB"))
    assert face[40:70, 30:80].std() > 20  # eyes and nose, not a border


def test_search_finds_the_same_person_first(tmp_path, photos):
    index = tmp_path / "faces.h5"
    run_kiln("faces", photos, "-o", index, "--threads", 2, "-q")
    result = run_kiln("faces", "search", HOPPER, "--index", index, "-k", 2, "--json", "--recall", 3)
    line = json.loads(result.stdout)
    assert line["query"] == HOPPER and [h["image"].rsplit("/", 1)[1] for h in line["hits"]][0] == "d_hopper.jpg"
    assert line["hits"][0]["cosine"] > 0.99 and line["hits"][1]["cosine"] < 0.4
    assert "exact (flat) over 3 faces" in result.stderr and "Recall@2 against exact search: 1.0000" in result.stderr
    text = run_kiln("faces", "search", ASTRONAUT, "--index", index, "-k", 1).stdout
    assert "a_astronaut.png" in text.splitlines()[1] or "b_astronaut_again.png" in text.splitlines()[1]
    refused = run_kiln("faces", "search", HOPPER, "--index", index, "--index-type", "ivf", check=False)
    assert refused.returncode != 0 and "use flat" in refused.stderr
    assert not (tmp_path / "faces.h5.ivf").exists()  # only a trained (ivf) index is kept


def test_search_preview_puts_each_query_beside_its_nearest_faces(tmp_path, photos):
    from matplotlib import image

    index, sheet = tmp_path / "faces.h5", tmp_path / "search.png"
    run_kiln("faces", photos, "-o", index, "--threads", 2, "-q")  # astronaut twice, Grace Hopper
    run_kiln("faces", "search", HOPPER, ASTRONAUT, "--index", index, "-k", 3, "--preview", sheet)
    pixels = np.rint(image.imread(sheet) * 255).astype(int)
    assert pixels.shape == (30 + 2 * (120 + 4 + 2 * 14 + 10), 10 + 4 * 130, 3)  # 2 queries, 1 + 3 cells each

    def cell(row, column):
        x, y = 10 + column * 130, 30 + row * (120 + 4 + 2 * 14 + 10)
        return pixels[y:y + 120, x:x + 120]

    # Each query photo is in the collection: its nearest face is the same crop of the same photo, pixel for pixel;
    # the other person's face is another picture.
    for row in range(2):
        assert np.array_equal(cell(row, 0), cell(row, 1))
        assert np.abs(cell(row, 0) - cell(row, 3)).mean() > 20
    assert np.array_equal(cell(1, 1), cell(1, 2))  # the astronaut's second copy: the same face again


def _photo_variants(folder):
    """One face photo saved the 14 ways a crawler meets it (Pillow, OpenCV and libheif's heif-enc)."""
    import cv2
    from PIL import Image
    photo = Image.open(HOPPER).convert("RGB")
    photo.save(folder / "plain.jpg", quality=92)
    photo.save(folder / "progressive.jpg", quality=92, progressive=True)
    photo.convert("L").save(folder / "gray.jpg", quality=92)
    photo.convert("RGBA").save(folder / "rgba.png")
    rgb16 = np.asarray(photo)[:, :, ::-1].astype(np.uint16) * 257
    cv2.imwrite(str(folder / "deep16.png"), rgb16)
    shutil.copy(folder / "rgba.png", folder / "png_named.jpg")
    photo.save(folder / "photo.webp", quality=90)
    photo.save(folder / "animated.gif", save_all=True, append_images=[photo.rotate(180)], duration=100)
    photo.save(folder / "photo.bmp")
    photo.save(folder / "photo.tif", compression="tiff_lzw")
    photo.convert("CMYK").save(folder / "cmyk.jpg", quality=92)
    exif = Image.Exif()
    exif[0x0112] = 6  # shown turned 90 degrees clockwise: stored turned the other way
    photo.transpose(Image.ROTATE_90).save(folder / "sideways_exif6.jpg", quality=92, exif=exif.tobytes())
    for name, flags in (("photo.heic", []), ("photo.avif", ["-A"])):
        subprocess.run(["heif-enc", "-q", "85", *flags, "-o", folder / name, folder / "plain.jpg"], check=True,
                       capture_output=True)
    return photo.size


def test_every_format_a_crawler_meets_gives_the_face(tmp_path):
    folder = tmp_path / "variants"
    folder.mkdir()
    width, height = _photo_variants(folder)
    records = tmp_path / "f.jsonl"
    out = tmp_path / "f.h5"
    result = run_kiln("faces", folder, "-o", out, "--jsonl", records, "--threads", 2, "-q")
    assert "unreadable" not in result.stderr
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert all("error" not in line for line in lines), [line.get("error") for line in lines]
    with h5py.File(out, "r") as f:
        embeddings = f["embeddings"][()]
        paths = [p.decode().rsplit("/", 1)[1] for p in f["paths"][()]]
    assert sorted(set(paths)) == sorted(p.name for p in folder.iterdir())  # a face in each of the 14
    best = {}
    for line in lines:  # the best detection of each photo
        name = line["image"].rsplit("/", 1)[1]
        if name not in best or line["det_score"] > best[name]["det_score"]:
            best[name] = line
    reference = embeddings[best["plain.jpg"]["row"]]
    for name, line in best.items():
        cosine = float(embeddings[line["row"]] @ reference)
        assert cosine >= (0.8 if name in ("animated.gif", "gray.jpg") else 0.9), (name, cosine)
        # Upright coordinates: the sideways photo's box is the plain photo's.
        assert np.allclose(line["bbox"], best["plain.jpg"]["bbox"], atol=6), (name, line["bbox"])
        assert line["orientation"] == (6 if name == "sideways_exif6.jpg" else 1), name
        x0, y0, x1, y1 = line["bbox"]
        assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height

"""kiln quality from the command line: metrics, thresholds, JSON lines, unreadable files, --filter-to, lists."""
import json
import os
import struct
import subprocess
import zlib

import numpy as np

from conftest import KILN, run_kiln


def write_png(path, pixels):
    """A minimal 8-bit PNG writer (gray HxW or RGB HxWx3), so the tests need no imaging library."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    height, width = pixels.shape[:2]
    color = 0 if pixels.ndim == 2 else 2
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def noisy(seed, shape=(48, 64, 3)):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def gray_metrics(rgb):
    """blur (Laplacian variance, reflect-101) and brightness of the OpenCV-weighted gray image, in numpy."""
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    gray = ((r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15).astype(np.float64)
    p = np.pad(gray, 1, mode="reflect")
    lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * p[1:-1, 1:-1]
    return lap.var(), gray.mean()


def test_metrics_json_lines_and_unreadable_files(tmp_path):
    images = tmp_path / "imgs"
    images.mkdir()
    sharp = noisy(1)
    write_png(images / "a_sharp.png", sharp)
    write_png(images / "b_flat.png", np.full((32, 32, 3), 128, np.uint8))
    write_png(images / "c_dark.png", (noisy(2) // 16).astype(np.uint8))
    (images / "d_corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    (images / "notes.txt").write_text("not an image")
    out = tmp_path / "q.jsonl"
    result = run_kiln("quality", images, "--json", out, "--mode", "cpu", "--threads", 2, "--batch-size", 2)
    lines = read_lines(out)
    assert [os.path.basename(line["path"]) for line in lines] == ["a_sharp.png", "b_flat.png", "c_dark.png",
                                                                   "d_corrupt.png"]
    a, flat, dark, corrupt = lines
    assert a["ok"] and a["pass"] and a["reasons"] == [] and a["backend"] == "cpu"
    blur, brightness = gray_metrics(sharp)
    np.testing.assert_allclose(a["blur"], blur, rtol=1e-6)
    np.testing.assert_allclose(a["brightness"], brightness, rtol=1e-9)
    for key in ("contrast", "sharpness", "score"):
        assert isinstance(a[key], float)
    assert flat["ok"] and not flat["pass"]
    assert any(r.startswith("blur") for r in flat["reasons"])
    assert flat["blur"] == 0 and flat["brightness"] == 128
    assert not dark["pass"] and any(r.startswith("brightness") for r in dark["reasons"])
    assert corrupt == {"path": corrupt["path"], "ok": False, "error": corrupt["error"]}
    assert "d_corrupt.png" in corrupt["error"]
    assert "4 images: 1 passed, 2 failed, 1 unreadable" in result.stdout
    assert "Backend: cpu" in result.stdout
    assert "images/s" in result.stdout


def test_thresholds_and_filter_to_copies_passing_files(tmp_path):
    write_png(tmp_path / "one.png", noisy(3))
    write_png(tmp_path / "two.png", noisy(4))
    sub = tmp_path / "sub"
    sub.mkdir()
    write_png(sub / "one.png", noisy(5))  # same name as ../one.png: copied as one_2.png
    write_png(tmp_path / "flat.png", np.full((16, 16), 200, np.uint8))
    keep = tmp_path / "keep"
    run_kiln("quality", tmp_path / "one.png", tmp_path / "two.png", sub / "one.png", tmp_path / "flat.png",
             "--filter-to", keep, "-q")
    assert sorted(os.listdir(keep)) == ["one.png", "one_2.png", "two.png"]
    assert (keep / "one.png").read_bytes() == (tmp_path / "one.png").read_bytes()
    assert (keep / "one_2.png").read_bytes() == (sub / "one.png").read_bytes()
    # An impossible threshold fails everything, with the reason.
    out = tmp_path / "strict.jsonl"
    run_kiln("quality", tmp_path / "one.png", "--min-score", 1.5, "--json", out)
    (line,) = read_lines(out)
    assert not line["pass"] and any(r.startswith("score") for r in line["reasons"])


def test_list_files_and_exit_codes(tmp_path):
    write_png(tmp_path / "x.png", noisy(6))
    (tmp_path / "list.txt").write_text("# inputs\nx.png\n\nmissing.png  # reported, not fatal\n")
    out = tmp_path / "q.jsonl"
    result = run_kiln("quality", "@" + str(tmp_path / "list.txt"), "--json", out)
    lines = read_lines(out)
    assert [line["ok"] for line in lines] == [True, False]
    assert "missing.png" in lines[1]["error"]
    assert "1 unreadable" in result.stdout
    result = run_kiln("quality", "--list", tmp_path / "list.txt", "-q")
    assert "2 images" in result.stdout
    # Nothing readable: an error exit, but the JSON lines still say why.
    (tmp_path / "bad.jpg").write_bytes(b"\xff\xd8\xff\xe0 truncated")
    result = run_kiln("quality", tmp_path / "bad.jpg", "--json", out, check=False)
    assert result.returncode != 0 and "could be read" in result.stderr
    assert read_lines(out)[0]["ok"] is False
    # Usage errors.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_kiln("quality", empty, check=False).returncode == 2
    assert run_kiln("quality", tmp_path / "x.png", "--mode", "fast", check=False).returncode == 2
    assert run_kiln("quality", "@" + str(tmp_path / "nope.txt"), check=False).returncode == 3
    # JSON lines to standard output: refused with the reason, no file named "-" (kiln faces --jsonl the same).
    for command in (["quality", tmp_path / "x.png", "--json", "-"], ["faces", tmp_path / "x.png", "--jsonl", "-"]):
        refused = subprocess.run([KILN, *map(str, command)], cwd=tmp_path, capture_output=True, text=True)
        assert refused.returncode == 2 and "standard output (-) are not supported" in refused.stderr, refused.stderr
        assert not (tmp_path / "-").exists()


def test_environment_switches_are_honored(tmp_path):
    write_png(tmp_path / "x.png", noisy(7))
    out = tmp_path / "q.jsonl"
    run_kiln("quality", tmp_path / "x.png", "--json", out, env={"QUALITY_CHECKS_GPU": "false", "ALL_GPU": "true"})
    assert read_lines(out)[0]["backend"] == "cpu"
    result = run_kiln("quality", tmp_path / "x.png", check=False, env={"QUALITY_CHECKS_GPU": "maybe"})
    assert result.returncode == 2 and "QUALITY_CHECKS_GPU" in result.stderr
    result = run_kiln("quality", tmp_path / "x.png", check=False, env={"GPU_BACKEND": "quantum"})
    assert result.returncode == 2 and "GPU_BACKEND" in result.stderr


def test_decode_timeout_reports_the_slow_image_and_goes_on(tmp_path):
    write_png(tmp_path / "a_small.png", noisy(3))
    write_png(tmp_path / "b_large.png", noisy(4, (2000, 3000, 3)))  # ~0.1 s to decode, far over the limit below
    write_png(tmp_path / "c_small.png", noisy(5))
    out = tmp_path / "q.jsonl"
    run_kiln("quality", str(tmp_path), "--mode", "cpu", "--decode-timeout", "0.005", "--json", str(out), "-q")
    lines = read_lines(out)
    assert [os.path.basename(line["path"]) for line in lines] == ["a_small.png", "b_large.png", "c_small.png"]
    assert lines[0]["ok"] and lines[2]["ok"]
    assert not lines[1]["ok"] and "took longer than the decode timeout of 0.005 s" in lines[1]["error"]
    whole = tmp_path / "whole.jsonl"
    run_kiln("quality", str(tmp_path), "--mode", "cpu", "--decode-timeout", "0", "--json", str(whole), "-q")
    assert all(line["ok"] for line in read_lines(whole))


def srgb_pixels(path):
    """The photo as a viewer shows it: an embedded colour profile (rocket.jpg: Adobe RGB) converted to sRGB."""
    import io

    from PIL import Image, ImageCms
    photo = Image.open(path)
    if photo.mode in ("RGB", "RGBA") and photo.info.get("icc_profile"):
        source = ImageCms.ImageCmsProfile(io.BytesIO(photo.info["icc_profile"]))
        photo = ImageCms.profileToProfile(photo.convert("RGB"), source, ImageCms.createProfile("sRGB"),
                                          outputMode="RGB")
    return np.asarray(photo)


def test_preview_shows_the_images_best_first_with_their_verdicts(tmp_path):
    from matplotlib import image

    folder = "/usr/lib/python3/dist-packages/skimage/data"
    sources = [f"{folder}/{name}" for name in ["astronaut.png", "camera.png", "coffee.png", "moon.png",
                                                  "rocket.jpg", "grass.png"]]
    records_path, sheet_path = tmp_path / "q.jsonl", tmp_path / "q.png"
    run_kiln("quality", *sources, "--json", records_path, "--preview", sheet_path, "--threads", 2)
    records = sorted(read_lines(records_path), key=lambda r: -r["score"])  # what the sheet should show, in order
    assert {r["pass"] for r in records} == {True, False}
    sheet = np.rint(image.imread(sheet_path) * 255)
    assert sheet.shape == (30 + 2 * (210 + 4 + 4 * 14 + 10), 4 * 290 + 10, 3)  # 6 cells: 4 columns, 2 rows
    for cell, record in enumerate(records):
        photo = srgb_pixels(record["path"])
        photo = photo if photo.ndim == 3 else np.repeat(photo[..., None], 3, axis=2)
        scale = min(1, 280 / photo.shape[1], 210 / photo.shape[0])
        x, y = 10 + (cell % 4) * 290, 30 + (cell // 4) * (210 + 4 + 4 * 14 + 10)
        drawn = sheet[y:y + round(photo.shape[0] * scale), x:x + round(photo.shape[1] * scale)]
        np.testing.assert_allclose(drawn.mean(axis=(0, 1)), photo[..., :3].mean(axis=(0, 1)), atol=2,
                                   err_msg=f"cell {cell} should be {record['path']}")
        verdict_line = sheet[y + 214 + 14:y + 214 + 28, x:x + 280]
        ink = np.array([30, 170, 60] if record["pass"] else [215, 40, 40])
        assert (np.abs(verdict_line - ink).max(axis=2) < 30).sum() > 20, f"cell {cell}: no {ink} text"

"""The pictures from Python: the jobs' preview= settings (the CLI's --preview) and kiln.bench_plot."""
import json

import numpy as np
import pytest
from matplotlib import image

import kiln

PHOTOS = ["/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
          "/usr/lib/python3/dist-packages/skimage/data/camera.png"]


def test_quality_preview_ranks_the_images_best_first(tmp_path):
    sheet = tmp_path / "q.png"
    result = kiln.quality(PHOTOS, preview=str(sheet), mode="cpu")
    pixels = np.rint(image.imread(sheet) * 255)
    assert pixels.shape == (30 + 210 + 4 + 4 * 14 + 10, 2 * 290 + 10, 3)
    best = int(np.argmax(result["score"]))
    first_cell = pixels[30:30 + 210, 10:10 + 210]
    expected = image.imread(PHOTOS[best]) * 255
    expected = expected if expected.ndim == 3 else np.repeat(expected[..., None], 3, axis=2)
    np.testing.assert_allclose(first_cell.mean(axis=(0, 1)), expected[..., :3].mean(axis=(0, 1)), atol=2)


@pytest.mark.skipif(kiln.faces_job is None, reason="kiln built without ONNX Runtime or faiss")
def test_faces_job_preview_draws_the_first_images(tmp_path):
    sheet = tmp_path / "f.png"
    kiln.faces_job(PHOTOS[:1], jsonl=str(tmp_path / "f.jsonl"), preview=str(sheet), mode="cpu")
    assert image.imread(sheet).shape == (30 + 210 + 4 + 2 * 14 + 10, 290 + 10, 3)


def test_bench_plot_draws_a_benchmarks_json(tmp_path):
    results = json.loads('{"results": [{"backend": "cpu", "batch_size": 1, "img_per_s": 100},'
                         ' {"backend": "cpu", "batch_size": 8, "img_per_s": 300}]}')
    layout = kiln.bench_plot.plot(results, str(tmp_path / "b.png"))
    assert layout["kind"] == "lines" and len(layout["marks"][0]["points"]) == 2
    assert (tmp_path / "b.png").stat().st_size > 0


def test_render_preview_shows_images_spread_over_the_whole_dataset(tmp_path):
    # Stride 1: neighbouring windows are near copies, so the preview samples the dataset from its first image to its
    # last, evenly, each tile the dataset's image at that index (and captioned with it under the tile).
    out, preview = tmp_path / "d.h5", tmp_path / "grid.png"
    kiln.render_job(None, output=str(out), demo=True, demo_points=400, seq_len=20, width=48, height=24,
                    preview=str(preview), mode="cpu")
    with kiln.open(str(out)) as dataset:
        images = dataset.images[()]
    total = len(images)
    picked = [round(k * (total - 1) / 15) for k in range(16)]
    grid = np.rint(image.imread(preview) * 255).astype(np.uint8)
    cell = (grid.shape[0] - 3 * 2) // 4  # the image and its caption strip
    assert grid.shape[1] == 4 * 48 + 3 * 2 and cell > 24
    for k, index in enumerate(picked):
        y, x = (k // 4) * (cell + 2), (k % 4) * (48 + 2)
        np.testing.assert_array_equal(grid[y:y + 24, x:x + 48, 0], images[index], err_msg=f"tile {k}: image {index}")
    assert not np.array_equal(images[picked[0]], images[picked[-1]])

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

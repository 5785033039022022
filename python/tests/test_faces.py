"""kiln.faces on real photographs: the predecessor's function names and result fields, batches equal to single
images, asyncio forms that leave the event loop running, enhancement on decoded pixels, per-face quality with a
working overall score, and the per-stage GPU switches."""
import asyncio
import io

import numpy as np
import pytest

import kiln

faces = pytest.importorskip("kiln.faces", reason="kiln built without ONNX Runtime or faiss")

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
COFFEE = "/usr/lib/python3/dist-packages/skimage/data/coffee.png"
HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
SETTINGS = {"threads": 2}


def rgb(path):
    from PIL import Image
    return np.asarray(Image.open(path).convert("RGB"))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_one_face_per_portrait_with_the_predecessors_fields():
    found = faces.detect_and_embed(ASTRONAUT, **SETTINGS)
    assert len(found) == 1
    face = found[0]
    assert {"bbox", "embedding", "det_score", "scale", "enhancement_scale", "face_size", "landmarks", "quality",
            "pose", "accepted", "reasons"} <= set(face)
    x0, y0, x1, y1 = face["bbox"]
    assert 150 < x0 < 200 and 50 < y0 < 100 and 250 < x1 < 300 and 150 < y1 < 210  # the astronaut's face
    assert face["embedding"].dtype == np.float32 and face["embedding"].shape == (512,)
    assert abs(float(np.linalg.norm(face["embedding"])) - 1) < 1e-4
    assert face["landmarks"].shape == (6, 2) and 0.75 < face["det_score"] <= 1
    assert face["face_size"] == pytest.approx(min(x1 - x0, y1 - y0), rel=1e-4)
    assert 0 < face["quality"]["overall_score"] <= 1
    assert faces.detect_and_embed(COFFEE, **SETTINGS) == []


def test_bytes_path_and_array_give_the_same_faces():
    by_path = faces.detect_and_embed(HOPPER, **SETTINGS)[0]
    by_bytes = faces.detect_and_embed(read(HOPPER), **SETTINGS)[0]
    by_array = faces.detect_and_embed(rgb(ASTRONAUT), **SETTINGS)[0]
    assert by_path["bbox"] == by_bytes["bbox"]
    np.testing.assert_array_equal(by_path["embedding"], by_bytes["embedding"])
    np.testing.assert_allclose(by_array["embedding"], faces.detect_and_embed(ASTRONAUT, **SETTINGS)[0]["embedding"])
    assert by_path["scale"] == 1.0  # found as it is: not upscaled (upscale auto: a second pass only where none is)
    assert faces.detect_and_embed(HOPPER, upscale="always", **SETTINGS)[0]["scale"] == 2.0  # smaller side <= 600
    assert float(by_path["embedding"] @ by_array["embedding"]) < 0.4  # two people


def test_a_strided_memoryview_is_read_in_its_own_order():
    # Every other byte of the buffer is the JPEG: the view's bytes, not the memory under it (which used to be read
    # as if linear, and failed to decode).
    jpeg = read(HOPPER)
    interleaved = bytearray(2 * len(jpeg))
    interleaved[::2] = jpeg
    view = memoryview(interleaved)[::2]
    assert not view.c_contiguous
    by_view = faces.detect_and_embed(view, **SETTINGS)
    assert len(by_view) == 1
    np.testing.assert_array_equal(by_view[0]["embedding"], faces.detect_and_embed(jpeg, **SETTINGS)[0]["embedding"])


def test_batch_equals_single_images_and_reports_unreadable_ones():
    images = [ASTRONAUT, read(HOPPER), COFFEE, b"not an image", rgb(ASTRONAUT)[::2, ::2].copy()]
    batch = faces.detect_and_embed_batch(images, batch_size=2, return_exceptions=True, **SETTINGS)
    assert len(batch) == 5
    assert isinstance(batch[3], kiln.KilnValueError) and "not an image kiln decodes" in str(batch[3])
    for image, result in zip(images[:3] + images[4:], batch[:3] + batch[4:]):
        single = faces.detect_and_embed(image, **SETTINGS)
        assert [f["bbox"] for f in result] == [f["bbox"] for f in single]
        for a, b in zip(result, single):
            np.testing.assert_allclose(a["embedding"], b["embedding"], atol=1e-5)
    with pytest.raises(kiln.KilnValueError):
        faces.detect_and_embed_batch(images, **SETTINGS)
    with pytest.raises(kiln.KilnIOError):
        faces.detect_and_embed("/nonexistent/photo.jpg", **SETTINGS)


def test_async_forms_do_not_block_the_event_loop():
    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        task = asyncio.create_task(ticker())
        single = await faces.detect_and_embed_async(HOPPER, **SETTINGS)
        batch = await faces.detect_and_embed_batch_async([ASTRONAUT, HOPPER] * 3, batch_size=4, **SETTINGS)
        with pytest.raises(kiln.KilnValueError):
            await faces.detect_and_embed_async(b"junk", **SETTINGS)
        task.cancel()
        return single, batch, ticks

    single, batch, ticks = asyncio.run(main())
    assert ticks > 20  # the loop ran while kiln worked
    assert single[0]["bbox"] == faces.detect_and_embed(HOPPER, **SETTINGS)[0]["bbox"]
    assert [len(r) for r in batch] == [1] * 6


def test_report_during_an_analysis_leaves_other_threads_running():
    # The report waits for a running analysis (it holds the analyzer), but without the GIL: Python threads go on.
    import threading
    import time
    service = faces.FaceService(threads=1)
    batch = threading.Thread(target=service.detect_and_embed_batch, args=([ASTRONAUT, HOPPER] * 8, 16))
    batch.start()
    time.sleep(0.3)  # the batch holds the analyzer now
    waiting = threading.Thread(target=lambda: service.report)
    ticks, start = 0, time.monotonic()
    waiting.start()
    while waiting.is_alive() and time.monotonic() - start < 30:
        time.sleep(0.001)
        ticks += 1
    waiting.join()
    batch.join()
    elapsed = time.monotonic() - start
    assert elapsed > 0.1 and ticks > 0.2 * elapsed / 0.001, (ticks, elapsed)  # this thread kept running
    service.close()


def test_enhance_image_for_face_detection_works_on_decoded_pixels():
    small = io.BytesIO()
    from PIL import Image
    Image.fromarray(rgb(HOPPER)[::4, ::4]).save(small, format="JPEG", quality=95)  # 128 x 150: enhanced
    data = small.getvalue()
    enhanced, scale = faces.enhance_image_for_face_detection(data)
    assert scale == 1.0 and enhanced[:2] == b"\xff\xd8"
    plain = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)
    out = np.asarray(Image.open(io.BytesIO(enhanced)).convert("RGB")).astype(int)
    assert out.shape == plain.shape and out.std() > plain.std()  # contrast x1.15 and sharpening
    upscaled, scale = faces.enhance_image_for_face_detection(data, upscale="auto")
    assert scale == 4.0 and Image.open(io.BytesIO(upscaled)).size == (4 * plain.shape[1], 4 * plain.shape[0])
    png, _ = faces.enhance_image_for_face_detection(read(ASTRONAUT), enhance="off")
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(png))), rgb(ASTRONAUT))  # lossless, untouched
    with pytest.raises(kiln.KilnValueError):
        faces.enhance_image_for_face_detection(b"junk")


def test_quality_checker_scores_the_face_region():
    face = faces.detect_and_embed(ASTRONAUT, **SETTINGS)[0]
    metrics = faces.QualityChecker().assess_quality(rgb(ASTRONAUT), face["bbox"], face["landmarks"])
    assert metrics.overall_score == pytest.approx(face["quality"]["overall_score"], rel=1e-6)
    assert metrics.blur_score == pytest.approx(face["quality"]["blur"], rel=1e-6)
    assert metrics.pose == pytest.approx((face["pose"]["yaw"], face["pose"]["pitch"], face["pose"]["roll"]), abs=1e-4)
    assert metrics.is_acceptable({"min_blur": 100, "min_brightness": 30, "max_occlusion": 0.5})
    assert not metrics.is_acceptable({"min_sharpness": metrics.sharpness + 1})
    with pytest.raises(ValueError, match="unknown thresholds"):
        metrics.is_acceptable({"min_blurr": 1})
    whole = faces.QualityChecker().assess_quality(rgb(ASTRONAUT))
    assert whole.region == (0, 0, 512, 512) and whole.pose is None and whole.overall_score > 0


def test_settings_are_declared_and_stages_follow_their_switches(monkeypatch):
    with pytest.raises(TypeError):
        faces.FaceService(min_scor=0.5)
    with pytest.raises(kiln.KilnValueError):
        faces.FaceService(detector="retina")
    monkeypatch.setenv("FACE_DETECTION_GPU", "0")
    monkeypatch.setenv("QUALITY_CHECKS_GPU", "false")
    service = faces.FaceService(threads=1)
    service.detect_and_embed(ASTRONAUT)
    report = service.report
    assert "FACE_DETECTION_GPU=0" in report["detection"] and report["detection"].startswith("cpu")
    assert "QUALITY_CHECKS_GPU=false" in report["quality"]
    assert "FACE_DETECTION_GPU" not in report["embedding"]
    service.close()
    with pytest.raises(kiln.KilnValueError, match="closed"):
        service.submit([ASTRONAUT], 1, False, False, lambda *a: None)


def _cuda():
    return any(b["name"] == "cuda" and b["available"] for b in kiln.devices())


@pytest.mark.skipif(not _cuda(), reason="no CUDA device: the GPU face stages are not checked here")
def test_gpu_stages_match_the_cpu():
    prepared = dict(SETTINGS, upscale="always")  # the small photos prepared before detection, on the device
    cpu = faces.detect_and_embed_batch([ASTRONAUT, HOPPER], device="cpu", **prepared)
    service = faces.FaceService(device="gpu", **prepared)
    gpu = service.detect_and_embed_batch([ASTRONAUT, HOPPER], 32, False)
    # both photos' shorter sides are under 600: upscaled 2x, there, from the uploaded originals
    assert service.report["batch_memory"].startswith("device (1 batch, each uploaded once; prepared there: 2 images")
    gpu_async = asyncio.run(faces.detect_and_embed_batch_async([ASTRONAUT, HOPPER], device="gpu", **prepared))
    for a, b, c in zip(cpu, gpu, gpu_async):
        assert len(a) == len(b) == len(c)
        for fa, fb, fc in zip(a, b, c):
            np.testing.assert_allclose(fa["bbox"], fb["bbox"], atol=2)
            assert float(fa["embedding"] @ fb["embedding"]) > 0.99
            assert float(fb["embedding"] @ fc["embedding"]) > 0.999  # the same pass (another session: cuDNN may
            # pick other algorithms)
    service.close()

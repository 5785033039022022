"""kiln model quantize --int8 / convert --fp16 on the packaged models with real frames (a video made here from real
photographs with Debian's ffmpeg, and the photographs themselves): the copies load in ONNX Runtime (through kiln
infer, a separate process), hold what they claim (QDQ nodes and int8 weights; float16 weights), and stay close to
the fp32 model by measures computed here, not only by kiln's own report. Broken inputs write nothing."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import KILN, run_kiln

onnx = pytest.importorskip("onnx")  # python3-onnx (make deps)

SOURCE_DIR = os.environ.get("KILN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MAKE_VIDEO = os.path.join(SOURCE_DIR, "tools", "video", "make_person_video.py")
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"  # python3-skimage
HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"  # python3-matplotlib
COFFEE = "/usr/lib/python3/dist-packages/skimage/data/coffee.png"  # a photo without a person

pytestmark = pytest.mark.skipif(
    "is not built" in subprocess.run([KILN, "model", "quantize", "x"], capture_output=True, text=True).stderr,
    reason="this kiln is built without libonnx or ONNX Runtime (make deps)")

# Measured on the 2-core development machine, frames of the person video (a small person in a 16:9 frame, so many
# edge pixels per mask): selfie int8 mask IoU 0.90 mean, 0.81 worst frame, 1.8% of pixels decided differently (24
# frames of this fixture; with the output head quantized too, as before 2026-11-25: 0.85, 0.62, 2.6%); on the
# full-frame photos 0.98-0.99. fr-embed int8 cosine 0.96 mean, 0.92 worst. The bounds leave room for other frames,
# not for a broken quantizer (a wrong scale or bias gives IoU < 0.3, cosine < 0.5).
SELFIE_IOU_MEAN = 0.8
SELFIE_IOU_MIN = 0.6
SELFIE_PIXELS_DIFFER = 0.04
EMBED_COSINE_MIN = 0.9


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    path = tmp_path_factory.mktemp("frames") / "person.mp4"
    subprocess.run([sys.executable, MAKE_VIDEO, "-o", str(path), "--codec", "h264", "--seconds", "1", "--size",
                    "640x360"], capture_output=True, text=True, check=True)
    return path


@pytest.fixture(scope="module")
def selfie_int8(tmp_path_factory, video):
    out = tmp_path_factory.mktemp("int8") / "selfie_int8.onnx"
    result = run_kiln("model", "quantize", "--int8", "selfie", "--calibrate", video, "--max-frames", 24, "-o", out,
                      "--threads", 2, "--seconds", 0.3, "--json")
    return out, json.loads(result.stdout)


def infer(model, photos, out, *flags):
    run_kiln("infer", *photos, "--model", model, "-o", out, "--threads", 2, "-q", *flags)
    return np.load(out)


# kiln infer feeds a plain .onnx file x / 255; the embedder's packaged spec is (x - 127) / 128.
EMBED_FEED = ("--preprocess-from", "flags", "--scale", "1", "--mean", "127", "--std", "128")


def test_selfie_int8_has_qdq_nodes_and_int8_weights(selfie_int8):
    out, summary = selfie_int8
    model = onnx.load(str(out))
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("QuantizeLinear") > 50 and ops.count("DequantizeLinear") > 50
    assert {o.version for o in model.opset_import if o.domain in ("", "ai.onnx")} == {13}
    int8 = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.INT8]
    assert len(int8) >= summary["int8"]["weights"] == ops.count("Conv") == 54
    per_channel = [n for n in model.graph.node if n.op_type == "DequantizeLinear" and any(a.name == "axis" for a in n.attribute)]
    assert len(per_channel) >= 54  # the weights (and their int32 biases) have one scale per output channel
    # The float-side rewrites: every bias Add folded into its Conv, every Relu6 pattern into a Clip absorbed by a Q.
    assert "Sub" not in ops and "Relu" not in ops and "Clip" not in ops
    # The output head (ConvTranspose -> bias Add -> Sigmoid -> Identity) stays in float32: the logits place the edge.
    assert summary["int8"]["float_op_types"] == ["Add", "ConvTranspose", "Identity", "Sigmoid"]
    assert summary["int8"]["head_nodes"] == 4
    assert summary["frames"] == 24 and summary["bytes_after"] < 0.7 * summary["bytes_before"]


def test_selfie_int8_masks_match_fp32(tmp_path, selfie_int8):
    out, summary = selfie_int8
    compare = summary["compare"]
    assert compare["mask_iou"]["mean"] >= SELFIE_IOU_MEAN, compare
    assert compare["mask_iou"]["min"] >= SELFIE_IOU_MIN, compare
    assert compare["mask_pixels_differ"] <= SELFIE_PIXELS_DIFFER, compare
    assert compare["reference_ms"] > 0 and compare["candidate_ms"] > 0
    # Independently of kiln's report: kiln infer (ONNX Runtime in another process) on photos not calibrated on.
    photos = [ASTRONAUT, HOPPER, COFFEE]
    ref = infer("selfie", photos, tmp_path / "fp32.npy")
    got = infer(str(out), photos, tmp_path / "int8.npy")
    assert ref.shape == got.shape == (3, 1, 256, 256)
    for k in range(3):
        a, b = ref[k] >= 0.5, got[k] >= 0.5
        iou = (a & b).sum() / max((a | b).sum(), 1)
        share = a.mean()
        assert iou >= 0.9 or share < 0.3, (photos[k], iou)  # measured 0.98-0.99; the coffee cup: little to overlap
        # Measured 0.001 on the portraits; on the coffee cup, which fp32 already calls 21% person, 0.055.
        assert abs(b.mean() - share) < 0.07, (photos[k], b.mean(), share)
    assert np.abs(ref - got).mean() < 0.045  # measured 0.031: mostly the soft edges of the masks


def test_fr_embed_int8_cosine_and_speed_report(tmp_path):
    out = tmp_path / "fr_int8.onnx"
    result = run_kiln("model", "quantize", "--int8", "fr-embed", "--calibrate", ASTRONAUT, "--calibrate", HOPPER,
                      "--calibrate", COFFEE, "-o", out, "--threads", 2, "--seconds", 0.2)
    assert "Cosine: mean" in result.stdout and "Speed, CPU provider, batch 1, 2 threads" in result.stdout
    emb_ref = infer("fr-embed", [ASTRONAUT, HOPPER], tmp_path / "ref.npy")
    emb = infer(str(out), [ASTRONAUT, HOPPER], tmp_path / "int8.npy", *EMBED_FEED)
    cos = (emb_ref * emb).sum(1) / np.linalg.norm(emb_ref, axis=1) / np.linalg.norm(emb, axis=1)
    assert cos.min() >= EMBED_COSINE_MIN, cos
    # The two people stay as far apart as in fp32 (whole photos, not aligned faces: about 0.45 between them).
    def cross(e):
        return (e[0] @ e[1]) / np.linalg.norm(e[0]) / np.linalg.norm(e[1])
    assert abs(cross(emb) - cross(emb_ref)) < 0.1 and cross(emb) < 0.8


def test_fp16_convert_halves_the_file_and_keeps_outputs(tmp_path):
    out = tmp_path / "selfie_fp16.onnx"
    result = run_kiln("model", "convert", "--fp16", "selfie", "--calibrate", ASTRONAUT, "--calibrate", HOPPER, "-o",
                      out, "--threads", 2, "--seconds", 0.2, "--json")
    summary = json.loads(result.stdout)
    model = onnx.load(str(out))
    halves = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT16]
    assert len(halves) == summary["fp16"]["converted"] > 50
    assert summary["bytes_after"] < 0.6 * summary["bytes_before"]
    assert [i.type.tensor_type.elem_type for i in model.graph.input] == [onnx.TensorProto.FLOAT]
    assert [o.type.tensor_type.elem_type for o in model.graph.output] == [onnx.TensorProto.FLOAT]
    assert summary["compare"]["max_abs_diff"] < 5e-3 and summary["compare"]["mask_iou"]["min"] > 0.99
    ref = infer("selfie", [ASTRONAUT, COFFEE], tmp_path / "fp32.npy")
    got = infer(str(out), [ASTRONAUT, COFFEE], tmp_path / "fp16.npy")
    assert np.abs(ref - got).max() < 5e-3  # fp16 weights: 11 significant bits, through 55 layers


def test_truncated_model_is_refused_and_nothing_is_written(tmp_path):
    src = os.path.join(os.environ.get("KILN_CACHE", os.path.expanduser("~/.cache/kiln")), "models", "selfie.onnx")
    if not os.path.exists(src):
        pytest.skip("packaged models missing (make deps)")
    data = open(src, "rb").read()
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(data[: len(data) * 2 // 3])
    out = tmp_path / "out" / "x.onnx"
    for args in (["quantize", "--int8", "--calibrate", ASTRONAUT], ["convert", "--fp16"]):
        result = run_kiln("model", *args, broken, "-o", out, check=False)
        assert result.returncode == 2, result.stderr
        assert str(broken) in result.stderr and ("truncated" in result.stderr or "not a valid ONNX" in result.stderr)
        assert not out.exists()
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


def test_missing_or_unreadable_frames_write_nothing(tmp_path):
    out = tmp_path / "x.onnx"
    result = run_kiln("model", "quantize", "--int8", "selfie", "--calibrate", tmp_path / "nope.mp4", "-o", out,
                      check=False)
    assert result.returncode == 3 and "nope.mp4: no such file" in result.stderr, result.stderr
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    result = run_kiln("model", "quantize", "--int8", "selfie", "--calibrate", junk, "-o", out, check=False)
    assert result.returncode != 0 and "no calibration image could be decoded" in result.stderr, result.stderr
    result = run_kiln("model", "quantize", "--int8", "selfie", "-o", out, check=False)
    assert result.returncode != 0 and "--calibrate" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["junk.jpg"]  # no output, no temporary file


def test_frames_from_a_list_with_an_image_and_a_video(tmp_path, video):
    listed = tmp_path / "frames.txt"
    listed.write_text(f"{ASTRONAUT}\n# a comment\n{video}\n")
    out = tmp_path / "x.onnx"
    result = run_kiln("model", "convert", "--fp16", "selfie", "--calibrate", f"@{listed}", "--max-frames", 6, "-o",
                      out, "--threads", 2, "--seconds", 0.1, "--json")
    summary = json.loads(result.stdout)
    assert summary["frames"] == 6 and summary["frames_skipped"] == 0  # the photo and 5 frames of the video
    assert out.exists()

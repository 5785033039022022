"""kiln's TFJS -> ONNX converter on the MediaPipe selfie model: the converted model, run by OpenCV DNN on real
photographs, against an independent numpy evaluation of the TFJS graph itself."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(os.environ.get("KILN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT / "tools" / "models"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

cv2 = pytest.importorskip("cv2", reason="python3-opencv (make deps) runs the converted model")
import tfjs_reference  # noqa: E402
import tfjs_to_onnx  # noqa: E402

CACHE = Path(os.environ.get("KILN_CACHE") or Path.home() / ".cache" / "kiln")
SELFIE = CACHE / "human-models" / "selfie.json"
PHOTOS = ["/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
          "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    assert SELFIE.is_file(), f"{SELFIE} is missing: run make deps"
    path = tmp_path_factory.mktemp("model") / "selfie.onnx"
    path.write_bytes(tfjs_to_onnx.convert(SELFIE, "mask").SerializeToString())
    return cv2.dnn.readNetFromONNX(str(path))


@pytest.mark.parametrize("photo", PHOTOS)
def test_converted_selfie_matches_the_tfjs_graph(converted, photo):
    rgb = cv2.cvtColor(cv2.imread(photo), cv2.COLOR_BGR2RGB)
    image = cv2.resize(rgb, (256, 256), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    expected = tfjs_reference.evaluate(SELFIE, image[None])  # NHWC, float64
    converted.setInput(image.transpose(2, 0, 1)[None])
    actual = converted.forward()  # NCHW
    assert actual.shape == (1, 1, 256, 256)
    difference = np.abs(actual[0, 0] - expected[0, :, :, 0])
    assert difference.max() < 1e-4, difference.max()
    # Not a blank mask: the portrait's person covers about half of the frame.
    assert 0.4 < (expected > 0.5).mean() < 0.7


def test_the_packaged_model_is_this_conversion():
    packaged = CACHE / "models" / "selfie.onnx"
    assert packaged.read_bytes() == tfjs_to_onnx.convert(SELFIE, "mask").SerializeToString()


def test_unsupported_operations_are_named(tmp_path):
    import json
    model = json.loads(SELFIE.read_text())
    for node in model["modelTopology"]["node"]:
        if node["op"] == "Sigmoid":
            node["op"] = "Softplus"
    (tmp_path / "model.json").write_text(json.dumps(model))
    (tmp_path / "selfie.bin").write_bytes((SELFIE.parent / "selfie.bin").read_bytes())
    with pytest.raises(ValueError, match="Softplus"):
        tfjs_to_onnx.convert(tmp_path / "model.json", "mask")

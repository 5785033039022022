"""An independent evaluation of a TFJS graph model: TensorFlow's semantics written directly in numpy, NHWC, from the
model's JSON and weights (no ONNX involved). Only the operations of the selfie segmentation graph."""
import base64
import json
import math
from pathlib import Path

import numpy as np


def weights(model_json, folder):
    out = {}
    for group in model_json["weightsManifest"]:
        data = b"".join((folder / p).read_bytes() for p in group["paths"])
        offset = 0
        for spec in group["weights"]:
            shape = [int(d) for d in spec["shape"]]
            count = int(np.prod(shape)) if shape else 1
            if spec.get("quantization", {}).get("dtype") == "float16":
                values = np.frombuffer(data, np.float16, count, offset).astype(np.float64)
                offset += 2 * count
            else:
                values = np.frombuffer(data, np.dtype(spec["dtype"]), count, offset).astype(np.float64)
                offset += 4 * count
            out[spec["name"]] = values.reshape(shape)
    return out


def attr(node, name, kind):
    value = node.get("attr", {}).get(name, {})
    if kind == "s":
        return base64.b64decode(value["s"]).decode() if "s" in value else ""
    if kind == "b":
        return bool(value.get("b", False))
    return [int(v) for v in value.get("list", {}).get("i", [])]


def pad_same(x, kh, kw, sh, sw):
    def split(size, k, s):
        total = max((math.ceil(size / s) - 1) * s + k - size, 0)
        return total // 2, total - total // 2
    return np.pad(x, ((0, 0), split(x.shape[1], kh, sh), split(x.shape[2], kw, sw), (0, 0)))


def conv(x, w, strides, padding, depthwise):
    kh, kw = w.shape[:2]
    sh, sw = strides
    if padding == "SAME":
        x = pad_same(x, kh, kw, sh, sw)
    oh, ow = (x.shape[1] - kh) // sh + 1, (x.shape[2] - kw) // sw + 1
    out = 0
    for a in range(kh):
        for b in range(kw):
            patch = x[:, a:a + sh * (oh - 1) + 1:sh, b:b + sw * (ow - 1) + 1:sw, :]
            if depthwise:
                c, m = w.shape[2], w.shape[3]
                out = out + (patch[..., None] * w[a, b]).reshape(*patch.shape[:3], c * m)
            else:
                out = out + patch @ w[a, b]
    return out


def conv_transpose(x, w, out_size, strides):
    kh, kw, o, _ = w.shape
    sh, sw = strides
    n, h, wd, _ = x.shape
    full = np.zeros((n, (h - 1) * sh + kh, (wd - 1) * sw + kw, o))
    for a in range(kh):
        for b in range(kw):
            full[:, a:a + sh * (h - 1) + 1:sh, b:b + sw * (wd - 1) + 1:sw, :] += x @ w[a, b].T
    top = max((math.ceil(out_size[0] / sh) - 1) * sh + kh - out_size[0], 0) // 2
    left = max((math.ceil(out_size[1] / sw) - 1) * sw + kw - out_size[1], 0) // 2
    return full[:, top:top + out_size[0], left:left + out_size[1], :]


def resize_bilinear_half_pixel(x, out_h, out_w):
    def axis(out_size, in_size):
        src = (np.arange(out_size) + 0.5) * in_size / out_size - 0.5
        lower = np.clip(np.floor(src), 0, in_size - 1).astype(int)
        upper = np.clip(np.ceil(src), 0, in_size - 1).astype(int)
        return lower, upper, src - np.floor(src)
    y0, y1, fy = axis(out_h, x.shape[1])
    x0, x1, fx = axis(out_w, x.shape[2])
    top = x[:, y0][:, :, x0] * (1 - fx)[None, None, :, None] + x[:, y0][:, :, x1] * fx[None, None, :, None]
    bottom = x[:, y1][:, :, x0] * (1 - fx)[None, None, :, None] + x[:, y1][:, :, x1] * fx[None, None, :, None]
    return top * (1 - fy)[None, :, None, None] + bottom * fy[None, :, None, None]


def evaluate(model_json_path, image_nhwc):
    path = Path(model_json_path)
    model = json.loads(path.read_text())
    consts = weights(model, path.parent)
    nodes = {n["name"]: n for n in model["modelTopology"]["node"]}
    values = {}

    def value(name):
        name = name.split(":")[0]
        if name in consts:
            return consts[name]
        if name not in values:
            values[name] = compute(nodes[name])
        return values[name]

    def compute(node):
        op, ins = node["op"], node.get("input", [])
        if op == "Placeholder":
            return image_nhwc.astype(np.float64)
        if op in ("Conv2D", "DepthwiseConv2dNative"):
            return conv(value(ins[0]), value(ins[1]), attr(node, "strides", "i")[1:3], attr(node, "padding", "s"),
                        op == "DepthwiseConv2dNative")
        if op == "Conv2DBackpropInput":
            return conv_transpose(value(ins[2]), value(ins[1]), [int(v) for v in value(ins[0])[1:3]],
                                  attr(node, "strides", "i")[1:3])
        if op in ("Add", "AddV2", "BiasAdd"):
            return value(ins[0]) + value(ins[1])
        if op == "AddN":
            return sum(value(i) for i in ins)
        if op == "Mul":
            return value(ins[0]) * value(ins[1])
        if op == "Relu":
            return np.maximum(value(ins[0]), 0)
        if op == "Relu6":
            return np.clip(value(ins[0]), 0, 6)
        if op == "Sigmoid":
            return 1 / (1 + np.exp(-np.clip(value(ins[0]), -80, 80)))
        if op == "AvgPool":
            x = value(ins[0])
            k = attr(node, "ksize", "i")[1]
            assert attr(node, "padding", "s") == "VALID" and attr(node, "strides", "i")[1] == k
            n, h, w, c = x.shape
            return x[:, :h // k * k, :w // k * k].reshape(n, h // k, k, w // k, k, c).mean(axis=(2, 4))
        if op == "ResizeBilinear":
            assert attr(node, "half_pixel_centers", "b") and not attr(node, "align_corners", "b")
            out_h, out_w = (int(v) for v in value(ins[1]))
            return resize_bilinear_half_pixel(value(ins[0]), out_h, out_w)
        raise NotImplementedError(op)

    output = next(iter(model["signature"]["outputs"])).split(":")[0]
    return value(output)

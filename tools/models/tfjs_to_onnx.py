"""Converts a TensorFlow.js graph model (model.json + weight files) into an NCHW ONNX model (opset 11).

Covers the operations of the MediaPipe selfie segmentation graph: convolutions (plain, depthwise, transposed, with
TF's asymmetric SAME padding), element-wise arithmetic, ReLU/ReLU6/sigmoid, average pooling and bilinear resizing.
Tensors are NHWC in TF and NCHW here, so filters and per-channel constants are transposed while converting; the
batch dimension is symbolic (N). ReLU6 is written as Relu(x) - Relu(x - 6) so that OpenCV's ONNX importer reads the
result too.
"""
import base64
import json
import math
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 11


def weights_read(model_json, folder):
    """The weights of a TFJS graph model by name, as float32 / int32 numpy arrays in TF layout."""
    weights = {}
    for group in model_json["weightsManifest"]:
        data = b"".join((folder / path).read_bytes() for path in group["paths"])
        offset = 0
        for spec in group["weights"]:
            shape = [int(d) for d in spec["shape"]]
            count = int(np.prod(shape)) if shape else 1
            quant = spec.get("quantization")
            if quant:
                stored = {"float16": np.float16, "uint8": np.uint8, "uint16": np.uint16}[quant["dtype"]]
                raw = np.frombuffer(data, stored, count, offset)
                offset += count * np.dtype(stored).itemsize
                if quant["dtype"] == "float16":
                    values = raw.astype(np.float32)
                else:
                    values = raw.astype(np.float32) * np.float32(quant["scale"]) + np.float32(quant["min"])
            else:
                dtype = {"float32": np.float32, "int32": np.int32}[spec["dtype"]]
                values = np.frombuffer(data, dtype, count, offset).copy()
                offset += count * 4
            weights[spec["name"]] = values.reshape(shape)
    return weights


def attr_ints(node, name, default=None):
    attr = node.get("attr", {}).get(name)
    return [int(v) for v in attr["list"].get("i", [])] if attr else default


def attr_string(node, name, default=""):
    attr = node.get("attr", {}).get(name)
    return base64.b64decode(attr["s"]).decode() if attr and "s" in attr else default


def attr_bool(node, name):
    return bool(node.get("attr", {}).get(name, {}).get("b", False))


def same_pads(size, kernel, stride, dilation):
    """TF SAME padding of one spatial dimension: (before, after); the extra pixel goes after."""
    total = max((math.ceil(size / stride) - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


class Converter:
    def __init__(self, model_json, weights):
        self.nodes = {node["name"]: node for node in model_json["modelTopology"]["node"]}
        self.weights = weights
        self.onnx_nodes = []
        self.initializers = []
        self.shapes = {}  # tensor name -> (C, H, W)
        self.names = {}   # TF node name -> ONNX tensor name

    def const(self, name):
        return self.weights[name] if name in self.weights else None

    def initializer(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def add(self, op, inputs, output, **attrs):
        self.onnx_nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def channel_const(self, tf_name):
        """A constant operand of an element-wise op, shaped to broadcast over NCHW."""
        value = self.const(tf_name).astype(np.float32)
        if value.ndim == 1 and value.size > 1:
            value = value.reshape(-1, 1, 1)
        elif value.ndim == 4:
            value = value.transpose(0, 3, 1, 2)
        return self.initializer(tf_name + "/nchw", value)

    def operand(self, tf_name):
        tf_name = tf_name.split(":")[0]
        if self.const(tf_name) is not None:
            return self.channel_const(tf_name), None
        return self.tensor(tf_name), self.shapes[self.tensor(tf_name)]

    def tensor(self, tf_name):
        tf_name = tf_name.split(":")[0]
        if tf_name not in self.names:
            self.names[tf_name] = self.convert(self.nodes[tf_name])
        return self.names[tf_name]

    def convert(self, node):
        op = node["op"]
        handler = getattr(self, "op_" + op, None)
        if handler is None:
            raise ValueError(f"tfjs_to_onnx: operation {op} (node {node['name']}) is not supported")
        return handler(node)

    def op_Placeholder(self, node):
        dims = [int(d["size"]) for d in node["attr"]["shape"]["shape"]["dim"]]
        self.input = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", dims[3], dims[1], dims[2]])
        self.shapes["input"] = (dims[3], dims[1], dims[2])
        return "input"

    def conv(self, node, x_name, weight, group, out_channels):
        c, h, w = self.shapes[x_name]
        strides = attr_ints(node, "strides", [1, 1, 1, 1])[1:3]
        dilations = attr_ints(node, "dilations", [1, 1, 1, 1])[1:3]
        kh, kw = weight.shape[2], weight.shape[3]
        if attr_string(node, "padding") == "SAME":
            (top, bottom), (left, right) = (same_pads(h, kh, strides[0], dilations[0]),
                                            same_pads(w, kw, strides[1], dilations[1]))
        else:
            top = bottom = left = right = 0
        out_h = (h + top + bottom - (kh - 1) * dilations[0] - 1) // strides[0] + 1
        out_w = (w + left + right - (kw - 1) * dilations[1] - 1) // strides[1] + 1
        weight_name = self.initializer(node["name"] + "/weight", weight.astype(np.float32))
        output = self.add("Conv", [x_name, weight_name], node["name"], strides=strides, dilations=dilations,
                          pads=[top, left, bottom, right], group=group, kernel_shape=[kh, kw])
        self.shapes[output] = (out_channels, out_h, out_w)
        return output

    def op_Conv2D(self, node):
        x = self.tensor(node["input"][0])
        hwio = self.const(node["input"][1])
        return self.conv(node, x, hwio.transpose(3, 2, 0, 1), 1, hwio.shape[3])

    def op_DepthwiseConv2dNative(self, node):
        x = self.tensor(node["input"][0])
        hwcm = self.const(node["input"][1])
        kh, kw, c, m = hwcm.shape
        weight = hwcm.reshape(kh, kw, c * m).transpose(2, 0, 1)[:, None, :, :]
        return self.conv(node, x, weight, c, c * m)

    def op_Conv2DBackpropInput(self, node):
        out_size = [int(v) for v in self.const(node["input"][0])]  # NHWC
        hwoi = self.const(node["input"][1])
        x = self.tensor(node["input"][2])
        _, h, w = self.shapes[x]
        strides = attr_ints(node, "strides", [1, 1, 1, 1])[1:3]
        kh, kw = hwoi.shape[0], hwoi.shape[1]
        pads_before, pads_after = [], []
        for size_in, size_out, k, s in ((h, out_size[1], kh, strides[0]), (w, out_size[2], kw, strides[1])):
            if attr_string(node, "padding") == "SAME":
                before = same_pads(size_out, k, s, 1)[0]
            else:
                before = 0
            pads_before.append(before)
            pads_after.append((size_in - 1) * s + k - size_out - before)
        weight_name = self.initializer(node["name"] + "/weight", hwoi.transpose(3, 2, 0, 1).astype(np.float32))
        output = self.add("ConvTranspose", [x, weight_name], node["name"], strides=strides,
                          pads=pads_before + pads_after, kernel_shape=[kh, kw])
        self.shapes[output] = (hwoi.shape[2], out_size[1], out_size[2])
        return output

    def binary(self, node, onnx_op):
        (a, shape_a), (b, shape_b) = (self.operand(name) for name in node["input"][:2])
        output = self.add(onnx_op, [a, b], node["name"])
        self.shapes[output] = shape_a or shape_b
        return output

    def op_Add(self, node):
        return self.binary(node, "Add")

    op_AddV2 = op_Add
    op_BiasAdd = op_Add

    def op_Mul(self, node):
        return self.binary(node, "Mul")

    def op_Sub(self, node):
        return self.binary(node, "Sub")

    def op_AddN(self, node):
        inputs = [self.tensor(name) for name in node["input"]]
        output = self.add("Sum", inputs, node["name"])
        self.shapes[output] = self.shapes[inputs[0]]
        return output

    def unary(self, node, onnx_op):
        x = self.tensor(node["input"][0])
        output = self.add(onnx_op, [x], node["name"])
        self.shapes[output] = self.shapes[x]
        return output

    def op_Relu(self, node):
        return self.unary(node, "Relu")

    def op_Sigmoid(self, node):
        return self.unary(node, "Sigmoid")

    def op_Relu6(self, node):
        x = self.tensor(node["input"][0])
        six = self.initializer(node["name"] + "/six", np.array(6.0, np.float32))
        shifted = self.add("Sub", [x, six], node["name"] + "/minus6")
        upper = self.add("Relu", [shifted], node["name"] + "/excess")
        lower = self.add("Relu", [x], node["name"] + "/relu")
        output = self.add("Sub", [lower, upper], node["name"])
        self.shapes[output] = self.shapes[x]
        return output

    def op_AvgPool(self, node):
        x = self.tensor(node["input"][0])
        c, h, w = self.shapes[x]
        kernel = attr_ints(node, "ksize")[1:3]
        strides = attr_ints(node, "strides")[1:3]
        if attr_string(node, "padding") == "SAME":
            (top, bottom), (left, right) = same_pads(h, kernel[0], strides[0], 1), same_pads(w, kernel[1], strides[1], 1)
        else:
            top = bottom = left = right = 0
        output = self.add("AveragePool", [x], node["name"], kernel_shape=kernel, strides=strides,
                          pads=[top, left, bottom, right], count_include_pad=0)
        self.shapes[output] = (c, (h + top + bottom - kernel[0]) // strides[0] + 1,
                               (w + left + right - kernel[1]) // strides[1] + 1)
        return output

    def op_ResizeBilinear(self, node):
        x = self.tensor(node["input"][0])
        c, h, w = self.shapes[x]
        out_h, out_w = (int(v) for v in self.const(node["input"][1]))
        if attr_bool(node, "align_corners"):
            mode = "align_corners"
        elif attr_bool(node, "half_pixel_centers"):
            mode = "half_pixel"
        else:
            mode = "asymmetric"
        roi = self.initializer(node["name"] + "/roi", np.zeros(0, np.float32))
        scales = self.initializer(node["name"] + "/scales", np.array([1, 1, out_h / h, out_w / w], np.float32))
        output = self.add("Resize", [x, roi, scales], node["name"], mode="linear",
                          coordinate_transformation_mode=mode)
        self.shapes[output] = (c, out_h, out_w)
        return output

    def model(self, output_tf_name, output_name, doc):
        last = self.tensor(output_tf_name)
        self.add("Identity", [last], output_name)
        c, h, w = self.shapes[last]
        output = helper.make_tensor_value_info(output_name, TensorProto.FLOAT, ["N", c, h, w])
        graph = helper.make_graph(self.onnx_nodes, "tfjs_graph", [self.input], [output], self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="kiln tfjs_to_onnx", doc_string=doc)
        onnx.checker.check_model(model)
        return model


def convert(model_json_path, output_name="output"):
    """The ONNX model of a TFJS graph model with one input and one output."""
    path = Path(model_json_path)
    model_json = json.loads(path.read_text())
    converter = Converter(model_json, weights_read(model_json, path.parent))
    outputs = list(model_json.get("signature", {}).get("outputs", {}))
    if len(outputs) != 1:
        raise ValueError(f"tfjs_to_onnx: {path} has {len(outputs)} outputs in its signature; one is supported")
    doc = f"Converted by kiln from the TFJS graph model {path.name} ({model_json.get('generatedBy', '')})"
    return converter.model(outputs[0].split(":")[0], output_name, doc)

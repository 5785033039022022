#!/usr/bin/python3
"""Builds kiln's packaged models into <cache>/models from the files tools/deps/fetch_deps.py unpacked.

For each model of models/catalog.json: `copy`, `dynamic_batch` (the batch dimension made symbolic so that ONNX
Runtime runs whole batches) or `tfjs_to_onnx` (kiln's converter). Writes <cache>/models/catalog.json, the catalog
kiln reads at run time, with each model's source package, size and SHA-256 added. Skips the work when nothing it
depends on changed.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tfjs_to_onnx  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "models" / "catalog.json"
MANIFEST = ROOT / "deps" / "manifest.json"
TOOLS = [Path(__file__).resolve(), Path(tfjs_to_onnx.__file__).resolve()]


def default_cache():
    return Path(os.environ.get("KILN_CACHE") or Path.home() / ".cache" / "kiln")


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def batch_dim_node(graph):
    """Nodes computing [N] (the first input's batch size, int64) once; returns the tensor name."""
    first_input = next(v.name for v in graph.input if v.name not in {i.name for i in graph.initializer})
    graph.initializer.extend([onnx.numpy_helper.from_array(np.array([0], np.int64), "kiln_batch/starts"),
                              onnx.numpy_helper.from_array(np.array([1], np.int64), "kiln_batch/ends")])
    nodes = [onnx.helper.make_node("Shape", [first_input], ["kiln_batch/shape"]),
             onnx.helper.make_node("Slice", ["kiln_batch/shape", "kiln_batch/starts", "kiln_batch/ends"],
                                   ["kiln_batch/n"])]
    for i, node in enumerate(nodes):
        graph.node.insert(i, node)
    return "kiln_batch/n"


def dynamic_batch(model):
    """Dim 0 of every graph input and output becomes N; Reshape targets that pin the batch to 1 copy it instead, and
    constant-filled tensors of batch 1 (ConstantOfShape, BlazeFace's channel padding) take the batch size N."""
    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    for value in list(graph.input) + list(graph.output):
        if value.name in initializers:
            continue
        dim = value.type.tensor_type.shape.dim[0]
        dim.ClearField("dim_value")
        dim.dim_param = "N"
    del graph.value_info[:]
    constants = {node.output[0]: node for node in graph.node if node.op_type == "Constant"}
    for node in graph.node:
        if node.op_type != "Reshape":
            continue
        target = node.input[1]
        if target in initializers:
            tensor = initializers[target]
        elif target in constants:
            tensor = next(a.t for a in constants[target].attribute if a.name == "value")
        else:
            continue
        shape = onnx.numpy_helper.to_array(tensor).copy()
        if shape.size > 1 and shape[0] == 1:
            shape[0] = 0  # 0 = this dimension of the input: the batch
            tensor.CopyFrom(onnx.numpy_helper.from_array(shape, tensor.name))
    batch = None
    for node in list(graph.node):
        if node.op_type != "ConstantOfShape" or node.input[0] not in initializers:
            continue
        shape = onnx.numpy_helper.to_array(initializers[node.input[0]])
        if shape.size < 2 or shape[0] != 1:
            continue
        batch = batch or batch_dim_node(graph)
        rest = node.output[0] + "/shape_after_batch"
        graph.initializer.append(onnx.numpy_helper.from_array(shape[1:].astype(np.int64), rest))
        dynamic_shape = node.input[0] + "/with_batch_" + node.output[0]
        graph.node.insert(list(graph.node).index(node),
                          onnx.helper.make_node("Concat", [batch, rest], [dynamic_shape], axis=0))
        node.input[0] = dynamic_shape
    onnx.checker.check_model(model)
    return model


def model_build(entry, package_folder):
    sources = [package_folder / name for name in entry["sources"]]
    for source in sources:
        if not source.is_file():
            raise SystemExit(f"kiln models: {source} is missing; run tools/deps/fetch_deps.py (make deps) first")
    if entry["prepare"] == "tfjs_to_onnx":
        model = tfjs_to_onnx.convert(sources[0], entry["outputs"][0]["name"])
    elif entry["prepare"] == "dynamic_batch":
        model = dynamic_batch(onnx.load(sources[0]))
    elif entry["prepare"] == "copy":
        return sources[0].read_bytes()
    else:
        raise SystemExit(f"kiln models: {entry['name']}: unknown prepare step {entry['prepare']}")
    return model.SerializeToString()


def inputs_digest(catalog, packages):
    digest = hashlib.sha256(CATALOG.read_bytes())
    for tool in TOOLS:
        digest.update(tool.read_bytes())
    digest.update(onnx.__version__.encode())
    for entry in catalog["models"]:
        digest.update(packages[entry["package"]]["sha256"].encode())
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=default_cache(), help="the kiln cache (KILN_CACHE)")
    args = parser.parse_args()
    catalog = json.loads(CATALOG.read_text())
    packages = json.loads(MANIFEST.read_text())["packages"]
    folder = args.cache / "models"
    stamp = folder / ".kiln-prepared"
    digest = inputs_digest(catalog, packages)
    if stamp.is_file() and stamp.read_text() == digest and (folder / "catalog.json").is_file():
        return 0
    # Everything is built in a staging folder that replaces the old one only when complete: a failure or a crash
    # leaves the previous models and their catalog as they were.
    args.cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=args.cache, prefix=".models."))
    try:
        for entry in catalog["models"]:
            data = model_build(entry, args.cache / entry["package"])
            (staging / entry["file"]).write_bytes(data)
            entry["source"] = packages[entry["package"]]["npm"]
            entry["bytes"] = len(data)
            entry["sha256"] = sha256_bytes(data)
            print(f"kiln models: {entry['name']} -> {folder / entry['file']} ({len(data)} bytes)", flush=True)
        (staging / "catalog.json").write_text(json.dumps(catalog, indent=2) + "\n")
        (staging / ".kiln-prepared").write_text(digest)
        os.chmod(staging, 0o755)
        old = None
        if folder.exists():
            old = Path(tempfile.mkdtemp(dir=args.cache, prefix=".models-old."))
            os.replace(folder, old / "models")
        os.replace(staging, folder)
        if old is not None:
            shutil.rmtree(old)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compares a GPU run's output with the CPU run's, with the Python standard library only (the lent GPU machine has
no numpy guaranteed). Prints one line, `ok: ...` or `MISMATCH: ...`, and exits 0 or 1.

  compare_outputs.py rows GPU.npy CPU.npy --width 512 [--min-cosine 0.999]   float32 rows (embeddings)
  compare_outputs.py values GPU.npy CPU.npy [--max-mean-abs 0.01] [--max-abs X]   float32 arrays (masks, tensors)
  compare_outputs.py quality GPU.jsonl CPU.jsonl [--rel 0.001]               kiln quality --json lines
  compare_outputs.py faces GPU.jsonl CPU.jsonl [--max-px 2]                  kiln faces --jsonl lines
"""
import argparse
import ast
import json
import math
import struct
import sys


def npy_floats(path):
    """The float32 values of an NPY 1.0 file (little-endian '<f4', C order) and its shape."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not an NPY file")
    header_len = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + header_len].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        raise ValueError(f"{path}: {header['descr']} (fortran {header['fortran_order']}); want C-order <f4")
    body = data[10 + header_len:]
    return struct.unpack(f"<{len(body) // 4}f", body), tuple(header["shape"])


def jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def rows(args):
    a, shape_a = npy_floats(args.gpu)
    b, shape_b = npy_floats(args.cpu)
    if shape_a != shape_b:
        return False, f"shapes {shape_a} and {shape_b}"
    worst = 1.0
    for r in range(len(a) // args.width):
        x, y = a[r * args.width:(r + 1) * args.width], b[r * args.width:(r + 1) * args.width]
        dot = sum(p * q for p, q in zip(x, y))
        norm = math.sqrt(sum(p * p for p in x) * sum(q * q for q in y)) or 1e-30
        worst = min(worst, dot / norm)
    return worst >= args.min_cosine, f"{len(a) // args.width} rows, lowest cosine {worst:.5f} (>= {args.min_cosine})"


def values(args):
    a, shape_a = npy_floats(args.gpu)
    b, shape_b = npy_floats(args.cpu)
    if shape_a != shape_b:
        return False, f"shapes {shape_a} and {shape_b}"
    diffs = [abs(p - q) for p, q in zip(a, b)]
    mean, worst = sum(diffs) / max(1, len(diffs)), max(diffs, default=0.0)
    ok = mean <= args.max_mean_abs and (args.max_abs is None or worst <= args.max_abs)
    return ok, f"{len(a)} values {shape_a}, mean |diff| {mean:.3g} (<= {args.max_mean_abs}), max {worst:.3g}" + (
        f" (<= {args.max_abs})" if args.max_abs is not None else "")


def quality(args):
    a, b = jsonl(args.gpu), jsonl(args.cpu)
    if [r.get("path") for r in a] != [r.get("path") for r in b]:
        return False, "the two runs list other images"
    worst, where = 0.0, ""
    for x, y in zip(a, b):
        for key in ("blur", "brightness", "contrast", "sharpness", "score"):
            if key not in x or key not in y:
                continue
            rel = abs(x[key] - y[key]) / max(1e-9, abs(y[key]))
            if rel > worst:
                worst, where = rel, f"{key} of {x['path']}"
        if x.get("pass") != y.get("pass"):
            return False, f"{x['path']}: pass {x.get('pass')} on the GPU, {y.get('pass')} on the CPU"
    return worst <= args.rel, f"{len(a)} images, largest relative difference {worst:.3g} ({where}; <= {args.rel})"


def faces(args):
    a = [r for r in jsonl(args.gpu) if "bbox" in r]
    b = [r for r in jsonl(args.cpu) if "bbox" in r]
    if len(a) != len(b):
        return False, f"{len(a)} faces on the GPU, {len(b)} on the CPU"
    worst = 0.0
    for x, y in zip(a, b):
        if x["image"] != y["image"]:
            return False, f"face order differs: {x['image']} / {y['image']}"
        pts = list(zip(x["bbox"], y["bbox"]))
        for p, q in zip(x.get("landmarks", []), y.get("landmarks", [])):
            pts += list(zip(p, q)) if isinstance(p, list) else [(p, q)]
        worst = max([worst] + [abs(p - q) for p, q in pts])
        if x.get("accepted") != y.get("accepted"):
            return False, f"{x['image']}: accepted {x.get('accepted')} on the GPU, {y.get('accepted')} on the CPU"
    return worst <= args.max_px, f"{len(a)} faces, boxes and landmarks within {worst:.2f} px (<= {args.max_px})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="kind", required=True)
    for name in ("rows", "values", "quality", "faces"):
        p = sub.add_parser(name)
        p.add_argument("gpu")
        p.add_argument("cpu")
        if name == "rows":
            p.add_argument("--width", type=int, required=True)
            p.add_argument("--min-cosine", type=float, default=0.999)
        elif name == "values":
            p.add_argument("--max-mean-abs", type=float, default=0.01)
            p.add_argument("--max-abs", type=float)
        elif name == "quality":
            p.add_argument("--rel", type=float, default=1e-3)
        else:
            p.add_argument("--max-px", type=float, default=2.0)
    args = ap.parse_args()
    try:
        ok, text = {"rows": rows, "values": values, "quality": quality, "faces": faces}[args.kind](args)
    except (OSError, ValueError, KeyError) as e:
        ok, text = False, str(e)
    print(("ok: " if ok else "MISMATCH: ") + text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

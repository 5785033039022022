#!/usr/bin/env python3
"""kiln.render --style gasf|gadf|mtf|rp vs the same encodings in vectorised numpy (the way pyts computes them), on the
same windows, in one process.

4,000 seeded random-walk windows of 64 closes -> 64x64 fields. numpy works on the whole batch at once as pyts'
transform does (min-max rescale, arccos-free GASF and GADF by outer products, numpy.percentile bins + numpy.digitize and the
transition counts with np.add.at for the MTF, pairwise |x_i - x_j| for the RP) and returns float64 fields, as pyts
does; kiln returns uint8 images (one thread, then every core). Each tool gets a warm-up, then `--repeats` timed
passes; the best pass is reported (images per wall second). Target: kiln >= 10x numpy per thread.

  PYTHONPATH=build/python /usr/bin/python3 bench/encodings_vs_numpy.py [--json FILE]
"""
import argparse
import json
import os
import platform
import time

import numpy as np

import kiln

TARGET = 10.0


def make_windows(count, seq_len, seed):
    rng = np.random.default_rng(seed)
    return np.ascontiguousarray(100 + np.cumsum(rng.standard_normal((count, seq_len)), axis=1), dtype=np.float32)


def rescaled(x):
    lo, hi = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    return (2 * x - hi - lo) / (hi - lo)


def numpy_gasf(x):
    c = np.clip(rescaled(x.astype(np.float64)), -1, 1)
    s = np.sqrt(np.clip(1 - c ** 2, 0, 1))
    return c[:, :, None] * c[:, None, :] - s[:, :, None] * s[:, None, :]


def numpy_gadf(x):
    c = np.clip(rescaled(x.astype(np.float64)), -1, 1)
    s = np.sqrt(np.clip(1 - c ** 2, 0, 1))
    return s[:, :, None] * c[:, None, :] - c[:, :, None] * s[:, None, :]


def numpy_mtf(x, bins=8):
    x = x.astype(np.float64)
    n = x.shape[1]
    edges = np.percentile(x, np.linspace(0, 100, bins + 1)[1:-1], axis=1).T
    keep = np.r_[~np.isclose(0, np.diff(edges, axis=1), rtol=0, atol=1e-8).T, np.full((1, x.shape[0]), True)].T
    b = np.stack([np.digitize(row, e[k], right=True) for row, e, k in zip(x, edges, keep)])
    counts = np.zeros((x.shape[0], bins, bins))
    samples = np.repeat(np.arange(x.shape[0]), n - 1)
    np.add.at(counts, (samples, b[:, :-1].ravel(), b[:, 1:].ravel()), 1)
    sums = counts.sum(axis=2, keepdims=True)
    w = np.divide(counts, sums, out=np.zeros_like(counts), where=sums > 0)
    rows = np.arange(x.shape[0])[:, None, None]
    return w[rows, b[:, :, None], b[:, None, :]]


def numpy_rp(x):
    x = x.astype(np.float64)
    return np.abs(x[:, :, None] - x[:, None, :])


NUMPY = {"gasf": numpy_gasf, "gadf": numpy_gadf, "mtf": numpy_mtf, "rp": numpy_rp}


def best_rate(fn, count, repeats):
    fn()
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = max(best, count / (time.perf_counter() - start))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=4000)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    windows = make_windows(args.windows, args.seq_len, seed=1)
    cores = os.cpu_count() or 1
    results = []
    print(f"{args.windows} windows of {args.seq_len} -> {args.seq_len}x{args.seq_len}, best of {args.repeats}, "
          f"{platform.processor() or platform.machine()}, {cores} cores")
    print(f"{'encoding':8} {'numpy img/s':>12} {'kiln 1 thr':>12} {'kiln all':>12} {'x per thread':>13}  target")
    for style, reference in NUMPY.items():
        numpy_rate = best_rate(lambda: reference(windows), args.windows, args.repeats)
        one = best_rate(lambda: kiln.render(windows, style=style, mode="cpu", threads=1), args.windows, args.repeats)
        every = best_rate(lambda: kiln.render(windows, style=style, mode="cpu", threads=cores), args.windows,
                          args.repeats)
        ratio = one / numpy_rate
        met = "met" if ratio >= TARGET else "not met"
        print(f"{style:8} {numpy_rate:12,.0f} {one:12,.0f} {every:12,.0f} {ratio:12.1f}x  >= {TARGET:.0f}x {met}")
        results.append(dict(encoding=style, numpy=numpy_rate, kiln_1=one, kiln_all=every, threads=cores,
                            ratio_per_thread=ratio, target_met=ratio >= TARGET))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(windows=args.windows, seq_len=args.seq_len, results=results), f, indent=2)


if __name__ == "__main__":
    main()

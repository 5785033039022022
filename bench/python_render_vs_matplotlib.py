#!/usr/bin/env python3
"""kiln.render vs the predecessor's matplotlib function, on the same windows, in one process.

200 seeded random-walk windows (seq_len 100), 800x500, line width 3. kiln renders the whole batch per call
(threads 1 and all cores); matplotlib makes a new figure per image (Agg backend), as the predecessor did.
Each tool gets a warm-up, then `--repeats` timed passes; the best pass is reported (images per wall second).

  PYTHONPATH=build/python /usr/bin/python3 bench/python_render_vs_matplotlib.py [--json FILE]
"""
import argparse
import json
import os
import platform
import statistics
import time

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kiln  # noqa: E402


def make_windows(count, seq_len, seed):
    rng = np.random.default_rng(seed)
    return np.ascontiguousarray(100 + np.cumsum(rng.standard_normal((count, seq_len)), axis=1), dtype=np.float32)


def matplotlib_render(window, width, height, line_width, dpi):
    """The predecessor's CPU path: a new figure per image, RGB mean as float32 in [0, 1]."""
    fig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    plt.plot(window, linewidth=line_width, color="black")
    plt.axis("off")
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[..., :3].mean(axis=2).astype(np.float32) / 255.0
    plt.close(fig)
    return image


def time_passes(fn, count, repeats):
    fn()  # warm-up
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        rates.append(count / (time.perf_counter() - t0))
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seq-len", type=int, default=100)
    parser.add_argument("--width", type=int, default=800)
    parser.add_argument("--height", type=int, default=500)
    parser.add_argument("--dpi", type=int, default=100)
    parser.add_argument("--line-width", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--matplotlib-count", type=int, default=None,
                        help="images per matplotlib pass (default: all windows)")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = parser.parse_args()

    windows = make_windows(args.count, args.seq_len, args.seed)
    results = []
    cores = os.cpu_count() or 1
    for threads in sorted({1, cores}):
        rates = time_passes(lambda t=threads: kiln.render(windows, width=args.width, height=args.height,
                                                          line_width=args.line_width, mode="cpu", threads=t),
                            args.count, args.repeats)
        results.append({"tool": "kiln", "threads": threads, "img_per_s": max(rates),
                        "mean": statistics.mean(rates), "stdev": statistics.pstdev(rates)})
    mpl_windows = windows[: args.matplotlib_count or args.count]

    def mpl_pass():
        for w in mpl_windows:
            matplotlib_render(w, args.width, args.height, args.line_width, args.dpi)

    rates = time_passes(mpl_pass, len(mpl_windows), args.repeats)
    results.append({"tool": "matplotlib", "threads": 1, "img_per_s": max(rates),
                    "mean": statistics.mean(rates), "stdev": statistics.pstdev(rates)})

    mpl_rate = results[-1]["img_per_s"]
    kiln_1 = next(r for r in results if r["tool"] == "kiln" and r["threads"] == 1)["img_per_s"]
    kiln_all = max(r["img_per_s"] for r in results if r["tool"] == "kiln")
    report = {
        "windows": args.count, "seq_len": args.seq_len, "width": args.width, "height": args.height,
        "line_width": args.line_width, "repeats": args.repeats, "kiln_version": kiln.__version__,
        "matplotlib_version": matplotlib.__version__, "cpu": platform.processor() or platform.machine(),
        "cores": cores, "results": results,
        "ratio": kiln_all / mpl_rate, "ratio_single_thread": kiln_1 / mpl_rate,
    }
    print(f"{args.count} windows, seq_len {args.seq_len}, {args.width}x{args.height}, line width {args.line_width}, "
          f"best of {args.repeats} passes")
    print(f"{'tool':<12}{'threads':>8}{'img/s (best)':>14}{'mean ± sd':>20}")
    for r in results:
        print(f"{r['tool']:<12}{r['threads']:>8}{r['img_per_s']:>14.1f}{r['mean']:>12.1f} ± {r['stdev']:<7.1f}")
    print(f"kiln/matplotlib: {report['ratio']:.1f}x (all threads), {report['ratio_single_thread']:.1f}x (1 thread)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()

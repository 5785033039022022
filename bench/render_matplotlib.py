#!/usr/bin/env python3
"""matplotlib peer for bench/render_peers: the predecessor's method, a new figure per image.

Reads the windows (float32, shape (count, seq_len)) from a .npy file, renders them for `--seconds` after a
warm-up, `--repeats` times, and prints one JSON line:
  {"tool": "matplotlib", "version": ..., "cpu_rates": [...], "wall_rates": [...], "ink_width": ...}
Rates are images per CPU-second of this thread (time.thread_time, i.e. CLOCK_THREAD_CPUTIME_ID) and per
wall-clock second. Exits with status 2 and a message on stderr when numpy or matplotlib is missing.
"""
import argparse
import json
import sys
import time

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as err:
    print(f"render_matplotlib.py: {err}", file=sys.stderr)
    sys.exit(2)


def render(window, width, height, line_width, dpi):
    """One image, exactly as the predecessor pipeline made it; returns (gray, figure line in pixels)."""
    fig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    (line,) = plt.plot(window, linewidth=line_width, color="black")
    plt.axis("off")
    fig.canvas.draw()
    buf = np.asarray(fig.canvas.buffer_rgba())
    gray = buf[..., :3].mean(axis=2)
    points = line.get_transform().transform(line.get_xydata())
    plt.close(fig)
    return gray, points


def run_for(windows, seconds, first, args):
    count = len(windows)
    images = 0
    wall0, cpu0 = time.perf_counter(), time.thread_time()
    while True:
        render(windows[(first + images) % count], args.width, args.height, args.line_width, args.dpi)
        images += 1
        if time.perf_counter() - wall0 >= seconds:
            break
    wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
    return images, images / cpu, images / wall


def ink_width(windows, args, samples=16):
    """Total darkness / drawn polyline length: the line's effective width in pixels (edge clipping ignored)."""
    widths = []
    for window in windows[:samples]:
        gray, points = render(window, args.width, args.height, args.line_width, args.dpi)
        length = float(np.hypot(*np.diff(points, axis=0).T).sum())
        widths.append(float((255.0 - gray).sum() / 255.0) / length)
    return sum(widths) / len(widths)


def write_pgm(path, gray):
    image = np.clip(np.rint(gray), 0, 255).astype(np.uint8)
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (image.shape[1], image.shape[0]))
        f.write(image.tobytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("npy", help="float32 windows, shape (count, seq_len)")
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--height", type=int, required=True)
    parser.add_argument("--line-width", type=float, required=True, help="matplotlib linewidth (points)")
    parser.add_argument("--dpi", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=0.3)
    parser.add_argument("--dump", help="also write window 0 as this .pgm file")
    args = parser.parse_args()

    windows = np.load(args.npy)
    if windows.ndim != 2 or len(windows) == 0:
        print(f"render_matplotlib.py: {args.npy}: expected a 2-D array of windows", file=sys.stderr)
        sys.exit(1)

    gray, _ = render(windows[0], args.width, args.height, args.line_width, args.dpi)
    if gray.shape != (args.height, args.width):
        print(f"render_matplotlib.py: canvas is {gray.shape[1]}x{gray.shape[0]}, not {args.width}x{args.height}",
              file=sys.stderr)
    if args.dump:
        write_pgm(args.dump, gray)

    next_window = 0
    images, _, _ = run_for(windows, args.warmup, next_window, args)
    next_window += images
    cpu_rates, wall_rates = [], []
    for _ in range(args.repeats):
        images, cpu_rate, wall_rate = run_for(windows, args.seconds, next_window, args)
        next_window += images
        cpu_rates.append(cpu_rate)
        wall_rates.append(wall_rate)

    print(json.dumps({
        "tool": "matplotlib",
        "version": matplotlib.__version__,
        "backend": matplotlib.get_backend(),
        "cpu_rates": cpu_rates,
        "wall_rates": wall_rates,
        "ink_width": ink_width(windows, args),
    }))


if __name__ == "__main__":
    main()

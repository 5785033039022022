"""Pillow's decode rate of each file bench/decode_peers gives it, as that benchmark measures kiln's and OpenCV's:
the file's bytes in memory, decoded to RGB (Image.open + convert("RGB"), which loads the pixels), by THREADS threads
each decoding its own copies for SECONDS, after one warm-up decode. Pillow releases the GIL while it decodes.
Formats Pillow cannot read (HEIC, AVIF without a plugin) are left out.

    python3 bench/decode_pillow.py SECONDS THREADS FILE...   # prints {"FILE": images_per_s, ...}
    python3 bench/decode_pillow.py --rgb FILE                # writes the decoded RGB bytes (rows packed)

The second form is decode_peers' check that Pillow ends with the same pixels as kiln (a GIF's palette expanded to
RGB, as kiln gives it), so that no rate compares different work.
"""
import io
import json
import sys
import threading
import time

from PIL import Image


def decode(data):
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB")


def rate(data, seconds, threads):
    decode(data)
    counts = [0] * threads
    stop = time.perf_counter() + seconds

    def work(slot):
        while time.perf_counter() < stop:
            decode(data)
            counts[slot] += 1

    start = time.perf_counter()
    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(counts) / (time.perf_counter() - start)


def main():
    if sys.argv[1] == "--rgb":
        sys.stdout.buffer.write(decode(open(sys.argv[2], "rb").read()).tobytes())
        return
    seconds, threads = float(sys.argv[1]), int(sys.argv[2])
    rates = {}
    for path in sys.argv[3:]:
        data = open(path, "rb").read()
        try:
            decode(data)
        except Exception:  # noqa: BLE001 - a format this Pillow does not read
            continue
        rates[path] = rate(data, seconds, threads)
    json.dump(rates, sys.stdout)


if __name__ == "__main__":
    main()

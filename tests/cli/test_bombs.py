"""Decompression bombs and huge declared sizes, made here from a few KB each: every one is refused from its header
with a clear error, and the peak memory of the whole kiln process (GNU time's maximum resident set size) stays far
below what the header asks for."""
import re
import shutil
import struct
import subprocess
import zlib

import pytest

from conftest import KILN

pytestmark = pytest.mark.skipif(shutil.which("/usr/bin/time") is None, reason="GNU time (/usr/bin/time) is missing")
# kiln's own start-up is about 60-120 MB here (about 450 MB in an ASan build); the bombs declare 10.8 GB to 4.4 TB.
PEAK_LIMIT_KB = 1024 * 1024
HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"  # a real JPEG (python3-matplotlib)


def png_bomb(path, side=60000):
    """A PNG declaring side x side RGB whose IDAT inflates to ~36 MB of zero rows from 35 KB."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    deflate = zlib.compressobj(9)
    row = b"\x00" * (side * 3 + 1)
    data = b"".join(deflate.compress(row) for _ in range(200)) + deflate.flush()
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", data) + chunk(b"IEND", b""))


def jpeg_bomb(path):
    """A real JPEG whose frame header is patched to 60000 x 60000."""
    with open(HOPPER, "rb") as f:
        data = bytearray(f.read())
    sof = max(data.find(b"\xff\xc0"), data.find(b"\xff\xc2"))
    data[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)
    path.write_bytes(bytes(data))


def npy_bomb(path):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }"
    header = header.ljust(118) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(1024))


def hdf5_bomb(path):
    import h5py
    with h5py.File(path, "w") as f:  # 10^12 float32, no chunk written: 1.4 KB on disk
        f.create_dataset("close", shape=(10**12,), dtype="f4", chunks=(4096,), compression="gzip")


def peak_kb_and_result(*args):
    done = subprocess.run(["/usr/bin/time", "-v", KILN, *map(str, args)], capture_output=True, text=True, timeout=120)
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return peak, done


def test_image_bombs_are_refused_with_bounded_memory(tmp_path):
    png_bomb(tmp_path / "bomb.png")
    jpeg_bomb(tmp_path / "bomb.jpg")
    for image in (tmp_path / "bomb.png", tmp_path / "bomb.jpg"):
        peak, done = peak_kb_and_result("quality", image, "--mode", "cpu")
        assert done.returncode != 0, done.stdout
        assert "60000x60000 image exceeds the limit of 67108864 pixels" in done.stdout, done.stdout
        assert peak < PEAK_LIMIT_KB, (image.name, peak)


@pytest.mark.parametrize("kind", ["npy", "h5", "csv"])
def test_series_bombs_are_refused_with_bounded_memory(tmp_path, kind):
    path = tmp_path / f"bomb.{kind}"
    if kind == "npy":
        npy_bomb(path)
        expected = "needs 4398046511104 data bytes"
    elif kind == "h5":
        hdf5_bomb(path)
        expected = "declares 1000000000000 values (4000000000000 bytes) but the file stores 0 bytes"
    else:
        path.write_text("date,close\n2020-01-01," + "1" * (2 << 20) + "\n")
        expected = "a record longer than 1 MiB"
    source = f"{path}:/close" if kind == "h5" else path
    peak, done = peak_kb_and_result("render", source, "-o", tmp_path / "out.h5", "--mode", "cpu")
    assert done.returncode != 0
    message = [line for line in done.stderr.splitlines() if line.startswith("kiln: ")]
    assert len(message) == 1 and str(path.name) in message[0], done.stderr
    assert expected in message[0], message
    assert peak < PEAK_LIMIT_KB, peak
    assert not (tmp_path / "out.h5").exists()

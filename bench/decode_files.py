"""The files bench/decode_peers decodes: one real photograph (python3-skimage's astronaut, 512 x 512) in every format
kiln reads, at 512 x 512 and at 12 MP (4000 x 3000, upscaled bicubic: smoother than a camera's 12 MP, so every
codec's rate there is an upper bound). Pillow writes JPEG (quality 90, 4:2:0), PNG, WebP (quality 90), GIF, BMP and
TIFF (LZW); libheif's heif-enc writes HEIC (x265) and AVIF (aom) at quality 85.

    python3 bench/decode_files.py OUT_DIR      # prints the files as JSON: [{"format", "size", "path", "bytes"}]
"""
import json
import subprocess
import sys
from pathlib import Path

from PIL import Image

PHOTO = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
SIZES = {"512x512": (512, 512), "12mp": (4000, 3000)}


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for size, (width, height) in SIZES.items():
        photo = Image.open(PHOTO).convert("RGB").resize((width, height), Image.BICUBIC)
        source = out / f"{size}.source.png"
        photo.save(source, compress_level=1)
        saves = {
            "jpeg": lambda p: photo.save(p, "JPEG", quality=90),
            "png": lambda p: photo.save(p, "PNG"),
            "webp": lambda p: photo.save(p, "WEBP", quality=90),
            "gif": lambda p: photo.save(p, "GIF"),
            "bmp": lambda p: photo.save(p, "BMP"),
            "tiff": lambda p: photo.save(p, "TIFF", compression="tiff_lzw"),
        }
        for fmt, save in saves.items():
            path = out / f"{size}.{fmt}"
            if not path.exists():
                save(path)
            files.append({"format": fmt, "size": size, "path": str(path)})
        for fmt, flags in (("heic", ["-p", "preset=ultrafast"]), ("avif", ["-A", "-p", "speed=9"])):
            path = out / f"{size}.{fmt}"
            if not path.exists():
                subprocess.run(["heif-enc", "-q", "85", *flags, "-o", str(path), str(source)], check=True,
                               capture_output=True)
            files.append({"format": fmt, "size": size, "path": str(path)})
    for f in files:
        f["bytes"] = Path(f["path"]).stat().st_size
    json.dump(files, sys.stdout)


if __name__ == "__main__":
    main()

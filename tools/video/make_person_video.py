#!/usr/bin/env python3
"""Builds a real test video from real photographs with Debian's ffmpeg: two portraits (skimage's astronaut,
X, each padded to the frame's aspect, then
slowly zoomed and panned (so the decoder sees real motion), joined, encoded with H.264 or VP9, with a sine-tone
audio track. Prints the frame ranges as JSON: {"frames": N, "fps": F, "segments": [{"photo", "person", "first",
"count"}]}.

  make_person_video.py -o person.mp4 [--size 1280x720] [--fps 30] [--seconds 2] [--codec h264|vp9] [--no-audio]
"""
import argparse
import json
import os
import subprocess
import sys

PHOTOS = [
    ("astronaut", True, "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"),
    ("rocket", False, "/usr/lib/python3/dist-packages/skimage/data/rocket.jpg"),
    ("grace_hopper", True, "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"),
]
ENCODERS = {"h264": ["-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p"],
            "vp9": ["-c:v", "libvpx-vp9", "-crf", "32", "-b:v", "0", "-deadline", "realtime", "-cpu-used", "8",
                    "-pix_fmt", "yuv420p"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--seconds", type=float, default=2.0, help="per photo")
    ap.add_argument("--codec", choices=sorted(ENCODERS), default="h264")
    ap.add_argument("--no-audio", action="store_true")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    per = int(round(args.seconds * args.fps))
    for _, _, path in PHOTOS:
        if not os.path.exists(path):
            sys.exit(f"make_person_video: {path} is missing (apt-get install python3-skimage python3-matplotlib)")

    cmd = ["ffmpeg", "-v", "error", "-y"]
    for _, _, path in PHOTOS:
        cmd += ["-i", path]
    if not args.no_audio:
        cmd += ["-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={per * len(PHOTOS) / args.fps}"]
    chains, segments = [], []
    for k, (name, person, _) in enumerate(PHOTOS):
        # Zoom in on the first photo, pan across the second, zoom out of the third: d frames from one input image.
        zoom = ["min(1+0.25*on/{d},1.25)", "1.15", "max(1.25-0.25*on/{d},1)"][k % 3].format(d=per)
        x = ["iw/2-(iw/zoom/2)", "(iw-iw/zoom)*on/{d}", "iw/2-(iw/zoom/2)"][k % 3].format(d=per)
        chains.append(f"[{k}:v]scale={width}:{height}:force_original_aspect_ratio=decrease,"
                      f"pad={width}:{height}:(ow-iw)/2:(oh-ih)/2:color=0x303030,setsar=1,format=yuv420p,"
                      f"zoompan=z='{zoom}':x='{x}':y='ih/2-(ih/zoom/2)':d={per}:s={width}x{height}:fps={args.fps}"
                      f"[v{k}]")
        segments.append({"photo": name, "person": person, "first": k * per, "count": per})
    chains.append("".join(f"[v{k}]" for k in range(len(PHOTOS))) + f"concat=n={len(PHOTOS)}:v=1:a=0[v]")
    cmd += ["-filter_complex", ";".join(chains), "-map", "[v]"]
    if not args.no_audio:
        cmd += ["-map", f"{len(PHOTOS)}:a", "-c:a", "libopus" if args.codec == "vp9" else "aac", "-b:a", "64k"]
    cmd += ENCODERS[args.codec] + ["-r", str(args.fps), args.output]
    subprocess.run(cmd, check=True)
    print(json.dumps({"frames": per * len(PHOTOS), "fps": args.fps, "segments": segments}))


if __name__ == "__main__":
    main()

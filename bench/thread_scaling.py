"""kiln's CPU jobs on 1 and 2 cores: each job pinned with taskset to one core with --threads 1, then to two cores
with --threads 2, alternated round by round; the ratio of the wall times is how the job scales with its threads
(issue 56's proof on a 2-core machine: >= 1.8x). Prints one JSON object (and --json FILE writes it).

    /usr/bin/python3 bench/thread_scaling.py --kiln build/kiln --repeats 3

The inputs: the demo series (render), the test photographs repeated (faces, infer: --photos of them), and a person
video made by tools/video/make_person_video.py (segment; --video to give one).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

PHOTOS = [
    "/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
    "/usr/lib/python3/dist-packages/skimage/data/camera.png",
    "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg",
]
SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def jobs(kiln, work, photos_list, video):
    out = os.path.join(work, "out")
    return {
        "render": [kiln, "render", "--demo", "--demo-points", "20000", "-o", out + ".h5", "--mode", "cpu", "-q"],
        "faces": [kiln, "faces", "@" + photos_list, "-o", out + ".h5", "--mode", "cpu", "-q"],
        "infer": [kiln, "infer", "--model", "fr-embed", "@" + photos_list, "-o", out + ".npy", "--mode", "cpu", "-q"],
        "segment": [kiln, "segment", video, "-o", out + ".mp4", "--mode", "cpu", "--hw-decode", "none",
                    "--throughput", "-q"],
    }


def clean(work):
    for name in os.listdir(work):
        if name.startswith("out"):
            path = os.path.join(work, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)


def timed(command, cores, threads, work):
    clean(work)
    pinned = ["taskset", "-c", cores] + command + ["--threads", str(threads)]
    started = time.monotonic()
    subprocess.run(pinned, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(SOURCE, "build", "kiln"))
    parser.add_argument("--jobs", nargs="+", default=["render", "faces", "infer", "segment"])
    parser.add_argument("--photos", type=int, default=150, help="photographs per faces/infer run (repeated)")
    parser.add_argument("--video", help="a person video for segment (default: made here, 1280x720, 180 frames)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--target", type=float, default=1.8)
    parser.add_argument("--json")
    args = parser.parse_args()
    if (os.cpu_count() or 1) < 2:
        sys.exit("thread_scaling: needs two cores")
    work = tempfile.mkdtemp(prefix="kiln-scaling-")
    try:
        photos_list = os.path.join(work, "photos.txt")
        with open(photos_list, "w") as f:
            f.write("\n".join(PHOTOS[i % len(PHOTOS)] for i in range(args.photos)) + "\n")
        video = args.video
        if video is None and "segment" in args.jobs:
            video = os.path.join(work, "person.mp4")
            subprocess.run([sys.executable, os.path.join(SOURCE, "tools", "video", "make_person_video.py"), "-o",
                            video, "--size", "1280x720", "--seconds", "2"], check=True, stdout=subprocess.DEVNULL)
        commands = jobs(os.path.abspath(args.kiln), work, photos_list, video)
        for name in args.jobs:  # warm the page cache and the models' first load
            timed(commands[name], "0,1", 2, work)
        samples = {name: {"one": [], "two": []} for name in args.jobs}
        for _ in range(args.repeats):
            for name in args.jobs:
                samples[name]["one"].append(timed(commands[name], "0", 1, work))
                samples[name]["two"].append(timed(commands[name], "0,1", 2, work))
        results = {}
        for name, s in samples.items():
            ratios = sorted(a / b for a, b in zip(s["one"], s["two"]))
            median = ratios[len(ratios) // 2]
            results[name] = {"seconds_1_core_1_thread": s["one"], "seconds_2_cores_2_threads": s["two"],
                             "ratios": ratios, "ratio_median": median, "met": median >= args.target}
        report = {"benchmark": "thread_scaling", "cpu_count": os.cpu_count(), "load_average": os.getloadavg(),
                  "target": args.target, "repeats": args.repeats,
                  "commands": {n: " ".join(commands[n]) for n in args.jobs},
                  "method": "each round: taskset -c 0 ... --threads 1, then taskset -c 0,1 ... --threads 2; the "
                            "ratio of the two wall times per round, the median over the rounds",
                  "results": results}
        text = json.dumps(report, indent=2)
        print(text)
        if args.json:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

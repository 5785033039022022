"""Scale-out on one machine: a chart dataset rendered whole, as N pieces run one after the other (the per-piece cost
a cluster pays N times in parallel), as N pieces at once, and on a Dask LocalCluster; then kiln merge as a virtual
dataset and as one copied file. Prints one JSON object (and --json FILE writes it).

    PYTHONPATH=build/python /usr/bin/python3 bench/scale_pieces.py --kiln build/kiln --pieces 4 --threads 2
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time


def timed(command):
    started = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default="build/kiln")
    parser.add_argument("--pieces", type=int, default=4)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--demo-points", type=int, default=85986)
    parser.add_argument("--dask", action="store_true", help="also kiln.distributed.render on a LocalCluster")
    parser.add_argument("--json")
    args = parser.parse_args()
    kiln = os.path.abspath(args.kiln)
    job = ["render", "--demo", "--demo-points", str(args.demo_points), "-q"]
    results = {"pieces": args.pieces, "threads": args.threads, "demo_points": args.demo_points}
    with tempfile.TemporaryDirectory(dir=".") as folder:
        results["whole_s"] = timed([kiln, *job, "-o", f"{folder}/whole.h5", "--threads", str(args.threads)])
        images = int(subprocess.run([kiln, "info", f"{folder}/whole.h5"], capture_output=True, text=True)
                     .stdout.split("  count             ")[1].split()[0])
        results["images"] = images
        pieces = [timed([kiln, *job, "-o", f"{folder}/seq/d.h5", "--threads", str(args.threads),
                         "--shard", f"{i}/{args.pieces}"]) for i in range(args.pieces)]
        results["piece_s"] = pieces
        results["pieces_one_after_another_s"] = sum(pieces)
        per_piece_threads = max(1, args.threads // args.pieces)
        started = time.monotonic()
        running = [subprocess.Popen([kiln, *job, "-o", f"{folder}/par/d.h5", "--threads", str(per_piece_threads),
                                     "--shard", f"{i}/{args.pieces}"], stdout=subprocess.DEVNULL)
                   for i in range(args.pieces)]
        assert all(p.wait() == 0 for p in running)
        results["pieces_at_once_s"] = time.monotonic() - started
        results["merge_vds_s"] = timed([kiln, "merge", f"{folder}/seq", "-o", f"{folder}/vds.h5"])
        results["merge_copy_s"] = timed([kiln, "merge", f"{folder}/seq", "-o", f"{folder}/copy.h5", "--copy"])
        results["bytes_per_image"] = os.path.getsize(f"{folder}/whole.h5") / images
        if args.dask:
            import kiln as kiln_module
            from distributed import Client, LocalCluster
            with LocalCluster(n_workers=args.pieces, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                started = time.monotonic()
                kiln_module.distributed.render(None, f"{folder}/dask", shards=args.pieces, client=client, demo=True,
                                               demo_points=args.demo_points, threads=per_piece_threads)
                results["dask_s"] = time.monotonic() - started
        shutil.rmtree(folder, ignore_errors=True)
    results["whole_images_per_s"] = results["images"] / results["whole_s"]
    results["pieces_overhead"] = results["pieces_one_after_another_s"] / results["whole_s"]
    print(json.dumps(results, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

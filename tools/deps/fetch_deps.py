#!/usr/bin/python3
"""Fetches the npm packages of deps/manifest.json into the kiln cache and unpacks the files kiln needs.

Each package is fetched once with `npm pack` (which runs no install scripts), checked against its pinned SHA-256 and
unpacked into <cache>/<package key>/; a stamp records what was unpacked, so a second run (or an offline rebuild)
does nothing. Nothing here runs at kiln's run time.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "deps" / "manifest.json"
STAMP = ".kiln-unpacked"


def default_cache():
    return Path(os.environ.get("KILN_CACHE") or Path.home() / ".cache" / "kiln")


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tarball_name(npm_spec):
    """npm pack's file name: @scope/name@1.2 -> scope-name-1.2.tgz."""
    name, version = npm_spec.rsplit("@", 1)
    return f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"


def stamp_text(package):
    return json.dumps({"sha256": package["sha256"], "files": package["files"]}, sort_keys=True)


def is_unpacked(folder, package):
    stamp = folder / STAMP
    return stamp.is_file() and stamp.read_text() == stamp_text(package)


def tarball_fetch(cache, key, package, offline):
    tarball = cache / "npm" / tarball_name(package["npm"])
    if not tarball.is_file():
        if offline:
            raise SystemExit(f"kiln deps: {package['npm']} is not in {tarball.parent} and --offline was given")
        tarball.parent.mkdir(parents=True, exist_ok=True)
        print(f"kiln deps: npm pack {package['npm']}", flush=True)
        with tempfile.TemporaryDirectory(dir=tarball.parent) as tmp:
            subprocess.run(["npm", "pack", "--silent", "--ignore-scripts", "--pack-destination", tmp, package["npm"]],
                           check=True, stdout=subprocess.DEVNULL)
            os.replace(Path(tmp) / tarball.name, tarball)
    actual = sha256_of(tarball)
    if actual != package["sha256"]:
        tarball.unlink()
        raise SystemExit(f"kiln deps: {tarball.name} has SHA-256 {actual}, the manifest pins {package['sha256']} "
                         f"for {key}; the download was removed")
    return tarball


def members_for(tar, source):
    if not source.endswith("/"):
        return [tar.getmember(source)]
    return [m for m in tar.getmembers() if m.name.startswith(source) and m.isfile()]


def unpack(tarball, folder, package):
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        with tarfile.open(tarball) as tar:
            for source, target in package["files"].items():
                for member in members_for(tar, source):
                    relative = target + member.name[len(source):] if source.endswith("/") else target
                    destination = staging / relative
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    with tar.extractfile(member) as src, open(destination, "wb") as dst:
                        shutil.copyfileobj(src, dst)
        for library in (staging / "lib").glob("*.so.*") if (staging / "lib").is_dir() else []:
            link = library.with_name(library.name.split(".so.")[0] + ".so")
            if not link.exists():
                link.symlink_to(library.name)
        (staging / STAMP).write_text(stamp_text(package))
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staging, folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=default_cache(), help="the kiln cache (KILN_CACHE)")
    parser.add_argument("--groups", default="cpu", help="comma-separated manifest groups: cpu, gpu")
    parser.add_argument("--offline", action="store_true", help="use only tarballs already in the cache")
    args = parser.parse_args()
    groups = set(args.groups.split(","))
    packages = json.loads(MANIFEST.read_text())["packages"]
    args.cache.mkdir(parents=True, exist_ok=True)
    for key, package in packages.items():
        if package["group"] not in groups:
            continue
        folder = args.cache / key
        if is_unpacked(folder, package):
            continue
        unpack(tarball_fetch(args.cache, key, package, args.offline), folder, package)
        print(f"kiln deps: {key} ({package['npm']}) -> {folder}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

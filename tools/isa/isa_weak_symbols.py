#!/usr/bin/env python3
"""Finds AVX code that the generic CPU path could run by accident.

Files built for an ISA (src/**/*_avx2.cpp, *_avx512*.cpp, *_vbmi.cpp, or with a target attribute or pragma) emit
every inline function and template they do not inline (std::vector growth, std::sort, header-defined helpers) as a
weak symbol. The linker keeps one copy per name for the whole program; if it keeps the ISA file's copy and that copy
holds VEX/EVEX instructions, the generic path runs AVX on a CPU without it (SIGILL). This lists, per ISA object file,
the weak functions whose body holds such instructions, and, for those, whether a linked binary (build/kiln, the
Python module) kept such a copy.

Usage: tools/isa/isa_weak_symbols.py [BUILD_DIR]   (exit status 1 when something is found)
"""
import re
import subprocess
import sys
from pathlib import Path

ISA_SOURCE = re.compile(r"_(avx2|avx512\w*|vbmi)\.cpp$")
TARGET_MARK = re.compile(r"__attribute__\(\(target\(|#\s*pragma\s+(GCC\s+target|clang\s+attribute)")
# Prefixes that may stand before a VEX (c4, c5) or EVEX (62, in 64-bit mode) prefix: segment and address size.
PASS_PREFIXES = {"26", "2e", "36", "3e", "64", "65", "67"}
INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)\s*\t(.*)$")
LABEL = re.compile(r"^[0-9a-f]+ <(.+)>:$")
UNITY_INCLUDE = re.compile(r'^#include "(.+)"$', re.M)
SOURCE_ROOT = Path(__file__).resolve().parents[2]
# A name that mentions kiln::avx2 (or avx512*, vbmi) belongs to that variant alone: no generic code defines it.
VARIANT_OWNED = re.compile(r"4kiln(4avx2|4vbmi|\d+avx512)")


def is_vex(raw_bytes):
    k = 0
    while k < len(raw_bytes) and raw_bytes[k] in PASS_PREFIXES:
        k += 1
    return k < len(raw_bytes) and raw_bytes[k] in ("c4", "c5", "62")


def weak_functions(path):
    """{name: (address, size)} of the weak (or GNU unique) functions a file defines, from .symtab or .dynsym."""
    out = subprocess.run(["readelf", "-W", "--syms", "--dyn-syms", path], capture_output=True, text=True,
                         check=True).stdout
    found = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[4] in ("WEAK", "UNIQUE") and f[6] != "UND":
            found.setdefault(f[7].split("@")[0], (int(f[1], 16), int(f[2], 0)))
    return found


def first_vex(disassembly, wanted):
    """{label: first VEX/EVEX instruction} for the labels in `wanted` of an objdump -d -w listing."""
    hits = {}
    current = None
    for line in disassembly.splitlines():
        label = LABEL.match(line)
        if label:
            current = label.group(1) if label.group(1) in wanted else None
            continue
        instruction = INSTRUCTION.match(line)
        if current and instruction and current not in hits and is_vex(instruction.group(1).split()):
            hits[current] = instruction.group(2).strip()
    return hits


def vex_in_object(obj):
    """{weak function: first VEX/EVEX instruction} of one object file."""
    weak = weak_functions(obj)
    if not weak:
        return {}
    listing = subprocess.run(["objdump", "-d", "-w", obj], capture_output=True, text=True, check=True).stdout
    return first_vex(listing, {name for name in weak if not VARIANT_OWNED.search(name)})


def vex_in_kept_copies(binary, names):
    """{name: first VEX/EVEX instruction} of the copies `binary` kept of these weak functions."""
    table = weak_functions(binary)
    hits = {}
    for name in sorted(names):
        if name not in table or table[name][1] == 0:
            continue
        start, size = table[name]
        listing = subprocess.run(["objdump", "-d", "-w", f"--start-address={start:#x}",
                                  f"--stop-address={start + size:#x}", binary],
                                 capture_output=True, text=True, check=True).stdout
        for line in listing.splitlines():
            instruction = INSTRUCTION.match(line)
            if instruction and is_vex(instruction.group(1).split()):
                hits[name] = instruction.group(2).strip()
                break
    return hits


def isa_sources(source_root):
    """Sources under src/ (relative to it) built for an ISA: by name, or by a target attribute or pragma."""
    src = Path(source_root) / "src"
    return {str(p.relative_to(src)) for p in src.rglob("*.cpp")
            if ISA_SOURCE.search(p.name) or TARGET_MARK.search(p.read_text(errors="replace"))}


def isa_objects(build, source_root=SOURCE_ROOT):
    """(source relative to src/, object file) for each ISA source the build compiled: its own object, or the unity
    batch (CMake's unity build) that includes it."""
    sources = isa_sources(source_root)
    src = (Path(source_root) / "src").resolve()
    objects = Path(build) / "src" / "CMakeFiles"
    found = []
    for obj in sorted(objects.glob("*.dir/**/*.cpp.o")):
        source = "/".join(obj.relative_to(objects).parts[1:])[: -len(".o")]
        if source in sources:
            found.append((source, obj))
    for batch in sorted(objects.glob("*.dir/Unity/unity_*.cxx")):
        obj = batch.with_name(batch.name + ".o")
        for included in UNITY_INCLUDE.findall(batch.read_text()):
            path = Path(included).resolve()
            if path.is_relative_to(src) and str(path.relative_to(src)) in sources and obj.is_file():
                found.append((str(path.relative_to(src)), obj))
    return found


def linked_binaries(build):
    build = Path(build)
    candidates = [build / "kiln", *sorted((build / "python" / "kiln").glob("_kiln*.so")),
                  *sorted((build / "src").glob("libkiln*.so"))]
    return [path for path in candidates if path.is_file()]


def objects_and_sources(build, source_root):
    """Each ISA object file once, with the ISA sources it holds (a unity batch may hold several)."""
    grouped = {}
    for source, obj in isa_objects(build, source_root):
        grouped.setdefault(obj, []).append(source)
    return [(obj, ", ".join(sources)) for obj, sources in grouped.items()]


def check(build, source_root=SOURCE_ROOT):
    """Lines describing each problem found (empty when none), and the weak names the ISA objects define."""
    problems = []
    names = set()
    flagged = set()
    for obj, sources in objects_and_sources(build, source_root):
        names.update(weak_functions(obj))
        for name, instruction in sorted(vex_in_object(obj).items()):
            problems.append(f"{sources}: weak {name} holds {instruction}")
            flagged.add(name)
    # Only ISA objects hold VEX/EVEX code, so only a flagged name can have an AVX copy in a binary: say which kept it.
    for binary in linked_binaries(build):
        for name, instruction in vex_in_kept_copies(binary, flagged).items():
            problems.append(f"{binary}: kept copy of {name} holds {instruction}")
    return problems, names


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    objects = objects_and_sources(build, SOURCE_ROOT)
    problems, names = check(build)
    print(f"{len(objects)} ISA object files, {len(names)} weak functions in them, "
          f"linked binaries: {', '.join(str(b) for b in linked_binaries(build)) or 'none'}")
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""The generic CPU path never runs AVX: no weak function an ISA file (*_avx2.cpp, *_avx512*.cpp, *_vbmi.cpp) emits
holds VEX/EVEX instructions, in its object file or in the copy the linked program kept (tools/isa/isa_weak_symbols.py
says why). The second test builds the hazard on purpose and checks that the tool sees it."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("KILN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT / "tools" / "isa"))
import isa_weak_symbols  # noqa: E402

PROBE_HEADER = """
inline __attribute__((noinline)) void kiln_probe_scale(float* p, int n) {
  for (int i = 0; i < n; ++i) p[i] = p[i] * 2.5f + 1.0f;
}
"""
PROBE_ISA = """#include "probe.h"
namespace kiln::avx2 {
inline __attribute__((noinline)) void own_scale(float* p, int n) {
  for (int i = 0; i < n; ++i) p[i] = p[i] * 1.5f + 2.0f;
}
}  // namespace kiln::avx2
void probe_isa(float* p, int n) { kiln_probe_scale(p, n); kiln::avx2::own_scale(p, n); }
"""
PROBE_GENERIC = ('#include "probe.h"\nvoid probe_isa(float* p, int n);\n'
                 "int main(int argc, char**) { float v[64] = {}; kiln_probe_scale(v, argc); probe_isa(v, argc);"
                 " return v[0] > 2.0f; }\n")


def build_dir():
    cli = os.environ.get("KILN_CLI")
    if not cli or not (Path(cli).parent / "src" / "CMakeFiles").is_dir():
        pytest.skip("KILN_CLI does not point into a CMake build folder (run through ctest)")
    build = Path(cli).parent
    if "KILN_NATIVE:BOOL=ON" in (build / "CMakeCache.txt").read_text(errors="replace"):
        pytest.skip("KILN_NATIVE builds every file for this CPU: there is no baseline path to protect")
    return build


def test_isa_files_emit_no_weak_avx_function():
    build = build_dir()
    sources = isa_weak_symbols.isa_sources(ROOT)
    covered = {source for source, _ in isa_weak_symbols.isa_objects(build, ROOT)}
    assert any(source.endswith("_avx2.cpp") for source in sources), "no ISA source files found under src/"
    assert sources <= covered, f"ISA sources without an object file in {build}: {sorted(sources - covered)}"
    assert isa_weak_symbols.linked_binaries(build), f"no linked kiln binary in {build}"
    problems, names = isa_weak_symbols.check(build, ROOT)
    assert names, "the ISA object files define no weak function at all: the check would see nothing"
    assert problems == []


def test_tool_finds_an_avx_copy_the_generic_code_calls(tmp_path):
    compiler = os.environ.get("CXX") or shutil.which("c++")
    assert compiler, "no C++ compiler (c++) to build the probe"
    (tmp_path / "src" / "ops").mkdir(parents=True)
    (tmp_path / "src" / "probe.h").write_text(PROBE_HEADER)
    (tmp_path / "src" / "ops" / "probe_avx2.cpp").write_text(PROBE_ISA)
    (tmp_path / "src" / "main.cpp").write_text(PROBE_GENERIC)
    objects = tmp_path / "src" / "CMakeFiles" / "probe.dir" / "ops"
    objects.mkdir(parents=True)
    avx2 = objects / "probe_avx2.cpp.o"
    baseline = tmp_path / "main.o"
    include = f"-I{tmp_path / 'src'}"
    subprocess.run([compiler, include, "-O3", "-mavx2", "-c", tmp_path / "src" / "ops" / "probe_avx2.cpp", "-o", avx2],
                   check=True)
    subprocess.run([compiler, include, "-O3", "-c", tmp_path / "src" / "main.cpp", "-o", baseline], check=True)
    # The ISA object first on the link line: the linker keeps its copy, and main() (baseline code) calls it.
    subprocess.run([compiler, avx2, baseline, "-o", tmp_path / "kiln"], check=True)

    name = "_Z16kiln_probe_scalePfi"
    assert name not in isa_weak_symbols.vex_in_object(baseline)
    assert name in isa_weak_symbols.vex_in_object(avx2)
    problems, names = isa_weak_symbols.check(tmp_path, tmp_path)
    assert name in names
    own = "_ZN4kiln4avx29own_scaleEPfi"  # weak and AVX too, but only the avx2 variant has that name
    assert own in names and not any(own in line for line in problems), problems
    assert any(line.startswith(f"ops/probe_avx2.cpp: weak {name} holds ") for line in problems), problems
    assert any(line.startswith(f"{tmp_path / 'kiln'}: kept copy of {name} holds ") for line in problems), problems

"""tools/gpu/gpu_checks.sh, the owed GPU checks: what it refuses on a machine without the GPU build."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("KILN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SCRIPT = ROOT / "tools" / "gpu" / "gpu_checks.sh"
BUILD = Path(os.environ.get("KILN_CLI", ROOT / "build" / "kiln")).resolve().parent


def run(*args):
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_prepare_needs_a_build_with_the_gpu_providers():
    cache = (BUILD / "CMakeCache.txt").read_text()
    if "KILN_ORT_GPU:BOOL=ON" in cache:
        pytest.skip("this build has the providers: preparing would pack hundreds of MiB")
    result = run("prepare", str(BUILD))
    assert result.returncode == 2
    assert "not configured with -DKILN_ORT_GPU=ON" in result.stderr
    assert not (BUILD / "gpu-check").exists()


def test_an_unknown_phase_is_refused_with_the_phases():
    result = run("benchmarks", str(BUILD))
    assert result.returncode == 2
    assert "prepare, suite, infer or segment" in result.stderr

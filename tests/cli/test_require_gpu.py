"""KILN_REQUIRE_GPU=1, the switch the lent GPU machine runs the suite with: a test that would skip for want of a GPU
fails instead (C++: KILN_GPU_SKIP in tests/common/gpu_required.h; pytest: tests/common/pytest_require_gpu.py)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import KILN, run_kiln

BACKEND_TESTS = os.path.join(os.path.dirname(KILN), "tests", "kiln_tests_backend_ops")
COMMON = os.path.join(os.path.dirname(__file__), "..", "common")
BASE_ENV = {k: v for k, v in os.environ.items() if k != "KILN_REQUIRE_GPU"}  # this run's own setting aside


def cuda_available():
    backends = json.loads(run_kiln("devices", "--json").stdout)["backends"]
    return any(b["name"] == "cuda" and b["available"] for b in backends)


@pytest.mark.skipif(not os.path.exists(BACKEND_TESTS), reason="kiln_tests_backend_ops not built")
def test_a_cuda_test_fails_instead_of_skipping_where_a_gpu_is_required():
    def run(env):
        return subprocess.run([BACKEND_TESTS, "--gtest_filter=CudaBackendTest.Identity"], capture_output=True,
                              text=True, env={**BASE_ENV, **env})
    relaxed, required = run({}), run({"KILN_REQUIRE_GPU": "1"})
    assert relaxed.returncode == 0
    if cuda_available():
        assert required.returncode == 0 and "[  PASSED  ] 1 test" in required.stdout
    else:
        assert "[  SKIPPED ] 1 test" in relaxed.stdout
        assert required.returncode != 0
        assert "KILN_REQUIRE_GPU=1: cuda:" in required.stdout and "[  FAILED  ] 1 test" in required.stdout


def test_a_pytest_gpu_skip_fails_where_a_gpu_is_required(tmp_path):
    (tmp_path / "test_sample.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.skipif(True, reason='no CUDA device here')\n"
        "def test_gpu():\n    pass\n\n"
        "def test_other():\n    pytest.skip('python3-yaml is not installed')\n")

    def run(env):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                               "pytest_require_gpu", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path,
                              env={**BASE_ENV, "PYTHONPATH": COMMON, **env})
    relaxed, required = run({}), run({"KILN_REQUIRE_GPU": "1"})
    assert relaxed.returncode == 0 and "2 skipped" in relaxed.stdout
    # A skipif skips in the setup phase, so pytest counts the turned-around test as an error; either way the run fails.
    assert required.returncode == 1 and "1 skipped, 1 error" in required.stdout
    assert "KILN_REQUIRE_GPU=1: Skipped: no CUDA device here" in required.stdout

"""A pytest hook for the lent GPU machine, imported by the test folders' conftest.py files: under KILN_REQUIRE_GPU=1
a test skipped for want of a GPU (its reason names CUDA, OpenCL, NVDEC or a GPU) fails instead, as the C++ tests'
KILN_GPU_SKIP does (tests/common/gpu_required.h)."""
import os
import re

import pytest

GPU_REASON = re.compile(r"\b(CUDA|OpenCL|NVDEC|GPU)\b", re.IGNORECASE)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("KILN_REQUIRE_GPU") != "1" or not report.skipped:
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if GPU_REASON.search(reason):
        report.outcome = "failed"
        report.longrepr = f"KILN_REQUIRE_GPU=1: {reason}"

"""kiln bench faces: the predecessor's JSON shape, on real photos, really switching device (OpenCL on PoCL here:
the GPU rows must name the GPU backend that ran them), and performance gains only where both devices ran."""
import json
import subprocess

import pytest

from conftest import KILN, run_kiln
from test_faces_cli import pytestmark  # noqa: F401 (skips without faces)
from test_render_gpu import opencl_available


def bench(tmp_path, *args, env=None):
    out = tmp_path / "bench.json"
    run_kiln("bench", "faces", "--iterations", 2, "--threads", 2, "--json", out, *args, env=env)
    return json.loads(out.read_text())


@pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")
def test_gpu_and_cpu_rows_in_the_predecessors_shape(tmp_path):
    result = bench(tmp_path, "--operation", "quality_checks", "--operation", "thumbnail_creation",
                   "--image-size", "small", "--image-size", "large", env={"KILN_OPENCL_DEVICE_TYPE": "all"})
    for op in ("quality_checks", "thumbnail_creation"):
        for size in ("small", "large"):
            rows = result["benchmark_results"][op][size]
            assert rows["gpu_true"]["backend"] == "opencl" and rows["gpu_false"]["backend"] == "cpu"
            for row in rows.values():
                assert row["success_rate"] == 1.0 and row["mean_time_ms"] > 0
                assert row["mean_throughput"] == pytest.approx(1000 / row["mean_time_ms"])
            gains = result["analysis"]["performance_gains"][op][size]
            cpu, gpu = rows["gpu_false"]["mean_time_ms"], rows["gpu_true"]["mean_time_ms"]
            assert gains["time_improvement_percent"] == pytest.approx((cpu - gpu) / cpu * 100)
    assert "medium" not in result["benchmark_results"]["quality_checks"]


def test_face_detection_on_the_cpu_and_an_unavailable_gpu_reported(tmp_path):
    result = bench(tmp_path, "--operation", "face_detection", "--image-size", "medium")
    rows = result["benchmark_results"]["face_detection"]["medium"]
    assert rows["gpu_false"]["success_rate"] == 1.0 and rows["gpu_false"]["backend"] == "cpu"
    if "error" in rows["gpu_true"]:  # no CUDA here: said, not hidden
        assert rows["gpu_true"]["success_rate"] == 0.0 and "CUDA" in rows["gpu_true"]["error"]
        assert result["analysis"]["performance_gains"] == {}
    only_cpu = bench(tmp_path, "--no-gpu", "--operation", "image_enhancement", "--image-size", "small")
    assert list(only_cpu["benchmark_results"]["image_enhancement"]["small"]) == ["gpu_false"]


def test_an_unknown_image_size_is_refused_before_anything_runs(tmp_path):
    result = run_kiln("bench", "faces", "--image-size", "huge", "--json", tmp_path / "bench.json", check=False)
    assert result.returncode != 0 and "huge" in result.stderr and "small" in result.stderr
    assert not (tmp_path / "bench.json").exists()

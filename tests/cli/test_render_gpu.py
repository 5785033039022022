"""GPU placement and reported fallback through the CLI, on the OpenCL backend (PoCL's CPU device in CI)."""
import json

import pytest

from conftest import assert_same_output, read_dataset, run_kiln

OPENCL = {"KILN_OPENCL_DEVICE_TYPE": "all"}
ARGS = ["render", "--demo", "--demo-points", 400, "--width", 200, "--height", 100, "--batch-size", 64]


def opencl_available():
    backends = json.loads(run_kiln("devices", "--json", env=OPENCL).stdout)["backends"]
    return any(b["name"] == "opencl" and b["available"] for b in backends)


pytestmark = pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")


@pytest.fixture(scope="module")
def cpu_reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("cpu") / "cpu.h5"
    run_kiln(*ARGS, "-o", out, "--mode", "cpu", "-q")
    return out


def test_auto_renders_on_opencl_identically(tmp_path, cpu_reference):
    out = tmp_path / "gpu.h5"
    result = run_kiln(*ARGS, "-o", out, env=OPENCL)
    assert "Rendering mode: GPU" in result.stderr and "opencl" in result.stderr
    assert_same_output(cpu_reference, out, ignore=("created_at", "run_report"))
    report = json.loads(read_dataset(out)[1]["run_report"])
    assert report["backend"] == "opencl" and report["moved_to_cpu"] is False and report["fallbacks"] == 0


def test_kernel_fault_moves_the_rest_to_cpu_and_is_reported(tmp_path, cpu_reference):
    out = tmp_path / "fault.h5"
    result = run_kiln(*ARGS, "-o", out, env={**OPENCL, "KILN_FAULT": "kernel:3"})
    assert "Fallbacks: 1" in result.stdout
    assert result.stderr.count("this batch and the rest of the job run on the CPU") == 1
    assert_same_output(cpu_reference, out, ignore=("created_at", "run_report", "fallbacks"))
    data, attrs = read_dataset(out)
    assert attrs["fallbacks"] == 1
    assert json.loads(attrs["run_report"])["moved_to_cpu"] is True


def test_allocation_fault_halves_the_batch(tmp_path, cpu_reference):
    out = tmp_path / "oom.h5"
    result = run_kiln(*ARGS, "-o", out, env={**OPENCL, "KILN_FAULT": "alloc:2"})
    assert "retrying with batches of 32" in result.stderr
    assert_same_output(cpu_reference, out, ignore=("created_at", "run_report", "fallbacks"))
    report = json.loads(read_dataset(out)[1]["run_report"])
    assert report["gpu_batch_size"] == 32 and report["moved_to_cpu"] is False


def test_tiny_memory_limit_halves_until_it_fits(tmp_path, cpu_reference):
    out = tmp_path / "limit.h5"
    # 64 images of 200x100 need 1.3 MB of output buffer alone; a 0.5 MB pool forces repeated halving.
    result = run_kiln(*ARGS, "-o", out, env={**OPENCL, "GPU_MEMORY_LIMIT_GB": str(0.5 / 1024)})
    assert "retrying with batches of 32" in result.stderr and "retrying with batches of 16" in result.stderr
    assert_same_output(cpu_reference, out, ignore=("created_at", "run_report", "fallbacks"))
    report = json.loads(read_dataset(out)[1]["run_report"])
    assert 1 <= report["gpu_batch_size"] <= 16 and report["moved_to_cpu"] is False
    assert read_dataset(out)[1]["fallbacks"] >= 2


def test_without_fallback_the_job_stops_and_keeps_what_was_committed(tmp_path, cpu_reference):
    (tmp_path / "c.yaml").write_text("image:\n  rendering: {fallback_on_error: false}\n")
    out = tmp_path / "stop.h5"
    args = ARGS[:3] + [5000] + ARGS[4:]  # enough images for a committed part before the fault
    failed = run_kiln(*args, "-o", out, "--config", tmp_path / "c.yaml", check=False,
                      env={**OPENCL, "KILN_FAULT": "kernel:150"})
    assert failed.returncode == 5 and "injected" in failed.stderr.lower()
    parts = list((tmp_path / "stop.h5.parts").glob("part_*.h5"))
    assert parts, "the part committed before the failure must be kept"
    run_kiln(*args, "-o", out, "--resume", "--mode", "cpu", "-q")
    ref = tmp_path / "ref.h5"
    run_kiln(*args, "-o", ref, "--mode", "cpu", "-q")
    assert_same_output(ref, out, ignore=("created_at", "run_report", "fallbacks"))


def test_gpu_backend_cpu_forces_the_cpu(tmp_path):
    result = run_kiln(*ARGS, "-o", tmp_path / "c.h5", env={**OPENCL, "GPU_BACKEND": "cpu"})
    assert "Rendering mode: CPU" in result.stderr


def test_render_gpu_false_keeps_rendering_on_the_cpu(tmp_path):
    result = run_kiln(*ARGS, "-o", tmp_path / "c.h5", env={**OPENCL, "RENDER_GPU": "false"})
    assert "Rendering mode: CPU" in result.stderr

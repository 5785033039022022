"""Image ops placed on OpenCL (PoCL here) through the environment, and the reported CPU fallback when the GPU fails."""
from conftest import run_kiln
from test_quality_cli import noisy, read_lines, write_png

OPENCL = {"GPU_BACKEND": "opencl", "KILN_OPENCL_DEVICE_TYPE": "all"}
METRICS = ("blur", "brightness", "contrast", "sharpness", "score")


def quality_lines(tmp_path, name, env):
    out = tmp_path / f"{name}.jsonl"
    result = run_kiln("quality", tmp_path / "in", "--json", out, env=env)
    return read_lines(out), result


def test_opencl_quality_equals_cpu_and_a_failing_gpu_falls_back(tmp_path):
    (tmp_path / "in").mkdir()
    for seed in range(3):
        write_png(tmp_path / "in" / f"{seed}.png", noisy(seed))
    cpu, _ = quality_lines(tmp_path, "cpu", {"GPU_BACKEND": "cpu"})
    gpu, _ = quality_lines(tmp_path, "gpu", OPENCL)
    if gpu[0]["backend"] != "opencl":
        import pytest

        pytest.skip("no OpenCL device (PoCL) on this machine")
    assert [line["backend"] for line in cpu] == ["cpu"] * 3
    for a, b in zip(cpu, gpu):
        assert [a[k] for k in METRICS] == [b[k] for k in METRICS]  # exact: integer sums on both backends

    faulty, result = quality_lines(tmp_path, "faulty", {**OPENCL, "KILN_FAULT": "kernel:1"})
    assert [line["backend"] for line in faulty] == ["cpu"] * 3
    assert "fallback" in (result.stdout + result.stderr).lower()
    for a, b in zip(cpu, faulty):
        assert [a[k] for k in METRICS] == [b[k] for k in METRICS]

    off, _ = quality_lines(tmp_path, "off", {**OPENCL, "QUALITY_CHECKS_GPU": "false"})
    assert [line["backend"] for line in off] == ["cpu"] * 3

"""kiln bench ops (and bench/ops_peers when built): a quick run with tiny sizes and iterations, JSON schema."""
import json
import os
import subprocess

import pytest

from conftest import KILN, run_kiln

OPS_PEERS = os.environ.get("KILN_OPS_PEERS", os.path.join(os.path.dirname(KILN), "bench", "ops_peers"))
ALL_OPS = ["fused_preprocess", "nv12_preprocess", "quality", "resize_bilinear", "resize_area", "cvt_gray",
           "warp_affine", "unsharp", "mask", "matte", "probability", "blur", "normalize"]


def bench_ops(*args, env=None):
    return json.loads(run_kiln("bench", "ops", "--json", *args, env=env).stdout)


def check_row(row):
    assert {"op", "size", "width", "height", "batch_size", "backend"} <= set(row)
    if row.get("supported") is False:
        return
    assert isinstance(row["success_rate"], float) and 0.0 <= row["success_rate"] <= 1.0
    if "mean_ms" in row:
        assert row["successes"] >= 1 and row["iterations"] >= row["successes"]
        assert row["mean_ms"] > 0 and row["std_ms"] >= 0 and row["min_ms"] <= row["mean_ms"]
        assert row["img_per_s"] == pytest.approx(row["batch_size"] / (row["mean_ms"] / 1e3), rel=1e-6)
        assert row["success_rate"] == pytest.approx(row["successes"] / row["iterations"])
    else:
        assert row["error"]  # not measured: says why


def test_bench_ops_cpu_json_schema():
    out = bench_ops("--ops", "cvt_gray,quality", "--sizes", "small", "--batch-sizes", "1,2", "--iterations", "2",
                    "--mode", "cpu", "--threads", "1")
    assert {"kiln_version", "mode", "cpu_threads", "iterations", "sizes", "results", "analysis"} <= set(out)
    assert out["sizes"] == {"small": [300, 300]} and out["iterations"] == 2 and out["cpu_threads"] == 1
    rows = out["results"]
    assert [(r["op"], r["batch_size"]) for r in rows] == [("cvt_gray", 1), ("cvt_gray", 2), ("quality", 1),
                                                          ("quality", 2)]
    for row in rows:
        assert row["backend"] == "cpu" and row["size"] == "small" and (row["width"], row["height"]) == (300, 300)
        check_row(row)
    assert out["analysis"]["performance_gains"] == []  # no GPU backend in cpu mode


def test_bench_ops_every_backend_and_gains():
    # KILN_OPENCL_DEVICE_TYPE=all lets a CPU OpenCL device (PoCL) in, so the GPU path is exercised where one exists.
    out = bench_ops("--ops", "cvt_gray", "--sizes", "small", "--batch-sizes", "1", "--iterations", "1",
                    env={"KILN_OPENCL_DEVICE_TYPE": "all"})
    devices = json.loads(run_kiln("devices", "--json", env={"KILN_OPENCL_DEVICE_TYPE": "all"}).stdout)
    available = [b["name"] for b in devices["backends"] if b["available"]]
    assert [r["backend"] for r in out["results"]] == available  # every available backend, registry order, CPU last
    for row in out["results"]:
        check_row(row)
    cpu = out["results"][-1]
    for row in out["results"][:-1]:
        if "mean_ms" in row and "mean_ms" in cpu:
            assert row["improvement_pct"] == pytest.approx((cpu["mean_ms"] - row["mean_ms"]) / cpu["mean_ms"] * 100)
            assert row["speedup"] == pytest.approx(cpu["mean_ms"] / row["mean_ms"])
    gains = out["analysis"]["performance_gains"]
    assert len(gains) == sum(1 for r in out["results"][:-1] if "mean_ms" in r and "mean_ms" in cpu)
    for gain in gains:
        assert {"op", "size", "batch_size", "backend", "improvement_pct", "speedup"} == set(gain)


def test_bench_ops_text_table():
    text = run_kiln("bench", "ops", "--ops", "resize_area", "--sizes", "small", "--batch-sizes", "1", "--iterations", "1",
                    "--mode", "cpu").stdout
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["op", "size", "batch", "backend"]
    assert lines[1].startswith("resize_area") and " cpu " in lines[1]


@pytest.mark.parametrize("args, said", [(["--ops", "nope"], "unknown op 'nope'"),
                                        (["--sizes", "small,huge"], "huge not in {small,medium,large}"),
                                        (["--batch-sizes", "0"], "batch sizes must be >= 1"),
                                        (["--iterations", "0"], "--iterations must be >= 1"),
                                        (["--mode", "fast"], "unknown mode 'fast'")])
def test_bench_ops_rejects_bad_arguments(args, said):
    result = run_kiln("bench", "ops", "--json", *args, check=False)
    assert result.returncode != 0 and said in result.stderr


@pytest.mark.skipif(not os.path.exists(OPS_PEERS), reason="bench/ops_peers not built (KILN_BUILD_BENCH=ON)")
def test_ops_peers_json_schema():
    result = subprocess.run([OPS_PEERS, "--seconds", "0.01", "--ops", "cvt_gray,mask", "--json", "-"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert {"commit", "device", "threads", "mode", "results", "ratios"} <= set(out)
    assert out["threads"] == 1 and out["mode"] == "cpu"
    assert {r["op"] for r in out["results"]} == {"cvt_gray", "mask"}
    for row in out["results"]:
        assert {"op", "tool", "size", "threads"} <= set(row) and row["tool"] in ("kiln", "opencv", "naive")
        if "error" not in row:
            assert row["mean_ms"] > 0 and row["stddev_ms"] >= 0
            assert row["img_per_s"] == pytest.approx(1e3 / row["mean_ms"], rel=1e-6)
    for ratio in out["ratios"]:
        assert set(ratio) == {"op", "size", "kiln_over_opencv", "kiln_over_opencv_cpu"}
        assert ratio["kiln_over_opencv"] > 0 and ratio["kiln_over_opencv_cpu"] > 0


def test_bench_ops_on_device_batches():
    # --resident device: GPU backends get batches already in their memory. CUDA runs every op on them and its output
    # is fetched afterwards and compared with the CPU's (exact: the kernels are the CPU's arithmetic); a backend whose
    # device memory has no pointer (OpenCL, on PoCL here) says so; the CPU works on its own memory as always.
    env = {"KILN_OPENCL_DEVICE_TYPE": "all"}
    out = bench_ops("--resident", "device", "--sizes", "small", "--batch-sizes", "2", "--iterations", "1", env=env)
    assert out["resident"] == "device"
    rows = out["results"]
    assert {r["op"] for r in rows} == set(ALL_OPS)
    for row in rows:
        check_row(row)
        if row["backend"] == "cpu":
            assert row["resident"] == "host" and "mean_ms" in row
        elif row["backend"] == "opencl":
            assert row["resident"] == "device" and row["supported"] is False
            assert "device batches: " in row["error"] and "no device memory addressed by pointer" in row["error"]
        else:
            assert row["backend"] == "cuda" and row["resident"] == "device"
            assert row["max_abs_diff_vs_cpu"] == 0, row
    if not any(r["backend"] == "cuda" for r in rows):
        pytest.skip("no CUDA device: device batches are checked against the CPU on a GPU only")


def test_bench_ops_on_pinned_host_batches():
    # --resident pinned: GPU backends get host batches in their own host memory (CUDA pinned, OpenCL mapped: PoCL
    # runs every op here), outputs compared with the CPU's; CUDA rows also carry the measured copy rates and the
    # images/s the limiting direction allows (OpenCL has no device pointer to time a copy into: it says so).
    env = {"KILN_OPENCL_DEVICE_TYPE": "all"}
    out = bench_ops("--resident", "pinned", "--sizes", "small", "--batch-sizes", "2", "--iterations", "1", env=env)
    assert out["resident"] == "pinned"
    rows = out["results"]
    assert {r["op"] for r in rows} == set(ALL_OPS)
    gpu_rows = [r for r in rows if r["backend"] != "cpu"]
    assert gpu_rows, "no GPU backend row (PoCL should give OpenCL here)"
    for row in rows:
        check_row(row)
        if row["backend"] == "cpu":
            assert row["resident"] == "host"
            continue
        assert row["resident"] == "pinned" and "mean_ms" in row, row
        assert row["max_abs_diff_vs_cpu"] == 0, row
        assert row["two_in_flight_img_per_s"] > 0, row  # two threads, each with its own pinned batches
        if row["backend"] == "cuda":
            assert row["upload_gb_per_s"] > 1 and row["download_gb_per_s"] > 1 and row["copy_bound_img_per_s"] > 0, row
            assert row["copy_bound_direction"] in ("upload", "download"), row
            assert row["op"] != "quality" or row["copy_bound_direction"] == "upload", row  # its outputs: a few bytes
            best = max(row["img_per_s"], row["two_in_flight_img_per_s"])
            assert row["of_copy_bound"] == pytest.approx(best / row["copy_bound_img_per_s"])
        else:
            assert "copy_bound_img_per_s" not in row and "no device memory" in row["copy_bound_error"], row
    if not any(r["backend"] == "cuda" for r in rows):
        pytest.skip("no CUDA device: the upload bound of pinned batches is measured on a GPU only")


def test_bench_ops_resident_is_checked():
    result = run_kiln("bench", "ops", "--resident", "gpu", check=False)
    assert result.returncode != 0 and "--resident" in result.stderr

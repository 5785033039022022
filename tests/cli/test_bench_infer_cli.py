"""kiln bench infer and bench/infer_peers: quick runs, JSON schema, numbers that hang together."""
import json
import os
import subprocess

import pytest

from conftest import KILN, run_kiln

INFER_PEERS = os.path.join(os.path.dirname(KILN), "bench", "infer_peers")


def test_bench_infer_rows_per_provider_and_batch_size():
    rows = json.loads(run_kiln("bench", "infer", "--model", "fr-embed", "--batch-sizes", "1,2", "--seconds", "0.1",
                               "--threads", "1", "--json").stdout)
    cpu = [r for r in rows if r["mode"] == "cpu"]
    assert [r["batch_size"] for r in cpu] == [1, 2]
    for r in cpu:
        assert r["provider"] == "cpu" and r["runs"] >= 3
        assert 0 < r["latency_ms_p50"] <= r["latency_ms_p99"]
        assert r["images_per_s"] == pytest.approx(r["batch_size"] * 1e3 / r["latency_ms_mean"])
    gpu = [r for r in rows if r["mode"] == "gpu"]
    assert gpu and all(r.get("provider") in ("cuda", "tensorrt") or r.get("error") for r in gpu)


@pytest.mark.skipif(not os.path.exists(INFER_PEERS), reason="bench/infer_peers not built (needs OpenCV dnn)")
def test_infer_peers_reports_every_runtime_and_the_ratios():
    out = subprocess.run([INFER_PEERS, "--models", "fr-embed", "--batch-sizes", "2", "--images", "4", "--threads", "1"],
                         capture_output=True, text=True, check=True, timeout=300)
    report = json.loads(out.stdout)
    row = report["results"][0]
    for key in ("ort_loop_images_per_s", "opencv_dnn_loop_images_per_s", "kiln_infer_b2_images_per_s",
                "model_only_b2_images_per_s"):
        assert row[key] > 0, key
    assert row["kiln_vs_ort_loop_b2"] == pytest.approx(row["kiln_infer_b2_images_per_s"] / row["ort_loop_images_per_s"])

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
    out = subprocess.run([INFER_PEERS, "--models", "fr-embed", "--batch-sizes", "2", "--images", "4", "--threads", "1",
                          "--repeats", "2"], capture_output=True, text=True, check=True, timeout=300)
    report = json.loads(out.stdout)
    assert report["rounds"] == 2
    row = report["results"][0]
    for key in ("ort_loop_images_per_s", "opencv_dnn_loop_images_per_s", "kiln_infer_b2_images_per_s",
                "kiln_infer_decoded_b2_images_per_s", "model_only_b2_images_per_s", "decode_only_images_per_s"):
        assert row[key] > 0, key
    # Each ratio is taken within a round; the report gives their median (of two: the mean) and each round's value.
    loops, kiln, alone = (row[k + "_runs"] for k in ("ort_loop_images_per_s", "kiln_infer_b2_images_per_s",
                                                       "model_only_b2_images_per_s"))
    assert len(loops) == len(kiln) == len(alone) == 2
    assert row["kiln_vs_ort_loop_b2"] == pytest.approx((kiln[0] / loops[0] + kiln[1] / loops[1]) / 2)
    assert row["kiln_vs_model_only_b2_runs"] == pytest.approx([kiln[0] / alone[0], kiln[1] / alone[1]])
    decoded = row["kiln_infer_decoded_b2_images_per_s_runs"]
    assert row["kiln_decoded_vs_model_only_b2_runs"] == pytest.approx([decoded[0] / alone[0], decoded[1] / alone[1]])
    assert row["kiln_infer_b2_images_per_s"] == pytest.approx(sum(kiln) / 2)
    # the files decoded alone on the same threads (issue 37's bound on kiln from files), faster than kiln with a model
    assert row["decode_only_images_per_s"] == pytest.approx(sum(row["decode_only_images_per_s_runs"]) / 2)
    assert row["decode_only_images_per_s"] > row["kiln_infer_b2_images_per_s"]


@pytest.mark.skipif(not os.path.exists(INFER_PEERS), reason="bench/infer_peers not built (needs OpenCV dnn)")
def test_infer_peers_without_peers_measures_kiln_and_the_model_alone():
    out = subprocess.run([INFER_PEERS, "--models", "fr-embed", "--batch-sizes", "2", "--images", "4", "--threads", "1",
                          "--repeats", "1", "--no-peers", "--mode", "cpu"], capture_output=True, text=True, check=True,
                         timeout=300)
    row = json.loads(out.stdout)["results"][0]
    assert "ort_loop_images_per_s" not in row and row["mode"] == "cpu"
    assert row["kiln_infer_decoded_b2_images_per_s"] > 0 and row["model_only_b2_images_per_s"] > 0


@pytest.mark.skipif(not os.path.exists(INFER_PEERS), reason="bench/infer_peers not built (needs OpenCV dnn)")
def test_infer_peers_fails_loudly_when_a_measurement_cannot_run():
    out = subprocess.run([INFER_PEERS, "--models", "fr-embed", "--batch-sizes", "2", "--images", "4", "--threads", "1",
                          "--repeats", "1", "--no-peers", "--mode", "gpu"], capture_output=True, text=True, timeout=300)
    report = json.loads(out.stdout)
    row = report["results"][0]
    if out.returncode == 0:  # a GPU with ONNX Runtime's CUDA provider: real figures
        assert "failures" not in report and row["model_only_b2_images_per_s"] > 0
    else:  # none: exit status 1, and the JSON says why instead of passing zeros off as figures
        assert out.returncode == 1
        assert report["failures"] and all("mode gpu" in f for f in report["failures"]), report["failures"]
        assert "mode gpu" in out.stderr

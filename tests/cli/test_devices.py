"""kiln devices --json: schema and content."""
import json

from conftest import run_kiln

DEVICE_FIELDS = {"name": str, "vendor": str, "version": str, "total_memory": int, "free_memory": int,
                 "compute_units": int, "pool_bytes": int}


def test_devices_json_schema():
    out = json.loads(run_kiln("devices", "--json").stdout)
    assert set(out) == {"backends", "onnxruntime"}
    names = [b["name"] for b in out["backends"]]
    assert names == ["cuda", "opencl", "cpu"]  # priority order, CPU last
    for backend in out["backends"]:
        assert set(backend) == {"name", "available", "reason", "priority", "devices"}
        assert isinstance(backend["available"], bool) and isinstance(backend["reason"], str)
        if not backend["available"]:
            assert backend["reason"] and backend["devices"] == []
        for device in backend["devices"]:
            assert set(device) == set(DEVICE_FIELDS)
            for key, kind in DEVICE_FIELDS.items():
                assert isinstance(device[key], kind), key
            assert device["total_memory"] >= device["free_memory"] >= 0
    cpu = out["backends"][-1]
    assert cpu["available"] and len(cpu["devices"]) == 1 and cpu["devices"][0]["compute_units"] >= 1


def test_devices_text_says_why_a_backend_is_unavailable():
    text = run_kiln("devices").stdout
    assert text.splitlines()[0].startswith("cuda")
    assert "cpu" in text and ("unavailable" in text or "available" in text)


def test_opencl_cpu_device_is_opt_in():
    default = json.loads(run_kiln("devices", "--json").stdout)["backends"][1]
    opted = json.loads(run_kiln("devices", "--json", env={"KILN_OPENCL_DEVICE_TYPE": "all"}).stdout)["backends"][1]
    if opted["available"] and all("cpu" in d["name"].lower() or "pthread" in d["name"].lower() for d in opted["devices"]):
        assert not default["available"] and "KILN_OPENCL_DEVICE_TYPE" in default["reason"]


def test_devices_lists_onnxruntime_providers_with_reasons():
    ort = json.loads(run_kiln("devices", "--json").stdout)["onnxruntime"]
    assert ort["version"].startswith("1.")
    assert [p["name"] for p in ort["providers"]] == ["cpu", "cuda", "tensorrt"]
    assert ort["providers"][0]["available"]
    for provider in ort["providers"]:
        assert provider["reason"]
    assert "onnxruntime " + ort["version"] in run_kiln("devices").stdout

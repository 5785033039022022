"""The Kubernetes manifests of docs/scale/ (no cluster here to run them): an Indexed Job whose kiln command gives
--shard-count equal to its completions, so each pod's JOB_COMPLETION_INDEX is its piece, and a merge Job over the
same volume; the render command runs here as pod 5 would, and names its piece."""
import os
import shlex
from pathlib import Path

import pytest

from conftest import KILN, run_kiln

yaml = pytest.importorskip("yaml", reason="python3-yaml is not installed")
SCRIPTS = Path(os.environ.get("KILN_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "docs" / "scale"


def load(name):
    return yaml.safe_load((SCRIPTS / name).read_text())


def test_indexed_job_shard_count_matches_completions(tmp_path):
    job = load("render_indexed_job.yaml")
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    command = spec["template"]["spec"]["containers"][0]["command"]
    assert command[:2] == ["kiln", "render"] and "--resume" in command
    count = int(command[command.index("--shard-count") + 1])
    assert count == spec["completions"]
    # What pod 5 runs, with a small demo series in place of /data/prices.csv.
    args = [a.replace("/data/out", str(tmp_path / "out")) for a in command[2:] if a != "/data/prices.csv"]
    result = run_kiln("render", "--demo", "--demo-points", 400, "--width", 32, "--height", 32, *args,
                      env={"JOB_COMPLETION_INDEX": "5"})
    assert f"piece 5 of {count} (JOB_COMPLETION_INDEX=5 of --shard-count {count})" in result.stdout
    assert (tmp_path / "out" / f"dataset.shard-00005-of-{count:05d}.h5").exists()


def test_merge_job_reads_the_render_jobs_output():
    render = load("render_indexed_job.yaml")["spec"]["template"]["spec"]
    merge = load("merge_job.yaml")["spec"]["template"]["spec"]
    command = merge["containers"][0]["command"]
    assert command[:2] == ["kiln", "merge"]
    out = next(a for a in render["containers"][0]["command"] if a.endswith("dataset.h5"))
    assert command[2] == os.path.dirname(out) and command[command.index("-o") + 1] == out
    assert render["volumes"] == merge["volumes"]


def test_slurm_scripts_pass_the_shell_syntax_check():
    for name in ("render_array.sbatch", "merge.sbatch"):
        text = (SCRIPTS / name).read_text()
        assert "#SBATCH --array" in text or name == "merge.sbatch"
        assert os.system(f"bash -n {shlex.quote(str(SCRIPTS / name))}") == 0

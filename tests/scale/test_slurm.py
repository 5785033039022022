"""A real single-node Slurm (slurmctld + slurmd + munge, started by the test; it skips with the reason where Slurm
cannot start) runs docs/scale/render_array.sbatch as a 4-task job array (each `kiln render` finds its piece in
SLURM_ARRAY_TASK_ID) and docs/scale/merge.sbatch as a job depending on it: the merged dataset equals a
single-machine run."""
import os
from pathlib import Path

from conftest import KILN, assert_same_data, read_dataset, run_kiln
from slurm_cluster import start_or_skip

SOURCE_DIR = Path(os.environ.get("KILN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SCRIPTS = SOURCE_DIR / "docs" / "scale"
RENDER_ARGS = "--demo-points 4100 --width 128 --height 80 --line-width 2 -q"


def test_documented_array_job_and_dependent_merge(tmp_path, monkeypatch):
    run_kiln("render", "--demo", *RENDER_ARGS.split(), "-o", tmp_path / "whole.h5")
    out = tmp_path / "out"
    # The scripts' settings come from the environment sbatch passes on.
    monkeypatch.setenv("KILN", KILN)
    monkeypatch.setenv("OUT", str(out))
    monkeypatch.setenv("INPUT", "--demo")
    monkeypatch.setenv("RENDER_ARGS", RENDER_ARGS)
    monkeypatch.setenv("PIECES", "4")
    with start_or_skip(tmp_path / "slurm") as cluster:
        array = cluster.sbatch(str(SCRIPTS / "render_array.sbatch"), "--array=0-3", "--cpus-per-task=1", "--mem=0",
                               f"--output={tmp_path}/render-%a.log")
        merged = cluster.sbatch(str(SCRIPTS / "merge.sbatch"), f"--dependency=afterok:{array}",
                                f"--output={tmp_path}/merge.log")
        assert cluster.wait(array, timeout=240) == {i: "COMPLETED" for i in range(4)}
        assert cluster.wait(merged, timeout=120) == {None: "COMPLETED"}, (tmp_path / "merge.log").read_text()
    for i in range(4):
        log = (tmp_path / f"render-{i}.log").read_text()
        assert f"piece {i} of 4 (SLURM_ARRAY_TASK_ID={i} of --shard-count 4)" in log, log
    assert "Merged 4 pieces" in (tmp_path / "merge.log").read_text()
    assert_same_data(tmp_path / "whole.h5", out / "dataset.h5")
    assert read_dataset(out / "dataset.h5")[1]["complete"] == 1


def test_rerunning_one_task_redoes_that_piece_only(tmp_path, monkeypatch):
    """The documented rerun of one failed piece: `sbatch --array=2` is a one-task array whose id is the piece."""
    out = tmp_path / "out"
    for name, value in {"KILN": KILN, "OUT": str(out), "INPUT": "--demo", "RENDER_ARGS": RENDER_ARGS,
                        "PIECES": "4"}.items():
        monkeypatch.setenv(name, value)
    with start_or_skip(tmp_path / "slurm") as cluster:
        job = cluster.sbatch(str(SCRIPTS / "render_array.sbatch"), "--array=2", "--cpus-per-task=1", "--mem=0",
                             f"--output={tmp_path}/render-%a.log")
        assert cluster.wait(job, timeout=120) == {2: "COMPLETED"}
    assert [p.name for p in out.glob("*.h5")] == ["dataset.shard-00002-of-00004.h5"]
    assert "SLURM_ARRAY_TASK_ID=2 of --shard-count 4" in (tmp_path / "render-2.log").read_text()

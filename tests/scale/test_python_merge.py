"""The same pieces and merge from Python: kiln.render_job(shard=...) and kiln.merge, whose error lists every
problem."""
import pytest

from conftest import assert_same_data, read_dataset

import kiln  # noqa: E402  (conftest put the build's module first on the path)

OPTIONS = dict(demo=True, demo_points=700, width=48, height=32)


def test_render_job_pieces_and_merge(tmp_path):
    kiln.render_job(None, output=str(tmp_path / "whole.h5"), **OPTIONS)
    summaries = [kiln.render_job(None, output=str(tmp_path / "p" / "d.h5"), shard=f"{i}/3", **OPTIONS)
                 for i in range(3)]
    assert [s["shard"] for s in summaries] == [f"piece {i} of 3 (--shard {i}/3)" for i in range(3)]
    assert sum(s["images"] for s in summaries) == read_dataset(tmp_path / "whole.h5")[1]["total"]
    result = kiln.merge([str(tmp_path / "p")], output=str(tmp_path / "merged.h5"), copy=True)
    assert (result["kind"], result["pieces"], result["output"]) == ("render", 3, str(tmp_path / "merged.h5"))
    assert_same_data(tmp_path / "whole.h5", tmp_path / "merged.h5")


def test_merge_error_lists_every_problem(tmp_path):
    for i in (0, 2):
        kiln.render_job(None, output=str(tmp_path / "p" / "d.h5"), shard=f"{i}/4", **OPTIONS)
    with pytest.raises(kiln.KilnValueError) as error:
        kiln.merge([str(tmp_path / "p")], output=str(tmp_path / "merged.h5"))
    message = str(error.value)
    assert "2 problems, nothing written" in message
    assert "piece 1 of 4" in message and "piece 3 of 4" in message
    assert not (tmp_path / "merged.h5").exists()
    with pytest.raises(TypeError):
        kiln.merge([str(tmp_path / "p")], output=str(tmp_path / "m.h5"), no_such_setting=1)

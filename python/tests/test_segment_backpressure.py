"""kiln.SegmentPipeline's bound on frames in flight (queue_size, from a keyword or the predecessor's config) and what a
producer that outruns it is told: submit_frame(timeout=) raises TimeoutError, the frame not taken, and a producer
that waits long while results wait to be taken gets one RuntimeWarning naming get_result. Every test runs under a
guard: a pipeline that waits forever again fails the test instead of hanging it."""
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import pytest

import kiln

pytest.importorskip("kiln.segment", reason="kiln built without ONNX Runtime or FFmpeg")

from test_segment import ASTRONAUT, frames_from  # noqa: E402  (after the skip: it needs kiln.segment too)


def guarded(body, seconds=120):
    """body() on a thread; its result, or its exception raised here; a failure when it runs past `seconds`."""
    outcome = {}

    def run():
        try:
            outcome["value"] = body()
        except BaseException as e:  # noqa: BLE001  (handed to the test's thread)
            outcome["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=seconds)
    if thread.is_alive():
        pytest.fail(f"still waiting after {seconds} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def test_submit_all_then_read_raises_timeout_error_within_its_timeout():
    # The first script a new user writes: every frame submitted, then the masks read. Without a timeout it waits
    # forever once queue_size frames are in flight; with one, TimeoutError comes within it and the frame was not
    # taken: after reading the results, submitting it again gets every frame back, in order.
    script = textwrap.dedent(f"""
        import json, time, warnings
        import kiln
        from test_segment import ASTRONAUT, frames_from
        frames = frames_from(ASTRONAUT, 8) * 8
        p = kiln.SegmentPipeline(device="cpu", threads=2).start()
        limit = p.get_stats()["queue_size"]
        results, timeouts = [], []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i, f in enumerate(frames):
                began = time.monotonic()
                try:
                    p.submit_frame(f, i, timeout=1.5)
                except TimeoutError as e:
                    timeouts.append((i, time.monotonic() - began, str(e)))
                    while len(results) < i:
                        results.append(p.get_result(timeout=60).frame_id)
                    p.submit_frame(f, i, timeout=60)
            p.stop(cancel=False)
            while (r := p.get_result()) is not None:
                results.append(r.frame_id)
        print(json.dumps([limit, len(caught), timeouts, results == list(range(len(frames)))]))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr
    limit, warned, timeouts, in_order = json.loads(done.stdout.splitlines()[-1])
    assert limit == 21  # 3 x (3 x 1 + 4): the CPU provider's batches of 1
    assert in_order, done.stdout
    assert [i for i, _, _ in timeouts] == list(range(limit, 64, limit)), timeouts
    assert all(1.5 <= waited < 60 for _, waited, _ in timeouts), timeouts
    assert "queue_size 21" in timeouts[0][2] and "get_result()" in timeouts[0][2], timeouts[0][2]
    assert warned == 0  # nobody waited 5 s


def wait_until_finished(pipeline, frames):
    """Until `frames` results wait to be taken."""
    deadline = time.monotonic() + 60
    while pipeline.get_stats()["frames"] < frames:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_producer_waiting_while_results_wait_is_warned_once():
    frames = frames_from(ASTRONAUT, 8)

    def body():
        pipeline = kiln.SegmentPipeline(device="cpu", threads=2, queue_size=4).start()
        pipeline._pipeline._warn_after = 0.3  # 5 s in use
        for i in range(4):
            pipeline.submit_frame(frames[i], i, timeout=0)
        wait_until_finished(pipeline, 4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):  # two long waits, one warning
                with pytest.raises(TimeoutError, match="no room within 1 s"):
                    pipeline.submit_frame(frames[4], 4, timeout=1)
        first = pipeline.get_result(timeout=60)
        pipeline.submit_frame(frames[4], 4, timeout=0)  # room again
        pipeline.stop(cancel=False)
        return caught, first

    caught, first = guarded(body)
    assert first.frame_id == 0
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert caught[0].category is RuntimeWarning and caught[0].filename == __file__
    message = str(caught[0].message)
    assert "get_result()" in message and "queue_size 4" in message and "4 results waiting" in message, message


def test_no_warning_while_nothing_waits_to_be_taken():
    # Latency lets untaken results go: its producer never waits for get_result, so it is never warned.
    frames = frames_from(ASTRONAUT, 8)

    def body():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with kiln.SegmentPipeline(mode="latency", device="cpu", threads=2, stale_ms=60_000) as pipeline:
                pipeline._pipeline._warn_after = 0.01
                for frame in frames:
                    pipeline.submit_frame(frame, timeout=60)
        return caught, pipeline.get_stats()

    caught, stats = guarded(body)
    assert caught == [] and stats["queue_size"] == 32 and stats["frames"] == len(frames)


def frames_accepted(pipeline, frames):
    """How many frames go in, one thread submitting and nobody reading, before submit_frame times out."""
    accepted = 0
    for i, frame in enumerate(frames):
        try:
            pipeline.submit_frame(frame, i, timeout=0.5)
        except TimeoutError:
            return accepted
        accepted += 1
    return accepted


@pytest.mark.parametrize("pipeline_section,keywords,limit", [
    ("  stages:\n    preprocess: {queue_size: 50}\n  backpressure: {max_queue_depth: 5}\n", {}, 5),
    ("  stages:\n    preprocess: {queue_size: 6}\n    inference: {queue_size: 3}\n", {}, 6),
    ("  backpressure: {max_queue_depth: 5}\n", {"queue_size": 3}, 3),  # a keyword wins over the file
], ids=["max_queue_depth", "largest_stage_queue", "keyword"])
def test_queue_size_from_the_config_bounds_the_frames_in_flight(tmp_path, pipeline_section, keywords, limit):
    config = tmp_path / "gpu_config.yaml"
    config.write_text("pipeline:\n" + pipeline_section)
    frames = frames_from(ASTRONAUT, 4) * 3

    def body():
        pipeline = kiln.SegmentPipeline(config=config, device="cpu", threads=2, **keywords).start()
        accepted = frames_accepted(pipeline, frames)
        stats = pipeline.get_stats()
        pipeline.stop(cancel=False)
        return pipeline.config_notes, accepted, stats, len([r for r in iter(pipeline.get_result, None)])

    notes, accepted, stats, results = guarded(body)
    assert accepted == limit and stats["queue_size"] == limit and results == limit
    in_flight = next(p for p in stats["pools"] if p["name"] == "frames in flight: pipeline")
    assert in_flight["peak"] <= in_flight["limit"] <= limit
    assert any("queue_size" in note for note in notes), notes

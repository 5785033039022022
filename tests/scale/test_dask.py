"""kiln.distributed on a real Dask cluster (LocalCluster, two worker processes): the merged dataset equals a
single-machine run, also when a worker process is killed with SIGKILL in the middle of a piece."""
import os
import signal
import threading
import time

import pytest

from conftest import assert_same_data, face_photos, np, read_dataset, run_kiln

distributed = pytest.importorskip("distributed", reason="python3-distributed (Dask) is not installed")
import kiln  # noqa: E402  (conftest put the build's module first on the path)

OPTIONS = dict(demo_points=36100, width=128, height=80, line_width=2, label_horizon=3, threads=1)


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The single-machine run's datasets, read once: reading its 36,000 images back takes seconds."""
    out = tmp_path_factory.mktemp("whole") / "whole.h5"
    kiln.render_job(None, output=str(out), demo=True, **OPTIONS)
    return read_dataset(out)[0]


def assert_equals_whole(whole, path):
    """The datasets of path, each equal to the single-machine run's; returns them with the attributes."""
    data, attrs = read_dataset(path)
    assert sorted(data) == sorted(whole)
    for name in whole:
        np.testing.assert_array_equal(data[name], whole[name], err_msg=name)
    return data, attrs


@pytest.fixture(scope="module")
def client():
    """One cluster for the module (starting one takes about 5 s); the test that kills one of its workers comes last."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        yield c


def test_dask_render_equals_a_single_machine_run(tmp_path, whole, client):
    path = kiln.distributed.render(None, tmp_path / "out", shards=4, client=client, demo=True, **OPTIONS)
    assert path == str(tmp_path / "out" / "dataset.h5")
    assert_equals_whole(whole, path)
    assert len(list((tmp_path / "out").glob("dataset.shard-*-of-00004.h5"))) == 4


def test_array_source_and_copy_merge(tmp_path, client):
    import numpy as np
    rng = np.random.default_rng(7)
    prices = np.cumsum(rng.normal(size=3000)).astype(np.float32) + 100
    local = tmp_path / "local.h5"
    kiln.render_job(prices, output=str(local), seq_len=50, width=64, height=48)
    path = kiln.distributed.render(prices, tmp_path / "out", shards=3, client=client, copy=True, seq_len=50,
                                   width=64, height=48)
    assert_same_data(local, path)
    assert not read_dataset(path)[0] == {}


def test_bad_arguments(tmp_path, client):
    with pytest.raises(TypeError):
        kiln.distributed.render(None, tmp_path, shards=2, client=client, demo=True, output="x.h5")
    with pytest.raises(ValueError):
        kiln.distributed.render(None, tmp_path, shards=2, client=client)
    with pytest.raises(kiln.KilnValueError):  # a bad setting fails the piece on the worker, and the caller sees it
        kiln.distributed.render(None, tmp_path, shards=2, client=client, demo=True, seq_len=1, retries=0)


@pytest.mark.skipif(kiln.faces_job is None, reason="this kiln is built without kiln faces")
def test_dask_faces_equal_a_single_run_with_dedup_across_pieces(tmp_path, client):
    photos = face_photos(tmp_path)
    run_kiln("faces", photos, "-o", tmp_path / "single.h5", "--dedup", 0.7, "-q")
    path = kiln.distributed.faces([photos], tmp_path / "out", shards=3, client=client, dedup=0.7, threads=1)
    single, merged = read_dataset(tmp_path / "single.h5"), read_dataset(path)
    assert merged[0]["embeddings"].shape == single[0]["embeddings"].shape == (2, 512)
    np.testing.assert_allclose(merged[0]["embeddings"], single[0]["embeddings"], atol=2e-5)
    np.testing.assert_array_equal(merged[0]["paths"], single[0]["paths"])
    assert merged[1]["duplicates"] == single[1]["duplicates"] == 2


def test_worker_killed_mid_piece_loses_and_duplicates_nothing(tmp_path, whole, client):
    out = tmp_path / "out"
    killed = {}

    def kill_a_busy_worker():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            # A piece is under way once its parts folder exists; kill the worker process running it.
            if list(out.glob("*.parts")):
                busy = [address for address, keys in client.processing().items() if keys]
                if busy:
                    pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                    os.kill(pid, signal.SIGKILL)
                    killed["pid"] = pid
                    killed["parts"] = sorted(p.name for p in out.glob("*.parts"))
                    return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    path = kiln.distributed.render(None, out, shards=6, client=client, demo=True, **OPTIONS)
    killer.join()
    assert killed, "no worker was killed: the pieces finished before the test could kill one"
    data, attrs = assert_equals_whole(whole, path)
    assert attrs["count"] == attrs["total"] == len(data["images"])
    assert len(set(data["index"].tolist())) == len(data["index"])  # nothing twice
    assert not list(out.glob("*.parts")) and not list(out.glob("*.tmp"))
    assert killed["pid"] not in client.run(os.getpid).values()  # the nanny started a new worker process

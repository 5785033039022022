"""One kiln job as independent pieces on a Dask cluster: one task per piece (``shard="I/N"``), each resumable and
idempotent, so a piece whose worker died is simply run again; the pieces are merged at the end (`kiln merge`).

    from dask.distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=4, threads_per_worker=1))
    path = kiln.distributed.render("prices.csv", "out/", shards=16, client=client, seq_len=60, width=224, height=224)

The workers must see ``out_dir`` (a local folder for a LocalCluster, a shared file system for a real cluster).
"""
import os

from . import faces_job as _faces_job
from . import merge as _merge
from . import render_job as _render_job

__all__ = ["faces", "render"]


def _render_piece(source, piece_output, shard, options):
    """Runs on a worker: one piece, continuing whatever an earlier attempt left."""
    return _render_job(source, output=piece_output, shard=shard, resume=True, **options)


def _faces_piece(inputs, piece_output, shard, options):
    return _faces_job(inputs, output=piece_output, shard=shard, resume=True, **options)


def _client_or_default(client):
    if client is not None:
        return client
    from dask.distributed import get_client
    return get_client()  # the client the caller made current; raises ValueError when there is none


def _absolute(path):
    """A path as every worker must see it: absolute, keeping kiln's forms file.h5:/dataset and @list.txt."""
    text = os.fspath(path)
    if text.startswith("@"):
        return "@" + os.path.abspath(text[1:])
    file, separator, dataset = text.partition(":/")
    return os.path.abspath(file) + (":/" + dataset if separator else "")


def _piece_paths(piece_output, shards):
    """The files the pieces write (kiln's {stem}.shard-I-of-N{ext}): the merge takes exactly these, not whatever else
    the folder holds."""
    stem, extension = os.path.splitext(piece_output)
    return [f"{stem}.shard-{i:05d}-of-{shards:05d}{extension}" for i in range(shards)]


def _run_pieces(client, function, source, piece_output, shards, options, retries, progress):
    from dask.distributed import progress as dask_progress
    from dask.distributed import wait

    if source is None or isinstance(source, (str, os.PathLike)):
        shipped = None if source is None else _absolute(source)
    elif isinstance(source, list):  # file names: small, sent with each task
        shipped = [_absolute(p) for p in source]
    else:  # an array: sent to the workers once, not with every task
        shipped = client.scatter(source, broadcast=True)
    futures = [client.submit(function, shipped, piece_output, f"{i}/{shards}", options, retries=retries, pure=False)
               for i in range(shards)]
    if progress:
        dask_progress(futures)
    wait(futures)
    client.gather(futures)  # raises the first piece's error, if any piece failed for good
    return _piece_paths(piece_output, shards)


def render(source, out_dir, shards, client=None, demo=False, name="dataset.h5", copy=False, retries=3,
           progress=False, **render_options):
    """Render a chart dataset as `shards` pieces on a Dask cluster and merge them.

    source: a series file path (CSV, NPY, file.h5:/dataset), a numpy array (N,) or (N, 4), or None with demo=True.
    out_dir: where the pieces ({name stem}.shard-I-of-N.h5) and the merged dataset `name` go; every worker must see
    it. render_options: any keyword of kiln.render_job (seq_len=, width=, style=, ...; not output/shard/resume).
    copy: merge into one file (compressed chunks copied) instead of a virtual dataset over the pieces.
    retries: how often Dask reruns a piece whose task failed; a piece whose worker died is rerun by Dask too
    (distributed.scheduler.allowed-failures), and continues from its committed parts.
    Returns the merged dataset's path.
    """
    for reserved in ("output", "shard", "resume", "overwrite"):
        if reserved in render_options:
            raise TypeError(f"kiln.distributed.render sets {reserved}= itself")
    if shards < 1:
        raise ValueError("shards must be at least 1")
    if source is None and not demo:
        raise ValueError("no source given (a path or an array, or demo=True)")
    if demo:
        render_options["demo"] = True
    client = _client_or_default(client)
    os.makedirs(out_dir, exist_ok=True)
    piece_output = os.path.join(os.path.abspath(out_dir), name)
    pieces = _run_pieces(client, _render_piece, source, piece_output, shards, render_options, retries, progress)
    summary = _merge(pieces, output=piece_output, copy=copy, overwrite=True)
    return summary["output"]


def faces(inputs, out_dir, shards, client=None, name="faces.h5", dedup=None, retries=3, progress=False,
          **faces_options):
    """Analyze face photos as `shards` pieces on a Dask cluster (`kiln faces --shard`) and merge them.

    inputs: image files, folders and @lists, as `kiln faces` takes them (split by position in the sorted list).
    dedup: the cosine threshold applied across all pieces at the merge, as a single run would (None: no dedup).
    faces_options: any keyword of `kiln faces` (detector=, min_face_size=, batch_size=, ...).
    Returns the merged output's path.
    """
    if _faces_job is None:
        raise NotImplementedError("this kiln is built without kiln faces (ONNX Runtime and faiss)")
    for reserved in ("output", "shard", "resume", "jsonl", "crops"):
        if reserved in faces_options:
            raise TypeError(f"kiln.distributed.faces does not take {reserved}=")
    if shards < 1:
        raise ValueError("shards must be at least 1")
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    inputs = [os.fspath(p) for p in inputs]  # folders, files and @lists, as `kiln faces` takes them
    client = _client_or_default(client)
    os.makedirs(out_dir, exist_ok=True)
    piece_output = os.path.join(os.path.abspath(out_dir), name)
    if dedup is not None:
        faces_options["dedup"] = dedup
    pieces = _run_pieces(client, _faces_piece, inputs, piece_output, shards, faces_options, retries, progress)
    summary = _merge(pieces, output=piece_output, overwrite=True)
    return summary["output"]


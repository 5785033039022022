"""Segmentation: person masks for video frames, with the predecessor's pipeline shape.

    p = kiln.SegmentPipeline(mode="latency")      # or "throughput"; model=None is the packaged selfie model
    p.start()
    p.submit_frame(frame, frame_id)                # uint8 numpy (H, W, 3) RGB; blocks while the pipeline is full
                                                   # (throughput: results not taken count; latency keeps the newest 16)
    p.submit_frame(frame, frame_id, timeout=5)     # or: TimeoutError when there is no room within 5 s
    p.submit_frame(torch_cuda_frame, frame_id)     # or any DLPack tensor of one: a CUDA frame stays on the device
                                                   # (copied there, preprocessed, inferred, matted: the mask comes down)
    result = p.get_result()                        # SegmentResult: frame_id, mask (H, W) uint8 0/255, metadata
    result.metadata["total_latency"]               # ms from submit_frame to the mask
    p.get_stats()                                  # fps, bottleneck_stage, per-stage busy shares, latency p50/p95/p99
    p.stop()                                       # frames not yet inferred are cancelled (metadata["cancelled"])
    p.stop(cancel=False)                           # or: every submitted frame is inferred first

    masks = kiln.segment(frames)                   # a batch: (N, H, W) uint8 masks, in order

It runs the engine of `kiln segment` (the shared batcher, fused preprocess, ONNX Runtime, temporal smoothing) and
takes its settings by the same names: model, threshold, temporal, feather, letterbox, activation, person_class,
max_delay_us, stale_ms, queue_size, provider, threads, batch_size, and device placement as `device` (auto|gpu|cpu).

queue_size (or the config's pipeline.backpressure.max_queue_depth, else its largest pipeline.stages.*.queue_size)
bounds the frames in flight: in throughput, submitted and not yet taken by get_result (at most 3 x batch_size + 4 of
them not yet inferred); in latency, not yet inferred. 0, the default: throughput 3 x (3 x batch_size + 4) (21 on the
CPU, 84 at batches of 8), latency 32. get_stats()["queue_size"] says which. A producer that has waited 5 s for room
while results wait to be taken gets a RuntimeWarning naming get_result (once per pipeline).
"""
import dataclasses

import numpy as np

from . import _kiln

if not hasattr(_kiln, "SegmentPipeline"):
    raise ImportError("kiln.segment: this kiln is built without ONNX Runtime or FFmpeg (see make deps)")


@dataclasses.dataclass
class SegmentResult:
    frame_id: int
    mask: np.ndarray   # (H, W) uint8, 0 or 255
    metadata: dict     # total_latency (ms), dropped, foreground (share of person pixels)


def _settings(model, mode, device, settings):
    if model is not None:
        settings["model"] = str(model)
    if mode is not None:
        if mode not in ("latency", "throughput"):
            raise ValueError(f"mode must be 'latency' or 'throughput', not {mode!r} (placement is device=)")
        settings["pipeline"] = mode
    if device is not None:
        settings["mode"] = device
    return settings


class SegmentPipeline:
    """Frames in, masks out, asynchronously; see the module's documentation."""

    def __init__(self, model=None, mode="throughput", config=None, device=None, **settings):
        self._pipeline = _kiln.SegmentPipeline(None if config is None else str(config),
                                               **_settings(model, mode, device, settings))

    @property
    def config_notes(self):
        """What of the config file was applied, and what kiln does its own way (one line each)."""
        return list(self._pipeline.config_notes)

    def start(self):
        self._pipeline.start()
        return self

    def submit_frame(self, frame, frame_id=None, timeout=None):
        """Hands a frame in; blocks while queue_size frames are in flight. timeout (seconds; None: wait as long as it
        takes): TimeoutError when no room came within it, the frame not taken, as queue.Queue.put does."""
        self._pipeline.submit_frame(frame, frame_id, timeout)

    def get_result(self, timeout=None):
        """The next result in submission order, or None when none came within `timeout` seconds or all were taken
        after stop()."""
        got = self._pipeline.get_result(timeout)
        return None if got is None else SegmentResult(*got)

    def get_stats(self):
        return self._pipeline.get_stats()

    def stop(self, cancel=True):
        """No more frames. cancel: the frames not yet inferred are not (their results come back dropped and
        cancelled); cancel=False infers every submitted frame first. Results stay to be taken either way."""
        self._pipeline.stop(cancel)

    def __enter__(self):
        return self.start()

    def __exit__(self, kind, value, traceback):
        self.stop(cancel=kind is not None)  # a normal exit infers what was submitted; an exception cancels it
        return False


def segment(frames, model=None, device=None, **settings):
    """Person masks for a batch of frames ((N, H, W, 3) uint8 array or a list of (H, W, 3) arrays), smoothed in time
    as one clip: (N, H, W) uint8 0/255 for same-sized frames, else a list."""
    pipeline = SegmentPipeline(model=model, mode="throughput", device=device, **settings).start()
    results = []
    try:
        for i, frame in enumerate(frames):
            pipeline.submit_frame(frame, i)
            while (got := pipeline.get_result(timeout=0)) is not None:
                results.append(got.mask)
    finally:
        pipeline.stop(cancel=False)
    while (got := pipeline.get_result()) is not None:
        results.append(got.mask)
    if results and all(m.shape == results[0].shape for m in results):
        return np.stack(results)
    return results

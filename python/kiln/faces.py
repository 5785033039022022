"""Faces: detect, align, embed (512-D), judge and deduplicate the faces of photos, with the predecessor's names.

Images are bytes (JPEG, PNG, WebP, GIF, BMP, TIFF, HEIC/AVIF), paths or numpy RGB arrays (H, W, 3) uint8. Every
function takes the settings of `kiln faces` by the same names (detector, min_score, upscale, enhance, min_face_size,
..., device, threads, batch_size); the environment switches FACE_DETECTION_GPU, FACE_EMBEDDING_GPU,
IMAGE_ENHANCEMENT_GPU, QUALITY_CHECKS_GPU and ALL_GPU place each stage. A face is a dict: bbox (x0, y0, x1, y1), embedding (512 float32,
L2-normalised), det_score, scale, enhancement_scale, face_size, landmarks (6, 2), quality, pose, accepted,
reasons. The analyzers are kept per set of settings and shared by threads (one analysis at a time each).
"""
import asyncio
import atexit
import dataclasses
import threading

from . import _kiln

if not hasattr(_kiln, "FaceService"):
    raise ImportError("kiln.faces: this kiln is built without ONNX Runtime or faiss (see make deps)")

FaceService = _kiln.FaceService
_services = {}
_services_lock = threading.Lock()


def _service(settings):
    key = tuple(sorted((name, repr(value)) for name, value in settings.items()))
    with _services_lock:
        service = _services.get(key)
        if service is None:
            service = _services[key] = FaceService(**settings)
        return service


@atexit.register
def _close_services():
    with _services_lock:
        for service in _services.values():
            service.close()
        _services.clear()


def detect_and_embed(image, **settings):
    """The faces of one image, best detection first. An unreadable image raises KilnValueError (KilnIOError for a
    path that cannot be read)."""
    return _service(settings).detect_and_embed(image)


def detect_and_embed_batch(images, batch_size=32, return_exceptions=False, **settings):
    """The faces of each image, analyzed batch_size images at a time (the faces of a batch are embedded together);
    equal to detect_and_embed on each. An unreadable image raises, or with return_exceptions=True its entry is the
    exception and the others are still analyzed (like asyncio.gather)."""
    return _service(settings).detect_and_embed_batch(images, batch_size, return_exceptions)


def _submit(images, batch_size, single, return_exceptions, settings):
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle(result, error):
        if future.cancelled():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def done(result, error):  # called on kiln's thread
        loop.call_soon_threadsafe(settle, result, error)

    _service(settings).submit(images, batch_size, single, return_exceptions, done)
    return future


async def detect_and_embed_async(image, **settings):
    """detect_and_embed for asyncio code: the work runs on kiln's thread and the event loop is not blocked."""
    return await _submit(image, 1, True, False, settings)


async def detect_and_embed_batch_async(images, batch_size=32, return_exceptions=False, **settings):
    """detect_and_embed_batch for asyncio code: the work runs on kiln's thread and the event loop is not blocked."""
    return await _submit(images, batch_size, False, return_exceptions, settings)


def enhance_image_for_face_detection(image_bytes, **settings):
    """(bytes, scale): the photo as the detector sees it, from its decoded pixels: enhanced when below 500 x 400
    (enhance auto|off|always; contrast x1.15, sharpness x1.1, unsharp mask radius 1, 120 %, threshold 3) and upscaled
    when upscale="auto" (then scale is the factor; the default "off" is the predecessor's: scale 1.0). Encoded once:
    JPEG q95 for a JPEG, PNG for a PNG."""
    return _kiln.enhance_image_for_face_detection(image_bytes, **settings)


@dataclasses.dataclass
class QualityMetrics:
    """The predecessor's metrics of a face region, with a working overall_score. occlusion is not measured (0.0)."""
    blur_score: float
    brightness: float
    contrast: float
    sharpness: float
    occlusion: float
    overall_score: float
    pose: tuple = None  # (yaw, pitch, roll) degrees, from six BlazeFace landmarks; None without them
    region: tuple = None  # the (x0, y0, x1, y1) measured

    _KEYS = ("min_blur", "min_brightness", "max_brightness", "min_contrast", "min_sharpness", "max_occlusion",
             "min_overall_quality", "max_pose_angle")

    def is_acceptable(self, thresholds=None):
        """True when every given threshold holds: the predecessor's keys min_blur, min_brightness, min_contrast,
        min_sharpness, max_occlusion, and max_brightness, min_overall_quality, max_pose_angle. An unknown key
        raises ValueError."""
        thresholds = thresholds or {}
        unknown = set(thresholds) - set(self._KEYS)
        if unknown:
            raise ValueError(f"is_acceptable: unknown thresholds {sorted(unknown)}; expected some of {self._KEYS}")
        t = thresholds.get
        checks = [
            t("min_blur") is None or self.blur_score >= t("min_blur"),
            t("min_brightness") is None or self.brightness >= t("min_brightness"),
            t("max_brightness") is None or self.brightness <= t("max_brightness"),
            t("min_contrast") is None or self.contrast >= t("min_contrast"),
            t("min_sharpness") is None or self.sharpness >= t("min_sharpness"),
            t("max_occlusion") is None or self.occlusion <= t("max_occlusion"),
            t("min_overall_quality") is None or self.overall_score >= t("min_overall_quality"),
            t("max_pose_angle") is None or self.pose is None or max(map(abs, self.pose)) <= t("max_pose_angle"),
        ]
        return all(checks)


class QualityChecker:
    """QualityChecker().assess_quality(image, bbox=None, landmarks=None) -> QualityMetrics: blur (Laplacian
    variance), brightness, contrast, sharpness and the overall score of the face region (the whole image without a
    bbox), on the GPU when QUALITY_CHECKS_GPU allows; pose from six landmarks (a face dict's "landmarks")."""

    def assess_quality(self, image, bbox=None, landmarks=None):
        if landmarks is not None:
            landmarks = [[float(v) for v in point] for point in landmarks]
        return QualityMetrics(**_kiln.face_quality(image, bbox, landmarks))


__all__ = [
    "FaceService",
    "QualityChecker",
    "QualityMetrics",
    "detect_and_embed",
    "detect_and_embed_async",
    "detect_and_embed_batch",
    "detect_and_embed_batch_async",
    "enhance_image_for_face_detection",
]

"""The face crawler's GPU worker design, for bench/serve_peers.py: a FastAPI app under uvicorn with the crawler's
`POST /detect_and_embed_batch`, decoding each base64 image with OpenCV and analysing one image at a time with the
same face models (kiln.faces.detect_and_embed, kiln's settings as `kiln serve` uses them), one request at a time.
The worker also polled for its own results every 100 ms; that wait is left out, so this peer is faster than it was.

    python3 bench/serve_peer_worker.py PORT   (prints "listening on PORT" when ready)
"""
import base64
import sys
import threading
import time

import cv2
import numpy as np
import uvicorn
from fastapi import FastAPI, Request

import kiln.faces

app = FastAPI()
_one_at_a_time = threading.Lock()


def _face_json(face):
    return {"bbox": [float(v) for v in face["bbox"]],
            "landmarks": [[float(x), float(y)] for x, y in face["landmarks"]],
            "embedding": [float(v) for v in face["embedding"]], "quality": float(face["det_score"]),
            "age": None, "gender": None}


@app.get("/health")
def health():
    return {"status": "healthy"}


@app.post("/detect_and_embed_batch")
async def detect_and_embed_batch(request: Request):
    body = await request.json()
    started = time.perf_counter()
    results = []
    with _one_at_a_time:
        for item in body["images"]:
            data = np.frombuffer(base64.b64decode(item["data"]), np.uint8)
            bgr = cv2.imdecode(data, cv2.IMREAD_COLOR)
            if bgr is None:
                results.append([])
                continue
            rgb = np.ascontiguousarray(bgr[:, :, ::-1])
            faces = [f for f in kiln.faces.detect_and_embed(rgb, min_score=0.5)
                     if f["det_score"] >= body.get("min_face_quality", 0.5)]
            results.append([_face_json(f) for f in faces])
    return {"results": results, "processing_time_ms": (time.perf_counter() - started) * 1e3, "gpu_used": False,
            "worker_id": "fastapi-peer"}


if __name__ == "__main__":
    port = int(sys.argv[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    print(f"listening on {port}", flush=True)
    server.run()

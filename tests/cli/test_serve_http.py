"""kiln serve's HTTP rules without models: the bearer token (flag or KILN_SERVE_TOKEN), CORS only for the listed
origins, the structured access log, and the Prometheus text of /metrics."""
import json
import subprocess

import pytest

from conftest import KILN
from serve_util import Server

pytestmark = pytest.mark.skipif(
    "serve" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout
    or "built without" in subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout,
    reason="this kiln is built without ONNX Runtime, faiss or Boost.Beast")


def test_a_token_is_required_when_given():
    with Server("--no-faces", env={"KILN_SERVE_TOKEN": "s3cret"}) as s:
        status, headers, error = s.json("GET", "/v2/health/live")
        assert status == 401 and headers["www-authenticate"] == "Bearer" and "Bearer" in error["error"]
        assert s.json("GET", "/v2/health/live", headers={"Authorization": "Bearer wrong"})[0] == 401
        assert s.json("GET", "/v2/health/live", headers={"Authorization": "s3cret"})[0] == 401
        status, _, live = s.json("GET", "/v2/health/live", headers={"Authorization": "Bearer s3cret"})
        assert status == 200 and live == {"live": True}
        assert s.stop()[0] == 0


def test_cors_headers_only_for_listed_origins_and_an_access_log_line_per_request():
    with Server("--no-faces", "--cors-origin", "http://app.example,http://other.example") as s:
        _, headers, _ = s.request("GET", "/v2/health/live", headers={"Origin": "http://app.example"})
        assert headers["access-control-allow-origin"] == "http://app.example"
        _, headers, _ = s.request("GET", "/v2/health/live", headers={"Origin": "http://evil.example"})
        assert "access-control-allow-origin" not in headers
        _, headers, _ = s.request("GET", "/v2/health/live")
        assert "access-control-allow-origin" not in headers
        status, headers, _ = s.request("OPTIONS", "/v2/health/live", headers={"Origin": "http://other.example"})
        assert status == 204 and "POST" in headers["access-control-allow-methods"]
        assert s.request("OPTIONS", "/v2/health/live", headers={"Origin": "http://evil.example"})[0] == 403
        assert s.request("GET", "/nowhere")[0] == 404
        code, log = s.stop()
    assert code == 0
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert len(lines) == 6
    assert {"method", "path", "status", "bytes", "ms"} <= set(lines[0])
    assert lines[-1]["path"] == "/nowhere" and lines[-1]["status"] == 404 and lines[-1]["bytes"] > 0


def test_metrics_are_prometheus_text_by_route_and_code():
    with Server("--no-faces", "-q") as s:
        for _ in range(3):
            s.request("GET", "/v2/health/live")
        s.request("GET", "/missing")
        status, headers, data = s.request("GET", "/metrics")
        assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
        text = data.decode()
        assert 'kiln_serve_requests_total{route="/v2/health/live",code="200"} 3' in text
        assert 'kiln_serve_request_failures_total{route="(no route)"} 1' in text
        assert "# TYPE kiln_serve_request_seconds histogram" in text
        assert 'kiln_serve_request_seconds_bucket{route="/v2/health/live",le="+Inf"} 3' in text
        assert s.stop()[0] == 0


def test_a_config_file_sets_the_options_and_the_command_line_wins(tmp_path):
    config = tmp_path / "serve.yaml"
    config.write_text("port: 1\nno_faces: true\nmodels: [fr-embed]\ntoken: from-file\n"
                      "cors_origins: [http://a.example]\nworker_id: w7\n")
    with Server("--config", config, "--token", "from-flag", "-q") as s:  # Server adds --port 0: the flag wins
        assert s.json("GET", "/v2/health/ready", headers={"Authorization": "Bearer from-file"})[0] == 401
        status, headers, ready = s.json("GET", "/v2/models/fr-embed/ready",
                                        headers={"Authorization": "Bearer from-flag", "Origin": "http://a.example"})
        assert status == 200 and ready["ready"] is True
        assert headers["access-control-allow-origin"] == "http://a.example"
        assert s.json("GET", "/health", headers={"Authorization": "Bearer from-flag"})[0] == 404  # no_faces
        assert s.stop()[0] == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("port: [1, 2]\n")
    result = subprocess.run([KILN, "serve", "--config", bad], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "bad.yaml" in result.stderr

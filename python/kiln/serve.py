"""kiln.serve: starts a `kiln serve` worker for a notebook or a script, and stops it with the returned handle (or at
exit). The worker is the kiln program in a child process (the wheel's kiln/bin/kiln, a build's kiln beside its
python folder, $KILN_CLI, or kiln on PATH): its threads never wait for this interpreter's GIL, and a crash in it
leaves the notebook alive.

    with kiln.serve(models=["fr-embed"]) as server:        # any free port on 127.0.0.1
        faces = server.client().detect_and_embed("photo.jpg")

Keywords are `kiln serve`'s options by the same names (max_batch=8, instances=2, token="...", no_faces=True, ...):
True gives the flag, a list gives a comma-separated value.
"""
import atexit
import os
import re
import shutil
import subprocess
import tempfile
import threading

from ._kiln import KilnIOError


def _program():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "bin", "kiln"), os.path.join(here, "..", "..", "kiln"),
                      os.environ.get("KILN_CLI", ""), shutil.which("kiln") or ""):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    raise KilnIOError("kiln.serve: the kiln program was not found (kiln/bin/kiln, a build's kiln, $KILN_CLI, PATH)")


def _arguments(options):
    args = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    return args


class Server:
    """A running `kiln serve`: url, port, grpc_port (None unless grpc_port= was given), client(), stop()."""

    def __init__(self, args, startup_seconds):
        self.log = tempfile.TemporaryFile(mode="w+")  # the worker's stderr (its access log and errors)
        self.process = subprocess.Popen([_program(), "serve", *args], stdout=subprocess.PIPE, stderr=self.log,
                                        text=True)
        self.grpc_port = None
        lines = []
        timer = threading.Timer(startup_seconds, self.process.kill)
        timer.start()
        try:
            line = self.process.stdout.readline()
            lines.append(line)
            match = re.search(r"listening on (http://[^\s]+):(\d+)", line)
            if match and "--grpc-port" in args:
                grpc = self.process.stdout.readline()
                lines.append(grpc)
                grpc_match = re.search(r"grpc listening on [^\s]+:(\d+)", grpc)
                self.grpc_port = int(grpc_match.group(1)) if grpc_match else None
        finally:
            timer.cancel()
        if not match:
            self.stop()
            raise KilnIOError(f"kiln serve did not start: {''.join(lines).strip()!r}: {self.stderr()[-2000:]}")
        self.url = f"{match.group(1)}:{match.group(2)}"
        self.port = int(match.group(2))
        self._token = None
        if "--token" in args:
            self._token = args[args.index("--token") + 1]
        atexit.register(self.stop)

    def client(self, **options):
        """A kiln.Client of this server (with its token)."""
        from .client import Client  # noqa: PLC0415 (client imports numpy; serve alone does not need it)
        return Client(self.url, token=options.pop("token", self._token), **options)

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self, timeout=30):
        """SIGTERM (the queued requests are answered first), then the exit code; kills it after `timeout` s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def serve(host="127.0.0.1", port=0, models=None, startup_seconds=120, **options):
    """Starts `kiln serve` (port 0: any free port) and returns its Server once it listens."""
    args = ["--host", host, "--port", str(port)] + _arguments({"models": models, **options})
    return Server(args, startup_seconds)

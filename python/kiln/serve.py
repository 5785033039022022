"""kiln.serve: starts a `kiln serve` for a notebook or a script, and stops it with the returned handle (or at exit).

By default the server runs in this process: the same serve code on background threads of the _kiln extension (they
never take the GIL; Ctrl-C stays the notebook's; stop() drains like SIGTERM). With process=True it is the kiln
program in a child process instead (the wheel's kiln/bin/kiln, a build's kiln beside its python folder, $KILN_CLI,
or kiln on PATH): a crash in it leaves the notebook alive, and config= (a YAML file) is read there.

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

from . import _kiln
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


class _Handle:
    """What both kinds of server answer: url, port, grpc_port (None unless grpc_port= was given), client(), stop()."""

    url = None
    port = None
    grpc_port = None
    _token = None
    _tls_cert = None

    def client(self, **options):
        """A kiln.Client of this server (with its token, and trusting its certificate with tls_cert=)."""
        from .client import Client  # noqa: PLC0415 (client imports numpy; serve alone does not need it)
        options.setdefault("ca_file", self._tls_cert)
        return Client(self.url, token=options.pop("token", self._token), **options)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Server(_Handle):
    """`kiln serve` on background threads of this process."""

    def __init__(self, options):
        if not options.get("token"):
            options["token"] = os.environ.get("KILN_SERVE_TOKEN")  # as the command does
        if not hasattr(_kiln, "serve_start"):
            raise KilnIOError("kiln.serve: this kiln is built without kiln serve (ONNX Runtime, faiss, Boost.Beast, "
                              "OpenSSL: see make deps)")
        self._instance = _kiln.serve_start(options)
        self._tls_cert = options.get("tls_cert")
        scheme = "https" if self._tls_cert else "http"
        host = options["host"]
        self.url = f"{scheme}://{'[' + host + ']' if ':' in host else host}:{self._instance.port}"
        self.port = self._instance.port
        self.grpc_port = self._instance.grpc_port if self._instance.grpc_port >= 0 else None
        self._token = options.get("token")
        atexit.register(self.stop)

    @property
    def running(self):
        return self._instance.running

    def stderr(self):
        """The lines the command would print on stderr (model loading, failures; the access log goes to fd 2)."""
        return "".join(line + "\n" for line in self._instance.log_lines())

    def stop(self, timeout=None):
        """As SIGTERM to the command: queued requests are answered first (within drain=); returns 0 when done."""
        del timeout  # the drain's own deadline (drain=) bounds it
        self._instance.stop()
        return 0


class ProcessServer(_Handle):
    """`kiln serve` in a child process."""

    def __init__(self, args, startup_seconds):
        self.log = tempfile.TemporaryFile(mode="w+")  # the worker's stderr (its access log and errors)
        self.process = subprocess.Popen([_program(), "serve", *args], stdout=subprocess.PIPE, stderr=self.log,
                                        text=True)
        lines = []
        timer = threading.Timer(startup_seconds, self.process.kill)
        timer.start()
        try:
            line = self.process.stdout.readline()
            lines.append(line)
            match = re.search(r"listening on (https?://[^\s]+):(\d+)", line)
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
        if "--token" in args:
            self._token = args[args.index("--token") + 1]
        if "--tls-cert" in args:
            self._tls_cert = args[args.index("--tls-cert") + 1]
        atexit.register(self.stop)

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


def serve(host="127.0.0.1", port=0, models=None, process=False, startup_seconds=120, **options):
    """Starts `kiln serve` (port 0: any free port) and returns its handle once it listens: in this process (the
    default), or with process=True as the kiln program in a child process (startup_seconds: how long it may take)."""
    if process:
        args = ["--host", host, "--port", str(port)] + _arguments({"models": models, **options})
        return ProcessServer(args, startup_seconds)
    return Server({"host": host, "port": port, "models": models, **options})

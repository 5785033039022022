"""HTTP/1.1 load for bench/serve_peers.py: keep-alive connections on asyncio streams, each sending one request after
the other (closed loop), or requests started at a fixed rate onto the free connections (open loop, the latency a
client sees at a given load). Latencies are measured from the moment a request was due, so a queue in the client
counts against the server as it would against a real caller."""
import asyncio
import time


class LoadResult:
    def __init__(self, seconds):
        self.seconds = seconds
        self.latencies = []  # of the 2xx answers, seconds
        self.codes = {}
        self.errors = 0  # connection failures and malformed answers

    def record(self, code, latency):
        self.codes[code] = self.codes.get(code, 0) + 1
        if 200 <= code < 300:
            self.latencies.append(latency)

    def percentile(self, p):
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100.0 * len(ordered)))]

    def summary(self):
        ok = len(self.latencies)
        return {"requests_per_s": ok / self.seconds, "ok": ok, "codes": self.codes, "errors": self.errors,
                "p50_ms": self.percentile(50) * 1e3, "p90_ms": self.percentile(90) * 1e3,
                "p99_ms": self.percentile(99) * 1e3}


def request_bytes(method, path, body, headers=None):
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def read_response(reader):
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("closed")
    code = int(status_line.split()[1])
    length = 0
    chunked = False
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    if chunked:
        while True:
            size = int((await reader.readline()).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    else:
        await reader.readexactly(length)
    return code


class Connection:
    def __init__(self, port):
        self.port = port
        self.reader = None
        self.writer = None

    async def send(self, payload):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(payload)
        await self.writer.drain()
        return await read_response(self.reader)

    def close(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None


async def _exchange(connection, payload, due, result):
    try:
        code = await connection.send(payload)
        result.record(code, time.perf_counter() - due)
    except (ConnectionError, OSError, asyncio.IncompleteReadError, ValueError, IndexError):
        result.errors += 1
        connection.close()


async def closed_loop(port, payload, connections, seconds):
    """`connections` clients, each sending its next request when the last is answered, for `seconds`."""
    stop = time.perf_counter() + seconds
    result = LoadResult(seconds)

    async def client():
        connection = Connection(port)
        while time.perf_counter() < stop:
            await _exchange(connection, payload, time.perf_counter(), result)
        connection.close()

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(connections)))
    result.seconds = time.perf_counter() - start
    return result


async def open_loop(port, payload, rate, seconds, connections=256):
    """Requests due every 1/rate seconds for `seconds`, each sent on a free connection (at most `connections`)."""
    result = LoadResult(seconds)
    free = asyncio.Queue()
    for _ in range(connections):
        free.put_nowait(Connection(port))
    start = time.perf_counter()
    tasks = []

    async def one(due):
        connection = await free.get()
        await _exchange(connection, payload, due, result)
        free.put_nowait(connection)

    count = int(rate * seconds)
    for i in range(count):
        due = start + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(one(due)))
    await asyncio.gather(*tasks)
    while not free.empty():
        free.get_nowait().close()
    return result


async def hold_connections(port, payload, connections, rounds=2):
    """`connections` keep-alive connections open at once, each sending `rounds` requests; the answers' codes."""
    result = LoadResult(1.0)
    opened = []
    for _ in range(connections):
        connection = Connection(port)
        try:
            connection.reader, connection.writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            result.errors += 1
            continue
        opened.append(connection)
    start = time.perf_counter()
    for _ in range(rounds):
        await asyncio.gather(*(_exchange(c, payload, time.perf_counter(), result) for c in opened))
    result.seconds = time.perf_counter() - start
    for connection in opened:
        connection.close()
    return result

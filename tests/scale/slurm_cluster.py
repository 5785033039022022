"""Throw-away single-node Slurm cluster (munged + slurmctld + slurmd) for tests.

Everything -- slurm.conf, state/spool dirs, logs, pid files, the munge key and
socket -- lives under ``workdir``.  Only if ``workdir`` is too deep for unix
socket paths (108 bytes) do the munge socket and slurmd spool go to a short
/tmp/slurm-rt-* dir, removed on exit.  Nothing is written to /etc or /var, no
slurmdbd is needed.  Typical pytest use (skips, with the reason, under -rs)::

    from slurm_cluster import start_or_skip

    def test_array(tmp_path):
        with start_or_skip(tmp_path / "slurm") as cluster:
            job = cluster.sbatch(script, "--array=0-3")
            assert cluster.wait(job) == {i: "COMPLETED" for i in range(4)}

or, without the helper: check ``slurm_available_reason()``, then
``with SlurmCluster(dir) as cluster:`` and turn ``SlurmUnavailable`` into a skip.

Stdlib only (pytest only inside start_or_skip).  Needs root: SlurmUser=root,
SlurmdUser=root and munged --force.  Self-test: ``python3 slurm_cluster.py [rounds]``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pathlib
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

__all__ = ["SlurmCluster", "SlurmUnavailable", "slurm_available_reason",
           "start_or_skip", "TERMINAL_STATES"]

_DAEMONS = ("munged", "mungekey", "munge", "unmunge", "slurmctld", "slurmd")
_CLIENTS = ("sbatch", "scontrol", "sinfo", "squeue", "scancel")
_SBIN = "/usr/sbin:/sbin:/usr/local/sbin"

# States after which a job (array task) will never run again.
TERMINAL_STATES = frozenset({
    "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
    "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED",
})

# sun_path is 108 bytes including the NUL; keep a margin.
_MAX_SOCKET_PATH = 100


class SlurmUnavailable(Exception):
    """The local Slurm cluster could not be started; str() says precisely why."""


def _which(name: str) -> str | None:
    # The daemons live in /usr/sbin, which is not always on a CI user's PATH.
    return shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + _SBIN)


def slurm_available_reason() -> str | None:
    """Cheap pre-check (no daemons started).  None if a cluster looks startable."""
    if not os.path.isdir("/proc/self"):
        return "slurm test cluster needs Linux with /proc"
    missing = [n for n in _DAEMONS + _CLIENTS if _which(n) is None]
    if missing:
        return ("slurm/munge binaries not found: " + ", ".join(missing)
                + " (apt-get install slurmctld slurmd slurm-client munge)")
    if os.geteuid() != 0:
        return ("slurm test cluster needs root (SlurmUser=root, SlurmdUser=root, "
                "munged --force); running as uid %d" % os.geteuid())
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: pathlib.Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError as exc:
        return f"<{path}: {exc.strerror}>"
    return "\n".join(text[-lines:]) or f"<{path} is empty>"


def _alive(pid: int) -> bool:
    """True if pid exists and is not a zombie."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].split()[0] not in ("Z", "X")


def _procs_with_env(marker: str) -> list[int]:
    """Live processes (not zombies, not us) whose environment contains ``marker``."""
    needle = b"\0" + marker.encode() + b"\0"
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            environ = pathlib.Path("/proc", entry, "environ").read_bytes()
        except OSError:
            continue
        if needle in b"\0" + environ and _alive(int(entry)):
            found.append(int(entry))
    return found


def _slurmd_hardware() -> dict[str, str]:
    """Fields of the NodeName line printed by `slurmd -C` (CPUs, RealMemory, ...)."""
    try:
        out = subprocess.run([_which("slurmd"), "-C"], capture_output=True,
                             text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    line = next((ln for ln in out.splitlines() if ln.startswith("NodeName=")), "")
    return dict(re.findall(r"(\w+)=(\S+)", line))


class SlurmCluster:
    """Context manager running munged + slurmctld + slurmd on this host.

    ``cpus``: CPUs the node offers (default 2; <= 0 means all that slurmd -C
    sees).  Uses the real topology/memory from ``slurmd -C`` when cpus matches
    the hardware; otherwise CPUs=cpus with SlurmdParameters=config_overrides.
    ``extra_conf``: extra slurm.conf lines, appended before the node line.
    """

    START_TIMEOUT = 30.0

    def __init__(self, workdir: pathlib.Path, cpus: int = 2, extra_conf=()):
        self.workdir = pathlib.Path(workdir).resolve()
        self.cpus = int(cpus)
        self.extra_conf = list(extra_conf)
        self.cluster_name = "kilntest"
        self.partition = "debug"
        # SlurmctldHost/NodeName = short gethostname() with the address pinned to
        # 127.0.0.1, so nothing depends on the hostname resolving (verified with
        # an unresolvable FQDN hostname); slurmd gets -N explicitly.
        self.node_name = socket.gethostname().split(".")[0] or "localhost"
        self.conf_path = self.workdir / "etc" / "slurm.conf"
        self.log_dir = self.workdir / "log"
        self.munge_socket: pathlib.Path | None = None
        self.ctld_port = self.slurmd_port = 0
        self.spool_dir: pathlib.Path | None = None
        self._short_tmp: str | None = None
        self._procs: dict[str, subprocess.Popen] = {}
        self._env: dict[str, str] | None = None

    # ------------------------------------------------------------------ config
    def _write_config(self) -> None:
        w = self.workdir
        for sub in ("etc", "log", "state", "spool", "run", "munge", "munge-key"):
            (w / sub).mkdir(parents=True, exist_ok=True)
        hw = _slurmd_hardware()
        hw_cpus = int(hw.get("CPUs", os.cpu_count() or 1))
        memory = int(hw.get("RealMemory", 1024))
        cpus = self.cpus if self.cpus > 0 else hw_cpus
        if cpus == hw_cpus and all(k in hw for k in ("Boards", "SocketsPerBoard",
                                                     "CoresPerSocket", "ThreadsPerCore")):
            topo = (f"CPUs={cpus} Boards={hw['Boards']} SocketsPerBoard={hw['SocketsPerBoard']}"
                    f" CoresPerSocket={hw['CoresPerSocket']} ThreadsPerCore={hw['ThreadsPerCore']}")
        else:
            topo = f"CPUs={cpus}"
        self.ctld_port = _free_port()
        self.slurmd_port = _free_port()
        while self.slurmd_port == self.ctld_port:
            self.slurmd_port = _free_port()

        # Unix socket paths are limited to 108 bytes: the munge socket and the
        # slurmstepd sockets (<spool>/<node>_<jobid>.<stepid>) must fit.  Deep
        # pytest tmp dirs do not, so then both go to a short /tmp/slurm-rt-* dir.
        rt = w
        if (len(str(w / "munge" / "munge.socket")) > _MAX_SOCKET_PATH
                or len(str(w / "spool")) + len(self.node_name) + 22 > _MAX_SOCKET_PATH):
            self._short_tmp = tempfile.mkdtemp(
                prefix="slurm-rt-", dir="/tmp" if os.path.isdir("/tmp") else None)
            rt = pathlib.Path(self._short_tmp)
            for sub in ("munge", "spool"):
                (rt / sub).mkdir()
        self.munge_socket = sock = rt / "munge" / "munge.socket"
        self.spool_dir = rt / "spool"
        os.chmod(sock.parent, 0o755)           # socket dir: reachable by all
        os.chmod(w / "munge-key", 0o700)       # key dir: root only

        # Own (empty) plugstack so /etc/slurm/plugstack.conf.d is not read.
        (w / "etc" / "plugstack.conf").write_text("")
        lines = [
            f"ClusterName={self.cluster_name}",
            f"SlurmctldHost={self.node_name}(127.0.0.1)",
            f"SlurmctldPort={self.ctld_port}",
            f"SlurmdPort={self.slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={sock}",
            f"StateSaveLocation={w / 'state'}",
            f"SlurmdSpoolDir={self.spool_dir}",
            f"SlurmctldPidFile={w / 'run' / 'slurmctld.pid'}",
            f"SlurmdPidFile={w / 'run' / 'slurmd.pid'}",
            f"SlurmctldLogFile={self.log_dir / 'slurmctld.log'}",
            f"SlurmdLogFile={self.log_dir / 'slurmd.log'}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            f"PlugStackConfig={w / 'etc' / 'plugstack.conf'}",
            "MailProg=/bin/true",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/backfill",
            # Submitting/finishing jobs does not start new ones immediately in
            # 22.05; a 1 s backfill tick makes array waves ~1 s apart (vs ~2 s).
            "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,bf_interval=1",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "ReturnToService=2",
            "SlurmdParameters=config_overrides",
            "MinJobAge=86400",          # finished jobs stay visible to scontrol
            "KillWait=2",
            "InactiveLimit=0",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=60",
            "MessageTimeout=10",
            *self.extra_conf,
            f"NodeName={self.node_name} NodeAddr=127.0.0.1 NodeHostname={self.node_name} "
            f"{topo} RealMemory={memory} State=UNKNOWN",
            f"PartitionName={self.partition} Nodes={self.node_name} Default=YES "
            "MaxTime=INFINITE State=UP OverSubscribe=NO",
        ]
        self.conf_path.write_text("\n".join(lines) + "\n")

    def env(self) -> dict:
        """Environment for sbatch/squeue/scontrol/scancel/sinfo against this cluster.

        Inherited SLURM_*/SBATCH_*/... variables (e.g. when CI itself runs under
        Slurm) are dropped; SLURM_CONF points at the generated slurm.conf, which
        carries AuthInfo=socket=<munge socket>.  MUNGE_SOCKET is informational
        (for `munge -S "$MUNGE_SOCKET"`); libmunge does not read it."""
        if self._env is None:
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_",
                                        "SQUEUE_", "SINFO_", "SACCT_", "SCONTROL_"))}
            env["SLURM_CONF"] = str(self.conf_path)
            if self.munge_socket is not None:
                env["MUNGE_SOCKET"] = str(self.munge_socket)
            env["PATH"] = env.get("PATH", "/usr/bin:/bin") + os.pathsep + _SBIN
            self._env = env
        return dict(self._env)

    # ------------------------------------------------------------------ start
    def _run(self, args, timeout=30, check=True, **kw) -> subprocess.CompletedProcess:
        cp = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            timeout=timeout, env=self.env(), **kw)
        if check and cp.returncode != 0:
            raise subprocess.CalledProcessError(cp.returncode, args, cp.stdout, cp.stderr)
        return cp

    def _spawn(self, name: str, args: list) -> None:
        with open(self.log_dir / f"{name}.stdout", "wb") as log:
            self._procs[name] = subprocess.Popen(
                [str(a) for a in args], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=self.env(), cwd=self.workdir,
                start_new_session=True)

    def _fail(self, what: str, *names: str) -> None:
        parts = [what]
        for name in names:
            for path in (self.log_dir / f"{name}.log", self.log_dir / f"{name}.stdout"):
                if path.exists() and path.stat().st_size:
                    parts.append(f"--- {path} (tail) ---\n{_tail(path)}")
        raise SlurmUnavailable("\n".join(parts))

    def _check_alive(self, name: str) -> None:
        proc = self._procs[name]
        if proc.poll() is not None:
            self._fail(f"{name} exited with status {proc.returncode} during startup", name)

    def _start(self) -> None:
        reason = slurm_available_reason()
        if reason:
            raise SlurmUnavailable(reason)
        self._write_config()
        self._env = None  # rebuild now that the munge socket is known
        w = self.workdir

        # --- munged with its own key, socket, pid, seed and log file
        key = w / "munge-key" / "munge.key"
        cp = subprocess.run([_which("mungekey"), "--create", f"--keyfile={key}", "--force"],
                            capture_output=True, text=True)
        if cp.returncode != 0 or not key.exists():
            key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        self._spawn("munged", [
            _which("munged"), "--foreground", "--force",
            f"--socket={self.munge_socket}", f"--key-file={key}",
            f"--pid-file={w / 'run' / 'munged.pid'}",
            f"--seed-file={w / 'munge-key' / 'munged.seed'}",
            f"--log-file={self.log_dir / 'munged.log'}",
        ])
        deadline = time.monotonic() + 10
        while not self.munge_socket.exists():
            self._check_alive("munged")
            if time.monotonic() > deadline:
                self._fail("munged did not create its socket within 10 s", "munged")
            time.sleep(0.02)
        enc = subprocess.run([_which("munge"), "-n", "-S", str(self.munge_socket)],
                             capture_output=True, timeout=10)
        dec = subprocess.run([_which("unmunge"), "-S", str(self.munge_socket)],
                             input=enc.stdout, capture_output=True, timeout=10)
        if enc.returncode or dec.returncode:
            self._fail("munge/unmunge round trip failed: "
                       + (enc.stderr + dec.stderr).decode(errors="replace").strip(), "munged")

        # --- slurmctld (-i: ignore state; fresh dir anyway) and slurmd, both -D
        # slurmd is started once slurmctld listens (else its first registration
        # fails and is retried ~1 s later); sinfo is only asked after that too,
        # since sinfo against a dead/not-yet-listening controller blocks.
        self._spawn("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", self.conf_path])
        deadline = time.monotonic() + self.START_TIMEOUT
        last = ""
        while True:
            self._check_alive("slurmctld")
            if "slurmd" in self._procs:
                self._check_alive("slurmd")
            else:
                try:
                    socket.create_connection(("127.0.0.1", self.ctld_port), timeout=1).close()
                except OSError:
                    last = f"slurmctld not listening on port {self.ctld_port}"
                else:
                    self._spawn("slurmd", [_which("slurmd"), "-D", "-N", self.node_name,
                                           "-f", self.conf_path])
            if "slurmd" in self._procs:
                try:
                    cp = self._run([_which("sinfo"), "-h", "-N", "-o", "%N %T"],
                                   check=False, timeout=5)
                    last = (cp.stdout + cp.stderr).strip()
                    states = [ln.split()[1] for ln in cp.stdout.splitlines()
                              if len(ln.split()) > 1]
                    if cp.returncode == 0 and states and all(s == "idle" for s in states):
                        return
                except subprocess.TimeoutExpired:
                    last = "sinfo timed out"
            if time.monotonic() > deadline:
                self._fail(f"node not idle after {self.START_TIMEOUT:.0f} s "
                           f"(sinfo: {last or 'no output'})", "slurmctld", "slurmd")
            time.sleep(0.05)

    def __enter__(self) -> "SlurmCluster":
        if self._procs:
            raise RuntimeError("SlurmCluster is already running")
        atexit.register(self._stop)  # safety net if __exit__ never runs
        try:
            self._start()
        except BaseException as exc:
            self._stop()
            if isinstance(exc, (SlurmUnavailable, KeyboardInterrupt, SystemExit)):
                raise
            raise SlurmUnavailable(f"{type(exc).__name__}: {exc}") from exc
        return self

    # --------------------------------------------------------------- teardown
    def _stop(self) -> None:
        atexit.unregister(self._stop)
        ctld, sd = self._procs.get("slurmctld"), self._procs.get("slurmd")
        if ctld and sd and ctld.poll() is None and sd.poll() is None:
            # Jobs still queued/running: cancel them so slurmstepd cleans up.
            try:
                if self._run([_which("squeue"), "-h", "-o", "%i"],
                             check=False, timeout=5).stdout.strip():
                    user = pwd.getpwuid(os.geteuid()).pw_name
                    self._run([_which("scancel"), "-u", user], check=False, timeout=5)
                    deadline = time.monotonic() + 10
                    while time.monotonic() < deadline and self._run(
                            [_which("squeue"), "-h", "-o", "%i"],
                            check=False, timeout=5).stdout.strip():
                        time.sleep(0.2)
            except (OSError, subprocess.SubprocessError):
                pass
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self._procs.get(name)
            if proc is None:
                continue
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
        # slurmstepd double-forks away from slurmd; find it (and job processes)
        # by the SLURM_CONF=<our conf> they inherited, and kill what is left.
        deadline = time.monotonic() + 5
        while True:
            strays = _procs_with_env(f"SLURM_CONF={self.conf_path}")
            if not strays or time.monotonic() > deadline:
                break
            for pid in strays:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.05)
        self._procs.clear()
        if self._short_tmp:
            shutil.rmtree(self._short_tmp, ignore_errors=True)
            self._short_tmp = None

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop()

    # ---------------------------------------------------------------- job API
    def sbatch(self, script_path, *args, cwd=None) -> int:
        """Submit a batch script (extra sbatch options in ``args``); returns the
        job id (the array job id for arrays).  Runs in ``cwd`` (default: workdir),
        so default slurm-%A_%a.out files land there."""
        cp = self._run([_which("sbatch"), "--parsable", *args, script_path],
                       check=False, cwd=cwd or self.workdir)
        if cp.returncode != 0:
            raise RuntimeError(f"sbatch failed ({cp.returncode}): {cp.stderr.strip()}")
        return int(cp.stdout.strip().split(";")[0])

    def tasks(self, job_id: int) -> dict:
        """{task_id: {field: value}} parsed from `scontrol -o show job` (JobState,
        ExitCode "3:0", StartTime, ...).  Non-array job: key None.  Array tasks
        not yet started appear under their ArrayTaskId range string ("2-3")."""
        cp = self._run([_which("scontrol"), "-o", "show", "job", str(job_id)], check=False)
        if cp.returncode != 0:
            raise RuntimeError(f"scontrol show job {job_id}: {(cp.stdout + cp.stderr).strip()}")
        out = {}
        for line in cp.stdout.splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            if "JobState" not in fields:
                continue
            tid = fields.get("ArrayTaskId")
            out[None if tid is None else (int(tid) if tid.isdigit() else tid)] = fields
        return out

    def wait(self, job_id, timeout=300) -> dict:
        """Block until every task of ``job_id`` has finished; returns {task_id: state}
        with Slurm states (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...); a non-array
        job gives {None: state}.  No slurmdbd needed: finished jobs stay in
        slurmctld's memory for MinJobAge (1 day).  Raises TimeoutError, or
        SlurmUnavailable if slurmd cannot launch jobs (launch_failed_requeued_held)."""
        deadline = time.monotonic() + timeout
        delay = 0.05
        while True:
            info = self.tasks(int(job_id))
            states = {k: v["JobState"] for k, v in info.items()}
            bad = {k: v.get("Reason") for k, v in info.items()
                   if "launch_failed" in v.get("Reason", "")}
            if bad:
                # slurmd could not start the batch step: an environment problem
                # (see slurmd.log), not a failing job script.
                errs = [ln for ln in _tail(self.log_dir / "slurmd.log", 400).splitlines()
                        if ("error" in ln or "fatal" in ln)
                        and "pmix" not in ln.lower() and "MPI:" not in ln]
                raise SlurmUnavailable(f"slurmd failed to launch job {job_id} {bad}:\n"
                                       + "\n".join(errs[-12:]))
            if states and all(k is None or isinstance(k, int) for k in states) and \
                    all(s in TERMINAL_STATES for s in states.values()):
                return states
            for name in ("slurmctld", "slurmd"):
                proc = self._procs.get(name)
                if proc is None or proc.poll() is not None:
                    raise RuntimeError(f"{name} is not running while waiting for job "
                                       f"{job_id}:\n" + _tail(self.log_dir / f"{name}.log"))
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} not finished after {timeout} s: {states}\n"
                                   + _tail(self.log_dir / "slurmctld.log", 15))
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)


@contextlib.contextmanager
def start_or_skip(workdir: pathlib.Path, cpus: int = 2, **kw):
    """pytest helper: ``with start_or_skip(tmp_path) as cluster:`` -- skips the
    test (pytest.skip, reason shown with -rs) if the cluster cannot start."""
    import pytest

    reason = slurm_available_reason()
    if reason:
        pytest.skip(reason)
    cluster = SlurmCluster(workdir, cpus=cpus, **kw)
    try:
        cluster.__enter__()
    except SlurmUnavailable as exc:
        pytest.skip(f"cannot start local Slurm cluster: {exc}")
    try:
        yield cluster
    except SlurmUnavailable as exc:  # e.g. wait(): jobs cannot be launched here
        pytest.skip(f"local Slurm cluster cannot run jobs: {exc}")
    finally:
        cluster.__exit__(None, None, None)


def _selftest(rounds: int) -> None:
    why = slurm_available_reason()
    if why:
        print("SKIP:", why)
        return
    for r in range(rounds):
        with tempfile.TemporaryDirectory(prefix="slurm-selftest-") as tmp:
            wd = pathlib.Path(tmp)
            script = wd / "array.sh"
            script.write_text(
                "#!/bin/bash\n#SBATCH --array=0-3\n#SBATCH --output=/dev/null\n"
                'echo "$SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN'
                f' $SLURM_ARRAY_TASK_MAX" > {wd}/task.$SLURM_ARRAY_TASK_ID\n'
                "sleep 1\n")
            fail = wd / "fail.sh"
            fail.write_text("#!/bin/bash\n#SBATCH --output=/dev/null\nexit 3\n")
            t0 = time.monotonic()
            with SlurmCluster(wd / "cluster") as c:
                t1 = time.monotonic()
                states = c.wait(c.sbatch(script), timeout=120)
                t2 = time.monotonic()
                fjob = c.sbatch(fail)
                fstates = c.wait(fjob, timeout=60)
                fexit = c.tasks(fjob)[None]["ExitCode"]
                t3 = time.monotonic()
            t4 = time.monotonic()
            files = {p.name: p.read_text().strip() for p in sorted(wd.glob("task.*"))}
            assert states == {i: "COMPLETED" for i in range(4)}, states
            assert files == {f"task.{i}": f"{i} 4 0 3" for i in range(4)}, files
            assert fstates == {None: "FAILED"} and fexit == "3:0", (fstates, fexit)
            left = "".join(subprocess.run(["pgrep", "-a", "-r", "R,S,D,T", "-x", name],
                                          capture_output=True, text=True).stdout
                           for name in ("munged", "slurmctld", "slurmd", "slurmstepd"))
            assert not left, f"daemons left behind:\n{left}"
            print(f"round {r}: start {t1 - t0:.2f}s, 4-task array {t2 - t1:.2f}s, "
                  f"exit-3 job {t3 - t2:.2f}s, stop {t4 - t3:.2f}s, total {t4 - t0:.2f}s")
    print("OK")


if __name__ == "__main__":  # python3 slurm_cluster.py [rounds]
    import sys

    _selftest(int(sys.argv[1]) if len(sys.argv) > 1 else 3)

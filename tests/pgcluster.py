"""A throwaway PostgreSQL cluster for tests: on 127.0.0.1, in a temp folder, on a free port.

``TORCHPARITY_TEST_PG_URL`` (set by .ci/run, which starts one cluster for the whole run)
names a server whose user may create databases; without it the ``pg_url`` fixture starts
its own cluster when PostgreSQL's ``initdb`` is found (on PATH or in Debian's
/usr/lib/postgresql/N/bin) — as the ``postgres`` user through ``runuser`` when the tests
run as root — and stops it when the session ends. Without either, Postgres tests skip
naming the variable.

A cluster stops by itself when the process that started it dies, even by SIGKILL: a
reaper (``python pgcluster.py reap PID FOLDER``, in its own session) polls that process
and then stops the server and removes its folder. .ci/run starts the same reaper for its
cluster.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import List, Optional

ENV = "TORCHPARITY_TEST_PG_URL"


def find_bin(name: str) -> Optional[str]:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                      key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return versions[-1] if versions else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """initdb + pg_ctl start in a temp folder; ``stop()`` ends it and removes the folder."""

    def __init__(self, durable: bool = False) -> None:
        # tests: no fsync at all; durable (benchmarks): fsync on, commits not waited for,
        # as the SQLite store's WAL with synchronous=NORMAL (a process kill loses nothing)
        self.settings = ("-c synchronous_commit=off" if durable else
                         "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        self.initdb, self.pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
        self.folder: Optional[Path] = None
        self.url = ""

    def why_not(self) -> Optional[str]:
        if not (self.initdb and self.pg_ctl):
            return "PostgreSQL's initdb/pg_ctl not found (apt-get install -y postgresql)"
        if os.geteuid() == 0 and not (shutil.which("runuser") and _has_user("postgres")):
            return "running as root without runuser or a postgres user"
        return None

    def _as_owner(self) -> List[str]:
        return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def start(self) -> str:
        self.folder = Path(tempfile.mkdtemp(prefix="torchparity-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        data, log = self.folder / "data", self.folder / "log"
        self._run([self.initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                   "--no-sync"])
        for _attempt in range(3):
            port = free_port()
            opts = f"-c listen_addresses=127.0.0.1 -p {port} -k {self.folder} {self.settings}"
            proc = subprocess.run([*self._as_owner(), self.pg_ctl, "-D", str(data), "-l", str(log),
                                   "-w", "-t", "60", "-o", opts, "start"],
                                  capture_output=True, text=True, timeout=90)
            if proc.returncode == 0:
                self.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
                start_reaper(os.getpid(), self.folder)
                return self.url
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else proc.stderr
        self.stop()
        raise RuntimeError(f"pg_ctl start failed: {tail}")

    def _run(self, cmd: List[str]) -> None:
        proc = subprocess.run([*self._as_owner(), *cmd], capture_output=True, text=True,
                              timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {proc.stderr[-2000:]}")

    def stop(self) -> None:
        if self.folder is None:
            return
        if (self.folder / "data" / "postmaster.pid").exists():
            subprocess.run([*self._as_owner(), self.pg_ctl, "-D", str(self.folder / "data"),
                            "-m", "immediate", "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None


def start_reaper(pid: int, folder: Path) -> None:
    """Stop the cluster in ``folder`` once process ``pid`` is gone (see the module doc)."""
    subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "reap", str(pid), str(folder)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)


def reap(pid: int, folder: Path, poll_s: float = 1.0) -> None:
    """Wait for ``pid`` to end (or the folder to go: a normal stop), then stop the server
    left in ``folder`` and remove it."""
    while folder.exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            pass  # alive, owned by another user
        time.sleep(poll_s)
    if not folder.exists():
        return
    data = folder / "data"
    pg_ctl = find_bin("pg_ctl")
    if pg_ctl and (data / "postmaster.pid").exists():
        owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*owner, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=60)
    shutil.rmtree(folder, ignore_errors=True)


def _has_user(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def libpq(url: str) -> str:
    """A SQLAlchemy URL as libpq takes it (no +driver)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme.split('+', 1)[0]}://{rest}"


def create_database(server_url: str) -> str:
    """A new, empty database on the server; returns its URL."""
    import psycopg

    name = f"tp_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(libpq(server_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = server_url.rsplit("/", 1)[0]
    return f"{base}/{name}"


def drop_database(server_url: str, db_url: str) -> None:
    import psycopg

    name = db_url.rsplit("/", 1)[1]
    with psycopg.connect(libpq(server_url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":  # python pgcluster.py reap PID FOLDER
    if len(sys.argv) != 4 or sys.argv[1] != "reap":
        sys.exit("usage: pgcluster.py reap PID FOLDER")
    reap(int(sys.argv[2]), Path(sys.argv[3]))

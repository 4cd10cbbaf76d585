"""A throwaway PostgreSQL cluster stops by itself when the process that started it is
SIGKILLed (no atexit, no finally runs then)."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pgcluster
import pytest

STARTER = """
import sys, time
sys.path.insert(0, {tests!r})
import pgcluster
c = pgcluster.Cluster()
url = c.start()
print(url, c.folder, flush=True)
time.sleep(600)
"""


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_cluster_of_a_killed_process_is_stopped_and_removed():
    why = pgcluster.Cluster().why_not()
    if why:
        pytest.skip(f"no PostgreSQL to start here ({why}); CI installs it")
    tests = str(Path(__file__).resolve().parents[1])
    proc = subprocess.Popen([sys.executable, "-c", STARTER.format(tests=tests)],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().split()
        assert len(line) == 2, "the starter printed no URL"
        url, folder = line[0], Path(line[1])
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert _port_open(port) and folder.is_dir()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline and (folder.exists() or _port_open(port)):
            time.sleep(0.5)
        assert not _port_open(port), "the server outlived the process that started it"
        assert not folder.exists(), "its folder was left behind"
    finally:
        if proc.poll() is None:
            proc.kill()

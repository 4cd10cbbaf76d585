"""Process-table helpers for the hygiene tests: find processes by a marker in their
command line (plain /proc reading, independent of the code under test), wait for them to
go, and kill whatever a test leaves behind, always."""

import os
import random
import signal
import textwrap
import time

import pytest

if not os.path.isdir("/proc/self"):
    pytest.skip("the process-table checks read /proc (Linux)", allow_module_level=True)


def pids_with(marker):
    """Live (non-zombie) processes whose command line contains ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{name}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state != b"Z":
            found.append(int(name))
    return found


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def tree_of(pid):
    """Processes below ``pid`` by their parent chain."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    parents[int(name)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except OSError:
                continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        out += kids
        todo += kids
    return out


def wait_for(predicate, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


class Procs:
    def __init__(self, tmp_path):
        self.marker = f"{random.randint(10 ** 6, 10 ** 7 - 1)}"
        self.tmp = tmp_path
        self.watch = []  # pids a test wants gone at the end

    def sleep_arg(self, n):
        """A sleep length that names this test: ``sleep 1234567.3`` (about two weeks)."""
        return f"{self.marker}.{n}"

    def left(self):
        return pids_with(self.marker) + [p for p in self.watch if alive(p)]

    def tree(self, pid):
        return tree_of(pid)

    def wait_gone(self, timeout=20.0):
        """True when nothing of this test is left (waits up to ``timeout``)."""
        return wait_for(lambda: not self.left(), timeout)

    def wait_running(self, n, timeout=60.0):
        """True once ``n`` marked processes are running."""
        return wait_for(lambda: len(pids_with(self.marker)) >= n, timeout)

    def scenario_file(self, body, name="hyg_scenarios.py"):
        path = self.tmp / name
        head = ("import os, subprocess, sys, time\n"
                "from torchparity.scenarios.registry import scenario\n"
                f"MARK = {self.marker!r}\n\n")
        path.write_text(head + textwrap.dedent(body), encoding="utf-8")
        return path


@pytest.fixture
def procs(tmp_path):
    p = Procs(tmp_path)
    yield p
    for pid in p.left():  # never leave anything behind, whatever the test found
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass



"""Process trees: finding and ending every process a worker (or its scenario) started.

A scenario may start processes of its own, some in a new session (``start_new_session``)
where killing the worker's process group does not reach them. They are found through
``/proc`` by their parent chain, frozen (SIGSTOP, so none can fork past the scan) and
then killed. A worker makes itself a *child subreaper* (Linux), so a grandchild whose
parent exits is re-parented to the worker instead of to init and stays in its tree.

Where ``/proc`` or ``prctl`` are missing (not Linux), these helpers do what they can:
the tree is then just the process (and the pool still kills its process group).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import time
from typing import Dict, Iterable, List, Set

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
_FREEZE_ROUNDS = 20


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(sig: int = signal.SIGTERM) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies (Linux)."""
    return _prctl(PR_SET_PDEATHSIG, int(sig))


def become_subreaper(on: bool = True) -> bool:
    """Orphaned descendants are re-parented to this process, not to init (Linux)."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0)


def is_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        flag = ctypes.c_int(0)
        if libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) != 0:
            return False
        return bool(flag.value)
    except (OSError, AttributeError):
        return False


def children(pid: int) -> List[int]:
    """The direct children of ``pid``."""
    return [c for c, parent in _parents().items() if parent == pid]


def _parents() -> Dict[int, int]:
    """pid -> parent pid of every process, from /proc (empty where there is no /proc)."""
    out: Dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # ended meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) >= 2:
            out[int(name)] = int(fields[1])
    return out


def descendants(pid: int, keep: Iterable[int] = ()) -> List[int]:
    """Every live process below ``pid`` (children, grandchildren, ...), leaving out the
    processes in ``keep`` and everything below them."""
    children: Dict[int, List[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    kept = set(keep)
    found: List[int] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop()
        if p in found or p == pid or p in kept:
            continue
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def _signal(pids: Iterable[int], sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_descendants(pid: int, keep: Iterable[int] = ()) -> List[int]:
    """SIGKILL every process below ``pid`` (but ``keep`` and their subtrees): freeze the
    tree first so nothing forks past the scan, then kill what was frozen. Returns the
    pids killed."""
    keep = list(keep)
    frozen: Set[int] = set()
    for _ in range(_FREEZE_ROUNDS):
        new = [p for p in descendants(pid, keep) if p not in frozen]
        if not new:
            break
        _signal(new, signal.SIGSTOP)
        frozen.update(new)
    _signal(frozen, signal.SIGKILL)
    return sorted(frozen)


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid``, its process group and every process below it."""
    try:
        os.kill(pid, signal.SIGSTOP)  # no new children while the tree is scanned
    except (ProcessLookupError, PermissionError):
        pass
    kill_descendants(pid)
    try:
        if os.getpgid(pid) == pid:  # a group leader (a worker): its group goes with it
            os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _signal([pid], signal.SIGKILL)


def reap_children(wait_s: float = 1.0) -> None:
    """Collect the exit status of ended children (also adopted orphans), so none stays a
    zombie; waits up to ``wait_s`` for children that were just killed."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no children left
        except OSError:
            return
        if pid == 0:  # children left, none ended yet
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)


class OrphanCatcher:
    """While a pool runs, this process is a subreaper: the processes a crashed worker
    leaves (its scenario's children, in their own session or the worker's) are
    re-parented here instead of to init, and :meth:`collect` kills and reaps them.

    Only children that were not here before, are not a live worker and run in another
    session than this process are taken for a worker's orphans."""

    def __init__(self) -> None:
        self.me = os.getpid()
        self.session = os.getsid(0)
        self.before = set(children(self.me))
        self.was = is_subreaper()
        self.active = self.was or become_subreaper(True)

    def collect(self, live_workers: Iterable[int]) -> List[int]:
        if not self.active:
            return []
        live = set(live_workers)
        ended = []
        for pid in children(self.me):
            if pid in self.before or pid in live:
                continue
            try:
                if os.getsid(pid) == self.session:
                    continue  # started by this process itself, not left by a worker
            except OSError:
                continue
            kill_tree(pid)
            ended.append(pid)
        for pid in ended:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
        return ended

    def close(self, live_workers: Iterable[int] = ()) -> None:
        self.collect(live_workers)
        if self.active and not self.was:
            become_subreaper(False)

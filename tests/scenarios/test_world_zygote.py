"""World ranks forked from a preloaded zygote (``sources.world.start_rank``): as a fresh
interpreter would be in what they see (their environment, their output, their exit code, a
kill from outside), in a fraction of its start time."""

from __future__ import annotations

import os
import signal
import time

import torch

from tests.support import ranks_alive
from torchparity.scenarios.sources import world


def _script(tmp_path, body: str):
    path = tmp_path / "rank.py"
    path.write_text(body)
    return str(path)


def test_a_forked_rank_sees_the_environment_of_the_request_not_of_the_zygote(tmp_path, monkeypatch):
    world.run_world("all_reduce_sum", "cpu", torch.float32)  # the zygote runs from here on
    zygote = world.zygote_pid()
    assert zygote is not None
    monkeypatch.setenv("TORCHPARITY_TEST_LATE", "set after the zygote started")
    out = tmp_path / "env.txt"
    script = _script(tmp_path, f"import os, sys\nprint('to the err file')\n"
                               f"open({str(out)!r}, 'w').write(os.environ.get('TORCHPARITY_TEST_LATE', '-'))\n")
    rank = world.start_rank("runpy:run_path", script, tmp_path / "rank.err", dict(os.environ))
    assert rank.wait(timeout=60) == 1  # run_path returns a dict, not an exit code
    assert out.read_text() == "set after the zygote started"
    assert "to the err file" in (tmp_path / "rank.err").read_text()
    assert world.zygote_pid() == zygote  # one zygote for every world of this process


def test_a_rank_killed_from_outside_reads_as_killed_and_the_zygote_serves_on(tmp_path):
    before = ranks_alive()  # what other tests of this process left running is not ours
    script = _script(tmp_path, "import time\ntime.sleep(60)\n")
    rank = world.start_rank("runpy:run_path", script, tmp_path / "rank.err", dict(os.environ))
    time.sleep(0.2)
    assert rank.poll() is None
    os.kill(rank.pid, signal.SIGKILL)  # not by the world: a user, the OOM killer
    assert rank.wait(timeout=30) == -signal.SIGKILL
    assert world.killed_from_outside(rank.returncode)
    got = world.run_world("all_reduce_sum", "cpu", torch.float32)
    assert len(got) == 2 and ranks_alive() <= before


def test_a_zygote_killed_from_outside_is_replaced_and_its_ranks_die_with_it(tmp_path):
    script = _script(tmp_path, "import time\ntime.sleep(60)\n")
    rank = world.start_rank("runpy:run_path", script, tmp_path / "rank.err", dict(os.environ))
    old = world.zygote_pid()
    os.kill(old, signal.SIGKILL)
    assert rank.wait(timeout=30) < 0  # gone with its zygote (PDEATHSIG), not left running
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{rank.pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{rank.pid}")
    got = world.run_world("all_reduce_sum", "cpu", torch.float32)
    assert len(got) == 2
    assert world.zygote_pid() not in (None, old)


def test_forked_worlds_start_in_a_fraction_of_a_fresh_interpreters_time(monkeypatch):
    """Measured in one run, as a ratio: a warm zygote's world against the same world with
    every rank a fresh interpreter (``TORCHPARITY_WORLD_SPAWN=exec``)."""
    world.run_world("all_reduce_sum", "cpu", torch.float32)  # warm

    def timed() -> float:
        start = time.perf_counter()
        world._run_cases([("all_reduce_sum", "float32")], "cpu", 2, 60.0)
        return time.perf_counter() - start

    forked = min(timed() for _ in range(2))
    monkeypatch.setenv(world.SPAWN_ENV, "exec")
    fresh = timed()
    assert forked * 3 < fresh, (forked, fresh)

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


def _api_under_test(x):  # the API of the test below: its own op is refused
    return torch.mm(x, torch.ones(3, 2, dtype=x.dtype))


def _scaffold_refused(device, dtype):  # a scenario whose own op (not the API's) is refused
    x = torch.ones(2, 2, dtype=dtype, device=device)
    x = torch.mm(x, torch.ones(3, 3, dtype=dtype, device=device))  # the scaffolding refuses
    return _api_under_test(x)


def _api_refused(device, dtype):
    return _api_under_test(torch.ones(2, 2, dtype=dtype, device=device))


def test_scaffolding_never_decides_the_same_rule_in_process_and_in_worlds():
    """Issue 48 item 5: a refusal of the scenario's own op is kept out of the verdict in
    process (explain_scaffolding on the footprint run) — and now in worlds too: a rank's
    recorder sends the op that raised with its frames, and the process that knows the
    API attributes it by the same rule (before, "partial [addmm (Double)]" was blamed on
    GradBucket.buffer, fully_shard and ZeroRedundancyOptimizer)."""
    from torchparity.api.footprint import FootprintRecorder, frame_key
    from torchparity.devices import get_adapter
    from torchparity.judge.judgement import Judgement
    from torchparity.results.models import Cause, Status, Text
    from torchparity.run.execute import explain_scaffolding
    from torchparity.scenarios.registry import Scenario
    from torchparity.scenarios.sources.world import absorb_footprints, recorded_call

    cpu = get_adapter("cpu")
    codes = [_api_under_test.__code__]
    for body, status in ((_scaffold_refused, Status.SKIP), (_api_refused, Status.UNSUPPORTED)):
        t = Text(en="x", zh="x")
        sc = Scenario(id="s", api="x", fn=body, description=t, expected=t)
        in_process = Judgement(Status.UNSUPPORTED, Cause.DTYPE_LIMIT, "refused")
        explain_scaffolding(sc, torch.float32, cpu, in_process, _api_under_test, codes)
        # a rank: the same body under the rank's recorder, absorbed by the parent's
        entry = recorded_call(lambda body=body: body("cpu", torch.float32), cpu, [__file__])
        assert "error" in entry and entry["failed"][0] == "aten.mm"
        assert frame_key(body.__code__) in entry["failed"][1]
        parent = FootprintRecorder("cpu", api_objects=[_api_under_test], api_codes=codes,
                                   user_files=[__file__])
        with parent:
            absorb_footprints([entry, {}], "cpu")
        in_world = Judgement(Status.UNSUPPORTED, Cause.DTYPE_LIMIT, "refused")
        explain_scaffolding(sc, torch.float32, cpu, in_world, _api_under_test, codes, recorder=parent)
        assert in_process.status == in_world.status == status, (body, in_process, in_world)
        assert (in_process.detail == in_world.detail) and (
            (status == Status.SKIP) == in_world.detail.startswith("scaffolding refused: aten.mm"))

"""``torch.utils.data`` and ``torch.utils.checkpoint`` for the ``nnutil`` source: one
code block per API (see ``nnutil.nn``).

Datasets hold tensors that live on the device; loaders run in the main process
(``num_workers=0``: worker processes are not a question about the device). Samplers that
shuffle are given a seeded CPU ``torch.Generator`` (or a seed), so the order is the same
on both runs and what is compared is what they fetched from the device-resident data.
Checkpointed blocks run forward and backward on the device; outputs and gradients are
compared with the CPU's.
"""

from __future__ import annotations

from typing import Dict

from .nn import F32, Case

_DS = ("import torch.utils.data as D\n"
       "xs = torch.randn(6, 3, dtype=dtype).to(device)\nys = torch.arange(6).to(device)\n"
       "ds = D.TensorDataset(xs, ys)\n")
_DP = "from torch.utils.data.datapipes.iter import IterableWrapper\n"
_CK = ("import torch.utils.checkpoint as C\n"
       "lin = torch.nn.Linear(4, 4, dtype=dtype).to(device)\n"
       "def block(x):\n    return torch.tanh(lin(x)).sin() * x\n"
       "x = torch.randn(3, 4, dtype=dtype).to(device).requires_grad_()\n")

DATA: Dict[str, Case] = {
    "torch.utils.data.TensorDataset": (
        _DS + "out = [len(ds), ds[2], ds[5][1], on_run_device(ds[0][0])]", F32, ()),
    "torch.utils.data.Dataset": (
        "import torch.utils.data as D\n"
        "class Squares(D.Dataset):\n    def __init__(self, t):\n        self.t = t\n"
        "    def __len__(self):\n        return len(self.t)\n    def __getitem__(self, i):\n"
        "        return self.t[i] ** 2\n"
        "sq = Squares(torch.randn(5, 2, dtype=dtype).to(device))\nboth = sq + sq\n"
        "out = [len(sq), sq[3], len(both), both[7], on_run_device(sq[0])]", F32, ()),
    "torch.utils.data.DataLoader": (
        _DS + "dl = D.DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(3))\n"
        "batches = list(dl)\nlast = list(D.DataLoader(ds, batch_size=4, drop_last=True))\n"
        "out = [len(dl), batches, len(last), on_run_device(batches[0][0])]", F32, ()),
    "torch.utils.data.ConcatDataset": (
        _DS + "more = D.TensorDataset(torch.ones(2, 3, dtype=dtype).to(device), torch.tensor([7, 8]).to(device))\n"
        "cat = D.ConcatDataset([ds, more])\nout = [len(cat), cat[6], cat[-1], cat.cumulative_sizes,"
        " list(D.DataLoader(cat, batch_size=8))]", F32, ()),
    "torch.utils.data.Subset": (
        _DS + "sub = D.Subset(ds, [4, 0, 2])\nout = [len(sub), sub[0], list(D.DataLoader(sub, batch_size=3))]",
        F32, ()),
    "torch.utils.data.StackDataset": (
        _DS + "st = D.StackDataset(feat=D.TensorDataset(xs), label=D.TensorDataset(ys))\n"
        "out = [len(st), st[1], list(D.DataLoader(st, batch_size=6))]", F32, ()),
    "torch.utils.data.IterableDataset": (
        "import torch.utils.data as D\n"
        "class Windows(D.IterableDataset):\n    def __init__(self, t):\n        self.t = t\n"
        "    def __iter__(self):\n        for i in range(len(self.t) - 1):\n            yield self.t[i:i + 2].sum(0)\n"
        "src = torch.randn(5, 3, dtype=dtype).to(device)\n"
        "out = [list(Windows(src)), list(D.DataLoader(Windows(src), batch_size=2))]", F32, ()),
    "torch.utils.data.ChainDataset": (
        "import torch.utils.data as D\n"
        "class Rows(D.IterableDataset):\n    def __init__(self, t):\n        self.t = t\n"
        "    def __iter__(self):\n        return iter(self.t)\n"
        "a = torch.randn(2, 3, dtype=dtype).to(device)\nb = torch.randn(3, 3, dtype=dtype).to(device)\n"
        "chain = D.ChainDataset([Rows(a), Rows(b)])\n"
        "out = [list(chain), list(D.DataLoader(chain, batch_size=5))]", F32, ()),
    "torch.utils.data.Sampler": (
        _DS + "class Reverse(D.Sampler):\n    def __init__(self, n):\n        self.n = n\n"
        "    def __iter__(self):\n        return iter(range(self.n - 1, -1, -1))\n    def __len__(self):\n"
        "        return self.n\n"
        "out = [list(Reverse(6)), list(D.DataLoader(ds, batch_size=3, sampler=Reverse(6)))]", F32, ()),
    "torch.utils.data.SequentialSampler": (
        _DS + "s = D.SequentialSampler(ds)\nout = [list(s), [ds[i] for i in s], list(D.DataLoader(ds, sampler=s,"
        " batch_size=4))]", F32, ()),
    "torch.utils.data.RandomSampler": (
        _DS + "s = D.RandomSampler(ds, generator=torch.Generator().manual_seed(5))\n"
        "r = D.RandomSampler(ds, replacement=True, num_samples=4, generator=torch.Generator().manual_seed(5))\n"
        "order = list(s)\nout = [sorted(order), order, list(r), list(D.DataLoader(ds, sampler=s, batch_size=3))]",
        F32, ()),
    "torch.utils.data.SubsetRandomSampler": (
        _DS + "s = D.SubsetRandomSampler([1, 3, 5], generator=torch.Generator().manual_seed(2))\n"
        "order = list(s)\nout = [sorted(order), order, list(D.DataLoader(ds, sampler=s, batch_size=3))]", F32, ()),
    "torch.utils.data.distributed.DistributedSampler": (
        _DS + "from torch.utils.data.distributed import DistributedSampler\n"
        "shards = []\nfor rank in range(2):\n"
        "    s = DistributedSampler(ds, num_replicas=2, rank=rank, shuffle=True, seed=4)\n    s.set_epoch(1)\n"
        "    shards.append([list(s), list(D.DataLoader(ds, sampler=s, batch_size=3))])\nout = shards", F32, ()),
    "torch.utils.data.default_collate": (
        "import collections\nfrom torch.utils.data import default_collate\n"
        "Pt = collections.namedtuple('Pt', 'x y')\n"
        "items = [{'a': torch.randn(2, dtype=dtype).to(device), 'p': Pt(torch.tensor(i).to(device), 1.5 * i),"
        " 'n': i} for i in range(3)]\n"
        "b = default_collate(items)\n"
        "# numbers become new CPU tensors (the collate's documented answer): compared with where they live\n"
        "out = [b['a'], b['p'].x, b['p'].y.tolist(), b['n'].tolist(), on_run_device(b['a']), b['n'].device.type,"
        " type(b['p']).__name__]", F32, ()),
    "torch.utils.data.default_convert": (
        "import collections\nimport numpy as np\nfrom torch.utils.data import default_convert\n"
        "Pt = collections.namedtuple('Pt', 'x y')\n"
        "t = torch.randn(3, dtype=dtype).to(device)\n"
        "c = default_convert([Pt(t, np.arange(3)), {'k': t * 2}])\n"
        "out = [c[0].x, c[0].y.tolist(), c[0].y.device.type, c[1]['k'], type(c[0]).__name__, on_run_device(c[0].x),"
        " c[0].x.data_ptr() == t.data_ptr()]", F32, ()),
    "torch.utils.data.get_worker_info": (
        "import torch.utils.data as D\n"
        "class Tagged(D.Dataset):\n    def __init__(self, t):\n        self.t = t\n"
        "    def __len__(self):\n        return len(self.t)\n    def __getitem__(self, i):\n"
        "        info = D.get_worker_info()\n        return self.t[i], 'main' if info is None else info.id\n"
        "src = torch.randn(4, 2, dtype=dtype).to(device)\n"
        "out = [D.get_worker_info(), list(D.DataLoader(Tagged(src), batch_size=2, num_workers=0))]", F32, ()),
    "torch.utils.data.IterDataPipe": (
        _DP + "import torch.utils.data as D\nt = torch.randn(4, 3, dtype=dtype).to(device)\n"
        "dp = IterableWrapper(list(t)).map(lambda r: r * 2).filter(lambda r: bool(r.sum() > -100))\n"
        "out = [isinstance(dp, D.IterDataPipe), list(dp), list(dp.batch(3))]", F32, ()),
    "torch.utils.data.MapDataPipe": (
        "from torch.utils.data.datapipes.map import SequenceWrapper\nimport torch.utils.data as D\n"
        "t = torch.randn(4, 3, dtype=dtype).to(device)\ndp = SequenceWrapper(list(t)).map(lambda r: r.cumsum(0))\n"
        "out = [isinstance(dp, D.MapDataPipe), len(dp), dp[2], list(dp)]", F32, ()),
    "torch.utils.data.graph_settings.apply_sharding": (
        _DP + "from torch.utils.data import graph_settings\nt = torch.randn(6, 2, dtype=dtype).to(device)\n"
        "shards = []\nfor i in range(2):\n"
        "    dp = IterableWrapper(list(t)).sharding_filter().map(lambda r: r + 1)\n"
        "    graph_settings.apply_sharding(dp, 2, i)\n    shards.append(list(dp))\nout = shards", F32, ()),
    "torch.utils.data.graph_settings.get_all_graph_pipes": (
        _DP + "from torch.utils.data import graph_settings\nfrom torch.utils.data.graph import traverse_dps\n"
        "t = torch.randn(3, 2, dtype=dtype).to(device)\ndp = IterableWrapper(list(t)).map(lambda r: r * 3).batch(2)\n"
        "pipes = graph_settings.get_all_graph_pipes(traverse_dps(dp))\n"
        "out = [sorted(type(p).__name__ for p in pipes), list(dp)]", F32, ()),
    # checkpoint
    "torch.utils.checkpoint.checkpoint": (
        _CK + "y = C.checkpoint(block, x, use_reentrant=False)\nloss(y).backward()\n"
        "x2 = x.detach().clone().requires_grad_()\ny2 = C.checkpoint(block, x2, use_reentrant=True)\n"
        "loss(y2).backward()\nout = [y, x.grad, lin.weight.grad, y2, x2.grad]", F32, ()),
    "torch.utils.checkpoint.checkpoint_sequential": (
        "import torch.utils.checkpoint as C\n"
        "seq = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 4), torch.nn.Sigmoid())"
        ".to(dtype).to(device)\nx = torch.randn(3, 4, dtype=dtype).to(device).requires_grad_()\n"
        "y = C.checkpoint_sequential(seq, 2, x, use_reentrant=False)\nloss(y).backward()\n"
        "out = [y, x.grad, seq[0].weight.grad, seq[2].bias.grad]", F32, ()),
    "torch.utils.checkpoint.CheckpointPolicy": (
        _CK + "import functools\nseen = []\n"
        "def policy(ctx, op, *args, **kwargs):\n"
        "    seen.append((str(op), ctx.is_recompute))\n"
        "    return C.CheckpointPolicy.MUST_SAVE if op == torch.ops.aten.tanh.default "
        "else C.CheckpointPolicy.PREFER_RECOMPUTE\n"
        "ctx_fn = functools.partial(C.create_selective_checkpoint_contexts, policy)\n"
        "y = C.checkpoint(block, x, use_reentrant=False, context_fn=ctx_fn)\nloss(y).backward()\n"
        "out = [y, x.grad, lin.weight.grad, sorted({s for s in seen}),"
        " [p.name for p in C.CheckpointPolicy]]", F32, ()),
    "torch.utils.checkpoint.SelectiveCheckpointContext": (
        _CK + "import functools\nctxs = []\n"
        "def policy(ctx, op, *args, **kwargs):\n"
        "    ctxs.append([isinstance(ctx, C.SelectiveCheckpointContext), ctx.is_recompute])\n"
        "    return C.CheckpointPolicy.PREFER_SAVE\n"
        "y = C.checkpoint(block, x, use_reentrant=False,\n"
        "                 context_fn=functools.partial(C.create_selective_checkpoint_contexts, policy))\n"
        "loss(y).backward()\nout = [y, x.grad, sorted({tuple(c) for c in ctxs})]", F32, ()),
    "torch.utils.checkpoint.set_checkpoint_debug_enabled": (
        _CK + "with C.set_checkpoint_debug_enabled(True):\n"
        "    y = C.checkpoint(block, x, use_reentrant=False)\n    loss(y).backward()\n"
        "out = [y, x.grad, lin.weight.grad]", F32, ()),
}

"""``torch.nn.utils`` for the ``nnutil`` source: gradient clipping, parametrizations,
pruning, packed sequences, ``skip_init``, ``stateless.functional_call`` and the
parameter/vector helpers; one code block per API (see ``nnutil.nn``).

Pruning members are made from one template per method (``PRUNE_METHODS``) and one line
per class (``PRUNE_CLASSES``). The random pruning methods draw their mask on the device's
own generator: their masks are compared by what the amount fixes (how many entries, or
whole rows, are zero) and by "the pruned weight is the weight times the mask", tagged
"random".
"""

from __future__ import annotations

from typing import Dict, Tuple

from .nn import F32, Case

FB = ("float32", "float64")

# a small device model with gradients (no matrix product: clipping is not about matmul)
_GRADS = ("net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3)).to(dtype).to(device)\n"
          "x = torch.randn(6, 3, dtype=dtype).to(device)\n(7 * loss(net(x))).backward()\n")
_PAR = ("import torch.nn.utils.parametrize as P\n"
        "class Sym(torch.nn.Module):\n    def forward(self, X):\n        return X.triu() + X.triu(1).transpose(-1, -2)\n"
        "    def right_inverse(self, A):\n        return A.triu()\n"
        "lin = torch.nn.Linear(3, 3, dtype=dtype).to(device)\nx = torch.randn(2, 3, dtype=dtype).to(device)\n")
_PACK = ("from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, PackedSequence\n"
         "x = torch.randn(3, 4, 2, dtype=dtype).to(device)\nlengths = torch.tensor([2, 4, 1])\n"
         "packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)\n")

UTILS: Dict[str, Case] = {
    "torch.nn.utils.clip_grad_norm_": (
        _GRADS + "total = torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)\n"
        "inf = torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5, norm_type='inf')\n"
        "out = [total, inf, [p.grad for p in net.parameters()], on_run_device(total)]", FB, ()),
    "torch.nn.utils.clip_grad_norm": (
        "import warnings\n" + _GRADS + "with warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
        "    total = torch.nn.utils.clip_grad_norm(net.parameters(), max_norm=1.0, norm_type=1.0)\n"
        "out = [total, [p.grad for p in net.parameters()]]", FB, ()),
    "torch.nn.utils.clip_grad_value_": (
        _GRADS + "torch.nn.utils.clip_grad_value_(net.parameters(), clip_value=0.5)\n"
        "out = [p.grad for p in net.parameters()]", FB, ()),
    "torch.nn.utils.vector_to_parameters": (
        "net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3)).to(dtype).to(device)\n"
        "n = sum(p.numel() for p in net.parameters())\nvec = torch.linspace(-1, 1, n, dtype=dtype).to(device)\n"
        "torch.nn.utils.vector_to_parameters(vec, net.parameters())\n"
        "out = [dict(net.named_parameters()), torch.nn.utils.parameters_to_vector(net.parameters())]", FB, ()),
    "torch.nn.utils.skip_init": (
        # parameters are left uninitialised: what they hold is not compared, where and what they are is
        "m = torch.nn.utils.skip_init(torch.nn.Linear, 3, 4, device=device, dtype=dtype)\n"
        "shapes = [(n, tuple(p.shape), str(p.dtype), on_run_device(p)) for n, p in m.named_parameters()]\n"
        "with torch.no_grad():\n    m.weight.fill_(0.5)\n    m.bias.fill_(-1.0)\n"
        "out = [shapes, m(torch.ones(2, 3, dtype=dtype).to(device))]", F32, ()),
    "torch.nn.utils.stateless.functional_call": (
        "from torch.nn.utils.stateless import functional_call\n"
        "net = torch.nn.Sequential(torch.nn.PReLU(3), torch.nn.LayerNorm(3)).to(dtype).to(device)\n"
        "x = torch.randn(4, 3, dtype=dtype).to(device)\n"
        "w = torch.full((3,), 0.1, dtype=dtype).to(device).requires_grad_()\n"
        "import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
        "    y = functional_call(net, {'0.weight': w}, (x,))\n"
        "loss(y).backward()\nout = [y, w.grad, net[0].weight, net(x)]", F32, ()),
    # parametrize
    "torch.nn.utils.parametrize.is_parametrized": (
        _PAR + "before = P.is_parametrized(lin)\nP.register_parametrization(lin, 'weight', Sym())\n"
        "out = [before, P.is_parametrized(lin), P.is_parametrized(lin, 'weight'), P.is_parametrized(lin, 'bias'),"
        " lin(x)]", F32, ()),
    "torch.nn.utils.parametrize.remove_parametrizations": (
        _PAR + "P.register_parametrization(lin, 'weight', Sym())\nsym = lin.weight.detach().clone()\n"
        "P.remove_parametrizations(lin, 'weight', leave_parametrized=True)\n"
        "out = [sym, lin.weight, type(lin.weight).__name__, P.is_parametrized(lin), lin(x)]", F32, ()),
    "torch.nn.utils.parametrize.cached": (
        _PAR + "P.register_parametrization(lin, 'weight', Sym())\n"
        "with P.cached():\n    a = lin.weight\n    same = a is lin.weight\n    y = lin(x) + lin(x)\n"
        "loss(y).backward()\nout = [same, y, lin.parametrizations.weight.original.grad]", F32, ()),
    "torch.nn.utils.parametrize.ParametrizationList": (
        _PAR + "P.register_parametrization(lin, 'weight', Sym())\nplist = lin.parametrizations.weight\n"
        "lin(x).sum().backward()\n"
        "out = [type(plist).__name__, isinstance(plist, P.ParametrizationList), len(plist), plist(),"
        " plist.original.grad, on_run_device(plist.original)]", F32, ()),
    "torch.nn.utils.parametrize.ParametrizationList.right_inverse": (
        _PAR + "P.register_parametrization(lin, 'weight', Sym())\nplist = lin.parametrizations.weight\n"
        "A = torch.randn(3, 3, dtype=dtype).to(device)\nplist.right_inverse(A + A.T)\n"
        "out = [plist.original, lin.weight, lin(x)]", F32, ()),
    # packed sequences
    "torch.nn.utils.rnn.pack_padded_sequence": (
        _PACK + "sorted_ = pack_padded_sequence(x[[1, 0, 2]], torch.tensor([4, 2, 1]), batch_first=True)\n"
        "back, lens = pad_packed_sequence(packed, batch_first=True)\n"
        "out = [packed.data, packed.batch_sizes.tolist(), packed.sorted_indices, sorted_.data, back, lens.tolist(),"
        " packed.batch_sizes.device.type]", FB, ()),
    # device sequences passed explicitly (the docstring source runs these with the device as
    # default device, where pack_sequence's own lengths tensor lands on the device and is refused)
    "torch.nn.utils.rnn.pack_sequence": (
        "from torch.nn.utils.rnn import pack_sequence\n"
        "seqs = [torch.randn(n, 2, dtype=dtype).to(device) for n in (4, 2, 3)]\n"
        "p = pack_sequence(seqs, enforce_sorted=False)\n"
        "out = [p.data, p.batch_sizes.tolist(), p.sorted_indices, on_run_device(p.data)]", F32, ()),
    "torch.nn.utils.rnn.unpack_sequence": (
        "from torch.nn.utils.rnn import pack_sequence, unpack_sequence\n"
        "seqs = [torch.randn(n, 2, dtype=dtype).to(device) for n in (4, 2, 3)]\n"
        "out = unpack_sequence(pack_sequence(seqs, enforce_sorted=False))", F32, ()),
    "torch.nn.utils.rnn.PackedSequence": (
        _PACK + "again = PackedSequence(packed.data * 2, packed.batch_sizes, packed.sorted_indices,"
        " packed.unsorted_indices)\n"
        "rnn = torch.nn.GRU(2, 3, batch_first=True).to(dtype).to(device)\ny, h = rnn(again)\n"
        "out = [isinstance(y, PackedSequence), y.data, h, pad_packed_sequence(again, batch_first=True)[0]]", F32, ()),
    "torch.nn.utils.rnn.PackedSequence.data": (_PACK + "out = [packed.data, on_run_device(packed.data)]", FB, ()),
    "torch.nn.utils.rnn.PackedSequence.batch_sizes": (
        _PACK + "# documented to stay on the CPU: compared as values and where it lives\n"
        "out = [packed.batch_sizes.tolist(), packed.batch_sizes.device.type]", F32, ()),
    "torch.nn.utils.rnn.PackedSequence.sorted_indices": (
        _PACK + "out = [packed.sorted_indices, on_run_device(packed.sorted_indices)]", F32, ()),
    "torch.nn.utils.rnn.PackedSequence.unsorted_indices": (
        _PACK + "out = [packed.unsorted_indices, on_run_device(packed.unsorted_indices)]", F32, ()),
    "torch.nn.utils.rnn.PackedSequence.count": (
        _PACK + "plain = pack_padded_sequence(x[[1, 0, 2]], torch.tensor([4, 2, 1]), batch_first=True)\n"
        "out = [packed.count(None), plain.count(None), packed.data]", F32, ()),
    "torch.nn.utils.rnn.PackedSequence.index": (
        _PACK + "plain = pack_padded_sequence(x[[1, 0, 2]], torch.tensor([4, 2, 1]), batch_first=True)\n"
        "out = [packed.index(packed.data), plain.index(None), plain.sorted_indices]", F32, ()),
    "torch.nn.utils.rnn.PackedSequence.is_cuda": (
        _PACK + "out = [packed.is_cuda, packed.data.is_cuda, on_run_device(packed.data)]", F32, ()),
    "torch.nn.utils.rnn.PackedSequence.is_pinned": (_PACK + "out = [packed.is_pinned(), packed.data]", F32, ()),
    "torch.nn.utils.rnn.PackedSequence.to": (
        _PACK + "d = packed.to(torch.float64)\nc = packed.cpu().to(device)\n"
        "out = [d.data, str(d.data.dtype), c.data, on_run_device(c.data), c.sorted_indices]", F32, ()),
}

# ---- pruning ------------------------------------------------------------------------
_PRUNE_SETUP = ("import torch.nn.utils.prune as prune\n"
                "lin = torch.nn.Linear(4, 6, dtype=dtype).to(device)\nx = torch.randn(3, 4, dtype=dtype).to(device)\n"
                "w = lin.weight.detach().clone()\n"
                "mask = (torch.arange(24).reshape(6, 4) % 3 != 0).to(dtype).to(device)\n")
# class -> (constructor arguments, apply arguments after (module, name), random)
PRUNE_CLASSES: Dict[str, Tuple[str, str, bool]] = {
    "CustomFromMask": ("mask", "mask=mask", False),
    "Identity": ("", "", False),
    "L1Unstructured": ("amount=0.5", "amount=0.5", False),
    "LnStructured": ("amount=0.5, n=2, dim=0", "amount=0.5, n=2, dim=0", False),
    "RandomUnstructured": ("amount=0.5", "amount=0.5", True),
    "RandomStructured": ("amount=0.5, dim=0", "amount=0.5, dim=0", True),
    "PruningContainer": ("", "", False),  # blocks of its own: CONTAINER
    # abstract: a subclass that keeps every other entry
    "BasePruningMethod": ("", "", False),
}
_HALF = ("class Half(prune.BasePruningMethod):\n    PRUNING_TYPE = 'unstructured'\n"
         "    def compute_mask(self, t, default_mask):\n        m = default_mask.clone()\n"
         "        m.view(-1)[::2] = 0\n        return m\n")
# what the mask of a random method is judged by
# (how many entries are zero; for a structured method: how many whole rows are zero and
# whether every row is all kept or all pruned; the mask holds only 0 and 1)
_MASK_FACTS = ("def facts(m, t):\n"
               "    rows = ((m == 0).all(1) | (m == 1).all(1)).all() if STRUCTURED else True\n"
               "    return [meta(m), int((m == 0).sum()), int((m == 0).all(1).sum()) if STRUCTURED else None,\n"
               "            bool(rows), bool(((m == 0) | (m == 1)).all())]\n")


def _facts(name: str) -> str:
    return f"STRUCTURED = {'Structured' in name or 'structured' in name and 'unstructured' not in name}\n" + _MASK_FACTS


def _cls(name: str) -> str:
    return "Half" if name == "BasePruningMethod" else f"prune.{name}"


# a container arises from pruning one parameter twice; its apply() takes methods that
# already know their parameter (made by apply() on another Linear)
_PC = ("prune.l1_unstructured(lin, 'weight', amount=0.25)\nprune.ln_structured(lin, 'weight', amount=0.5, n=1, dim=0)\n"
       "pc = next(h for h in lin._forward_pre_hooks.values() if isinstance(h, prune.PruningContainer))\n"
       "other = prune.LnStructured.apply(torch.nn.Linear(4, 6, dtype=dtype).to(device), 'weight',"
       " amount=0.25, n=1, dim=1)\n")
CONTAINER: Dict[str, str] = {
    "": "out = [[type(m).__name__ for m in pc], len(pc), lin.weight_mask, lin(x)]",
    "apply_mask": "out = pc.apply_mask(lin)",
    "compute_mask": "out = [pc.compute_mask(w, default_mask=mask), pc.compute_mask(w, torch.ones_like(w))]",
    "prune": "out = pc.prune(w)",
    "remove": ("pc.remove(lin)\nout = [sorted(n for n, _ in lin.named_buffers()), lin.weight,"
               " F.linear(x, lin.weight, lin.bias)]"),
    "add_pruning_method": ("pc.add_pruning_method(other)\n"
                           "out = [[type(m).__name__ for m in pc], pc.compute_mask(w, torch.ones_like(w))]"),
}


def prune_block(name: str, method: str) -> Tuple[str, bool]:
    """The block of ``torch.nn.utils.prune.<name>[.<method>]`` and whether it is random."""
    if name == "PruningContainer":
        if method not in CONTAINER:
            raise KeyError(method)
        return _PRUNE_SETUP + _PC + CONTAINER[method], False
    ctor, apply_args, random_ = PRUNE_CLASSES[name]
    pre = _PRUNE_SETUP + (_HALF if name == "BasePruningMethod" else "") + (_facts(name) if random_ else "")
    cls = _cls(name)
    sep = ", " if apply_args else ""
    applied = f"method = {cls}.apply(lin, 'weight'{sep}{apply_args})\n"
    mask_out = "facts(lin.weight_mask, w)" if random_ else "lin.weight_mask"
    if method == "":
        body = (f"pm = {cls}({ctor})\nm = pm.compute_mask(w, default_mask=torch.ones_like(w))\n"
                + ("out = [type(pm).__name__, pm.PRUNING_TYPE, facts(m, w)]" if random_
                   else "out = [type(pm).__name__, pm.PRUNING_TYPE, m, pm.prune(w)]"))
    elif method == "apply":
        body = applied + (f"out = [type(method).__name__, {mask_out}, sorted(n for n, _ in lin.named_buffers()),"
                          " sorted(n for n, _ in lin.named_parameters())"
                          + ("" if random_ else ", lin.weight, lin(x)") + "]")
    elif method == "apply_mask":
        body = applied + ("pruned = method.apply_mask(lin)\n"
                          + ("out = [bool(torch.equal(pruned, lin.weight_orig * lin.weight_mask)), "
                             "int((pruned == 0).sum()) >= 12]" if random_ else "out = pruned"))
    elif method == "compute_mask":
        default = "torch.ones_like(w)" if random_ else "mask"
        body = (f"pm = {cls}({ctor})\nm = pm.compute_mask(w, default_mask={default})\n"
                + ("out = facts(m, w)" if random_ else "out = m"))
    elif method == "prune":
        body = (f"pm = {cls}({ctor})\np = pm.prune(w)\n"
                + ("out = [meta(p), int((p == 0).sum())]" if random_ else "out = p"))
    elif method == "remove":
        # the method's own remove() makes the pruning permanent; the forward pre-hook stays
        # registered (prune.remove drops it), so the forward is taken by hand
        body = applied + ("method.remove(lin)\nout = [sorted(n for n, _ in lin.named_buffers()), "
                          "sorted(n for n, _ in lin.named_parameters()), "
                          + ("int((lin.weight == 0).sum())]" if random_
                             else "lin.weight, F.linear(x, lin.weight, lin.bias)]"))
    else:
        raise KeyError(method)
    return pre + body, random_


PRUNE_METHODS = ("apply", "apply_mask", "compute_mask", "prune", "remove", "add_pruning_method")

# the functional forms: prune.identity(module, name), ...
PRUNE_FUNCS: Dict[str, Tuple[str, bool]] = {
    "identity": ("prune.identity(lin, 'weight')", False),
    "l1_unstructured": ("prune.l1_unstructured(lin, 'weight', amount=0.5)", False),
    "random_structured": ("prune.random_structured(lin, 'weight', amount=0.5, dim=0)", True),
    "random_unstructured": ("prune.random_unstructured(lin, 'weight', amount=0.25)", True),
    "ln_structured": ("prune.ln_structured(lin, 'weight', amount=0.5, n=2, dim=0)", False),
    "global_unstructured": ("prune.global_unstructured([(lin, 'weight')], pruning_method=prune.L1Unstructured,"
                            " amount=10)", False),
    "custom_from_mask": ("prune.custom_from_mask(lin, 'weight', mask)", False),
    "remove": ("prune.l1_unstructured(lin, 'weight', amount=0.5)\nprune.remove(lin, 'weight')", False),
    "is_pruned": ("before = prune.is_pruned(lin)\nprune.identity(lin, 'bias')\n"
                  "lin.is_pruned_answer = [before, prune.is_pruned(lin)]", False),
}


def prune_func_block(name: str) -> Tuple[str, bool]:
    call, random_ = PRUNE_FUNCS[name]
    pre = _PRUNE_SETUP + (_facts(name) if random_ else "")
    if name == "is_pruned":
        return pre + call + "\nout = [lin.is_pruned_answer, lin(x)]", False
    if random_:
        return pre + call + ("\nout = [facts(lin.weight_mask, w), "
                             "bool(torch.equal(lin.weight, lin.weight_orig * lin.weight_mask))]"), True
    return pre + call + "\nout = [lin.weight, sorted(n for n, _ in lin.named_buffers()), lin(x)]", False

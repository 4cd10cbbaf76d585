"""The cases of the ``fx`` source for ``torch.fx.Interpreter``, ``Transformer``,
``Tracer`` and ``Proxy``: one code block per API, run after ``fx.table.PRELUDE`` (the
traced ``Tiny`` model ``gm`` on the device, its input ``x``, ``norm``, ``node_list``).

The methods that the machinery calls on itself (``Interpreter.call_function``,
``Tracer.create_proxy``, ...) are exercised as users exercise them: a subclass overrides
the method, records what it was asked and calls the base class, and the block returns
that record with the run's (or the new graph's) outputs.
"""

from __future__ import annotations

from typing import Dict

F = "torch.fx."

# an Interpreter subclass whose override of METHOD records its target and calls the base
RECORD = '''\
class Recording(fx.{base}):
    seen = []

    def {method}(self, target, args, kwargs):
        self.seen.append(norm(getattr(target, "__name__", target)))
        return super().{method}(target, args, kwargs)

'''

KEEP = "interp = fx.Interpreter(gm, garbage_collect_values=False)\nres = interp.run(x)\n"
NAMED = "by_name = {n.name: n for n in gm.graph.nodes}\n"


def _interp(method: str) -> str:
    return (RECORD.format(base="Interpreter", method=method)
            + "rec = Recording(gm)\nres = rec.run(x)\nout = [rec.seen, res]")


def _transform(method: str, extra: str = "") -> str:
    return (RECORD.format(base="Transformer", method=method) + extra
            + "rec = Recording(gm)\nnew = rec.transform()\nout = [rec.seen, norm(new.code), new(x)]")


def _tracer(method: str, signature: str, record: str) -> str:
    return (f"class Recording(fx.Tracer):\n    seen = []\n\n"
            f"    def {method}(self, {signature}):\n        self.seen.append({record})\n"
            f"        return super().{method}({signature.replace('=None', '')})\n\n"
            "tr = Recording()\ngraph = tr.trace(m)\nnew = fx.GraphModule(m, graph)\n"
            "out = [tr.seen, norm(new.code), new(x)]")


CASES: Dict[str, str] = {
    # --- Interpreter ---
    F + "Interpreter": "out = fx.Interpreter(gm).run(x)",
    F + "Interpreter.call_function": _interp("call_function"),
    F + "Interpreter.call_method": _interp("call_method"),
    F + "Interpreter.call_module": _interp("call_module"),
    F + "Interpreter.fetch_args_kwargs_from_env": (
        KEEP + "out = [(n.name, interp.fetch_args_kwargs_from_env(n)) for n in gm.graph.nodes\n"
        "       if n.op in ('call_function', 'call_method', 'call_module')]"),
    F + "Interpreter.fetch_attr": (
        "interp = fx.Interpreter(gm)\n"
        "out = [interp.fetch_attr('lin.weight'), interp.fetch_attr('lin.bias'), interp.fetch_attr('scale')]"),
    F + "Interpreter.get_attr": (
        "interp = fx.Interpreter(gm)\nout = [interp.get_attr('scale', (), {}), interp.get_attr('lin.bias', (), {})]"),
    F + "Interpreter.map_nodes_to_values": (
        KEEP + NAMED + "out = interp.map_nodes_to_values((by_name['lin'], [by_name['x'], {'k': by_name['act']}]),\n"
        "                                 by_name['output'])"),
    F + "Interpreter.output": (
        "class Halving(fx.Interpreter):\n"
        "    def output(self, target, args, kwargs):\n"
        "        return super().output(target, args, kwargs) / 2\n"
        "out = [fx.Interpreter(gm).output('output', (x,), {}), Halving(gm).run(x)]"),
    F + "Interpreter.placeholder": (
        "class Doubling(fx.Interpreter):\n"
        "    def placeholder(self, target, args, kwargs):\n"
        "        return super().placeholder(target, args, kwargs) * 2\n"
        "out = [Doubling(gm).run(x), gm(x * 2)]"),
    F + "Interpreter.run": (
        KEEP + NAMED + "again = interp.run(x + 1, initial_env={by_name['lin']: torch.zeros_like(res)[:, None].expand(2, 3)})\n"
        "out = [res, again]"),
    F + "Interpreter.run_node": (
        "class Shapes(fx.Interpreter):\n    seen = []\n\n"
        "    def run_node(self, n):\n        res = super().run_node(n)\n"
        "        self.seen.append((n.op, n.name, tuple(res.shape) if isinstance(res, torch.Tensor) else None))\n"
        "        return res\n\n"
        "rec = Shapes(gm)\nres = rec.run(x)\nout = [rec.seen, res]"),
    # --- Transformer ---
    F + "Transformer": "new = fx.Transformer(gm).transform()\nout = [norm(new.code), new(x)]",
    F + "Transformer.call_function": (
        "class Swap(fx.Transformer):\n"
        "    def call_function(self, target, args, kwargs):\n"
        "        return super().call_function(torch.sub if target is torch.add else target, args, kwargs)\n"
        "new = Swap(gm).transform()\nout = [norm(new.code), new(x)]"),
    F + "Transformer.call_module": (
        "class Sig(fx.Transformer):\n"
        "    def call_module(self, target, args, kwargs):\n"
        "        if target == 'act':\n            return torch.sigmoid(args[0])\n"
        "        return super().call_module(target, args, kwargs)\n"
        "new = Sig(gm).transform()\nout = [norm(new.code), new(x)]"),
    F + "Transformer.get_attr": _transform("get_attr"),
    F + "Transformer.placeholder": (
        "class Scaled(fx.Transformer):\n"
        "    def placeholder(self, target, args, kwargs):\n"
        "        return super().placeholder(target, args, kwargs) * 2\n"
        "new = Scaled(gm).transform()\nout = [norm(new.code), new(x), gm(x * 2)]"),
    F + "Transformer.transform": (
        "new = fx.Transformer(gm).transform()\n"
        "out = [type(new).__name__, node_list(new.graph), new(x)]"),
    # --- Proxy ---
    F + "Proxy": (
        "tr = fx.Tracer()\ntr.graph = fx.Graph()\n"
        "p = fx.Proxy(tr.graph.placeholder('a'), tr)\n"
        "q = (p + 1).relu().sum(dim=-1) * p.shape[0]\ntr.graph.output(q.node)\n"
        "new = fx.GraphModule(torch.nn.Module(), tr.graph)\nout = [norm(new.code), new(x)]"),
    # --- Tracer ---
    F + "Tracer": "graph = fx.Tracer().trace(m)\nnew = fx.GraphModule(m, graph)\nout = [node_list(graph), new(x)]",
    F + "Tracer.call_module": _tracer("call_module", "m, forward, args, kwargs", "self.path_of_module(m)"),
    F + "Tracer.create_arg": (
        "tr = fx.Tracer()\ngraph = tr.trace(m)\n"
        "made = tr.create_arg((1, [2.0, 'a'], {'k': slice(1, 2)}, torch.float32))\n"
        "w = tr.create_arg(m.lin.weight)\n"
        "out = [norm(made), norm(w.format_node()), norm(w.op), norm(w.target)]"),
    F + "Tracer.create_args_for_root": _tracer(
        "create_args_for_root", "root_fn, is_module, concrete_args=None", "(is_module, concrete_args)"),
    F + "Tracer.create_node": _tracer(
        "create_node", "kind, target, args, kwargs, name=None, type_expr=None",
        "(kind, norm(getattr(target, '__name__', target)))"),
    F + "Tracer.create_proxy": _tracer(
        "create_proxy", "kind, target, args, kwargs, name=None, type_expr=None",
        "(kind, norm(getattr(target, '__name__', target)))"),
    F + "Tracer.getattr": _tracer("getattr", "attr, attr_val, parameter_proxy_cache",
                                  "(attr, type(attr_val).__name__)"),
    F + "Tracer.is_leaf_module": (
        "class Deep(fx.Tracer):\n"
        "    def is_leaf_module(self, mod, name):\n"
        "        return False if isinstance(mod, torch.nn.Linear) else super().is_leaf_module(mod, name)\n"
        "tr = Deep()\ngraph = tr.trace(m)\nnew = fx.GraphModule(m, graph)\n"
        "out = [fx.Tracer().is_leaf_module(m.lin, 'lin'), tr.is_leaf_module(m.lin, 'lin'),\n"
        "       tr.is_leaf_module(m, ''), norm(new.code), new(x)]"),
    F + "Tracer.iter": (
        "def f(x):\n    return [row * 2 for row in x]\n"
        "try:\n    fx.symbolic_trace(f)\n    said = 'traced'\n"
        "except fx.proxy.TraceError as exc:\n    said = str(exc).splitlines()[0]\n"
        "tr = fx.Tracer()\ntr.graph = fx.Graph()\np = tr.proxy(tr.graph.placeholder('a'))\n"
        "try:\n    tr.iter(p)\n    direct = 'iterated'\nexcept fx.proxy.TraceError as exc:\n"
        "    direct = str(exc).splitlines()[0]\nout = [said, direct, x.unbind(0)]"),
    F + "Tracer.keys": (
        "tr = fx.Tracer()\ntr.graph = fx.Graph()\np = tr.proxy(tr.graph.placeholder('d'))\n"
        "k = tr.keys(p)\ntr.graph.output(k.node)\n"
        "new = fx.GraphModule(torch.nn.Module(), tr.graph)\n"
        "out = [norm(new.code), list(new({'a': x, 'b': x + 1}))]"),
    F + "Tracer.path_of_module": (
        "tr = fx.Tracer()\ntr.trace(m)\n"
        "out = [tr.path_of_module(m.lin), tr.path_of_module(m.act)]\n"
        "try:\n    tr.path_of_module(torch.nn.Linear(1, 1).to(device))\nexcept NameError as exc:\n"
        "    out.append(norm(exc))"),
    F + "Tracer.proxy": (
        "tr = fx.Tracer()\ntr.graph = fx.Graph()\np = tr.proxy(tr.graph.placeholder('a'))\n"
        "q = torch.tanh(p) + p\ntr.graph.output(q.node)\n"
        "new = fx.GraphModule(torch.nn.Module(), tr.graph)\n"
        "out = [type(p).__name__, norm(new.code), new(x)]"),
    F + "Tracer.to_bool": (
        "def f(x):\n    return x.relu() if x.sum() > 0 else x.neg()\n"
        "try:\n    fx.symbolic_trace(f)\n    said = 'traced'\n"
        "except fx.proxy.TraceError as exc:\n    said = str(exc).splitlines()[0]\n"
        "out = [said, f(x)]"),
    F + "Tracer.trace": (
        "tr = fx.Tracer()\ngraph = tr.trace(m)\n"
        "def f(x, k):\n    return x * k\n"
        "g2 = fx.Tracer().trace(f, concrete_args={'k': 3})\n"
        "out = [node_list(graph), fx.GraphModule(m, graph)(x), node_list(g2),\n"
        "       fx.GraphModule(torch.nn.Module(), g2)(x, 3)]"),
}

"""The cases of the ``fx`` source: one real function per ``torch.fx`` API, and the table.

``torch.fx.Graph``, ``GraphModule``, ``Node`` and the module-level helpers; ``Interpreter``,
``Transformer``, ``Tracer``, ``Proxy``; and ``torch.fx.experimental``: ``proxy_tensor``
(``make_fx`` and its helpers) and ``symbolic_shapes`` (``ShapeEnv``, symbolic contexts,
constraints, guards). Every body ``f(device, dtype)`` starts from :func:`traced`: ``Tiny``
(a Linear, a ReLU submodule, a buffer, a method call and a function call) built on the CPU
in the run's dtype and moved to ``device``, its input ``x`` drawn on the CPU and moved,
its trace ``gm``, and ``norm`` (device names and object addresses become placeholders, so
the same graph gives the same text on every device). It traces, builds or edits a graph,
interprets or transforms it, runs the resulting ``GraphModule``, or makes the device
tensor's sizes symbolic (:func:`symbolic`), and returns what the API produced (generated
code and node lists through ``norm``, flags, symbolic answers as text, the run's
outputs), compared with the same body run on the CPU.

The methods the machinery calls on itself (``Interpreter.call_function``,
``Tracer.create_proxy``, ...) are exercised as users exercise them: a subclass overrides
the method, records what it was asked and calls the base class; one body serves every
such method, told which by its ``api`` parameter. Helpers and bodies live in this one
file: the footprint recorder tells scenario code from the API's by file.
"""

from __future__ import annotations

import importlib.util
import re

import sympy
import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch._dynamo.source import LocalSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental import symbolic_shapes as S
from torch.fx.experimental.proxy_tensor import make_fx

from ..base import Case, Excluded

F = "torch.fx."
P = "torch.fx.experimental.proxy_tensor."
SS = "torch.fx.experimental.symbolic_shapes."
SE = SS + "ShapeEnv."


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.act = torch.nn.ReLU()
        self.register_buffer("scale", torch.full((3,), 2.0))

    def forward(self, x):
        y = self.act(self.lin(x)) * self.scale
        return torch.add(y.sum(dim=-1), x.mean())


def normaliser(device):
    """``norm(text)``: ``text`` without the name of ``device``'s type and without object
    addresses (the same graph gives the same text on every device)."""
    kind = torch.device(device).type

    def norm(text):
        text = str(text)
        text = re.sub(r"\b" + kind + r"(:\d+)?\b", "<dev>", text)
        return re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    return norm


def node_list(norm, graph):
    return [norm(n.format_node()) for n in graph.nodes]


def traced(device, dtype):
    """``Tiny`` on ``device`` in ``dtype``, its input ``x`` (2 x 4, drawn on the CPU and
    moved), its symbolic trace ``gm``, and ``norm`` for ``device``."""
    m = Tiny().to(dtype).to(device)
    x = torch.randn(2, 4, dtype=dtype).to(device)
    return m, x, fx.symbolic_trace(m), normaliser(device)


def symbolic(device, dtype, norm):
    """A 6 x 4 input drawn on the CPU and moved (``x6``), and a fake tensor of it whose two
    sizes are symbols of a fresh ``ShapeEnv`` (``fake``; ``s0``, ``s1`` their sympy
    symbols, hinted by the device tensor's sizes; symbol names are a function of the
    input's source name ``src``, so both runs name them alike); ``text``: symbolic answers
    as text."""
    x6 = torch.randn(6, 4, dtype=dtype).to(device)
    shape_env = S.ShapeEnv()
    fake_mode = FakeTensorMode(shape_env=shape_env)
    src = LocalSource("x")
    fake = fake_mode.from_tensor(x6, source=src, symbolic_context=S.StatelessSymbolicContext(
        dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.DYNAMIC]))
    s0, s1 = [d.node.expr for d in fake.shape]

    def text(v):
        """symbolic answers as text; a (fake) tensor as its sizes, dtype and whether it is
        on the run's device (a FakeTensor's repr names a device only when it is not the CPU)"""
        def one(a):
            if isinstance(a, torch.Tensor):
                on = a.device.type == torch.device(device).type
                return f"Tensor(size={[str(s) for s in a.shape]}, dtype={a.dtype}, on_run_device={on})"
            return a
        return norm(pytree.tree_map(one, v))
    return x6, shape_env, fake_mode, src, fake, s0, s1, text


# --- the bodies -----------------------------------------------------------------------------


def Graph(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a')
    b = g.call_function(torch.relu, (a,))
    g.output(b)
    new = fx.GraphModule(m, g)
    return [norm(new.code), new(x)]


def Graph___init__(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph(owning_module=gm, tracer_cls=fx.Tracer)
    owned = g.owning_module is gm
    env = {}
    res = g.graph_copy(gm.graph, env)
    g.output(res)
    new = fx.GraphModule(gm, g)
    return [owned, g.owning_module is new, norm(new.code), new(x)]


def Graph_call_function(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a')
    b = g.call_function(torch.add, (a, a), {'alpha': 2})
    g.output(b)
    new = fx.GraphModule(m, g)
    return [norm(new.code), new(x)]


def Graph_call_method(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a')
    b = g.call_method('sum', (a,), {'dim': -1})
    g.output(b)
    new = fx.GraphModule(m, g)
    return [norm(new.code), new(x)]


def Graph_call_module(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a')
    b = g.call_module('lin', (a,))
    g.output(b)
    new = fx.GraphModule(m, g)
    return [norm(new.code), new(x)]


def Graph_create_node(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a')
    b = g.create_node('call_function', torch.mul, (a, a), name='square')
    c = g.create_node('call_method', 'mean', (b,))
    g.output(c)
    new = fx.GraphModule(m, g)
    return [norm(new.code), new(x)]


def Graph_eliminate_dead_code(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def f(x):
        unused = x * 3  # noqa: F841  (dead code for eliminate_dead_code)
        return x.relu()
    t = fx.symbolic_trace(f)
    before = len(t.graph.nodes)
    changed = t.graph.eliminate_dead_code()
    t.recompile()
    return [changed, before, len(t.graph.nodes), norm(t.code), t(x)]


def Graph_erase_node(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    relu = next(n for n in gm.graph.nodes if n.target == 'act')
    relu.replace_all_uses_with(relu.args[0])
    gm.graph.erase_node(relu)
    gm.recompile()
    return [norm(gm.code), gm(x)]


def Graph_find_nodes(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [[n.name for n in gm.graph.find_nodes(op='call_module')],
            [n.name for n in gm.graph.find_nodes(op='call_function', target=torch.add)],
            [n.name for n in gm.graph.find_nodes(op='placeholder')]]


def Graph_get_attr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a')
    w = g.get_attr('scale')
    b = g.call_function(torch.mul, (g.call_module('lin', (a,)), w))
    g.output(b)
    new = fx.GraphModule(m, g)
    return [norm(new.code), new(x), norm(w.format_node())]


def Graph_graph_copy(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    env = {}
    res = g.graph_copy(gm.graph, env)
    g.output(res)
    new = fx.GraphModule(gm, g)
    return [sorted(n.name for n in env), norm(new.code), new(x)]


def Graph_inserting_after(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    lin = next(n for n in gm.graph.nodes if n.target == 'lin')
    with gm.graph.inserting_after(lin):
        neg = gm.graph.call_function(torch.neg, (lin,))
    lin.replace_all_uses_with(neg, delete_user_cb=lambda u: u is not neg)
    gm.recompile()
    return [norm(gm.code), gm(x)]


def Graph_inserting_before(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    res = gm.graph.output_node()
    with gm.graph.inserting_before(res):
        half = gm.graph.call_function(torch.mul, (res.args[0], 0.5))
    res.args = (half,)
    gm.recompile()
    return [norm(gm.code), gm(x)]


def Graph_lint(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    ok = gm.graph.lint()
    add = next(iter(gm.graph.find_nodes(op='call_function', target=torch.add)))
    first = next(iter(gm.graph.find_nodes(op='placeholder')))
    first.append(add)
    try:
        gm.graph.lint()
        broken = 'no error'
    except RuntimeError as exc:
        broken = norm(exc).splitlines()[0]
    return [ok, broken]


def Graph_node_copy(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    env = {}
    for n in gm.graph.nodes:
        if n.op == 'output':
            g.output(env[n.args[0]])
        else:
            env[n] = g.node_copy(n, lambda arg: env[arg])
    new = fx.GraphModule(gm, g)
    return [node_list(norm, g), new(x)]


def Graph_nodes(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [len(gm.graph.nodes), node_list(norm, gm.graph), [n.op for n in reversed(gm.graph.nodes)]]


def Graph_on_generate_code(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def make(current):
        def transform(body):
            body = current(body) if current else body
            return ['# edited by on_generate_code\n', *body]
        return transform
    with gm.graph.on_generate_code(make):
        gm.recompile()
        edited = norm(gm.code)
    gm.recompile()
    return [edited, norm(gm.code), gm(x)]


def Graph_output(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a')
    b = g.call_function(torch.relu, (a,))
    g.output((b, [a]), type_expr=tuple)
    new = fx.GraphModule(m, g)
    return [norm(new.code), new(x)]


def Graph_output_node(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    res = gm.graph.output_node()
    return [res.op, norm(res.format_node()), res.args[0].name]


def Graph_placeholder(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a', type_expr=torch.Tensor)
    k = g.placeholder('k', default_value=3.0)
    g.output(g.call_function(torch.mul, (a, k)))
    new = fx.GraphModule(m, g)
    return [norm(new.code), new(x), new(x, 0.5)]


def Graph_process_inputs(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def f(d):
        return d['a'] * 2 + d['b']
    t = fx.symbolic_trace(f, concrete_args={'d': {'a': fx.PH, 'b': fx.PH}})
    flat = t.graph.process_inputs({'a': x, 'b': x + 1})
    return [len(flat), list(flat), t({'a': x, 'b': x + 1})]


def Graph_process_outputs(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def f(d):
        return {'sum': d['a'] + d['b'], 'diff': d['a'] - d['b']}
    t = fx.symbolic_trace(f, concrete_args={'d': {'a': fx.PH, 'b': fx.PH}})
    res = t.graph.process_outputs([x, x * 2])
    return [res, t({'a': x, 'b': x + 1})]


def Graph_python_code(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    pc = gm.graph.python_code(root_module='self')
    return [norm(pc.src), sorted(k for k in pc.globals if not k.startswith('_'))]


def Graph_set_codegen(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def f(d):
        return d['a'] * 2 + d['b']
    t = fx.symbolic_trace(f, concrete_args={'d': {'a': fx.PH, 'b': fx.PH}})
    tree = norm(t.code)
    t.graph.set_codegen(fx.graph.CodeGen())
    t.recompile()
    return [tree, norm(t.code), t(x, x + 1)]


def GraphModule(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    new = fx.GraphModule(m, gm.graph)
    return [type(new).__name__, norm(new.code), new(x)]


def GraphModule___init__(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a')
    g.output(g.call_module('lin', (a,)))
    new = fx.GraphModule({'lin': m.lin}, g, class_name='Small')
    return [type(new).__name__, [k for k, _ in new.named_modules()], norm(new.code), new(x)]


def GraphModule_add_submodule(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    ok = gm.add_submodule('extra.proj', torch.nn.Linear(3, 2).to(dtype).to(device))
    lin = next(n for n in gm.graph.nodes if n.target == 'act')
    with gm.graph.inserting_after(lin):
        proj = gm.graph.call_module('extra.proj', (lin,))
    with gm.graph.inserting_after(proj):
        back = gm.graph.call_method('sum', (proj,), {'dim': -1, 'keepdim': True})
    lin.replace_all_uses_with(back, delete_user_cb=lambda u: u is not proj)
    gm.recompile()
    return [ok, norm(gm.code), gm(x)]


def GraphModule_code(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [norm(gm.code), gm(x)]


def GraphModule_delete_all_unused_submodules(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    gm.add_submodule('spare', torch.nn.Linear(2, 2).to(device))
    before = [k for k, _ in gm.named_modules()]
    gm.delete_all_unused_submodules()
    return [before, [k for k, _ in gm.named_modules()], gm(x)]


def GraphModule_delete_submodule(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    act = next(n for n in gm.graph.nodes if n.target == 'act')
    with gm.graph.inserting_after(act):
        fn = gm.graph.call_function(torch.relu, act.args)
    act.replace_all_uses_with(fn)
    gm.graph.erase_node(act)
    gone = gm.delete_submodule('act')
    missing = gm.delete_submodule('nothing')
    gm.recompile()
    return [gone, missing, norm(gm.code), gm(x)]


def GraphModule_graph(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [norm(gm.graph), gm.graph is gm.graph, gm(x)]


def GraphModule_print_readable(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [norm(gm.print_readable(print_output=False)), gm(x)]


def GraphModule_recompile(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    add = next(iter(gm.graph.find_nodes(op='call_function', target=torch.add)))
    add.target = torch.sub
    pc = gm.recompile()
    return [norm(pc.src) == norm(gm.code), norm(gm.code), gm(x)]


def GraphModule_to_folder(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    import importlib.util
    import os
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, 'fx_folder')
        gm.to_folder(folder, module_name='Saved')
        files = sorted(os.listdir(folder))
        spec = importlib.util.spec_from_file_location('fx_folder', os.path.join(folder, '__init__.py'),
                                                      submodule_search_locations=[folder])
        mod = importlib.util.module_from_spec(spec)
        sys.modules['fx_folder'] = mod
        try:  # the saved module is rebuilt on the CPU; moved to the device as a user would
            spec.loader.exec_module(mod)
            back = mod.Saved()
        finally:
            sys.modules.pop('fx_folder', None)
            sys.modules.pop('fx_folder.module', None)
    back = back.to(device)
    return [files, back(x), dict(back.state_dict())]


def Node(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    n = fx.Node(gm.graph, 'made', 'call_function', torch.neg, (next(iter(gm.graph.nodes)),), {})
    return [[(k.op, k.name, norm(k.target)) for k in gm.graph.nodes], n.op, n.name,
            norm(n.format_node()), gm(x)]


def Node_all_input_nodes(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [(n.name, [a.name for a in n.all_input_nodes]) for n in gm.graph.nodes]


def Node_append(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    nodes = list(gm.graph.nodes)
    mean = next(n for n in nodes if n.target == 'mean')
    nodes[0].append(mean)
    gm.recompile()
    return [[n.name for n in gm.graph.nodes], norm(gm.code), gm(x)]


def Node_args(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [(n.name, norm(n.args)) for n in gm.graph.nodes]


def Node_format_node(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [norm(n.format_node()) for n in gm.graph.nodes]


def Node_insert_arg(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    g = fx.Graph()
    a = g.placeholder('a')
    b = g.call_function(torch.add, (a,))
    b.insert_arg(1, 5.0)
    g.output(b)
    new = fx.GraphModule(m, g)
    return [norm(new.code), new(x), norm(b.args)]


def Node_is_impure(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def f(x):
        x.add_(1)
        return torch.relu(x)
    t = fx.symbolic_trace(f)
    return [(n.name, n.is_impure()) for n in t.graph.nodes] + [(n.name, n.is_impure()) for n in gm.graph.nodes]


def Node_kwargs(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    out = [(n.name, norm(n.kwargs)) for n in gm.graph.nodes]
    s = next(n for n in gm.graph.nodes if n.target == 'sum')
    s.kwargs = {'dim': 0}
    gm.recompile()
    out += [norm(gm.code), gm(x)]
    return out


def Node_next(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [(n.name, n.next.name, n.next.op) for n in gm.graph.nodes]


def Node_normalized_arguments(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    add = next(iter(gm.graph.find_nodes(op='call_function', target=torch.add)))
    res = add.normalized_arguments(gm, arg_types=(torch.Tensor, torch.Tensor),
                                  normalize_to_only_use_kwargs=True)
    mod = next(n for n in gm.graph.nodes if n.target == 'lin')
    res2 = mod.normalized_arguments(gm)
    return [None if res is None else norm(res.kwargs), None if res2 is None else norm(res2)]


def Node_prepend(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    nodes = list(gm.graph.nodes)
    mean = next(n for n in nodes if n.target == 'mean')
    nodes[2].prepend(mean)
    gm.recompile()
    return [[n.name for n in gm.graph.nodes], norm(gm.code), gm(x)]


def Node_prev(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return [(n.name, n.prev.name, n.prev.op) for n in gm.graph.nodes]


def Node_replace_all_uses_with(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    act = next(n for n in gm.graph.nodes if n.target == 'act')
    changed = act.replace_all_uses_with(act.args[0])
    out = [[u.name for u in changed]]
    gm.recompile()
    out += [norm(gm.code), gm(x)]
    return out


def Node_replace_input_with(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    mul = next(n for n in gm.graph.nodes if n.op == 'call_function' and n.target is not torch.add)
    act = next(n for n in gm.graph.nodes if n.target == 'act')
    mul.replace_input_with(act, act.args[0])
    gm.recompile()
    return [norm(gm.code), gm(x)]


def Node_stack_trace(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    tracer = fx.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(m)
    traces = [(n.name, n.stack_trace is not None and 'in forward' in n.stack_trace) for n in graph.nodes]
    n = next(iter(graph.nodes))
    n.stack_trace = 'File "a.py", line 1, in f'
    return [traces, n.stack_trace, fx.GraphModule(m, graph)(x)]


def Node_update_arg(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    add = next(iter(gm.graph.find_nodes(op='call_function', target=torch.add)))
    add.update_arg(1, 1.5)
    gm.recompile()
    return [norm(gm.code), gm(x)]


def Node_update_kwarg(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    s = next(n for n in gm.graph.nodes if n.target == 'sum')
    s.update_kwarg('keepdim', True)
    gm.recompile()
    return [norm(gm.code), gm(x)]


def graph_map_arg(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    from torch.fx.graph import map_arg
    return [(n.name, map_arg(n.args, lambda a: a.name)) for n in gm.graph.nodes]


def node_map_arg(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    from torch.fx.node import map_arg
    return [(n.name, map_arg((n.args, n.kwargs), lambda a: a.op)) for n in gm.graph.nodes]


def node_map_aggregate(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    from torch.fx.node import map_aggregate
    return map_aggregate((x, [x + 1, {'k': x * 2}], 3, slice(0, 1)),
                         lambda v: v.relu() if isinstance(v, torch.Tensor) else v)


def node__type_repr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    from torch.fx.node import _type_repr
    return [_type_repr(type(x)), _type_repr(torch.Tensor), _type_repr(list[int]),
            _type_repr(tuple[torch.Tensor, ...]), _type_repr(type(m.lin.weight))]


def replace_pattern(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def f(x):
        return torch.relu(x + 1) * 2 + torch.relu(x * 3 + 1)
    def pattern(a):
        return torch.relu(a + 1)
    def replacement(a):
        return torch.sigmoid(a - 1)
    t = fx.symbolic_trace(f)
    matches = fx.replace_pattern(t, pattern, replacement)
    return [len(matches), norm(t.code), t(x)]


def symbolic_trace(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def f(x, flag):
        return x.relu() if flag else x.neg()
    t = fx.symbolic_trace(f, concrete_args={'flag': False})
    return [norm(gm.code), gm(x), norm(t.code), t(x, False)]


def Graph_print_tabular(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        gm.graph.print_tabular()
    return [' '.join(norm(line).split()) for line in buf.getvalue().splitlines()]


def Interpreter(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    return fx.Interpreter(gm).run(x)


def Interpreter_fetch_args_kwargs_from_env(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    interp = fx.Interpreter(gm, garbage_collect_values=False)
    interp.run(x)
    return [(n.name, interp.fetch_args_kwargs_from_env(n)) for n in gm.graph.nodes
            if n.op in ('call_function', 'call_method', 'call_module')]


def Interpreter_fetch_attr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    interp = fx.Interpreter(gm)
    return [interp.fetch_attr('lin.weight'), interp.fetch_attr('lin.bias'), interp.fetch_attr('scale')]


def Interpreter_get_attr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    interp = fx.Interpreter(gm)
    return [interp.get_attr('scale', (), {}), interp.get_attr('lin.bias', (), {})]


def Interpreter_map_nodes_to_values(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    interp = fx.Interpreter(gm, garbage_collect_values=False)
    interp.run(x)
    by_name = {n.name: n for n in gm.graph.nodes}
    return interp.map_nodes_to_values((by_name['lin'], [by_name['x'], {'k': by_name['act']}]),
                                      by_name['output'])


def Interpreter_output(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    class Halving(fx.Interpreter):
        def output(self, target, args, kwargs):
            return super().output(target, args, kwargs) / 2
    return [fx.Interpreter(gm).output('output', (x,), {}), Halving(gm).run(x)]


def Interpreter_placeholder(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    class Doubling(fx.Interpreter):
        def placeholder(self, target, args, kwargs):
            return super().placeholder(target, args, kwargs) * 2
    return [Doubling(gm).run(x), gm(x * 2)]


def Interpreter_run(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    interp = fx.Interpreter(gm, garbage_collect_values=False)
    res = interp.run(x)
    by_name = {n.name: n for n in gm.graph.nodes}
    again = interp.run(x + 1, initial_env={by_name['lin']: torch.zeros_like(res)[:, None].expand(2, 3)})
    return [res, again]


def Interpreter_run_node(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    class Shapes(fx.Interpreter):
        seen = []

        def run_node(self, n):
            res = super().run_node(n)
            self.seen.append((n.op, n.name, tuple(res.shape) if isinstance(res, torch.Tensor) else None))
            return res

    rec = Shapes(gm)
    res = rec.run(x)
    return [rec.seen, res]


def Transformer(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    new = fx.Transformer(gm).transform()
    return [norm(new.code), new(x)]


def Transformer_call_function(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    class Swap(fx.Transformer):
        def call_function(self, target, args, kwargs):
            return super().call_function(torch.sub if target is torch.add else target, args, kwargs)
    new = Swap(gm).transform()
    return [norm(new.code), new(x)]


def Transformer_call_module(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    class Sig(fx.Transformer):
        def call_module(self, target, args, kwargs):
            if target == 'act':
                return torch.sigmoid(args[0])
            return super().call_module(target, args, kwargs)
    new = Sig(gm).transform()
    return [norm(new.code), new(x)]


def Transformer_get_attr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    class Recording(fx.Transformer):
        seen = []

        def get_attr(self, target, args, kwargs):
            self.seen.append(norm(getattr(target, "__name__", target)))
            return super().get_attr(target, args, kwargs)

    rec = Recording(gm)
    new = rec.transform()
    return [rec.seen, norm(new.code), new(x)]


def Transformer_placeholder(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    class Scaled(fx.Transformer):
        def placeholder(self, target, args, kwargs):
            return super().placeholder(target, args, kwargs) * 2
    new = Scaled(gm).transform()
    return [norm(new.code), new(x), gm(x * 2)]


def Transformer_transform(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    new = fx.Transformer(gm).transform()
    return [type(new).__name__, node_list(norm, new.graph), new(x)]


def Proxy(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    tr = fx.Tracer()
    tr.graph = fx.Graph()
    p = fx.Proxy(tr.graph.placeholder('a'), tr)
    q = (p + 1).relu().sum(dim=-1) * p.shape[0]
    tr.graph.output(q.node)
    new = fx.GraphModule(torch.nn.Module(), tr.graph)
    return [norm(new.code), new(x)]


def Tracer(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    graph = fx.Tracer().trace(m)
    new = fx.GraphModule(m, graph)
    return [node_list(norm, graph), new(x)]


def Tracer_create_arg(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    tr = fx.Tracer()
    tr.trace(m)
    made = tr.create_arg((1, [2.0, 'a'], {'k': slice(1, 2)}, torch.float32))
    w = tr.create_arg(m.lin.weight)
    return [norm(made), norm(w.format_node()), norm(w.op), norm(w.target)]


def Tracer_is_leaf_module(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    class Deep(fx.Tracer):
        def is_leaf_module(self, mod, name):
            return False if isinstance(mod, torch.nn.Linear) else super().is_leaf_module(mod, name)
    tr = Deep()
    graph = tr.trace(m)
    new = fx.GraphModule(m, graph)
    return [fx.Tracer().is_leaf_module(m.lin, 'lin'), tr.is_leaf_module(m.lin, 'lin'),
            tr.is_leaf_module(m, ''), norm(new.code), new(x)]


def Tracer_iter(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def f(x):
        return [row * 2 for row in x]
    try:
        fx.symbolic_trace(f)
        said = 'traced'
    except fx.proxy.TraceError as exc:
        said = str(exc).splitlines()[0]
    tr = fx.Tracer()
    tr.graph = fx.Graph()
    p = tr.proxy(tr.graph.placeholder('a'))
    try:
        tr.iter(p)
        direct = 'iterated'
    except fx.proxy.TraceError as exc:
        direct = str(exc).splitlines()[0]
    return [said, direct, x.unbind(0)]


def Tracer_keys(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    tr = fx.Tracer()
    tr.graph = fx.Graph()
    p = tr.proxy(tr.graph.placeholder('d'))
    k = tr.keys(p)
    tr.graph.output(k.node)
    new = fx.GraphModule(torch.nn.Module(), tr.graph)
    return [norm(new.code), list(new({'a': x, 'b': x + 1}))]


def Tracer_path_of_module(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    tr = fx.Tracer()
    tr.trace(m)
    out = [tr.path_of_module(m.lin), tr.path_of_module(m.act)]
    try:
        tr.path_of_module(torch.nn.Linear(1, 1).to(device))
    except NameError as exc:
        out.append(norm(exc))
    return out


def Tracer_proxy(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    tr = fx.Tracer()
    tr.graph = fx.Graph()
    p = tr.proxy(tr.graph.placeholder('a'))
    q = torch.tanh(p) + p
    tr.graph.output(q.node)
    new = fx.GraphModule(torch.nn.Module(), tr.graph)
    return [type(p).__name__, norm(new.code), new(x)]


def Tracer_to_bool(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    def f(x):
        return x.relu() if x.sum() > 0 else x.neg()
    try:
        fx.symbolic_trace(f)
        said = 'traced'
    except fx.proxy.TraceError as exc:
        said = str(exc).splitlines()[0]
    return [said, f(x)]


def Tracer_trace(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    tr = fx.Tracer()
    graph = tr.trace(m)
    def f(x, k):
        return x * k
    g2 = fx.Tracer().trace(f, concrete_args={'k': 3})
    return [node_list(norm, graph), fx.GraphModule(m, graph)(x), node_list(norm, g2),
            fx.GraphModule(torch.nn.Module(), g2)(x, 3)]


def proxy_tensor_make_fx(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    def f(a):
        return torch.relu(a).sum(-1) * a.shape[0]
    real = make_fx(f)(x6)
    sym = make_fx(f, tracing_mode='symbolic')(x6)
    return [norm(real.code), real(x6), norm(sym.code), sym(x6)]


def proxy_tensor_get_proxy_mode(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    from torch.fx.experimental.proxy_tensor import get_proxy_mode
    seen = []
    def f(a):
        seen.append(type(get_proxy_mode()).__name__)
        return a.cos()
    g = make_fx(f)(x6)
    return [get_proxy_mode() is None, seen, g(x6)]


def proxy_tensor_handle_sym_dispatch(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    import operator

    from torch.fx.experimental.proxy_tensor import handle_sym_dispatch
    def f(a):
        n = handle_sym_dispatch(operator.mul, (a.shape[0], 2), {})
        return a.new_zeros(n) + a.sum()
    g = make_fx(f, tracing_mode='symbolic')(x6)
    return [norm(g.code), g(x6)]


def proxy_tensor_maybe_disable_thunkify(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    from torch.fx.experimental.proxy_tensor import (
        get_proxy_mode,
        maybe_disable_thunkify,
        maybe_enable_thunkify,
    )
    seen = []
    def f(a):
        # it acts only while make_fx traces (outside, there is no tracer to switch): within
        # thunkification, the size arithmetic below is traced at once (a node of the graph)
        # instead of left as a thunk nothing forces
        with maybe_enable_thunkify():
            with maybe_disable_thunkify():
                seen.append(get_proxy_mode().tracer.enable_thunkify)
                a.shape[0] * 2
            return (a * 2).exp().mean(0)
    g = make_fx(f, tracing_mode='symbolic')(x6)
    return [norm(g.code), g(x6), seen]


def proxy_tensor_maybe_enable_thunkify(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    from torch.fx.experimental.proxy_tensor import maybe_enable_thunkify
    def f(a):
        return (a * 2).exp().mean(0)
    with maybe_enable_thunkify():
        g = make_fx(f, tracing_mode='symbolic')(x6)
    return [norm(g.code), g(x6)]


def symbolic_shapes_CallMethodKey(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    k = S.CallMethodKey('size')
    return [str(k), k.name, tuple(k.get(x6))]


def symbolic_shapes_CallMethodKey_get(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [tuple(S.CallMethodKey('size').get(x6)), S.CallMethodKey('numel').get(x6),
            S.CallMethodKey('dim').get(x6)]


def symbolic_shapes_ConvertIntKey(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    k = S.ConvertIntKey()
    return [str(k), k.get(bool(x6.sum() > -1e9)), k.get(bool(x6.sum() < -1e9))]


def symbolic_shapes_ConvertIntKey_get(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    k = S.ConvertIntKey()
    return [k.get(bool(x6.isnan().any())), k.get(bool(x6.isfinite().all())), k.get(x6.shape[0] > 2)]


def symbolic_shapes_DivideByKey(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    k = S.DivideByKey(2)
    return [str(k), k.divisor, k.get(x6.numel())]


def symbolic_shapes_DivideByKey_get(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [S.DivideByKey(4).get(x6.numel()), S.DivideByKey(3).get(x6.shape[0])]


def symbolic_shapes_DimDynamic(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    ctx = S.StatelessSymbolicContext(dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.STATIC])
    half = FakeTensorMode(shape_env=S.ShapeEnv()).from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)
    return [[d.name for d in S.DimDynamic], text(half.shape), text(fake.shape)]


def symbolic_shapes_StatelessSymbolicContext(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    ctx = S.StatelessSymbolicContext(dynamic_sizes=[S.DimDynamic.STATIC, S.DimDynamic.DYNAMIC])
    t = FakeTensorMode(shape_env=S.ShapeEnv()).from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)
    return [text(t.shape), text(t.stride()), t.dtype, norm(t.device)]


def symbolic_shapes_StatefulSymbolicContext(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    env = S.ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    ctx = S.StatefulSymbolicContext(dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.DYNAMIC],
                                    tensor_source=LocalSource('y'))
    t1 = mode.from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)
    t2 = FakeTensorMode(shape_env=env).from_tensor(x6.clone(), source=LocalSource('y'), symbolic_context=ctx)
    return [text(t1.shape), text(t2.shape), len(ctx.shape_env_to_source_to_symbol_cache)]


def symbolic_shapes_SubclassSymbolicContext(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    ctx = S.SubclassSymbolicContext(dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.STATIC],
                                    tensor_source=LocalSource('y'), inner_contexts={})
    t = FakeTensorMode(shape_env=S.ShapeEnv()).from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)
    return [text(t.shape), ctx.inner_contexts, ctx.track_outer_size_stride]


def symbolic_shapes_StrictMinMaxConstraint(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    from torch.utils._sympy.value_ranges import ValueRanges
    c = S.StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(2, 16))
    env = S.ShapeEnv()
    ctx = S.StatelessSymbolicContext(dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.STATIC],
                                     constraint_sizes=[c, None])
    t = FakeTensorMode(shape_env=env).from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)
    return [text(t.shape), text(c.vr), c.warn_only, text(env.var_to_range)]


def symbolic_shapes_StrictMinMaxConstraint_render(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    from torch.utils._sympy.value_ranges import ValueRanges
    c = S.StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(2, x6.shape[0] * 2))
    return [c.render(LocalSource('x')), c.render(src)]


def symbolic_shapes_EqualityConstraint(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    from torch._dynamo.source import TensorProperty, TensorPropertySource
    a0 = TensorPropertySource(src, TensorProperty.SIZE, 0)
    a1 = TensorPropertySource(src, TensorProperty.SIZE, 1)
    eq = S.EqualityConstraint(warn_only=False, source_pairs=[(a0, a1)], derived_equalities=[],
                              phantom_symbols=[], relaxed_sources=set())
    try:
        shape_env.produce_guards([fake], [src], equalities_inputs=eq)
        said = 'no violation'
    except Exception as exc:
        said = type(exc).__name__ + ': ' + str(exc).splitlines()[0]
    return [eq.is_equal(a0, a1), eq.is_equal(a0, a0), said]


def symbolic_shapes_ShapeEnvSettings(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    a = S.ShapeEnv().settings
    b = S.ShapeEnv(duck_shape=False).settings
    return [a == shape_env.settings, a == b, a.duck_shape, b.duck_shape, a.specialize_zero_one]


def symbolic_shapes_canonicalize_bool_expr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [text(S.canonicalize_bool_expr(s0 > s1)), text(S.canonicalize_bool_expr(sympy.Ne(s0, 2 * s1))),
            text(S.canonicalize_bool_expr(sympy.Lt(s0 + 1, s1)))]


def symbolic_shapes_check_consistent(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    S.check_consistent(x6, x6.clone())
    res = []
    try:
        S.check_consistent(x6, x6[:3])
        res.append('consistent')
    except Exception as exc:
        res.append(type(exc).__name__)
    S.check_consistent(fake.shape[0], 6)
    return res


def symbolic_shapes_compute_unbacked_bindings(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        nz = fake.nonzero()
    return [text(S.compute_unbacked_bindings(shape_env, nz, peek=True)), text(nz.shape)]


def symbolic_shapes_constrain_range(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        nz = fake.nonzero()
    u0 = nz.shape[0]
    S.constrain_range(u0, min=1, max=24)
    return [text(shape_env.var_to_range[u0.node.expr]), text(u0)]


def symbolic_shapes_constrain_unify(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        nz = fake.nonzero()
    u0 = nz.shape[0]
    with fake_mode:
        nz2 = (fake * 2).nonzero()
    u1 = nz2.shape[0]
    S.constrain_unify(u0, u1)
    return [text(u0), text(u1), text(shape_env.replacements)]


def symbolic_shapes_guard_size_oblivious(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [S.guard_size_oblivious(fake.shape[0] == 1), S.guard_size_oblivious(fake.shape[1] >= 0),
            text(shape_env.format_guards())]


def symbolic_shapes_has_free_symbols(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [S.has_free_symbols(fake.shape[0]), S.has_free_symbols(x6.shape[0]), S.has_free_symbols(s0 + 1),
            S.has_free_symbols(sympy.Integer(3))]


def symbolic_shapes_is_accessor_node(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    def f(a):
        return a.sum(-1) * a.shape[0]
    g = make_fx(f, tracing_mode='symbolic')(x6)
    return [(n.name, S.is_accessor_node(n)) for n in g.graph.nodes]


def symbolic_shapes_is_concrete_bool(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [S.is_concrete_bool(True), S.is_concrete_bool(fake.shape[0] == 6), S.is_concrete_bool(bool(x6.sum() > 0))]


def symbolic_shapes_is_concrete_float(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [S.is_concrete_float(x6.sum().item()), S.is_concrete_float(fake.shape[0] * 1.5),
            S.is_concrete_float(float(x6.shape[0]))]


def symbolic_shapes_is_concrete_int(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [S.is_concrete_int(x6.shape[0]), S.is_concrete_int(fake.shape[0]), S.is_concrete_int(fake.shape[0] - fake.shape[0])]


def symbolic_shapes_is_symbolic(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [S.is_symbolic(fake.shape[0]), S.is_symbolic(x6.shape[0]), S.is_symbolic(fake.shape[0] * 0 + 3),
            S.is_symbolic(x6.sum().item())]


def symbolic_shapes_statically_known_true(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [S.statically_known_true(fake.shape[0] >= 0), S.statically_known_true(fake.shape[0] == 6),
            S.statically_known_true(fake.shape[0] == fake.shape[0])]


def symbolic_shapes_sym_eq(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [text(S.sym_eq(fake.shape, x6.shape)), S.sym_eq(x6.shape, (6, 4)), S.sym_eq([1, 2], [1, 3])]


def symbolic_shapes_ShapeEnv(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    env = S.ShapeEnv(duck_shape=True)
    t = FakeTensorMode(shape_env=env).from_tensor(x6, source=LocalSource('y'))
    return [text(t.shape), text(env.backed_var_to_val), len(env.guards)]


def symbolic_shapes_ShapeEnv_add_backed_var_to_val(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    y = sympy.Symbol('s99', integer=True, positive=True)
    shape_env.add_backed_var_to_val(y, x6.shape[1] * 2)
    return [text(shape_env.backed_var_to_val[y]), text(shape_env.backed_var_to_val)]


def symbolic_shapes_ShapeEnv_bind_symbols(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return text(shape_env.bind_symbols([fake], [x6]))


def symbolic_shapes_ShapeEnv_bound_sympy(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        nz = fake.nonzero()
    u0 = nz.shape[0]
    return [text(shape_env.bound_sympy(s0 * 2 + s1)), text(shape_env.bound_sympy(u0.node.expr)),
            text(shape_env.bound_sympy(u0.node.expr, size_oblivious=True))]


def symbolic_shapes_ShapeEnv_check_equal(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    def build():
        env = S.ShapeEnv()
        FakeTensorMode(shape_env=env).from_tensor(x6, source=LocalSource('y'))
        return env
    a, b = build(), build()
    a.check_equal(b)
    c = S.ShapeEnv(duck_shape=False)
    try:
        a.check_equal(c)
        said = 'equal'
    except Exception as exc:
        said = type(exc).__name__
    return ['equal', said]


def symbolic_shapes_ShapeEnv_cleanup(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        y = (fake * 2).sum(0)
    shape_env.cleanup()
    return [text(y.shape), len(shape_env.guards), text(shape_env.backed_var_to_val)]


def symbolic_shapes_ShapeEnv_create_symbol(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    env = S.ShapeEnv()
    a = env.create_symbol(x6.shape[0], LocalSource('n'), dynamic_dim=S.DimDynamic.DYNAMIC)
    b = env.create_symbol(x6.shape[1], LocalSource('k'), dynamic_dim=S.DimDynamic.STATIC)
    c = env.create_symbol(1, LocalSource('one'), dynamic_dim=S.DimDynamic.DYNAMIC)
    return [text(a), text(b), text(c), text(env.backed_var_to_val)]


def symbolic_shapes_ShapeEnv_create_symbolic_sizes_strides_storage_offset(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    env = S.ShapeEnv()
    sizes, strides, offset = env.create_symbolic_sizes_strides_storage_offset(
        x6[1:], LocalSource('y'), symbolic_context=S.StatelessSymbolicContext(
            dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.DYNAMIC]))
    return [text(sizes), text(strides), text(offset)]


def symbolic_shapes_ShapeEnv_create_symboolnode(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    b = shape_env.create_symboolnode(sympy.Gt(s0, s1))
    return [type(b).__name__, text(b), bool(b)]


def symbolic_shapes_ShapeEnv_create_symfloatnode(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    y = shape_env.create_symbol(1.5, LocalSource('f'), dynamic_dim=S.DimDynamic.DYNAMIC)
    f = shape_env.create_symfloatnode(y, hint=x6.shape[0] / 4, source=LocalSource('f'))
    return [type(f).__name__, text(f), float(f)]


def symbolic_shapes_ShapeEnv_create_symintnode(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    i = shape_env.create_symintnode(s0 * s1, hint=x6.numel())
    return [type(i).__name__, text(i), int(i), shape_env.create_symintnode(sympy.Integer(5), hint=None)]


def symbolic_shapes_ShapeEnv_create_unbacked_symbool(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    b = shape_env.create_unbacked_symbool()
    (u,) = b.node.expr.free_symbols
    return [type(b).__name__, text(b), text(shape_env.var_to_range[u])]


def symbolic_shapes_ShapeEnv_deserialize_symexpr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    e = shape_env.deserialize_symexpr(f'{s0} * 2 + {s1}')
    return [type(e).__name__, text(e), int(e)]


def symbolic_shapes_ShapeEnv_evaluate_guards_expression(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        torch._check(fake.shape[0] > 2)
    code = shape_env.produce_guards_expression([fake])
    return [code is not None, shape_env.evaluate_guards_expression(code, [x6]),
            shape_env.evaluate_guards_expression(code, [x6[:2]])]


def symbolic_shapes_ShapeEnv_evaluate_guards_for_args(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        torch._check(fake.shape[0] > 2)
    return [shape_env.evaluate_guards_for_args([fake], [x6]),
            shape_env.evaluate_guards_for_args([fake], [x6[:2]])]


def symbolic_shapes_ShapeEnv_evaluate_sym_node(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    n = (fake.shape[0] > 3).node
    return [text(shape_env.evaluate_sym_node(n)), text(shape_env.format_guards())]


def symbolic_shapes_ShapeEnv_evaluate_symexpr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [shape_env.evaluate_symexpr(f'{s0} * {s1} + 1'), x6.numel() + 1]


def symbolic_shapes_ShapeEnv_format_guards(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        if fake.shape[0] > 3:
            pass
        torch._check(fake.shape[1] == 4)
    return [text(shape_env.format_guards()), text(shape_env.format_guards(verbose=False))]


def symbolic_shapes_ShapeEnv_freeze(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    shape_env.freeze()
    try:
        bool(fake.shape[0] > 3)
        said = 'guarded'
    except Exception as exc:
        said = type(exc).__name__
    return [shape_env.frozen, said, text(shape_env.format_guards())]


def symbolic_shapes_ShapeEnv_freeze_runtime_asserts(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        nz = fake.nonzero()
    shape_env.freeze_runtime_asserts()
    return [shape_env.runtime_asserts_frozen, text(nz.shape)]


def symbolic_shapes_ShapeEnv_get_axioms(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        torch._check(fake.shape[0] > 2)
        torch._check(fake.shape[0] != fake.shape[1])
    return sorted(text(a) for a in shape_env.get_axioms())


def symbolic_shapes_ShapeEnv_get_implications(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return sorted(text(i) for i in shape_env.get_implications(sympy.Eq(s0, s1)))


def symbolic_shapes_ShapeEnv_produce_guards_expression(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        torch._check(fake.shape[0] > 2)
        torch._check(fake.shape[1] < 8)
    return text(shape_env.produce_guards_expression([fake]))


def symbolic_shapes_ShapeEnv_produce_guards_verbose(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        torch._check(fake.shape[0] > 2)
    res = shape_env.produce_guards_verbose([fake], [src])
    return [sorted(text(e) for e in res[0].exprs), len(res)]


def symbolic_shapes_ShapeEnv_replace(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        torch._check(fake.shape[1] == fake.shape[0] - 2)
    return [text(shape_env.replace(s0 + s1)), text(shape_env.replacements)]


def symbolic_shapes_ShapeEnv_simplify(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with fake_mode:
        torch._check(fake.shape[1] == 4)
    return [text(shape_env.simplify(s0 * s1 + s1 - 4)), text(shape_env.simplify(sympy.floor(s0 / 1)))]


def symbolic_shapes_ShapeEnv_size_hint(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    return [text(shape_env.size_hint(s0 * s1)), text(shape_env.size_hint(s0 + 1)), x6.numel()]


def symbolic_shapes_ShapeEnv_suppress_guards(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    with shape_env.suppress_guards():
        big = bool(fake.shape[0] > 3)
    quiet = len(shape_env.guards)
    big2 = bool(fake.shape[0] > 3)
    return [big, quiet, big2, len(shape_env.guards)]


def symbolic_shapes_DimConstraints_solve(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    from torch._dynamo.source import TensorProperty, TensorPropertySource
    size_src = [TensorPropertySource(src, TensorProperty.SIZE, i) for i in (0, 1)]
    dc = S.DimConstraints({s0: [size_src[0]], s1: [size_src[1]]}, shape_env.backed_var_to_val,
                          {s0, s1}, {})
    dc.add(sympy.Ge(s0, 2))
    dc.add(sympy.Le(s0, 2 * x6.shape[1]))
    dc.solve()
    return [sorted(dc._static_results), sorted(dc._dynamic_results)]


def symbolic_shapes_DimConstraints_forced_specializations(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    from torch._dynamo.source import TensorProperty, TensorPropertySource
    size_src = [TensorPropertySource(src, TensorProperty.SIZE, i) for i in (0, 1)]
    dc = S.DimConstraints({s0: [size_src[0]], s1: [size_src[1]]}, shape_env.backed_var_to_val,
                          {s0, s1}, {})
    dc.add(sympy.Eq(s0, x6.shape[0]))
    dc.add(sympy.Ge(s1, 2))
    dc.solve()
    return [text(dc.forced_specializations()), sorted(dc._dynamic_results)]


def symbolic_shapes_DimConstraints_rewrite_with_congruences(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    from torch._dynamo.source import TensorProperty, TensorPropertySource
    size_src = [TensorPropertySource(src, TensorProperty.SIZE, i) for i in (0, 1)]
    dc = S.DimConstraints({s0: [size_src[0]], s1: [size_src[1]]}, shape_env.backed_var_to_val,
                          {s0, s1}, {})
    dc.add(sympy.Eq(sympy.Mod(s0, 3), 0))
    return [text(dc.rewrite_with_congruences(s0, sympy.floor(s0 / 3) + sympy.Mod(s0, 3))),
            text(dc.rewrite_with_congruences(s0, sympy.Mod(s0 + 1, 3)))]


def symbolic_shapes_DimConstraints_prettify_results(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    import inspect

    from torch.export import Dim
    def f(x):
        return x
    from torch._dynamo.source import TensorProperty, TensorPropertySource
    size_src = [TensorPropertySource(src, TensorProperty.SIZE, i) for i in (0, 1)]
    dc = S.DimConstraints({s0: [size_src[0]], s1: [size_src[1]]}, shape_env.backed_var_to_val,
                          {s0, s1}, {size_src[0].name: 'dx', size_src[1].name: 'dy'})
    dc.add(sympy.Ge(s0, 2))
    dc.add(sympy.Le(s0, 2 * x6.shape[1]))
    dc.add(sympy.Eq(s1, x6.shape[1]))
    dc.solve()
    forced = dc.forced_specializations()
    return [text(forced), dc.prettify_results(inspect.signature(f), {'x': {0: Dim('dx'), 1: Dim('dy')}},
                                              None, forced)]


def symbolic_shapes_PropagateUnbackedSymInts_call_module(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    interp = S.PropagateUnbackedSymInts(gm)
    return [interp.call_module('lin', (x,), {}), interp.call_module('act', (x - 0.5,), {})]


def symbolic_shapes_PropagateUnbackedSymInts_fetch_args_kwargs_from_env(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    def f(a):
        return a.nonzero().shape[0] + a.sum(-1)
    g = make_fx(f, tracing_mode='symbolic')(x6)
    ins = [n.meta['val'] for n in g.graph.find_nodes(op='placeholder')]
    interp = S.PropagateUnbackedSymInts(g, garbage_collect_values=False)
    with ins[0].fake_mode:
        interp.run(*ins)
    return [(n.name, text(interp.fetch_args_kwargs_from_env(n)[0])) for n in g.graph.nodes
            if n.op == 'call_function'] + [g(x6)]


def symbolic_shapes_PropagateUnbackedSymInts_fetch_attr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    interp = S.PropagateUnbackedSymInts(gm)
    return [interp.fetch_attr('lin.weight'), interp.fetch_attr('scale')]


def symbolic_shapes_PropagateUnbackedSymInts_get_attr(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    interp = S.PropagateUnbackedSymInts(gm)
    return [interp.get_attr('scale', (), {}), interp.get_attr('lin.bias', (), {})]


def symbolic_shapes_PropagateUnbackedSymInts_map_nodes_to_values(device, dtype):
    m, x, gm, norm = traced(device, dtype)
    x6, shape_env, fake_mode, src, fake, s0, s1, text = symbolic(device, dtype, norm)
    def f(a):
        return a.nonzero().shape[0] + a.sum(-1)
    g = make_fx(f, tracing_mode='symbolic')(x6)
    ins = [n.meta['val'] for n in g.graph.find_nodes(op='placeholder')]
    interp = S.PropagateUnbackedSymInts(g, garbage_collect_values=False)
    with ins[0].fake_mode:
        interp.run(*ins)
    nodes = [n for n in g.graph.nodes if n.op == 'call_function']
    return [text(v) for v in interp.map_nodes_to_values(tuple(nodes), nodes[-1])] + [g(x6)]


@fx.wrap
def clamp_sum(t):
    return t.clamp(min=0).sum(-1)


def wrap(device, dtype):
    # fx.wrap must be called at a module's top level: clamp_sum above is wrapped there
    m, x, gm, norm = traced(device, dtype)

    def f(x):
        return clamp_sum(x * 2) + 1
    t = fx.symbolic_trace(f)
    return [[norm(n.target) for n in t.graph.nodes if n.op == "call_function"], t(x)]


def Interpreter_recording(device, dtype, api):
    """``Interpreter.call_function`` / ``call_method`` / ``call_module``: a subclass whose
    override of that method records each target and calls the base class."""
    m, x, gm, norm = traced(device, dtype)
    method = api.rsplit(".", 1)[-1]
    seen = []

    def override(self, target, args, kwargs):
        seen.append(norm(getattr(target, "__name__", target)))
        return getattr(fx.Interpreter, method)(self, target, args, kwargs)
    Recording = type("Recording", (fx.Interpreter,), {method: override})
    rec = Recording(gm)
    res = rec.run(x)
    return [seen, res]


def record_call_module(self, norm, m, forward, args, kwargs):
    return self.path_of_module(m)


def record_create_args_for_root(self, norm, root_fn, is_module, concrete_args=None):
    return (is_module, concrete_args)


def record_target(self, norm, kind, target, args, kwargs, name=None, type_expr=None):
    return (kind, norm(getattr(target, "__name__", target)))


def record_getattr(self, norm, attr, attr_val, parameter_proxy_cache):
    return (attr, type(attr_val).__name__)


# what a Tracer method's override records of its arguments
TRACER_RECORDS = {"call_module": record_call_module, "create_args_for_root": record_create_args_for_root,
                  "create_node": record_target, "create_proxy": record_target, "getattr": record_getattr}


def Tracer_recording(device, dtype, api):
    """``Tracer.call_module`` / ``create_args_for_root`` / ``create_node`` / ``create_proxy``
    / ``getattr``: a subclass whose override of that method records what it was asked
    (``TRACER_RECORDS``) and calls the base class; the trace is run.

    Tracing is host work on the device module: the module is not traced beforehand (the
    API would run in the scaffolding too), and the traced module is run on a CPU copy of
    itself, so the GraphModule's own device work (Linear's addmm) is not taken for the
    tracer's (issue 48 item 5: Tracer.getattr was filed device-state from it). What the
    graph computes is still compared: a wrong trace gives another graph, another output."""
    m = Tiny().to(dtype).to(device)
    x = torch.randn(2, 4, dtype=dtype).to(device)
    norm = normaliser(device)
    method = api.rsplit(".", 1)[-1]
    record = TRACER_RECORDS[method]
    seen = []

    def override(self, *args, **kwargs):
        seen.append(record(self, norm, *args, **kwargs))
        return getattr(fx.Tracer, method)(self, *args, **kwargs)
    Recording = type("Recording", (fx.Tracer,), {method: override})
    tr = Recording()
    graph = tr.trace(m)
    new = fx.GraphModule(m, graph)
    return [seen, norm(new.code), new.cpu()(x.cpu()).to(x.device)]



# --- the table ----------------------------------------------------------------------------

CASES = (
    Case(F + "Graph", Graph),
    Case(F + "Graph.__init__", Graph___init__),
    Case(F + "Graph.call_function", Graph_call_function),
    Case(F + "Graph.call_method", Graph_call_method),
    Case(F + "Graph.call_module", Graph_call_module),
    Case(F + "Graph.create_node", Graph_create_node),
    Case(F + "Graph.eliminate_dead_code", Graph_eliminate_dead_code),
    Case(F + "Graph.erase_node", Graph_erase_node),
    Case(F + "Graph.find_nodes", Graph_find_nodes),
    Case(F + "Graph.get_attr", Graph_get_attr),
    Case(F + "Graph.graph_copy", Graph_graph_copy),
    Case(F + "Graph.inserting_after", Graph_inserting_after),
    Case(F + "Graph.inserting_before", Graph_inserting_before),
    Case(F + "Graph.lint", Graph_lint),
    Case(F + "Graph.node_copy", Graph_node_copy),
    Case(F + "Graph.nodes", Graph_nodes),
    Case(F + "Graph.on_generate_code", Graph_on_generate_code),
    Case(F + "Graph.output", Graph_output),
    Case(F + "Graph.output_node", Graph_output_node),
    Case(F + "Graph.placeholder", Graph_placeholder),
    Case(F + "Graph.process_inputs", Graph_process_inputs),
    Case(F + "Graph.process_outputs", Graph_process_outputs),
    Case(F + "Graph.python_code", Graph_python_code),
    Case(F + "Graph.set_codegen", Graph_set_codegen),
    Case(F + "GraphModule", GraphModule),
    Case(F + "GraphModule.__init__", GraphModule___init__),
    Case(F + "GraphModule.add_submodule", GraphModule_add_submodule),
    Case(F + "GraphModule.code", GraphModule_code),
    Case(F + "GraphModule.delete_all_unused_submodules", GraphModule_delete_all_unused_submodules),
    Case(F + "GraphModule.delete_submodule", GraphModule_delete_submodule),
    Case(F + "GraphModule.graph", GraphModule_graph),
    Case(F + "GraphModule.print_readable", GraphModule_print_readable),
    Case(F + "GraphModule.recompile", GraphModule_recompile),
    Case(F + "GraphModule.to_folder", GraphModule_to_folder),
    Case(F + "Node", Node),
    Case(F + "Node.all_input_nodes", Node_all_input_nodes),
    Case(F + "Node.append", Node_append),
    Case(F + "Node.args", Node_args),
    Case(F + "Node.format_node", Node_format_node),
    Case(F + "Node.insert_arg", Node_insert_arg),
    Case(F + "Node.is_impure", Node_is_impure),
    Case(F + "Node.kwargs", Node_kwargs),
    Case(F + "Node.next", Node_next),
    Case(F + "Node.normalized_arguments", Node_normalized_arguments),
    Case(F + "Node.prepend", Node_prepend),
    Case(F + "Node.prev", Node_prev),
    Case(F + "Node.replace_all_uses_with", Node_replace_all_uses_with),
    Case(F + "Node.replace_input_with", Node_replace_input_with),
    Case(F + "Node.stack_trace", Node_stack_trace),
    Case(F + "Node.update_arg", Node_update_arg),
    Case(F + "Node.update_kwarg", Node_update_kwarg),
    Case(F + "graph.map_arg", graph_map_arg),
    Case(F + "node.map_arg", node_map_arg),
    Case(F + "node.map_aggregate", node_map_aggregate),
    Case(F + "node._type_repr", node__type_repr),
    Case(F + "replace_pattern", replace_pattern),
    Case(F + "symbolic_trace", symbolic_trace),
    Case(F + "wrap", wrap),
    Case(F + "Interpreter", Interpreter),
    Case(F + "Interpreter.call_function", Interpreter_recording, aliases=(F + "Interpreter.call_method", F + "Interpreter.call_module",)),
    Case(F + "Interpreter.fetch_args_kwargs_from_env", Interpreter_fetch_args_kwargs_from_env),
    Case(F + "Interpreter.fetch_attr", Interpreter_fetch_attr),
    Case(F + "Interpreter.get_attr", Interpreter_get_attr),
    Case(F + "Interpreter.map_nodes_to_values", Interpreter_map_nodes_to_values),
    Case(F + "Interpreter.output", Interpreter_output),
    Case(F + "Interpreter.placeholder", Interpreter_placeholder),
    Case(F + "Interpreter.run", Interpreter_run),
    Case(F + "Interpreter.run_node", Interpreter_run_node),
    Case(F + "Transformer", Transformer),
    Case(F + "Transformer.call_function", Transformer_call_function),
    Case(F + "Transformer.call_module", Transformer_call_module),
    Case(F + "Transformer.get_attr", Transformer_get_attr),
    Case(F + "Transformer.placeholder", Transformer_placeholder),
    Case(F + "Transformer.transform", Transformer_transform),
    Case(F + "Proxy", Proxy),
    Case(F + "Tracer", Tracer),
    Case(F + "Tracer.call_module", Tracer_recording, aliases=(F + "Tracer.create_args_for_root", F + "Tracer.create_node", F + "Tracer.create_proxy", F + "Tracer.getattr",)),
    Case(F + "Tracer.create_arg", Tracer_create_arg),
    Case(F + "Tracer.is_leaf_module", Tracer_is_leaf_module),
    Case(F + "Tracer.iter", Tracer_iter),
    Case(F + "Tracer.keys", Tracer_keys),
    Case(F + "Tracer.path_of_module", Tracer_path_of_module),
    Case(F + "Tracer.proxy", Tracer_proxy),
    Case(F + "Tracer.to_bool", Tracer_to_bool),
    Case(F + "Tracer.trace", Tracer_trace),
    Case(P + "make_fx", proxy_tensor_make_fx),
    Case(P + "get_proxy_mode", proxy_tensor_get_proxy_mode),
    Case(P + "handle_sym_dispatch", proxy_tensor_handle_sym_dispatch),
    Case(P + "maybe_disable_thunkify", proxy_tensor_maybe_disable_thunkify),
    Case(P + "maybe_enable_thunkify", proxy_tensor_maybe_enable_thunkify),
    Case(SS + "CallMethodKey", symbolic_shapes_CallMethodKey),
    Case(SS + "CallMethodKey.get", symbolic_shapes_CallMethodKey_get),
    Case(SS + "ConvertIntKey", symbolic_shapes_ConvertIntKey),
    Case(SS + "ConvertIntKey.get", symbolic_shapes_ConvertIntKey_get),
    Case(SS + "DivideByKey", symbolic_shapes_DivideByKey),
    Case(SS + "DivideByKey.get", symbolic_shapes_DivideByKey_get),
    Case(SS + "DimDynamic", symbolic_shapes_DimDynamic),
    Case(SS + "StatelessSymbolicContext", symbolic_shapes_StatelessSymbolicContext),
    Case(SS + "StatefulSymbolicContext", symbolic_shapes_StatefulSymbolicContext),
    Case(SS + "SubclassSymbolicContext", symbolic_shapes_SubclassSymbolicContext),
    Case(SS + "StrictMinMaxConstraint", symbolic_shapes_StrictMinMaxConstraint),
    Case(SS + "StrictMinMaxConstraint.render", symbolic_shapes_StrictMinMaxConstraint_render),
    Case(SS + "EqualityConstraint", symbolic_shapes_EqualityConstraint),
    Case(SS + "ShapeEnvSettings", symbolic_shapes_ShapeEnvSettings),
    Case(SS + "canonicalize_bool_expr", symbolic_shapes_canonicalize_bool_expr),
    Case(SS + "check_consistent", symbolic_shapes_check_consistent),
    Case(SS + "compute_unbacked_bindings", symbolic_shapes_compute_unbacked_bindings),
    Case(SS + "constrain_range", symbolic_shapes_constrain_range),
    Case(SS + "constrain_unify", symbolic_shapes_constrain_unify),
    Case(SS + "guard_size_oblivious", symbolic_shapes_guard_size_oblivious),
    Case(SS + "has_free_symbols", symbolic_shapes_has_free_symbols),
    Case(SS + "is_accessor_node", symbolic_shapes_is_accessor_node),
    Case(SS + "is_concrete_bool", symbolic_shapes_is_concrete_bool),
    Case(SS + "is_concrete_float", symbolic_shapes_is_concrete_float),
    Case(SS + "is_concrete_int", symbolic_shapes_is_concrete_int),
    Case(SS + "is_symbolic", symbolic_shapes_is_symbolic),
    Case(SS + "statically_known_true", symbolic_shapes_statically_known_true),
    Case(SS + "sym_eq", symbolic_shapes_sym_eq),
    Case(SS + "ShapeEnv", symbolic_shapes_ShapeEnv),
    Case(SE + "add_backed_var_to_val", symbolic_shapes_ShapeEnv_add_backed_var_to_val),
    Case(SE + "bind_symbols", symbolic_shapes_ShapeEnv_bind_symbols),
    Case(SE + "bound_sympy", symbolic_shapes_ShapeEnv_bound_sympy),
    Case(SE + "check_equal", symbolic_shapes_ShapeEnv_check_equal),
    Case(SE + "cleanup", symbolic_shapes_ShapeEnv_cleanup),
    Case(SE + "create_symbol", symbolic_shapes_ShapeEnv_create_symbol),
    Case(SE + "create_symbolic_sizes_strides_storage_offset", symbolic_shapes_ShapeEnv_create_symbolic_sizes_strides_storage_offset),
    Case(SE + "create_symboolnode", symbolic_shapes_ShapeEnv_create_symboolnode),
    Case(SE + "create_symfloatnode", symbolic_shapes_ShapeEnv_create_symfloatnode),
    Case(SE + "create_symintnode", symbolic_shapes_ShapeEnv_create_symintnode),
    Case(SE + "create_unbacked_symbool", symbolic_shapes_ShapeEnv_create_unbacked_symbool),
    Case(SE + "deserialize_symexpr", symbolic_shapes_ShapeEnv_deserialize_symexpr),
    Case(SE + "evaluate_guards_expression", symbolic_shapes_ShapeEnv_evaluate_guards_expression),
    Case(SE + "evaluate_guards_for_args", symbolic_shapes_ShapeEnv_evaluate_guards_for_args),
    Case(SE + "evaluate_sym_node", symbolic_shapes_ShapeEnv_evaluate_sym_node),
    Case(SE + "evaluate_symexpr", symbolic_shapes_ShapeEnv_evaluate_symexpr),
    Case(SE + "format_guards", symbolic_shapes_ShapeEnv_format_guards),
    Case(SE + "freeze", symbolic_shapes_ShapeEnv_freeze),
    Case(SE + "freeze_runtime_asserts", symbolic_shapes_ShapeEnv_freeze_runtime_asserts),
    Case(SE + "get_axioms", symbolic_shapes_ShapeEnv_get_axioms),
    Case(SE + "get_implications", symbolic_shapes_ShapeEnv_get_implications),
    Case(SE + "produce_guards_expression", symbolic_shapes_ShapeEnv_produce_guards_expression),
    Case(SE + "produce_guards_verbose", symbolic_shapes_ShapeEnv_produce_guards_verbose),
    Case(SE + "replace", symbolic_shapes_ShapeEnv_replace),
    Case(SE + "simplify", symbolic_shapes_ShapeEnv_simplify),
    Case(SE + "size_hint", symbolic_shapes_ShapeEnv_size_hint),
    Case(SE + "suppress_guards", symbolic_shapes_ShapeEnv_suppress_guards),
    Case(SS + "DimConstraints.solve", symbolic_shapes_DimConstraints_solve),
    Case(SS + "DimConstraints.forced_specializations", symbolic_shapes_DimConstraints_forced_specializations),
    Case(SS + "DimConstraints.rewrite_with_congruences", symbolic_shapes_DimConstraints_rewrite_with_congruences),
    Case(SS + "DimConstraints.prettify_results", symbolic_shapes_DimConstraints_prettify_results),
    Case(SS + "PropagateUnbackedSymInts.call_module", symbolic_shapes_PropagateUnbackedSymInts_call_module),
    Case(SS + "PropagateUnbackedSymInts.fetch_args_kwargs_from_env", symbolic_shapes_PropagateUnbackedSymInts_fetch_args_kwargs_from_env),
    Case(SS + "PropagateUnbackedSymInts.fetch_attr", symbolic_shapes_PropagateUnbackedSymInts_fetch_attr),
    Case(SS + "PropagateUnbackedSymInts.get_attr", symbolic_shapes_PropagateUnbackedSymInts_get_attr),
    Case(SS + "PropagateUnbackedSymInts.map_nodes_to_values", symbolic_shapes_PropagateUnbackedSymInts_map_nodes_to_values),
)

# APIs of these namespaces left out here, and why (the source's why_not says it)
EXCLUDED = (
    Excluded(F + "passes.regional_inductor.regional_inductor", "compiles graph regions with torch.compile's inductor backend, which needs a compiler backend for the device: the emulated device has none (torch.compile backends are not emulated), so a row would measure the emulator, not the device"),
    Excluded(SE + "set_unbacked_var_to_val", 'not in torch 2.13.0: ShapeEnv has no set_unbacked_var_to_val (the docs list a name torch does not have)'),
)

TABULATE = ("needs the optional package tabulate (pip install 'torchparity[fx]'), not installed "
            "here: the CPU cannot run it either")


def rows():
    """The table: ``Graph.print_tabular`` needs the optional package tabulate (the ``fx``
    extra), a case where it is installed, an exclusion where it is not."""
    if importlib.util.find_spec("tabulate") is not None:
        tabular = Case(F + "Graph.print_tabular", Graph_print_tabular)
    else:
        tabular = Excluded(F + "Graph.print_tabular", TABULATE)
    return CASES + (tabular,) + EXCLUDED

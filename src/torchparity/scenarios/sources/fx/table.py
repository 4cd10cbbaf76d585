"""The cases of the ``fx`` source for ``torch.fx.Graph``, ``GraphModule``, ``Node`` and the
module-level helpers: one small code block per API (the block is also the snippet).

Each block runs with ``torch``, ``device``, ``dtype`` and ``PRELUDE`` in scope and leaves
its answer in ``out``. ``PRELUDE`` builds ``Tiny`` (a Linear, a ReLU submodule, a buffer,
a method call and a function call) on the CPU in the run's dtype, moves it with
``.to(device)``, draws its input ``x`` on the CPU and moves it, and traces it (``gm``).
A block returns what the API produced: the generated code or node list (through
``norm``: device names and object addresses become placeholders, so the same graph gives
the same text on every device), flags, and the outputs of the (edited) graph run on the
device's tensors.
"""

from __future__ import annotations

from typing import Dict

PRELUDE = '''\
import re
import torch.fx as fx

def norm(text):
    """device-free, address-free text"""
    text = str(text)
    kind = torch.device(device).type
    text = re.sub(r"\\b" + kind + r"(:\\d+)?\\b", "<dev>", text)
    return re.sub(r"0x[0-9a-fA-F]+", "0x?", text)

def node_list(graph):
    return [norm(n.format_node()) for n in graph.nodes]

class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.act = torch.nn.ReLU()
        self.register_buffer("scale", torch.full((3,), 2.0))

    def forward(self, x):
        y = self.act(self.lin(x)) * self.scale
        return torch.add(y.sum(dim=-1), x.mean())

m = Tiny().to(dtype).to(device)
x = torch.randn(2, 4, dtype=dtype).to(device)
gm = fx.symbolic_trace(m)
'''

# one new graph built by hand: a placeholder, the nodes the block adds, an output
NEW = "g = fx.Graph()\na = g.placeholder('a')\n"
RUN = "new = fx.GraphModule(m, g)\nout = [norm(new.code), new(x)]"
EDIT = "gm.recompile()\nout = [norm(gm.code), gm(x)]"

F = "torch.fx."

CASES: Dict[str, str] = {
    # --- Graph ---
    F + "Graph": NEW + "b = g.call_function(torch.relu, (a,))\ng.output(b)\n" + RUN,
    F + "Graph.__init__": (
        "g = fx.Graph(owning_module=gm, tracer_cls=fx.Tracer)\n"
        "owned = g.owning_module is gm\n"
        "env = {}\nres = g.graph_copy(gm.graph, env)\ng.output(res)\n"
        "new = fx.GraphModule(gm, g)\nout = [owned, g.owning_module is new, norm(new.code), new(x)]"),
    F + "Graph.call_function": (
        NEW + "b = g.call_function(torch.add, (a, a), {'alpha': 2})\ng.output(b)\n" + RUN),
    F + "Graph.call_method": NEW + "b = g.call_method('sum', (a,), {'dim': -1})\ng.output(b)\n" + RUN,
    F + "Graph.call_module": NEW + "b = g.call_module('lin', (a,))\ng.output(b)\n" + RUN,
    F + "Graph.create_node": (
        NEW + "b = g.create_node('call_function', torch.mul, (a, a), name='square')\n"
        "c = g.create_node('call_method', 'mean', (b,))\ng.output(c)\n" + RUN),
    F + "Graph.eliminate_dead_code": (
        "def f(x):\n    unused = x * 3\n    return x.relu()\n"
        "t = fx.symbolic_trace(f)\nbefore = len(t.graph.nodes)\n"
        "changed = t.graph.eliminate_dead_code()\nt.recompile()\n"
        "out = [changed, before, len(t.graph.nodes), norm(t.code), t(x)]"),
    F + "Graph.erase_node": (
        "relu = next(n for n in gm.graph.nodes if n.target == 'act')\n"
        "relu.replace_all_uses_with(relu.args[0])\ngm.graph.erase_node(relu)\n" + EDIT),
    F + "Graph.find_nodes": (
        "out = [[n.name for n in gm.graph.find_nodes(op='call_module')],\n"
        "       [n.name for n in gm.graph.find_nodes(op='call_function', target=torch.add)],\n"
        "       [n.name for n in gm.graph.find_nodes(op='placeholder')]]"),
    F + "Graph.get_attr": (
        NEW + "w = g.get_attr('scale')\nb = g.call_function(torch.mul, (g.call_module('lin', (a,)), w))\n"
        "g.output(b)\n" + RUN.replace("new(x)", "new(x), norm(w.format_node())")),
    F + "Graph.graph_copy": (
        "g = fx.Graph()\nenv = {}\nres = g.graph_copy(gm.graph, env)\ng.output(res)\n"
        "new = fx.GraphModule(gm, g)\n"
        "out = [sorted(n.name for n in env), norm(new.code), new(x)]"),
    F + "Graph.inserting_after": (
        "lin = next(n for n in gm.graph.nodes if n.target == 'lin')\n"
        "with gm.graph.inserting_after(lin):\n"
        "    neg = gm.graph.call_function(torch.neg, (lin,))\n"
        "lin.replace_all_uses_with(neg, delete_user_cb=lambda u: u is not neg)\n" + EDIT),
    F + "Graph.inserting_before": (
        "res = gm.graph.output_node()\n"
        "with gm.graph.inserting_before(res):\n"
        "    half = gm.graph.call_function(torch.mul, (res.args[0], 0.5))\n"
        "res.args = (half,)\n" + EDIT),
    F + "Graph.lint": (
        "ok = gm.graph.lint()\n"
        "add = next(iter(gm.graph.find_nodes(op='call_function', target=torch.add)))\n"
        "first = next(iter(gm.graph.find_nodes(op='placeholder')))\nfirst.append(add)\n"
        "try:\n    gm.graph.lint()\n    broken = 'no error'\n"
        "except RuntimeError as exc:\n    broken = norm(exc).splitlines()[0]\n"
        "out = [ok, broken]"),
    F + "Graph.node_copy": (
        "g = fx.Graph()\nenv = {}\nfor n in gm.graph.nodes:\n    if n.op == 'output':\n"
        "        g.output(env[n.args[0]])\n    else:\n"
        "        env[n] = g.node_copy(n, lambda arg: env[arg])\n"
        "new = fx.GraphModule(gm, g)\nout = [node_list(g), new(x)]"),
    F + "Graph.nodes": "out = [len(gm.graph.nodes), node_list(gm.graph), [n.op for n in reversed(gm.graph.nodes)]]",
    F + "Graph.on_generate_code": (
        "def make(current):\n"
        "    def transform(body):\n"
        "        body = current(body) if current else body\n"
        "        return ['# edited by on_generate_code\\n', *body]\n"
        "    return transform\n"
        "with gm.graph.on_generate_code(make):\n    gm.recompile()\n    edited = norm(gm.code)\n"
        "gm.recompile()\nout = [edited, norm(gm.code), gm(x)]"),
    F + "Graph.output": (
        NEW + "b = g.call_function(torch.relu, (a,))\ng.output((b, [a]), type_expr=tuple)\n" + RUN),
    F + "Graph.output_node": "res = gm.graph.output_node()\nout = [res.op, norm(res.format_node()), res.args[0].name]",
    F + "Graph.placeholder": (
        "g = fx.Graph()\na = g.placeholder('a', type_expr=torch.Tensor)\n"
        "k = g.placeholder('k', default_value=3.0)\n"
        "g.output(g.call_function(torch.mul, (a, k)))\n"
        "new = fx.GraphModule(m, g)\nout = [norm(new.code), new(x), new(x, 0.5)]"),
    F + "Graph.process_inputs": (
        "def f(d):\n    return d['a'] * 2 + d['b']\n"
        "t = fx.symbolic_trace(f, concrete_args={'d': {'a': fx.PH, 'b': fx.PH}})\n"
        "flat = t.graph.process_inputs({'a': x, 'b': x + 1})\n"
        "out = [len(flat), list(flat), t({'a': x, 'b': x + 1})]"),
    F + "Graph.process_outputs": (
        "def f(d):\n    return {'sum': d['a'] + d['b'], 'diff': d['a'] - d['b']}\n"
        "t = fx.symbolic_trace(f, concrete_args={'d': {'a': fx.PH, 'b': fx.PH}})\n"
        "res = t.graph.process_outputs([x, x * 2])\n"
        "out = [res, t({'a': x, 'b': x + 1})]"),
    F + "Graph.python_code": (
        "pc = gm.graph.python_code(root_module='self')\n"
        "out = [norm(pc.src), sorted(k for k in pc.globals if not k.startswith('_'))]"),
    F + "Graph.set_codegen": (
        "def f(d):\n    return d['a'] * 2 + d['b']\n"
        "t = fx.symbolic_trace(f, concrete_args={'d': {'a': fx.PH, 'b': fx.PH}})\n"
        "tree = norm(t.code)\nt.graph.set_codegen(fx.graph.CodeGen())\nt.recompile()\n"
        "out = [tree, norm(t.code), t(x, x + 1)]"),
    # --- GraphModule ---
    F + "GraphModule": "new = fx.GraphModule(m, gm.graph)\nout = [type(new).__name__, norm(new.code), new(x)]",
    F + "GraphModule.__init__": (
        NEW + "g.output(g.call_module('lin', (a,)))\n"
        "new = fx.GraphModule({'lin': m.lin}, g, class_name='Small')\n"
        "out = [type(new).__name__, [k for k, _ in new.named_modules()], norm(new.code), new(x)]"),
    F + "GraphModule.add_submodule": (
        "ok = gm.add_submodule('extra.proj', torch.nn.Linear(3, 2).to(dtype).to(device))\n"
        "lin = next(n for n in gm.graph.nodes if n.target == 'act')\n"
        "with gm.graph.inserting_after(lin):\n"
        "    proj = gm.graph.call_module('extra.proj', (lin,))\n"
        "with gm.graph.inserting_after(proj):\n"
        "    back = gm.graph.call_method('sum', (proj,), {'dim': -1, 'keepdim': True})\n"
        "lin.replace_all_uses_with(back, delete_user_cb=lambda u: u is not proj)\n"
        "gm.recompile()\nout = [ok, norm(gm.code), gm(x)]"),
    F + "GraphModule.code": "out = [norm(gm.code), gm(x)]",
    F + "GraphModule.delete_all_unused_submodules": (
        "gm.add_submodule('spare', torch.nn.Linear(2, 2).to(device))\n"
        "before = [k for k, _ in gm.named_modules()]\ngm.delete_all_unused_submodules()\n"
        "out = [before, [k for k, _ in gm.named_modules()], gm(x)]"),
    F + "GraphModule.delete_submodule": (
        "act = next(n for n in gm.graph.nodes if n.target == 'act')\n"
        "with gm.graph.inserting_after(act):\n"
        "    fn = gm.graph.call_function(torch.relu, act.args)\n"
        "act.replace_all_uses_with(fn)\ngm.graph.erase_node(act)\n"
        "gone = gm.delete_submodule('act')\nmissing = gm.delete_submodule('nothing')\n"
        + EDIT.replace("out = [", "out = [gone, missing, ")),
    F + "GraphModule.graph": "out = [norm(gm.graph), gm.graph is gm.graph, gm(x)]",
    F + "GraphModule.print_readable": "out = [norm(gm.print_readable(print_output=False)), gm(x)]",
    F + "GraphModule.recompile": (
        "add = next(iter(gm.graph.find_nodes(op='call_function', target=torch.add)))\n"
        "add.target = torch.sub\npc = gm.recompile()\n"
        "out = [norm(pc.src) == norm(gm.code), norm(gm.code), gm(x)]"),
    F + "GraphModule.to_folder": (
        "import importlib.util, os, sys, tempfile\n"
        "with tempfile.TemporaryDirectory() as tmp:\n"
        "    folder = os.path.join(tmp, 'fx_folder')\n"
        "    gm.to_folder(folder, module_name='Saved')\n"
        "    files = sorted(os.listdir(folder))\n"
        "    spec = importlib.util.spec_from_file_location('fx_folder', os.path.join(folder, '__init__.py'),\n"
        "                                                  submodule_search_locations=[folder])\n"
        "    mod = importlib.util.module_from_spec(spec)\n"
        "    sys.modules['fx_folder'] = mod\n"
        "    try:  # the saved module is rebuilt on the CPU; moved to the device as a user would\n"
        "        spec.loader.exec_module(mod)\n        back = mod.Saved()\n"
        "    finally:\n        sys.modules.pop('fx_folder', None)\n"
        "        sys.modules.pop('fx_folder.module', None)\n"
        "back = back.to(device)\nout = [files, back(x), dict(back.state_dict())]"),
    # --- Node ---
    F + "Node": (
        "n = fx.Node(gm.graph, 'made', 'call_function', torch.neg, (next(iter(gm.graph.nodes)),), {})\n"
        "out = [[(k.op, k.name, norm(k.target)) for k in gm.graph.nodes], n.op, n.name,\n"
        "       norm(n.format_node()), gm(x)]"),
    F + "Node.all_input_nodes": "out = [(n.name, [a.name for a in n.all_input_nodes]) for n in gm.graph.nodes]",
    F + "Node.append": (
        "nodes = list(gm.graph.nodes)\nmean = next(n for n in nodes if n.target == 'mean')\n"
        "nodes[0].append(mean)\n" + EDIT.replace("out = [", "out = [[n.name for n in gm.graph.nodes], ")),
    F + "Node.args": "out = [(n.name, norm(n.args)) for n in gm.graph.nodes]",
    F + "Node.format_node": "out = [norm(n.format_node()) for n in gm.graph.nodes]",
    F + "Node.insert_arg": (
        NEW + "b = g.call_function(torch.add, (a,))\nb.insert_arg(1, 5.0)\ng.output(b)\n"
        + RUN.replace("new(x)", "new(x), norm(b.args)")),
    F + "Node.is_impure": (
        "def f(x):\n    y = x.add_(1)\n    return torch.relu(x)\n"
        "t = fx.symbolic_trace(f)\n"
        "out = [(n.name, n.is_impure()) for n in t.graph.nodes] + [(n.name, n.is_impure()) for n in gm.graph.nodes]"),
    F + "Node.kwargs": (
        "out = [(n.name, norm(n.kwargs)) for n in gm.graph.nodes]\n"
        "s = next(n for n in gm.graph.nodes if n.target == 'sum')\n"
        "s.kwargs = {'dim': 0}\ngm.recompile()\nout += [norm(gm.code), gm(x)]"),
    F + "Node.next": "out = [(n.name, n.next.name, n.next.op) for n in gm.graph.nodes]",
    F + "Node.normalized_arguments": (
        "add = next(iter(gm.graph.find_nodes(op='call_function', target=torch.add)))\n"
        "res = add.normalized_arguments(gm, arg_types=(torch.Tensor, torch.Tensor),\n"
        "                              normalize_to_only_use_kwargs=True)\n"
        "mod = next(n for n in gm.graph.nodes if n.target == 'lin')\n"
        "res2 = mod.normalized_arguments(gm)\n"
        "out = [None if res is None else norm(res.kwargs), None if res2 is None else norm(res2)]"),
    F + "Node.prepend": (
        "nodes = list(gm.graph.nodes)\nmean = next(n for n in nodes if n.target == 'mean')\n"
        "nodes[2].prepend(mean)\n" + EDIT.replace("out = [", "out = [[n.name for n in gm.graph.nodes], ")),
    F + "Node.prev": "out = [(n.name, n.prev.name, n.prev.op) for n in gm.graph.nodes]",
    F + "Node.replace_all_uses_with": (
        "act = next(n for n in gm.graph.nodes if n.target == 'act')\n"
        "changed = act.replace_all_uses_with(act.args[0])\n"
        "out = [[u.name for u in changed]]\n" + EDIT.replace("out = [", "out += [")),
    F + "Node.replace_input_with": (
        "mul = next(n for n in gm.graph.nodes if n.op == 'call_function' and n.target is not torch.add)\n"
        "act = next(n for n in gm.graph.nodes if n.target == 'act')\n"
        "mul.replace_input_with(act, act.args[0])\n" + EDIT),
    F + "Node.stack_trace": (
        "tracer = fx.Tracer()\ntracer.record_stack_traces = True\ngraph = tracer.trace(m)\n"
        "traces = [(n.name, n.stack_trace is not None and 'in forward' in n.stack_trace) for n in graph.nodes]\n"
        "n = next(iter(graph.nodes))\nn.stack_trace = 'File \"a.py\", line 1, in f'\n"
        "out = [traces, n.stack_trace, fx.GraphModule(m, graph)(x)]"),
    F + "Node.update_arg": (
        "s = next(n for n in gm.graph.nodes if n.target == 'sum')\n"
        "mean = next(n for n in gm.graph.nodes if n.target == 'mean')\n"
        "add = next(iter(gm.graph.find_nodes(op='call_function', target=torch.add)))\n"
        "add.update_arg(1, 1.5)\n" + EDIT),
    F + "Node.update_kwarg": (
        "s = next(n for n in gm.graph.nodes if n.target == 'sum')\n"
        "s.update_kwarg('keepdim', True)\n" + EDIT),
    # --- module-level ---
    F + "graph.map_arg": (
        "from torch.fx.graph import map_arg\n"
        "out = [(n.name, map_arg(n.args, lambda a: a.name)) for n in gm.graph.nodes]"),
    F + "node.map_arg": (
        "from torch.fx.node import map_arg\n"
        "out = [(n.name, map_arg((n.args, n.kwargs), lambda a: a.op)) for n in gm.graph.nodes]"),
    F + "node.map_aggregate": (
        "from torch.fx.node import map_aggregate\n"
        "out = map_aggregate((x, [x + 1, {'k': x * 2}], 3, slice(0, 1)),\n"
        "                    lambda v: v.relu() if isinstance(v, torch.Tensor) else v)"),
    F + "node._type_repr": (
        "from torch.fx.node import _type_repr\n"
        "out = [_type_repr(type(x)), _type_repr(torch.Tensor), _type_repr(list[int]),\n"
        "       _type_repr(tuple[torch.Tensor, ...]), _type_repr(type(m.lin.weight))]"),
    F + "replace_pattern": (
        "def f(x):\n    return torch.relu(x + 1) * 2 + torch.relu(x * 3 + 1)\n"
        "def pattern(a):\n    return torch.relu(a + 1)\n"
        "def replacement(a):\n    return torch.sigmoid(a - 1)\n"
        "t = fx.symbolic_trace(f)\nmatches = fx.replace_pattern(t, pattern, replacement)\n"
        "out = [len(matches), norm(t.code), t(x)]"),
    F + "symbolic_trace": (
        "def f(x, flag):\n    return x.relu() if flag else x.neg()\n"
        "t = fx.symbolic_trace(f, concrete_args={'flag': False})\n"
        "out = [norm(gm.code), gm(x), norm(t.code), t(x, False)]"),
    F + "wrap": (
        "def clamp_sum(t):\n    return t.clamp(min=0).sum(-1)\n"
        "fx.wrap('clamp_sum')\n"
        "def f(x):\n    return clamp_sum(x * 2) + 1\n"
        "t = fx.symbolic_trace(f)\n"
        "out = [[norm(n.target) for n in t.graph.nodes if n.op == 'call_function'], t(x)]"),
}

# needs the optional package tabulate (the ``fx`` extra): without it, EXCLUDED_WITHOUT_TABULATE
TABULAR: Dict[str, str] = {
    F + "Graph.print_tabular": (
        "import contextlib, io\nbuf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n    gm.graph.print_tabular()\n"
        "out = [' '.join(norm(line).split()) for line in buf.getvalue().splitlines()]"),
}
EXCLUDED_WITHOUT_TABULATE = {
    F + "Graph.print_tabular": ("needs the optional package tabulate (pip install 'torchparity[fx]'), not installed "
                                "here: the CPU cannot run it either"),
}

# APIs of these namespaces left out here, and why (the source's why_not says it)
EXCLUDED: Dict[str, str] = {
    F + "passes.regional_inductor.regional_inductor": (
        "compiles graph regions with torch.compile's inductor backend, which needs a compiler backend "
        "for the device: the emulated device has none (torch.compile backends are not emulated), so a "
        "row would measure the emulator, not the device"),
    F + "experimental.symbolic_shapes.ShapeEnv.set_unbacked_var_to_val": (
        "not in torch 2.13.0: ShapeEnv has no set_unbacked_var_to_val (the docs list a name torch does not have)"),
}

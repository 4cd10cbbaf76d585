"""The cases of the ``fx`` source for ``torch.fx.experimental``: ``proxy_tensor``
(``make_fx`` and its helpers) and ``symbolic_shapes`` (``ShapeEnv``, symbolic contexts,
constraints, guards).

``SHAPES_PRELUDE`` (after ``fx.table.PRELUDE``) draws a 6x4 input on the CPU, moves it
to the device (``x6``), and makes a fake tensor of that device tensor whose two sizes are
symbols of a fresh ``ShapeEnv`` (``fake``; ``s0``, ``s1`` their sympy symbols, hinted by
the device tensor's sizes). Symbolic answers (expressions, guards, ranges) are returned as
text; a block that traces (``make_fx``) also runs the graph on the device tensors.
Symbol names are a function of the input's source name, so both runs name them alike.
"""

from __future__ import annotations

from typing import Dict

SHAPES_PRELUDE = '''\
import sympy
from torch.fx.experimental import symbolic_shapes as S
from torch.fx.experimental.proxy_tensor import make_fx
from torch._subclasses.fake_tensor import FakeTensorMode
from torch._dynamo.source import LocalSource

x6 = torch.randn(6, 4, dtype=dtype).to(device)
shape_env = S.ShapeEnv()
fake_mode = FakeTensorMode(shape_env=shape_env)
src = LocalSource("x")
fake = fake_mode.from_tensor(x6, source=src, symbolic_context=S.StatelessSymbolicContext(
    dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.DYNAMIC]))
s0, s1 = [d.node.expr for d in fake.shape]

def text(v):
    """symbolic answers as text; a (fake) tensor as its sizes, dtype and whether it is on
    the run's device (a FakeTensor's repr names a device only when it is not the CPU)"""
    import torch.utils._pytree as pytree

    def one(a):
        if isinstance(a, torch.Tensor):
            on = a.device.type == torch.device(device).type
            return f"Tensor(size={[str(s) for s in a.shape]}, dtype={a.dtype}, on_run_device={on})"
        return a
    return norm(pytree.tree_map(one, v))
'''

P = "torch.fx.experimental.proxy_tensor."
SS = "torch.fx.experimental.symbolic_shapes."
SE = SS + "ShapeEnv."

# a DimConstraints over the two symbols, their sources the input's sizes
DIMS = (
    "from torch._dynamo.source import TensorPropertySource, TensorProperty\n"
    "size_src = [TensorPropertySource(src, TensorProperty.SIZE, i) for i in (0, 1)]\n"
    "dc = S.DimConstraints({s0: [size_src[0]], s1: [size_src[1]]}, shape_env.backed_var_to_val,\n"
    "                      {s0, s1}, {})\n"
)

# an unbacked size: nonzero() of the fake device tensor
UNBACKED = "with fake_mode:\n    nz = fake.nonzero()\nu0 = nz.shape[0]\n"

CASES: Dict[str, str] = {
    # --- proxy_tensor ---
    P + "make_fx": (
        "def f(a):\n    return torch.relu(a).sum(-1) * a.shape[0]\n"
        "real = make_fx(f)(x6)\nsym = make_fx(f, tracing_mode='symbolic')(x6)\n"
        "out = [norm(real.code), real(x6), norm(sym.code), sym(x6)]"),
    P + "get_proxy_mode": (
        "from torch.fx.experimental.proxy_tensor import get_proxy_mode\n"
        "seen = []\n"
        "def f(a):\n    seen.append(type(get_proxy_mode()).__name__)\n    return a.cos()\n"
        "g = make_fx(f)(x6)\nout = [get_proxy_mode() is None, seen, g(x6)]"),
    P + "handle_sym_dispatch": (
        "import operator\nfrom torch.fx.experimental.proxy_tensor import handle_sym_dispatch\n"
        "def f(a):\n    n = handle_sym_dispatch(operator.mul, (a.shape[0], 2), {})\n"
        "    return a.new_zeros(n) + a.sum()\n"
        "g = make_fx(f, tracing_mode='symbolic')(x6)\nout = [norm(g.code), g(x6)]"),
    P + "maybe_disable_thunkify": (
        "from torch.fx.experimental.proxy_tensor import maybe_disable_thunkify\n"
        "def f(a):\n    return (a * 2).exp().mean(0)\n"
        "with maybe_disable_thunkify():\n    g = make_fx(f, tracing_mode='symbolic')(x6)\n"
        "out = [norm(g.code), g(x6)]"),
    P + "maybe_enable_thunkify": (
        "from torch.fx.experimental.proxy_tensor import maybe_enable_thunkify\n"
        "def f(a):\n    return (a * 2).exp().mean(0)\n"
        "with maybe_enable_thunkify():\n    g = make_fx(f, tracing_mode='symbolic')(x6)\n"
        "out = [norm(g.code), g(x6)]"),
    # --- symbolic_shapes: keys, enums, contexts, constraints ---
    SS + "CallMethodKey": "k = S.CallMethodKey('size')\nout = [str(k), k.name, tuple(k.get(x6))]",
    SS + "CallMethodKey.get": "out = [tuple(S.CallMethodKey('size').get(x6)), S.CallMethodKey('numel').get(x6),\n       S.CallMethodKey('dim').get(x6)]",
    SS + "ConvertIntKey": "k = S.ConvertIntKey()\nout = [str(k), k.get(bool(x6.sum() > -1e9)), k.get(bool(x6.sum() < -1e9))]",
    SS + "ConvertIntKey.get": (
        "k = S.ConvertIntKey()\n"
        "out = [k.get(bool(x6.isnan().any())), k.get(bool(x6.isfinite().all())), k.get(x6.shape[0] > 2)]"),
    SS + "DivideByKey": "k = S.DivideByKey(2)\nout = [str(k), k.divisor, k.get(x6.numel())]",
    SS + "DivideByKey.get": "out = [S.DivideByKey(4).get(x6.numel()), S.DivideByKey(3).get(x6.shape[0])]",
    SS + "DimDynamic": (
        "ctx = S.StatelessSymbolicContext(dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.STATIC])\n"
        "half = FakeTensorMode(shape_env=S.ShapeEnv()).from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)\n"
        "out = [[d.name for d in S.DimDynamic], text(half.shape), text(fake.shape)]"),
    SS + "StatelessSymbolicContext": (
        "ctx = S.StatelessSymbolicContext(dynamic_sizes=[S.DimDynamic.STATIC, S.DimDynamic.DYNAMIC])\n"
        "t = FakeTensorMode(shape_env=S.ShapeEnv()).from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)\n"
        "out = [text(t.shape), text(t.stride()), t.dtype, norm(t.device)]"),
    SS + "StatefulSymbolicContext": (
        "env = S.ShapeEnv()\nmode = FakeTensorMode(shape_env=env)\n"
        "ctx = S.StatefulSymbolicContext(dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.DYNAMIC],\n"
        "                                tensor_source=LocalSource('y'))\n"
        "t1 = mode.from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)\n"
        "t2 = FakeTensorMode(shape_env=env).from_tensor(x6.clone(), source=LocalSource('y'), symbolic_context=ctx)\n"
        "out = [text(t1.shape), text(t2.shape), len(ctx.shape_env_to_source_to_symbol_cache)]"),
    SS + "SubclassSymbolicContext": (
        "ctx = S.SubclassSymbolicContext(dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.STATIC],\n"
        "                                tensor_source=LocalSource('y'), inner_contexts={})\n"
        "t = FakeTensorMode(shape_env=S.ShapeEnv()).from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)\n"
        "out = [text(t.shape), ctx.inner_contexts, ctx.track_outer_size_stride]"),
    SS + "StrictMinMaxConstraint": (
        "from torch.utils._sympy.value_ranges import ValueRanges\n"
        "c = S.StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(2, 16))\n"
        "env = S.ShapeEnv()\n"
        "ctx = S.StatelessSymbolicContext(dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.STATIC],\n"
        "                                 constraint_sizes=[c, None])\n"
        "t = FakeTensorMode(shape_env=env).from_tensor(x6, source=LocalSource('y'), symbolic_context=ctx)\n"
        "out = [text(t.shape), text(c.vr), c.warn_only, text(env.var_to_range)]"),
    SS + "StrictMinMaxConstraint.render": (
        "from torch.utils._sympy.value_ranges import ValueRanges\n"
        "c = S.StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(2, x6.shape[0] * 2))\n"
        "out = [c.render(LocalSource('x')), c.render(src)]"),
    SS + "EqualityConstraint": (
        "from torch._dynamo.source import TensorPropertySource, TensorProperty\n"
        "a0 = TensorPropertySource(src, TensorProperty.SIZE, 0)\n"
        "a1 = TensorPropertySource(src, TensorProperty.SIZE, 1)\n"
        "eq = S.EqualityConstraint(warn_only=False, source_pairs=[(a0, a1)], derived_equalities=[],\n"
        "                          phantom_symbols=[], relaxed_sources=set())\n"
        "try:\n    shape_env.produce_guards([fake], [src], equalities_inputs=eq)\n    said = 'no violation'\n"
        "except Exception as exc:\n    said = type(exc).__name__ + ': ' + str(exc).splitlines()[0]\n"
        "out = [eq.is_equal(a0, a1), eq.is_equal(a0, a0), said]"),
    SS + "ShapeEnvSettings": (
        "a = S.ShapeEnv().settings\nb = S.ShapeEnv(duck_shape=False).settings\n"
        "out = [a == shape_env.settings, a == b, a.duck_shape, b.duck_shape, a.specialize_zero_one]"),
    # --- symbolic_shapes: functions ---
    SS + "canonicalize_bool_expr": (
        "out = [text(S.canonicalize_bool_expr(s0 > s1)), text(S.canonicalize_bool_expr(sympy.Ne(s0, 2 * s1))),\n"
        "       text(S.canonicalize_bool_expr(sympy.Lt(s0 + 1, s1)))]"),
    SS + "check_consistent": (
        "S.check_consistent(x6, x6.clone())\nres = []\n"
        "try:\n    S.check_consistent(x6, x6[:3])\n    res.append('consistent')\n"
        "except Exception as exc:\n    res.append(type(exc).__name__)\n"
        "S.check_consistent(fake.shape[0], 6)\nout = res"),
    SS + "compute_unbacked_bindings": (
        UNBACKED + "out = [text(S.compute_unbacked_bindings(shape_env, nz, peek=True)), text(nz.shape)]"),
    SS + "constrain_range": (
        UNBACKED + "S.constrain_range(u0, min=1, max=24)\n"
        "out = [text(shape_env.var_to_range[u0.node.expr]), text(u0)]"),
    SS + "constrain_unify": (
        UNBACKED + "with fake_mode:\n    nz2 = (fake * 2).nonzero()\nu1 = nz2.shape[0]\n"
        "S.constrain_unify(u0, u1)\nout = [text(u0), text(u1), text(shape_env.replacements)]"),
    SS + "guard_size_oblivious": (
        "out = [S.guard_size_oblivious(fake.shape[0] == 1), S.guard_size_oblivious(fake.shape[1] >= 0),\n"
        "       text(shape_env.format_guards())]"),
    SS + "has_free_symbols": (
        "out = [S.has_free_symbols(fake.shape[0]), S.has_free_symbols(x6.shape[0]), S.has_free_symbols(s0 + 1),\n"
        "       S.has_free_symbols(sympy.Integer(3))]"),
    SS + "is_accessor_node": (
        "def f(a):\n    return a.sum(-1) * a.shape[0]\n"
        "g = make_fx(f, tracing_mode='symbolic')(x6)\n"
        "out = [(n.name, S.is_accessor_node(n)) for n in g.graph.nodes]"),
    SS + "is_concrete_bool": (
        "out = [S.is_concrete_bool(True), S.is_concrete_bool(fake.shape[0] == 6), S.is_concrete_bool(bool(x6.sum() > 0))]"),
    SS + "is_concrete_float": (
        "out = [S.is_concrete_float(x6.sum().item()), S.is_concrete_float(fake.shape[0] * 1.5),\n"
        "       S.is_concrete_float(float(x6.shape[0]))]"),
    SS + "is_concrete_int": "out = [S.is_concrete_int(x6.shape[0]), S.is_concrete_int(fake.shape[0]), S.is_concrete_int(fake.shape[0] - fake.shape[0])]",
    SS + "is_symbolic": "out = [S.is_symbolic(fake.shape[0]), S.is_symbolic(x6.shape[0]), S.is_symbolic(fake.shape[0] * 0 + 3),\n"
    "       S.is_symbolic(x6.sum().item())]",
    SS + "statically_known_true": (
        "out = [S.statically_known_true(fake.shape[0] >= 0), S.statically_known_true(fake.shape[0] == 6),\n"
        "       S.statically_known_true(fake.shape[0] == fake.shape[0])]"),
    SS + "sym_eq": (
        "out = [text(S.sym_eq(fake.shape, x6.shape)), S.sym_eq(x6.shape, (6, 4)), S.sym_eq([1, 2], [1, 3])]"),
    # --- ShapeEnv ---
    SS + "ShapeEnv": (
        "env = S.ShapeEnv(duck_shape=True)\n"
        "t = FakeTensorMode(shape_env=env).from_tensor(x6, source=LocalSource('y'))\n"
        "out = [text(t.shape), text(env.backed_var_to_val), len(env.guards)]"),
    SE + "add_backed_var_to_val": (
        "y = sympy.Symbol('s99', integer=True, positive=True)\n"
        "shape_env.add_backed_var_to_val(y, x6.shape[1] * 2)\n"
        "out = [text(shape_env.backed_var_to_val[y]), text(shape_env.backed_var_to_val)]"),
    SE + "bind_symbols": "out = text(shape_env.bind_symbols([fake], [x6]))",
    SE + "bound_sympy": (
        UNBACKED + "out = [text(shape_env.bound_sympy(s0 * 2 + s1)), text(shape_env.bound_sympy(u0.node.expr)),\n"
        "       text(shape_env.bound_sympy(u0.node.expr, size_oblivious=True))]"),
    SE + "check_equal": (
        "def build():\n    env = S.ShapeEnv()\n"
        "    FakeTensorMode(shape_env=env).from_tensor(x6, source=LocalSource('y'))\n    return env\n"
        "a, b = build(), build()\na.check_equal(b)\nc = S.ShapeEnv(duck_shape=False)\n"
        "try:\n    a.check_equal(c)\n    said = 'equal'\nexcept Exception as exc:\n    said = type(exc).__name__\n"
        "out = ['equal', said]"),
    SE + "cleanup": (
        "with fake_mode:\n    y = (fake * 2).sum(0)\n"
        "shape_env.cleanup()\nout = [text(y.shape), len(shape_env.guards), text(shape_env.backed_var_to_val)]"),
    SE + "create_symbol": (
        "env = S.ShapeEnv()\n"
        "a = env.create_symbol(x6.shape[0], LocalSource('n'), dynamic_dim=S.DimDynamic.DYNAMIC)\n"
        "b = env.create_symbol(x6.shape[1], LocalSource('k'), dynamic_dim=S.DimDynamic.STATIC)\n"
        "c = env.create_symbol(1, LocalSource('one'), dynamic_dim=S.DimDynamic.DYNAMIC)\n"
        "out = [text(a), text(b), text(c), text(env.backed_var_to_val)]"),
    SE + "create_symbolic_sizes_strides_storage_offset": (
        "env = S.ShapeEnv()\n"
        "sizes, strides, offset = env.create_symbolic_sizes_strides_storage_offset(\n"
        "    x6[1:], LocalSource('y'), symbolic_context=S.StatelessSymbolicContext(\n"
        "        dynamic_sizes=[S.DimDynamic.DYNAMIC, S.DimDynamic.DYNAMIC]))\n"
        "out = [text(sizes), text(strides), text(offset)]"),
    SE + "create_symboolnode": (
        "b = shape_env.create_symboolnode(sympy.Gt(s0, s1))\n"
        "out = [type(b).__name__, text(b), bool(b)]"),
    SE + "create_symfloatnode": (
        "y = shape_env.create_symbol(1.5, LocalSource('f'), dynamic_dim=S.DimDynamic.DYNAMIC)\n"
        "f = shape_env.create_symfloatnode(y, hint=x6.shape[0] / 4, source=LocalSource('f'))\n"
        "out = [type(f).__name__, text(f), float(f)]"),
    SE + "create_symintnode": (
        "i = shape_env.create_symintnode(s0 * s1, hint=x6.numel())\n"
        "out = [type(i).__name__, text(i), int(i), shape_env.create_symintnode(sympy.Integer(5), hint=None)]"),
    SE + "create_unbacked_symbool": (
        "b = shape_env.create_unbacked_symbool()\n"
        "(u,) = b.node.expr.free_symbols\n"
        "out = [type(b).__name__, text(b), text(shape_env.var_to_range[u])]"),
    SE + "deserialize_symexpr": (
        "e = shape_env.deserialize_symexpr(f'{s0} * 2 + {s1}')\n"
        "out = [type(e).__name__, text(e), int(e)]"),
    SE + "evaluate_guards_expression": (
        "with fake_mode:\n    torch._check(fake.shape[0] > 2)\n"
        "code = shape_env.produce_guards_expression([fake])\n"
        "out = [code is not None, shape_env.evaluate_guards_expression(code, [x6]),\n"
        "       shape_env.evaluate_guards_expression(code, [x6[:2]])]"),
    SE + "evaluate_guards_for_args": (
        "with fake_mode:\n    torch._check(fake.shape[0] > 2)\n"
        "out = [shape_env.evaluate_guards_for_args([fake], [x6]),\n"
        "       shape_env.evaluate_guards_for_args([fake], [x6[:2]])]"),
    SE + "evaluate_sym_node": (
        "n = (fake.shape[0] > 3).node\n"
        "out = [text(shape_env.evaluate_sym_node(n)), text(shape_env.format_guards())]"),
    SE + "evaluate_symexpr": "out = [shape_env.evaluate_symexpr(f'{s0} * {s1} + 1'), x6.numel() + 1]",
    SE + "format_guards": (
        "with fake_mode:\n    if fake.shape[0] > 3:\n        pass\n    torch._check(fake.shape[1] == 4)\n"
        "out = [text(shape_env.format_guards()), text(shape_env.format_guards(verbose=False))]"),
    SE + "freeze": (
        "shape_env.freeze()\n"
        "try:\n    bool(fake.shape[0] > 3)\n    said = 'guarded'\nexcept Exception as exc:\n"
        "    said = type(exc).__name__\nout = [shape_env.frozen, said, text(shape_env.format_guards())]"),
    SE + "freeze_runtime_asserts": (
        UNBACKED + "shape_env.freeze_runtime_asserts()\n"
        "out = [shape_env.runtime_asserts_frozen, text(nz.shape)]"),
    SE + "get_axioms": (
        "with fake_mode:\n    torch._check(fake.shape[0] > 2)\n    torch._check(fake.shape[0] != fake.shape[1])\n"
        "out = sorted(text(a) for a in shape_env.get_axioms())"),
    SE + "get_implications": "out = sorted(text(i) for i in shape_env.get_implications(sympy.Eq(s0, s1)))",
    SE + "produce_guards_expression": (
        "with fake_mode:\n    torch._check(fake.shape[0] > 2)\n    torch._check(fake.shape[1] < 8)\n"
        "out = text(shape_env.produce_guards_expression([fake]))"),
    SE + "produce_guards_verbose": (
        "with fake_mode:\n    torch._check(fake.shape[0] > 2)\n"
        "res = shape_env.produce_guards_verbose([fake], [src])\n"
        "out = [sorted(text(e) for e in res[0].exprs), len(res)]"),
    SE + "replace": (
        "with fake_mode:\n    torch._check(fake.shape[1] == fake.shape[0] - 2)\n"
        "out = [text(shape_env.replace(s0 + s1)), text(shape_env.replacements)]"),
    SE + "simplify": (
        "with fake_mode:\n    torch._check(fake.shape[1] == 4)\n"
        "out = [text(shape_env.simplify(s0 * s1 + s1 - 4)), text(shape_env.simplify(sympy.floor(s0 / 1)))]"),
    SE + "size_hint": (
        "out = [text(shape_env.size_hint(s0 * s1)), text(shape_env.size_hint(s0 + 1)), x6.numel()]"),
    SE + "suppress_guards": (
        "with shape_env.suppress_guards():\n    big = bool(fake.shape[0] > 3)\n"
        "quiet = len(shape_env.guards)\nbig2 = bool(fake.shape[0] > 3)\n"
        "out = [big, quiet, big2, len(shape_env.guards)]"),
    # --- DimConstraints ---
    SS + "DimConstraints.solve": (
        DIMS + "dc.add(sympy.Ge(s0, 2))\ndc.add(sympy.Le(s0, 2 * x6.shape[1]))\ndc.solve()\n"
        "out = [sorted(dc._static_results), sorted(dc._dynamic_results)]"),
    SS + "DimConstraints.forced_specializations": (
        DIMS + "dc.add(sympy.Eq(s0, x6.shape[0]))\ndc.add(sympy.Ge(s1, 2))\ndc.solve()\n"
        "out = [text(dc.forced_specializations()), sorted(dc._dynamic_results)]"),
    SS + "DimConstraints.rewrite_with_congruences": (
        DIMS + "dc.add(sympy.Eq(sympy.Mod(s0, 3), 0))\n"
        "out = [text(dc.rewrite_with_congruences(s0, sympy.floor(s0 / 3) + sympy.Mod(s0, 3))),\n"
        "       text(dc.rewrite_with_congruences(s0, sympy.Mod(s0 + 1, 3)))]"),
    SS + "DimConstraints.prettify_results": (
        "import inspect\nfrom torch.export import Dim\n"
        "def f(x):\n    return x\n"
        + DIMS.replace("{s0, s1}, {})", "{s0, s1}, {size_src[0].name: 'dx', size_src[1].name: 'dy'})")
        + "dc.add(sympy.Ge(s0, 2))\ndc.add(sympy.Le(s0, 2 * x6.shape[1]))\ndc.add(sympy.Eq(s1, x6.shape[1]))\n"
        "dc.solve()\nforced = dc.forced_specializations()\n"
        "out = [text(forced), dc.prettify_results(inspect.signature(f), {'x': {0: Dim('dx'), 1: Dim('dy')}},\n"
        "                                         None, forced)]"),
}

# PropagateUnbackedSymInts is an Interpreter: its inherited methods, on a make_fx graph run
# under that graph's own fake mode (its ShapeEnv knows the graph's unbacked symbols)
PROPAGATE = (
    "def f(a):\n    return a.nonzero().shape[0] + a.sum(-1)\n"
    "g = make_fx(f, tracing_mode='symbolic')(x6)\n"
    "ins = [n.meta['val'] for n in g.graph.find_nodes(op='placeholder')]\n"
    "interp = S.PropagateUnbackedSymInts(g, garbage_collect_values=False)\n"
    "with ins[0].fake_mode:\n    res = interp.run(*ins)\n"
)
for _m, _block in {
    "call_module": (
        "interp = S.PropagateUnbackedSymInts(gm)\n"
        "out = [interp.call_module('lin', (x,), {}), interp.call_module('act', (x - 0.5,), {})]"),
    "fetch_args_kwargs_from_env": PROPAGATE + (
        "out = [(n.name, text(interp.fetch_args_kwargs_from_env(n)[0])) for n in g.graph.nodes\n"
        "       if n.op == 'call_function'] + [g(x6)]"),
    "fetch_attr": "interp = S.PropagateUnbackedSymInts(gm)\nout = [interp.fetch_attr('lin.weight'), interp.fetch_attr('scale')]",
    "get_attr": "interp = S.PropagateUnbackedSymInts(gm)\nout = [interp.get_attr('scale', (), {}), interp.get_attr('lin.bias', (), {})]",
    "map_nodes_to_values": PROPAGATE + (
        "nodes = [n for n in g.graph.nodes if n.op == 'call_function']\n"
        "out = [text(v) for v in interp.map_nodes_to_values(tuple(nodes), nodes[-1])] + [g(x6)]"),
}.items():
    CASES[SS + "PropagateUnbackedSymInts." + _m] = _block

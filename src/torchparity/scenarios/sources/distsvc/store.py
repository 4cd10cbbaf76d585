"""The ``distsvc`` cases of the key-value stores and the in-process ``torch.distributed``
queries: one function ``(device, dtype) -> outputs`` per case.

Every store case keeps values made on the device: a tensor computed on ``device`` is
serialised (``torch.save`` of its CPU copy) into the store, read back, decoded and moved
to ``device`` again; counters (``add``) and appended text are taken from device
results too. The stores live in this process: ``TCPStore`` as a master on 127.0.0.1 with
a port the kernel picks (answers that depend on the port are compared as facts, not
numbers), ``FileStore`` in a temporary folder removed afterwards, ``HashStore`` in memory.
"""

from __future__ import annotations

import io
import os
import tempfile
from datetime import timedelta
from typing import Any, Callable, Dict, List, Tuple

import torch

from ..world import loopback_store

STORE_TIMEOUT = timedelta(seconds=20)


def payload(device: str, dtype: torch.dtype, k: float = 1.0) -> torch.Tensor:
    """A small tensor computed on the device."""
    x = torch.linspace(-1.0, 1.0, 6).to(device)
    return ((x * 3 + k) * x).to(dtype)


def enc(t: torch.Tensor) -> bytes:
    buf = io.BytesIO()
    torch.save(t.detach().cpu(), buf)
    return buf.getvalue()


def dec(raw: bytes, device: str) -> torch.Tensor:
    return torch.load(io.BytesIO(bytes(raw)), weights_only=True).to(device)


def tcp_store(**kw):
    """A master ``TCPStore`` on 127.0.0.1 only (the socket bound here, see ``loopback_store``)."""
    return loopback_store(1, timeout=STORE_TIMEOUT, **kw)


def loopback_handler(handler):
    """``handler`` (a ``DynamicRendezvousHandler``) with the TCPStore its rank 0 hosts for
    the workers (torch ≥ 2.4 shares one) listening on 127.0.0.1 only: torch's own binds
    every interface."""
    if hasattr(handler, "_create_tcp_store_server"):
        handler._create_tcp_store_server = lambda addr, port: tcp_store(port=port, multi_tenant=True)
    return handler


class _Stores:
    """Make one store of a kind; ``close()`` removes what it left on disk."""

    def __init__(self, kind: str):
        import torch.distributed as dist

        self.tmp = None
        if kind == "tcp":
            self.store = tcp_store()
        elif kind == "hash":
            self.store = dist.HashStore()
        elif kind == "file":
            self.tmp = tempfile.TemporaryDirectory(prefix="torchparity-store-")
            self.store = dist.FileStore(os.path.join(self.tmp.name, "store"), 1)
        elif kind == "prefix":
            self.store = dist.PrefixStore("job0", dist.HashStore())
        else:
            raise ValueError(kind)

    def close(self):
        del self.store
        if self.tmp is not None:
            self.tmp.cleanup()


def store_method(device, dtype, case: str, kind: str):
    """One ``Store`` method case (``case``, a key of ``_METHODS``) exercised on a store of
    ``kind`` (tcp, hash, file, prefix) with device-made values."""
    held = _Stores(kind)
    s = held.store
    try:
        x = payload(device, dtype)
        return _METHODS[case](s, x, device, dtype)
    finally:
        held.close()


def _set_get(s, x, device, dtype):
    s.set("t", enc(x))
    s.set("t2", enc(x * 2))
    return [dec(s.get("t"), device), dec(s.get("t2"), device) - x]


def _add(s, x, device, dtype):
    n = int((x.float().abs().sum() * 10).round().item())
    return [s.add("n", n), s.add("n", -3), int(s.get("n"))]


def _append(s, x, device, dtype):
    s.set("log", b"")
    for v in x.float().cpu().tolist():
        s.append("log", f"{v:.3f};".encode())
    return s.get("log").decode()


def _check(s, x, device, dtype):
    s.set("t", enc(x))
    return [s.check(["t"]), s.check(["missing"]), s.check(["t", "missing"])]


def _compare_set(s, x, device, dtype):
    first = s.compare_set("c", b"", enc(x))  # absent key + empty expected: set
    kept = s.compare_set("c", b"not it", enc(x * 0))  # wrong expected: unchanged
    swapped = s.compare_set("c", enc(x), enc(x + 1))  # right expected: swapped
    return [dec(first, device), dec(kept, device), dec(swapped, device), dec(s.get("c"), device)]


def _delete_key(s, x, device, dtype):
    s.set("t", enc(x))
    before = s.check(["t"])
    return [before, s.delete_key("t"), s.check(["t"]), s.delete_key("t")]


def _multi(s, x, device, dtype):
    s.multi_set(["a", "b", "c"], [enc(x), enc(x * x), enc(-x)])
    return [dec(v, device) for v in s.multi_get(["c", "a", "b"])]


def _num_keys(s, x, device, dtype):
    base = s.num_keys()
    for i in range(int(x.numel())):
        s.set(f"k{i}", enc(x[i:i + 1]))
    return s.num_keys() - base


def _timeout(s, x, device, dtype):
    secs = int(x.float().abs().sum().round().item()) + 5
    s.set_timeout(timedelta(seconds=secs))
    return [secs, s.timeout.total_seconds()]


def _wait(s, x, device, dtype):
    import torch.distributed as dist

    s.set("t", enc(x))
    s.wait(["t"])
    s.wait(["t"], timedelta(seconds=5))
    try:
        s.wait(["never"], timedelta(milliseconds=200))
        late = "returned"
    except dist.DistStoreError as exc:
        late = type(exc).__name__
    except RuntimeError as exc:  # older stores raise the plain base class
        late = f"RuntimeError: {type(exc).__name__}"
    return [dec(s.get("t"), device), late]


def _extended(s, x, device, dtype):
    s.set("t", enc(x))
    return [s.has_extended_api(), dec(s.get("t"), device)]


_METHODS: Dict[str, Callable] = {
    "set_get": _set_get, "add": _add, "append": _append, "check": _check,
    "compare_set": _compare_set, "delete_key": _delete_key, "multi": _multi,
    "num_keys": _num_keys, "timeout": _timeout, "wait": _wait, "extended": _extended,
}

# Store.<member> -> the method case that runs it
STORE_MEMBERS = {
    "set": "set_get", "get": "set_get", "add": "add", "append": "append", "check": "check",
    "compare_set": "compare_set", "delete_key": "delete_key", "multi_get": "multi",
    "multi_set": "multi", "num_keys": "num_keys", "set_timeout": "timeout", "timeout": "timeout",
    "wait": "wait", "has_extended_api": "extended",
}
STORE_KINDS = ("tcp", "hash", "file", "prefix")


# -- the store classes themselves -----------------------------------------------------------

def _py_store_class():
    import torch.distributed as dist

    class DictStore(dist.Store):
        def __init__(self):
            super().__init__()
            self.d: Dict[str, bytes] = {}

        def set(self, key, value):
            self.d[key] = bytes(value.encode() if isinstance(value, str) else value)

        def get(self, key):
            return self.d[key]

        def add(self, key, value):
            n = int(self.d.get(key, b"0")) + value
            self.d[key] = str(n).encode()
            return n

        def check(self, keys):
            return all(k in self.d for k in keys)

        def wait(self, keys, timeout=None):
            if not self.check(keys):
                raise RuntimeError("missing keys")
    return DictStore


def store_subclass(device, dtype):
    """``Store()`` subclassed in Python and used through a ``PrefixStore``."""
    import torch.distributed as dist

    base = _py_store_class()()
    ps = dist.PrefixStore("p", base)
    x = payload(device, dtype)
    ps.set("t", enc(x))
    n = ps.add("n", int(x.float().abs().sum().round().item()))
    return [sorted(base.d), dec(ps.get("t"), device), n, isinstance(base, dist.Store)]


def tcp_members(device, dtype):
    """``TCPStore`` master and client on 127.0.0.1: host, port, libuvBackend, shared keys."""
    import torch.distributed as dist

    master = tcp_store()
    client = dist.TCPStore("127.0.0.1", master.port, 1, False, timeout=STORE_TIMEOUT)
    try:
        x = payload(device, dtype)
        client.set("from_client", enc(x))
        return [master.host, client.host, master.port > 0, client.port == master.port,
                master.libuvBackend, dec(master.get("from_client"), device)]
    finally:
        del client, master


def tcp_classic(device, dtype):
    """``TCPStore`` without libuv (the classic backend): ``libuvBackend`` is False."""
    master = tcp_store(use_libuv=False)
    try:
        x = payload(device, dtype)
        master.set("t", enc(x))
        return [master.libuvBackend, dec(master.get("t"), device)]
    finally:
        del master


def file_members(device, dtype):
    """``FileStore`` on a temporary file: ``path`` and two handles on one file."""
    import torch.distributed as dist

    with tempfile.TemporaryDirectory(prefix="torchparity-store-") as tmp:
        path = os.path.join(tmp, "store")
        a = dist.FileStore(path, 2)
        b = dist.FileStore(path, 2)
        x = payload(device, dtype)
        a.set("t", enc(x))
        got = [a.path == path, b.path == path, dec(b.get("t"), device), b.add("n", 2), a.add("n", 3)]
        del a, b
        return got


def hash_members(device, dtype):
    import torch.distributed as dist

    s = dist.HashStore()
    x = payload(device, dtype)
    s.set("t", enc(x))
    other = dist.HashStore()  # a second HashStore is a separate map
    return [dec(s.get("t"), device), other.check(["t"]), s.num_keys(), other.num_keys()]


def prefix_members(device, dtype):
    import torch.distributed as dist

    base = dist.HashStore()
    outer = dist.PrefixStore("a", base)
    inner = dist.PrefixStore("b", outer)
    x = payload(device, dtype)
    inner.set("t", enc(x))
    return [inner.underlying_store is not None, dec(base.get("a/b/t"), device),
            dec(outer.get("b/t"), device), base.check(["t"]),
            dec(inner.underlying_store.get("b/t"), device)]


# -- in-process torch.distributed queries ---------------------------------------------------

def availability(device, dtype):
    """What the build offers, asked with the device as the default device, next to a
    device computation."""
    import torch.distributed as dist

    with torch.device(device):
        x = torch.ones(3, dtype=dtype) * 2
    return [dist.is_available(), dist.is_gloo_available(), dist.is_mpi_available(),
            dist.is_nccl_available(), x]


def torchelastic_launched(device, dtype):
    import torch.distributed as dist

    old = os.environ.pop("TORCHELASTIC_RUN_ID", None)
    try:
        x = payload(device, dtype)
        outside = dist.is_torchelastic_launched()
        os.environ["TORCHELASTIC_RUN_ID"] = "tp-run"
        inside = dist.is_torchelastic_launched()
    finally:
        os.environ.pop("TORCHELASTIC_RUN_ID", None)
        if old is not None:
            os.environ["TORCHELASTIC_RUN_ID"] = old
    return [outside, inside, x]


def backend_names(device, dtype):
    """``Backend(name)`` normalises names; unknown names are refused."""
    import torch.distributed as dist

    x = payload(device, dtype)
    got = [dist.Backend("GLOO"), dist.Backend("gloo") == dist.Backend.GLOO, dist.Backend("NcCl")]
    try:
        dist.Backend("undefined")
        got.append("accepted")
    except ValueError as exc:
        got.append(type(exc).__name__)
    return got + [x]


def dist_backend_error(device, dtype):
    """``DistBackendError``: its place among the distributed errors, raised and caught."""
    import torch.distributed as dist

    x = payload(device, dtype)
    try:
        raise dist.DistBackendError(f"backend gave {x.float().sum().item():.3f}")
    except dist.DistError as exc:
        caught = [type(exc).__name__, str(exc), isinstance(exc, RuntimeError)]
    return caught + [issubclass(dist.DistBackendError, dist.DistError)]


def store_rows() -> Dict[str, List[Tuple[str, Any, str]]]:
    """API -> [(scenario id, body or (body, params), what it checks)] for the store and
    query APIs (bodies ``(device, dtype, **params)``)."""
    rows: Dict[str, List[Tuple[str, Any, str]]] = {}
    for member, case in STORE_MEMBERS.items():
        rows[f"torch.distributed.Store.{member}"] = [
            (f"{kind}-{case}", (store_method, {"case": case, "kind": kind}), f"{case} on a {kind} store, values made on the device")
            for kind in STORE_KINDS]
    sub = ("py-subclass", store_subclass, "a Store subclassed in Python, used through a PrefixStore")
    rows["torch.distributed.Store"] = [sub]
    rows["torch.distributed.Store.__init__"] = [sub]
    tcp = ("tcp-members", tcp_members, "master and client on 127.0.0.1: host, port, libuvBackend, shared keys")
    classic = ("tcp-classic", tcp_classic, "use_libuv=False: the classic backend")
    for name in ("TCPStore", "TCPStore.__init__", "TCPStore.host", "TCPStore.port"):
        rows[f"torch.distributed.{name}"] = [tcp]
    rows["torch.distributed.TCPStore.libuvBackend"] = [tcp, classic]
    rows["torch.distributed.TCPStore"].append(classic)
    for name in ("FileStore", "FileStore.__init__", "FileStore.path"):
        rows[f"torch.distributed.{name}"] = [("file-members", file_members, "two handles on one file")]
    for name in ("HashStore", "HashStore.__init__"):
        rows[f"torch.distributed.{name}"] = [("hash-members", hash_members, "in-memory maps")]
    for name in ("PrefixStore", "PrefixStore.__init__", "PrefixStore.underlying_store"):
        rows[f"torch.distributed.{name}"] = [("prefix-members", prefix_members, "nested prefixes")]
    avail = ("availability", availability, "the build's backends, device as default device")
    for name in ("is_available", "is_gloo_available", "is_mpi_available", "is_nccl_available"):
        rows[f"torch.distributed.{name}"] = [avail]
    rows["torch.distributed.is_torchelastic_launched"] = [
        ("env", torchelastic_launched, "False outside an elastic launch, True with TORCHELASTIC_RUN_ID")]
    rows["torch.distributed.Backend"] = [("names", backend_names, "name normalisation and refusal")]
    rows["torch.distributed.DistBackendError"] = [("raise", dist_backend_error, "raised and caught as DistError")]
    return rows

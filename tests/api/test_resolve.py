import pytest

from torchparity.api.resolve import resolve, same_api
from torchparity.errors import UnknownApiError


def test_function_attribute_wins_over_same_named_module():
    r = resolve("torch.autograd.gradcheck")
    assert callable(r.obj) and r.obj.__name__ == "gradcheck"
    assert r.qualified_name == "torch.autograd.gradcheck.gradcheck"
    assert "torch.autograd.gradcheck" in r.aliases


def test_qualified_spelling_reaches_the_same_object():
    assert resolve("torch.autograd.gradcheck.gradcheck").obj is resolve("torch.autograd.gradcheck").obj
    assert same_api("torch.autograd.gradcheck", "torch.autograd.gradcheck.gradcheck")


def test_builtins_keep_their_public_spelling():
    assert resolve("torch.mm").qualified_name == "torch.mm"
    assert resolve("torch.ops.aten.mm").qualified_name == "torch.ops.aten.mm"


def test_unknown_name_suggests_close_matches():
    with pytest.raises(UnknownApiError) as info:
        resolve("torch.autograd.forward_ad.unpak_dual")
    msg = str(info.value)
    assert "torch.autograd.forward_ad.unpack_dual" in msg and "\n" not in msg


def test_unknown_name_without_close_match_still_suggests():
    with pytest.raises(UnknownApiError) as info:
        resolve("torch.autograd.no_such_thing")
    assert "did you mean" in str(info.value)


@pytest.mark.parametrize("bad", ["", "torch..x", "1torch", "nosuchmodule_xyz.f"])
def test_malformed_or_unimportable(bad):
    with pytest.raises(UnknownApiError):
        resolve(bad)


class _NeedsBackend:
    """Like torch.backends.cuda.cufft_plan_cache: any attribute asks for a missing backend."""

    def __getattr__(self, name):
        raise AssertionError("Torch not compiled with FOO enabled")


def test_attribute_access_that_asserts_never_escapes(monkeypatch):
    import sys
    import types

    from torchparity.api.resolve import maybe_resolve

    mod = types.ModuleType("tp_fake_backend_mod")
    mod.cache = _NeedsBackend()
    monkeypatch.setitem(sys.modules, "tp_fake_backend_mod", mod)
    monkeypatch.setenv("TORCHPARITY_NAMESPACES", "tp_fake_backend_mod")  # a backend's namespace
    r = maybe_resolve("tp_fake_backend_mod.cache")  # reading its __module__ etc. asserts
    assert r is not None and r.obj is mod.cache and r.qualified_name == "tp_fake_backend_mod.cache"
    with pytest.raises(UnknownApiError) as info:
        resolve("tp_fake_backend_mod.cache.size")
    msg = str(info.value)
    assert "AssertionError: Torch not compiled with FOO enabled" in msg and "\n" not in msg


def test_cuda_backend_names_resolve_on_any_build():
    from torchparity.api.resolve import maybe_resolve

    assert maybe_resolve("torch.backends.cuda.cufft_plan_cache") is not None

"""Copying and serialising device tensors: deepcopy, torch.save/load, pickle."""

from __future__ import annotations

import copy
import io
import pickle

import torch


def test_deepcopy(dev):
    x = torch.randn(3, 4).to(dev)
    view = x[1:]
    a, b = copy.deepcopy((x, view))
    assert a.device.type == dev and torch.equal(a.cpu(), x.cpu())
    assert a.data_ptr() != x.data_ptr()
    b[0, 0] = 123.0  # the copies still share their storage, like the originals
    assert a[1, 0].item() == 123.0 and x[1, 0].item() != 123.0
    model = torch.nn.Linear(4, 2).to(dev)
    clone = copy.deepcopy(model)
    assert clone.weight.device.type == dev
    assert torch.equal(clone.weight.cpu(), model.weight.cpu())


def test_save_and_load(dev):
    x = torch.randn(3, 4).to(dev)
    buf = io.BytesIO()
    torch.save({"x": x, "row": x[2], "w": torch.nn.Linear(2, 2).to(dev).state_dict()}, buf)
    buf.seek(0)
    loaded = torch.load(buf)
    assert loaded["x"].device.type == dev and torch.equal(loaded["x"].cpu(), x.cpu())
    loaded["row"][0] = -5.0  # storage sharing survives the round trip
    assert loaded["x"][2, 0].item() == -5.0
    buf.seek(0)
    on_cpu = torch.load(buf, map_location="cpu")
    assert on_cpu["x"].is_cpu and torch.equal(on_cpu["x"], x.cpu())
    cpu_buf = io.BytesIO()
    torch.save(x.cpu(), cpu_buf)
    cpu_buf.seek(0)
    moved = torch.load(cpu_buf, map_location=dev)
    assert moved.device.type == dev and torch.equal(moved.cpu(), x.cpu())
    legacy = io.BytesIO()
    torch.save(x, legacy, _use_new_zipfile_serialization=False)
    legacy.seek(0)
    assert torch.equal(torch.load(legacy).cpu(), x.cpu())


def test_pickle(dev):
    x = torch.randn(5, dtype=torch.float64).to(dev).requires_grad_()
    y = pickle.loads(pickle.dumps(x))
    assert y.device.type == dev and y.requires_grad and torch.equal(y.detach().cpu(),
                                                                    x.detach().cpu())

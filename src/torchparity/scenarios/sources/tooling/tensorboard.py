"""The ``tooling`` cases of ``torch.utils.tensorboard`` and ``torch.monitor``'s TensorBoard
handler: a ``SummaryWriter`` given tensors on the device writes its events to a temporary
folder, and the body returns what was written, read back with TensorBoard's own event
loader: every event's summary (tags, values, histograms, images, audio, meshes, PR
curves, text, hparams) and the other files a writer makes (an embedding's projector
files), with wall times, file names and the temporary path left out. Compared with the
same body on the CPU: a device whose tensors reach the writer wrong (values, shapes,
dtypes the host copy gets wrong) writes other events.

Only where the ``tensorboard`` package is installed (``pip install 'torchparity[tensorboard]'``);
``add_figure`` needs matplotlib and ``add_video`` moviepy (named reasons where they are not).
The helpers and bodies live in this one file: a body's snippet is its source with the
helpers it uses, and runs on its own.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile

import torch

from ..base import Case, Excluded

F64 = ("float32", "float64")
SW = "torch.utils.tensorboard.writer.SummaryWriter"
MONITOR = "torch.monitor.TensorboardEventHandler"


def installed(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


def events(logdir):
    """What the writer wrote under ``logdir``: per file (relative path, run folders
    included), its events' summaries as dicts, or a non-event file's text."""
    from google.protobuf.json_format import MessageToDict
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    written = {}
    for root, _, files in sorted(os.walk(logdir)):
        for name in sorted(files):
            path = os.path.join(root, name)
            where = os.path.relpath(root, logdir)
            if "tfevents" in name:
                got = [event_facts(e, MessageToDict) for e in EventFileLoader(path).Load()]
                key = os.path.join(where, "events")
                written[key] = written.get(key, []) + [g for g in got if g]
            else:
                with open(path, encoding="utf-8", errors="replace") as f:
                    written[os.path.join(where, name)] = f.read().replace(logdir, "<logdir>")
    return written


def event_facts(event, to_dict):
    """An event's summary as a dict; a graph event's nodes as (name, op, inputs) (their
    attributes name the device they ran on, as on any accelerator: left out); None for
    the file's header."""
    if event.HasField("summary"):
        return to_dict(event.summary)
    if event.graph_def:
        from tensorboard.compat.proto.graph_pb2 import GraphDef

        graph = GraphDef.FromString(event.graph_def)
        return {"graph": [(n.name, n.op, list(n.input)) for n in graph.node]}
    return None


def written_by(write, device, dtype):
    """``write(writer, device, dtype)`` into a fresh SummaryWriter; then what it wrote."""
    from torch.utils.tensorboard import SummaryWriter

    with tempfile.TemporaryDirectory() as logdir:
        writer = SummaryWriter(log_dir=logdir, flush_secs=3600)
        try:
            write(writer, device, dtype)
        finally:
            writer.close()
        return events(logdir)


def signal(device, dtype, n=12):
    """values in [-1, 1], made on the CPU and moved"""
    return torch.sin(torch.linspace(0, 6, n, dtype=dtype)).to(device)


def image(device, dtype, n=0):
    """a 3 x 4 x 5 image in [0, 1] (CHW), made on the CPU and moved"""
    return ((torch.arange(60, dtype=dtype).reshape(3, 4, 5) * (7 + n)) % 11 / 10).to(device)


def write_scalar(w, device, dtype):
    x = signal(device, dtype)
    w.add_scalar("x/sum", x.sum(), global_step=1)
    w.add_scalar("x/max", x.max(), global_step=2)


def summary_writer(device, dtype):
    return written_by(write_scalar, device, dtype)


def write_scalars(w, device, dtype):
    x = signal(device, dtype)
    w.add_scalars("run", {"first": x[0], "mean": x.mean()}, global_step=3)


def add_scalars(device, dtype):
    return written_by(write_scalars, device, dtype)


def write_histogram(w, device, dtype):
    w.add_histogram("h", signal(device, dtype, 50), global_step=1, bins="auto")
    w.add_histogram("h10", signal(device, dtype, 50) * 3, global_step=2, bins=10)


def add_histogram(device, dtype):
    return written_by(write_histogram, device, dtype)


def write_image(w, device, dtype):
    w.add_image("img", image(device, dtype), global_step=1)
    w.add_image("hwc", image(device, dtype, 1).permute(1, 2, 0), global_step=2, dataformats="HWC")


def add_image(device, dtype):
    return written_by(write_image, device, dtype)


def write_images(w, device, dtype):
    w.add_images("batch", torch.stack([image(device, dtype, n) for n in range(3)]), global_step=1)


def add_images(device, dtype):
    return written_by(write_images, device, dtype)


def write_audio(w, device, dtype):
    w.add_audio("wave", signal(device, dtype, 400).reshape(1, -1) * 0.5, global_step=1, sample_rate=8000)


def add_audio(device, dtype):
    return written_by(write_audio, device, dtype)


def write_text(w, device, dtype):
    w.add_text("notes", "a **markdown** note", global_step=1)


def add_text(device, dtype):
    return written_by(write_text, device, dtype)


def write_pr_curve(w, device, dtype):
    predictions = (signal(device, dtype, 40) + 1) / 2
    labels = (torch.arange(40) % 3 == 0).to(device)
    w.add_pr_curve("pr", labels, predictions, global_step=1, num_thresholds=11)


def add_pr_curve(device, dtype):
    return written_by(write_pr_curve, device, dtype)


def write_mesh(w, device, dtype):
    vertices = torch.tensor([[[1, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]], dtype=dtype).to(device)
    colors = torch.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]], dtype=torch.int32).to(device)
    faces = torch.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]], dtype=torch.int32).to(device)
    w.add_mesh("tetra", vertices=vertices * signal(device, dtype, 4).abs().reshape(1, 4, 1), colors=colors,
               faces=faces, global_step=1)


def add_mesh(device, dtype):
    return written_by(write_mesh, device, dtype)


def write_embedding(w, device, dtype):
    mat = signal(device, dtype, 24).reshape(6, 4)
    w.add_embedding(mat, metadata=[f"p{i}" for i in range(6)], global_step=1, tag="points")


def add_embedding(device, dtype):
    return written_by(write_embedding, device, dtype)


def write_hparams(w, device, dtype):
    x = signal(device, dtype)
    w.add_hparams({"lr": 0.1, "layers": 2, "optim": "sgd"}, {"metric/loss": float(x.abs().sum())},
                  run_name="trial")


def add_hparams(device, dtype):
    return written_by(write_hparams, device, dtype)


def write_custom_scalars(w, device, dtype):
    w.add_custom_scalars({"losses": {"both": ["Multiline", ["x/sum", "x/max"]]}})
    write_scalar(w, device, dtype)


def add_custom_scalars(device, dtype):
    return written_by(write_custom_scalars, device, dtype)


def write_graph(w, device, dtype):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()).to(device=device, dtype=dtype)
    w.add_graph(net, torch.linspace(-1, 1, 6, dtype=dtype).reshape(2, 3).to(device))


def add_graph(device, dtype):
    return written_by(write_graph, device, dtype)


def flush(device, dtype):
    """what a reader sees after ``flush()``, before the writer is closed"""
    from torch.utils.tensorboard import SummaryWriter

    with tempfile.TemporaryDirectory() as logdir:
        writer = SummaryWriter(log_dir=logdir, flush_secs=3600)
        write_scalar(writer, device, dtype)
        writer.flush()
        seen = events(logdir)
        writer.close()
        return seen


def close(device, dtype):
    """what a reader sees after ``close()``, and that the file is done with: the writer's
    next write opens an event file of its own. (What a reader sees alone does not tell a
    close: the writer's thread appends each event soon after it is added, closed or not.)"""
    from torch.utils.tensorboard import SummaryWriter

    with tempfile.TemporaryDirectory() as logdir:
        writer = SummaryWriter(log_dir=logdir, flush_secs=3600)
        write_scalar(writer, device, dtype)
        writer.close()
        seen = events(logdir)
        writer.add_scalar("after_close", 1.0, 0)
        writer.close()
        files = [n for n in os.listdir(logdir) if "tfevents" in n]
        return {"read": seen, "event_files": len(files)}


def monitor_handler(device, dtype):
    """torch.monitor events logged through the TensorBoard handler: their data as scalars"""
    import datetime

    from torch.utils.tensorboard import SummaryWriter

    x = signal(device, dtype)
    with tempfile.TemporaryDirectory() as logdir:
        writer = SummaryWriter(log_dir=logdir, flush_secs=3600)
        handle = torch.monitor.register_event_handler(torch.monitor.TensorboardEventHandler(writer))
        try:
            # the handler writes the events named STAT_EVENT (a Stat's), each datum a scalar
            torch.monitor.log_event(torch.monitor.Event(
                name=torch.monitor.STAT_EVENT, timestamp=datetime.datetime.fromtimestamp(0),
                data={"tp.sum": float(x.sum()), "tp.max": float(x.max())}))
        finally:
            torch.monitor.unregister_event_handler(handle)
        writer.close()
        return events(logdir)


def rows():
    """The cases where tensorboard is installed, else each API with the reason it has none."""
    if not installed("tensorboard"):
        why = "needs the tensorboard package, which is not installed (pip install 'torchparity[tensorboard]')"
        return tuple(Excluded(api, why) for api in APIS)
    cases = [
        Case(SW, summary_writer, F64, aliases=(SW + ".__init__", SW + ".add_scalar")),
        Case(SW + ".add_scalars", add_scalars, F64),
        Case(SW + ".add_histogram", add_histogram, F64),
        Case(SW + ".add_image", add_image, F64),
        Case(SW + ".add_images", add_images, F64),
        Case(SW + ".add_audio", add_audio, F64),
        Case(SW + ".add_text", add_text),
        Case(SW + ".add_pr_curve", add_pr_curve, F64),
        Case(SW + ".add_mesh", add_mesh, F64),
        Case(SW + ".add_embedding", add_embedding, F64),
        Case(SW + ".add_hparams", add_hparams, F64),
        Case(SW + ".add_custom_scalars", add_custom_scalars),
        Case(SW + ".add_graph", add_graph),  # the model it traces is scaffolding: float32 only
        Case(SW + ".flush", flush),
        Case(SW + ".close", close),
        Case(MONITOR, monitor_handler, aliases=(MONITOR + ".__init__",)),
    ]
    figure = "needs matplotlib, which is not installed" if not installed("matplotlib") else None
    video = "needs moviepy, which is not installed" if not installed("moviepy") else None
    return tuple(cases) + tuple(Excluded(api, why) for api, why in (
        (SW + ".add_figure", figure or "draws a matplotlib figure: no device tensor reaches the writer"),
        (SW + ".add_video", video or "encodes a GIF with moviepy from host frames"),
    ))


APIS = (SW, SW + ".__init__", SW + ".add_scalar", SW + ".add_scalars", SW + ".add_histogram", SW + ".add_image",
        SW + ".add_images", SW + ".add_audio", SW + ".add_text", SW + ".add_pr_curve", SW + ".add_mesh",
        SW + ".add_embedding", SW + ".add_hparams", SW + ".add_custom_scalars", SW + ".add_graph", SW + ".flush",
        SW + ".close", SW + ".add_figure", SW + ".add_video", MONITOR, MONITOR + ".__init__")

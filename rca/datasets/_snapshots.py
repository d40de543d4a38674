"""Synthetic PyTorch CUDA memory snapshots in the shape ``torch.cuda.memory._dump_snapshot`` writes.

Allocations are laid out the way the caching allocator lays them out (c10/cuda/CUDACachingAllocator.cpp):
sizes rounded up to 512 bytes; requests under 1 MiB share 2 MiB "small" segments, requests up
to 10 MiB share 20 MiB "large" segments, bigger ones get a segment of their own rounded up to
2 MiB, whose remainder is an inactive block. A freed allocation leaves an inactive block where
it was; allocations given one ``arena`` were carved from one cached block, so the holes freed
ones leave between live ones cannot be released: that is what fragmentation looks like. Each block's stack (``frames``, innermost first)
runs through PyTorch's own frames to the allocation site and on to the caller, and the trace
records ``segment_alloc`` / ``alloc`` / ``free_requested`` / ``free_completed`` (and ``oom``)
entries with ``time_us``.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass

MIB = 2**20
_SMALL_REQUEST = MIB
_SMALL_SEGMENT = 2 * MIB
_MEDIUM_REQUEST = 10 * MIB
_MEDIUM_SEGMENT = 20 * MIB
_ROUND = 512
_TORCH = "/opt/conda/lib/python3.11/site-packages/torch"
_TORCH_FRAMES = {
    "empty": [],
    "linear": [{"filename": f"{_TORCH}/nn/modules/linear.py", "line": 125, "name": "forward"},
               {"filename": f"{_TORCH}/nn/modules/module.py", "line": 1747, "name": "_call_impl"}],
    "backward": [{"filename": f"{_TORCH}/autograd/graph.py", "line": 825, "name": "_engine_run_backward"},
                 {"filename": f"{_TORCH}/_tensor.py", "line": 626, "name": "backward"}],
    "optimizer": [{"filename": f"{_TORCH}/optim/adamw.py", "line": 418, "name": "_single_tensor_adamw"},
                  {"filename": f"{_TORCH}/optim/optimizer.py", "line": 487, "name": "wrapper"}],
}


@dataclass(frozen=True)
class Allocation:
    """One tensor the program allocated: where (``file:line:function``), how big, when, and whether it was freed."""

    site: str
    size: int
    time_us: int
    freed_us: int | None = None
    via: str = "empty"  # which PyTorch frames sit above the site (see _TORCH_FRAMES)
    caller: str = "/workspace/app/train.py:212:main"
    arena: str | None = None  # allocations naming the same arena share one segment


def _frame(site: str) -> dict:
    path, line, name = site.rsplit(":", 2)
    return {"filename": path, "line": int(line), "name": name}


def _rounded(size: int) -> int:
    return max(_ROUND, -(-size // _ROUND) * _ROUND)


def _segment_size(size: int) -> int:
    if size <= _SMALL_REQUEST:
        return _SMALL_SEGMENT
    if size <= _MEDIUM_REQUEST:
        return _MEDIUM_SEGMENT
    return -(-size // (2 * MIB)) * (2 * MIB)


class _Layout:
    """Blocks placed into segments as the caching allocator places them, with its trace."""

    def __init__(self, device: int, arena_sizes: dict[str, int]) -> None:
        self.device = device
        self.arena_sizes = arena_sizes
        self.segments: list[dict] = []
        self.trace: list[dict] = []
        self._filling: dict[object, dict] = {}  # size class or arena -> the segment being filled
        self._cached: dict[int, list[tuple[int, dict]]] = {}  # block size -> (freed at, block) a later request may reuse
        self._address = 0x7F0000000000
        self._stacks: dict[tuple[str, str, str], list[dict]] = {}

    def place(self, alloc: Allocation) -> None:
        size = _rounded(alloc.size)
        # One stack object per call site, as PyTorch's symbolizer shares them (the pickle memo then stores it once).
        frames = self._stacks.setdefault((alloc.via, alloc.site, alloc.caller),
                                         [*_TORCH_FRAMES[alloc.via], _frame(alloc.site), _frame(alloc.caller)])
        block = self._reuse(size, alloc.time_us) if alloc.arena is None else None
        if block is None:
            block = self._carve(alloc, size, frames)
        block.update(requested_size=alloc.size, frames=frames, state="active_allocated" if alloc.freed_us is None else "inactive")
        self._record("alloc", block["address"], size, alloc.time_us, frames)
        if alloc.freed_us is not None:
            self._record("free_requested", block["address"], size, alloc.freed_us, frames)
            self._record("free_completed", block["address"], size, alloc.freed_us, frames)
            if alloc.arena is None:
                self._cached.setdefault(size, []).append((alloc.freed_us, block))

    def _reuse(self, size: int, at: int) -> dict | None:
        cached = self._cached.get(size, [])
        for index, (freed_at, block) in enumerate(cached):
            if freed_at <= at:
                return cached.pop(index)[1]
        return None

    def _carve(self, alloc: Allocation, size: int, frames: list[dict]) -> dict:
        seg_size = _segment_size(self.arena_sizes[alloc.arena] if alloc.arena is not None else size)
        key = alloc.arena if alloc.arena is not None else seg_size
        shared = alloc.arena is not None or seg_size in (_SMALL_SEGMENT, _MEDIUM_SEGMENT)
        segment = self._filling.get(key) if shared else None
        if segment is None or segment["used"] + size > segment["total_size"]:
            segment = {"device": self.device, "address": self._address, "total_size": seg_size, "stream": 0,
                       "segment_type": "small" if seg_size == _SMALL_SEGMENT else "large", "segment_pool_id": (0, 0),
                       "is_expandable": False, "frames": frames, "blocks": [], "used": 0}
            self._address += seg_size
            self.segments.append(segment)
            if shared:
                self._filling[key] = segment
            self._record("segment_alloc", segment["address"], seg_size, alloc.time_us, frames)
        block = {"address": segment["address"] + segment["used"], "size": size}
        segment["used"] += size
        segment["blocks"].append(block)
        return block

    def _record(self, action: str, address: int, size: int, at: int, frames: list[dict]) -> None:
        self.trace.append({"action": action, "addr": address, "size": size, "stream": 0, "time_us": at, "frames": frames})


def build(
    allocations: list[Allocation], *, device: int = 0, oom: tuple[int, int, int] | None = None, taken_us: int | None = None
) -> dict:
    """The snapshot dict for ``allocations`` on ``device``.

    ``oom`` = (time_us, requested, device_free) adds a failed request to the trace; ``taken_us``
    the "snapshot" entry PyTorch records when the snapshot is taken.
    """
    arena_sizes: dict[str, int] = {}
    for alloc in allocations:
        if alloc.arena is not None:
            arena_sizes[alloc.arena] = arena_sizes.get(alloc.arena, 0) + _rounded(alloc.size)
    layout = _Layout(device, arena_sizes)
    for alloc in sorted(allocations, key=lambda a: a.time_us):
        layout.place(alloc)
    if oom is not None:
        at, requested, free = oom
        layout.trace.append({"action": "oom", "size": requested, "stream": 0, "time_us": at, "device_free": free, "frames": []})
    if taken_us is not None:
        layout.trace.append({"action": "snapshot", "size": 0, "stream": 0, "time_us": taken_us, "frames": []})
    for segment in layout.segments:
        _close(segment)
    trace = sorted(layout.trace, key=lambda entry: entry["time_us"])
    return {"segments": layout.segments, "device_traces": [[] for _ in range(device)] + [trace],
            "allocator_settings": {"expandable_segments": False}}


def _close(segment: dict) -> None:
    """Finish a segment: its unused tail is an inactive block, and its sizes sum its blocks."""
    rest = segment["total_size"] - segment.pop("used")
    if rest:
        last = segment["blocks"][-1]
        segment["blocks"].append({"address": last["address"] + last["size"], "size": rest, "requested_size": 0, "state": "inactive",
                                  "frames": []})
    live = [b for b in segment["blocks"] if b["state"] == "active_allocated"]
    segment["allocated_size"] = segment["active_size"] = sum(b["size"] for b in live)
    segment["requested_size"] = sum(b["requested_size"] for b in live)


def dumps(snapshot: dict) -> bytes:
    """The snapshot pickled as ``_dump_snapshot`` pickles it (protocol 4, Python's default from 3.8 to 3.13)."""
    return pickle.dumps(snapshot, protocol=4)

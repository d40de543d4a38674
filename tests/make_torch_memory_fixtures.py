"""Write the fixtures under tests/data/torch_memory/ (run from the repository root; the output is deterministic).

No GPU records them here, so the snapshot pickles are built by :mod:`rca.datasets._snapshots`
in the shape ``torch.cuda.memory._snapshot`` documents; the ``memory_summary()`` tables are
printed by PyTorch's own ``torch.cuda.memory.memory_summary`` over made-up allocator stats.

- snapshots/leak_after_10_requests.pickle, snapshots/leak_after_25_requests.pickle: a service
  whose retriever keeps the 42 MiB embedding of every request (the tensors are never detached
  from the cache), next to stable weights and freed activations;
- snapshots/fragmented_oom.pickle: a trainer whose freed activations left holes between live
  blocks, then an OOM for a request no hole can hold;
- memory_summary_oom_device0.txt, memory_summary_two_devices_in_log.txt: summaries as printed.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from rca.datasets._snapshots import MIB, Allocation, build, dumps

OUT = Path(__file__).parent / "data" / "torch_memory"
T0 = 1_764_500_000_000_000  # 2025-11-30T10:53:20Z in microseconds
RETRIEVER = "/workspace/app/retriever.py:88:embed_query"
WEIGHTS = "/workspace/app/model.py:41:__init__"
ACTIVATIONS = "/workspace/app/model.py:97:forward"
TOKENS = "/workspace/app/server.py:133:handle_request"


def _service(requests: int) -> list[Allocation]:
    weights = [Allocation(WEIGHTS, 512 * MIB, T0 + k * 1000, via="linear", caller="/workspace/app/server.py:30:load") for k in range(8)]
    per_request = []
    for r in range(requests):
        at = T0 + 10_000_000 + r * 2_000_000
        per_request.append(Allocation(RETRIEVER, 42 * MIB, at, caller="/workspace/app/server.py:140:handle_request"))
        per_request.append(Allocation(ACTIVATIONS, 96 * MIB, at + 1000, freed_us=at + 900_000, via="linear",
                                      caller="/workspace/app/server.py:141:handle_request"))
        per_request.append(Allocation(TOKENS, 8192, at + 2000, freed_us=at + 950_000, caller="/workspace/app/server.py:133:handle_request"))
    return weights + per_request


def _fragmented() -> list[Allocation]:
    allocations = []
    for k in range(64):
        at = T0 + k * 50_000
        # Every other 60 MiB activation was freed, but its neighbours pin their segment.
        allocations.append(Allocation(ACTIVATIONS, 60 * MIB + 4096, at, freed_us=at + 20_000 if k % 2 == 0 else None, via="backward",
                                      caller="/workspace/train/loop.py:57:train_step", arena="activations"))
    return allocations


def _summary_stats(allocated: int, peak: int, reserved: int, non_releasable: int, ooms: int) -> dict:
    stats: dict = defaultdict(int)
    shares = {"all": 1.0, "large_pool": 0.97, "small_pool": 0.03}
    for metric, (cur, top) in {
        "allocated_bytes": (allocated, peak), "active_bytes": (allocated, peak), "requested_bytes": (allocated * 0.99, peak * 0.99),
        "reserved_bytes": (reserved, reserved), "inactive_split_bytes": (non_releasable, non_releasable),
        "allocation": (5120, 6400), "active": (5120, 6400), "segment": (412, 420), "inactive_split": (380, 500),
    }.items():
        for pool, share in shares.items():
            prefix = f"{metric}.{pool}."
            stats[prefix + "current"], stats[prefix + "peak"] = int(cur * share), int(top * share)
            stats[prefix + "allocated"], stats[prefix + "freed"] = int(top * 40 * share), int((top * 40 - cur) * share)
    stats["num_ooms"], stats["num_alloc_retries"] = ooms, ooms * 3
    return stats


def _memory_summary(device: int, stats: dict) -> str:
    import torch.cuda.memory as cuda_memory

    real = cuda_memory.memory_stats
    cuda_memory.memory_stats = lambda device=None: stats
    try:
        return cuda_memory.memory_summary(device=device)
    finally:
        cuda_memory.memory_stats = real


def main() -> None:
    snapshots = OUT / "snapshots"
    snapshots.mkdir(parents=True, exist_ok=True)
    for requests in (10, 25):
        (snapshots / f"leak_after_{requests}_requests.pickle").write_bytes(dumps(build(_service(requests))))
    oom = (T0 + 4_000_000, 90 * MIB, 38 * MIB)
    (snapshots / "fragmented_oom.pickle").write_bytes(dumps(build(_fragmented(), device=1, oom=oom)))
    gib = 2**30
    (OUT / "memory_summary_oom_device0.txt").write_text(_memory_summary(0, _summary_stats(61 * gib, 74 * gib, 78 * gib, 9 * gib, 2)))
    log = (
        "2025-11-30 10:52:01,114 INFO trainer: step 1200 loss 1.8312\n"
        + _memory_summary(0, _summary_stats(30 * gib, 31 * gib, 33 * gib, 2 * gib, 0))
        + "2025-11-30 10:52:01,120 INFO trainer: rank 1 allocator state\n"
        + _memory_summary(1, _summary_stats(12 * gib, 20 * gib, 40 * gib, 27 * gib, 0))
    )
    (OUT / "memory_summary_two_devices_in_log.txt").write_text(log)


if __name__ == "__main__":
    main()

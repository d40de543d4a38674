"""cgroup memory files as an OOM hook copies them off a node the moment a kill happens.

Incident writers record what the memory controller would say (:class:`CgroupReading`); this
module writes it as the kernel lays it out: v1 under ``sys/fs/cgroup/memory/<path>/``
(``memory.usage_in_bytes``, ``memory.max_usage_in_bytes``, ``memory.limit_in_bytes``,
``memory.failcnt``, ``memory.oom_control``, ``memory.stat``), v2 under ``sys/fs/cgroup/<path>/``
(``memory.current``, ``memory.peak``, ``memory.max``, ``memory.events``, ``memory.stat``), with the
keys of memory.stat in the kernel's order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

V1_UNLIMITED = 9223372036854771712  # PAGE_COUNTER_MAX pages of 4 KiB, what v1 prints for "no limit"
_V2_STAT_KEYS = (
    "anon", "file", "kernel", "kernel_stack", "pagetables", "sec_pagetables", "percpu", "sock", "vmalloc", "shmem", "zswap",
    "zswapped", "file_mapped", "file_dirty", "file_writeback", "swapcached", "anon_thp", "file_thp", "shmem_thp", "inactive_anon",
    "active_anon", "inactive_file", "active_file", "unevictable", "slab_reclaimable", "slab_unreclaimable", "slab",
    "workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon", "workingset_activate_file",
    "workingset_restore_anon", "workingset_restore_file", "workingset_nodereclaim", "pgscan", "pgsteal", "pgscan_kswapd",
    "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "pgfault", "pgmajfault", "pgrefill", "pgactivate", "pgdeactivate",
    "pglazyfree", "pglazyfreed", "thp_fault_alloc", "thp_collapse_alloc",
)
_V1_STAT_KEYS = (
    "cache", "rss", "rss_huge", "shmem", "mapped_file", "dirty", "writeback", "pgpgin", "pgpgout", "pgfault", "pgmajfault",
    "inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable", "hierarchical_memory_limit",
)


@dataclass(frozen=True)
class CgroupReading:
    """A memory cgroup at one moment, as its files would show it."""

    path: str  # the memcg path the kernel prints: /kubepods/burstable/pod<uid>/<cid>, /system.slice/x.service
    at_us: int
    usage: int
    peak: int
    limit: int | None  # None: no limit of its own
    oom: int = 0  # times the usage reached the limit and an allocation was about to fail
    oom_kill: int = 0  # processes of the cgroup killed by any OOM killer
    shmem: int = 0


def files(reading: CgroupReading, version: str, rng: random.Random) -> dict[str, str]:
    """File name -> content of the reading's folder, for cgroup ``version`` ("v1" / "v2")."""
    limited = reading.limit is not None
    hit = reading.oom > 0
    stat = _stat_values(reading, rng)
    if version == "v1":
        v1 = {key: stat.get(key, 0) for key in _V1_STAT_KEYS}
        v1.update(cache=stat["file"], rss=stat["anon"], rss_huge=stat["anon_thp"], mapped_file=stat["file_mapped"],
                  hierarchical_memory_limit=reading.limit if limited else V1_UNLIMITED)
        totals = {f"total_{key}": value for key, value in v1.items() if key != "hierarchical_memory_limit"}
        return {
            "memory.usage_in_bytes": f"{reading.usage}\n",
            "memory.max_usage_in_bytes": f"{reading.peak}\n",
            "memory.limit_in_bytes": f"{reading.limit if limited else V1_UNLIMITED}\n",
            "memory.failcnt": f"{rng.randint(40, 90_000) if hit else 0}\n",
            "memory.oom_control": f"oom_kill_disable 0\nunder_oom 0\noom_kill {reading.oom_kill}\n",
            "memory.stat": _table({**v1, **totals}),
        }
    return {
        "memory.current": f"{reading.usage}\n",
        "memory.max": f"{reading.limit if limited else 'max'}\n",
        "memory.peak": f"{reading.peak}\n",
        "memory.events": _table({"low": 0, "high": 0, "max": rng.randint(40, 5_000) if hit else 0, "oom": reading.oom,
                                 "oom_kill": reading.oom_kill, "oom_group_kill": 0}),
        "memory.stat": _table({key: stat.get(key, 0) for key in _V2_STAT_KEYS}),
    }


def _stat_values(reading: CgroupReading, rng: random.Random) -> dict[str, int]:
    """memory.stat entries that add up to the usage: mostly anonymous memory, some page cache and kernel memory."""
    page = 4096
    kernel = min(rng.randint(8_000, 90_000) * page, reading.usage // 20)
    file = min(rng.randint(2_000, 60_000) * page, (reading.usage - kernel) // 10)
    anon = max(reading.usage - kernel - file, 0)
    faults = rng.randint(10**5, 10**8)
    return {
        "anon": anon, "file": file, "kernel": kernel, "kernel_stack": kernel // 24 // 16384 * 16384, "pagetables": kernel // 3 // page * page,
        "percpu": rng.randint(1, 90) * 64, "sock": rng.randint(0, 64) * page, "vmalloc": rng.randint(0, 16) * page,
        "shmem": reading.shmem, "file_mapped": file // 3 // page * page, "anon_thp": anon // 2 // (2 << 20) * (2 << 20),
        "inactive_anon": anon - anon // 40, "active_anon": anon // 40, "inactive_file": file * 4 // 5, "active_file": file - file * 4 // 5,
        "slab_reclaimable": kernel // 5 // page * page, "slab_unreclaimable": kernel // 9 // page * page,
        "slab": kernel // 5 // page * page + kernel // 9 // page * page, "workingset_refault_file": rng.randint(0, 5_000),
        "pgscan": faults // 80, "pgsteal": faults // 120, "pgscan_direct": faults // 80, "pgsteal_direct": faults // 120,
        "pgfault": faults, "pgmajfault": rng.randint(0, 900), "pgrefill": rng.randint(0, 9_000), "pgactivate": rng.randint(0, 90_000),
        "pgdeactivate": rng.randint(0, 9_000), "thp_fault_alloc": anon // (2 << 20) // 2,
    }


def _table(values: dict[str, int]) -> str:
    return "".join(f"{key} {value}\n" for key, value in values.items())

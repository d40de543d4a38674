"""Where incidents put their lines, and the evidence manifest entries that point at them."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import polars as pl

from rca.datasets._formats import ROW_SCHEMA, iso_nanos
from rca.datasets._model import Host, Pod

KUBELET = "kubelet"
KERNEL = "kernel"
SYSTEM = "system"
DEVICE_PLUGIN = "device_plugin"


def app_stream(pod: Pod, container: str | None = None) -> str:
    return f"app/{pod.uid}/{container or pod.main.name}"


@dataclass
class Evidence:
    """What one injected line says, in event-schema terms (null = the line does not say it)."""

    incident_key: str
    mode_id: str
    kind: str
    what: str
    pid: int | None = None
    pod: str | None = None
    namespace: str | None = None
    gpu_index: int | None = None
    container_id: str | None = None
    pod_uid: str | None = None
    pci_bus: str | None = None
    xid: int | None = None
    exit_code: int | None = None
    host: str = ""
    file: str = ""
    line: int = 0
    ts_utc: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))


class Sink:
    """Collects injected rows per (host, stream) and the evidence they carry."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], list[tuple]] = defaultdict(list)
        self.blocks: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
        self.evidence: list[Evidence] = []
        self.exited: set[str] = set()  # container ids whose exit is already written

    def register(self, evidence: Evidence, host: Host) -> int:
        """Add ``evidence`` to the manifest; returns the id its line carries."""
        evidence.host = host.name
        self.evidence.append(evidence)
        return len(self.evidence) - 1

    def _ev(self, evidence: Evidence | None, host: Host) -> int | None:
        return None if evidence is None else self.register(evidence, host)

    def line(
        self,
        host: Host,
        stream: str,
        ts: int,
        body: str,
        *,
        level: str | None = None,
        src: str | None = None,
        program: str | None = None,
        pid: int | None = None,
        raw: bool = False,
        evidence: Evidence | None = None,
        inc: bool = True,
        sub: int = 0,
    ) -> None:
        self.rows[(host.name, stream)].append((ts, sub, body, level, src, program, pid, raw, inc, self._ev(evidence, host)))

    def kubelet(self, host: Host, ts: int, level: str, src: str, body: str, evidence: Evidence | None = None, inc: bool = True) -> None:
        self.line(host, KUBELET, ts, body, level=level, src=src, program="kubelet", pid=host.kubelet_pid, evidence=evidence, inc=inc)

    def containerd(
        self, host: Host, ts: int, level: str, msg: str, tail: str = "", evidence: Evidence | None = None, inc: bool = True
    ) -> None:
        stamp = iso_nanos(ts)
        quoted = msg.replace("\\", "\\\\").replace('"', '\\"')
        body = f'time="{stamp}" level={level} msg="{quoted}"' + (f" {tail}" if tail else "")
        self.line(host, SYSTEM, ts, body, program="containerd", pid=host.containerd_pid, evidence=evidence, inc=inc)

    def systemd(self, host: Host, ts: int, msg: str, evidence: Evidence | None = None, inc: bool = True) -> None:
        self.line(host, SYSTEM, ts, msg, program="systemd", pid=1, evidence=evidence, inc=inc)

    def kernel(self, host: Host, ts: int, lines: Sequence[str | tuple[str, Evidence]], rng: random.Random, inc: bool = True) -> int:
        """A kernel record: consecutive lines a few microseconds apart; returns the last line's time."""
        at = ts
        for number, item in enumerate(lines):
            body, evidence = item if isinstance(item, tuple) else (item, None)
            at += rng.randint(1, 40) if number else 0
            self.line(host, KERNEL, at, body, evidence=evidence, inc=inc)
        self.blocks[(host.name, KERNEL)].append((ts, at))
        return at

    def block(
        self, host: Host, stream: str, ts: int, lines: Sequence[str | tuple[str, Evidence]], *, head: dict | None = None, inc: bool = True
    ) -> None:
        """A multi-line record in an application log: an optional framed first line, then raw lines."""
        sub = 0
        if head is not None:
            self.line(
                host,
                stream,
                ts,
                head["body"],
                level=head.get("level"),
                src=head.get("src"),
                program=head.get("program"),
                pid=head.get("pid"),
                evidence=head.get("evidence"),
                inc=inc,
                sub=sub,
            )
            sub += 1
        for item in lines:
            body, evidence = item if isinstance(item, tuple) else (item, None)
            self.line(host, stream, ts, body, raw=True, evidence=evidence, inc=inc, sub=sub)
            sub += 1
        self.blocks[(host.name, stream)].append((ts, ts))

    def frame(self, host: str, stream: str) -> pl.DataFrame:
        rows = self.rows.get((host, stream), [])
        return pl.DataFrame(rows, schema=ROW_SCHEMA, orient="row")

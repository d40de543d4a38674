"""Per-source parser throughput on typical noise, as ratios against a polars line read of the same text.

    python benchmarks/parsers.py [--lines 500000] [--only kernel_dmesg,templates] [--seed 7] [--profile NAME]

Each corpus is a few hundred thousand lines of the noise that dominates real files of that
source (link and bridge chatter in dmesg, probe and PLEG lines in kubelet logs, nvidia-smi
CSV and table loops), with a few real fixture records spliced in so the rules have
something to find. For every corpus it prints, measured in the same run:

* ``read``: ``polars.read_csv`` of the same bytes into one string column (the floor);
* ``parse``: the source's ``parse`` on the lines frame;
* ``ingest``: ``rca.ingest.parse_lines`` (parse + finish_events: template ids, event ids, schema);

as lines/s and as a multiple of the read, each the best of ``--repeat`` runs; ``cpu s`` is the
process CPU time of that ingest run (steadier than wall time on a shared machine; above wall
time where polars used several threads). ``templates`` times ``rca.templates.template_ids`` on
the kernel corpus' messages. No thresholds: the figures are for comparing runs.
``--profile NAME`` runs one corpus' ``parse_lines`` under cProfile instead.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from rca import sources, templates
from rca.ingest import parse_lines
from rca.sources._base import ParseContext

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "data"
_HEX = "0123456789abcdef"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_HEX) for _ in range(n))


def _uuid(rng: random.Random) -> str:
    return f"{_hex(rng, 8)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 12)}"


def _pod(rng: random.Random) -> str:
    name = rng.choice(("web", "api", "trainer", "coredns", "kube-proxy", "node-exporter", "data-loader"))
    template_hash = rng.choice(("7d4b9c8d5f", "5d78c9869d", "6c8b7f9d4"))
    return f"{name}-{template_hash}-{''.join(rng.choice('bcdfghjklmnpqrstvwxz2456789') for _ in range(5))}"


def _kernel_body(rng: random.Random, veths: list[str]) -> str:
    veth = rng.choice(veths)
    pick = rng.random()
    if pick < 0.22:
        return f"cni0: port {rng.randint(1, 64)}({veth}) entered {rng.choice(('blocking', 'disabled', 'forwarding'))} state"
    if pick < 0.38:
        return f"IPv6: ADDRCONF(NETDEV_CHANGE): {veth}: link becomes ready"
    if pick < 0.48:
        return f"device {veth} {rng.choice(('entered', 'left'))} promiscuous mode"
    if pick < 0.56:
        return f"e1000e: eth{rng.randint(0, 3)} NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx"
    if pick < 0.68:
        return (
            f'audit: type=1400 audit({rng.randint(1_700_000_000, 1_800_000_000)}.{rng.randint(0, 999):03d}:{rng.randint(1, 99999)}): '
            f'apparmor="STATUS" operation="profile_replace" info="same as current profile, skipping" profile="unconfined" '
            f'name="cri-containerd.apparmor.d" pid={rng.randint(1000, 99999)} comm="apparmor_parser"'
        )
    if pick < 0.76:
        return f"systemd[1]: Started cri-containerd-{_hex(rng, 64)}.scope - libcontainer container {_hex(rng, 64)}."
    if pick < 0.82:
        return f"eth0: renamed from tmp{_hex(rng, 5)}"
    if pick < 0.87:
        return ("overlayfs: upperdir is in-use as upperdir/workdir of another mount, "
                "accessing files from both mounts will result in undefined behavior.")
    if pick < 0.91:
        return f"IPVS: rr: TCP 10.96.{rng.randint(0, 255)}.{rng.randint(1, 254)}:443 - no destination available"
    if pick < 0.95:
        return (
            f"xfs filesystem being remounted at /var/lib/kubelet/pods/{_uuid(rng)}/volume-subpaths/config/app/0 "
            "supports timestamps until 2038 (0x7fffffff)"
        )
    if pick < 0.98:
        return (f"perf: interrupt took too long ({rng.randint(2500, 9000)} > 2500), "
                f"lowering kernel.perf_event_max_sample_rate to {rng.randint(20000, 80000)}")
    return f"TCP: request_sock_TCP: Possible SYN flooding on port {rng.choice((10250, 443, 6443))}. Sending cookies.  Check SNMP counters."


def _raw_fixture_lines() -> list[list[str]]:
    """Raw-dmesg fixture files (OOM blocks, Xids, fallen-off-the-bus) to splice into the noise."""
    blocks = []
    for path in sorted((FIXTURES / "kernel").glob("dmesg_*.log")):
        lines = path.read_text().splitlines()
        if lines and lines[0].startswith("["):
            blocks.append(lines)
    return blocks


def _spliced(rng: random.Random, n: int, noise: Callable[[int], str], blocks: list[list[str]], every: int) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        out.append(noise(len(out)))
        if blocks and rng.random() < 1 / every:
            out.extend(rng.choice(blocks))
    return out[:n]


def kernel_dmesg(n: int, rng: random.Random) -> str:
    veths = [f"veth{_hex(rng, 8)}" for _ in range(300)]
    clock = [1.0]

    def line(_: int) -> str:
        clock[0] += rng.random() * 0.05
        return f"[{clock[0]:12.6f}] {_kernel_body(rng, veths)}"

    return "\n".join(_spliced(rng, n, line, _raw_fixture_lines(), 5000)) + "\n"


def _syslog_stamp(moment: datetime) -> str:
    return moment.strftime("%b ") + f"{moment.day:2d}" + moment.strftime(" %H:%M:%S")


def kernel_syslog(n: int, rng: random.Random) -> str:
    """kern.log / journalctl -k short: the kernel's lines with boot stamps, a few other programs."""
    veths = [f"veth{_hex(rng, 8)}" for _ in range(300)]
    start = datetime(2025, 3, 1, tzinfo=UTC)
    boot = [100.0]

    def line(i: int) -> str:
        boot[0] += rng.random() * 0.05
        stamp = _syslog_stamp(start + timedelta(seconds=boot[0]))
        if rng.random() < 0.05:
            return f"{stamp} gpu-node-07 systemd[1]: Started Session {rng.randint(1, 9999)} of User ubuntu."
        return f"{stamp} gpu-node-07 kernel: [{boot[0]:12.6f}] {_kernel_body(rng, veths)}"

    return "\n".join(_spliced(rng, n, line, [], 1)) + "\n"


def _klog_body(rng: random.Random) -> str:
    pod, ns, uid = _pod(rng), rng.choice(("default", "kube-system", "ml", "monitoring")), _uuid(rng)
    pick = rng.random()
    if pick < 0.3:
        return f'kubelet.go:2457] "SyncLoop (probe)" probe="{rng.choice(("readiness", "liveness"))}" status="ready" pod="{ns}/{pod}"'
    if pick < 0.5:
        return (f'kubelet.go:2430] "SyncLoop (PLEG): event for pod" pod="{ns}/{pod}" '
                f'event={{"ID":"{uid}","Type":"ContainerStarted","Data":"{_hex(rng, 64)}"}}')
    if pick < 0.65:
        return (f'reconciler_common.go:258] "operationExecutor.VerifyControllerAttachedVolume started for volume '
                f'\\"kube-api-access-{_hex(rng, 5)}\\" (UniqueName: \\"kubernetes.io/projected/{uid}-kube-api-access\\") '
                f'pod \\"{pod}\\" (UID: \\"{uid}\\") " pod="{ns}/{pod}"')
    if pick < 0.75:
        return (f'prober.go:107] "Probe failed" probeType="Readiness" pod="{ns}/{pod}" podUID="{uid}" containerName="app" '
                'probeResult="failure" output="HTTP probe failed with statuscode: 503"')
    if pick < 0.85:
        return (f'pod_workers.go:1300] "Error syncing pod, skipping" err="failed to \\"StartContainer\\" for \\"app\\" with '
                f'CrashLoopBackOff: \\"back-off 5m0s restarting failed container=app pod={pod}_{ns}({uid})\\"" '
                f'pod="{ns}/{pod}" podUID="{uid}"')
    if pick < 0.93:
        return (f'kuberuntime_container.go:770] "Killing container with a grace period" pod="{ns}/{pod}" podUID="{uid}" '
                f'containerName="app" containerID="containerd://{_hex(rng, 64)}" gracePeriod=30')
    return "machine.go:65] Cannot read vendor id correctly, set empty."


def _klog(rng: random.Random, moment: datetime) -> str:
    level = "W" if rng.random() < 0.05 else "I"
    return f"{level}{moment:%m%d %H:%M:%S}.{moment.microsecond:06d}    2345 {_klog_body(rng)}"


def kubelet_journal(n: int, rng: random.Random) -> str:
    start = datetime(2025, 3, 1, tzinfo=UTC)
    blocks = [(FIXTURES / "kubelet" / "kubelet_journal_eviction_01.log").read_text().splitlines()]

    def line(i: int) -> str:
        moment = start + timedelta(milliseconds=20 * i)
        return f"{_syslog_stamp(moment)} gpu-node-07 kubelet[2345]: {_klog(rng, moment)}"

    return "\n".join(_spliced(rng, n, line, blocks, 20000)) + "\n"


def kubelet_klog(n: int, rng: random.Random) -> str:
    start = datetime(2025, 3, 1, tzinfo=UTC)
    blocks = [(FIXTURES / "kubelet" / "kubelet_klog_eviction_01.log").read_text().splitlines()]
    return "\n".join(_spliced(rng, n, lambda i: _klog(rng, start + timedelta(milliseconds=20 * i)), blocks, 20000)) + "\n"


_CSV_HEADER = ("timestamp, index, name, uuid, pci.bus_id, temperature.gpu, utilization.gpu [%], utilization.memory [%], "
               "memory.total [MiB], memory.used [MiB], memory.free [MiB], power.draw [W]")


def _csv_rows(n: int, rng: random.Random, header_every: int) -> str:
    uuids = [f"GPU-{_uuid(rng)}" for _ in range(8)]
    start = datetime(2025, 3, 1)
    out = []
    for i in range(n):
        gpu = i % 8
        if gpu == 0 and (i // 8) % header_every == 0:
            out.append(_CSV_HEADER)
        moment = start + timedelta(seconds=i // 8, milliseconds=(i // 8) % 7)
        used = rng.randint(1, 81000)
        out.append(f"{moment:%Y/%m/%d %H:%M:%S.%f}"[:-3] + f", {gpu}, NVIDIA H100 80GB HBM3, {uuids[gpu]}, "
                   f"00000000:{0x18 + gpu:02X}:00.0, {rng.randint(30, 80)}, {rng.randint(0, 100)} %, {rng.randint(0, 100)} %, "
                   f"81559 MiB, {used} MiB, {81559 - used} MiB, {rng.uniform(60, 700):.2f} W")
    return "\n".join(out) + "\n"


def nvidia_smi_csv(n: int, rng: random.Random) -> str:
    """``--query-gpu … --format=csv -l 1``: one header, then a row per GPU per second."""
    return _csv_rows(n, rng, header_every=n)


def nvidia_smi_csv_loop(n: int, rng: random.Random) -> str:
    """A script that runs ``--query-gpu … --format=csv`` every interval: a header per iteration."""
    return _csv_rows(n, rng, header_every=1)


def nvidia_smi_table(n: int, rng: random.Random) -> str:
    """``nvidia-smi -l 5``: a full table with 8 GPUs and their processes per snapshot."""
    start = datetime(2025, 3, 1)
    out: list[str] = []
    snapshot = 0
    bar = "+-----------------------------------------+------------------------+----------------------+"
    while len(out) < n:
        moment = start + timedelta(seconds=5 * snapshot)
        snapshot += 1
        out += [
            moment.strftime("%a %b %d %H:%M:%S %Y"),
            "+-----------------------------------------------------------------------------------------+",
            "| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: 12.4     |",
            "|-----------------------------------------+------------------------+----------------------+",
            "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
            "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
            "|                                         |                        |               MIG M. |",
            "|=========================================+========================+======================|",
        ]
        used = []
        for gpu in range(8):
            mem = rng.randint(1, 81000)
            used.append(mem)
            out += [
                f"|   {gpu}  NVIDIA H100 80GB HBM3          On  |   00000000:{0x18 + gpu:02X}:00.0 Off |                    0 |",
                f"| N/A   {rng.randint(30, 80)}C    P0            {rng.randint(60, 700):3d}W /  700W |   {mem:5d}MiB /  81559MiB |"
                f"    {rng.randint(0, 100):3d}%      Default |",
                "|                                         |                        |             Disabled |",
                bar,
            ]
        out += [
            "",
            "+-----------------------------------------------------------------------------------------+",
            "| Processes:                                                                              |",
            "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |",
            "|        ID   ID                                                               Usage      |",
            "|=========================================================================================|",
        ]
        for gpu in range(8):
            pid = rng.randint(1000, 99999)
            out.append(f"|    {gpu}   N/A  N/A     {pid:6d}      C   /usr/bin/python3                       {used[gpu]:6d}MiB |")
        out.append("+-----------------------------------------------------------------------------------------+")
    return "\n".join(out[:n]) + "\n"


def k8s_events(n: int, rng: random.Random) -> str:
    """``kubectl get events -A``: one table, mostly Normal scheduling and image chatter."""
    header = f"{'NAMESPACE':<14}{'LAST SEEN':<12}{'TYPE':<10}{'REASON':<28}{'OBJECT':<44}MESSAGE"
    out = ["$ kubectl get events -A", header]
    reasons = (("Normal", "Scheduled", "Successfully assigned {ns}/{pod} to gpu-node-07"),
               ("Normal", "Pulled", 'Container image "registry.example.com/ml/app:1.4.2" already present on machine'),
               ("Normal", "Created", "Created container app"), ("Normal", "Started", "Started container app"),
               ("Warning", "BackOff", "Back-off restarting failed container app in pod {pod}_{ns}({uid})"),
               ("Warning", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503"))
    for _ in range(n - 2):
        ns, pod = rng.choice(("default", "ml", "kube-system")), _pod(rng)
        kind, reason, message = rng.choice(reasons)
        age = f"{rng.randint(1, 59)}m"
        out.append(f"{ns:<14}{age:<12}{kind:<10}{reason:<28}{'pod/' + pod:<44}{message.format(ns=ns, pod=pod, uid=_uuid(rng))}")
    return "\n".join(out) + "\n"


# name → (builder, source, share of --lines)
CORPORA: dict[str, tuple[Callable[[int, random.Random], str], str, float]] = {
    "kernel_dmesg": (kernel_dmesg, "kernel", 1.0),
    "kernel_syslog": (kernel_syslog, "kernel", 0.4),
    "kubelet_journal": (kubelet_journal, "kubelet", 0.4),
    "kubelet_klog": (kubelet_klog, "kubelet", 0.4),
    "nvidia_smi_csv": (nvidia_smi_csv, "nvidia_smi", 0.2),
    "nvidia_smi_csv_loop": (nvidia_smi_csv_loop, "nvidia_smi", 0.2),
    "nvidia_smi_table": (nvidia_smi_table, "nvidia_smi", 0.2),
    "k8s_events": (k8s_events, "k8s", 0.1),
}


def polars_read(text: str) -> Callable[[], object]:
    data = text.encode()
    return lambda: pl.read_csv(data, has_header=False, separator="\x1f", quote_char=None, new_columns=["text"],
                               schema_overrides={"text": pl.String}, truncate_ragged_lines=True, encoding="utf8-lossy")


def _timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best wall and CPU seconds of ``repeat`` calls."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - start), min(cpu, time.process_time() - start_cpu)
    return wall, cpu


def _context() -> ParseContext:
    return ParseContext(file="bench.log", host="gpu-node-07", year=2025)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=500_000, help="lines of the kernel corpus; others are a share of it")
    parser.add_argument("--only", default="", help="comma-separated corpus names (and/or 'templates')")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement; the best is reported")
    parser.add_argument("--profile", help="run this corpus' parse_lines under cProfile and print the top entries")
    args = parser.parse_args()
    wanted = set(filter(None, args.only.split(","))) or {*CORPORA, "templates"}
    ctx = _context()

    if args.profile:
        build, source_name, share = CORPORA[args.profile]
        lines = sources.lines_frame(build(int(args.lines * share), random.Random(args.seed)))
        profiler = cProfile.Profile()
        profiler.runcall(parse_lines, lines, ctx, sources.get(source_name))
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return

    print(f"{'corpus':<20}{'lines':>9}{'MB':>7}{'read s':>8}{'parse s':>9}{'ingest s':>9}{'cpu s':>7}{'ingest lines/s':>16}{'× read':>8}")
    for name, (build, source_name, share) in CORPORA.items():
        if name not in wanted and not (name == "kernel_dmesg" and "templates" in wanted):
            continue
        text = build(int(args.lines * share), random.Random(args.seed))
        lines = sources.lines_frame(text)
        source = sources.get(source_name)
        read_s, _ = _timed(polars_read(text), args.repeat)
        if name in wanted:
            parse_s, _ = _timed(lambda: source.parse(lines, ctx), args.repeat)
            ingest_s, ingest_cpu = _timed(lambda: parse_lines(lines, ctx, source), args.repeat)
            print(f"{name:<20}{lines.height:>9,}{len(text) / 1e6:>7.1f}{read_s:>8.2f}{parse_s:>9.2f}{ingest_s:>9.2f}{ingest_cpu:>7.2f}"
                  f"{lines.height / ingest_s:>16,.0f}{ingest_s / read_s:>8.1f}")
        if name == "kernel_dmesg" and "templates" in wanted:
            messages = source.parse(lines, ctx).events["message"]
            templates_s, templates_cpu = _timed(lambda: templates.template_ids(messages), args.repeat)
            print(f"{'templates':<20}{messages.len():>9,}{'':>7}{read_s:>8.2f}{templates_s:>9.2f}{'':>9}{templates_cpu:>7.2f}"
                  f"{messages.len() / templates_s:>16,.0f}{templates_s / read_s:>8.1f}")


if __name__ == "__main__":
    main()

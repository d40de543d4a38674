"""Background noise of the node-level streams: kernel, kubelet, containerd/systemd.

Each template turns a column of instants into a column of messages in one polars
expression; a stream's noise is a weighted mix of templates. Templates that name a pod
only use pods that run through the whole window (node agents, long services), so noise
never mentions a pod before it exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from rca.datasets._formats import ROW_SCHEMA, utc
from rca.datasets._model import US, Host
from rca.datasets._tracks import Track, evaluate
from rca.datasets._vec import Draw, fixed

Template = Callable[[Draw, pl.Series, "Env"], pl.DataFrame]


@dataclass
class Env:
    """What noise templates may refer to on one host."""

    host: Host
    start_us: int
    end_us: int
    pods: pl.DataFrame  # long-running pods: ref, name, namespace, uid, container, cid, ip
    memory: Track  # used bytes over time
    veths: pl.Series
    nics: pl.Series

    @classmethod
    def build(cls, host: Host, draw: Draw, start_us: int, end_us: int, memory: Track) -> Env:
        steady = [pod for pod in host.pods if pod.start_us <= start_us and pod.end_us >= end_us]
        pods = pl.DataFrame(
            {
                "ref": [p.ref for p in steady],
                "name": [p.name for p in steady],
                "namespace": [p.namespace for p in steady],
                "uid": [p.uid for p in steady],
                "container": [p.main.name for p in steady],
                "cid": [p.main.cid for p in steady],
                "ip": [f"10.{draw.rng.randint(32, 250)}.{draw.rng.randint(0, 255)}.{draw.rng.randint(2, 254)}" for _ in steady],
            },
            schema={name: pl.String for name in ("ref", "name", "namespace", "uid", "container", "cid", "ip")},
        )
        veths = pl.DataFrame({"h": draw.hex(300, 8)}).select(pl.format("veth{}", "h")).to_series()
        nic_names = ("ibp26s0", "ibp60s0", "ibp77s0", "ibp94s0", "ens1f0np0", "ens6f1np1", "enp86s0f0np0", "ibp154s0")
        return cls(host, start_us, end_us, pods, memory, veths, pl.Series(nic_names))


def pod_columns(d: Draw, n: int, env: Env) -> pl.DataFrame:
    return env.pods[d.index(n, env.pods.height)]


# --- kernel -----------------------------------------------------------------------------


def k_bridge(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    state = d.pick(n, ("blocking", "disabled", "forwarding", "disabled", "blocking"))
    frame = pl.DataFrame({"port": d.ints(n, 1, 64), "veth": d.pick(n, env.veths), "state": state})
    return frame.select(body=pl.format("cni0: port {}({}) entered {} state", "port", "veth", "state"))


def k_addrconf(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame({"cali": d.floats(n) < 0.5, "hex": d.hex(n, 11), "veth": d.pick(n, env.veths)})
    name = pl.when(pl.col("cali")).then(pl.format("cali{}", "hex")).otherwise(pl.col("veth"))
    return frame.select(body=pl.format("IPv6: ADDRCONF(NETDEV_CHANGE): {}: link becomes ready", name))


def k_promisc(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame({"veth": d.pick(n, env.veths), "how": d.pick(n, ("entered", "left"))})
    return frame.select(body=pl.format("device {} {} promiscuous mode", "veth", "how"))


def k_link(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    bus = d.pick(n, ("0000:0c:00.0", "0000:2a:00.0", "0000:41:00.0", "0000:58:00.0", "0000:86:00.0", "0000:9a:00.1"))
    frame = pl.DataFrame({"bus": bus, "nic": d.pick(n, env.nics), "state": d.pick(n, ("up", "down"))})
    return frame.select(body=pl.format("mlx5_core {} {}: Link {}", "bus", "nic", "state"))


def k_audit(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame(
        {
            "sec": ts // US,
            "ms": (ts // 1000 % 1000).cast(pl.String).str.zfill(3),
            "serial": d.ints(n, 1000, 900000),
            "path": d.pick(n, ("/proc/sys/kernel/random/boot_id", "/sys/fs/cgroup/memory.max", "/proc/1/environ", "/etc/ssl/openssl.cnf")),
            "pid": d.ints(n, 2000, 4_000_000),
            "comm": d.pick(n, ("node_exporter", "fluent-bit", "runc:[2:INIT]", "dcgm-exporter", "calico-node")),
        }
    )
    return frame.select(
        body=pl.format(
            'audit: type=1400 audit({}.{}:{}): apparmor="DENIED" operation="open" class="file" profile="cri-containerd.apparmor.d" '
            'name="{}" pid={} comm="{}" requested_mask="r" denied_mask="r" fsuid=0 ouid=0',
            "sec",
            "ms",
            "serial",
            "path",
            "pid",
            "comm",
        )
    )


def k_misc(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    choice = d.weighted(n, (3, 2, 2, 1, 2, 1))
    a = d.ints(n, 2501, 9000)
    frame = pl.DataFrame(
        {
            "ts": ts,
            "c": choice,
            "a": a,
            "nfs": d.pick(n, ("10.0.4.21", "10.0.4.22", "fsx-data.internal")),
            "nvme": d.ints(n, 0, 8),
            "port": d.pick(n, ("10250", "443", "8000", "9100")),
            "k": d.ints(n, 2, 60),
        }
    )
    bodies = [
        pl.format(
            "perf: interrupt took too long ({} > {}), lowering kernel.perf_event_max_sample_rate to {}",
            pl.col("a"),
            pl.col("a") - 3,
            pl.lit(31_250_000) // pl.col("a") * 4,
        ),
        pl.format("nfs: server {} not responding, still trying", "nfs"),
        pl.format("nfs: server {} OK", "nfs"),
        pl.format("TCP: request_sock_TCP: Possible SYN flooding on port {}. Sending cookies.  Check SNMP counters.", "port"),
        pl.format("kauditd_printk_skb: {} callbacks suppressed", "k"),
        pl.format("EXT4-fs (nvme{}n1): re-mounted. Quota mode: none.", "nvme"),
    ]
    return by_case(frame, pl.col("c"), [(k, [pl.col("ts"), body.alias("body")]) for k, body in enumerate(bodies)])


def k_ipvs(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame({"a": d.ints(n, 0, 255), "p": d.pick(n, ("443", "53", "8080", "9090"))})
    return frame.select(body=pl.format("IPVS: rr: TCP 10.96.{}.{}:{} - no destination available", pl.col("a") // 16, "a", "p"))


KERNEL_TEMPLATES: tuple[tuple[Template, float], ...] = (
    (k_bridge, 20),
    (k_addrconf, 8),
    (k_promisc, 6),
    (k_link, 4),
    (k_audit, 4),
    (k_misc, 4),
    (k_ipvs, 2),
)


# --- kubelet ----------------------------------------------------------------------------


def by_case(frame: pl.DataFrame, case: pl.Expr, branches: list[tuple[object, list[pl.Expr]]]) -> pl.DataFrame:
    """Each case's rows built with only that case's expressions (a when/then chain builds every branch for every row)."""
    marked = frame.with_columns(_case=case)
    return pl.concat([marked.filter(pl.col("_case") == key).select(exprs) for key, exprs in branches], how="diagonal_relaxed")


def _constant(n: int, columns: list[pl.Expr]) -> pl.DataFrame:
    """``n`` rows of columns that do not vary (a select of literals alone would give one row)."""
    return pl.DataFrame({"_row": pl.int_range(0, n, eager=True)}).with_columns(columns).drop("_row")


def _klog(body: pl.Expr, level: str | pl.Expr, src: str | pl.Expr) -> list[pl.Expr]:
    lvl = pl.lit(level) if isinstance(level, str) else level
    source = pl.lit(src) if isinstance(src, str) else src
    return [body.alias("body"), lvl.alias("level"), source.alias("src")]


def kb_probe(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pod_columns(d, n, env).with_columns(port=d.pick(n, ("8080", "9100", "9400", "2021", "10256")))
    if env.host.kubelet_dialect == "legacy":
        body = pl.format(
            'Readiness probe for "{}_{}({}):{}" failed (failure): Get "http://{}:{}/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
            "name",
            "namespace",
            "uid",
            "container",
            "ip",
            "port",
        )
        return frame.select(_klog(body, "I", "prober.go:117"))
    body = pl.format(
        '"Probe failed" probeType="Readiness" pod="{}" podUID="{}" containerName="{}" probeResult="failure" output="Get \\"http://{}:{}/healthz\\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"',
        "ref",
        "uid",
        "container",
        "ip",
        "port",
    )
    return frame.select(_klog(body, "I", "prober.go:107"))


def kb_dns(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pod_columns(d, n, env)
    if env.host.kubelet_dialect == "legacy":
        body = pl.lit(
            "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.2 169.254.169.253 1.1.1.1"
        )
        return _constant(n, _klog(body, "E", "dns.go:135"))
    body = pl.format(
        '"Nameserver limits exceeded" err="Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.2 169.254.169.253 1.1.1.1" pod="{}"',
        "ref",
    )
    return frame.select(_klog(body, "E", "dns.go:153"))


def kb_manifests(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    if env.host.kubelet_dialect == "legacy":
        body = pl.lit('Unable to read config path "/etc/kubernetes/manifests": path does not exist, ignoring')
        return _constant(ts.len(), _klog(body, "E", "file.go:104"))
    body = pl.lit('"Unable to read config path" err="path does not exist, ignoring" path="/etc/kubernetes/manifests"')
    return _constant(ts.len(), _klog(body, "E", "file_linux.go:61"))


def kb_tls(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame({"a": d.ints(n, 0, 255), "b": d.ints(n, 2, 254), "p": d.ints(n, 32768, 60999)})
    body = pl.format("http: TLS handshake error from 10.0.{}.{}:{}: EOF", "a", "b", "p")
    return frame.select(_klog(body, "I", "log.go:245" if env.host.kubelet_dialect == "structured" else "log.go:181"))


def kb_housekeeping(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    if env.host.kubelet_dialect == "legacy":
        frame = pl.DataFrame({"c": d.floats(n)})
        body = (
            pl.when(pl.col("c") < 0.5)
            .then(pl.lit("SyncLoop (housekeeping)"))
            .otherwise(pl.lit("eviction manager: synchronize housekeeping"))
        )
        src = pl.when(pl.col("c") < 0.5).then(pl.lit("kubelet.go:1966")).otherwise(pl.lit("eviction_manager.go:243"))
        return frame.select(_klog(body, "I", src))
    frame = pl.DataFrame({"ms": d.ints(n, 1001, 3400)})
    slow = pl.format(
        '"Housekeeping took longer than expected" err="housekeeping took too long" expected="1s" actual="{}s"',
        fixed(pl.col("ms") / 1000, 3),
    )
    return frame.select(_klog(slow, "E", "kubelet.go:2384"))


def kb_observations(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    """Eviction manager observations: memory.available follows the host's memory curve."""
    n = ts.len()
    capacity = env.host.memory_kib * 1024
    samples = evaluate(pl.DataFrame({"ts": ts, "key": pl.Series([0] * n, dtype=pl.Int64)}), {0: env.memory}, "key")
    frame = samples.with_columns(
        avail=((capacity - pl.col("value")) / 1024 * (1 + d.floats(n, -0.004, 0.004))).round(0).cast(pl.Int64),
        stamp=pl.format(
            "{}{} +0000 UTC",
            utc(pl.col("ts") - d.ints(n, 5_000, 60_000)).dt.strftime("%Y-%m-%d %H:%M:%S%.6f"),
            (pl.col("ts") * 7 % 1000).cast(pl.String).str.zfill(3),
        ),
        mono=pl.format("{}{}", fixed((pl.col("ts") - env.host.boot_us) / US, 6), (pl.col("ts") * 11 % 1000).cast(pl.String).str.zfill(3)),
        signal=d.weighted(n, (3, 1, 1)),
    )
    cap_ki = env.host.memory_kib
    bodies = [
        pl.format(
            "eviction manager: observations: signal=memory.available, available: {}Ki, capacity: {}Ki, time: {} m=+{}",
            "avail",
            pl.lit(cap_ki),
            "stamp",
            "mono",
        ),
        pl.format(
            "eviction manager: observations: signal=allocatableMemory.available, available: {}Ki, capacity: {}Ki, time: {} m=+{}",
            (pl.col("avail") - cap_ki // 20),
            pl.lit(cap_ki - cap_ki // 20),
            "stamp",
            "mono",
        ),
        pl.format(
            "eviction manager: observations: signal=nodefs.available, available: {}Ki, capacity: 486903Mi, time: {} m=+{}",
            pl.lit(301_234_112) - (pl.col("ts") // US % 86400) * 3,
            "stamp",
            "mono",
        ),
    ]
    return by_case(frame, pl.col("signal"), [(k, [pl.col("ts"), *_klog(body, "I", "helpers.go:814")]) for k, body in enumerate(bodies)])


def kb_stats(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pod_columns(d, n, env)
    if env.host.kubelet_dialect == "legacy":
        body = pl.format(
            'Failed to get RecentStats("/kubepods/burstable/pod{}") while determining the next housekeeping: unable to find data in memory cache',
            "uid",
        )
        return frame.select(_klog(body, "W", "container.go:586"))
    body = pl.format(
        '"Unable to fetch pod log stats" err="open /var/log/pods/{}_{}_{}: no such file or directory" pod="{}"',
        "namespace",
        "name",
        "uid",
        "ref",
    )
    return frame.select(_klog(body, "E", "log_metrics.go:66"))


KUBELET_TEMPLATES: tuple[tuple[Template, float], ...] = (
    (kb_probe, 6),
    (kb_dns, 5),
    (kb_manifests, 4),
    (kb_tls, 3),
    (kb_housekeeping, 4),
    (kb_observations, 8),
    (kb_stats, 2),
)


# --- containerd, systemd and friends ------------------------------------------------------


def _program(body: pl.Expr, program: str | pl.Expr, pid: int | pl.Expr | None) -> list[pl.Expr]:
    prog = pl.lit(program) if isinstance(program, str) else program
    pid_expr = pl.lit(pid, pl.Int64) if pid is None or isinstance(pid, int) else pid
    return [body.alias("body"), prog.alias("program"), pid_expr.alias("pid")]


def _containerd(stamp: pl.Expr, level: str, msg: pl.Expr) -> pl.Expr:
    return pl.format('time="{}" level={} msg="{}"', stamp, pl.lit(level), msg)


def s_execsync(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pod_columns(d, n, env).with_columns(
        ts=ts,
        tail=d.ints(n, 0, 1000),
        done=d.floats(n) < 0.5,
        cmd=d.pick(
            n,
            (
                "[/bin/calico-node -felix-live -bird-live]",
                "[/bin/calico-node -felix-ready]",
                "[sh -c pidof fluent-bit]",
                "[/usr/bin/nvidia-smi -L]",
            ),
        ),
    )
    stamp = pl.format("{}{}Z", utc(pl.col("ts")).dt.strftime("%Y-%m-%dT%H:%M:%S%.6f"), pl.col("tail").cast(pl.String).str.zfill(3))
    msg = (
        pl.when(pl.col("done"))
        .then(pl.format('ExecSync for \\"{}\\" returns with exit code 0', "cid"))
        .otherwise(pl.format('ExecSync for \\"{}\\" with command {} and timeout 10 (s)', "cid", "cmd"))
    )
    return frame.select(_program(_containerd(stamp, "info", msg), "containerd", env.host.containerd_pid))


def s_mounts(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pod_columns(d, n, env).with_columns(tag=d.hex(n, 6))
    body = pl.format("run-containerd-runc-k8s.io-{}-runc.{}.mount: Deactivated successfully.", "cid", pl.col("tag").str.to_uppercase())
    return frame.select(_program(body, "systemd", 1))


def s_sysstat(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    phase = d.weighted(n, (1, 1, 1))
    body = (
        pl.when(phase == 0)
        .then(pl.lit("Starting sysstat-collect.service - system activity accounting tool..."))
        .when(phase == 1)
        .then(pl.lit("sysstat-collect.service: Deactivated successfully."))
        .otherwise(pl.lit("Finished sysstat-collect.service - system activity accounting tool."))
    )
    return pl.DataFrame({"p": phase}).select(_program(body, "systemd", 1))


def s_cron(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame({"pid": d.ints(n, 100_000, 4_000_000), "c": d.floats(n)})
    body = (
        pl.when(pl.col("c") < 0.6)
        .then(pl.lit("(root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)"))
        .otherwise(pl.lit("(root) CMD (   test -x /etc/cron.daily/popularity-contest && /etc/cron.daily/popularity-contest --crond)"))
    )
    return frame.select(_program(body, "CRON", pl.col("pid")))


def s_networkd(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame({"veth": d.pick(n, env.veths), "c": d.floats(n)})
    body = pl.when(pl.col("c") < 0.6).then(pl.format("{}: Gained IPv6LL", "veth")).otherwise(pl.format("{}: Link UP", "veth"))
    return frame.select(_program(body, "systemd-networkd", 1021))


def s_session(d: Draw, ts: pl.Series, env: Env) -> pl.DataFrame:
    n = ts.len()
    frame = pl.DataFrame(
        {
            "s": d.ints(n, 3, 900),
            "c": d.weighted(n, (1, 1, 1)),
            "pid": d.ints(n, 100_000, 4_000_000),
            "port": d.ints(n, 40000, 65000),
            "key": d.hex(n, 22),
        }
    )
    body = (
        pl.when(pl.col("c") == 0)
        .then(pl.format("Accepted publickey for ubuntu from 10.0.1.{} port {} ssh2: ED25519 SHA256:{}", pl.col("s") % 250, "port", "key"))
        .when(pl.col("c") == 1)
        .then(pl.format("New session {} of user ubuntu.", "s"))
        .otherwise(pl.format("Session {} logged out. Waiting for processes to exit.", "s"))
    )
    program = pl.when(pl.col("c") == 0).then(pl.lit("sshd")).otherwise(pl.lit("systemd-logind"))
    pid = pl.when(pl.col("c") == 0).then(pl.col("pid")).otherwise(pl.lit(1304))
    return frame.select(_program(body, program, pid))


SYSTEM_TEMPLATES: tuple[tuple[Template, float], ...] = (
    (s_execsync, 20),
    (s_mounts, 12),
    (s_sysstat, 2),
    (s_cron, 2),
    (s_networkd, 3),
    (s_session, 1),
)


def mix(d: Draw, n: int, env: Env, templates: tuple[tuple[Template, float], ...]) -> pl.DataFrame:
    """``n`` noise rows drawn from ``templates`` by weight, at uniform instants of the window."""
    counts = d.weighted(n, [w for _, w in templates]).value_counts().sort("")
    by_template = dict(zip(counts[""].to_list(), counts["count"].to_list(), strict=True)) if n else {}
    parts = []
    for number, (template, _) in enumerate(templates):
        count = by_template.get(number, 0)
        if not count:
            continue
        ts = d.times(count, env.start_us, env.end_us)
        rows = template(d, ts, env)
        parts.append(rows if "ts" in rows.columns else rows.with_columns(ts=ts))
    return as_rows(pl.concat(parts, how="diagonal_relaxed")) if parts else as_rows(pl.DataFrame({"ts": [], "body": []}))


def as_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """Give a partial frame every row column (noise defaults: not raw, not injected, sub 0)."""
    defaults = {"sub": pl.lit(0), "raw": pl.lit(False), "inc": pl.lit(False)}
    return frame.with_columns([defaults.get(name, pl.lit(None)).alias(name) for name in ROW_SCHEMA if name not in frame.columns]).select(
        [pl.col(name).cast(dtype) for name, dtype in ROW_SCHEMA.items()]
    )

"""Support bundles: what their layout says about host, pod and namespace, and how to split them.

* A **sosreport** (``sosreport-HOST-[CASE-]DATE-RANDOM/`` with ``sos_commands/…``,
  ``var/log/…``) names its host in ``sos_commands/host/hostname`` (``sos_commands/general/
  hostname`` before sos 4; ``hostname`` at its top is a link to it), else in its folder's
  name. sos writes its tarball with Python's ``tarfile.add``, which sorts each folder, so in
  a stream the hostname file comes before the logs under ``sos_commands/kernel``,
  ``sos_commands/logs`` and ``var/``; a log read before it gets the folder's name.
* Outside a sosreport, the first folder of a path names the host, as in a folder of logs,
  unless it is a system folder (``var/log/kern.log`` names no host).
* ``nvidia-bug-report.log(.gz)`` is the output of nvidia-bug-report.sh: a prologue, then one
  section per file, command or log, each opened by a line of underscores, a blank line and
  a header (``*** /var/log/messages`` plus its ``*** ls:`` line, ``dmesg:``,
  ``/usr/bin/nvidia-smi --query``, ``journalctl -b -0 _COMM=Xorg``…). Several nvidia-smi
  commands share one section, and the kernel-message scan lists one block per log
  (``  /var/log/kern.log:``, ``  journalctl -b -0:``); those become sections of their own.
  The prologue's ``uname:`` line names the host.
* ``kubectl cluster-info dump --output-directory`` writes ``NAMESPACE/POD/logs.txt`` with
  one block per container, opened by ``==== START logs for container C of pod NS/POD ====``:
  each block is a section carrying its pod, namespace and container. Its ``nodes.json`` and
  ``NAMESPACE/{events,pods,…}.json`` are typed lists (``{"kind": "EventList", …``, written
  kind first, unlike ``kubectl get -o json``): they describe a cluster, not the host whose
  folder they sit in.
* A node's container logs, as kubelet keeps them: ``/var/log/pods/NAMESPACE_POD_UID/CONTAINER/N.log``
  (N the container's restart; rotated ones ``N.log.YYYYMMDD-hhmmss``, maybe gzipped) and the links
  ``/var/log/containers/POD_NAMESPACE_CONTAINER-ID.log`` to the current ones; Docker's json-file logs,
  ``/var/lib/docker/containers/ID/ID-json.log``. Their path names the pod, namespace, container or
  container id of every line (:func:`container_log_scope`). A copy that followed kubelet's links holds
  each current log twice: the planner reads the one under ``pods/``.
* The **EKS log collector** (eks-log-collector.sh) tars its folder as
  ``eks_INSTANCE_DATE_HHMM-UTC_VERSION.tar.gz`` with the members at its top (``./kernel/dmesg.current``,
  ``./kubelet/kubelet.log``, ``./var_log/messages``…). Its files belong to the instance: the one in
  ``system/instance-id.txt`` in a folder, else the one its name (or the tarball's) carries. It copies
  pods' log folders and containers' links flat into ``var_log/``; its command snapshots and
  configurations (ps, top, iptables, sysctl -a, the kubeconfig) are not logs and are ignored.
* **oc adm must-gather** writes ``must-gather.local.N/IMAGE/…``: pod logs at
  ``namespaces/NS/pods/POD/CONTAINER/CONTAINER/logs/{current,previous}.log``, one node's files under
  ``nodes/NODE/``; everything else describes the cluster and names no host.

Sections are found with whole-column matches per batch; only the few section starts are
visited one by one.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import polars as pl

from rca import timeutil

BUG_REPORT = "nvidia-bug-report"
POD_LOGS = "kubectl-pod-logs"
DUMP_DOCUMENT = "kubectl-dump-document"
SECTIONED = (BUG_REPORT, POD_LOGS)

SYSTEM_FOLDERS = frozenset(
    {"bin", "boot", "dev", "etc", "home", "lib", "lib64", "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var"}
)
# A node's /var/log copied as the folder to read (`rca ingest ./node7-varlog`) opens with these: its daemons' folders, not hosts.
LOG_FOLDERS = frozenset({
    "log", "logs", "journal", "pods", "containers", "kubernetes", "kubelet", "containerd", "crio", "docker", "calico", "nvidia",
    "apt", "audit", "installer", "dist-upgrade", "unattended-upgrades", "private", "sa", "sysstat", "chrony", "ntpstats", "cups",
    "samba", "sssd", "libvirt", "anaconda", "tuned", "rhsm", "amazon", "azure", "openvswitch", "nginx", "apache2", "httpd", "mysql",
    "postgresql", "supervisor", "landscape", "fluent-bit", "td-agent", "slurm", "munge",
})
# Files that are never logs to read, though a copied folder holds them: a desktop's metadata and the login databases.
_FINDER, _EXPLORER = "macOS Finder metadata, not a log", "Windows Explorer metadata, not a log"
_NOT_LOG_FOLDERS = {
    "__MACOSX": _FINDER, ".Spotlight-V100": _FINDER, ".Trashes": _FINDER, ".fseventsd": _FINDER, ".TemporaryItems": _FINDER,
    "$RECYCLE.BIN": _EXPLORER, "System Volume Information": _EXPLORER,
}
_LOGIN_RECORDS_NOT_LOG = "binary login records (`last -f FILE` reads them), not a text log"
_NOT_LOG_FILES = {".DS_Store": _FINDER, "Thumbs.db": _EXPLORER, "ehthumbs.db": _EXPLORER, "desktop.ini": _EXPLORER}
# /var/log's binary login records, rotated as logrotate names them (wtmp.1, btmp-20261201, .gz).
_LOGIN_RECORDS = re.compile(r"^(?:wtmp|btmp|utmp|lastlog|faillog)(?:[.-][0-9]+)?(?:\.gz)?$")
SOS_HOSTNAME_FILES = (("sos_commands", "host", "hostname"), ("sos_commands", "general", "hostname"), ("hostname",))
HOSTNAME_BYTES = 4096  # a hostname file holds one line; more is not a hostname file

_SOS_FOLDER = re.compile(r"^sosreport-(?P<rest>.+?)(?:-[0-9]{4}-[0-9]{2}-[0-9]{2}-[a-z0-9]+|-[0-9]{14})?$")
_SOS_CASE = re.compile(r"-[0-9]{5,}$")  # case numbers are long; host names end in short numbers (gpu-node-07)
_HOSTNAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})$")

# eks-log-collector.sh packs /tmp/eks-log-collector as eks_INSTANCE_DATE_HHMM-UTC_VERSION.tar.gz, its members at the top
# (./kernel/…): the name, or the folder it is unpacked to, is the mark (INSTANCE is empty when the script found none).
_EKS_COLLECTOR = re.compile(
    r"^eks_(?P<instance>(?:i-[0-9a-f]{8,17})?)_[0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9]{4}-[A-Za-z]+_[0-9]+(?:\.[0-9]+)*(?:\.tar\.gz)?$"
)
EKS_INSTANCE_FILE = ("system", "instance-id.txt")
_INSTANCE_ID = re.compile(r"^i-[0-9a-f]{8,17}$")
# What the collector writes besides logs: command snapshots (ps, top, iptables, sysctl -a, df…) and configs, the kubeconfig
# among them (it may hold credentials). Their lines carry no time; read as logs they would only add timeless noise.
_EKS_SNAPSHOT_FOLDERS = frozenset(
    {"system", "sysctls", "storage", "cni", "ipamd", "modinfo", "networking", "kubelet", "containerd", "docker", "kernel"}
)
_EKS_LOGS = re.compile(
    r"^(?:kernel/dmesg\..+|kubelet/kubelet\.log|networking/configure-multicard-interfaces\.txt"  # dmesg and journalctl output
    r"|containerd/(?:containerd-log\.txt|.+\.stacks\.log|soci-snapshotter/soci-snapshotter-log\.txt)"
    r"|docker/(?!docker-(?:info|ps|images|version|trace)\.txt$).+)$"
)
_EKS_NOT_LOG = "the EKS log collector's snapshot of a command or a configuration (ps, top, iptables, sysctl, kubeconfig…), not a log"
NOT_LOG_REASONS = frozenset({_FINDER, _EXPLORER, _LOGIN_RECORDS_NOT_LOG, _EKS_NOT_LOG})
"""Every reason :func:`not_a_log` and :func:`never_logs` give: an entry with one is listed as ignored, never read."""
# oc adm must-gather writes must-gather.local.N/IMAGE/…; nodes/NODE/ holds one node's files (gather_ppc: dmesg, NODE_logs_kubelet.gz).
_MUST_GATHER = re.compile(r"^must-gather(?:\.local\.[0-9]+)?$")

_SEPARATOR = r"^_{20,}\s*$"
_BUG_REPORT_START = "Start of NVIDIA bug report log file"
# Blocks inside a section: nvidia-smi commands share the nvidia-smi section; the kernel-message
# scan lists its matches per log file and per boot.
_SUBSECTION = r"^(?:/\S*/nvidia-smi(?: .*)?|  (?:/\S+|journalctl -b -?[0-9]+):)$"
_COMMAND = re.compile(r"^/\S*/(?P<command>[^/\s]+)(?P<args>(?: .*)?)$")
_UNAME_HOST = re.compile(r"^uname: \S+ (?P<host>\S+) ")
_NAMED_HEADERS = {
    _BUG_REPORT_START: "prologue",
    "Scanning kernel log files for NVIDIA kernel messages": "kernel-messages",
    "End of NVIDIA bug report log file": "epilogue",
}
_MAX_NAME = 120
_PROLOGUE_LINES = 40
_REPORT_DATE = r"^Date: [0-9A-Za-z_]{3} (?P<day>[0-9A-Za-z_]{3} +[0-9]{1,2} [0-9][0-9]:[0-9][0-9]:[0-9][0-9]) (?:(?P<zone>[A-Z]{2,5}) )?(?P<year>[0-9]{4})$"  # date(1)

_NAME = r"[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?"
# The EKS log collector copies pods' folders and containers' links flat into its var_log/.
_POD_LOG_PATH = re.compile(
    rf"(?:^|/)(?:pods|var_log)/(?P<namespace>{_NAME})_(?P<pod>{_NAME})_[0-9a-f]{{8}}(?:-[0-9a-f]{{4}}){{3}}-[0-9a-f]{{12}}"
    rf"/(?P<container>{_NAME})/[0-9]+\.log(?:\.[0-9]{{8}}-[0-9]{{6}})?(?:\.gz)?$"
)
_CONTAINER_LINK_PATH = re.compile(
    rf"(?:^|/)(?:containers|var_log)/(?P<pod>{_NAME})_(?P<namespace>{_NAME})_(?P<container>{_NAME})-(?P<container_id>[0-9a-f]{{64}})\.log$"
)
# Docker's json-file log driver: /var/lib/docker/containers/ID/ID-json.log (rotated: .1, .2, …).
_DOCKER_LOG_PATH = re.compile(r"(?:^|/)containers/(?P<container_id>[0-9a-f]{64})/(?P=container_id)-json\.log(?:\.[0-9]+)?$")
# oc adm inspect (must-gather): namespaces/NS/pods/POD/CONTAINER/CONTAINER/logs/{current,previous}[.insecure].log
_INSPECT_LOG_PATH = re.compile(
    rf"(?:^|/)namespaces/(?P<namespace>{_NAME})/pods/(?P<pod>{_NAME})/(?P<container>{_NAME})/(?P=container)"
    r"/logs/(?:current|previous)(?:\.insecure)?\.log$"
)
_SCOPED_PATHS = (_POD_LOG_PATH, _CONTAINER_LINK_PATH, _DOCKER_LOG_PATH, _INSPECT_LOG_PATH)
_POD_START = r"^==== START logs for container (?P<container>\S+) of pod (?P<namespace>[^/\s]+)/(?P<pod>\S+) ====\s*$"
_POD_END = r"^==== END logs for container \S+ of pod \S+ ====\s*$"
_DUMP_LIST = re.compile(r'^\s*\{\s*"kind":\s*"[A-Za-z]+List"')


# --- hosts from the layout ------------------------------------------------------------


def first_folder_host(parts: Sequence[str]) -> str | None:
    """The host a path's first folder names (``gpu-node-1/kern.log``), if it is not a system or a log daemon's folder."""
    if len(parts) < 2 or parts[0] in (".", "..") or parts[0] in SYSTEM_FOLDERS or parts[0] in LOG_FOLDERS:
        return None
    return parts[0]


def sosreport_index(parts: Sequence[str]) -> int | None:
    """Index of the folder in ``parts`` that is a sosreport's top (the last part, the file, excluded)."""
    return next((i for i, part in enumerate(parts[:-1]) if _SOS_FOLDER.match(part)), None)


def host_from_sos_folder(name: str) -> str | None:
    """The host in a sosreport folder's name: ``sosreport-gpu-node-07-01234567-2024-06-14-xkqhmva`` → ``gpu-node-07``."""
    found = _SOS_FOLDER.match(name)
    return _SOS_CASE.sub("", found["rest"]) if found else None


def hostname_in(text: str) -> str | None:
    """The host name a hostname file holds (its first line), if it looks like one."""
    first = text.strip().split("\n", 1)[0].strip()
    return first if _HOSTNAME.match(first) else None


def sos_hostname_file(parts: Sequence[str]) -> tuple[str, ...] | None:
    """The sosreport folder (its path parts) whose hostname file ``parts`` is, if it is one."""
    top = sosreport_index(parts)
    if top is None or tuple(parts[top + 1 :]) not in SOS_HOSTNAME_FILES:
        return None
    return tuple(parts[: top + 1])


def container_log_scope(provenance: str) -> dict[str, str]:
    """The pod, namespace, container and container id a container log's path names (none for any other path)."""
    found = next((match for path in _SCOPED_PATHS if (match := path.search(provenance))), None)
    return {name: value for name, value in found.groupdict().items() if value} if found else {}


def is_container_link(provenance: str) -> bool:
    """Whether the path is one of kubelet's ``/var/log/containers`` links (or a copy of one)."""
    return _CONTAINER_LINK_PATH.search(provenance) is not None


def collector_host(name: str) -> str | None:
    """The EC2 instance an EKS log collector's tarball or folder name carries (``eks_i-0abc…_2024-05-01_1200-UTC_0.7.6``)."""
    found = _EKS_COLLECTOR.match(name)
    return (found["instance"] or None) if found else None


def eks_collector_index(parts: Sequence[str]) -> int | None:
    """Index of the part of ``parts`` that is an EKS log collector's folder or tarball (the last one, if several)."""
    return next((i for i in reversed(range(len(parts))) if _EKS_COLLECTOR.match(parts[i])), None)


def instance_in(text: str) -> str | None:
    """The instance id ``system/instance-id.txt`` holds, if it looks like one."""
    first = text.strip().split("\n", 1)[0].strip()
    return first if _INSTANCE_ID.match(first) else None


def must_gather_host(parts: Sequence[str]) -> tuple[bool, str | None]:
    """Whether ``parts`` lie in a must-gather, and the node they belong to: ``nodes/NODE/…``'s, else none (the cluster's)."""
    top = next((i for i, part in enumerate(parts[:-1]) if _MUST_GATHER.match(part)), None)
    if top is None:
        return False, None
    rest = parts[top + 1 :]
    # nodes/ sits in the image's folder; a must-gather of one image may have been moved up a level.
    node = next((rest[i + 1] for i in (0, 1) if i + 2 < len(rest) and rest[i] == "nodes"), None)
    return True, node


def member_host(parts: Sequence[str], outer_host: str | None, sos_hosts: dict[tuple[str, ...], str]) -> str | None:
    """The host of an archive member at ``parts``: its sosreport's, else the archive's own, else its first folder's."""
    top = sosreport_index(parts)
    if top is not None:
        return sos_hosts.get(tuple(parts[: top + 1])) or host_from_sos_folder(parts[top])
    eks = eks_collector_index(parts)
    if eks is not None:
        return collector_host(parts[eks]) or outer_host
    in_gather, node = must_gather_host(parts)
    if in_gather:
        return node
    return outer_host or first_folder_host(parts)


class FolderHosts:
    """Hosts of the files under a folder: a sosreport's or a collector's own (also when the folder is one), else the first folder's."""

    def __init__(self, root: Path) -> None:
        self._root = Path(os.path.realpath(root))
        self._folder_hosts: dict[tuple[str, ...], str | None] = {}  # a sosreport's or an EKS collector's host, by its folder
        self._collectors: dict[tuple[str, ...], bool] = {}  # whether a folder is an EKS collector's, unpacked under another name

    def of(self, provenance: str) -> str | None:
        """The host of the file at ``provenance`` (relative to the root)."""
        parts = Path(provenance).parts
        full = (self._root.name, *parts)
        top = sosreport_index(full)
        if top is None:
            return self._layout_host(full)
        folder = full[: top + 1]
        if folder not in self._folder_hosts:
            self._folder_hosts[folder] = self._read_sos_hostname(self._root.parent.joinpath(*folder)) or host_from_sos_folder(folder[-1])
        return self._folder_hosts[folder]

    def _layout_host(self, full: tuple[str, ...]) -> str | None:
        """An EKS collector's instance (its instance-id.txt, else its name), a must-gather's node, else the first folder's."""
        folder = self._collector_folder(full)
        if folder is not None:
            if folder not in self._folder_hosts:
                written = self._read_first_line(self._root.parent.joinpath(*folder), EKS_INSTANCE_FILE)
                self._folder_hosts[folder] = (instance_in(written) if written else None) or collector_host(folder[-1])
            return self._folder_hosts[folder]
        in_gather, node = must_gather_host(full)
        return node if in_gather else first_folder_host(full[1:])

    def _collector_folder(self, full: tuple[str, ...]) -> tuple[str, ...] | None:
        """The EKS collector folder (or tarball) holding ``full``: named as the script names it, or unpacked under another
        name yet holding what it writes (``system/instance-id.txt`` beside ``var_log/``)."""
        eks = eks_collector_index(full)
        if eks is not None:
            return full[: eks + 1]
        for end in range(len(full) - 1, 0, -1):
            folder = full[:end]
            if folder not in self._collectors:
                path = self._root.parent.joinpath(*folder)
                self._collectors[folder] = path.joinpath(*EKS_INSTANCE_FILE).is_file() and (path / "var_log").is_dir()
            if self._collectors[folder]:
                return folder
        return None

    @staticmethod
    def _read_first_line(folder: Path, relative: Sequence[str]) -> str | None:
        """The start of a one-line file in ``folder``, never read through a link out of it."""
        path = folder.joinpath(*relative)
        # sos's top-level hostname is a link into sos_commands; a link may also point anywhere on the reader's machine.
        if not path.is_file() or not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder)):
            return None
        with open(path, "rb") as handle:
            return handle.read(HOSTNAME_BYTES).decode("utf-8", errors="replace")

    @classmethod
    def _read_sos_hostname(cls, folder: Path) -> str | None:
        for relative in SOS_HOSTNAME_FILES:
            written = cls._read_first_line(folder, relative)
            if written and (host := hostname_in(written)):
                return host
        return None


# --- what a file's first bytes say ---------------------------------------------------------


def text_kind(head: str) -> str | None:
    """Which bundle text format a file's first characters open, if any."""
    lines = [line for line in head.split("\n", 40)[:40] if line.strip()]
    if not lines:
        return None
    if re.match(_SEPARATOR, lines[0]) and any(line.startswith(_BUG_REPORT_START) for line in lines[1:4]):
        return BUG_REPORT
    if re.match(_POD_START, lines[0]):
        return POD_LOGS
    if _DUMP_LIST.match(head):
        return DUMP_DOCUMENT
    return None


# --- sections ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """One section of a bundle file: its name (after ``!/`` in the provenance) and what it names."""

    name: str
    host: str | None = None
    scope: tuple[tuple[str, str], ...] = ()  # (field, value) for pod, namespace, container


@dataclass(frozen=True)
class Piece:
    """Consecutive lines of one section within one batch."""

    section: Section
    lines: pl.DataFrame


@dataclass
class _Names:
    """Section names made unique in order of appearance (``dmesg``, ``dmesg #2``)."""

    seen: Counter[str] = field(default_factory=Counter)

    def unique(self, name: str) -> str:
        name = " ".join(name.split())[:_MAX_NAME] or "section"
        self.seen[name] += 1
        return name if self.seen[name] == 1 else f"{name} #{self.seen[name]}"


class Splitter(ABC):
    """Cuts a bundle file's batches of lines into sections, keeping state across batches.

    :meth:`split` returns the batch's pieces in order and how many of its lines were
    section headers (separators, header lines, ``*** ls:`` lines, START/END markers), which
    belong to no section. Lines before the first section belong to a ``preamble`` section.
    """

    keeps_folder_host = True  # whether sections without a host of their own take the folder's

    def __init__(self) -> None:
        self._names = _Names()
        self._current: Section | None = None
        self.host: str | None = None  # the host the file names for itself
        self.written: datetime | None = None  # when the file says it was written: the sections' reference time

    @abstractmethod
    def split(self, lines: pl.DataFrame) -> tuple[list[Piece], int]:
        """The pieces of one batch, in order, and the number of its header lines."""

    def _body(self, lines: pl.DataFrame, start: int, end: int, pieces: list[Piece]) -> None:
        if end <= start:
            return
        if self._current is None:
            self._current = Section(self._names.unique("preamble"))
        pieces.append(Piece(self._current, lines.slice(start, end - start)))


class BugReportSplitter(Splitter):
    """Sections of ``nvidia-bug-report.log`` (see the module docstring)."""

    def __init__(self, tz: str) -> None:
        super().__init__()
        self._tz = tz
        self._awaiting_header = False  # a separator ended the last batch; its header comes in this one
        self._after_file_header = False  # a ``*** PATH`` header ended the last batch; its ``*** ls:`` line may follow
        self._parent: str | None = None

    def split(self, lines: pl.DataFrame) -> tuple[list[Piece], int]:
        texts = lines["text"]
        height = lines.height
        if self._current is None:
            # The prologue, at the top of the first batch, names the host (uname) and the time it was written (date).
            prologue = texts.head(_PROLOGUE_LINES)
            hosts = prologue.str.extract(_UNAME_HOST.pattern, 1).drop_nulls()
            self.host = hosts[0] if hosts.len() else None
            dates = prologue.str.extract_groups(_REPORT_DATE)
            self.written = _written_at(dates.filter(dates.struct.field("year").is_not_null()), self._tz)
        is_separator = texts.str.contains(_SEPARATOR)
        flags = pl.DataFrame({"separator": is_separator, "sub": texts.str.contains(_SUBSECTION) & ~is_separator})
        row = pl.int_range(pl.len())
        next_text = flags.select(
            pl.when(texts.str.strip_chars() != "").then(row).backward_fill().alias("next")
        )["next"]
        marks = flags.with_row_index().filter(pl.col("separator") | pl.col("sub")).rows()
        pieces: list[Piece] = []
        headers = 0
        position = 0
        if self._after_file_header and height and texts[0].startswith("*** ls:"):
            headers, position = 1, 1
        self._after_file_header = False
        if self._awaiting_header:
            position, headers = self._header_at(texts, next_text, is_separator, position, headers, height)
        for index, separator, _ in marks:
            if index < position:
                continue  # the header line of a section just opened
            self._body(lines, position, index, pieces)
            if separator:
                self._awaiting_header = True
                position, headers = self._header_at(texts, next_text, is_separator, index + 1, headers + 1, height)
            else:
                self._open(texts[index], sub=True)
                position, headers = index + 1, headers + 1
        self._body(lines, position, height, pieces)
        return pieces, headers

    def _header_at(
        self, texts: pl.Series, next_text: pl.Series, is_separator: pl.Series, start: int, headers: int, height: int
    ) -> tuple[int, int]:
        """Open the section whose header is the first non-blank line from ``start``; the new position and header count."""
        header = next_text[start] if start < height else None
        if header is None:
            return height, headers + height - start  # blank to the end of the batch: the header is in the next one
        if is_separator[header]:
            return header, headers + header - start  # an empty section: the next separator opens another
        self._awaiting_header = False
        text = texts[header]
        self._open(text, sub=False)
        end = header + 1
        if text.startswith("*** "):
            if end < height and texts[end].startswith("*** ls:"):
                end += 1
            elif end == height:
                self._after_file_header = True
        return end, headers + end - start

    def _open(self, header: str, *, sub: bool) -> None:
        name = _section_name(header, self._parent if sub else None)
        if not sub:
            self._parent = name
        self._current = Section(self._names.unique(name), host=self.host)


def _written_at(found: pl.Series, tz: str) -> datetime | None:
    """The prologue's ``Date:`` (date(1) output); a zone other than UTC/GMT is taken as ``tz``."""
    if found.len() == 0:
        return None
    day, zone, year = found[0]["day"], found[0]["zone"], found[0]["year"]
    text = pl.lit(f"{' '.join(day.split())} {year}")
    return pl.select(timeutil.dated_to_utc(text, "%b %d %H:%M:%S %Y", "UTC" if zone in ("UTC", "GMT") else tz)).item()


def _section_name(header: str, parent: str | None) -> str:
    text = header.strip()
    if text.startswith("*** "):
        path = text[4:].removesuffix(" does not exist").removesuffix(" is not readable")
        return path.lstrip("/")
    for start, name in _NAMED_HEADERS.items():
        if text.startswith(start):
            return name
    if parent and header.startswith("  ") and text.endswith(":"):
        return f"{parent}/{text.removesuffix(':').lstrip('/')}"
    if command := _COMMAND.match(text):
        return command["command"] + command["args"]
    return text.removesuffix(":")


class PodLogSplitter(Splitter):
    """Container blocks of a ``kubectl cluster-info dump`` pod log (``NAMESPACE/POD/logs.txt``)."""

    keeps_folder_host = False  # the dump's folders are namespaces and pods, not hosts

    def split(self, lines: pl.DataFrame) -> tuple[list[Piece], int]:
        texts = lines["text"]
        starts = texts.str.extract_groups(_POD_START)
        marks = (
            pl.DataFrame({"start": starts.struct.field("container").is_not_null(), "end": texts.str.contains(_POD_END)})
            .with_row_index()
            .filter(pl.col("start") | pl.col("end"))
        )
        pieces: list[Piece] = []
        position = 0
        for index, is_start, _ in marks.rows():
            self._body(lines, position, index, pieces)
            if is_start:
                found = starts[index]
                scope = (("pod", found["pod"]), ("namespace", found["namespace"]), ("container", found["container"]))
                self._current = Section(self._names.unique(found["container"]), scope=scope)
            position = index + 1
        self._body(lines, position, lines.height, pieces)
        return pieces, marks.height


def splitter_for(kind: str, tz: str) -> Splitter:
    """A fresh splitter for a sectioned bundle kind (:data:`SECTIONED`); ``tz`` is the zone of times written without one."""
    return BugReportSplitter(tz) if kind == BUG_REPORT else PodLogSplitter()


def never_logs(folder: str) -> str | None:
    """Why no file in a folder of this name is a log to read (macOS Finder's ``__MACOSX``, ``.Spotlight-V100``…), or None."""
    return _NOT_LOG_FOLDERS.get(folder)


def not_a_log(path: str, within: str = "") -> str | None:
    """Why the file at ``path`` (relative, "/"-separated) is not a log to read, or None for any other file.

    macOS Finder writes ``.DS_Store`` in folders and, zipping them, an AppleDouble twin
    ``__MACOSX/…/._NAME`` of every file; Windows Explorer its thumbnail caches and
    ``desktop.ini``; a node's ``/var/log`` holds the binary login records ``last`` reads; the
    EKS log collector its command snapshots and configurations. ``within`` is the archive
    ``path`` is a member of, whose name may be the collector's.
    """
    parts = path.replace("\\", "/").rstrip("/").split("/")
    if _eks_snapshot(Path(within).name, parts):
        return _EKS_NOT_LOG
    for part in parts:  # the folder itself, or a file in it
        if part in _NOT_LOG_FOLDERS:
            return _NOT_LOG_FOLDERS[part]
    name = parts[-1]
    if name.startswith("._"):
        return _FINDER
    if _LOGIN_RECORDS.match(name):
        return _LOGIN_RECORDS_NOT_LOG
    return _NOT_LOG_FILES.get(name)


def _eks_snapshot(container: str, parts: list[str]) -> bool:
    """Whether ``parts`` name one of the EKS collector's non-log files, in a collector's folder or in its tarball ``container``."""
    parts = [part for part in parts if part not in ("", ".")]  # tar writes the collector's members as ./kernel/…
    eks = eks_collector_index(parts[:-1])
    if eks is None and not _EKS_COLLECTOR.match(container):
        return False
    inside = parts[eks + 1 :] if eks is not None else parts
    return len(inside) > 1 and inside[0] in _EKS_SNAPSHOT_FOLDERS and not _EKS_LOGS.match("/".join(inside))

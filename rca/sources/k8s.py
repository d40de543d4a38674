"""kubectl output: event tables, describe pod/node, pod tables, status fields, Event/Pod documents; container runtimes' inspect.

What an operator pastes into an incident: ``kubectl get events`` (current, NAMESPACE-first
and the old FIRSTSEEN/LASTSEEN layouts), ``kubectl describe pod|node`` (header fields,
container State blocks, Events and Conditions tables), ``kubectl|oc get pods`` tables and
``yq``-extracted status fields, rows of those tables without their header (a grep of them),
container states a template printed inline (``-o go-template`` / custom-columns Go maps,
``-o jsonpath`` JSON), and whole ``-o json``/``-o yaml`` documents or pasted pieces of a pod
status (handled by :mod:`rca.sources._k8s_objects`).

Tables are sliced at the header's column offsets (kubectl aligns them with a tabwriter),
so cells that contain single spaces ("kubelet, node1", "17m (x2 over 18m)") stay whole.
Relative ages ("17m") cannot be anchored to a clock: such rows keep ``ts`` null and the
age in ``attrs``. Describe-pod "Exit Code" is taken as printed, never inferred; a container's
memory request (and limit, in ``attrs``) printed below its State blocks go with them. A describe
node's device-plugin resource counted lower in Allocatable than in Capacity (or a GPU resource
counted 0) is a warning of its own; its Conditions take a severity (Ready False / Unknown an
error, a pressure True a warning).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from rca import timeutil
from rca.sources import _k8s_objects, _xid, register
from rca.sources._base import (
    ParseContext,
    Parsed,
    Source,
    attrs_json,
    by_head,
    forward_fill_within,
    map_distinct,
    one_head,
    parse_apart,
    starts_file,
    within_file,
)
from rca.sources._kube import (
    ADMISSION_REJECTED,
    EVICTION_MESSAGE,
    QUANTITY,
    admission_devices,
    devices_lost,
    devices_lost_message,
    event_kind,
    eviction_fields,
    insufficient_resource,
    insufficient_resources,
    message_container,
    oom_victim,
    quantity_bytes,
    raised_severity,
    scheduling_counts,
    storage_attrs,
)

# A shell prompt (root's bare "#" only before a command; bash's "[user@host dir]#" holds a space, and alone on its
# line ends the output above it; zsh themes' "❯" / "➜"; zsh's and PowerShell's "%" / ">", and "root@host ~#", before
# kubectl), or a kubectl / oc command (or the usual `k` alias's) pasted without one, its flags before the verb or after. Root's
# "#" may touch the command ("#kubectl top nodes"), and an issue's markdown may set the line in bold ("**#kubectl").
_PROMPT = (
    r"^\s*(?:\S*\$|\S+#|[❯➜])\s+\S|^\s*\[[^\]\s]+@[^\]]*\][$#](?:\s|$)|^[^%>$#]{0,60}[%>$#]\s+(?:kubectl|oc|k)\s"
    r"|^\s*(?:\*\*)?#(?:\s+(?:kubectl|oc|k)|\s*(?:kubectl|oc))\s|^(?:kubectl|oc) [-a-z]|^k (?:-|get|describe|logs|events|top) "
)
# Read before the command's first pipe (quoted arguments blanked): "| head -n 3" is no namespace.
_PROMPT_NAMESPACE = r"^[^|]*?\s(?:-n\s*|--namespace[= ])([a-z0-9][-a-z0-9]*)"
# "kubectl describe pod x", "get po/x", "get pod -n ns -o go-template=… x": the pod the output under it (a grep of a
# describe, a template's fields) is about. Read with quoted arguments blanked (a template holds spaces); the flags
# that take a separate value are named, so that a selector ("-l app=x") is no pod.
_PROMPT_POD = (
    r"\s(?:describe|get)\s+(?:pods?|po)(?:\s+(?:--?[A-Za-z][-A-Za-z]*=\S+|(?:-[nolcL]|--(?:namespace|output|selector|template|context|"
    r"sort-by|field-selector|label-columns|container|kubeconfig))\s+\S+|--?[A-Za-z][-A-Za-z]*))*(?:\s+|/)([a-z0-9][-a-z0-9.]*)(?:\s|$)"
)
_QUOTED = r"'[^']*'|\"[^\"]*\""
# "kubectl -n ns get pytorchjobs --namespace=x", "get nodeclaims.karpenter.sh -w": the resource a table under it lists.
_PROMPT_RESOURCE = (
    r"\sget\s+(?:(?:-[nloL]|--(?:namespace|output|selector|context|kubeconfig|sort-by|field-selector|label-columns))\s+\S+\s+"
    r"|--?[A-Za-z][-A-Za-z]*(?:=\S+)?\s+)*([a-z][-a-z0-9.]*)(?:\s|$)"
)
# `-o custom-columns=NAME:.metadata.name,…` or `-o jsonpath='{range .items[*]}{.metadata.name}…'`: each row opens with its pod.
_NAME_FIRST = r"(?:custom-columns=[\"']?[^:,\s]+:|jsonpath=[\"']?(?:\{range \.items\[\*\]\})?\{)\.metadata\.name\b"
# A container state printed inline: a Go map (`-o go-template`, custom-columns: "map[terminated:map[containerID:…
# exitCode:137 … reason:OOMKilled …]]", keys sorted, pre-2016 ones not) or compact JSON (`-o jsonpath`:
# '{"terminated":{"containerID":…,"exitCode":137,…}}'). A printed status list holds one per container, each
# map opening with its first key; a state's field ("lastState:", "LastState: ", "state=") may name it.
_INLINE_STATE_LITERALS = ("terminated:map[", '"terminated":{')
_CONTAINER_STATUS_START = r'(^|[\[\s,])((?:map\[|\{)"?(?:allocatedResources|containerID|image)"?:)'
_INLINE_TERMINATED = r'(?:"?[A-Za-z]*[Ss]tate"?\s*[:=]\s*)?(?:map\[|\{)"?terminated"?:(?:map\[|\{)[^\[\]{}]*[\]}]'
_INLINE_NAME = r'(?:^|[\s,])"?name"?:"?([a-z0-9][-a-z0-9.]*)(?:[\s",\]}]|$)'
_CHUNK_SEPARATOR = "\x1f"
# "describe node x | grep …": the node an excerpt of its Conditions or Events is about.
_PROMPT_NODE = r"\sdescribe\s+(?:nodes?|no)(?:\s+|/)([a-z0-9][-a-z0-9.]*)"
# Old kubectl underlined its describe tables with box-drawing "─".
_BORDER = r"^\s*[-─]{2,}(?:\s+[-─]{2,})*\s*$"
# A describe Events table, current and 2015-era columns: a header even without its underline row.
_DESCRIBE_EVENTS_HEADER = r"^\s*(?:Type\s{2,}Reason\s{2,}Age|FirstSeen\s{2,}LastSeen\s{2,}Count)\s{2,}From\s{2,}"
# `kubectl top pod|node`: the namespace with -A, the pod before each container's row with --containers.
_TOP_HEADER = r"^\s*(?:NAMESPACE\s{2,})?(?:POD\s{2,})?NAME\s{2,}CPU\(cores\)\s{2,}"
# `kubectl get events -o custom-columns=TIME:.lastTimestamp,REASON:.reason,MSG:.message` (scripts' and runbooks' favourite
# view of a pod's events): column names of the author's choosing, which kubectl upper-cases, a REASON and a message among them,
# or an OBJECT and a message where a field selector already picked the reason (`--field-selector reason=X`).
_CUSTOM_EVENTS_HEADER = (
    r"^\s*(?:[A-Z][A-Z0-9_]*\s{2,})*(?:REASON|OBJECT)\s{2,}(?:[A-Z][A-Z0-9_]*\s{2,})*(?:MESSAGE|MSG)(?:\s{2,}[A-Z][A-Z0-9_]*)*\s*$"
)
_GET_HEADER = (
    rf"^\s*(?:NAMESPACE\s{{2,}})?(?:LAST SEEN|LASTSEEN|FIRSTSEEN|NAME)\s{{2,}}[A-Z][A-Z ]*?\s{{2,}}[A-Z]|{_DESCRIBE_EVENTS_HEADER}|{_TOP_HEADER}"
    rf"|{_CUSTOM_EVENTS_HEADER}"
)
_KEY_LINE = r"^\s*(?<key>[A-Z][A-Za-z()/.-]*(?: [A-Za-z()/.-]+){0,2}):(?:\s+(?<value>.*?))?\s*$"
# Indented as kubectl prints it, or flush left where a paste lost the indent.
_CONTAINER_LINE = r"^\s*([a-z0-9][-a-z0-9.]*):\s*$"
_EVENTS_HEADER = r"^\s*(?:NAMESPACE\s{2,})?LAST SEEN\s{2,}TYPE\s{2,}REASON\s{2,}OBJECT\s{2,}"
# kubectl before 1.14 led with the ages and the count, its header words glued ("LASTSEEN") or, later, not ("LAST SEEN").
_OLD_EVENTS_HEADER = r"^\s*(?:FIRST ?SEEN|LAST ?SEEN)\s{2,}(?:FIRST ?SEEN|LAST ?SEEN)\s{2,}COUNT\s{2,}NAME\s{2,}KIND\s{2,}"
# A `kubectl get events` row without its header (`| grep OOM`, a pasted excerpt): the age (`kubectl events`, 1.26+,
# adds its count: "24s (x14 over 12m)"), the type and "kind/name" pin the columns down; the message may be empty.
# An author's placeholder in the name may hold spaces ("pod/egg-<id here>").
_HEADLESS_EVENT = (
    r"^\s*(?:(?<namespace>[a-z0-9][-a-z0-9]*)\s{2,})?(?<last_seen><unknown>|(?:[0-9]+[smhdy]){1,2}(?: \(x[0-9]+ over (?:[0-9]+[smhdy]){1,2}\))?)\s{2,}"
    r"(?<type>Normal|Warning)\s{2,}"
    r"(?<reason>[A-Za-z][0-9A-Za-z_]*)\s{2,}(?<object>[A-Za-z][0-9A-Za-z_.-]*/(?:[^\s<]|<[^<>]*>)+)(?:\s{2,}(?<message>.*?))?\s*$"
)
# Go's time.Time printed as is ("2017-03-09 18:45:36 +0100 CET"): kubectl 1.5's `get events` LASTSEEN / FIRSTSEEN
# cells were absolute times so. The zone's abbreviation after the offset adds nothing and no parser takes it.
_GO_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)? [-+][0-9]{4} [A-Z]{1,5}"
_GO_TIME_ZONE_NAME = r"^([0-9]{4}-\S+ \S+ [-+][0-9]{4}) [A-Z]{1,5}$"
# A kubectl 1.5 `get events` row without its header (NAMESPACE LASTSEEN FIRSTSEEN COUNT NAME KIND SUBOBJECT TYPE REASON
# SOURCE MESSAGE): the two absolute times, the count, the type and the "{kubelet <node>}" source pin the columns down.
_HEADLESS_GO_TIME_EVENT = (
    rf"^\s*(?:(?<namespace>[a-z0-9][-a-z0-9]*)\s{{2,}})?(?<last_seen>{_GO_TIME})\s{{2,}}(?<first_seen>{_GO_TIME})\s{{2,}}"
    r"(?<count>[0-9]+)\s{2,}"
    r"(?<name>[a-z0-9][-a-z0-9.]*)\s{2,}(?<object_kind>[A-Z][A-Za-z]*)\s{2,}(?:(?<subobject>spec\.\S+)\s{2,})?(?<type>Normal|Warning)\s{2,}"
    r"(?<reason>[A-Za-z][0-9A-Za-z_]*)\s{2,}(?<source>\{[^{}]*\}|\S+(?:, \S+)?)(?:\s{2,}(?<message>.*?))?\s*$"
)
# The kubelet's Killing event before 1.10 named the container by its runtime id ("Killing container with docker id
# 069359c8acce: Need to kill pod.", "… with id docker://<64 hex>:…"); a name there ("docker://memhog") is no id.
_KILLING_CONTAINER_ID = r"^Killing container with (?:docker id |id [a-z-]+://)([0-9a-f]{12,64})\b"
# A row cut down to its REASON, OBJECT and MESSAGE (`-o custom-columns`, or an author's excerpt): the reason, then
# "kind/name" of a kind events name, pin it down.
_HEADLESS_REASON_EVENT = (
    r"^\s*(?<reason>[A-Z][0-9A-Za-z_]*)\s{2,}"
    r"(?<object>(?:pod|node|job|cronjob|replicaset|deployment|statefulset|daemonset|persistentvolumeclaim|service)"
    r"(?:\.[a-z][0-9a-z.-]*)?/[a-z0-9][-a-z0-9.]*)\s{2,}(?<message>\S.*?)\s*$"
)
# `kubectl get pods` rows without their header (`| grep OOMKilled`, `get all` with its "pod/" prefix): READY
# "n/m", the status, RESTARTS (with "(5m ago)" since 1.23) and the age pin the columns down; a row cut after
# its status (or its restarts) keeps the first three. A status may be words (1.16's "Topology Affinity Error").
_POD_ROW_HEAD = r"^\s*(?:(?<namespace>[a-z0-9][-a-z0-9]*)\s{2,})?(?:pod/)?(?<name>[a-z0-9][-a-z0-9.]*)"
_POD_ROW_TAIL = (
    r"(?<ready>[0-9]+/[0-9]+)\s{2,}(?<status>[A-Za-z][0-9A-Za-z:/]*(?: [A-Z][0-9A-Za-z]*)*)(?:\s{2,}(?<restarts>[0-9]+(?: \([0-9a-z]+ ago\))?)"
    r"(?:\s{2,}(?<age><unknown>|(?:[0-9]+[smhdy]){1,2})(?:\s{2,}\S+\s{2,}(?<node>[^\s<]\S*))?(?:\s.*)?|\s*)|\s*)$"
)
_HEADLESS_POD = _POD_ROW_HEAD + r"\s{2,}" + _POD_ROW_TAIL
# A row under a header whose author lengthened the name until it ran into READY ("deploy-6d485b4676-w5qmx1/1   Running"):
# the name is the longest that leaves READY its "n/m" (READY's counts are rarely of two digits).
_JAMMED_POD = _POD_ROW_HEAD + r"\s*" + _POD_ROW_TAIL
# A `describe node` Conditions row without its header (`| grep Pressure`): type, status, two RFC 1123 times.
_RFC1123 = r"[A-Z][a-z]{2}, [0-9]{1,2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} [-+][0-9]{4}"
# Node conditions whose True is a problem the kubelet reports (OutOfDisk before 1.13); Ready is the one whose False
# (the kubelet says the node is not ready) or Unknown (it stopped posting status) is.
_PROBLEM_CONDITION = r"^(?:[A-Za-z]*Pressure|OutOfDisk|NetworkUnavailable)$"
# A describe node Conditions table's header.
_CONDITIONS_HEADER = r"^\s*Type\s{2,}Status\s{2,}LastHeartbeatTime\s{2,}LastTransitionTime\s{2,}Reason\s{2,}Message\s*$"
# NVIDIA NVSentinel's node conditions (GpuAllWatch, GpuMemWatch, SysLogsXIDError, …) name the failing GPU and its Xid:
# "ErrorCode:DCGM_FR_UNCONTAINED_ERROR GPU:0 PCI:0000:16:00.0 GPU_UUID:GPU-… GPU had an uncontained error (XID 95) …",
# "ErrorCode:119 PCI:0002:00:00 GPU_UUID:GPU-… kernel: [16450076.435595] NVRM: Xid (PCI:0002:00:00): 119, …" (the first of a list).
_CONDITION_XID = r"^ErrorCode:([0-9]+) |\(XID ([0-9]+)\)"
_CONDITION_GPU = r"(?:^|\s)GPU:([0-9]+)\s"
_CONDITION_PCI = r"(?:^|\s)PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?)\s"
_CONDITION_UUID = r"(?:^|\s)GPU_UUID:(GPU-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})\b"
_HEADLESS_CONDITION = (
    rf"^\s*(?<type>[A-Z][0-9A-Za-z]+)\s+(?<status>True|False|Unknown)\s+(?<heartbeat>{_RFC1123})\s+(?<transition>{_RFC1123})"
    r"(?:\s+(?<reason>[A-Za-z][0-9A-Za-z_]*))?(?:\s+(?<message>\S.*?))?\s*$"
)
# A describe Events row whose cells no longer sit under the header (a node name redacted to a shorter one), or one
# pasted without it: split on the runs of spaces instead, which the From cell ("kubelet, node1") and the age never hold.
_DESCRIBE_EVENT_ROW = (
    r"^\s*(?<type>Normal|Warning)\s{2,}(?<reason>[A-Za-z][0-9A-Za-z_]*)\s{2,}"
    r"(?<age>(?:<unknown>|<invalid>|(?:[0-9]+[smhdy]){1,2})(?: \(x[0-9]+ over \S+\))?)\s{2,}(?<source>\S+(?:, \S+)?)\s{2,}(?<message>.*?)\s*$"
)
_DESCRIBE_EVENT_FIELDS = ("type", "reason", "age", "source", "message")
# A describe Events row of kubectl before 1.10 (FirstSeen LastSeen Count From SubObjectPath Type Reason Message) whose
# padding a blog or wiki collapsed to single spaces, or whose tabs a paste turned into runs of spaces that no longer line
# up: the ages, the count, and the type after the From cell pin it down.
_COLLAPSED_EVENT_ROW = (
    r"^\s*(?<first_seen><unknown>|(?:[0-9]+[smhdy]){1,2}) +(?<last_seen><unknown>|(?:[0-9]+[smhdy]){1,2}) +(?<count>[0-9]+) +"
    r"(?<source>\{[^{}]*\}|[0-9A-Za-z_.-]+(?:, [^\s,]+)?) +(?:(?<subobject>spec\.\S+) +)?(?<type>Normal|Warning) +"
    r"(?<reason>[A-Za-z][0-9A-Za-z_]*)(?: +(?<message>.*?))?\s*$"
)
_COLLAPSED_EVENT_FIELDS = ("first_seen", "last_seen", "count", "source", "subobject", "type", "reason", "message")
# A describe Events row of kubectl before 1.3 as it printed it, its cells padded with tabs (runs of them squeezed to one
# here): its tabs, not the 8-column stops, are its cells' bounds, for the header's tabs were counted over rows a paste may
# have cut (kubectl 1.0's "FirstSeen\t\t\t\tLastSeen…" over a "Tue, 07 Jul 2015 12:53:51 -0700\tTue, …" row). The two
# times (ages since 1.1, RFC 1123 times in 1.0), the count and the From cell ("{kubelet node}", as Go printed the
# event's source struct then; a get events row's NAME is no such cell) lead; an empty SubObjectPath leaves only padding,
# and Type (1.2) may be missing.
_TAB_EVENT_ROW = (
    rf"^[ \t]*(?<first_seen><unknown>|(?:[0-9]+[smhdy]){{1,2}}|{_RFC1123})\t(?<last_seen><unknown>|(?:[0-9]+[smhdy]){{1,2}}|{_RFC1123})\t"
    r"(?<count>[0-9]+)\t(?<source>\{[^\t{}]*\})[ ]*\t(?:(?<subobject>(?:spec\.|implicitly required container )[^\t]*?)[ ]*\t)?"
    r"(?:(?<type>Normal|Warning)[ ]*\t)?(?<reason>[A-Za-z][0-9A-Za-z_]*)[ ]*(?:\t(?<message>.*?))?[ \t]*$"
)
# The current layout collapsed (Type Reason Age From Message), its padding cut to single spaces in some cells and not in
# others (" Warning FailedScheduling  40s (x2 over 40s)  default-scheduler  0/2 nodes …"): the From cell is one word, or
# "kubelet, <node>".
_COLLAPSED_CURRENT_EVENT_ROW = (
    r"^\s*(?<type>Normal|Warning) +(?<reason>[A-Za-z][0-9A-Za-z_]*) +"
    r"(?<age>(?:<unknown>|<invalid>|(?:[0-9]+[smhdy]){1,2})(?: \(x[0-9]+ over \S+\))?) +(?<source>[^\s,]+(?:, [^\s,]+)?)(?: +(?<message>.*?))?\s*$"
)
# Either header collapsed (or ragged): the table is kubectl's whatever else the head holds.
_COLLAPSED_EVENTS_HEADER = (
    r"^\s*(?:Type Reason Age From Message|FirstSeen +LastSeen +Count +From +SubObjectPath(?: +Type)? +Reason +Message)\s*$"
)
# A `kubectl top node` row split on its runs of spaces: name, CPU, CPU%, memory, memory%.
_TOP_NODE_ROW = (
    r"^\s*(?<name>\S+)\s+(?<cpu>[0-9]+m?|<unknown>)\s+(?<cpu_pct>[0-9]+%|<unknown>)\s+"
    rf"(?<memory>{QUANTITY}|<unknown>)\s+(?<memory_pct>\S+)\s*$"
)
_TOP_NODE_FIELDS = ("name", "cpu", "cpu_pct", "memory", "memory_pct")
# Each headless row shape and the fields it fills.
_HEADLESS_SHAPES = (
    (_HEADLESS_EVENT, ("namespace", "last_seen", "type", "reason", "object", "message")),
    (_HEADLESS_POD, ("namespace", "name", "ready", "status", "restarts", "age", "node")),
    (_HEADLESS_REASON_EVENT, ("reason", "object", "message")),
    (
        _HEADLESS_GO_TIME_EVENT,
        ("namespace", "last_seen", "first_seen", "count", "name", "object_kind", "subobject", "type", "reason", "source", "message"),
    ),
    (_HEADLESS_CONDITION, ("type", "status", "heartbeat", "transition", "reason", "message")),
    (_DESCRIBE_EVENT_ROW, _DESCRIBE_EVENT_FIELDS),
    (_COLLAPSED_EVENT_ROW, _COLLAPSED_EVENT_FIELDS),
    (_COLLAPSED_CURRENT_EVENT_ROW, _DESCRIBE_EVENT_FIELDS),
)
# `-o jsonpath='{.metadata.name}{"\t"}{.status.reason}{"\t"}{.status.message}'`: name, reason, message.
_EVICTED_ROW = r"(?<evicted_pod>[a-z0-9][-a-z0-9.]*)\s+Evicted\s+"
_PODS_HEADER = r"^\s*(?:NAMESPACE\s{2,})?NAME\s{2,}READY\s{2,}STATUS\s{2,}RESTARTS\s{2,}AGE"
# `kubectl get <any resource>` (jobs, pvc, a custom resource's printer columns: nodeclaims, pytorchjobs, rayclusters, …):
# upper-case column names from NAME (NAMESPACE before it with -A) to AGE, which kubectl adds to every table (-o wide's
# columns come after it).
_GENERIC_GET_HEADER = (
    r"^\s*(?:NAMESPACE\s{2,})?NAME\s{2,}(?:[A-Z][-A-Z0-9()%/.]*(?: [A-Z][-A-Z0-9()%/.]*)*\s{2,})*AGE(?:\s{2,}\S.*?)?\s*$"
)
# A resource's STATUS / STATE / CONDITION cell that says it failed: a Job's or a training job's "Failed", a
# "…Error", a claim whose volume is gone ("Lost").
_FAILED_STATUS = r"^(?:[A-Za-z]*Failed|[A-Za-z]*Error|Lost)$"
_DESCRIBE_KEYS = (
    r"^\s*(?:Exit Code|Restart Count|Start Time|Controlled By|QoS Class|Last State|Last Termination State|Finished|Container ID|Priority Class Name"
    # The head of a pod that never started (Pending) has none of those; its header fields tell it.
    r"|Namespace|Node|Annotations):\s"
)
_NODE_STATUS = r"^Node ([^\s<>]+) status is now: "
# A line an author put for what was cut.
_ELIDED = r"^\s*(?:\.\.\.+|…|\[\.\.\.\])\s*$"
_JSON_OBJECT_OPENS = r"^\s*\{\s*$"
_EVENTS_KEY = r"^\s*Events:\s*$"
_KUBECTL_PROMPT = r"^\s*(?:\S*\$|\S+#|\[[^\]\s]+@[^\]]*\][$#])\s+(?:kubectl|oc)\s"
_TABLE_LIKE = r"^\s*\S+(?: \S+)*(?:\s{2,}\S+(?: \S+)*){2,}\s*$"
# "Last Termination State" is what kubectl called "Last State" before 1.3.
_STATE_KEYS = ("State", "Last State", "Last Termination State")
_STATE_FIELDS = ("Reason", "Exit Code", "Signal", "Started", "Finished", "Message")
_STATE_HEAD = r"^\s*(?:State|Last State|Last Termination State):\s+(?:Terminated|Waiting|Running)\s*$"

_SECTION_KEYS = (
    "Name",
    "Containers",
    "Init Containers",
    "Ephemeral Containers",
    "Conditions",
    "Volumes",
    "QoS Class",
    "Node-Selectors",
    "Tolerations",
    "Events",
    "Addresses",
    "Capacity",
    "Allocatable",
    "System Info",
    "Non-terminated Pods",
    "Allocated resources",
    "Taints",
    "Lease",
)
_CONTAINER_SECTIONS = ("Containers", "Init Containers", "Ephemeral Containers")
_CONTAINER_FIRST_KEYS = ("Container ID", "Image")
# "containerd://567f…", "docker://…", "cri-o://…": the runtime's scheme, then the id.
_CONTAINER_ID = r"^(?:[a-z-]+://)?([0-9a-f]{12,64})$"
_NODE_KEYS = ("Roles", "Taints", "Unschedulable", "Addresses", "Kubelet Version")
# A describe node's Capacity / Allocatable entry of a countable resource ("  nvidia.com/gpu:     8"; tabs before 1.3).
_RESOURCE_NAME = r"[a-z0-9][-A-Za-z0-9.]*(?:/[-A-Za-z0-9_.]+)?"
_RESOURCE_LINE = rf"^\s+(?<resource>{_RESOURCE_NAME}):\s+(?<count>[0-9]+)\s*$"
# Any entry of those blocks, a quantity too ("  memory:  131630256Ki").
_RESOURCE_ENTRY = rf"^\s+{_RESOURCE_NAME}:\s+{QUANTITY}\s*$"
_RESOURCE_SECTIONS = ("Capacity", "Allocatable")
_NODE_TABLE_SECTIONS = ("Non-terminated Pods", "Allocated resources")

# Header words of kubectl tables (upper-cased, spaces removed) and the field each one holds.
_COLUMNS = {
    "LASTSEEN": "last_seen",
    "FIRSTSEEN": "first_seen",
    "COUNT": "count",
    "TYPE": "type",
    "REASON": "reason",
    "OBJECT": "object",
    "SUBOBJECT": "subobject",
    "SUBOBJECTPATH": "subobject",
    "SOURCE": "source",
    "FROM": "source",
    "MESSAGE": "message",
    # Custom columns' usual names for an event's message, times (.lastTimestamp, .firstTimestamp: ISO 8601) and namespace.
    "MSG": "message",
    "TIME": "last_seen",
    "TS": "last_seen",
    "LASTTIMESTAMP": "last_seen",
    "FIRSTTIMESTAMP": "first_seen",
    "NS": "namespace",
    "NAMESPACE": "namespace",
    "NAME": "name",
    "KIND": "object_kind",
    "AGE": "age",
    "STATUS": "status",
    # A custom resource's printer columns name its status so too (PyTorchJob's STATE, Katib's CONDITION).
    "STATE": "status",
    "CONDITION": "status",
    "READY": "ready",
    "RESTARTS": "restarts",
    "NODE": "node",
    "ROLES": "roles",
    "VERSION": "version",
    "LASTHEARTBEATTIME": "heartbeat",
    "LASTTRANSITIONTIME": "transition",
    "POD": "top_pod",
    "CPU(CORES)": "cpu",
    "CPU%": "cpu_pct",
    "MEMORY(BYTES)": "memory",
    "MEMORY%": "memory_pct",
    "SWAP(BYTES)": "swap",
    "SWAP%": "swap_pct",
}
_FIELDS = tuple(dict.fromkeys(_COLUMNS.values()))
_HEADLESS_FIELDS = tuple(dict.fromkeys(field for _, fields in _HEADLESS_SHAPES for field in fields))

_SEVERITY_BY_TYPE = {"Normal": "info", "Warning": "warning"}
# A pods row's STATUS (an init container's behind "Init:") is the reason a container is not running: one that
# failed (Error, RunContainerError, UnexpectedAdmissionError, OOMKilled, Evicted, OutOfnvidia.com/gpu, Signal:9,
# ExitCode:1, …) or one the kubelet retries after a back-off (CrashLoopBackOff, ImagePullBackOff). Kubernetes 1.16's
# topology manager rejected a pod with the reason "Topology Affinity Error", in words; 1.6's GPU manager with its error
# itself ("requested number of GPUs unavailable. Requested: 4, Available: 0").
_FAILED_POD_STATUS = (
    r"^(?:Init:)?(?:(?:[A-Z][a-z]+ )*[A-Za-z]*Error|OOMKilled|Evicted|ContainerStatusUnknown|OutOf[0-9A-Za-z./_-]+|Signal:[0-9]+|ExitCode:[1-9][0-9]*"
    r"|requested number of GPUs unavailable\. .*)$"
)
# A container in back-off, or one whose image pull just failed (ErrImagePull, before the back-off starts).
_BACKOFF_POD_STATUS = r"^(?:Init:)?(?:[A-Za-z]*BackOff|ErrImagePull)$"
# The scheduler's Scheduled event names the pod it bound and the node: "Successfully assigned <ns>/<pod> to <node>"
# (before 1.10 without the namespace).
_ASSIGNED = r"^Successfully assigned (?:(?<namespace>[a-z0-9][-a-z0-9]*)/)?(?<pod>[a-z0-9][-a-z0-9.]*) to (?<node>[^\s<>]+)$"
# The kubelet names a pod by its full name "<name>_<namespace>(<uid>)" in event messages: "Back-off restarting failed
# container x in pod <full name>" (1.26+), "… restarting failed container=x pod=<full name>" (FailedSync, before 1.10).
_MESSAGE_POD = (
    r"(?:\bin pod |\bpod=)(?<pod>[a-z0-9][-a-z0-9.]*)_(?<namespace>[a-z0-9][-a-z0-9]*)"
    r"\((?<pod_uid>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\)"
)


# The node controller's TaintManagerEviction (and, before 1.6, NodeControllerEviction) names the pod it deletes.
_MARKED_POD = r"^Marking for deletion Pod (?:(?<namespace>[a-z0-9][-a-z0-9]*)/)?(?<pod>[a-z0-9][-a-z0-9.]*)"
# `-o custom-columns=OBJECT:.involvedObject.name` prints the object's name bare, no "kind/": these reasons are only ever
# recorded on a pod (by the scheduler, the kubelet, the taint manager), so the name they come with is a pod's.
_POD_EVENT_REASONS = (
    "Scheduled", "FailedScheduling", "Preempted", "Pulling", "Pulled", "Created", "Started", "Killing", "BackOff",
    "Unhealthy", "Evicted", "FailedMount", "FailedAttachVolume", "FailedCreatePodSandBox", "FailedKillPod",
    "SandboxChanged", "ExceededGracePeriod", "FailedPostStartHook", "FailedPreStopHook", "UnexpectedAdmissionError",
    "TaintManagerEviction", "OOMKilled",
)


def sniff(head: Sequence[str]) -> float:
    """Confidence that the head is kubectl output or a Kubernetes object document."""
    return one_head(sniff_heads, head)


def sniff_heads(heads: pl.DataFrame) -> dict[int, float]:
    """:func:`sniff` of each head of :func:`~rca.sources._base.heads_frame`: every shape matched over all heads in one query."""
    raw, text = pl.col("raw"), pl.col("text")
    lines = heads.with_columns(raw=pl.col("text"), text=_expand_tabs(heads["text"]))
    shaped = lines.select(
        "head",
        first=raw,
        json_marker=raw.str.contains("|".join(re.escape(marker) for marker in _k8s_objects.JSON_MARKERS)),
        yaml_kind=raw.str.contains(r"^\s*-? ?kind: "),
        **{name: text.str.contains(pattern) for name, pattern in _SNIFFED_SHAPES.items()},
        headless=pl.any_horizontal(
            *(text.str.contains(pattern) for pattern, _ in _HEADLESS_SHAPES), _tab_row(raw).str.contains(_TAB_EVENT_ROW).fill_null(False)
        ),
    )
    inline_shaped, described = pl.col("inline") | pl.col("table_shaped"), pl.col("describe_shaped")
    features = by_head(
        shaped,
        first=pl.col("first").first(),
        **{name: pl.col(name).any() for name in ("json_marker", "yaml_kind", *_SNIFFED_SHAPES)},
        inline_share=inline_shaped.mean(),
        state_field_share=pl.col("state_field").mean(),
        headless_share=pl.col("headless").mean(),
        headless_any=pl.col("headless").any(),
        described_share=(pl.col("headless") | described).mean(),
        pods_share=pl.col("pods_shaped").mean(),
        describe_keys=pl.col("describe_key").sum(),
        key_share=pl.col("key_or_container").mean(),
        resource_lines=pl.col("resource_line").sum(),
        resource_share=(pl.col("resource_line") | described | inline_shaped).mean(),
    )
    return {head: _head_score(found) for head, found in features.items()}


# What :func:`sniff_heads` looks for on each line of a head (tabs expanded), by the name :func:`_head_score` reads.
_SNIFFED_SHAPES = {
    "status_key": _k8s_objects.STATUS_FRAGMENT_KEY,
    "status_terminated": _k8s_objects.STATUS_FRAGMENT_TERMINATED,
    "status_evicted": _k8s_objects.STATUS_FRAGMENT_EVICTED,
    "status_phase": _k8s_objects.STATUS_FRAGMENT_PHASE,
    "json_object": _JSON_OBJECT_OPENS,
    "status_failed": _k8s_objects.STATUS_FRAGMENT_FAILED,
    "status_failed_condition": _k8s_objects.STATUS_FRAGMENT_FAILED_CONDITION,
    "status_reason": _k8s_objects.STATUS_FRAGMENT_REASON,
    "status_capacity": _k8s_objects.STATUS_FRAGMENT_CAPACITY,
    "status_allocatable": _k8s_objects.STATUS_FRAGMENT_ALLOCATABLE,
    "runtime_state": _k8s_objects.RUNTIME_STATE_KEY,
    "state_exit_code": _k8s_objects.STATE_FIELDS_EXIT_CODE,
    "state_time": _k8s_objects.STATE_FIELDS_TIME,
    "state_field": rf"{_k8s_objects.STATE_FIELDS_LINE}|{_PROMPT}|{_ELIDED}|^\s*$",
    "runtime_exit_code": _k8s_objects.RUNTIME_EXIT_CODE,
    "events_header": (
        rf"{_EVENTS_HEADER}|{_OLD_EVENTS_HEADER}|{_DESCRIBE_EVENTS_HEADER}|{_CONDITIONS_HEADER}|{_COLLAPSED_EVENTS_HEADER}|{_CUSTOM_EVENTS_HEADER}"
    ),
    "inline": _INLINE_TERMINATED,
    "table_shaped": rf"{_PROMPT}|{_TABLE_LIKE}|{_KEY_LINE}",
    "events_key": _EVENTS_KEY,
    "describe_shaped": rf"{_KEY_LINE}|{_PROMPT}|{_ELIDED}|^\s*$",
    "pods_header": rf"{_PODS_HEADER}|{_TOP_HEADER}|{_GENERIC_GET_HEADER}",
    "pods_shaped": rf"{_KUBECTL_PROMPT}|{_TABLE_LIKE}|^\s*{EVICTION_MESSAGE}",
    "describe_key": _DESCRIBE_KEYS,
    "key_or_container": rf"{_KEY_LINE}|{_CONTAINER_LINE}",
    "state_head": _STATE_HEAD,
    "state_reason": r"^\s+Reason:\s+[A-Z][0-9A-Za-z]+\s*$",
    "eviction": rf"^(?:\s*message:\s*['\"]?|{_EVICTED_ROW})?{EVICTION_MESSAGE}",
    "node_resources": rf"^\s*(?:{'|'.join(_RESOURCE_SECTIONS)}):\s*$",
    "resource_line": _RESOURCE_ENTRY,
    "admission_rejected": ADMISSION_REJECTED,
}


def _head_score(found: dict) -> float:
    """A head's confidence from what :func:`sniff_heads` found on its lines."""
    if _k8s_objects.opens_document(found["first"], json_marker=found["json_marker"], yaml_kind=found["yaml_kind"]):
        return 0.95
    if (found["status_key"] and found["status_terminated"]) or (found["status_evicted"] and found["status_phase"]):
        return 0.9
    # `-o json | jq .status` prints the status as an object of its own, no key above it.
    if (found["status_key"] or found["json_object"]) and (found["status_failed"] or found["status_failed_condition"]) and found["status_reason"]:
        return 0.9
    if found["runtime_state"] and found["runtime_exit_code"]:
        return 0.9
    # A container state's fields printed alone (`yq '…lastState.terminated'`): nothing but them, a prompt above.
    if found["state_exit_code"] and found["status_reason"] and found["state_time"] and found["state_field_share"] == 1.0:
        return 0.9
    # A node's pasted status: its capacity and allocatable, under a status key or as `jq .status`'s object.
    if (found["status_key"] or found["json_object"]) and found["status_capacity"] and found["status_allocatable"]:
        return 0.9
    if found["events_header"]:
        return 0.95
    if found["inline"]:
        # A CI job's log may print a pod's state too: weigh it by how much of the head is kubectl's.
        return 0.5 + 0.4 * found["inline_share"]
    if found["headless_share"] >= 0.5:
        return 0.9
    # Rows under a describe's "Events:" whose header an author cut ("Events:\n  ...\n  Warning  …") are its table,
    # however few of them the head holds beside the describe's fields (and an elision, a prompt).
    if found["headless_any"] and found["events_key"] and found["described_share"] >= 0.8:
        return 0.9
    if found["pods_header"]:
        # A pod table also turns up inside CI job logs: weigh it by how much of the head is kubectl-shaped.
        return 0.5 + 0.4 * found["pods_share"]
    # A container's State block cut to its state and reason (`describe pod | grep -A1 State`) is describe output too.
    state_block = found["state_head"] and found["state_reason"]
    if (found["describe_keys"] >= 2 or state_block) and found["key_share"] >= 0.5:
        return 0.9
    # A rejected pod's describe cut to its status Message ("Message:  Pod was rejected: Allocate failed due to …"), with
    # its Status / Reason or a pod table beside it: the kubelet's own wording, nothing else writes it.
    if found["admission_rejected"] and found["key_share"] + found["pods_share"] >= 0.5:
        return 0.9
    # A describe node cut to its Capacity / Allocatable blocks (`| grep -A8 Allocatable`, an issue's excerpt).
    if found["node_resources"] and found["resource_lines"] >= 2 and found["resource_share"] >= 0.8:
        return 0.9
    return 0.6 if found["eviction"] else 0.0


def parse(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Parse kubectl output: whole JSON/YAML documents first, else tables and describe text.

    Of the lines of several files (a ``batch_file`` column), the text files (tables, describe output) are read together,
    each file's tables, documents and records ending at its last line; a file that may be a document or a pasted status
    alone, as it would be by itself.
    """
    if within_file(lines):
        return _parse_files(lines, ctx)
    return _parse_alone(lines, ctx)


def _parse_alone(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    return (
        _k8s_objects.parse_documents(lines, ctx)
        or _cut_json_document(lines, ctx)
        or _prompted_status_fragment(lines, ctx)
        or _k8s_objects.parse_runtime_state_fragment(lines, ctx)
        or _parse_text(lines, ctx)
    )


# A pretty-printed JSON document a paste cut before its closing brackets (an issue's excerpt of `kubectl get events -o json`,
# of an event exporter's {"verb": "ADDED", "event": {…}}). The brackets still open are on the lines less indented than every
# line after them (the last line's enclosing objects and arrays), each a line's last character. Where the last line ends a
# value (no "," after it: the last member of its object; or an array's item, whose "," is dropped), the open
# brackets are closed there and the document read as it would be whole. A last line that leaves a member to follow
# ("count": 1,), or is itself cut ("message": "Memory cgr), is inside an object cut short: where that object is an item of
# an array (an event of "items"), the items before it are read so, and its own lines stay text; elsewhere all stays text.
_OPEN_BRACKET = r"[\[{]\s*$"


def _cut_json_document(lines: pl.DataFrame, ctx: ParseContext) -> Parsed | None:
    text = pl.col("text")
    shown = lines.filter(text.str.contains(r"\S"))
    if shown.is_empty() or not shown["text"][0].lstrip().startswith(("{", "[")):
        return None
    indent = text.str.len_chars() - text.str.strip_chars_start(" \t").str.len_chars()
    rows = shown.select("line", text=text.str.strip_chars_end(), indent=indent)
    ending = _closed_at(rows)
    whole = _k8s_objects.parse_documents(_with_ending(lines, rows, ending), ctx) if ending else None
    if whole is not None:
        return whole
    # The "{" of the item cut short: at the indent of the "}," above it, every line after it deeper.
    stripped = pl.col("text").str.strip_chars()
    item = (stripped == "{") & (stripped.shift(1) == "},") & (pl.col("indent") == pl.col("indent").shift(1))
    cut = rows.with_columns(item=item.fill_null(False), deeper=pl.col("indent").reverse().cum_min().reverse().shift(-1))
    cut = cut.filter("item").tail(1)
    if cut.is_empty() or (cut["deeper"][0] is not None and cut["deeper"][0] <= cut["indent"][0]):
        return None
    first = cut["line"][0]
    before = rows.filter(pl.col("line") < first)
    ending = _closed_at(before)
    documents = _k8s_objects.parse_documents(_with_ending(lines.filter(pl.col("line") < first), before, ending), ctx) if ending else None
    if documents is None:
        return None
    tail = _parse_text(lines.filter(pl.col("line") >= first), ctx)
    skipped = {reason: documents.skipped.get(reason, 0) + tail.skipped.get(reason, 0) for reason in {*documents.skipped, *tail.skipped}}
    events = pl.concat([documents.events, tail.events], how="diagonal_relaxed") if tail.events.height else documents.events
    return Parsed(events=events, skipped=skipped)


def _closed_at(rows: pl.DataFrame) -> str | None:
    """The last of ``rows`` (line, text, indent of a cut document) with the brackets still open closed after it, or None
    where it ends no value or what encloses it is not brackets alone."""
    if rows.height < 2:
        return None
    enclosing = rows.filter(pl.col("indent") < pl.col("indent").reverse().cum_min().reverse().shift(-1))["text"]
    last = rows["text"][-1]
    if enclosing.is_empty() or not enclosing.str.contains(_OPEN_BRACKET).all() or re.search(r"[\[{:]$", last):
        return None
    # A "," after the last line leaves more to follow: an array's next item (those above it are whole), or an object's next
    # member (the object is cut short).
    if last.endswith(",") and not enclosing[-1].endswith("["):
        return None
    closers = "".join("]" if opened.endswith("[") else "}" for opened in reversed(enclosing.to_list()))
    return f"{last.removesuffix(',')} {closers}"


def _with_ending(lines: pl.DataFrame, rows: pl.DataFrame, ending: str) -> pl.DataFrame:
    return lines.with_columns(text=pl.when(pl.col("line") == rows["line"][-1]).then(pl.lit(ending)).otherwise(pl.col("text")))


def _parse_files(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """The lines of several files: their kubectl text in one parse (a must-gather saves a describe or an events table
    per object: hundreds of small files), every file that may hold a document or a status fragment alone."""
    return parse_apart(lines, ctx, _text_files(lines), _parse_text, _parse_alone)


def _text_files(lines: pl.DataFrame) -> list[int]:
    """The files (by ``batch_file``) that :func:`parse` would read as text: no document opens them and nothing in them
    may be a pasted status or runtime state (what :mod:`rca.sources._k8s_objects` reads first)."""
    text = pl.col("text")
    kinds = lines.group_by("batch_file", maintain_order=True).agg(head=text.head(60), fragment=_k8s_objects.may_hold_fragment(text))
    return [number for number, head, fragment in kinds.iter_rows() if not fragment and not _k8s_objects.looks_like_document(head)]


def _prompted_status_fragment(lines: pl.DataFrame, ctx: ParseContext) -> Parsed | None:
    """A pasted piece of a pod status (:func:`_k8s_objects.parse_status_fragment`), after the command that printed it where
    one leads it ("# kubectl -n ns get pod x -o json | jq '.status'"): the pod and namespace that command names are the
    fragment's, which names neither."""
    leading = lines.select(pl.col("text").str.contains(_PROMPT).cum_min()).to_series()
    command = lines.filter(leading)["text"].str.replace_all(_QUOTED, "Q")
    parsed = _k8s_objects.parse_status_fragment(lines.filter(~leading) if command.len() else lines, ctx)
    if parsed is None or command.is_empty() or parsed.events.is_empty():
        return parsed
    pod = command.str.extract(_PROMPT_POD, 1).drop_nulls()
    namespace = command.str.extract(_PROMPT_NAMESPACE, 1).drop_nulls()
    named = parsed.events.with_columns(
        pod=pl.coalesce("pod", pl.lit(pod.last() if pod.len() else None, pl.String)),
        namespace=pl.coalesce("namespace", pl.lit(namespace.last() if namespace.len() else None, pl.String)),
    )
    return Parsed(events=named, skipped={**parsed.skipped, "prompt": command.len()})


def _parse_text(lines: pl.DataFrame, ctx: ParseContext) -> Parsed:
    """Tables, describe output and free text (of one file, or of several with a ``batch_file`` column)."""
    frame = _annotate(lines.with_columns(text=_expand_tabs(lines["text"]), tab_row=_tab_row(pl.col("text"))))
    rows = _table_rows(frame, ctx.tz)
    records = _text_records(frame, ctx.tz)
    states = _inline_states(frame, ctx.tz)
    resources = _node_resources(frame)
    skipped = frame.drop_nulls("skip").group_by("skip", maintain_order=True).len()
    parts = [part for part in (rows, records, states, resources) if part.height]
    events = pl.concat(parts, how="diagonal_relaxed").sort("line") if parts else pl.DataFrame()
    by_file = None
    if within_file(frame):
        by_file = {}
        for number, reason, count in frame.drop_nulls("skip").group_by("batch_file", "skip", maintain_order=True).len().iter_rows():
            by_file.setdefault(number, {})[reason] = count
    return Parsed(events=events, skipped=dict(skipped.iter_rows()), skipped_by_file=by_file)


def _ends_file(frame: pl.DataFrame) -> pl.Expr:
    """Whether a row is the last of its file in the lines of several files; never, for the lines of one file. What a
    line reads from the line below it must stop there."""
    if not within_file(frame):
        return pl.lit(False)
    return pl.col("batch_file").ne(pl.col("batch_file").shift(-1)).fill_null(False)


def _per_file(value: pl.Expr, frame: pl.DataFrame) -> pl.Expr:
    """``value`` (a running count) within each file of the lines of several files; over all of one file's lines."""
    return value.over("batch_file") if within_file(frame) else value


def _expand_tabs(texts: pl.Series) -> pl.Series:
    """Tabs as the terminal shows them (stops every 8 columns); text without tabs as it is.

    kubectl before 1.3 padded its tables with tabs, so columns line up only once they are
    expanded. Every cell before a tab starts on a stop, so its padded width is its own
    length rounded up past the next multiple of 8, whatever came before it.
    """
    tabbed = texts.str.contains("\t", literal=True)
    if not tabbed.any():
        return texts
    cell = pl.element()
    expanded = texts.str.split("\t").list.eval(cell.str.pad_end((cell.str.len_chars() // 8 + 1) * 8)).list.join("").str.strip_chars_end(" ")
    return expanded.zip_with(tabbed, texts)


def _tab_row(text: pl.Expr) -> pl.Expr:
    """A line padded with tabs, each run of them squeezed to one (a cell's bound, see :data:`_TAB_EVENT_ROW`); null for a
    line without tabs."""
    return pl.when(text.str.contains("\t", literal=True)).then(text.str.replace_all(r"\t+", "\t"))


def _annotate(lines: pl.DataFrame) -> pl.DataFrame:
    """Per-line shape: prompts, tables, describe keys, sections, documents."""
    text = pl.col("text")
    key = text.str.extract_groups(_KEY_LINE).struct
    indent = text.str.len_chars() - text.str.strip_chars_start(" ").str.len_chars()
    base = lines.with_columns(
        indent=indent,
        prompt=text.str.contains(_PROMPT),
        border=text.str.contains(_BORDER),
        key=key.field("key"),
        value=key.field("value"),
        container_line=text.str.extract(_CONTAINER_LINE, 1),
    ).with_columns(
        header=~pl.col("prompt")
        & (text.str.contains(_GET_HEADER) | (pl.col("border").shift(-1).fill_null(False) & ~_ends_file(lines)))
        & ~pl.col("border"),
        # A command's output ends at its file's end too; free text is loose until the file's first prompt.
        command=(pl.col("prompt") | starts_file(lines)).cum_sum(),
        unprompted=_per_file(pl.col("prompt").cum_sum(), lines) == 0,
    )
    # A headless row is a table row of its own, its cells found by its shape's pattern.
    shaped = pl.any_horizontal(
        *(text.str.contains(pattern) for pattern, _ in _HEADLESS_SHAPES), pl.col("tab_row").str.contains(_TAB_EVENT_ROW).fill_null(False)
    )
    tables = (
        _table_membership(base)
        .with_columns(headless=~pl.col("row") & ~pl.col("header") & ~pl.col("prompt") & shaped)
        .with_columns(row=pl.col("row") | pl.col("headless"))
    )
    top_key = pl.when(pl.col("indent") == 0).then(pl.col("key"))
    return tables.with_columns(
        prompt_namespace=pl.when(pl.col("prompt")).then(text.str.replace_all(_QUOTED, "Q").str.extract(_PROMPT_NAMESPACE, 1)).forward_fill().over("command"),
        prompt_pod=pl.when(pl.col("prompt")).then(text.str.replace_all(_QUOTED, "Q").str.extract(_PROMPT_POD, 1)).forward_fill().over("command"),
        name_first=pl.when(pl.col("prompt")).then(text.str.contains(_NAME_FIRST)).forward_fill().over("command").fill_null(False),
        inline_state=text.str.contains_any(list(_INLINE_STATE_LITERALS)),
        prompt_node=pl.when(pl.col("prompt")).then(text.str.extract(_PROMPT_NODE, 1)).forward_fill().over("command"),
        prompt_resource=pl.when(pl.col("prompt")).then(text.str.extract(_PROMPT_RESOURCE, 1)).forward_fill().over("command"),
        section=top_key.forward_fill().over("command"),
        doc=((top_key == "Name").fill_null(False) | starts_file(base)).cum_sum(),
        skip=pl.when(pl.col("prompt"))
        .then(pl.lit("shell prompt"))
        .when(pl.col("header"))
        .then(pl.lit("table header"))
        .when(pl.col("border") & pl.col("under_header"))
        .then(pl.lit("table border"))
        .when(
            pl.col("key").is_not_null()
            & pl.col("value").is_null()
            & (pl.col("header") | pl.col("container_line").is_not_null()).shift(-1).fill_null(False)
            & ~_ends_file(base)
        )
        .then(pl.lit("section header")),
    )


def _table_membership(frame: pl.DataFrame) -> pl.DataFrame:
    """Mark the data rows of each table: below its header, at its indent, until something else starts (kubectl
    prints no blank line inside a table: one ends it), and its file's end ends it."""
    table = (pl.col("header") | starts_file(frame)).cum_sum()
    header_indent = forward_fill_within(pl.when(pl.col("header")).then(pl.col("indent")), pl.col("table"))
    blank_before = pl.col("line").diff().fill_null(1) > 1
    ends = (
        pl.col("prompt")
        | blank_before
        | (pl.col("indent") < header_indent)
        | (pl.col("key").is_not_null() & (pl.col("indent") <= header_indent))
    )
    return (
        frame.with_columns(table=table)
        .with_columns(under_header=header_indent.is_not_null())
        .with_columns(
            row=pl.col("under_header") & ~pl.col("header") & ~pl.col("border") & ((ends & ~pl.col("header")).cum_sum().over("table") == 0),
        )
    )


def _column_offsets(frame: pl.DataFrame) -> pl.DataFrame:
    """Start and width of each known column of every table header (a handful of lines)."""
    rows = []
    for table, header in frame.filter(pl.col("header")).select("table", "text").iter_rows():
        # A header whose cells are one space apart: the table's padding was collapsed, no offset holds (its rows are
        # split by their shape), and each word is a cell.
        collapsed = "  " not in header.strip() or _ragged(header)
        cells = [(m.group().replace(" ", "").upper(), m.start()) for m in re.finditer(r"\S+" if collapsed else r"\S+(?: \S+)*", header)]
        entry: dict[str, int | bool | None] = {"table": table, "collapsed": collapsed, "generic": re.match(_GENERIC_GET_HEADER, header) is not None}
        for i, (name, start) in enumerate(cells):
            field = _COLUMNS.get(name)
            if field is not None and f"{field}_start" not in entry:
                entry[f"{field}_start"] = start
                entry[f"{field}_width"] = cells[i + 1][1] - start if i + 1 < len(cells) else None
        rows.append(entry)
    schema = {"table": pl.UInt32, "collapsed": pl.Boolean, "generic": pl.Boolean, **{f"{f}_{p}": pl.Int64 for f in _FIELDS for p in ("start", "width")}}
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)


def _ragged(header: str) -> bool:
    """Whether a header's padding is uneven: some of its column names only one space apart ("FirstSeen LastSeen  Count"),
    as tabs expanded at other stops leave them. Such a table's rows no longer sit under its words either."""
    runs = (cell.split() for cell in re.findall(r"\S+(?: \S+)*", header))
    return any(len(words) > 1 and "".join(words).upper() not in _COLUMNS and all(w.upper() in _COLUMNS for w in words) for words in runs)


def _table_rows(frame: pl.DataFrame, tz: str) -> pl.DataFrame:
    rows = frame.filter(pl.col("row") & pl.col("skip").is_null() & ~pl.col("inline_state"))
    if rows.height == 0:
        return pl.DataFrame()
    offsets = _column_offsets(frame).with_columns(pl.col("table").cast(frame.schema["table"]))
    headless = [
        (pl.when(pl.col("headless")).then(pl.col("text").str.extract_groups(pattern)).struct, fields) for pattern, fields in _HEADLESS_SHAPES
    ]
    # A row that its header's offsets cut mid-word (a name redacted or edited to another length shifted its cells)
    # is split on its runs of spaces instead, before its cells: an Events row of describe by _DESCRIBE_EVENT_ROW (or, its
    # padding collapsed to single spaces, _COLLAPSED_EVENT_ROW / _COLLAPSED_CURRENT_EVENT_ROW), of
    # `kubectl get events` by _HEADLESS_EVENT, a pods row by _HEADLESS_POD, a `kubectl top node` row by _TOP_NODE_ROW.
    message_start = pl.col("message_start")
    misaligned = ~pl.col("headless") & message_start.is_not_null() & (
        (pl.col("text").str.slice(message_start - 1, 1) != " ") | pl.col("collapsed").fill_null(False)
    )
    pods_misaligned = ~pl.col("headless") & pl.col("ready_start").is_not_null() & (_cut_mid_word("ready", "status", "restarts", "age") | _pod_cells_misshapen())
    top_misaligned = ~pl.col("headless") & pl.col("cpu_pct_start").is_not_null() & _cut_mid_word("cpu", "cpu_pct", "memory", "memory_pct")
    realignments = [
        (pl.when(misaligned & pl.col("source_start").is_not_null()).then(pl.col("text").str.extract_groups(_DESCRIBE_EVENT_ROW)).struct,
         _DESCRIBE_EVENT_FIELDS),
        (pl.when(misaligned & pl.col("source_start").is_not_null()).then(pl.col("text").str.extract_groups(_COLLAPSED_EVENT_ROW)).struct,
         _COLLAPSED_EVENT_FIELDS),
        (pl.when(misaligned & pl.col("source_start").is_not_null()).then(pl.col("text").str.extract_groups(_COLLAPSED_CURRENT_EVENT_ROW))
         .struct, _DESCRIBE_EVENT_FIELDS),
        (pl.when(misaligned & pl.col("source_start").is_null() & pl.col("object_start").is_not_null())
         .then(pl.col("text").str.extract_groups(_HEADLESS_EVENT)).struct, _HEADLESS_SHAPES[0][1]),
        (pl.when(pods_misaligned).then(pl.col("text").str.extract_groups(_JAMMED_POD)).struct, _HEADLESS_SHAPES[1][1]),
        (pl.when(top_misaligned).then(pl.col("text").str.extract_groups(_TOP_NODE_ROW)).struct, _TOP_NODE_FIELDS),
    ]

    # A tab-padded describe Events row (kubectl before 1.3), under its header or alone, is read by its tabs: its cells
    # are those and no others.
    tabbed = (
        pl.when((pl.col("headless") | pl.col("source_start").is_not_null()) & pl.col("tab_row").is_not_null())
        .then(pl.col("tab_row").str.extract_groups(_TAB_EVENT_ROW))
        .struct
    )
    by_tabs = tabbed.field("reason").is_not_null()

    def filled(shape: pl.Expr, field: str) -> pl.Expr:
        return pl.when(shape.field(field) != "").then(shape.field(field))

    shaped_fields = dict.fromkeys((*_HEADLESS_FIELDS, *_COLLAPSED_EVENT_FIELDS, *(field for _, fields in realignments for field in fields)))
    cells = rows.join(offsets, on="table", how="left").with_columns(
        *(_cell(field) for field in _FIELDS if field not in shaped_fields),
        *(
            pl.when(by_tabs)
            .then(filled(tabbed, field) if field in _COLLAPSED_EVENT_FIELDS else None)
            .otherwise(
                pl.coalesce(
                    *(filled(shape, field) for shape, fields in realignments if field in fields),
                    _cell(field),
                    *(filled(shape, field) for shape, fields in headless if field in fields),
                )
            )
            .alias(field)
            for field in shaped_fields
        ),
    )
    return _row_events(cells, _doc_context(frame), tz)


def _cut_mid_word(*fields: str) -> pl.Expr:
    """Whether a column of the row's header starts inside one of its words: kubectl pads every cell with
    spaces, so in a row that sits under its header the character before each column is a space."""
    text = pl.col("text")
    return pl.any_horizontal(
        pl.col(f"{field}_start").is_between(1, text.str.len_chars() - 1)
        & (text.str.slice(pl.col(f"{field}_start") - 1, 1) != " ")
        & (text.str.slice(pl.col(f"{field}_start"), 1) != " ")
        for field in fields
    ).fill_null(False)


def _pod_cells_misshapen() -> pl.Expr:
    """Whether a pods row's RESTARTS or AGE cell, cut at its header's offsets, is no such cell. `kubectl get pods -w`
    pads each row it watches on its own, so a longer STATUS shifts the cells after it; where the cut lands on a space
    inside "2 (16s ago)" no word is cut, but the cells read "2 (16s" and "ago)   25s"."""
    restarts, age = _sliced("restarts"), _sliced("age")
    bad_restarts = (restarts != "") & ~restarts.str.contains(r"^[0-9]+(?: \([0-9a-z]+ ago\))?$")
    bad_age = age.str.contains(r"\s")
    return (bad_restarts.fill_null(False) & pl.col("restarts_start").is_not_null()) | (bad_age.fill_null(False) & pl.col("age_start").is_not_null())


def _sliced(field: str) -> pl.Expr:
    """The text under the field's header, cut at the header's offsets."""
    return pl.col("text").str.slice(pl.col(f"{field}_start"), pl.col(f"{field}_width")).str.strip_chars()


def _cell(field: str) -> pl.Expr:
    """The field's cell under its header; a headless row (a table above it ended), or one of a collapsed table, has
    only its shape's cells."""
    sliced = _sliced(field)
    aligned = ~pl.col("headless") & ~pl.col("collapsed").fill_null(False)
    return pl.when(aligned & pl.col(f"{field}_start").is_not_null() & (sliced != "")).then(sliced).alias(field)


def _doc_context(frame: pl.DataFrame) -> pl.DataFrame:
    """Per describe document: the object it describes (pod or node) and where it runs; for a described Event, its
    fields (see :func:`_described_event`)."""
    value = pl.col("value")
    top = pl.col("indent") == 0

    def field(key: str, section: str | None = None) -> pl.Expr:
        # The key's value at the top (or inside a section's block); kubectl prints a time it lacks as "<nil>".
        where = top if section is None else ~top & (pl.col("section") == section)
        return value.filter(where & (pl.col("key") == key) & (value != "<nil>")).first()

    docs = frame.group_by("doc").agg(
        doc_name=field("Name"),
        doc_namespace=field("Namespace"),
        # "Node: <none>": a pending pod has none.
        doc_node=field("Node").str.extract(r"^([^/\s<>]+)", 1),
        doc_start=field("Start Time"),
        is_node=pl.col("key").filter(top).is_in(_NODE_KEYS).any(),
        # A workload's describe (a Job's, a Deployment's, …) prints the template of its pods, never a pod's own.
        is_workload=(pl.col("key").filter(top) == "Pod Template").any(),
        # `kubectl describe events`: an Event object, the object it is about under "Involved Object:".
        is_event=(pl.col("key").filter(top) == "Involved Object").any(),
        event_reason=field("Reason"),
        event_type=field("Type"),
        event_message=field("Message"),
        event_count=field("Count"),
        # The last occurrence (the first's, or events.k8s.io's eventTime, where it is missing).
        event_when=pl.coalesce(field("Last Timestamp"), field("Event Time"), field("First Timestamp")),
        event_component=pl.coalesce(field("Component", "Source"), field("Reporting Component")),
        # A kubelet reports as the node it runs on; another reporter's instance (an operator's pod) is no host.
        event_host=pl.coalesce(field("Host", "Source"), pl.when(field("Reporting Component") == "kubelet").then(field("Reporting Instance"))),
        involved_kind=field("Kind", "Involved Object"),
        involved_name=field("Name", "Involved Object"),
        involved_namespace=field("Namespace", "Involved Object"),
        involved_uid=field("UID", "Involved Object"),
        involved_path=field("Field Path", "Involved Object"),
    )
    return docs.with_columns(
        doc_pod=pl.when(~pl.col("is_node") & ~pl.col("is_workload") & ~pl.col("is_event")).then(pl.col("doc_name")),
        doc_workload=pl.when(pl.col("is_workload")).then(pl.col("doc_name")),
        doc_host=pl.when(pl.col("is_node")).then(pl.col("doc_name")).otherwise(pl.col("doc_node")),
    )


def _row_events(cells: pl.DataFrame, docs: pl.DataFrame, tz: str) -> pl.DataFrame:
    message = pl.col("message")
    by_type = pl.col("type").replace_strict(_SEVERITY_BY_TYPE, default=None)
    is_conditions = pl.col("heartbeat").is_not_null() | pl.col("transition").is_not_null()
    is_pods = pl.col("ready").is_not_null() & (pl.col("restarts").is_not_null() | pl.col("status").is_not_null())
    # A pods row has no message: its STATUS may be the admission failure itself (1.6's GPU manager's error).
    devices = admission_devices(pl.coalesce(message, pl.when(is_pods).then(pl.col("status"))))
    is_describe_events = pl.col("source").is_not_null() & pl.col("object").is_null() & pl.col("object_kind").is_null()
    # (A custom-columns table may leave out REASON where a field selector picked it: its OBJECT and MESSAGE make the event.)
    is_event = (pl.col("reason").is_not_null() | pl.col("message").is_not_null()) & (pl.col("object").is_not_null() | pl.col("source").is_not_null())
    # `kubectl get nodes`: each row names a node (NAME STATUS ROLES AGE VERSION).
    is_nodes = pl.col("roles").is_not_null() & pl.col("version").is_not_null() & pl.col("ready").is_null()
    # `kubectl top`: a node's row has its share of the node's allocatable (CPU%), a pod's or container's has none.
    is_top = pl.col("cpu").is_not_null() & pl.col("memory").is_not_null()
    is_top_node = is_top & pl.col("cpu_pct").is_not_null()
    top_pod = pl.when(is_top & ~is_top_node).then(pl.coalesce("top_pod", "name"))
    # Any other resource's table: each row is that object, named, its status cell telling a failure.
    is_generic = pl.col("generic").fill_null(False) & ~(is_pods | is_nodes | is_top | is_conditions | is_event | is_describe_events)
    # A describe node's tables of what runs there: "Non-terminated Pods" (a pod a row: its namespace, name, requests and
    # limits) and "Allocated resources" (a resource a row: the sums of those). No event, a row each.
    is_node_table = pl.col("section").is_in(_NODE_TABLE_SECTIONS) & ~(is_pods | is_nodes | is_top | is_conditions | is_event | is_describe_events)
    node_table_pod = pl.when(is_node_table & (pl.col("section") == "Non-terminated Pods")).then(pl.col("name"))
    # GKE's device plugin sets a node condition XidCriticalError, its reason the Xids seen ('{"31":true}');
    # NVSentinel sets its own conditions, the Xid in their message.
    failing = is_conditions & (pl.col("status") == "True")
    nvsentinel = pl.when(failing).then(pl.col("message").str.extract_groups(_CONDITION_XID)).struct
    condition_xid = pl.coalesce(
        pl.when(failing & (pl.col("type") == "XidCriticalError"))
        .then(pl.concat_str(pl.col("reason"), pl.col("message"), ignore_nulls=True).str.extract(r'"([0-9]+)":true', 1)),
        nvsentinel.field("1"),
        nvsentinel.field("2"),
    ).cast(pl.Int32, strict=False)
    condition_gpu = pl.when(condition_xid.is_not_null()).then(pl.col("message"))
    kind = (
        pl.when(is_conditions)
        .then(
            pl.when((pl.col("type") == "MemoryPressure") & (pl.col("status") == "True"))
            .then(pl.lit("memory_pressure"))
            .when(condition_xid.is_not_null())
            .then(pl.lit("xid"))
            .otherwise(pl.lit("log"))
        )
        .when(is_top | is_generic | is_node_table)
        .then(pl.lit("log"))
        .when(is_pods)
        .then(
            pl.when(pl.col("status") == "Evicted")
            .then(pl.lit("eviction"))
            # "Init:OOMKilled": an init container's.
            .when(pl.col("status").str.strip_prefix("Init:") == "OOMKilled")
            .then(pl.lit("container_oomkilled"))
            .otherwise(pl.lit("log"))
        )
        .otherwise(event_kind(pl.col("reason").fill_null(""), message))
    )
    when_text = pl.col("when_text")
    # Struct columns are built once here: an expression is evaluated once per field read.
    parts = cells.with_columns(
        when_text=pl.coalesce("transition", "last_seen", "first_seen", "age"),
        object_ref=pl.col("object").str.extract_groups(r"^(?<kind>[0-9A-Za-z_.-]+)/(?<name>.+)$"),
        evicted=eviction_fields(message.fill_null("")),
        victim=oom_victim(message.fill_null("")),
        insufficient=insufficient_resources(message),
        message_pod=message.str.extract_groups(_MESSAGE_POD),
        assigned=pl.when(message.str.starts_with("Successfully assigned ")).then(message.str.extract_groups(_ASSIGNED)),
        marked=message.str.extract_groups(_MARKED_POD),
    )
    parts = parts.with_columns(
        ts=map_distinct(
            parts["when_text"],
            lambda text: pl.coalesce(timeutil.rfc1123_to_utc(text), timeutil.iso_to_utc(text.str.replace(_GO_TIME_ZONE_NAME, "$1"), tz)),
        )
    )
    object_ref, evicted, victim, message_pod = pl.col("object_ref").struct, pl.col("evicted"), pl.col("victim"), pl.col("message_pod").struct
    marked = pl.col("marked").struct
    bare_object = pl.when(~pl.col("object").str.contains("/", literal=True)).then(pl.col("object"))
    object_kind = pl.coalesce(
        object_ref.field("kind").str.to_lowercase(),
        pl.col("object_kind").str.to_lowercase(),
        pl.when(bare_object.is_not_null() & pl.col("reason").is_in(_POD_EVENT_REASONS)).then(pl.lit("pod")),
    )
    object_name = pl.coalesce(object_ref.field("name"), bare_object, pl.col("name").str.replace(r"\.[0-9a-f]{10,}$", ""))
    # "pod/egg-<id here>": a name an author replaced with a placeholder names no pod or node.
    object_name = pl.when(~object_name.str.contains("<", literal=True)).then(object_name)
    # "kernel-monitor, <node>": a placeholder an author put for the name is no host. A scheduler reports as
    # "<component>, <component>-<its own host>" (`-o wide`): an instance of it, not the node of the event.
    source = pl.col("source").str.extract_groups(r"^\{?(?<component>[0-9A-Za-z_-]+),? (?<host>[^\s{}<>]+)\}?$").struct
    source_host = pl.when(~source.field("host").str.starts_with(pl.format("{}-", source.field("component")))).then(source.field("host"))
    # A node name has no spaces: a cell that runs on past it is a row whose redacted IP pushed the columns right.
    # A pod not yet scheduled shows "<none>" there: no host.
    node = pl.col("node").str.extract(r"^([^\s<>]+)", 1)
    # A describe pod's Events table is its one pod's: the Scheduled row names it, and the node whose kubelet
    # reports the table's other rows, for a table pasted without the describe fields above it.
    assigned = pl.col("assigned").struct
    node_status = message.str.extract(_NODE_STATUS, 1)

    def table_assigned(field: str) -> pl.Expr:
        return pl.when(is_describe_events).then(assigned.field(field).drop_nulls().first().over("table"))

    named_namespace = pl.coalesce(
        "namespace", "doc_namespace", "prompt_namespace", table_assigned("namespace"), message_pod.field("namespace"), marked.field("namespace"),
        pl.when(assigned.field("pod") == object_name).then(assigned.field("namespace")),
        pl.when(object_name.is_null()).then(assigned.field("namespace")),
    )

    return (
        parts.join(docs, on="doc", how="left")
        .with_columns(kind=kind)
        .select(
            "line",
            "kind",
            "ts",
            n_lines=pl.lit(1, pl.Int32),
            ts_raw=pl.when(pl.col("ts").is_not_null()).then(when_text),
            ts_quality=pl.when(pl.col("ts").is_not_null()).then(pl.lit("exact")).otherwise(pl.lit("missing")),
            format=pl.when(is_conditions)
            .then(pl.lit("describe_conditions"))
            .when(is_pods)
            .then(pl.lit("get_pods"))
            .when(is_describe_events)
            .then(pl.lit("describe_events"))
            .when(is_top_node)
            .then(pl.lit("top_nodes"))
            .when(is_top)
            .then(pl.lit("top_pods"))
            .when(is_nodes)
            .then(pl.lit("get_nodes"))
            .when(is_generic)
            .then(pl.lit("get_table"))
            .when(is_node_table)
            .then(pl.lit("describe_node_table"))
            .otherwise(pl.lit("get_events")),
            severity=pl.when(condition_xid.is_not_null()).then(_xid.catalog_severity(condition_xid))
            .when(is_conditions).then(_condition_severity(pl.col("type"), pl.col("status")))
            .when(is_pods).then(_pod_status_severity(pl.col("status")))
            .when(is_generic).then(pl.when(pl.col("status").str.contains(_FAILED_STATUS)).then(pl.lit("error")))
            .when(is_event).then(pl.coalesce(raised_severity(pl.col("reason"), message), by_type))
            .otherwise(by_type),
            # An event recorded without a message (k3s' second "Starting" of a node) has an empty MESSAGE cell: the
            # message is empty, not the row; a table without that column (pods, top) keeps its row as the message.
            # `kubectl describe` prints such an event's row with no Message at all: its reason is all it says.
            message=pl.coalesce(
                pl.when(is_describe_events & (message.fill_null("") == "")).then(pl.col("reason")),
                message,
                pl.when(is_event).then(pl.lit("")),
                pl.col("text").str.strip_chars(),
            ),
            host=pl.coalesce(
                pl.when(object_kind == "node").then(object_name),
                pl.when(is_top_node | is_nodes).then(pl.col("name")),
                source_host,
                pl.when(pl.col("source") == "kubelet").then(table_assigned("node")),
                # The kubelet's node status events name their node ("Node test2 status is now: NodeHasDiskPressure"), and
                # so the node of a describe node's Events table, whose kubelet rows are all that node's.
                node_status,
                pl.when(is_describe_events & (pl.col("source") == "kubelet")).then(node_status.drop_nulls().first().over("table")),
                node,
                pl.col("doc_host"),
                "prompt_node",
            ),
            pod=pl.coalesce(
                node_table_pod,
                pl.when(object_kind == "pod").then(object_name),
                top_pod,
                pl.when(is_pods).then(pl.col("name").str.strip_prefix("pod/")),
                pl.col("doc_pod"),
                # A describe pod's Events, pasted under its command without the header fields.
                pl.when(is_describe_events).then(pl.col("prompt_pod")),
                table_assigned("pod"),
                message_pod.field("pod"),
                marked.field("pod"),
                # A table without the event's object (custom columns): the Scheduled event names the pod it bound.
                pl.when(object_name.is_null()).then(assigned.field("pod")),
            ),
            namespace=pl.coalesce(named_namespace, _one_namespace(named_namespace, is_event & ~is_describe_events)),
            pod_uid=message_pod.field("pod_uid"),
            container=pl.coalesce(
                pl.when(is_top & pl.col("top_pod").is_not_null()).then(pl.col("name")),
                pl.col("subobject").str.extract(r"containers\{([^}]+)\}", 1), evicted.struct.field("container"), message_container(message)
            ),
            container_id=message.str.extract(_KILLING_CONTAINER_ID, 1),
            pid=victim.struct.field("pid"),
            process=victim.struct.field("process"),
            rss_bytes=victim.struct.field("rss_bytes"),
            xid=condition_xid,
            gpu_index=condition_gpu.str.extract(_CONDITION_GPU, 1).cast(pl.Int32, strict=False),
            gpu_uuid=condition_gpu.str.extract(_CONDITION_UUID, 1),
            pci_bus=condition_gpu.str.extract(_CONDITION_PCI, 1),
            mem_used_bytes=pl.coalesce(evicted.struct.field("used_bytes"), pl.when(is_top).then(quantity_bytes(pl.col("memory")))),
            mem_requested_bytes=evicted.struct.field("requested_bytes"),
            attrs=attrs_json(
                {
                    "reason": pl.col("reason"),
                    "event_type": pl.when(~is_conditions & ~is_generic).then(pl.col("type")),
                    # A resource's own TYPE column (a NodeClaim's instance type) is no event's type.
                    "type": pl.when(is_generic).then(pl.col("type")),
                    "name": pl.when(is_generic).then(pl.col("name")),
                    "condition": pl.when(is_conditions).then(pl.col("type")),
                    "status": pl.col("status"),
                    # (custom-columns prints an unset field, a Scheduled event's .lastTimestamp, as "<nil>": no age.)
                    "age": pl.when(pl.col("ts").is_null() & (when_text != "<nil>")).then(when_text),
                    # describe's Age "23m (x4 over 2d5h)" (and `kubectl events`' LAST SEEN) holds the count kubectl get events shows apart.
                    "count": pl.coalesce(pl.col("count"), when_text.str.extract(r"\(x([0-9]+) over ", 1)).cast(pl.Int64, strict=False),
                    "object": pl.coalesce(
                        "object", "doc_workload", pl.when(is_generic).then(pl.format("{}/{}", "prompt_resource", "name"))
                    ),
                    "source": pl.col("source"),
                    "ready": pl.col("ready"),
                    "roles": pl.col("roles"),
                    "version": pl.col("version"),
                    "restarts": pl.col("restarts"),
                    # A FailedScheduling row's resource is the one no node had enough of (a GPU's first).
                    "resource": pl.coalesce(
                        evicted.struct.field("resource"), devices.struct.field("resource"), insufficient_resource(pl.col("insufficient"))
                    ),
                    "insufficient_resources": pl.col("insufficient"),
                    **scheduling_counts(message),
                    "threshold_bytes": evicted.struct.field("threshold_bytes"),
                    "available_bytes": evicted.struct.field("available_bytes"),
                    **storage_attrs(evicted),
                    "devices_requested": devices.struct.field("requested"),
                    "devices_available": devices.struct.field("available"),
                    "cpu": pl.when(is_top).then(pl.col("cpu").replace("<unknown>", None)),
                    "cpu_pct": _percent(pl.col("cpu_pct")),
                    "mem_pct": _percent(pl.col("memory_pct")),
                    "swap_bytes": quantity_bytes(pl.col("swap")),
                    "swap_pct": _percent(pl.col("swap_pct")),
                }
            ),
        )
    )


def _one_namespace(named: pl.Expr, is_get_event: pl.Expr) -> pl.Expr:
    """The namespace of a `kubectl get events` table printed without its NAMESPACE column (no -A): the command lists one
    namespace's events, so the one namespace its rows name (a Scheduled "Successfully assigned ns/pod", a BackOff's
    "in pod name_ns(uid)") is that of every row, the Job's or the pod's that names none."""
    table = ["command", "table"]
    found = named.drop_nulls()
    single = pl.col("namespace").is_null().all().over(table) & (found.n_unique().over(table) == 1)
    return pl.when(is_get_event & single).then(found.first().over(table))


def _condition_severity(condition: pl.Expr, status: pl.Expr) -> pl.Expr:
    """A node condition's severity: error for a node not Ready (or not heard from), warning for a pressure it reports."""
    return (
        pl.when((condition == "Ready") & status.is_in(["False", "Unknown"]))
        .then(pl.lit("error"))
        .when(condition.str.contains(_PROBLEM_CONDITION) & (status == "True"))
        .then(pl.lit("warning"))
    )


def _pod_status_severity(status: pl.Expr) -> pl.Expr:
    """A pods row's severity: error for a container that failed, warning for one in back-off, else none."""
    return (
        pl.when(status.str.contains(_FAILED_POD_STATUS))
        .then(pl.lit("error"))
        .when(status.str.contains(_BACKOFF_POD_STATUS))
        .then(pl.lit("warning"))
    )


def _percent(cell: pl.Expr) -> pl.Expr:
    """``kubectl top``'s "45%" as 45; "<unknown>" (no metrics for the node) as null."""
    return cell.str.strip_suffix("%").cast(pl.Int64, strict=False)


def _text_records(frame: pl.DataFrame, tz: str) -> pl.DataFrame:
    """Describe fields, container State blocks and free text, grouped into records."""
    text_lines = frame.filter(~pl.col("row") & pl.col("skip").is_null() & ~pl.col("inline_state"))
    if text_lines.height == 0:
        return pl.DataFrame()
    # A container's name line heads its block under "Containers:", or in an excerpt cut below that
    # heading where its first field ("Container ID:", "Image:") follows, deeper.
    below = ~_ends_file(text_lines)
    first_field = below & pl.col("key").shift(-1).is_in(_CONTAINER_FIRST_KEYS) & (pl.col("indent").shift(-1) > pl.col("indent"))
    heading = pl.col("container_line").is_not_null() & (pl.col("section").is_in(_CONTAINER_SECTIONS) | first_field.fill_null(False))
    grouped = (
        _state_blocks(text_lines.with_columns(container_heading=heading))
        .with_columns(
            container=pl.when(pl.col("container_heading") | pl.col("section").is_in(_CONTAINER_SECTIONS))
            .then(pl.col("container_line"))
            .forward_fill()
            .over(["doc", "section"]),
        )
        # A container's "Container ID:" comes before its State blocks, which take it; its "Limits:" and
        # "Requests:" blocks (a "memory:" line under each) come after them and are the container's own too.
        .with_columns(
            container_id=pl.when(pl.col("key") == "Container ID").then(pl.col("value")).forward_fill().over(["doc", "section", "container"]),
            memory_limit=_container_memory("Limits"),
            memory_request=_container_memory("Requests"),
        )
        .with_columns(record=_record_starts(text_lines).cum_sum())
    )
    owner = pl.col("key").forward_fill().over("record")
    records = (
        grouped.with_columns(owner=owner)
        .group_by("record", maintain_order=True)
        .agg(
            pl.col("line").first(),
            pl.len().cast(pl.Int32).alias("n_lines"),
            pl.col("text").str.join("\n").alias("message"),
            pl.col("doc", "prompt_namespace", "prompt_pod", "prompt_node", "container", "container_id", "section", "memory_limit", "memory_request").first(),
            pl.col("state_block").first().alias("is_state"),
            pl.col("key").first().alias("first_key"),
            _field("State").alias("state"),
            pl.coalesce(_field("Last State"), _field("Last Termination State")).alias("last_state"),
            _field("Reason").alias("reason"),
            _field("Exit Code").alias("exit_code"),
            _field("Started").alias("started"),
            _field("Finished").alias("finished"),
            _field("Status").alias("status"),
            pl.when(pl.col("owner") == "Message")
            .then(pl.coalesce(pl.when(pl.col("key").is_not_null()).then(pl.col("value")), pl.col("text")))
            .drop_nulls()
            .str.join("")
            .alias("status_message"),
        )
    )
    described = records.join(_doc_context(frame), on="doc", how="left").with_columns(
        described=pl.col("is_event").fill_null(False) & (pl.col("first_key") == "Name").fill_null(False)
    )
    parts = [_record_events(described.filter(~pl.col("described")), tz), _described_event(described.filter(pl.col("described")), tz)]
    # (With no rows at all, the describe records' empty frame keeps the columns.)
    return pl.concat([part for part in parts if part.height] or parts[:1], how="diagonal_relaxed")


def _inline_states(frame: pl.DataFrame, tz: str) -> pl.DataFrame:
    """Each terminated container state printed inline on a line (see _INLINE_TERMINATED): one event per state,
    the line's first carrying it. Its container is the status map's "name", else a template's "Container Name:"
    line above it; its pod the row's first cell where the command printed the name first, else the command's."""
    labelled = frame.with_columns(
        label=pl.when(pl.col("key") == "Container Name").then(pl.col("value")).forward_fill().over("command"),
    ).filter(pl.col("inline_state") & pl.col("skip").is_null())
    if labelled.height == 0:
        return pl.DataFrame()
    chunks = (
        labelled.with_columns(
            chunk=pl.col("text").str.replace_all(_CONTAINER_STATUS_START, f"${{1}}{_CHUNK_SEPARATOR}${{2}}").str.split(_CHUNK_SEPARATOR)
        )
        .explode("chunk")
        .with_columns(name=pl.col("chunk").str.extract(_INLINE_NAME, 1), state=pl.col("chunk").str.extract_all(_INLINE_TERMINATED))
        .explode("state", empty_as_null=True)
    )
    # A line cut before its state closes keeps one event of its own.
    has_state = pl.col("state").is_not_null()
    chunks = chunks.filter(has_state | (~has_state.any().over("line") & pl.col("line").is_first_distinct()))
    block = pl.col("state")

    def value(key: str) -> pl.Expr:
        # Go's "key:value" runs to the next " key:" (a 2015 reason held a space: "OOM Killed"); JSON's to its quote.
        return block.str.extract(rf'(?:\[|\{{|\s|,)"?{key}"?:"?([^"]*?)"?(?:,"|\s[A-Za-z]+:|[\]}}]|$)', 1)

    fields = chunks.with_columns(
        reason=value("reason"),
        exit_code=value("exitCode").cast(pl.Int32, strict=False),
        finished=value("finishedAt"),
        started=value("startedAt"),
        runtime_id=value("containerID"),
        state_field=block.str.extract(r'^"?([A-Za-z]*[Ss]tate)"?\s*[:=]', 1),
    ).with_columns(when_text=pl.coalesce("finished", "started"))
    fields = fields.with_columns(ts=timeutil.iso_to_utc(pl.col("when_text"), tz))
    field = pl.col("state_field").str.to_lowercase()
    oomkilled = pl.col("reason").str.replace(" ", "", literal=True) == "OOMKilled"
    return fields.select(
        "line",
        "exit_code",
        "ts",
        n_lines=pl.when(pl.col("line").is_first_distinct()).then(pl.lit(1, pl.Int32)).otherwise(pl.lit(0, pl.Int32)),
        kind=pl.when(oomkilled).then(pl.lit("container_oomkilled")).otherwise(pl.lit("log")),
        severity=pl.when(oomkilled).then(pl.lit("error")),
        ts_raw="when_text",
        ts_quality=pl.when(pl.col("ts").is_not_null()).then(pl.lit("exact")).otherwise(pl.lit("missing")),
        format=pl.lit("inline_state"),
        message=pl.coalesce(block, pl.col("text").str.strip_chars()),
        pod=pl.coalesce(pl.when(pl.col("name_first")).then(pl.col("text").str.extract(r"^\s*([a-z0-9][-a-z0-9.]*)\s", 1)), "prompt_pod"),
        namespace="prompt_namespace",
        container=pl.coalesce("name", "label"),
        container_id=pl.col("runtime_id").str.extract(_CONTAINER_ID, 1),
        attrs=attrs_json(
            {
                "reason": pl.col("reason"),
                "state_field": pl.when(field.str.contains("last")).then(pl.lit("lastState")).when(field.is_not_null()).then(pl.lit("state")),
                "started": pl.col("started"),
            }
        ),
    )


def _node_resources(frame: pl.DataFrame) -> pl.DataFrame:
    """A describe node's device-plugin resources that lost devices: one warning per extended resource whose Allocatable
    count is below its Capacity (the plugin marked devices unhealthy, or lost them), or per GPU resource counted 0. It
    is derived from the lines of the Capacity and Allocatable records (``n_lines`` 0), at the Allocatable entry."""
    section = pl.col("section")
    entries = frame.filter(section.is_in(_RESOURCE_SECTIONS) & (pl.col("indent") > 0) & pl.col("skip").is_null())
    if entries.height == 0:
        return pl.DataFrame()
    entry = pl.col("entry").struct
    counted = entries.with_columns(entry=pl.col("text").str.extract_groups(_RESOURCE_LINE)).with_columns(
        resource=entry.field("resource"), count=entry.field("count").cast(pl.Int64, strict=False)
    ).filter(pl.col("resource").is_not_null())

    def in_section(column: str, name: str) -> pl.Expr:
        return pl.col(column).filter(section == name).first()

    resources = counted.group_by("doc", "command", "resource", maintain_order=True).agg(
        capacity=in_section("count", "Capacity"),
        allocatable=in_section("count", "Allocatable"),
        line=pl.coalesce(in_section("line", "Allocatable"), in_section("line", "Capacity")),
        prompt_node=pl.col("prompt_node").first(),
    )
    resource, capacity, allocatable = pl.col("resource"), pl.col("capacity"), pl.col("allocatable")
    flagged = resources.filter(devices_lost(resource, capacity, allocatable)).join(_doc_context(frame), on="doc", how="left")
    return flagged.select(
        "line",
        kind=pl.lit("log"),
        n_lines=pl.lit(0, pl.Int32),
        ts_quality=pl.lit("missing"),
        format=pl.lit("describe_resources"),
        severity=pl.lit("warning"),
        message=devices_lost_message(resource, capacity, allocatable),
        host=pl.coalesce("doc_host", "prompt_node"),
        attrs=attrs_json({"resource": resource, "capacity": capacity, "allocatable": allocatable, "unavailable": capacity - allocatable}),
    )


def _container_memory(block: str) -> pl.Expr:
    """Bytes of the "memory:" line under a container's ``block`` ("Limits" or "Requests"), on all its lines."""
    owner = pl.when(pl.col("key").is_not_null()).then(pl.col("key")).forward_fill().over(["doc", "section", "container"])
    memory = pl.when(pl.col("text").str.contains("memory:", literal=True)).then(pl.col("text").str.extract(rf"^\s+memory:\s+({QUANTITY})\s*$", 1))
    return quantity_bytes(pl.when(owner == block).then(memory)).max().over(["doc", "section", "container"])


def _field(key: str) -> pl.Expr:
    """Inside a record aggregation: the value of the record's first ``key:`` line."""
    return pl.col("value").filter(pl.col("key") == key).first()


def _state_blocks(lines: pl.DataFrame) -> pl.DataFrame:
    """Flag the lines of each container State / Last State block (the key line and its deeper lines)."""
    state_line = pl.col("key").is_in(_STATE_KEYS).fill_null(False)
    block = (state_line | starts_file(lines)).cum_sum()
    state_indent = pl.col("_state_indent")
    # A paste that collapsed the alignment (a wiki, a blog) leaves a state's fields at its own indent: a field
    # only a state has (no container field is named so) still belongs to it.
    own_field = (pl.col("indent") == state_indent) & pl.col("key").is_in(_STATE_FIELDS).fill_null(False)
    outside = ~state_line & (pl.col("indent") <= state_indent) & ~own_field & ~pl.col("state_continued")
    # kubectl prints a Message holding a newline as it is: the rest at column 0 ("…stderr: Auto-detected mode as
    # 'legacy'" / "nvidia-container-cli: initialization error: …"), then the state's next fields at their indent again.
    # Lines less indented than the state, right after its Message, are the Message's where the next line that is not
    # is one of the state's fields (or the container's next State line, at the state's indent). A section ("Events:",
    # "Volumes:", "Name:") or a container's name line is never a message's.
    field_line = ((pl.col("indent") > state_indent) | own_field).fill_null(False)
    broken = (
        (pl.col("indent") < state_indent).fill_null(False)
        & ~((pl.col("indent") == 0) & pl.col("key").is_in(_SECTION_KEYS)).fill_null(False)
        & pl.col("container_line").is_null()
    )
    resumes = (field_line & pl.col("key").is_in(_STATE_FIELDS)).fill_null(False) | (
        state_line & (pl.col("indent") == state_indent.shift(1)).fill_null(False)
    )
    after_key = pl.when(~broken & pl.col("key").is_not_null()).then(pl.col("key"))
    # The lines around are the file's next ones (no line between them dropped, none of another file).
    line_of_row = pl.col("line") - pl.int_range(pl.len())
    continued = (
        broken
        & (forward_fill_within(after_key, pl.col("block")) == "Message").fill_null(False)
        & pl.when(~broken).then(resumes).backward_fill().fill_null(False)
        & (pl.when(~broken).then(line_of_row).backward_fill() == line_of_row).fill_null(False)
        & (pl.when(~broken).then(line_of_row).forward_fill() == line_of_row).fill_null(False)
    )
    # (Each a column before the window over blocks: the line below a block's last is the next block's.)
    return (
        lines.with_columns(block=block)
        .with_columns(_state_indent=forward_fill_within(pl.when(state_line).then(pl.col("indent")), pl.col("block")))
        .with_columns(state_continued=continued)
        .with_columns(
            state_block=state_indent.is_not_null() & (outside.fill_null(True).cum_sum().over("block") == 0),
            state_start=state_line,
        )
        .drop("_state_indent")
    )


def _record_starts(lines: pl.DataFrame) -> pl.Expr:
    line_gap = (pl.col("line").diff().fill_null(2) != 1) | starts_file(lines)
    section = (pl.col("indent") == 0) & pl.col("key").is_in(_SECTION_KEYS).fill_null(False)
    container = pl.col("container_heading")
    after_state = ~pl.col("state_block") & pl.col("state_block").shift(1).fill_null(False)
    # Free text outside describe output is one record per line, unless it is the output of
    # one shell command (a yq-printed message wrapped over lines).
    loose = pl.col("section").is_null() & pl.col("key").is_null() & pl.col("unprompted") & ~pl.col("state_continued")
    return line_gap | section | container | pl.col("state_start") | after_state | loose


def _record_events(records: pl.DataFrame, tz: str) -> pl.DataFrame:
    """Events of describe records (its document's context joined): container states, an eviction, a failed pod, text."""
    evicted_text = pl.coalesce(pl.when(pl.col("status_message") != "").then(pl.col("status_message")), pl.col("message"))
    # (a column read by name: nested in each of the six fields it feeds, the query took 40 ms to plan on a single record)
    evicted = pl.col("_evicted")
    is_state = pl.col("is_state")
    oomkilled = is_state & (pl.col("reason") == "OOMKilled")
    is_eviction = ~is_state & ((pl.col("reason") == "Evicted") | evicted_text.str.contains(EVICTION_MESSAGE, literal=True))
    # A pod in phase Failed (evicted, rejected by the kubelet's admission: UnexpectedAdmissionError,
    # OutOfnvidia.com/gpu, …) is over: none of its containers will run again.
    failed = ~is_state & (pl.col("status") == "Failed")
    # Its status Message alone (an excerpt cut below Status/Reason) says so too: "Pod was rejected: Allocate failed …".
    rejected = ~is_state & evicted_text.str.contains(ADMISSION_REJECTED).fill_null(False)
    # A container the runtime could not create (StartError, exit code 128; ContainerCannotRun under Docker): it never ran,
    # and will not until its node is fixed (nvidia-container-cli's hook failing, …).
    not_started = is_state & pl.col("reason").is_in(["StartError", "ContainerCannotRun"]).fill_null(False)
    devices = admission_devices(evicted_text)
    when_text = pl.when(is_state).then(pl.coalesce("finished", "started"))
    ts = pl.coalesce(timeutil.rfc1123_to_utc(when_text), timeutil.iso_to_utc(when_text, tz))
    return (
        records.with_columns(ts=ts, _evicted=eviction_fields(evicted_text))
        .select(
            "line",
            "n_lines",
            "message",
            "ts",
            kind=pl.when(oomkilled).then(pl.lit("container_oomkilled")).when(is_eviction).then(pl.lit("eviction")).otherwise(pl.lit("log")),
            # A container the kernel killed for memory is an error, as the same kill is in a pods row and in every source.
            severity=pl.when(failed | rejected | not_started | oomkilled).then(pl.lit("error")),
            ts_raw=pl.when(pl.col("ts").is_not_null()).then(when_text),
            ts_quality=pl.when(pl.col("ts").is_not_null()).then(pl.lit("exact")).otherwise(pl.lit("missing")),
            format=pl.when(is_state)
            .then(pl.lit("describe_state"))
            .when(pl.col("first_key").is_not_null() | pl.col("section").is_not_null())
            .then(pl.lit("describe"))
            .otherwise(pl.lit("text")),
            # A describe node cut above its Name: the node its command names.
            host=pl.coalesce("doc_host", "prompt_node"),
            pod=pl.coalesce(
                "doc_pod", "prompt_pod", pl.when(is_eviction).then(pl.col("message").str.extract(f"^{_EVICTED_ROW}The node", 1))
            ),
            namespace=pl.coalesce("doc_namespace", "prompt_namespace"),
            container=pl.coalesce(pl.col("container"), pl.when(is_eviction).then(evicted.struct.field("container"))),
            # The ID is the container's current instance: a Last State block is an earlier one.
            container_id=pl.when(is_state & pl.col("last_state").is_null()).then(pl.col("container_id").str.extract(_CONTAINER_ID, 1)),
            exit_code=pl.when(is_state).then(pl.col("exit_code").cast(pl.Int32, strict=False)),
            mem_used_bytes=pl.when(is_eviction).then(evicted.struct.field("used_bytes")),
            mem_requested_bytes=pl.when(is_eviction).then(evicted.struct.field("requested_bytes")).when(is_state).then(pl.col("memory_request")),
            attrs=attrs_json(
                {
                    "memory_limit_bytes": pl.when(is_state).then(pl.col("memory_limit")),
                    "state_field": pl.when(is_state).then(
                        pl.when(pl.col("state").is_not_null()).then(pl.lit("State")).otherwise(pl.lit("Last State"))
                    ),
                    "state": pl.coalesce("state", "last_state"),
                    "object": pl.col("doc_workload"),
                    "reason": pl.col("reason"),
                    "status": pl.col("status"),
                    "started": pl.when(is_state).then(pl.col("started")),
                    "start_time": pl.when(is_eviction | failed).then(pl.col("doc_start")),
                    "resource": pl.coalesce(pl.when(is_eviction).then(evicted.struct.field("resource")), devices.struct.field("resource")),
                    "threshold_bytes": pl.when(is_eviction).then(evicted.struct.field("threshold_bytes")),
                    "available_bytes": pl.when(is_eviction).then(evicted.struct.field("available_bytes")),
                    **storage_attrs(evicted, is_eviction),
                    "devices_requested": devices.struct.field("requested"),
                    "devices_available": devices.struct.field("available"),
                }
            ),
        )
    )


def _described_event(records: pl.DataFrame, tz: str) -> pl.DataFrame:
    """One event per Event object of `kubectl describe events` (its record from "Name:" on): the involved object's
    pod, namespace and container (its "Field Path"), the reporter's node, the last time it occurred, the Event's
    reason, type and count; the object kubectl named "<pod>.<hex>" is the Event, no pod."""
    message = pl.col("event_message").fill_null("")
    reason = pl.col("event_reason")
    involved_kind = pl.col("involved_kind")
    on_pod = involved_kind == "Pod"
    evicted = pl.col("_evicted")  # a column read by name, as in _record_events
    victim = oom_victim(message)
    insufficient = insufficient_resources(message)
    devices = admission_devices(message)
    kind = event_kind(reason.fill_null(""), message)
    return records.with_columns(ts=timeutil.iso_to_utc(pl.col("event_when"), tz), kind=kind, _evicted=eviction_fields(message)).select(
        "line",
        "n_lines",
        "ts",
        "kind",
        message=pl.coalesce("event_message", "message"),
        ts_raw=pl.when(pl.col("ts").is_not_null()).then(pl.col("event_when")),
        ts_quality=pl.when(pl.col("ts").is_not_null()).then(pl.lit("exact")).otherwise(pl.lit("missing")),
        format=pl.lit("describe_event"),
        severity=pl.coalesce(raised_severity(reason, message), pl.col("event_type").replace_strict(_SEVERITY_BY_TYPE, default=None)),
        host=pl.coalesce(pl.when(involved_kind == "Node").then(pl.col("involved_name")), "event_host", "prompt_node"),
        pod=pl.when(on_pod).then(pl.col("involved_name")),
        namespace=pl.coalesce("involved_namespace", "doc_namespace", "prompt_namespace"),
        pod_uid=pl.when(on_pod).then(pl.col("involved_uid")),
        container=pl.coalesce(
            pl.col("involved_path").str.extract(r"(?:initC|c|ephemeralC)ontainers\{([^}]+)\}", 1),
            pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("container")),
            message_container(message),
        ),
        pid=pl.when(pl.col("kind") == "oom_kill").then(victim.struct.field("pid")),
        process=pl.when(pl.col("kind") == "oom_kill").then(victim.struct.field("process")),
        rss_bytes=pl.when(pl.col("kind") == "oom_kill").then(victim.struct.field("rss_bytes")),
        mem_used_bytes=pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("used_bytes")),
        mem_requested_bytes=pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("requested_bytes")),
        attrs=attrs_json(
            {
                "reason": reason,
                "event_type": pl.col("event_type"),
                "count": pl.col("event_count").cast(pl.Int64, strict=False),
                "source": pl.col("event_component"),
                "object": pl.when(involved_kind.is_not_null()).then(pl.format("{}/{}", involved_kind.str.to_lowercase(), pl.col("involved_name"))),
                "resource": pl.coalesce(
                    pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("resource")),
                    devices.struct.field("resource"),
                    insufficient_resource(insufficient),
                ),
                "insufficient_resources": insufficient,
                **scheduling_counts(message),
                "threshold_bytes": pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("threshold_bytes")),
                "available_bytes": pl.when(pl.col("kind") == "eviction").then(evicted.struct.field("available_bytes")),
                **storage_attrs(evicted, pl.col("kind") == "eviction"),
                "devices_requested": devices.struct.field("requested"),
                "devices_available": devices.struct.field("available"),
            }
        ),
    )


SOURCE = register(
    Source(
        name="k8s",
        sniff=sniff,
        sniff_heads=sniff_heads,
        parse=parse,
        segmented=True,
        sniff_literals=(
            "LAST SEEN",
            # A `kubectl get` table's last column (before -o wide's).
            "  AGE",
            "LASTSEEN",
            "Reason",
            # A custom-columns events table's header (TIME  REASON  MSG …).
            "REASON",
            "READY",
            "Exit Code",
            "Start Time",
            "Restart Count",
            "State:",
            "Namespace:",
            "kind",
            "involvedObject",
            "containerStatuses",
            "terminated",
            EVICTION_MESSAGE,
            "Warning",
            "Normal",
            "kubectl",
            "oc ",
            # A tab-padded describe Events row before 1.3: its From cell ("{kubelet node}") and a tab.
            "}\t",
            # Headless pod rows and Conditions rows.
            "OOMKilled",
            "Evicted",
            "CrashLoopBackOff",
            "ContainerStatusUnknown",
            # 1.16's topology manager's reason, in words, on a pod row.
            "Affinity Error",
            "Running",
            "Completed",
            "Pressure",
            "Kubelet",
            "XidCriticalError",
            # Conditions rows of any type (NVSentinel's GpuAllWatch, …), with or without their header.
            "LastHeartbeatTime",
            # A describe node's resource blocks alone.
            "Capacity:",
            "Allocatable:",
            # A rejected pod's status message alone (a describe cut to it).
            "Pod was rejected: ",
            "Pod Allocate failed",
            "Pod Update plugin resources failed",
            # A Node object's status, pasted alone.
            "allocatable",
            " True ",
            " False ",
            "CPU(cores)",
            '"State"',
            '"status"',
            # A rejected pod's status fragment.
            "phase: Failed",
            '"phase": "Failed"',
            # A failed workload's (a Job's) status fragment.
            "type: Failed",
            # An events row cut to its REASON, OBJECT and MESSAGE.
            "  pod/",
            "  node/",
            # A container state's fields printed alone (`yq '…lastState.terminated'`, `jq` of it).
            "exitCode",
            '"type": "Failed"',
        ),
        formats=(
            "get_events",
            "describe_events",
            "describe_event",
            "describe_conditions",
            "describe_resources",
            "get_pods",
            "get_nodes",
            "get_table",
            "describe",
            "describe_state",
            "text",
            "event_json",
            "pod_json",
            "event_yaml",
            "pod_yaml",
            "pod_fragment",
            "workload_fragment",
            "inline_state",
            "container_json",
            "container_fragment",
            "top_pods",
            "top_nodes",
        ),
    )
)

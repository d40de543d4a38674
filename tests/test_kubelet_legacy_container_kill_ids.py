"""Container ids in the kubelet's pre-structured (before 1.21, dockershim era) lines about a container it stops.

kuberuntime named the container it kills by its URI (``Killing container "docker://<id>" with 10 second grace period``)
or by the ContainerID struct printed with %v (``Killing container {"docker" "<id>"}, but using 0 second grace period
override``); cAdvisor's fsHandler and the log reader name a container by its folder ``/var/lib/docker/containers/<id>``.
The id ties these lines to the runtime's own (dockerd's ``shim reaped`` id=<id>) and to a pod's container status.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import event_on_line, parse_fixture, parse_log

SAMPLE = "kubelet_journal_legacy_killing_container_docker_uri_01.log"
DOCKER_ID = "57602d1ebd70b498ea832e50c96a22e4591df2bf50b77689f13b924100b1f8de"
# The overlay2 layer folder the fsHandler line lists first: a layer, not the container.
LAYER_ID = "c32eae98e10e09216d65aa8fd3a5648b7f2f6f495fd89d8619b415f543ea448f"


def test_killing_container_by_uri_names_the_container_id() -> None:
    kill = event_on_line(parse_fixture(SAMPLE), 3)
    assert (kill["source"], kill["kind"], kill["severity"], kill["pid"]) == ("kubelet", "log", "info", 1517)
    assert kill["container_id"] == DOCKER_ID
    assert kill["ts_quality"] == "year_from_mtime"


def test_docker_container_folder_names_the_container_not_the_layer() -> None:
    events = parse_fixture(SAMPLE)
    assert events.filter(pl.col("line").is_in([1, 2]))["container_id"].to_list() == [DOCKER_ID, DOCKER_ID]
    assert LAYER_ID not in events["container_id"].drop_nulls().to_list()


def test_killing_container_struct_form_names_the_container_id() -> None:
    line = (
        'I0222 21:48:12.035408    3709 kuberuntime_container.go:547] Killing container {"docker" '
        '"9a4c58c575f7656066711faf414e1e4834d9d5013d19656279f36b57f2cf4029"}, but using 0 second grace period override'
    )
    event = parse_log(line + "\n").row(0, named=True)
    assert event["container_id"] == "9a4c58c575f7656066711faf414e1e4834d9d5013d19656279f36b57f2cf4029"


def test_killing_container_without_an_id_names_none() -> None:
    # A 1.21+ structured line names the container by containerName=, its id only in containerID=.
    line = (
        'I0516 18:34:49.885621    4052 kuberuntime_container.go:808] "Killing container with a grace period" '
        'pod="default/web-0" podUID="0b6d9d35-4b53-4f2b-9d0a-2f1f1d8f2c4e" containerName="web" gracePeriod=30'
    )
    event = parse_log(line + "\n").row(0, named=True)
    assert event["container_id"] is None
    assert event["container"] == "web"


@given(
    runtime=st.sampled_from(["docker", "containerd", "cri-o"]),
    container_id=st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),
    grace=st.integers(min_value=0, max_value=3600),
    struct_form=st.booleans(),
)
def test_either_kill_form_yields_the_id(runtime: str, container_id: str, grace: int, struct_form: bool) -> None:
    target = f'{{"{runtime}" "{container_id}"}}, but using {grace} second grace period override' if struct_form else (
        f'"{runtime}://{container_id}" with {grace} second grace period'
    )
    line = f"I0608 15:36:12.678326    1517 kuberuntime_container.go:581] Killing container {target}"
    event = parse_log(line + "\n").row(0, named=True)
    assert (event["source"], event["container_id"]) == ("kubelet", container_id)


# CRI-O's scheme has a hyphen (cri-o://<id>): the id is kept without it, as containerd's and docker's are.
CRIO_ID = "346b671912a63a98b310f0f06f0bcd9d9e3fab3b24a75246aed4921863b1d146"


def test_structured_kubelet_line_cuts_the_cri_o_scheme() -> None:
    line = (
        'I0516 18:34:49.885621    4052 kuberuntime_container.go:808] "Killing container with a grace period" '
        f'pod="ml/trainer-0" podUID="0b6d9d35-4b53-4f2b-9d0a-2f1f1d8f2c4e" containerName="main" containerID="cri-o://{CRIO_ID}" '
        "gracePeriod=30"
    )
    event = parse_log(line + "\n").row(0, named=True)
    assert (event["container"], event["container_id"]) == ("main", CRIO_ID)


def test_pod_status_object_cuts_the_cri_o_scheme() -> None:
    document = "\n".join([
        "apiVersion: v1",
        "kind: Pod",
        "metadata:",
        "  name: trainer-0",
        "  namespace: ml",
        "status:",
        "  containerStatuses:",
        f"  - containerID: cri-o://{CRIO_ID}",
        "    lastState:",
        "      terminated:",
        f"        containerID: cri-o://{CRIO_ID}",
        "        exitCode: 137",
        '        finishedAt: "2024-03-31T16:34:46Z"',
        "        reason: OOMKilled",
        "    name: main",
        "    restartCount: 1",
    ])
    events = parse_log(document + "\n").filter(pl.col("kind") == "container_oomkilled")
    assert events.select("pod", "container", "container_id", "exit_code").rows() == [("trainer-0", "main", CRIO_ID, 137)]

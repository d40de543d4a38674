"""Pipeline source: Ray's ActorDiedError (RayActorError before Ray 2.9), its actor's fields and the cause of its death."""

from __future__ import annotations

import json

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_source_pipeline import _parse, events_of


def _row(events: pl.DataFrame, line: int) -> dict:
    return events.filter(pl.col("line") == line).row(0, named=True)


def test_traceback_cut_above_an_actor_died_error_keeps_its_fields_and_cause() -> None:
    # hiyouga/EasyR1#324: the driver's traceback, its head cut, the fields indented by eight spaces, the owner's node gone.
    events = events_of("ray_actor_died_error_owner_node_crashed_cut_traceback_01.log")
    assert events.height == 1
    record = _row(events, 1)
    assert (record["kind"], record["severity"], record["n_lines"]) == ("process_killed", "error", 15)
    # the actor's pid and class, not the driver's
    assert (record["pid"], record["process"]) == (159258, "Runner")
    assert record["message"].splitlines()[-1].endswith("Worker exit detail: Owner's node has crashed.")
    attrs = json.loads(record["attrs"])
    assert (attrs["exc_type"], attrs["ray_exit_type"]) == ("ray.exceptions.ActorDiedError", "SYSTEM_ERROR")


def test_ray_task_error_over_a_ray_actor_error_names_the_dead_actor() -> None:
    # Agent-RL/ReCall#62: RayTaskError(RayActorError) from the main task (pid 10066); its tab-indented fields name the actor.
    events = events_of("ray_task_error_ray_actor_error_tab_fields_01.log")
    assert events.height == 1
    record = _row(events, 1)
    assert (record["kind"], record["n_lines"], record["pid"], record["process"]) == ("process_killed", 15, 12529, "WorkerDict")
    assert json.loads(record["attrs"])["exc_type"] == "ray.exceptions.RayActorError"


def test_actor_died_error_without_frames_is_one_record_and_hydras_hint_another() -> None:
    # zhaochenyang20/Awesome-ML-SYS-Tutorial#106: Hydra's job printed the error alone, then its hint after a blank line.
    events = events_of("ray_actor_died_error_hydra_worker_process_died_01.log")
    record = _row(events, 1)
    assert (record["kind"], record["n_lines"], record["pid"], record["process"]) == ("process_killed", 8, 12504, "WorkerDict")
    hint = _row(events, 10)
    assert (hint["kind"], hint["n_lines"]) == ("log", 1)


def test_an_actor_killed_on_purpose_is_a_traceback_with_its_fields() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "driver.py", line 9, in <module>\n'
        "    ray.get(actor.run.remote())\n"
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
        "\tclass_name: Runner\n"
        "\tactor_id: 28507c63735529c3265367b501000000\n"
        "\tpid: 4242\n"
        "The actor is dead because it was killed by `ray.kill`."
    )
    events = _parse(text)[0]
    assert events.height == 1
    record = events.row(0, named=True)
    assert (record["kind"], record["n_lines"]) == ("traceback", 8)


def test_class_name_under_another_line_stays_a_line_of_the_log() -> None:
    # an indented "class_name:" (a config dump) under anything but the actor's message opens no record with it
    events = _parse("model:\n  class_name: Linear\nThe actor is dead because nothing.")[0]
    assert events["n_lines"].to_list() == [1, 1, 1]


_FIELDS = ("actor_id: 53d808c488ec75070bf21ef601000000", "pid: {pid}", "name: 5SO3sRWorkerDict_0:1",
           "namespace: 9ef4bf7d-cc28-4c01-9a91-88151c3611a9", "ip: 10.166.157.101")


@settings(max_examples=40, deadline=None)
@given(
    indent=st.sampled_from(["\t", "  ", "        "]),
    optional=st.lists(st.booleans(), min_size=4, max_size=4),
    pid=st.integers(min_value=1, max_value=4_194_304),
    framed=st.booleans(),
    owner=st.booleans(),
)
def test_actor_died_message_is_one_record_whatever_fields_ray_printed(
    indent: str, optional: list[bool], pid: int, framed: bool, owner: bool
) -> None:
    # Ray prints class_name and actor_id always, then pid, name, namespace and ip where it knows them.
    fields = [_FIELDS[0]] + [field for field, shown in zip(_FIELDS[1:], optional, strict=True) if shown]
    cause = (
        "The actor is dead because its owner has died. Owner Id: 01000000ffffffffffffffffffffffffffffffffffffffffffffffff "
        "Owner Ip address: 10.0.0.1 Owner worker exit type: SYSTEM_ERROR Worker exit detail: Owner's node has crashed."
        if owner else
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
        "unexpectedly exits with a connection error code 2. End of file."
    )
    frames = ["Traceback (most recent call last):", '  File "main.py", line 3, in <module>', "    ray.get(ref)"] if framed else []
    lines = [
        "INFO 05-16 10:00:00 starting",
        *frames,
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        f"{indent}class_name: create_colocated_worker_cls.<locals>.WorkerDict",
        *(f"{indent}{field.format(pid=pid)}" for field in fields),
        cause,
        "step 2 done",
    ]
    events = _parse("\n".join(lines))[0]
    record = _row(events, 2)
    assert record["n_lines"] == len(lines) - 2
    assert (record["kind"], record["process"]) == ("process_killed", "WorkerDict")
    assert record["pid"] == (pid if optional[0] else None)
    assert _row(events, len(lines))["n_lines"] == 1

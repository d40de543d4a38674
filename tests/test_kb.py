"""The knowledge base: the bundled entries validate, broken files are reported by file and line,
and the rule half of matching names the right failure mode for typical incidents."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rca._kb_rules import Match, condition
from rca.errors import KnowledgeBaseError, SchemaError
from rca.kb import (
    UNKNOWN,
    best_matches,
    combine_scores,
    default_kb_path,
    describe_entry,
    draft_entry,
    draft_yaml,
    explain_match,
    load_kb,
    rule_matches,
    rule_scores,
    validate_kb,
)

BROKEN = Path(__file__).parent / "data" / "kb" / "broken"
GIB = 2**30

REQUIRED_IDS = {
    "container-memory-limit",
    "node-memory-overcommit",
    "eviction-memory-pressure",
    "sidecar-memory-contention",
    "dataloader-host-memory",
    "shm-exhaustion",
    "cuda-oom-batch-too-large",
    "gpu-memory-fragmentation",
    "kv-cache-growth",
    "gpu-memory-leak-autograd",
    "cuda-context-leak",
    "lora-adapter-leak",
    "gpu-contention-shared-device",
    "gpu-hardware-fault",
    "nccl-timeout-cascade",
    "jvm-heap-metaspace",
    "go-goroutine-leak",
    "host-memory-leak-process",
}

# One typical incident per failure mode, with the columns of rca.schema.INCIDENT_SCHEMA and
# the masked "kind: message" signature lines the correlation stage writes. The rules alone
# must give each one its own entry.
TYPICAL = {
    "container-memory-limit": {
        "anchor_kind": "oom_kill", "sources": ["kernel", "kubelet"], "oom_constraint": "memcg", "rss_over_limit": 0.99,
        "victim_was_grower": True, "pod": "train-llama-0", "container": "trainer", "process": "pt_main_thread",
        "signature": "oom_kill: Memory cgroup out of memory: Killed process <NUM> (<PROCESS>) total-vm:<NUM>, anon-rss:<NUM>\n"
                     "container_oomkilled: \"Generic (PLEG): container finished\" podID=\"<UUID>\" exitCode=<NUM>",
    },
    "node-memory-overcommit": {
        "anchor_kind": "oom_kill", "oom_constraint": "system", "pod": "dedup-corpus-7qv4l", "container": "worker",
        "signature": "oom_kill: Out of memory: Killed process <NUM> (<PROCESS>)\n"
                     "oom_kill: Got sys oom event: &{ContainerName:/ VictimContainerName:/kubepods/burstable/<NUM>/<NUM> Constraint:CONSTRAINT_NONE}\n"
                     "oom_kill: type: 'Warning' reason: 'SystemOOM' System OOM encountered, victim process: <NAME>, pid: <NUM>",
    },
    "eviction-memory-pressure": {
        "anchor_kind": "eviction", "kinds": ["eviction", "memory_pressure"], "sources": ["kubelet", "k8s"], "pod": "etl-7",
        "signature": "eviction: Evicted: The node was low on resource: memory. Threshold quantity: <SIZE>, available: <SIZE>\n"
                     "eviction: \"Eviction manager: must evict pod(s) to reclaim\" resourceName=<NAME>",
    },
    "sidecar-memory-contention": {
        "anchor_kind": "oom_kill", "oom_constraint": "memcg", "rss_over_limit": 0.99, "container": "fluent-bit", "process": "fluent-bit",
        "pod": "mistral-7b-dpo-master-0",
        "signature": "oom_kill: Memory cgroup out of memory: Killed process <NUM> (<PROCESS>)\n"
                     "container_oomkilled: \"Patch status for pod\" image=cr.fluentbit.io/fluent/fluent-bit:<NUM> reason=OOMKilled",
    },
    "dataloader-host-memory": {
        "anchor_kind": "dataloader_killed", "oom_constraint": "memcg", "rss_over_limit": 0.14, "process": "python", "gpu_util_period_s": 83.0,
        "signature": "dataloader_killed: RuntimeError: DataLoader worker (pid <NUM>) is killed by signal: Killed.\n"
                     "oom_kill: Memory cgroup out of memory: Killed process <NUM> (<PROCESS>)",
    },
    "shm-exhaustion": {
        "anchor_kind": "shm_error", "kinds": ["shm_error", "dataloader_killed"],
        "signature": "shm_error: RuntimeError: DataLoader worker (pid <NUM>) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory.",
    },
    "cuda-oom-batch-too-large": {
        "anchor_kind": "cuda_oom", "gpu_mem_growth_shape": "flat", "gpu_mem_peak_pct": 66.2, "requested_over_free": 248.0,
        "requested_bytes": 33 * GIB, "reserved_unallocated_bytes": 200 * 2**20, "gpu_processes": 1,
        "signature": "cuda_oom: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <NUM> GiB. GPU <NUM> has a total capacity of <NUM> GiB",
    },
    "gpu-memory-fragmentation": {
        "anchor_kind": "cuda_oom", "reserved_unallocated_frac": 0.4, "reserved_unallocated_bytes": 24 * GIB, "requested_bytes": 3 * GIB,
        "gpu_mem_growth_shape": "sawtooth", "requested_over_free": 20.0,
        "signature": "cuda_oom: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <NUM> GiB.",
    },
    "kv-cache-growth": {
        "anchor_kind": "traceback", "pod": "vllm-llama3-8b-4hjwhk4fjx", "process": "EngineCore_0", "gpu_mem_growth_shape": "steady_leak",
        "gpu_mem_peak_pct": 99.1, "requested_over_free": 9.9,
        "signature": "traceback: ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
    },
    "gpu-memory-leak-autograd": {
        "anchor_kind": "cuda_oom", "pod": "deberta-v3-rerank-xqv8r", "gpu_mem_growth_shape": "steady_leak", "gpu_mem_growth_sustained_s": 5400.0,
        "gpu_mem_growth_bytes_per_s": 5.2e6, "victim_was_grower": True, "gpu_processes": 1, "requested_bytes": 500 * 2**20,
        "reserved_unallocated_bytes": 20 * 2**20, "signature": "cuda_oom: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <NUM> MiB.",
    },
    "cuda-context-leak": {
        "anchor_kind": "cuda_oom", "gpu_processes": 17, "stale_gpu_bytes": 3 * GIB, "restart_count": 3, "gpu_mem_growth_shape": "steady_leak",
        "signature": "cuda_oom: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <NUM> GiB. Process <NUM> has <NUM> GiB memory in use. "
                     "Process <NUM> has <NUM> MiB memory in use. Process <NUM> has <NUM> MiB memory in use.",
    },
    "lora-adapter-leak": {
        "anchor_kind": "cuda_oom", "process": "EngineCore_0", "gpu_mem_growth_shape": "steady_leak", "gpu_mem_growth_sustained_s": 7200.0,
        "requested_over_free": 0.3, "signature": "cuda_oom: torch.OutOfMemoryError: CUDA out of memory while loading LoRA adapter <NAME>",
    },
    "gpu-contention-shared-device": {
        "anchor_kind": "cuda_oom", "gpu_pods": 2, "gpu_processes": 2, "stale_gpu_bytes": 0, "gpu_mem_growth_shape": "single_step",
        "signature": "cuda_oom: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <NUM> GiB. Process <NUM> has <NUM> GiB memory in use. "
                     "Process <NUM> has <NUM> GiB memory in use.",
    },
    "gpu-hardware-fault": {
        "anchor_kind": "xid", "xid_codes": [79], "signature": "xid: NVRM: Xid (PCI:<PCI>): <NUM>, pid=<VALUE>, GPU has fallen off the bus.",
    },
    "nccl-timeout-cascade": {
        "anchor_kind": "cuda_oom", "hosts": ["gpu-a", "gpu-b", "gpu-c"], "n_anchors": 12,
        "signature": "cuda_oom: CUDA out of memory. Tried to allocate <NUM> GiB.\n"
                     "nccl_timeout: [Rank <NUM>] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=<NUM>, OpType=ALLREDUCE)",
    },
    "jvm-heap-metaspace": {
        "anchor_kind": "log", "runtime_oom": "jvm_heap", "signature": "log: Terminating due to java.lang.OutOfMemoryError: Java heap space",
    },
    "go-goroutine-leak": {
        "anchor_kind": "log", "runtime_oom": "go_runtime", "signature": "log: fatal error: runtime: out of memory\nlog: goroutine <NUM> [running]:",
    },
    "host-memory-leak-process": {
        "anchor_kind": "oom_kill", "oom_constraint": "system", "victim_was_grower": True, "process": "telegraf",
        "signature": "oom_kill: Out of memory: Killed process <NUM> (<PROCESS>)\n"
                     "oom_kill: Got sys oom event: &{ContainerName:/ VictimContainerName:/system.slice/telegraf.service Constraint:CONSTRAINT_NONE}",
    },
}


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def incidents(rows: dict[str, dict]) -> pl.DataFrame:
    return pl.DataFrame([{"incident_id": key, **row} for key, row in rows.items()], infer_schema_length=None)


def best_of(frame: pl.DataFrame, kb) -> dict[str, str]:
    best = best_matches(rule_scores(frame, kb))
    return dict(zip(best["incident_id"], best["kb_id"], strict=True))


# --- the bundled knowledge base ------------------------------------------------------


def test_bundled_knowledge_base_validates_with_zero_errors() -> None:
    assert validate_kb() == []


def test_default_path_is_the_repository_knowledge_base() -> None:
    assert default_kb_path() == Path(__file__).resolve().parents[1] / "knowledge_base"


def test_bundled_knowledge_base_covers_every_failure_mode(kb) -> None:
    assert len(kb) >= 18
    assert REQUIRED_IDS <= set(kb.ids)


def test_bundled_checklists_are_distinct_and_some_are_shared(kb) -> None:
    resolved = {entry.id: tuple(kb.checklist(entry.id)) for entry in kb}
    assert len(set(resolved.values())) >= 13
    shared_by = {ref: [entry.id for entry in kb if entry.checklist_ref == ref] for ref in kb.checklists}
    assert all(len(users) >= 2 for users in shared_by.values()), shared_by
    assert set(kb.checklists) == {"cgroup-oom-triage", "node-memory-pressure", "gpu-memory-inventory", "pytorch-allocator-triage"}


def test_bundled_entries_are_complete(kb) -> None:
    for entry in kb:
        steps = kb.checklist(entry.id)
        assert len(entry.symptoms) >= 5, entry.id
        assert len(steps) >= 3, entry.id
        assert all(step.check.strip() and step.fix.strip() for step in steps), entry.id
        assert all(reference.url.startswith("https://") for reference in entry.references), entry.id
        assert len({reference.url for reference in entry.references}) == len(entry.references), entry.id
        assert any(rule.weight < 0 for rule in entry.signals) or entry.id in {"jvm-heap-metaspace", "go-goroutine-leak", "lora-adapter-leak", "nccl-timeout-cascade"}


def test_checklist_ref_resolves_shared_steps_first(kb) -> None:
    entry = kb["container-memory-limit"]
    steps = kb.checklist("container-memory-limit")
    shared = kb.checklists["cgroup-oom-triage"].steps
    assert entry.checklist_ref == "cgroup-oom-triage"
    assert steps[: len(shared)] == shared
    assert steps[len(shared) :] == entry.checklist
    assert kb.checklist("gpu-hardware-fault") == kb["gpu-hardware-fault"].checklist  # no ref: only its own steps


def test_hardware_checklist_names_the_real_tools(kb) -> None:
    text = describe_entry(kb, "gpu-hardware-fault")
    for needle in ("nvidia-smi -q -d ECC,ROW_REMAPPER", "PAGE_RETIREMENT", "kubectl drain", "dcgmi diag -r 3", "https://docs.nvidia.com/deploy/xid-errors/"):
        assert needle in text


def test_unknown_entry_id_suggests_the_close_one(kb) -> None:
    with pytest.raises(KnowledgeBaseError, match="did you mean gpu-hardware-fault"):
        kb["gpu-hardware-faults"]


def test_summary_and_symptom_tables(kb) -> None:
    summary = kb.summary()
    assert summary.height == len(kb)
    assert summary.filter(pl.col("id") == "eviction-memory-pressure")["shared_checklist"].to_list() == ["node-memory-pressure"]
    symptoms = kb.symptoms()
    assert symptoms.columns == ["kb_id", "text"]
    assert symptoms["kb_id"].n_unique() == len(kb)
    assert symptoms.height == sum(len(entry.symptoms) for entry in kb)


def test_describe_entry_lists_every_resolved_step(kb) -> None:
    text = describe_entry(kb, "eviction-memory-pressure")
    assert text.startswith("# Pod evicted by the kubelet under node memory pressure (`eviction-memory-pressure`)")
    assert len(re.findall(r"^\d+\. Check:$", text, re.MULTILINE)) == len(kb.checklist("eviction-memory-pressure"))
    assert "shared checklist `node-memory-pressure`" in text


# --- validation errors with file:line -----------------------------------------------------

EXPECTED_ERRORS = [
    ("unknown-key.yaml", 4, "symtoms: unknown key 'symtoms' (did you mean 'symptoms'?)"),
    ("unknown-key.yaml", 1, "missing required key 'symptoms'"),
    ("missing-field.yaml", 1, "missing required key 'root_cause'"),
    ("missing-field.yaml", 11, "checklist[0]: missing required key 'fix'"),
    ("bad-types.yaml", 8, "signals[0].weight: invalid value 'heavy'"),
    ("bad-types.yaml", 14, "signals[1].when.xid_codes.any: xid_codes holds integer values, not 'seventy-nine'"),
    ("bad-types.yaml", 21, "references[0].url"),
    ("bad-regex.yaml", 9, "signals[0].when.signature.regex: regex does not compile: look-around"),
    ("bad-regex.yaml", 12, "'regex' does not apply to rss_vs_limit (a number column"),
    ("bad-regex.yaml", 13, "unknown incident column 'gpu_temperature'"),
    ("dangling-ref.yaml", 11, "checklist_ref: no shared checklist 'no-such-checklist'"),
    ("duplicate-key.yaml", 4, "duplicate key 'title' (first written on line 2)"),
    ("syntax-error.yaml", 6, "YAML syntax error"),
    ("renamed.yaml", 1, "id: 'other-name' differs from the file name 'renamed.yaml'"),
    ("twice.yml", 1, "duplicate id 'twice'"),
    ("checklists/no-steps.yaml", 3, "steps: List should have at least 1 item"),
    ("bad-operator.yaml", 9, "signals[0].when.gpu_mem_peak_pct.gte: unknown key 'gte' (did you mean 'gt' or 'ge'?)"),
    ("bad-operator.yaml", 10, "signals[1]: a required rule needs a positive weight"),
    ("bad-any.yaml", 7, "signals[0]: a rule needs exactly one of 'when' (all tests hold) or 'any'"),
    ("bad-any.yaml", 15, "signals[1].any[1].gpu_temp: unknown incident column 'gpu_temp'"),
    ("bad-any.yaml", 16, "signals[1].any[2].reserved_unallocated_bytes.ge.column: 'signature' is not a numeric incident column"),
]


def test_broken_fixtures_report_file_line_and_reason() -> None:
    errors = validate_kb(BROKEN)
    for name, line, text in EXPECTED_ERRORS:
        prefix = f"{BROKEN / name}:{line}: "
        assert any(error.startswith(prefix) and text in error for error in errors), (name, line, text, errors)
    assert len(errors) == len(EXPECTED_ERRORS)
    places = [(match[1], int(match[2])) for match in (re.match(r"^(.*?):(\d+): ", error) for error in errors)]
    assert places == sorted(places)


def test_load_kb_raises_with_the_errors(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match=r"bad-regex\.yaml:9: .*look-around"):
        load_kb(BROKEN)
    with pytest.raises(KnowledgeBaseError, match="not a folder"):
        load_kb(tmp_path / "missing")
    assert validate_kb(tmp_path) == [f"{tmp_path}: no knowledge-base entries (*.yaml) in this folder"]


def test_a_single_fixed_entry_validates(tmp_path: Path) -> None:
    shutil.copy(BROKEN / "dangling-ref.yaml", tmp_path / "dangling-ref.yaml")
    (tmp_path / "checklists").mkdir()
    (tmp_path / "checklists" / "no-such-checklist.yaml").write_text(
        "id: no-such-checklist\ntitle: Shared steps\nsteps:\n  - check: kubectl get events -A\n    fix: Read them.\n"
    )
    assert validate_kb(tmp_path) == []
    kb = load_kb(tmp_path)
    assert [step.check for step in kb.checklist("dangling-ref")] == ["kubectl get events -A"]


# --- the rule grammar ----------------------------------------------------------------------

GRAMMAR_FRAME = pl.DataFrame(
    {
        "signature": ["CUDA out of memory", "Xid fallen off the bus", None],
        "rss_vs_limit": [0.5, 0.95, None],
        "kinds": [["cuda_oom", "log"], ["xid"], None],
        "xid_codes": [[], [79, 13], None],
        "victim_was_grower": [True, False, None],
        "jvm_marker": ["metaspace", "", None],
        "reserved_unallocated_bytes": [5 * GIB, GIB, 2 * GIB],
        "requested_bytes": [2 * GIB, 3 * GIB, None],
        "gpu_sharing_pods": [1, 3, None],  # the brief's name for gpu_pods
    }
)


@pytest.mark.parametrize(
    ("column", "test", "expected"),
    [
        ("signature", {"regex": "cuda OUT of"}, [True, False, False]),  # case-insensitive, searches anywhere
        ("signature", {"not_regex": "cuda"}, [False, True, False]),  # null is no evidence either way
        ("signature", {"in": ["Xid fallen off the bus"]}, [False, True, False]),
        ("signature", {"ne": "CUDA out of memory"}, [False, True, False]),
        ("rss_vs_limit", {"ge": 0.9}, [False, True, False]),
        ("rss_vs_limit", {"between": [0.4, 0.6]}, [True, False, False]),
        ("rss_vs_limit", {"gt": 0.4, "lt": 0.9}, [True, False, False]),
        ("rss_vs_limit", {"present": False}, [False, False, True]),
        ("kinds", "xid", [False, True, False]),  # bare value on a list column: contains
        ("kinds", ["xid", "cuda_oom"], [True, True, False]),  # bare list: contains any
        ("kinds", {"all": ["cuda_oom", "log"]}, [True, False, False]),
        ("kinds", {"none": ["xid"]}, [True, False, False]),
        ("xid_codes", {"len_ge": 1}, [False, True, False]),
        ("xid_codes", {"any": [79], "none": [48]}, [False, True, False]),
        ("victim_was_grower", False, [False, True, False]),
        ("jvm_marker", {"present": True}, [True, False, False]),  # an empty marker is absent
        ("jvm_marker", {"regex": "^meta"}, [True, False, False]),
        ("pod", {"present": False}, [False, False, False]),  # absent column: never satisfied
        ("reserved_unallocated_bytes", {"ge": {"column": "requested_bytes"}}, [True, False, False]),  # compared with another column
        ("reserved_unallocated_bytes", {"lt": {"column": "free_bytes"}}, [False, False, False]),  # ... which is absent
        ("gpu_pods", {"ge": 2}, [False, True, False]),  # reads its alias gpu_sharing_pods
        ("gpu_sharing_pods", {"ge": 2}, [False, True, False]),  # the alias itself
    ],
)
def test_rule_grammar_operators(column: str, test: object, expected: list[bool]) -> None:
    result = GRAMMAR_FRAME.select(condition(column, Match.model_validate(test), GRAMMAR_FRAME.schema).alias("hit"))
    assert result["hit"].to_list() == expected


def test_any_alternatives_and_column_references_in_a_knowledge_base(tmp_path: Path) -> None:
    (tmp_path / "cache-fragmentation.yaml").write_text(
        """id: cache-fragmentation
title: Fragmented cache
summary: The cache had the bytes, not in one piece.
symptoms: ["CUDA out of memory"]
signals:
  - name: a CUDA OOM
    weight: 1
    required: true
    any:
      - {anchor_kind: cuda_oom}
      - {signature: {regex: 'cuda out of memory'}}
  - name: free bytes in the cache exceed the request
    weight: 3
    when:
      reserved_unallocated_bytes: {ge: {column: requested_bytes}}
root_cause: Fragmentation.
checklist:
  - check: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py
    fix: Keep expandable segments on.
references:
  - {title: PyTorch CUDA semantics, url: "https://pytorch.org/docs/stable/notes/cuda.html"}
"""
    )
    kb = load_kb(tmp_path)
    assert kb["cache-fragmentation"].signals[0].conditions == "(anchor_kind = cuda_oom) or (signature ~ /cuda out of memory/)"
    frame = pl.DataFrame(
        {
            "incident_id": ["by-anchor", "by-text", "neither", "fragmented"],
            "anchor_kind": ["cuda_oom", "log", "oom_kill", "cuda_oom"],
            "signature": ["", "log: CUDA out of memory", "", ""],
            "reserved_unallocated_bytes": [GIB, None, 9 * GIB, 9 * GIB],
            "requested_bytes": [2 * GIB, GIB, GIB, GIB],
        }
    )
    scores = dict(rule_scores(frame, kb).select("incident_id", "rule_score").iter_rows())
    assert scores == {"by-anchor": 0.25, "by-text": 0.25, "neither": 0.0, "fragmented": 1.0}


# --- rule scoring -------------------------------------------------------------------------


def test_every_typical_incident_gets_its_own_entry(kb) -> None:
    assert best_of(incidents(TYPICAL), kb) == {mode: mode for mode in TYPICAL}


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"anchor_kind": "oom_kill", "kinds": ["oom_kill", "container_oomkilled"], "oom_constraint": "memcg", "rss_vs_limit": 1.0}, "container-memory-limit"),
        ({"anchor_kind": "cuda_oom", "kinds": ["cuda_oom"], "reserved_unallocated_frac": 0.4}, "gpu-memory-fragmentation"),
        ({"kinds": ["xid"], "xid_codes": [79]}, "gpu-hardware-fault"),
        ({"anchor_kind": "cuda_oom", "kinds": ["cuda_oom", "nccl_timeout"], "hosts": ["a", "b", "c", "d"]}, "nccl-timeout-cascade"),
        ({"anchor_kind": "cuda_oom", "kinds": ["cuda_oom"], "growth_shape": "steady_leak"}, "gpu-memory-leak-autograd"),
        # kubelet's OOMKilled alone, from a `kubectl describe pod` copied without the node's logs
        ({"anchor_kind": "container_oomkilled", "signature": "container_oomkilled: Last State: Terminated Reason: OOMKilled Exit Code: <NUM>",
          "oom_constraint": None, "cgroup_peak_over_limit": None}, "container-memory-limit"),
        # kubelet's SystemOOM events alone, from a `kubectl describe node` (the correlation stage reads the constraint off them)
        ({"anchor_kind": "oom_kill", "oom_constraint": "system", "signature": "oom_kill: System OOM encountered"}, "node-memory-overcommit"),
        # the container's cgroup files alone (no kernel log): OOM kills counted, peak at the limit
        ({"anchor_kind": "container_oomkilled", "cgroup_oom_kills": 1, "cgroup_peak_over_limit": 1.0, "cgroup_peak_bytes": 16 * GIB},
         "container-memory-limit"),
        # an inference server whose snapshots show the LoRA loader growing, with nothing about adapters in its logs
        ({"anchor_kind": "cuda_oom", "process": "EngineCore_0", "gpu_mem_growth_shape": "steady_leak", "gpu_mem_growth_sustained_s": 600.0,
          "snapshot_growth_site": "models.py:356:from_local_checkpoint",  # vLLM's LoRAModel loader, as snapshots name sites
          "snapshot_growth_bytes": 6 * GIB}, "lora-adapter-leak"),
        # a training loop whose snapshots show the loss kept with its graph
        ({"anchor_kind": "cuda_oom", "gpu_processes": 1, "snapshot_growth_site": "/workspace/train.py:274:train_step",
          "snapshot_growth_bytes": 3 * GIB}, "gpu-memory-leak-autograd"),
    ],
)
def test_brief_examples(kb, row: dict, expected: str) -> None:
    assert best_of(incidents({"x": row}), kb) == {"x": expected}


def test_rule_scores_shape_and_explanations(kb) -> None:
    scores = rule_scores(incidents(TYPICAL), kb)
    assert scores.columns == ["incident_id", "kb_id", "rule_score", "eligible", "matched_rules"]
    assert scores.height == len(TYPICAL) * len(kb)
    assert scores["incident_id"].to_list()[: len(kb)] == ["container-memory-limit"] * len(kb)
    assert scores["kb_id"].to_list()[: len(kb)] == kb.ids
    assert scores["rule_score"].is_between(0.0, 1.0).all()
    row = scores.filter((pl.col("incident_id") == "gpu-memory-fragmentation") & (pl.col("kb_id") == "gpu-memory-fragmentation")).row(0, named=True)
    assert row["eligible"] is True
    assert "the cache held more free bytes than the failed request (just not in one piece) (+4)" in row["matched_rules"]
    against = scores.filter((pl.col("incident_id") == "nccl-timeout-cascade") & (pl.col("kb_id") == "cuda-oom-batch-too-large")).row(0, named=True)
    assert "a rank's OOM that cascaded into NCCL timeouts has its own entry (-4)" in against["matched_rules"]


def test_explain_match_lists_every_rule_of_the_best_entries(kb) -> None:
    frame = incidents(TYPICAL)
    why = explain_match(frame, kb, "gpu-memory-fragmentation", top=2)
    entries = why["kb_id"].unique(maintain_order=True).to_list()
    assert len(entries) == 2 and entries[0] == "gpu-memory-fragmentation"
    best = why.filter(pl.col("kb_id") == "gpu-memory-fragmentation")
    assert best["rule"].to_list() == [rule.label for rule in kb["gpu-memory-fragmentation"].signals]
    positive = sum(rule.weight for rule in kb["gpu-memory-fragmentation"].signals if rule.weight > 0)
    assert best.filter(pl.col("matched"))["weight"].sum() == pytest.approx(best["rule_score"][0] * positive)
    assert explain_match(frame, kb, "no-such-incident").is_empty()


def test_cgroup_files_below_the_limit_count_against_the_container_limit(kb) -> None:
    at_limit = {"anchor_kind": "container_oomkilled", "signature": "container_oomkilled: reason=OOMKilled", "cgroup_peak_over_limit": 1.0,
                "cgroup_oom_kills": 2}
    below = {**at_limit, "cgroup_peak_over_limit": 0.4, "cgroup_oom_kills": 0}
    scores = rule_scores(incidents({"at": at_limit, "below": below}), kb).filter(pl.col("kb_id") == "container-memory-limit")
    assert dict(zip(scores["incident_id"], scores["rule_score"], strict=True)) == pytest.approx({"at": 9 / 10, "below": 0.0})


def test_a_failed_required_rule_zeroes_the_entry(kb) -> None:
    scores = rule_scores(incidents({"x": {"anchor_kind": "xid", "xid_codes": [79], "hosts": ["a", "b"], "signature": "xid: NVRM: Xid (PCI:<PCI>): <NUM>"}}), kb)
    cascade = scores.filter(pl.col("kb_id") == "nccl-timeout-cascade").row(0, named=True)
    assert cascade["eligible"] is False and cascade["rule_score"] == 0.0
    assert "several hosts involved (+3)" in cascade["matched_rules"]


def test_application_xids_are_not_hardware_faults(kb) -> None:
    scores = rule_scores(incidents({"app": {"anchor_kind": "xid", "kinds": ["xid"], "xid_codes": [13, 43]}, "hw": {"anchor_kind": "xid", "kinds": ["xid"], "xid_codes": [13, 48]}}), kb)
    hardware = dict(scores.filter(pl.col("kb_id") == "gpu-hardware-fault").select("incident_id", "rule_score").iter_rows())
    assert hardware["hw"] >= 0.8
    assert hardware["app"] < 0.1
    assert best_of(incidents({"app": {"anchor_kind": "xid", "xid_codes": [13, 43]}}), kb) == {"app": UNKNOWN}


def test_absent_columns_are_never_satisfied(kb) -> None:
    bare = pl.DataFrame({"incident_id": ["a", "b"]})
    scores = rule_scores(bare, kb)
    assert scores.height == 2 * len(kb)
    assert scores["rule_score"].max() == 0.0
    assert scores["matched_rules"].list.len().max() == 0
    # only some signal columns: the rules on the others are simply not satisfied
    partial = pl.DataFrame({"incident_id": ["p"], "kinds": [["xid"]], "xid_codes": [[79]]})
    assert best_of(partial, kb) == {"p": "gpu-hardware-fault"}
    matches = rule_matches(partial, kb).filter(pl.col("kb_id") == "host-memory-leak-process")
    assert matches.filter(pl.col("rule") == "not a Kubernetes pod")["matched"].to_list() == [False]  # pod: {present: false} on an absent column


def test_null_values_do_not_count_as_evidence(kb) -> None:
    frame = pl.DataFrame(
        {"incident_id": ["n"], "kinds": [["cuda_oom"]], "victim_was_grower": [None], "reserved_unallocated_frac": [None], "stale_gpu_bytes": [None]},
        schema={"incident_id": pl.String, "kinds": pl.List(pl.String), "victim_was_grower": pl.Boolean, "reserved_unallocated_frac": pl.Float64, "stale_gpu_bytes": pl.Int64},
    )
    null_columns = {"victim_was_grower", "reserved_unallocated_frac", "stale_gpu_bytes"}
    testing_nulls = {rule.label for entry in kb for rule in entry.signals if any(null_columns & set(tests) for tests in rule.alternatives)}
    matched = set(rule_matches(frame, kb).filter(pl.col("matched"))["rule"])
    assert "CUDA OOM in the incident" in matched
    assert not matched & testing_nulls  # neither "victim_was_grower: false" nor "stale_gpu_bytes < ..." holds on null


def test_columns_of_unexpected_types_are_read_leniently(kb) -> None:
    odd = pl.DataFrame({"incident_id": [1, 2], "kinds": ["cuda_oom", "xid"], "xid_codes": [None, "79"], "reserved_unallocated_frac": ["0.4", "n/a"]})
    assert best_of(odd, kb) == {"1": "gpu-memory-fragmentation", "2": "gpu-hardware-fault"}


def test_rule_scores_needs_an_incident_id(kb) -> None:
    with pytest.raises(SchemaError, match="incident_id"):
        rule_scores(pl.DataFrame({"kinds": [["xid"]]}), kb)


def test_empty_incidents_give_empty_typed_frames(kb) -> None:
    empty = pl.DataFrame(schema={"incident_id": pl.String, "kinds": pl.List(pl.String)})
    assert rule_scores(empty, kb).schema == pl.Schema(
        {"incident_id": pl.String, "kb_id": pl.String, "rule_score": pl.Float64, "eligible": pl.Boolean, "matched_rules": pl.List(pl.String)}
    )
    assert rule_matches(empty, kb).is_empty()


def test_rule_scores_does_not_modify_the_callers_frame(kb) -> None:
    frame = incidents(TYPICAL)
    before = frame.clone()
    rule_scores(frame, kb)
    assert frame.equals(before)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "kinds": st.none() | st.lists(st.sampled_from(["cuda_oom", "oom_kill", "xid", "nccl_timeout", "eviction", "log"]), max_size=4),
                "signature": st.none() | st.text(max_size=80),
                "xid_codes": st.none() | st.lists(st.integers(-(2**31), 2**31 - 1), max_size=3),
                "rss_vs_limit": st.none() | st.floats(allow_nan=True, allow_infinity=True),
                "victim_was_grower": st.none() | st.booleans(),
                "jvm_marker": st.none() | st.text(max_size=10),
            }
        ),
        min_size=1,
        max_size=8,
    )
)
def test_scores_stay_in_range_for_arbitrary_incidents(kb, rows: list[dict]) -> None:
    frame = pl.DataFrame([{"incident_id": str(number), **row} for number, row in enumerate(rows)], infer_schema_length=None)
    scores = rule_scores(frame, kb)
    assert scores.height == len(rows) * len(kb)
    assert scores["rule_score"].is_between(0.0, 1.0).all()


# --- combining with embedding similarity ----------------------------------------------------------


def test_combine_without_similarity_is_the_rule_score(kb) -> None:
    rules = rule_scores(incidents(TYPICAL), kb)
    combined = combine_scores(rules)
    assert combined["score"].to_list() == rules["rule_score"].to_list()


def test_similarity_breaks_a_rule_tie_but_not_a_failed_requirement(kb) -> None:
    rules = rule_scores(incidents({"x": {"kinds": ["cuda_oom"]}}), kb)
    similarity = pl.DataFrame(
        {"incident_id": ["x", "x"], "kb_id": ["gpu-memory-fragmentation", "kv-cache-growth"], "similarity": [0.8, 0.99]}
    )
    scores = combine_scores(rules, similarity, rule_weight=0.6)
    best = best_matches(scores, threshold=0.3).row(0, named=True)
    assert best["kb_id"] == "gpu-memory-fragmentation"  # kv-cache-growth requires inference evidence
    assert scores.filter(pl.col("kb_id") == "kv-cache-growth")["score"].to_list() == [0.0]
    fragmentation = rules.filter(pl.col("kb_id") == "gpu-memory-fragmentation")["rule_score"][0]
    assert best["kb_confidence"] == pytest.approx(0.6 * fragmentation + 0.4 * 0.8)
    with pytest.raises(ValueError, match="rule_weight"):
        combine_scores(rules, similarity, rule_weight=1.5)


def test_best_matches_reports_unknown_below_the_threshold(kb) -> None:
    frame = incidents({"clear": TYPICAL["gpu-hardware-fault"], "vague": {"kinds": ["log"], "signature": "something odd happened"}})
    scores = rule_scores(frame, kb)
    best = best_matches(scores, threshold=0.4)
    rows = {row["incident_id"]: row for row in best.iter_rows(named=True)}
    assert rows["clear"]["kb_id"] == "gpu-hardware-fault" and rows["clear"]["kb_confidence"] == 1.0
    second = scores.filter(pl.col("incident_id") == "clear").sort("rule_score", descending=True)["rule_score"][1]
    assert rows["clear"]["margin"] == pytest.approx(1.0 - second)
    assert rows["vague"]["kb_id"] == UNKNOWN and rows["vague"]["runner_up"] is None and rows["vague"]["kb_confidence"] == 0.0


# --- drafts for unknown modes ----------------------------------------------------------------------


UNMATCHED = {
    "incident_id": "inc-7f3a",
    "host": "gpu-node-4",
    "anchor_kind": "process_killed",
    "kinds": ["process_killed", "log"],
    "sources": ["pipeline"],
    "process": "ray::IDLE",
    "signature": "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\nMemory on the node was <SIZE> / <SIZE>",
    "restart_count": 2,
    "gpu_mem_peak_pct": None,
}


def test_draft_entry_is_filled_from_the_incident() -> None:
    draft = draft_entry(UNMATCHED)
    assert re.fullmatch(r"draft-process-killed-[0-9a-f]{8}", draft["id"])
    assert draft["title"] == "Unclassified process_killed in ray::IDLE"
    assert draft["symptoms"][0].startswith("ray.exceptions.OutOfMemoryError")
    assert draft["checklist"] == [] and draft["summary"] == "" and draft["root_cause"] == ""
    assert {"weight": 1, "any": [{"kinds": {"any": ["process_killed"]}}, {"signature": {"regex": "(^|\\n)(process_killed):"}}]} in draft["signals"]
    from_signature = draft_entry({"incident_id": "x", "signature": "cuda_oom: CUDA out of memory\nnccl_timeout: Watchdog caught\nlog: step 10"})
    assert from_signature["signals"] == [{"weight": 1, "any": [{"kinds": {"any": ["cuda_oom", "nccl_timeout"]}}, {"signature": {"regex": "(^|\\n)(cuda_oom|nccl_timeout):"}}]}]
    assert draft["evidence"] == {"incident_id": "inc-7f3a", "host": "gpu-node-4", "anchor_kind": "process_killed", "kinds": ["process_killed", "log"],
                                 "sources": ["pipeline"], "process": "ray::IDLE", "restart_count": 2}


def test_draft_yaml_validates_except_for_what_a_person_must_write(tmp_path: Path) -> None:
    text = draft_yaml(UNMATCHED)
    assert text.startswith("# Draft knowledge-base entry written by rca for incident inc-7f3a")
    data = yaml.safe_load(text)
    assert data == draft_entry(UNMATCHED)
    (tmp_path / f"{data['id']}.yaml").write_text(text)
    errors = validate_kb(tmp_path)
    missing = sorted(error.split(": ", 2)[1] for error in errors)
    assert missing == ["checklist", "references", "root_cause", "summary"], errors

"""``--redact``: secrets and personal data are masked in digests, exports and notebooks; the store keeps the originals."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import nbformat
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

import rca
from rca.cli import app
from rca.errors import RedactionError
from rca.redact import RULES, Redaction, mask_text, redacted_store, redaction
from rca.report import build_digest, postmortem

# One real-looking string per rule, and what it must become.
RULE_CASES = {
    "url_password": ("git clone https://oauth2:s3cr3t-Pa55@gitlab.example.com/ml/trainer.git",
                     "git clone https://oauth2:[redacted:password]@gitlab.example.com/ml/trainer.git"),
    "authorization_header": ('curl -H "Authorization: token 0123456789abcdef0123" https://api.example.com',
                             'curl -H "Authorization: token [redacted:token]" https://api.example.com'),
    "bearer_token": ("401 from registry: sent bearer dGhpcyBpcyBhIHRva2Vu== for pull",
                     "401 from registry: sent bearer [redacted:token] for pull"),
    "jwt": ("kubelet: using projected token eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlLWhlcmU for sa",
            "kubelet: using projected token [redacted:jwt] for sa"),
    "aws_access_key_id": ("botocore: found credentials AKIAIOSFODNN7EXAMPLE in environment",
                          "botocore: found credentials [redacted:aws_key] in environment"),
    "github_token": ("remote: Invalid username or token ghp_16C7e42F292c6912E7710c838347Ae178B4a.",
                     "remote: Invalid username or token [redacted:github_token]."),
    "huggingface_token": ("huggingface_hub: login with hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 failed",
                          "huggingface_hub: login with [redacted:hf_token] failed"),
    "secret_assignment": ("env: AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY api_key='sk-proj-abc123' max_tokens=512",
                          "env: AWS_SECRET_ACCESS_KEY=[redacted:secret] api_key='[redacted:secret]' max_tokens=512"),
    "email": ("job 4411 submitted by alice.smith+gpu@research.example.co.uk",
              "job 4411 submitted by [redacted:email]"),
    "ipv4": ("NCCL INFO Bootstrap : Using eth0:10.128.0.5<0> peer 192.168.1.254:29500",
             "NCCL INFO Bootstrap : Using eth0:[redacted:ipv4]<0> peer [redacted:ipv4]:29500"),
    "ipv6": ("NCCL INFO NET/Socket : Using [1]eth1:fe80::a00:27ff:fe4e:66a1%eth1<0> and 2001:0db8:85a3:0000:0000:8a2e:0370:7334",
             "NCCL INFO NET/Socket : Using [1]eth1:[redacted:ipv6]%eth1<0> and [redacted:ipv6]"),
}

# Log text that looks a little like a secret or an address but is neither: it must come through unchanged.
LOOKALIKES = [
    "terminate called after throwing an instance of 'c10::Error' in std::vector<at::Tensor>",
    "[ 7063.247407] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus. at 12:34:56",
    "eth0 link up, MAC 00:1a:2b:3c:4d:5e, driver 535.129.03, CUDA Version: 12.2",
    "vllm: max_tokens=512 max_num_batched_tokens: 8192 tokenizer=meta-llama/Llama-3-8B; Token indices sequence length is 9000",
    "GPU-5e2a9f3c-8d1b-4c6e-9a7f-2b3c4d5e6f70 image@sha256:0123abcd bearer-less request, Basic configuration loaded",
    "Successfully installed torch-2.3.0 user@localhost",
]


@pytest.mark.parametrize("name", [rule.name for rule in RULES])
def test_each_rule_masks_its_real_looking_string(name: str) -> None:
    text, expected = RULE_CASES[name]
    only = Redaction(tuple(rule for rule in RULES if rule.name == name))
    assert mask_text(text, only) == expected
    assert mask_text(text) == expected  # and the full rule set agrees on it


def test_every_rule_has_a_case() -> None:
    assert set(RULE_CASES) == {rule.name for rule in RULES}


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_are_left_alone(text: str) -> None:
    assert mask_text(text) == text


def test_a_url_password_is_masked_before_the_address_rules_see_it() -> None:
    assert mask_text("mongodb://bob:pa55@10.0.0.7:27017/db") == "mongodb://bob:[redacted:password]@[redacted:ipv4]:27017/db"


def test_frames_are_masked_column_by_column_keys_left_intact() -> None:
    frame = pl.DataFrame({
        "event_id": ["10.0.0.1:1:0"],
        "host": ["10.0.0.1"],
        "message": ["from bob@example.com"],
        "hosts": [["10.0.0.1", "gpu-node-2"]],
        "pid": [7],
    })
    original = frame.clone()
    masked = Redaction().frame(frame)
    expected = pl.DataFrame({
        "event_id": ["10.0.0.1:1:0"],
        "host": ["[redacted:ipv4]"],
        "message": ["from [redacted:email]"],
        "hosts": [["[redacted:ipv4]", "gpu-node-2"]],
        "pid": [7],
    })
    assert_frame_equal(masked, expected)
    assert_frame_equal(frame, original)  # the caller's frame is not modified


def test_categories_can_be_switched_off() -> None:
    text = "bob@example.com at 10.0.0.7"
    assert mask_text(text, redaction(disable=["emails"])) == "bob@example.com at [redacted:ipv4]"
    assert mask_text(text, redaction(disable=["emails", "ipv4"])) == text


def test_a_rules_file_disables_categories_and_adds_rules(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(textwrap.dedent("""\
        disable: [ipv4]
        rules:
          - name: corp_hostname
            category: hostnames
            pattern: '\\b[a-z0-9-]+\\.corp\\.example\\.com\\b'
            replacement: '[redacted:host]'
        """))
    loaded = redaction(rules)
    assert [rule.name for rule in loaded.rules][-1] == "corp_hostname"
    assert mask_text("gpu-7.corp.example.com at 10.0.0.7 for bob@example.com", loaded) == "[redacted:host] at 10.0.0.7 for [redacted:email]"
    assert mask_text("gpu-7.corp.example.com", redaction(rules, disable=["hostnames"])) == "gpu-7.corp.example.com"


@pytest.mark.parametrize("content,message", [
    ("disable: [emails, passports]\n", "unknown redaction category passports"),
    ("rules:\n  - name: broken\n    pattern: '(unclosed'\n    replacement: x\n", "redaction rule 'broken'"),
    ("rules:\n  - name: typo\n    patern: 'x'\n    replacement: y\n", "rules.0.patern"),
    ("disable: [emails\n", "is not valid YAML"),
    ("!!python/object/apply:os.system ['true']\n", "is not valid YAML"),
])
def test_a_bad_rules_file_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(content)
    with pytest.raises(RedactionError, match=re.escape(message)):
        redaction(rules)


def test_a_missing_rules_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RedactionError, match="cannot read the redaction rules"):
        redaction(tmp_path / "nope.yaml")


def test_parameters_round_trip() -> None:
    assert Redaction.from_parameters(json.loads(json.dumps(Redaction().as_parameters()))) == Redaction()


# --- through the store, the digest, the export and the notebooks ---------------------------------------------

HOST = "10.42.0.17"
SECRETS = ["alice.smith@example.com", "hunter2", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "10.42.0.17", "AKIAIOSFODNN7EXAMPLE"]
TRAIN_LOG = """\
2026-11-30 10:00:00,001 INFO train.py:12] job for alice.smith@example.com pulls https://trainer:hunter2@registry.example.com/v2/model
2026-11-30 10:00:01,001 INFO train.py:20] HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 rendezvous 10.42.0.17:29500
2026-11-30 10:00:05,001 ERROR train.py:88] rank 0 on 10.42.0.17 (key AKIAIOSFODNN7EXAMPLE, owner alice.smith@example.com) failed:
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free. \
Process 4242 has 78.00 GiB memory in use. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 6.00 GiB is reserved by PyTorch but unallocated.
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("redact")
    (root / "logs" / HOST).mkdir(parents=True)  # a host known by its address: it shows in every report
    (root / "logs" / HOST / "train.log").write_text(TRAIN_LOG)
    rca.ingest(root / "logs", root / "store", rca.IngestOptions(year=2026), workers=1)
    from rca.correlate import correlate_store

    correlate_store(rca.open_store(root / "store"))
    return root / "store"


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_the_store_keeps_the_originals_and_the_view_masks_them(store: Path) -> None:
    opened = rca.open_store(store)
    originals = "\n".join(opened.events()["message"])
    assert _leaks(originals) == SECRETS
    view = redacted_store(opened, Redaction())
    masked = view.events()
    assert _leaks("\n".join(masked["message"])) == []
    assert masked["event_id"].to_list() == opened.events()["event_id"].to_list()
    assert _leaks(json.dumps(view.incidents().to_dicts(), default=str)) == []
    assert _leaks("\n".join(opened.events()["message"])) == SECRETS  # reading through the view changed nothing


def test_a_redacted_view_refuses_to_write(store: Path) -> None:
    view = redacted_store(rca.open_store(store), Redaction())
    with pytest.raises(RedactionError, match="read-only"):
        view.writing()


def test_the_digest_is_masked_with_redact(store: Path) -> None:
    plain = build_digest(store, week="2026-W49")
    masked = build_digest(store, week="2026-W49", redact=Redaction())
    assert _leaks(plain.markdown) == _leaks(plain.html) == [HOST]  # the digest names hosts; messages only as masked templates
    assert _leaks(masked.markdown) == _leaks(masked.html) == []
    assert "on \\[redacted:ipv4\\]" in masked.markdown and "on [redacted:ipv4]" in masked.html


def test_cli_export_and_digest_with_redact(store: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    plain = runner.invoke(app, ["export", "--store", str(store), "--out", str(tmp_path / "plain.jsonl")])
    masked = runner.invoke(app, ["export", "--store", str(store), "--out", str(tmp_path / "masked.jsonl"), "--redact"])
    assert plain.exit_code == masked.exit_code == 0
    assert _leaks((tmp_path / "plain.jsonl").read_text())
    assert _leaks((tmp_path / "masked.jsonl").read_text()) == []
    skipped = runner.invoke(app, ["export", "--store", str(store), "--out", str(tmp_path / "emails.csv"), "--format", "csv",
                                  "--redact-skip", "emails"])
    assert skipped.exit_code == 0 and _leaks((tmp_path / "emails.csv").read_text()) == ["alice.smith@example.com"]
    digest = runner.invoke(app, ["digest", "--store", str(store), "--week", "2026-W49", "--out", str(tmp_path / "d"), "--redact"])
    assert digest.exit_code == 0
    assert [_leaks(path.read_text()) for path in sorted((tmp_path / "d").iterdir())] == [[], []]


def test_cli_bad_rules_file_is_a_message_not_a_traceback(store: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("disable: [passports]\n")
    result = CliRunner().invoke(app, ["export", "--store", str(store), "--out", str(tmp_path / "x.jsonl"), "--redact-rules", str(rules)])
    assert result.exit_code == 2
    assert "unknown redaction category passports" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "x.jsonl").exists()


def test_notebook_outputs_are_masked(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(owner)", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="owner alice.smith@example.com\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "10.42.0.17", "text/html": "<td>hunter2@x.example.org</td>",
                                                       "image/png": "iVBORw0KGgo="}, execution_count=1),
        nbformat.v4.new_output("error", ename="ValueError", evalue="bad host 10.42.0.17", traceback=["ValueError: 10.42.0.17"]),
    ])])
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    postmortem.mask_outputs(path, Redaction())
    outputs = nbformat.read(path, as_version=4).cells[0].outputs
    assert outputs[0].text == "owner [redacted:email]\n"
    assert dict(outputs[1].data) == {"text/plain": "[redacted:ipv4]", "text/html": "<td>[redacted:email]</td>", "image/png": "iVBORw0KGgo="}
    assert (outputs[2].evalue, outputs[2].traceback) == ("bad host [redacted:ipv4]", ["ValueError: [redacted:ipv4]"])
    assert nbformat.read(path, as_version=4).cells[0].source == "print(owner)"


def test_postmortem_with_redact_passes_the_rules_and_masks_what_the_notebook_printed(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}

    def fake_execute(name: str, out: Path, parameters: dict, *, kernel_name: str) -> Path:
        seen.update(parameters)
        printed = nbformat.v4.new_output("stream", name="stdout", text="raw row: alice.smith@example.com\n")
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("", outputs=[printed])]), out)
        return out

    monkeypatch.setattr(postmortem, "execute", fake_execute)
    incident = rca.open_store(store).incidents()["incident_id"][0]
    result = postmortem.run_postmortem(store, incident, tmp_path / "pm.ipynb", redact=redaction(disable=["ipv6"]))
    assert Redaction.from_parameters(seen["redact_rules"]) == redaction(disable=["ipv6"])
    assert nbformat.read(result.notebook, as_version=4).cells[0].outputs[0].text == "raw row: [redacted:email]\n"


def test_the_notebooks_read_through_the_masked_view() -> None:
    for name in (postmortem.POSTMORTEM, postmortem.WEEKLY_REVIEW):
        notebook = nbformat.read(postmortem.NOTEBOOKS / name, as_version=4)
        parameters = next(cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", []))
        assert "redact_rules = None" in parameters.source
        source = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
        assert "rca.redact.redacted_store(s, rca.redact.Redaction.from_parameters(redact_rules))" in source


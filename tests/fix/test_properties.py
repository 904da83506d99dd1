"""Properties of fix and migrate (issue #15): files with nothing to fix come out byte-identical, the Kueue
queue-name fix (rule of issue #14) moves the annotation, and a migrated PyTorchJob renders the
pods Trainer v1 would have run."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.cli.app import run
from jobsetctl.fix.command import run_fix
from jobsetctl.fix.yamledit import split_segments
from jobsetctl.validate import ValidateOptions
from tests.helpers import SAMPLES, UPSTREAM, dedent, requires_upstream


def _quiet(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(argv)
    return status, out.getvalue() + err.getvalue()


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _byte_identical_except_fixed(source: Path, tmp_path: Path, *flags: str) -> tuple[int, set[str]]:
    work = tmp_path / source.name
    shutil.copytree(source, work)
    for path in work.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    before = _tree_bytes(work)
    outcome = run_fix(ValidateOptions(paths=[str(work)]), include_info="--include-info" in flags)
    fixed_files = {str(Path(c.file).relative_to(work)) for c in outcome.changes if c.fixed}
    status, log = _quiet(["fix", "--write", *flags, str(work)])
    assert status == 0, log
    after = _tree_bytes(work)
    assert before.keys() == after.keys()
    changed = {name for name in before if before[name] != after[name]}
    assert changed == fixed_files, log
    return len(before) - len(changed), changed


def test_samples_without_a_fixable_finding_are_byte_identical(tmp_path: Path) -> None:
    identical, changed = _byte_identical_except_fixed(SAMPLES, tmp_path)
    assert identical > 200 and len(changed) <= 5


@requires_upstream
def test_upstream_files_are_byte_identical(tmp_path: Path) -> None:
    """Every upstream file is valid: ``fix`` changes none of them. The one note with a fix
    (startup-policy/startup-driver-ready.yaml uses the deprecated ``startupPolicyOrder: InOrder``,
    ``jobset-startup-in-order``, info) is applied only on request."""
    identical, changed = _byte_identical_except_fixed(UPSTREAM, tmp_path)
    assert changed == set() and identical > 100


@requires_upstream
def test_info_level_fixes_only_with_include_info(tmp_path: Path) -> None:
    _, changed = _byte_identical_except_fixed(UPSTREAM, tmp_path, "--include-info")
    assert changed == {"jobset/examples/startup-policy/startup-driver-ready.yaml"}


def test_without_include_info_the_note_is_counted_not_fixed(tmp_path: Path) -> None:
    case = Path(__file__).parent / "cases" / "fix-startup-in-order.in.yaml"
    work = tmp_path / "job.yaml"
    shutil.copyfile(case, work)
    status, log = _quiet(["fix", "--check", str(work)])
    assert status == 0
    assert log.endswith("would rewrite 0 files; 1 info-level finding has a fix with --include-info (1 file looked at)\n")
    assert _quiet(["fix", "--check", "--include-info", str(work)])[0] == 1


def test_rules_marks_fixes_that_need_include_info() -> None:
    import json

    _, text = _quiet(["rules"])
    [line] = [line for line in text.splitlines() if "replaced by dependsOn (status Ready)" in line]
    assert line.strip().startswith("fix (with --include-info): startupPolicy InOrder replaced by dependsOn")
    rules = {r["id"]: r for r in json.loads(_quiet(["rules", "-o", "json"])[1])}
    assert rules["jobset-startup-in-order"]["fix_needs_include_info"] is True
    assert rules["ref-gang-too-large"]["fix_needs_include_info"] is False


@given(st.lists(st.sampled_from(["---\n", "# c\n", "a: 1\n", "...\n", "b: [x, y]\n", "\n", "--- # x\n", "k: '---'\n"]),
                max_size=12))
def test_segments_cover_the_text_exactly(parts: list[str]) -> None:
    text = "".join(parts)
    assert "".join(s.text for s in split_segments(text)) == text


def test_segments_match_the_documents_libyaml_reads() -> None:
    text = dedent("""
        # head
        a: 1
        ---
        b: 2   # two
        --- {c: 3}
        ---
        d: '--- not a marker'
        """)
    segments = [s for s in split_segments(text) if s.has_content]
    assert [yaml.safe_load(s.text) for s in segments] == list(yaml.safe_load_all(text))


QUEUE_RULE = "kueue-queue-name-annotation"


def test_queue_name_annotation_moves_to_the_label(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(dedent("""
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata:
          name: queued
          annotations:
            kueue.x-k8s.io/queue-name: team-a   # should be a label
        spec:
          replicatedJobs:
          - name: w
            template:
              spec:
                template:
                  spec:
                    containers: [{name: w, image: busybox}]
        """))
    status, log = _quiet(["fix", "--write", str(path)])
    assert status == 0, log
    assert "  labels:\n    kueue.x-k8s.io/queue-name: team-a" in path.read_text()
    assert "annotations" not in path.read_text()
    assert _quiet(["fix", "--check", str(path)])[0] == 0


def test_queue_name_fix_moves_the_annotation(tmp_path: Path) -> None:
    """The fix itself, driven directly (runs whether or not the rule is registered yet)."""
    from jobsetctl.fix.registry import FixTarget, get_fix
    from jobsetctl.fix.yamledit import load_document

    [segment] = split_segments("metadata:\n  name: q\n  annotations: {kueue.x-k8s.io/queue-name: a}  # here\n")
    document = load_document(segment)
    fixer = get_fix(QUEUE_RULE)
    assert fixer is not None
    fixer.apply(FixTarget(document.root, (), ("metadata", "annotations", "kueue.x-k8s.io/queue-name"), "", QUEUE_RULE))
    document.changed = True
    assert document.render() == "metadata:\n  name: q\n  labels:\n    kueue.x-k8s.io/queue-name: a\n"


def test_ref_gang_message_shape_is_what_the_fix_reads() -> None:
    from jobsetctl.fix.fixes import _GANG_TOO_LARGE

    text = (SAMPLES / "invalid" / "ref-gang-too-large.yaml").read_text()
    assert "minCount: 8" in text
    import json

    _, out = _quiet(["validate", "-o", "json", str(SAMPLES / "invalid" / "ref-gang-too-large.yaml")])
    [message] = [d["message"] for d in json.loads(out[: out.rindex("}") + 1])["diagnostics"]]
    assert _GANG_TOO_LARGE.match(message)


# --- render of a migrated PyTorchJob vs Trainer v1 -------------------------------------------------------


def _quantities(resources: dict) -> dict:
    """Quantities as the API server prints them back (strings)."""
    return {kind: {name: str(value) for name, value in values.items()} for kind, values in resources.items()}


def _v1_pods(job: dict) -> list[dict]:
    """What the v1 operator runs for a PyTorchJob (kubeflow/training-operator pkg/controller.v1/pytorch/envvar.go
    setPodEnv, getTotalReplicas): a pod per replica, Master first; WORLD_SIZE = all replicas; RANK = index, +1
    for Workers."""
    specs = job["spec"]["pytorchReplicaSpecs"]
    total = sum(s.get("replicas", 1) for s in specs.values())
    pods = []
    for rtype in ("Master", "Worker"):
        if rtype not in specs:
            continue
        for index in range(specs[rtype].get("replicas", 1)):
            [container] = specs[rtype]["template"]["spec"]["containers"]
            rank = index + (1 if rtype == "Worker" else 0)
            pods.append({"image": container["image"], "command": container["command"],
                         "resources": _quantities(container.get("resources", {})), "RANK": str(rank),
                         "WORLD_SIZE": str(total)})
    return pods


def test_migrated_pytorchjob_renders_the_v1_pods(tmp_path: Path) -> None:
    case = Path(__file__).parent / "cases" / "migrate-trainer-pytorch.in.yaml"
    v1 = yaml.safe_load(case.read_text())
    work = tmp_path / "job.yaml"
    shutil.copyfile(case, work)
    assert _quiet(["migrate", "--to", "trainer-v2", "--write", str(work)])[0] == 0
    # Queued, the TrainJob would render suspended until Kueue admits it (issue #14): compare the pods unqueued.
    work.write_text(work.read_text().replace("kueue.x-k8s.io/queue-name: team-a", "queue: team-a"))
    status, out = _quiet(["render", "--pods", str(work)])
    assert status == 0
    pods = [o for o in yaml.safe_load_all(out[: out.rindex("\n")]) if isinstance(o, dict) and o.get("kind") == "Pod"]
    got = []
    for pod in pods:
        [container] = [c for c in pod["spec"]["containers"] if c["name"] == "node"]
        env = {e["name"]: e for e in container.get("env", [])}
        index = pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        rank = env["RANK"]
        assert rank["valueFrom"]["fieldRef"]["fieldPath"].endswith("['batch.kubernetes.io/job-completion-index']")
        got.append({"image": container["image"], "command": container["command"],
                    "resources": container.get("resources", {}), "RANK": index, "WORLD_SIZE": env["WORLD_SIZE"]["value"]})
        assert env["PET_NNODES"]["value"] == env["WORLD_SIZE"]["value"]
    key = lambda p: int(p["RANK"])  # noqa: E731
    assert sorted(got, key=key) == sorted(_v1_pods(v1), key=key)

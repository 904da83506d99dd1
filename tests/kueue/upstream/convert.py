"""Re-express Kueue's test tables as data: ``python -m tests.kueue.upstream.convert [MIRROR]``.

For each test function listed in :data:`TARGETS` it reads the Go source at the mirror's HEAD, evaluates
the function's top-level fixtures and every entry of its case table with :mod:`goeval`, and writes
``data/<file>__<Test>.json.gz``: the fixtures, and per case the fields it could evaluate plus, per field
it could not, the reason. The tests under ``tests/kueue/`` read these files; nothing here runs
Kueue's code, and the Go source itself is not copied (only the values of its tables).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.kueue.upstream import gosource as g
from tests.kueue.upstream.goeval import (
    Evaluator,
    FuncValue,
    GoStruct,
    GoTime,
    Unsupported,
    Wrapper,
    kueue_constants,
)

DATA = Path(__file__).parent / "data"
DEFAULT_MIRROR = "/work/.mirror/kubernetes-sigs+kueue/repo"

#: (file, test function, name of the case table)
TARGETS: list[tuple[str, str, str]] = [
    ("pkg/scheduler/scheduler_test.go", "TestSchedule", "cases"),
    ("pkg/scheduler/scheduler_fs_test.go", "TestScheduleForFairSharing", "cases"),
    ("pkg/scheduler/flavorassigner/flavorassigner_test.go", "TestAssignFlavors", "cases"),
    ("pkg/scheduler/preemption/preemption_test.go", "TestPreemption", "cases"),
    ("pkg/scheduler/preemption/preemption_fair_test.go", "TestFairPreemptions", "cases"),
    ("pkg/scheduler/preemption/preemption_hierarchical_test.go", "TestHierarchicalPreemptions", "cases"),
    ("pkg/scheduler/scheduler_tas_test.go", "TestScheduleForTAS", "cases"),
    ("pkg/scheduler/scheduler_tas_test.go", "TestScheduleForTASPreemption", "cases"),
    ("pkg/scheduler/scheduler_tas_test.go", "TestScheduleForTASCohorts", "cases"),
]


def git_show(mirror: str, path: str) -> str:
    return subprocess.run(["git", "-C", mirror, "show", f"HEAD:{path}"], check=True, capture_output=True,
                          text=True).stdout


def git_commit(mirror: str) -> str:
    return subprocess.run(["git", "-C", mirror, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def api_sources(mirror: str) -> list[str]:
    listing = subprocess.run(["git", "-C", mirror, "ls-tree", "--name-only", "HEAD", "apis/kueue/v1beta2/"],
                             check=True, capture_output=True, text=True).stdout.split()
    return [git_show(mirror, p) for p in listing if p.endswith(".go") and not p.endswith("_test.go")
            and "zz_generated" not in p]


def to_json(value: Any) -> Any:
    if isinstance(value, GoTime):
        return value.to_json()
    if isinstance(value, GoStruct):
        return {"$struct": value.type.split("{")[0], **{k: to_json(v) for k, v in value.fields.items()}}
    if isinstance(value, Wrapper):
        return to_json(value.obj)
    if isinstance(value, FuncValue):
        raise Unsupported("a Go function value")
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else json.dumps(to_json(k))): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return value
    return value


def convert(mirror: str, path: str, test: str, table: str, consts: dict[str, Any]) -> dict[str, Any]:
    text = git_show(mirror, path)
    function = g.functions(text)[test]
    evaluator = Evaluator(consts)
    evaluator.bind(g.globals_of(text).assignments)
    evaluator.bind([(n, e) for n, e in function.assignments if n != table])
    fixtures: dict[str, Any] = {}
    fixture_errors: dict[str, str] = {}
    table_expr = None
    for name, expr in function.assignments:
        if name == table:
            table_expr = expr
            continue
        try:
            fixtures[name] = to_json(evaluator.lookup(name))
        except (Unsupported, KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            fixture_errors[name] = f"{type(exc).__name__}: {exc}"
    if not isinstance(table_expr, g.Composite):
        raise SystemExit(f"{path} {test}: no case table {table!r}")
    cases: dict[str, Any] = {}
    for key, value in table_expr.elements:
        case_name = evaluator.eval(key)
        fields: dict[str, Any] = {}
        errors: dict[str, str] = {}
        assert isinstance(value, g.Composite)
        for field_key, field_value in value.elements:
            field = field_key.name if isinstance(field_key, g.Ident) else str(field_key)
            try:
                fields[field] = to_json(evaluator._value(field_value, None))
            except (Unsupported, KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                errors[field] = f"{type(exc).__name__}: {exc}"
        cases[str(case_name)] = {"line": value.line, "fields": fields, "errors": errors}
    return {"file": path, "test": test, "fixtures": fixtures, "fixtureErrors": fixture_errors, "cases": cases}


def main(argv: list[str]) -> int:
    mirror = argv[1] if len(argv) > 1 else DEFAULT_MIRROR
    consts = kueue_constants(api_sources(mirror))
    commit = git_commit(mirror)
    DATA.mkdir(exist_ok=True)
    for path, test, table in TARGETS:
        data = convert(mirror, path, test, table, consts)
        data["commit"] = commit
        out = DATA / f"{Path(path).stem}__{test}.json.gz"
        # mtime 0: the same tables give the same bytes.
        out.write_bytes(gzip.compress((json.dumps(data, indent=1, sort_keys=True) + "\n").encode(), 9, mtime=0))
        bad = sum(1 for c in data["cases"].values() if c["errors"])
        print(f"{out.name}: {len(data['cases'])} cases, {bad} with fields left unevaluated")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

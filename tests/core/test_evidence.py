"""Result files and the doc tables rendered from them (v22sdk/evidence.py, scripts/render_docs.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from v22sdk.evidence import (
    ROOT,
    markdown_table,
    provenance,
    read_result,
    render_doc,
    table_markers,
    value_markers,
    write_result,
)

TABLE = {"columns": ["variant", "exact"], "align": "lr", "rows": [["default", "0.90 ± 0.05"], ["a|b", "1"]]}


def test_markdown_table_escapes_and_aligns():
    assert markdown_table(TABLE) == ("| variant | exact |\n|---|---:|\n| default | 0.90 ± 0.05 |\n| a\\|b | 1 |\n")


def test_write_result_records_provenance_and_refuses_floats(tmp_path):
    p = write_result(
        tmp_path / "r.json", {"x": 1.5}, tables={"t": TABLE}, command="python x.py --seed 0", criterion={"margin": 0.01}
    )
    doc = read_result(p)
    assert doc["provenance"]["command"] == "python x.py --seed 0"
    assert doc["provenance"]["date"].endswith("Z") and doc["provenance"]["machine"]["cores"] >= 1
    assert doc["criterion"] == {"margin": 0.01} and doc["data"] == {"x": 1.5}
    assert doc["tables"]["t"]["rows"][0] == ["default", "0.90 ± 0.05"]
    with pytest.raises(ValueError, match="strings"):
        write_result(tmp_path / "f.json", {}, tables={"t": {"columns": ["a"], "rows": [[0.5]]}})
    with pytest.raises(ValueError, match="expected 2 cells"):
        write_result(tmp_path / "g.json", {}, tables={"t": {"columns": ["a", "b"], "rows": [["1"]]}})


def test_provenance_names_this_commit():
    prov = provenance(["python", "x.py"])
    assert prov["command"] == "python x.py"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert prov["commit"] == (head or None)


def test_render_rewrites_a_stale_table_and_refuses_a_missing_one(tmp_path):
    write_result(tmp_path / "results" / "r.json", {}, tables={"t": TABLE})
    doc = "intro\n<!-- table: results/r.json#t -->\n| old | table |\n<!-- /table -->\nafter\n"
    new = render_doc(doc, tmp_path)
    assert table_markers(new) == [("results/r.json", "t")]
    assert "| default | 0.90 ± 0.05 |" in new and "old" not in new and new.endswith("after\n")
    assert render_doc(new, tmp_path) == new  # rendering is idempotent
    example = "```\n<!-- table: results/missing.json#t -->\n<!-- /table -->\n```\n"
    assert render_doc(example + doc, tmp_path) == example + new  # a marker in a code block is an example
    assert table_markers(example) == []
    with pytest.raises(ValueError, match="no table 'u'"):
        render_doc(doc.replace("#t", "#u"), tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        render_doc(doc.replace("r.json", "missing.json"), tmp_path)


def test_render_rewrites_an_inline_value_and_refuses_a_missing_one(tmp_path):
    write_result(tmp_path / "results" / "r.json", {"x": 0.9286}, values={"exact": "0.929", "n": "42"})
    assert read_result(tmp_path / "results" / "r.json")["values"] == {"exact": "0.929", "n": "42"}
    doc = (
        "exact match <!-- value: results/r.json#exact -->0.93<!-- /value --> on "
        "<!-- value: results/r.json#n -->40<!-- /value --> inputs\n"
    )
    new = render_doc(doc, tmp_path)
    assert new == (
        "exact match <!-- value: results/r.json#exact -->0.929<!-- /value --> on "
        "<!-- value: results/r.json#n -->42<!-- /value --> inputs\n"
    )
    assert value_markers(new) == [("results/r.json", "exact"), ("results/r.json", "n")]
    assert render_doc(new, tmp_path) == new
    prov = render_doc(
        "<!-- value: results/r.json#provenance.date --><!-- /value --> "
        "<!-- value: results/r.json#provenance.command --><!-- /value -->",
        tmp_path,
    )
    assert read_result(tmp_path / "results" / "r.json")["provenance"]["date"][:10] in prov and "python" in prov
    with pytest.raises(ValueError, match="no value 'nope'"):
        render_doc(doc.replace("#n", "#nope"), tmp_path)
    # a marker that does not parse (a space in its name) is refused, not left with its figure
    with pytest.raises(ValueError, match="does not parse.*cpu_seconds.plugins list"):
        render_doc(
            doc + "took <!-- value: results/r.json#cpu_seconds.plugins list -->0.17<!-- /value --> s\n", tmp_path
        )
    with pytest.raises(ValueError, match="does not parse"):
        render_doc("<!-- table: results/r.json#t -->\n| a |\n", tmp_path)  # no closing marker
    with pytest.raises(ValueError, match="strings"):
        write_result(tmp_path / "v.json", {}, values={"x": 0.5})
    with pytest.raises(ValueError, match="one line"):
        write_result(tmp_path / "v.json", {}, values={"x": "a\nb"})


def test_every_doc_table_matches_its_result_file():
    """The committed docs are what their result files render to (run scripts/render_docs.py)."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_docs.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_result_file_is_well_formed():
    files = sorted((ROOT / "results").rglob("*.json")) if (ROOT / "results").is_dir() else []
    for f in files:
        doc = json.loads(f.read_text(encoding="utf-8"))
        prov = doc.get("provenance", {})
        assert prov.get("command") and prov.get("date") and "machine" in prov, f
        for table in doc.get("tables", {}).values():
            markdown_table(table)  # raises on a malformed table
        assert all(isinstance(v, str) for v in doc.get("values", {}).values()), f
        # the commit that wrote it is one of this repository's commits (the command can be rerun there)
        known = subprocess.run(
            ["git", "cat-file", "-e", f"{prov.get('commit')}^{{commit}}"], cwd=ROOT, capture_output=True
        )
        assert prov.get("commit") and known.returncode == 0, f"{f}: unknown commit {prov.get('commit')}"


def test_every_marker_in_the_docs_names_a_committed_result_file():
    """A doc cannot quote a table or value from a file that is not committed under results/."""
    import re

    tracked = set(
        subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    )
    for doc in sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]:
        text = doc.read_text(encoding="utf-8")
        for file, _ in table_markers(text) + value_markers(text):
            assert file in tracked, f"{doc.relative_to(ROOT)} quotes {file}, which is not committed"
        # an opening marker without its closing one would silently not render
        prose = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.MULTILINE | re.DOTALL)
        assert len(re.findall(r"<!-- (table|value): ", prose)) == len(table_markers(text) + value_markers(text)), doc


def _git_in(repo, *args):
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_a_run_records_the_commit_it_started_at_not_the_one_at_write(tmp_path, monkeypatch):
    """A commit made while a long run trains must not pass for the code the run measured."""
    import v22sdk.evidence as evidence

    repo = tmp_path / "repo"
    repo.mkdir()
    _git_in(repo, "init", "-q")
    (repo / "code.py").write_text("x = 1\n")
    _git_in(repo, "add", "code.py")
    _git_in(repo, "commit", "-q", "-m", "first")
    first = _git_in(repo, "rev-parse", "HEAD")
    monkeypatch.setattr(evidence, "ROOT", repo)
    monkeypatch.setattr(evidence, "_START", None)

    started = evidence.begin()
    assert started["commit"] == first and started["dirty"] is False
    (repo / "code.py").write_text("x = 2\n")  # the run goes on while the code changes and is committed
    _git_in(repo, "commit", "-q", "-am", "second")
    second = _git_in(repo, "rev-parse", "HEAD")
    (repo / "code.py").write_text("x = 3\n")  # and the tree is dirty when the result is written
    assert evidence.begin() == started  # a second call keeps the first snapshot

    prov = read_result(evidence.write_result(tmp_path / "r.json", {}, command="python long.py"))["provenance"]
    assert prov["commit"] == first and prov["dirty"] is False
    assert prov["commit_at_write"] == second and prov["dirty_at_write"] is True
    assert prov["started"] == started["date"] <= prov["date"]


def test_without_begin_the_commit_is_read_at_write(tmp_path, monkeypatch):
    import v22sdk.evidence as evidence

    repo = tmp_path / "repo"
    repo.mkdir()
    _git_in(repo, "init", "-q")
    (repo / "a").write_text("a\n")
    _git_in(repo, "add", "a")
    _git_in(repo, "commit", "-q", "-m", "only")
    monkeypatch.setattr(evidence, "ROOT", repo)
    monkeypatch.setattr(evidence, "_START", None)
    prov = evidence.provenance("python short.py")
    assert prov["commit"] == _git_in(repo, "rev-parse", "HEAD") and prov["dirty"] is False
    assert not {"started", "commit_at_write", "dirty_at_write"} & set(prov)


def test_add_values_derives_prose_figures_without_touching_the_measurement(tmp_path):
    from v22sdk.evidence import add_values

    p = write_result(
        tmp_path / "r.json",
        {"rate": 0.0572},
        tables={"t": TABLE},
        command="python measure.py",
        criterion={"target": 0.05},
    )
    before = read_result(p)
    add_values(p, {"rate": f"{before['data']['rate']:.1%}"}, command="python measure.py --from-result r.json")
    after = read_result(p)
    assert after["values"] == {"rate": "5.7%"}
    assert after["values_provenance"]["command"] == "python measure.py --from-result r.json"
    assert {k: after[k] for k in before} == before  # provenance, criterion, data and tables as measured
    add_values(p, {"rate": "5.72%"})  # deriving again replaces the values, not the measurement
    assert read_result(p)["values"] == {"rate": "5.72%"} and read_result(p)["provenance"] == before["provenance"]
    with pytest.raises(ValueError, match="one line"):
        add_values(p, {"rate": "a\nb"})
    (tmp_path / "bare.json").write_text("{}")
    with pytest.raises(ValueError, match="not a result file"):
        add_values(tmp_path / "bare.json", {"x": "1"})


@pytest.mark.parametrize(
    "script,result",
    [
        ("measure_confidence.py", "results/engine/confidence.json"),
        ("measure_storage.py", "results/engine/storage.json"),
        ("train_default.py", "results/engine/default-checkpoint.json"),
    ],
)
def test_derived_values_are_what_the_script_derives_from_the_committed_data(script, result, tmp_path):
    """The prose figures of these files were derived after the run (values_provenance): deriving
    them again from the committed data gives the committed values, and leaves the measurement alone."""
    import shutil

    committed = read_result(ROOT / result)
    copy = tmp_path / "r.json"
    shutil.copy(ROOT / result, copy)
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), "--from-result", str(copy)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    again = read_result(copy)
    assert again["values"] == committed["values"]
    assert {k: again[k] for k in ("provenance", "data", "tables")} == {
        k: committed[k] for k in ("provenance", "data", "tables")
    }


def test_a_value_can_quote_a_table_cell_by_row_and_column(tmp_path):
    """Prose that quotes a table's cell names it, so a rerun that changes the table changes the prose."""
    write_result(tmp_path / "results" / "r.json", {}, tables={"t": TABLE})
    doc = "exact <!-- value: results/r.json#tables.t[default][exact] -->0.80 ± 0.05<!-- /value --> here\n"
    new = render_doc(doc, tmp_path)
    assert new == "exact <!-- value: results/r.json#tables.t[default][exact] -->0.90 ± 0.05<!-- /value --> here\n"
    assert value_markers(new) == [("results/r.json", "tables.t[default][exact]")]
    two = {"columns": ["input", "batch", "ms"], "rows": [["image", "1", "7.6"], ["image", "32", "0.6"]]}
    write_result(tmp_path / "results" / "b.json", {}, tables={"infer": two})
    assert (
        render_doc("<!-- value: results/b.json#tables.infer[image|32][ms] --><!-- /value -->", tmp_path)
        == "<!-- value: results/b.json#tables.infer[image|32][ms] -->0.6<!-- /value -->"
    )
    with pytest.raises(ValueError, match="more than one row 'image'"):
        render_doc("<!-- value: results/b.json#tables.infer[image][ms] --><!-- /value -->", tmp_path)
    with pytest.raises(ValueError, match="no row 'other'.*rows: default; a\\|b"):
        render_doc(doc.replace("[default]", "[other]"), tmp_path)
    with pytest.raises(ValueError, match="no column 'wall'"):
        render_doc(doc.replace("[exact]", "[wall]"), tmp_path)
    with pytest.raises(ValueError, match="no table 'u'"):
        render_doc(doc.replace("tables.t", "tables.u"), tmp_path)

"""Tokens as Arrow tables, Parquet files, a torch Dataset and a Hugging Face dataset: bit-exact round trips.

Real tokens: the built-in text, vision and audio modalities on the bundled examples.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from v22sdk import InputError, TokenBatch, get_registry
from v22sdk.contract import OFFSET_FIELDS

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from v22sdk import _arrow  # noqa: E402
from v22sdk.tabular import (  # noqa: E402
    batches_from_arrow,
    batches_to_arrow,
    load_tokens,
    read_parquet,
    save_tokens,
    token_schema,
    write_parquet,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "v22sdk" / "engine" / "data" / "examples"


@pytest.fixture(scope="module")
def batches() -> list[TokenBatch]:
    reg = get_registry()
    text = reg.get_class("modalities", "text")().tokenize("因为下雨，所以我们没有去公园。Rain, so no park.")
    image = reg.get_class("modalities", "vision")().tokenize_file(EXAMPLES / "seven.png")
    sound = reg.get_class("modalities", "audio")().tokenize_file(EXAMPLES / "seven.wav")
    # a plugin's own offset, of a narrower dtype and a 2-D trailing shape, and a standard one as int32
    odd = TokenBatch(
        emb=sound.emb,
        attr=sound.attr,
        modality="odd",
        offsets={
            "char": np.arange(len(sound), dtype=np.int32),
            "grid": np.arange(len(sound) * 6, dtype=np.int16).reshape(len(sound), 2, 3),
        },
        source="odd.bin",
    )
    return [text, image, sound, odd]


def test_the_arrow_module_agrees_with_the_contract():
    assert (_arrow.EMB_DIM, _arrow.ATTR_DIM) == (256, 384)
    assert {k: s for k, (_, s) in _arrow.STANDARD_OFFSETS.items()} == {k: v[0] for k, v in OFFSET_FIELDS.items()}


def test_one_batch_round_trips_bit_exactly(batches):
    for b in batches:
        table = b.to_arrow()
        assert table.num_rows == len(b) and table.column("token").to_pylist() == list(range(len(b)))
        back = TokenBatch.from_arrow(table)
        assert back == b
        assert {k: v.dtype for k, v in back.offsets.items()} == {k: v.dtype for k, v in b.offsets.items()}


def test_a_table_of_several_batches_and_its_schema(batches):
    table = batches_to_arrow(batches)
    assert table.num_rows == sum(len(b) for b in batches)
    assert table.schema.field("emb").type == pa.list_(pa.float32(), 256)
    assert table.schema.field("attr").type == pa.list_(pa.float32(), 384)
    assert table.schema.remove_metadata().equals(token_schema({"grid": (np.dtype(np.int16), (2, 3))}))
    assert table.column("modality").to_pylist()[0] == "text"
    assert table.column("source").to_pylist()[0] is None  # literal text has no source
    # the embedding of row k is bit-exactly token k of the concatenated batches
    emb = np.stack(table.column("emb").to_numpy(zero_copy_only=False))
    assert emb.dtype == np.float32 and emb.tobytes() == np.concatenate([b.emb for b in batches]).tobytes()
    text_chars = table.column("offsets").combine_chunks().field("char").to_pylist()[: len(batches[0])]
    assert text_chars == batches[0].offsets["char"].tolist()
    assert batches_from_arrow(table) == batches


def test_parquet_files_round_trip_and_tokenize_writes_them(batches, tmp_path):
    path = tmp_path / "t.parquet"
    write_parquet(path, batches)
    assert read_parquet(path) == batches
    save_tokens(tmp_path / "t.npz", batches)
    assert load_tokens(tmp_path / "t.npz") == batches == load_tokens(path)

    from v22sdk.cli import cli

    out = tmp_path / "cli.parquet"
    r = CliRunner().invoke(cli, ["tokenize", str(EXAMPLES / "seven.wav"), "--out", str(out)])
    assert r.exit_code == 0, r.output
    got = read_parquet(out)
    assert [b.modality for b in got] == ["audio"] and got[0] == batches[2]


def test_without_metadata_batches_come_back_from_the_columns(batches):
    table = batches_to_arrow(batches[:3]).replace_schema_metadata(None)
    assert batches_from_arrow(table) == batches[:3]  # standard offsets carry the built-ins' own dtypes


def test_bad_tables_are_input_errors_naming_the_source(batches, tmp_path):
    table = batches_to_arrow(batches)
    with pytest.raises(InputError, match="rows were filtered"):
        batches_from_arrow(table.slice(1), source="x.parquet")
    with pytest.raises(InputError, match="no column"):
        batches_from_arrow(table.drop_columns(["emb"]), source="x.parquet")
    with pytest.raises(InputError, match="expected 1"):
        TokenBatch.from_arrow(table)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="bad.parquet"):
        read_parquet(bad)
    # a table whose values break the contract is refused like any batch
    from v22sdk.errors import ContractViolation

    broken = batches_to_arrow([batches[0]])
    attr = np.stack(broken.column("attr").to_numpy(zero_copy_only=False)).copy()
    attr[0, 0] = 2.0
    broken = broken.set_column(
        broken.schema.get_field_index("attr"),
        "attr",
        pa.FixedSizeListArray.from_arrays(pa.array(attr.reshape(-1)), 384),
    )
    with pytest.raises(ContractViolation):
        TokenBatch.from_arrow(broken)


def test_the_contract_does_not_import_pyarrow():
    code = "import sys, v22sdk, v22sdk.contract, v22sdk.tabular; print('pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_torch_dataset_over_token_files(batches, tmp_path):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    from v22sdk.token_dataset import TokenDataset

    write_parquet(tmp_path / "a.parquet", batches[:2])
    save_tokens(tmp_path / "b.npz", batches[2:])
    ds = TokenDataset([tmp_path / "a.parquet", tmp_path / "b.npz"])
    assert len(ds) == 4
    item = ds[1]
    assert item["modality"] == "vision" and item["file"].endswith("a.parquet") and item["batch"] == 1
    assert item["tokens"].numpy().tobytes() == batches[1].to_array().tobytes()
    loader = DataLoader(ds, batch_size=4, collate_fn=TokenDataset.collate)
    [batch] = list(loader)
    lengths = [len(b) for b in batches]
    assert batch["tokens"].shape == (4, max(lengths), 640) and batch["lengths"].tolist() == lengths
    for k, b in enumerate(batches):
        assert batch["tokens"][k, : len(b)].numpy().tobytes() == b.to_array().tobytes()
        assert not batch["tokens"][k, len(b) :].any() and batch["mask"][k].sum() == len(b)
    per_token = TokenDataset(tmp_path / "a.parquet", per="token")
    assert len(per_token) == lengths[0] + lengths[1]
    last = per_token[-1]
    assert last["position"] == lengths[1] - 1 and torch.equal(
        last["token"], torch.from_numpy(batches[1].to_array()[-1])
    )
    stacked = TokenDataset.collate([per_token[0], per_token[1]])
    assert stacked["tokens"].shape == (2, 640)
    with pytest.raises(InputError, match="per"):
        TokenDataset(tmp_path / "a.parquet", per="word")


def _doc_example(name: str) -> str:
    text = (ROOT / "docs" / "tokens-as-data.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- tested-example: {name} -->\n```python\n(.*?)```", text, re.S)
    assert m, f"docs/tokens-as-data.md has no tested example {name!r}"
    return m.group(1)


def test_the_documented_hugging_face_example_runs(batches, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # never the user's ~/.cache
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-home" / "datasets"))
    pytest.importorskip("datasets")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    write_parquet(tmp_path / "tokens.parquet", batches[:3])
    code = _doc_example("hf-datasets")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**__import__("os").environ},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    n_text = len(batches[0])
    assert out.stdout.strip().endswith(f"{sum(len(b) for b in batches[:3])} tokens, {n_text} of them text")


def test_hugging_face_dataset_values_are_bit_exact_and_write_back(batches, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-home" / "datasets"))
    datasets = pytest.importorskip("datasets")
    write_parquet(tmp_path / "tokens.parquet", batches)
    ds = datasets.Dataset.from_parquet(str(tmp_path / "tokens.parquet"), cache_dir=str(tmp_path / "hf"))
    emb = ds.with_format("numpy")[:]["emb"]
    assert emb.dtype == np.float32 and emb.tobytes() == np.concatenate([b.emb for b in batches]).tobytes()
    ds.to_parquet(str(tmp_path / "back.parquet"))
    back = read_parquet(tmp_path / "back.parquet")
    assert back[:3] == batches[:3]  # the built-in modalities' batches, bit-exact from the columns alone
    # datasets drops the v22sdk metadata: a plugin's own dtypes and shapes come back as the columns hold them
    odd = back[3]
    assert odd.emb.tobytes() == batches[3].emb.tobytes() and odd.offsets["char"].dtype == np.int64
    assert odd.offsets["grid"].tolist() == batches[3].offsets["grid"].reshape(len(odd), 6).tolist()

import numpy as np
import pytest

from v22sdk import ContractViolation, InputError, Sample, UnitsError
from v22sdk.modality import default_invalid_inputs

from .helpers import RampModality


def test_tokenize_validates_and_records_offsets():
    m = RampModality()
    b = m.tokenize(np.linspace(0, 1, 20), sample_rate=100)
    assert len(b) == 3 and b.modality == "ramp"
    assert b.offsets["time"][1].tolist() == pytest.approx([0.08, 0.16])
    assert m.schema.active_names(b) == {"ramp.level", "ramp.spread"}


def test_missing_unknown_and_out_of_range_units():
    m = RampModality()
    with pytest.raises(UnitsError, match="missing sample_rate"):
        m.tokenize(np.ones(4))
    with pytest.raises(UnitsError, match="unknown unit"):
        m.tokenize(np.ones(4), sample_rate=10, fps=3)
    with pytest.raises(UnitsError, match="outside"):
        m.tokenize(np.ones(4), sample_rate=0)
    with pytest.raises(UnitsError, match="given as 50"):
        m.tokenize(Sample(np.ones(4), {"sample_rate": 100.0}), sample_rate=50)


def test_undeclared_slot_is_caught_by_tokenize():
    class Leaky(RampModality):
        def encode(self, data, *, sample_rate):
            enc = super().encode(data, sample_rate=sample_rate)
            enc.attr[:, 5] = 0.5
            return enc

    with pytest.raises(ContractViolation, match="declared"):
        Leaky().tokenize(np.ones(4), sample_rate=10)


def test_tokenize_batch_equals_concatenated_singles():
    m = RampModality()
    items = [Sample(np.arange(n, dtype=float), {"sample_rate": 10.0}) for n in (3, 17, 8)]
    b = m.tokenize_batch(items)
    singles = [m.tokenize(s) for s in items]
    assert np.array_equal(b.emb, np.concatenate([s.emb for s in singles]))
    assert b.offsets["item"].tolist() == [0, 1, 1, 1, 2]
    with pytest.raises(InputError):
        m.tokenize_batch([])


def test_config_roundtrip():
    m = RampModality(window=4)
    assert m.config() == {"window": 4}
    assert RampModality.from_config(m.config()) == m


def test_file_loading(tmp_path):
    p = tmp_path / "x.ramp"
    p.write_text("1 2 3 4 5")
    b = RampModality().tokenize_file(p)
    assert b.source == str(p) and len(b) == 1
    p.write_text("1 two 3")
    with pytest.raises(InputError, match="x.ramp"):
        RampModality().tokenize_file(p)


def test_default_invalid_inputs_cover_the_contract():
    m = RampModality()
    valid = Sample(np.ones(10), {"sample_rate": 10.0})
    cases = default_invalid_inputs(m.input_spec, valid)
    labels = {label for label, _ in cases}
    assert labels == {"wrong_dtype", "wrong_rank", "empty", "non_finite", "missing_units"}
    for _label, sample in cases:
        with pytest.raises(InputError):
            m.tokenize(sample)


@pytest.mark.slow  # the whole kit: about 16 s
def test_the_core_test_modality_passes_the_contract_kit():
    from v22sdk.testing import check_modality

    report = check_modality(RampModality(), max_examples=10)
    assert report.ok, str(report)

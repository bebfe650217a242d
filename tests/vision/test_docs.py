"""docs/vision-modality.md stays in step with the code: every slot is documented as declared."""

from pathlib import Path

from v22sdk_vision import SCHEMA

DOC = Path(__file__).resolve().parents[2] / "docs" / "vision-modality.md"


def test_every_slot_is_in_the_docs_with_its_meaning_and_scaling():
    text = DOC.read_text(encoding="utf-8")
    for slot in SCHEMA:
        assert f"| {slot.index} | `{slot.name}` | {slot.meaning} | {slot.scaling} |" in text, slot.name

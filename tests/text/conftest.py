import pytest
from v22sdk_text import TextModality
from v22sdk_text.slots import SCHEMA


@pytest.fixture(scope="session")
def text():
    return TextModality()


@pytest.fixture(scope="session")
def attrs_of(text):
    """attrs_of(sentence, word) -> {slot name: value} of the first character of ``word``."""

    def get(sentence: str, word: str, occurrence: int = 0) -> dict[str, float]:
        batch = text.tokenize(sentence)
        start = -1
        for _ in range(occurrence + 1):
            start = sentence.index(word, start + 1)
        return {k: v for k, v in SCHEMA.values(batch.attr[start]).items() if v != 0}

    return get

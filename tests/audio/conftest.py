"""Fixtures of the audio tests (helpers live in audio_signals.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def audio():
    from v22sdk_audio import AudioModality

    return AudioModality()


@pytest.fixture(scope="session")
def schema(audio):
    return audio.schema

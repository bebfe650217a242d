"""Reading text files: UTF-8 (with or without BOM), UTF-16/UTF-32 with a BOM, else a clear error."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

from v22sdk import InputError

# Longest BOMs first: the UTF-32-LE BOM starts with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def decode_bytes(raw: bytes, source: str) -> str:
    """Decode file bytes by BOM, else as strict UTF-8; raise InputError naming ``source``."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw[len(bom) :].decode(encoding)
            except UnicodeDecodeError as exc:
                raise InputError(
                    source,
                    f"has a {encoding} byte-order mark but is not valid {encoding} "
                    f"(byte offset {exc.start + len(bom)}: {exc.reason})",
                ) from None
    nuls = raw.count(0)
    if nuls and nuls >= len(raw) // 4:
        raise InputError(
            source, "looks like UTF-16 without a byte-order mark (many NUL bytes); save it as UTF-8 or with a BOM"
        )
    if nuls:
        raise InputError(source, "contains NUL bytes: this looks like a binary file, not text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        hint = " Convert it to UTF-8 (e.g. iconv -f GB18030 -t UTF-8) and try again."
        bad = raw[exc.start : exc.start + 4].hex(" ")
        raise InputError(
            source, f"is not valid UTF-8: bytes {bad} at offset {exc.start} ({exc.reason}).{hint}"
        ) from None


def read_text_file(path: str | os.PathLike[str]) -> str:
    """The decoded text of ``path``; InputError if missing, a directory, unreadable or undecodable."""
    source = str(path)
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError(source, "no such file") from None
    except IsADirectoryError:
        raise InputError(source, "is a directory, not a text file") from None
    except OSError as exc:
        raise InputError(source, f"cannot be read: {exc.strerror or exc}") from None
    if not raw:
        raise InputError(source, "is empty (0 bytes); the text modality needs at least one character")
    return decode_bytes(raw, source)

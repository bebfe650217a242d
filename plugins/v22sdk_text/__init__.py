"""Built-in ``text`` modality: one 640-D token per character, with a rule-based attribute stack.

Cheap to import: jieba, the lexicons and the rules load on first use.
"""

from v22sdk import hookimpl

from .modality import TextModality


@hookimpl
def v22sdk_register_modalities():
    return [TextModality]

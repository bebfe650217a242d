"""Print the slot table of the text modality (``python -m v22sdk_text.docs``) for docs/text-modality.md."""

from .slots import markdown_table

if __name__ == "__main__":
    print(markdown_table())

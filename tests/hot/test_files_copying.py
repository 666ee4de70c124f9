"""``collect_files`` copies a template only when it has a name to rewrite.

Copying (``copy.deepcopy``) was the largest cost of reading a big template
from disk; the references are now found first, and a template naming no
file is passed on as it is.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from convection.common.diagnostics import Diagnostics
from convection.hot.files import FileSource, collect_files, file_url, load_stack_files
from convection.hot.loader import load


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def test_a_template_naming_no_file_is_not_copied(tmp_path: Path) -> None:
    top = write(tmp_path / "t.yaml", "heat_template_version: 2018-08-31\nresources: {}\n")
    diags = Diagnostics()
    result = load_stack_files(top, diags=diags)
    assert not diags.items
    again = collect_files(result.template, [], FileSource(tmp_path), diags=diags)
    assert again.template is result.template


def test_names_are_fetched_in_document_order_and_the_input_is_left_alone(tmp_path: Path) -> None:
    write(tmp_path / "a.sh", "a\n")
    write(tmp_path / "b.sh", "b\n")
    write(tmp_path / "nested.yaml", "heat_template_version: 2018-08-31\n")
    text = """\
        heat_template_version: 2018-08-31
        resources:
          r:
            properties:
              first: {get_file: a.sh}
              deeper: [{x: {get_file: b.sh}}]
            type: nested.yaml
        """
    top = write(tmp_path / "t.yaml", text)
    doc = load(top.read_text(), str(top))
    diags = Diagnostics()
    result = collect_files(doc, [], FileSource(tmp_path), diags=diags, template_url=file_url(top))
    assert not diags.items
    assert list(result.files) == [file_url(tmp_path / n) for n in ("a.sh", "b.sh", "nested.yaml")]
    resource = result.template.data["resources"]["r"]
    assert resource["type"] == file_url(tmp_path / "nested.yaml")
    assert doc.data["resources"]["r"]["type"] == "nested.yaml"

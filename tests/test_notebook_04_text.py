"""Issue 28 item 13: notebook 04 keeps the README's tie-break and ends on words, not a dict."""

from __future__ import annotations

import json
import pathlib

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "04-usage-history.ipynb"


def code_cells() -> list[dict]:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return [c for c in cells if c["cell_type"] == "code"]


def test_the_duckdb_query_keeps_the_readme_s_tie_break():
    readme = (NOTEBOOK.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "ORDER BY collected_at DESC, value DESC" in readme
    (query,) = [c for c in code_cells() if "duckdb.execute" in "".join(c["source"])]
    assert "ORDER BY collected_at DESC, value DESC) = 1" in "".join(query["source"])


def test_compaction_is_said_in_words_not_shown_as_its_raw_dict():
    (cell,) = [c for c in code_cells() if "compact()" in "".join(c["source"])]
    shown = [o for o in cell["outputs"] if o.get("output_type") == "execute_result"]
    assert shown == []  # it ended on compact()'s dict of zeros
    printed = "".join("".join(o.get("text", "")) for o in cell["outputs"])
    # Each collect keeps its days' rollups current, so compact() has none left to write.
    assert "compacted: 0 rollup(s) written, 0 file(s) merged away" in printed

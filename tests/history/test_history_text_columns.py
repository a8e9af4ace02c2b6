"""Text codes: the same numbering whatever form a text column comes in."""

from __future__ import annotations

import pyarrow as pa
import pytest

from searchkit.history.text_columns import TEXT, codes, encoded


def dictionary(indices: list[int | None], texts: list[str]) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(texts))


CASES = {
    # sorted and distinct, every text used: the codes are the indices as they are
    "canonical": dictionary([2, 0, 0, 1, 2], ["a", "b", "c"]),
    "canonical, null rows": dictionary([2, None, 0, 1, None], ["a", "b", "c"]),
    "canonical, unused texts": dictionary([3, 0, 3, 1], ["a", "b", "c", "d"]),
    "unsorted": dictionary([0, 1, 2, 0], ["c", "a", "b"]),
    "repeated texts": dictionary([0, 1, 2, 3], ["b", "a", "b", "c"]),
    "one text": dictionary([0, 0, None], ["x"]),
    "chunks": pa.chunked_array(
        [dictionary([0, 1], ["b", "c"]), dictionary([1, 0, None], ["a", "c"])]
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_codes_and_encoded_are_those_of_the_plain_texts(name):
    column = CASES[name]
    plain = column.cast(pa.string())
    rows, texts = codes(column)
    want_rows, want_texts = codes(plain)
    assert rows.tolist() == want_rows.tolist()
    assert texts.to_pylist() == want_texts.to_pylist() == sorted(set(texts.to_pylist()))
    again = encoded(column)
    assert again.type == TEXT
    assert again.to_pylist() == plain.to_pylist()
    assert again.dictionary.to_pylist() == want_texts.to_pylist()


def test_codes_of_the_canonical_case_are_exact():
    rows, texts = codes(CASES["canonical, unused texts"])
    assert (rows.tolist(), texts.to_pylist()) == ([2, 0, 2, 1], ["a", "b", "d"])
    rows, _ = codes(CASES["canonical, null rows"])
    assert rows.tolist() == [2, -1, 0, 1, -1]

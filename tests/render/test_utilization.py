"""The utilization heatmap under hostile names."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

import searchkit as sk
from tests.index_json import index_json


def test_names_with_dollar_signs_are_drawn_literally(tmp_path):
    # "$x^$" is a mathtext parse error when drawn as math (issue 18, item 11).
    points = [{"x": f"2026-11-20 00:0{m}:00 +0000 UTC", "y": 1.0} for m in range(5)]
    raw = [
        index_json("$x^$", id="i-1", throughput_vector=points),
        index_json("price $5 vs $6", id="i-2", throughput_vector=points),
    ]
    ax = sk.plot_utilization(raw)
    png = tmp_path / "utilization.png"
    ax.figure.savefig(png)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    plt.close(ax.figure)
    assert labels == [r"\$x^\$", r"price \$5 vs \$6"]
    assert png.read_bytes().startswith(b"\x89PNG")

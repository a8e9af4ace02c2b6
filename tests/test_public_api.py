"""The public names: __all__ is sorted and equals what the package exports."""

from __future__ import annotations

import searchkit


def test_all_is_sorted():
    assert searchkit.__all__ == sorted(searchkit.__all__)


def test_all_equals_public_names():
    public = {n for n in dir(searchkit) if not n.startswith("_")} | {"__version__"}
    modules = {
        "client",
        "config",
        "errors",
        "models",
        "display",
        "frames",
        "timestamps",
        "plotting",
        "widgets",
        "emulator",
        "cli",
        "demo",
        "history",
        "usage",
    }
    assert set(searchkit.__all__) == public - modules


def test_design_names_are_importable_from_the_package():
    for name in (
        "Client",
        "connect",
        "Emulator",
        "limits_frame",
        "throughput_frame",
        "parse_timestamps",
        "plot_throughput",
        "plot_limits",
        "create_index_form",
        "index_browser",
        "SearchKitError",
        "ConfigError",
        "AuthenticationError",
        "PermissionDeniedError",
        "ValidationError",
        "NotFoundError",
        "RateLimitError",
        "ServerError",
        "TransportError",
        "InvalidResponseError",
        "AmbiguousCreateError",
        "History",
        "usage_frame",
        "forecast_limits",
        "plot_utilization",
    ):
        assert hasattr(searchkit, name), name

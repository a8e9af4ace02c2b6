"""The public names: __all__ is sorted, equals what the package exports, and loads lazily."""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import pytest

import searchkit

HEAVY = ("pandas", "pyarrow", "numpy", "matplotlib", "ipywidgets", "requests", "werkzeug")


def _modules_loaded_by(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter; return which heavy libraries it imported."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_all_is_sorted():
    assert searchkit.__all__ == sorted(searchkit.__all__)


def test_dir_shows_the_public_names_and_nothing_private():
    import searchkit.frames.throughput_frames  # a loaded submodule does not show either

    assert searchkit.frames.throughput_frames is not None
    names = dir(searchkit)
    assert {n for n in names if not n.startswith("__")} == set(searchkit.__all__) - {"__version__"}
    assert [n for n in names if n.startswith("_") and not n.startswith("__")] == []
    assert "_hooks" not in names and "_version" not in names and "frames" not in names


def test_every_error_and_warning_class_lives_in_errors_and_is_exported():
    import inspect

    import searchkit.errors as errors

    defined = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == "searchkit.errors"
    }
    assert defined >= {"HistoryWarning", "IndexMismatchWarning", "UnknownIndexError"}
    assert defined <= set(searchkit.__all__)
    for name in defined:
        assert getattr(searchkit, name) is getattr(errors, name)
    # Elsewhere only internal signals, each caught inside the package and turned into an
    # exported error, an HTTP response (the emulator) or an exit status (the CLI).
    elsewhere = sorted(
        f"{module.__name__}.{name}"
        for module in _package_modules()
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == module.__name__
    )
    assert elsewhere == [
        "searchkit.api._transport.BodyFault",
        "searchkit.api._transport.Late",
        "searchkit.api._transport.TooLarge",
        "searchkit.cli.main.UsageError",
        "searchkit.cli.output.OutputError",
        "searchkit.emulator._serving.BindError",
        "searchkit.emulator._sqlite.StoreBusyError",
        "searchkit.emulator._sqlite.StoreClosedError",
        "searchkit.emulator.app.ApiError",
        "searchkit.emulator.app.MalformedChunkError",
        "searchkit.emulator.state.InvalidRequestError",
        "searchkit.history.open_day._Unknown",
        "searchkit.ui._plot.NoData",
    ]


def _package_modules() -> list:
    import importlib
    import pkgutil

    out = []
    for info in pkgutil.walk_packages(searchkit.__path__, "searchkit."):
        if info.name in ("searchkit.errors", "searchkit.__main__"):
            continue
        out.append(importlib.import_module(info.name))
    return out


def test_close_demo_is_reachable_from_the_package():
    from searchkit.connection import close_demo

    assert searchkit.close_demo is close_demo


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
        "notebook_theme",
        "load_alerts",
        "alert_round",
        "alert_records",
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
        "DuplicateIndexWarning",
        "History",
        "usage_frame",
        "forecast_limits",
        "plot_utilization",
        "plot_forecast",
        "quota_cockpit",
    ):
        assert hasattr(searchkit, name), name


def test_every_name_in_all_resolves_to_its_definition():
    import importlib

    for name in searchkit.__all__:
        value = getattr(searchkit, name)
        if name == "__version__":
            assert value == importlib.import_module("searchkit._version").__version__
            continue
        home = importlib.import_module(searchkit._EXPORTS[name])
        assert value is getattr(home, name), name


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = searchkit.not_a_name


def test_dir_lists_every_public_name_before_any_is_loaded():
    names = subprocess.run(
        [sys.executable, "-c", "import searchkit; print(' '.join(dir(searchkit)))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert set(searchkit.__all__) <= set(names)


def test_import_searchkit_loads_no_heavy_library():
    assert _modules_loaded_by("import searchkit") == []


def test_the_errors_load_without_heavy_libraries():
    assert _modules_loaded_by("from searchkit import SearchKitError, ConfigError") == []


def test_cli_help_loads_no_heavy_library():
    code = (
        "import contextlib, io\n"
        "from searchkit.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])\n"
        "for command in ('list', 'create', 'serve', 'demo', 'lab'):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        main([command, '--help'])"
    )
    # The parser needs the regions and types from models, which may come to use numpy for
    # its throughput columns; nothing heavier may load before a command runs.
    assert [m for m in _modules_loaded_by(code) if m != "numpy"] == []


def test_a_lazy_name_loads_its_library_on_first_use():
    assert "pandas" in _modules_loaded_by("import searchkit; searchkit.limits_frame")


def test_every_lazy_name_is_public_and_every_public_name_is_lazy():
    assert set(searchkit._EXPORTS) == set(searchkit.__all__) - {"__version__"}


# --- what public calls return is exported -------------------------------------------------

#: searchkit classes a public call returns that stay unexported, each with why.
INTERNAL_RETURNS = {
    # The emulator's machinery, reached through Emulator.store/.app/.account/.add_user by
    # tests and the CLI; a notebook user starts, advances and stops an Emulator (README, "The
    # emulator") and never annotates these.
    "Account": "the emulator's account record",
    "EmulatorApp": "the emulator's WSGI application",
    "Store": "the emulator's SQLite store",
    # Returned only by the deprecated SearchIndex.throughput_vector (gone after 0.2.x).
    "ThroughputPoint": "SearchIndex.throughput_vector, deprecated",
}


def _type_hints(function) -> dict:
    """The annotations of ``function``, with the names its module imports only for type
    checkers (``if TYPE_CHECKING:``) imported too."""
    import typing

    return typing.get_type_hints(function, globalns=_checking_namespace(function.__module__))


@functools.cache
def _checking_namespace(module_name: str) -> dict:
    """A module's names and those it imports only for type checkers (each module's source
    parsed once, not once per function)."""
    import ast
    import importlib
    import inspect

    module = sys.modules[module_name]
    namespace = dict(vars(module))
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            for imported in node.body:
                if isinstance(imported, ast.Import):
                    for alias in imported.names:
                        loaded = importlib.import_module(alias.name)
                        top = alias.name.partition(".")[0]
                        namespace[alias.asname or top] = (
                            loaded if alias.asname else sys.modules[top]
                        )
                elif isinstance(imported, ast.ImportFrom):
                    home = importlib.import_module(str(imported.module))
                    for alias in imported.names:
                        namespace[alias.asname or alias.name] = getattr(home, alias.name)
                else:
                    assert isinstance(imported, ast.Pass), ast.unparse(imported)
    return namespace


def _searchkit_classes(annotation, out: set) -> None:
    import inspect
    import typing

    if inspect.isclass(annotation):
        if annotation.__module__.startswith("searchkit."):
            out.add(annotation)
        return
    for argument in typing.get_args(annotation):
        _searchkit_classes(argument, out)


@functools.cache
def returned_classes() -> dict[str, frozenset[str]]:
    """Each searchkit class named in the return annotation of a public function or of a
    public method (or property) of a public class, with where; the classes found are
    walked too, so a class reached only through another's method counts. (Worked out once:
    three tests read it.)"""
    import inspect

    found: dict[str, set[str]] = {}
    todo = [getattr(searchkit, name) for name in searchkit.__all__ if name != "__version__"]
    done: set[object] = set()
    while todo:
        item = todo.pop()
        if item in done:
            continue
        done.add(item)
        members = [(item.__name__, item)] if inspect.isfunction(item) else []
        if inspect.isclass(item) and not issubclass(item, BaseException):
            for owner in item.__mro__:
                if owner.__module__.startswith("searchkit"):
                    for attr, member in vars(owner).items():
                        if attr.startswith("_"):
                            continue
                        member = getattr(member, "fget", None) or member
                        members.append((f"{item.__name__}.{attr}", member))
        for label, member in members:
            function = getattr(member, "__func__", member)
            if not inspect.isfunction(function):
                continue
            classes: set = set()
            _searchkit_classes(_type_hints(function).get("return"), classes)
            for cls in classes:
                found.setdefault(cls.__name__, set()).add(label)
                todo.append(cls)
    return {name: frozenset(where) for name, where in found.items()}


def test_every_class_a_public_call_returns_is_exported():
    # A notebook user annotates what sk.History(...).info() gives, or checks it with
    # isinstance: the class must be reachable as sk.<Name>, not by module path.
    missing = {
        name: sorted(where)
        for name, where in returned_classes().items()
        if name not in searchkit.__all__ and name not in INTERNAL_RETURNS
    }
    assert missing == {}
    for name in set(returned_classes()) - set(INTERNAL_RETURNS):
        assert getattr(searchkit, name).__name__ == name


def test_the_readme_names_what_each_public_call_returns():
    import pathlib

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    table = readme.split("What calls return", 1)[1].split("\n\n", 2)[1]  # the list
    named = {cell for cell in table.split("`")[1::2]}
    assert sorted(set(returned_classes()) - set(INTERNAL_RETURNS) - named) == []


def test_the_internal_return_types_are_still_returned():
    # An entry of INTERNAL_RETURNS no call returns any more leaves the list.
    assert sorted(set(INTERNAL_RETURNS) - set(returned_classes())) == []

"""The suite's fixtures, one per idea, for every directory.

- ``emulator``: a started emulator of the API on 127.0.0.1 and a free port. Its options
  are ``emulator_options`` (a directory's conftest may override that fixture) or, on a test
  or a module, ``@pytest.mark.emulator(**options)``; ``shared=True`` there starts one for
  the whole module, ``setup=callable`` prepares it once.
- ``client``: a client of ``emulator`` without retries; its options are ``client_options``
  (tests/faults: a client of ``server`` with the harness's account).
- ``server``: a misbehaving local HTTP server to script (:class:`tests.faults.harness.FaultServer`),
  options as for ``emulator`` (``server_options``, ``@pytest.mark.server``).
- ``configured``: the environment pointing at ``emulator`` (``SEARCHKIT_*``), for the CLI.
- ``smtp``: a real SMTP server on loopback, ``(controller, inbox)`` (tests/alerts/smtp.py).
- ``s3_server``: moto's S3 server on loopback counting its requests, one per worker
  (tests/history/s3server.py); ``s3_endpoint`` is its URL. Each test makes its own bucket.
- A fixture wider than a test returns only once the merges its collects left running have
  ended (``pytest_fixture_setup``); a test's own merges end with it (``_merges_settled``).
- ``made_once``: a folder (a store collected over days, say) made once per worker and
  copied by each test that uses it, instead of being made again for every test.
- The emulators a test process starts hash their account passwords with PBKDF2 at one
  iteration (``_emulator_passwords_cheap``); ``product_password_hashing`` gives a test the
  product's cost back (tests/emulator/test_emulator_state.py pins it).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import pathlib
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import settings

# The suite allocates much (frames, figures, parsed responses) and keeps little: collecting the
# youngest generation every 10,000 allocations instead of 700 halves the CPU spent collecting
# garbage (1.74 -> 0.80 s of 46 s in tests/analytics, render, frames and model; the same
# peak memory). The older generations still follow every 10 of the younger's collections.
gc.set_threshold(10_000, 10, 10)

# Property tests assert correctness, not speed: on a busy 2-core CI machine a per-example
# deadline would fail them for a GC pause. Speed is what bench/ measures.
settings.register_profile("searchkit", deadline=None, print_blob=True)
settings.load_profile("searchkit")
# `make test-fast` (the edit loop) loads this one (`--hypothesis-profile fast`): each property
# test tries a quarter of its examples there. `make test`, which CI runs, tries them all.
settings.register_profile("fast", settings.get_profile("searchkit"), max_examples=25)


def examples(full: int) -> int:
    """How many examples a property test with ``full`` of them tries under the loaded profile:
    all under the suite's own, a quarter under ``fast`` (as its ``max_examples`` says)."""
    share = settings.default.max_examples / settings.get_profile("searchkit").max_examples
    return max(1, round(full * share))


def pytest_configure(config: pytest.Config) -> None:
    # searchkit's own code and tests speak 0.2.0: an old spelling outside pytest.warns fails.
    config.addinivalue_line(
        "filterwarnings", "error:.*the old spelling goes in searchkit:DeprecationWarning"
    )
    for name in ("emulator", "server"):
        config.addinivalue_line(
            "markers", f"{name}(**options): the options of the {name} fixture here"
        )


#: The files that take longest (half a minute to several minutes on 2 cores), most first.
#: `make test` runs on two workers that each take a whole file (pytest-xdist's loadfile);
#: starting these first lets both workers finish together instead of one waiting on the
#: other's last long file.
LONGEST_FIRST = (
    "tests/test_installed_wheel.py",
    "tests/history/test_history_spark.py",
    "tests/browser/test_jupyterlab.py",
    "tests/browser/test_cockpit.py",
    "tests/browser/test_notebook_look.py",
    "tests/load/",
    # The fast suite's longest (15-70 s each on four workers on two busy cores, bench/suite.py
    # at 11:01 2026-11-27): started first, so that no worker is left with one of them at the end.
    "tests/analytics/test_usage_zones.py",
    "tests/ui/test_cockpit.py",
    "tests/ui/test_widgets.py",
    "tests/cli/test_cli.py",
    "tests/cli/test_alerts_cli.py",
    "tests/render/test_heatmap_readable.py",
    "tests/history/test_open_day.py",
    "tests/history/test_rollup_checks.py",
    "tests/render/test_cockpit_pictures.py",
    "tests/alerts/test_watch.py",
    "tests/history/test_history_requests.py",
    "tests/cli/test_collect_rounds.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the longest files first; every other test keeps its place (a stable sort)."""

    def rank(item: pytest.Item) -> int:
        for position, prefix in enumerate(LONGEST_FIRST):
            if item.nodeid.startswith(prefix):
                return position
        return len(LONGEST_FIRST)

    items.sort(key=rank)


#: PBKDF2 iterations for the emulators this process starts (see the fixture below).
TEST_PBKDF2_ITERATIONS = 1


@pytest.fixture(autouse=True, scope="session")
def _emulator_passwords_cheap() -> Iterator[None]:
    """The emulators started in the test process hash and check passwords at one PBKDF2
    iteration instead of the product's 20,000 (about 9 ms of CPU per emulator started and
    logged into: some 5 s of the fast suite's CPU).

    Only this process's module attributes are patched, for the session: searchkit has no
    option, argument or environment variable that lowers the cost, so no user's emulator,
    no ``searchkit serve`` (the CLI tests' processes included) and nothing a client can
    reach hashes more cheaply. The same code runs (salted PBKDF2, compared in constant time,
    the unknown user checked against a dummy hash of the same cost); only the count differs.
    tests/emulator/test_emulator_state.py checks the product's count with
    ``product_password_hashing``."""
    with pytest.MonkeyPatch.context() as patch:
        _password_cost(patch, TEST_PBKDF2_ITERATIONS)
        yield


def _password_cost(patch: pytest.MonkeyPatch, iterations: int) -> None:
    """Make the emulator's password hashes (and the dummy one) cost ``iterations``."""
    from searchkit.emulator import _passwords, state

    scheme, _, salt, digest = _passwords.DUMMY_HASH.split("$")
    patch.setattr(_passwords, "PBKDF2_ITERATIONS", iterations)
    patch.setattr(state, "DUMMY_HASH", f"{scheme}${iterations}${salt}${digest}")


@pytest.fixture
def product_password_hashing(monkeypatch: pytest.MonkeyPatch) -> int:
    """The product's PBKDF2 cost for this test's emulators (returned)."""
    from searchkit.emulator import _passwords

    product = int(_passwords.DUMMY_HASH.split("$")[1])  # the module's own, never patched
    _password_cost(monkeypatch, product)
    return product


#: A fixed instant for tests that need the emulator's clock to stand still.
FIXED_CLOCK = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(autouse=True)
def _no_searchkit_environment(monkeypatch):
    # A developer's real credentials must never leak into (or steer) a test.
    for name in (
        "SEARCHKIT_BASE_URL",
        "SEARCHKIT_USERNAME",
        "SEARCHKIT_PASSWORD",
        "SEARCHKIT_TIMEOUT",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _merges_settled() -> Iterator[None]:
    # A collect across midnight leaves the closed day's merge on a thread: it ends with
    # its test (its store, its S3 server), never in the next one.
    yield
    from searchkit.history.compaction import settle_all

    settle_all()


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> Iterator[Any]:
    """A fixture wider than a test (a store collected over days for a module, say) hands
    its tests a store whose merges have ended: the closed day's merge a collect left on a
    thread would otherwise replace files while a test copies or reads the store (a copy
    then fails with "No such file or directory", as it once did in CI)."""
    made = yield
    if fixturedef.scope != "function":
        import sys

        compaction = sys.modules.get("searchkit.history.compaction")
        if compaction is not None:  # (nothing to wait for when no store was written)
            compaction.settle_all()
    return made


def _options(request: pytest.FixtureRequest, default: dict[str, Any]) -> dict[str, Any]:
    """The options of a marker named after the requesting fixture, else ``default``."""
    marker = request.node.get_closest_marker(request.fixturename)
    return dict(marker.kwargs) if marker is not None else dict(default)


@pytest.fixture(scope="module")
def _module_servers() -> Iterator[tuple[contextlib.ExitStack, dict[str, Any]]]:
    """Servers shared by one module's tests (``shared=True``), stopped after the module."""
    with contextlib.ExitStack() as stack:
        yield stack, {}


def _started(
    request: pytest.FixtureRequest, make: Callable[..., Any], options: dict[str, Any]
) -> Iterator[Any]:
    """Start ``make(**options)`` (a context manager) for one test, or once per module with
    ``shared=True``; ``setup`` runs once on what was started."""
    shared = options.pop("shared", False)
    setup = options.pop("setup", None)
    if not shared:
        with make(**options) as started:
            if setup is not None:
                setup(started)
            yield started
        return
    stack, cache = request.getfixturevalue("_module_servers")
    key = f"{request.fixturename}:{sorted(options.items())!r}"
    if key not in cache:
        cache[key] = stack.enter_context(make(**options))
        if setup is not None:
            setup(cache[key])
    yield cache[key]


@pytest.fixture
def emulator_options() -> dict[str, Any]:
    """The ``emulator`` fixture's options in this directory (a conftest may override it)."""
    return {"seed": 7, "clock": FIXED_CLOCK}


@pytest.fixture
def emulator(request: pytest.FixtureRequest, emulator_options: dict[str, Any]) -> Iterator[Any]:
    """A started emulator on 127.0.0.1 and a free port, stopped afterwards."""
    from searchkit.emulator import Emulator

    yield from _started(request, Emulator, _options(request, emulator_options))


@pytest.fixture
def client_options() -> dict[str, Any]:
    """The ``client`` fixture's options here (a conftest may override it): ``of`` names the
    fixture it talks to, ``emulator`` (as its account) or ``server``; the rest are
    :class:`searchkit.Client`'s."""
    return {"of": "emulator", "max_retries": 0}


@pytest.fixture
def client(request: pytest.FixtureRequest, client_options: dict[str, Any]) -> Iterator[Any]:
    """A client of ``emulator`` without retries (default timeouts: a busy machine is slow),
    or what ``client_options`` says."""
    import searchkit as sk

    options = dict(client_options)
    of = options.pop("of")
    target = request.getfixturevalue(of)
    if of == "emulator":  # as the emulator's own account
        made = target.client(**options)
    else:
        made = sk.Client(base_url=target.url, **options)
    with made as c:
        yield c


@pytest.fixture
def server_options() -> dict[str, Any]:
    """The ``server`` fixture's options in this directory (a conftest may override it)."""
    return {}


@pytest.fixture
def server(request: pytest.FixtureRequest, server_options: dict[str, Any]) -> Iterator[Any]:
    """A misbehaving local HTTP server to script, stopped afterwards."""
    from tests.faults.harness import FaultServer

    yield from _started(request, FaultServer, _options(request, server_options))


@pytest.fixture
def configured(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Point the environment (``SEARCHKIT_*``) at ``emulator``; return the emulator."""
    monkeypatch.setenv("SEARCHKIT_BASE_URL", emulator.url)
    monkeypatch.setenv("SEARCHKIT_USERNAME", emulator.username)
    monkeypatch.setenv("SEARCHKIT_PASSWORD", emulator.password)
    return emulator


@pytest.fixture
def smtp() -> Iterator[Any]:
    """A real SMTP server on 127.0.0.1: ``(controller, inbox)``."""
    from tests.alerts.smtp import smtp_server

    with smtp_server() as started:
        yield started


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Any]:
    """moto's S3 server on 127.0.0.1, counting the requests it answers; one per worker."""
    pytest.importorskip("moto")
    pytest.importorskip("boto3")
    from tests.history.s3server import running

    with running() as started:
        yield started


@pytest.fixture
def s3_endpoint(s3_server: Any) -> str:
    """The URL of ``s3_server``."""
    return str(s3_server.endpoint)


@pytest.fixture(scope="session")
def _made_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    return {}


@pytest.fixture
def made_once(
    tmp_path_factory: pytest.TempPathFactory, _made_folders: dict[str, pathlib.Path]
) -> Callable[[str, Callable[[pathlib.Path], object], pathlib.Path], pathlib.Path]:
    """``made_once(name, make, to)``: copy to ``to`` the folder ``make(folder)`` fills.

    ``make`` runs once per run of the suite for ``name``, on the first worker that asks (the
    others wait for it: ``make`` must depend on nothing but its folder, e.g. an emulator of
    its own on a fixed clock), and any merge it left running is waited for; every call copies
    what it made (every file, as written). A test changes its copy, never the original.
    """

    def copy(name: str, make: Callable[[pathlib.Path], object], to: pathlib.Path) -> pathlib.Path:
        if name not in _made_folders:
            _made_folders[name] = _made_for_the_run(tmp_path_factory, name, make)
        shutil.copytree(_made_folders[name], to)
        return to

    return copy


def _made_for_the_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[pathlib.Path], object]
) -> pathlib.Path:
    """The folder ``make`` filled for ``name`` in this run: made here unless another xdist
    worker made it (their base folders share a parent), under a lock the others wait on."""
    import fcntl
    import os

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / "made-once" / name
    folder.parent.mkdir(exist_ok=True)
    with open(shared / "made-once" / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        done = shared / "made-once" / f"{name}.made"
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a killed worker left half-made
            make(folder)
            # A collect that closed a day merges it on a thread after the round returns:
            # wait for it, or a copy may list a rollup that the merge then replaces.
            from searchkit.history.compaction import settle_all

            settle_all()
            done.touch()
    return folder

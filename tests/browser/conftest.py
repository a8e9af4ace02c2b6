"""Fixtures of the browser tests: the emulator, JupyterLab on loopback, headless Chromium.

One emulator, one JupyterLab server and one Chromium serve every test of a module; each
test gets a notebook of its own (a fresh file, workspace and kernel) with every cell run.
The kernel reaches the emulator through the environment of the JupyterLab process
(``SEARCHKIT_BASE_URL``, ``SEARCHKIT_USERNAME``, ``SEARCHKIT_PASSWORD``), as a user's would.

Chromium is Debian's (``/usr/bin/chromium``, or ``$SEARCHKIT_CHROMIUM``): Playwright cannot
download a browser on these machines. Without it the tests skip, saying how to enable them,
unless ``SEARCHKIT_REQUIRE_BROWSER=1`` (set by ``.ci/run``) turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import nbformat
import pytest

from searchkit.emulator import Emulator

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Locator, Page

    #: Playwright's ``expect``: assertions that wait until they hold or time out.
    Expect = Callable[..., Any]

CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
#: Tall enough that the whole index browser (table, plot, form and card) fits on screen.
VIEWPORT = {"width": 1400, "height": 1800}
#: The emulator's clock stands still, so cards, tables and plots look the same every run.
CLOCK = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
#: Default wait of every Playwright action and assertion, in milliseconds.
ACTION_TIMEOUT_MS = 60_000
#: Longest wait for a notebook to open and run its cells (a cold kernel imports pandas).
#: Generous: a wait ends as soon as its condition holds, and on a CI machine whose 2 cores
#: run two test workers and other jobs a kernel once took more than 90 s to be idle.
NOTEBOOK_TIMEOUT_MS = 240_000
LAB_START_TIMEOUT_S = 240.0
LAB_STOP_TIMEOUT_S = 15.0

NOTEBOOK_CELLS = (
    "import searchkit as sk\n\nclient = sk.connect()\nform = sk.create_index_form(client)\nform",
    "sk.index_browser(client)",
)
# Jupyter settings of the test server: nothing fetched from the internet, no toasts.
SERVER_CONFIG = {
    "ServerApp": {"jpserver_extensions": {"jupyter_lsp": False}, "terminals_enabled": False},
    "LabApp": {
        "news_url": None,
        "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate",
        "extension_manager": "readonly",
    },
}
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    },
    # Every cell in the DOM, whether or not it is scrolled into view; the notebook's
    # kernel starts without a "Select Kernel" dialog.
    "@jupyterlab/notebook-extension/tracker": {
        "windowingMode": "none",
        "autoStartDefaultKernel": True,
    },
}
_TRACEBACK = "[data-mime-type='application/vnd.jupyter.stderr']"
# The status bar's kernel item: "Python 3 (ipykernel) | Idle", not "No Kernel | Idle".
_KERNEL_IDLE = re.compile(r"^(?!No Kernel).+ \| Idle$")


# --- is a browser here? ----------------------------------------------------------------


def _unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail when the run requires the browser tests."""
    if os.environ.get("SEARCHKIT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (SEARCHKIT_REQUIRE_BROWSER=1: the browser tests must run)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium executable; skips (or fails, in CI) when it or a Python part is missing."""
    path = os.environ.get("SEARCHKIT_CHROMIUM") or "/usr/bin/chromium"
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        _unavailable(
            f"no Chromium at {path}: the browser tests need Debian's chromium "
            "(apt-get install chromium; CI installs it in .ci/run) or SEARCHKIT_CHROMIUM "
            "naming another Chromium executable"
        )
    for module, package in (("playwright", "playwright"), ("jupyterlab", "jupyterlab")):
        if find_spec(module) is None:
            _unavailable(f"{package} is not installed: pip install -e '.[dev]'")
    return path


@pytest.fixture(scope="session")
def expect(chromium: str) -> Expect:
    """Playwright's ``expect``, imported once the browser tests are known to run."""
    from playwright.sync_api import expect

    return expect


# --- the emulator, with a log of the requests it receives -------------------------------


class RequestLog:
    """Every request an emulator receives, as ``(method, path)``, counted as it arrives.

    A request is logged before the emulator's delay, so one still running counts.
    """

    def __init__(self, emulator: Emulator) -> None:
        self._lock = threading.Lock()
        self._entries: list[tuple[str, str]] = []
        app = emulator.app
        dispatch = app.dispatch

        def logged(request: Any) -> Any:
            with self._lock:
                self._entries.append((request.method, request.path))
            return dispatch(request)

        # EmulatorApp.__call__ routes every request through self.dispatch.
        app.dispatch = logged  # type: ignore[method-assign]

    def count(self, method: str, path: str = "/v2/search") -> int:
        """Return how many ``method`` requests to ``path`` arrived so far."""
        with self._lock:
            return sum(1 for m, p in self._entries if (m, p) == (method, path))


@pytest.fixture(scope="module")
def lab_emulator(chromium: str) -> Iterator[Emulator]:
    """The demo emulator the notebooks talk to (six indexes, a fixed clock)."""
    with Emulator(demo=True, seed=7, clock=CLOCK) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def request_log(lab_emulator: Emulator) -> RequestLog:
    return RequestLog(lab_emulator)


# --- JupyterLab --------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_json(path: Path, content: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=1), encoding="utf-8")


class JupyterLab:
    """A JupyterLab server on 127.0.0.1 with everything of its own under ``home``.

    Configuration, data, runtime files and IPython's profile live under ``home``, so
    nothing of the user's is read; the virtual environment's kernel spec and lab
    extensions stay visible through ``sys.prefix``. No token, no password, no browser.

    Args:
        home: A directory for the server's files; notebooks go to ``home / "notebooks"``.
        environment: Extra environment variables of the server and so of its kernels.
    """

    def __init__(self, home: Path, environment: dict[str, str]) -> None:
        self.root = home / "notebooks"
        self.log_path = home / "jupyterlab.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.port = 0
        self.root.mkdir(parents=True, exist_ok=True)
        config = home / "jupyter" / "config"
        _write_json(config / "jupyter_server_config.json", SERVER_CONFIG)
        for plugin, settings in LAB_SETTINGS.items():
            _write_json(
                config / "lab" / "user-settings" / f"{plugin}.jupyterlab-settings", settings
            )
        inherited = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("JUPYTER", "JPY_", "IPYTHON", "SEARCHKIT_"))
        }
        self._env = {
            **inherited,
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTER_DATA_DIR": str(home / "jupyter" / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "jupyter" / "runtime"),
            "IPYTHONDIR": str(home / "ipython"),
            "PYTHONUNBUFFERED": "1",
            **environment,
        }

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, attempts: int = 3) -> JupyterLab:
        """Start the server and wait until it answers ``/api/status``.

        A free port can be taken by someone else before the server binds it; then the
        server exits at once and another port is tried, ``attempts`` times in all.

        Raises:
            RuntimeError: The server exited or did not answer in time; the message holds
                the end of its log.
        """
        for attempt in range(1, attempts + 1):
            self.port = _free_port()
            self._log = self.log_path.open("ab")
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "jupyterlab",
                    "--ServerApp.ip=127.0.0.1",
                    f"--ServerApp.port={self.port}",
                    "--ServerApp.port_retries=0",
                    "--IdentityProvider.token=",
                    "--ServerApp.password=",
                    "--ServerApp.open_browser=False",
                    "--ServerApp.allow_root=True",
                    f"--ServerApp.root_dir={self.root}",
                ],
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
            )
            if self._wait_ready():
                return self
            self.stop()
            if attempt == attempts:
                break
        raise RuntimeError(f"JupyterLab did not start; the end of its log:\n{self.log_tail()}")

    def _wait_ready(self) -> bool:
        assert self._process is not None
        deadline = time.monotonic() + LAB_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                return False
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            try:
                connection.request("GET", "/api/status")
                if connection.getresponse().status == 200:
                    return True
            except (OSError, http.client.HTTPException):
                pass  # not listening yet, or still starting up
            finally:
                connection.close()
            time.sleep(0.2)
        return False

    def stop(self) -> None:
        """Stop the server (its kernels with it): terminate, then kill; bounded."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            # SIGTERM makes Jupyter shut its kernels down before it exits.
            process.terminate()
            try:
                process.wait(LAB_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(LAB_STOP_TIMEOUT_S)
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


@pytest.fixture(scope="module")
def browser_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's temporary directory: server files, browser profile, screenshots."""
    return tmp_path_factory.mktemp("browser")


#: Where screenshots are kept after the run, as test artifacts to look at (gitignored).
ARTIFACTS = Path(__file__).parent / "artifacts"


@pytest.fixture(scope="module")
def screenshots() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    print(f"screenshots are saved in {ARTIFACTS}")
    return ARTIFACTS


@pytest.fixture(scope="module")
def jupyterlab(lab_emulator: Emulator, browser_dir: Path) -> Iterator[JupyterLab]:
    lab = JupyterLab(
        browser_dir / "lab",
        {
            "SEARCHKIT_BASE_URL": lab_emulator.url,
            "SEARCHKIT_USERNAME": lab_emulator.username,
            "SEARCHKIT_PASSWORD": lab_emulator.password,
        },
    )
    try:
        yield lab.start()
    finally:
        lab.stop()


# --- Chromium and the notebook -----------------------------------------------------------


@pytest.fixture(scope="module")
def browser_context(chromium: str, browser_dir: Path) -> Iterator[BrowserContext]:
    """Headless Chromium with a fresh profile, through Playwright."""
    from playwright.sync_api import sync_playwright

    profile = browser_dir / "chromium-profile"
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            user_data_dir=str(profile),
            executable_path=chromium,
            headless=True,
            args=list(CHROMIUM_FLAGS),
            viewport=VIEWPORT,
        )
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        try:
            yield context
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)


def _write_notebook(path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in NOTEBOOK_CELLS]
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(notebook, str(path))


def _kernel_idle(page: Page) -> None:
    """Wait until the notebook's kernel is connected and idle, as the status bar says.

    The toolbar's execution indicator alone says "idle" before any kernel is there.
    """
    from playwright.sync_api import expect

    status = page.locator(".jp-StatusBar-TextItem").filter(has_text=_KERNEL_IDLE)
    expect(status).to_have_count(1, timeout=NOTEBOOK_TIMEOUT_MS)


def _run_all_cells(page: Page) -> None:
    """Run every cell from the Run menu and wait for both widgets (or fail on a traceback)."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    traceback = page.locator(_TRACEBACK).filter(has_text="Traceback")
    done = page.locator(".sk-browser .sk-plot img").or_(traceback)
    done.first.wait_for(state="attached", timeout=NOTEBOOK_TIMEOUT_MS)
    if traceback.count():
        pytest.fail(
            "a cell of the test notebook raised:\n" + "\n".join(traceback.all_inner_texts())
        )
    _kernel_idle(page)


@pytest.fixture
def notebook(
    jupyterlab: JupyterLab,
    browser_context: BrowserContext,
    screenshots: Path,
    request: pytest.FixtureRequest,
) -> Iterator[Page]:
    """A page showing a fresh notebook, all cells run: the create form, then the browser.

    The notebook opens in JupyterLab's single-document mode (no side bars) and a workspace
    of its own, so no other test's notebook is restored beside it. A screenshot of the
    whole page is saved when the test ends, to see what happened if it failed.
    """
    from playwright.sync_api import Error as PlaywrightError

    name = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name)
    _write_notebook(jupyterlab.root / f"{name}.ipynb")
    page = browser_context.new_page()
    try:
        page.goto(f"{jupyterlab.url}/doc/workspaces/{name}/tree/{name}.ipynb")
        page.locator(".jp-Notebook .jp-CodeCell").first.wait_for(timeout=NOTEBOOK_TIMEOUT_MS)
        _kernel_idle(page)
        _run_all_cells(page)
        yield page
    except Exception:
        print(f"JupyterLab log ({jupyterlab.log_path}):\n{jupyterlab.log_tail()}")
        raise
    finally:
        # Only a diagnostic: a page that cannot be photographed must not hide the failure.
        with contextlib.suppress(PlaywrightError):
            page.screenshot(path=str(screenshots / f"{name}-page.png"))
        page.close()


@pytest.fixture
def save_screenshot(screenshots: Path) -> Callable[[Locator, str], Path]:
    """Return ``save(locator, name)``: a screenshot of one element, its path returned."""

    def save(locator: Locator, name: str) -> Path:
        path = screenshots / f"{name}.png"
        locator.screenshot(path=str(path))
        print(f"screenshot: {path}")
        return path

    return save

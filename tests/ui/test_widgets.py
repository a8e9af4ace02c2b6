"""The create form and the index browser, driven headlessly against a real emulator.

The tests use the widgets' public surface: ``fill``, ``submit``, ``refresh``, ``select``,
``wait``, the observable traits (``busy``, ``message``, ``result``) and the static picture
each widget puts in its display data. Where a test must act as a person does (click a
button, press Enter, see what is hidden), it finds the child by its CSS class, the stable
contract the browser tests rely on too, never by a private attribute.
"""

from __future__ import annotations

import json
import statistics
import threading
import time

import ipywidgets as widgets
import matplotlib
import pytest

from searchkit.api.client import Client
from searchkit.errors import (
    IndexExistsError,
    PermissionDeniedError,
    TransportError,
    ValidationError,
    describe_failure,
)
from searchkit.ui.browser import IndexBrowser, index_browser
from searchkit.ui.form import CreateIndexForm, create_index_form
from tests.faults.harness import refused_port
from tests.wall import HANG_S, held, stopwatch

matplotlib.use("Agg")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def stored_names(emulator) -> list[str]:
    return [row["name"] for row in emulator.store.list_indexes(emulator.account)]


def widget_tree(root: widgets.Widget) -> list[widgets.Widget]:
    """Every widget reachable from ``root`` through its traits (children, layout, style)."""
    seen: dict[str, widgets.Widget] = {}
    todo = [root]
    while todo:
        widget = todo.pop()
        if widget.model_id in seen:
            continue
        seen[widget.model_id] = widget
        for name in widget.keys:
            value = getattr(widget, name)
            values = value if isinstance(value, list | tuple) else [value]
            todo += [v for v in values if isinstance(v, widgets.Widget)]
    return list(seen.values())


def part(root: widgets.Widget, css: str) -> widgets.Widget:
    """The one widget under ``root`` carrying the CSS class ``css``."""
    found = [w for w in widget_tree(root) if css in getattr(w, "_dom_classes", ())]
    assert len(found) == 1, f"{len(found)} widgets have the class {css!r}"
    return found[0]


def shown(widget: widgets.Widget) -> bool:
    return widget.layout.display != "none"


def click(form: CreateIndexForm, timeout: float = HANG_S) -> None:
    part(form, "sk-create-button").click()
    assert form.wait(timeout), "the create did not finish in time"


def press_enter(text: widgets.Text) -> None:
    # What the front end sends when Enter is pressed in a Text widget.
    message = {"method": "custom", "content": {"event": "submit"}}
    text._handle_msg({"content": {"data": message}, "buffers": []})


def synced_state(root: widgets.Widget) -> str:
    """All synced state of the tree as text, binary buffers included as latin-1."""

    def text(value):
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value).decode("latin-1")
        return repr(value)

    return json.dumps([w.get_state() for w in widget_tree(root)], default=text)


def display_data(widget: widgets.Widget) -> str:
    return json.dumps(widget._repr_mimebundle_())


def print_handler_times(timings: list[float]) -> None:
    # A figure for the reader; the verdict is the busy state (no stopwatch in a test).
    print(
        f"\nhandlers took median {statistics.median(timings) * 1000:.1f} ms, "
        f"max {max(timings) * 1000:.1f} ms"
    )


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


@pytest.fixture
def form(client):
    return create_index_form(client)


# --- the form: what it shows -----------------------------------------------------------


def test_form_says_which_service_and_account_it_talks_to(form, emulator):
    text = part(form, "sk-service").value
    assert emulator.url in text and emulator.username in text


def test_form_offers_the_spec_regions_and_plans_with_fixed_marked(form):
    assert [value for _, value in part(form, "sk-region").options] == ["eu-west-1", "us-central1"]
    assert dict(part(form, "sk-type").options) == {
        "free": "free",
        "payg (pay as you go)": "payg",
        "fixed (may not be available)": "fixed",
    }


def test_form_widgets_carry_stable_css_classes_for_browser_tests(form):
    assert "sk-create-form" in form._dom_classes
    for css in ("sk-name", "sk-region", "sk-type", "sk-create-button", "sk-output"):
        part(form, css)


# --- the form: creating ----------------------------------------------------------------


def test_clicking_create_creates_the_index_in_the_emulator(form, emulator):
    form.fill("docs", region="us-central1", type="payg")
    click(form)
    rows = [r for r in emulator.store.list_indexes(emulator.account) if r["name"] == "docs"]
    assert [(r["region"], r["type"]) for r in rows] == [("us-central1", "payg")]
    assert form.result is not None and form.result.id == rows[0]["id"]
    assert form.error is None
    assert form.message == "Created index 'docs' in us-central1 on the payg plan."


def test_enter_in_the_name_field_creates(form, emulator):
    form.fill("by-enter")
    press_enter(part(form, "sk-name"))
    assert form.wait(HANG_S)
    assert stored_names(emulator) == ["by-enter"]
    assert form.result.name == "by-enter"


def test_created_card_shows_the_index_with_tokens_masked(form):
    form.fill("docs")
    click(form)
    html = form.static_html()
    assert "sk-card" in html and form.result.endpoint in html
    assert "••••••••" in html
    data = display_data(form)
    for secret in (form.result.token, form.result.read_only_token):
        secret = getattr(secret, "get_secret_value", lambda s=secret: s)()
        assert secret not in html and secret not in data


def test_observers_see_busy_then_the_result(client):
    seen = []
    form = create_index_form(client)
    form.observe(lambda change: seen.append((change["name"], change["new"])), names=["busy"])
    form.fill("watched").submit()
    assert seen == [("busy", True), ("busy", False)]


def test_on_created_is_called_once_with_the_created_index(client):
    seen = []
    form = create_index_form(client, on_created=seen.append)
    form.fill("news")
    click(form)
    assert seen == [form.result]


def test_a_failing_on_created_keeps_the_result_and_says_so(client):
    def broken(index):
        raise RuntimeError("callback broke")

    form = create_index_form(client, on_created=broken)
    form.fill("news")
    click(form)
    assert form.result is not None and form.result.name == "news"
    assert "on_created raised RuntimeError: callback broke" in form.static_html()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "Enter a name for the index."),
        ("   ", "The name is blank: enter a name for the index, not only spaces."),
        ("\t\n", "The name is blank: enter a name for the index, not only spaces."),
    ],
)
def test_empty_or_blank_name_is_refused_before_sending(form, emulator, name, message):
    before = emulator.store.count_indexes()
    form.fill(name)
    part(form, "sk-create-button").click()
    assert not form.busy
    assert form.message == message
    assert isinstance(form.error, ValidationError)
    assert emulator.store.count_indexes() == before
    assert not part(form, "sk-create-button").disabled


def test_an_old_error_clears_when_the_name_is_fixed(form):
    form.fill("   ").submit()
    assert form.message.startswith("The name is blank")
    form.fill("fixed-name")
    assert form.message == ""
    assert "The name is blank" not in form.static_html()


# --- the form: the double-click guard and the threading model --------------------------


def test_button_is_disabled_while_a_slow_request_runs(form, emulator):
    form.fill("slow")
    button = part(form, "sk-create-button")
    with held(emulator):
        button.click()
        assert form.busy
        assert button.disabled and button.description == "Creating…"
        assert form.message == "Creating index 'slow' in eu-west-1 on the free plan…"
    assert form.wait(HANG_S)
    assert not form.busy
    assert form.result.name == "slow"


def test_double_click_during_a_slow_request_creates_one_index(form, emulator):
    form.fill("once")
    button = part(form, "sk-create-button")
    with held(emulator):
        button.click()
        button.click()
        form.submit(wait=False)
    assert form.wait(HANG_S)
    assert stored_names(emulator).count("once") == 1


def test_second_click_after_a_fast_create_does_not_create_again(form, emulator):
    form.fill("once")
    click(form)
    button = part(form, "sk-create-button")
    assert button.disabled and button.description == "Created"
    click(form)
    assert form.submit() is None
    assert stored_names(emulator).count("once") == 1


def test_changing_a_field_allows_another_create(form, emulator):
    form.fill("first")
    click(form)
    form.fill("second")
    assert not part(form, "sk-create-button").disabled
    click(form)
    assert stored_names(emulator) == ["first", "second"]


def test_a_name_that_exists_is_refused_and_named(form, emulator):
    form.fill("second")
    click(form)
    form.fill(region="us-central1")
    assert not part(form, "sk-create-button").disabled
    click(form)
    assert stored_names(emulator).count("second") == 1
    assert isinstance(form.error, IndexExistsError)
    (existing,) = form.error.existing
    # Words for a form's user: no "pass if_exists='return'", which a form cannot do.
    assert form.message == (
        f"An index named 'second' already exists (id {existing.id}); nothing was created. "
        "Choose another name, or use the existing index: client.list_indexes()['second']."
    )
    assert "if_exists" not in form.message


def test_clicks_from_many_threads_create_one_index(form, emulator):
    form.fill("race")
    button = part(form, "sk-create-button")
    threads = [threading.Thread(target=button.click) for _ in range(8)]
    with held(emulator):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert form.wait(HANG_S)
    assert stored_names(emulator).count("race") == 1


def test_the_name_is_sent_as_typed(form, emulator):
    form.fill(" padded ").submit()
    assert stored_names(emulator) == [" padded "]


# --- the form: refusals and failures ---------------------------------------------------


def test_read_only_account_is_refused_in_one_sentence_and_form_stays_usable(emulator):
    emulator.add_user("viewer", "viewer-password-123", read_only=True)
    with Client(
        username="viewer", password="viewer-password-123", base_url=emulator.url, max_retries=0
    ) as viewer:
        form = create_index_form(viewer)
        before = emulator.store.count_indexes()
        form.fill("docs")
        click(form)
        assert isinstance(form.error, PermissionDeniedError)
        assert form.message == describe_failure(form.error)
        assert "read-only" in form.message
        assert form.result is None
        assert not part(form, "sk-create-button").disabled
        assert emulator.store.count_indexes() == before
        assert "viewer-password-123" not in synced_state(form) + display_data(form)


def test_fixed_plan_refused_says_so_and_a_free_one_then_works(form, emulator):
    form.fill("steady", type="fixed")
    click(form)
    assert form.message.endswith("not currently available; choose the free or payg plan.")
    assert "steady" not in stored_names(emulator)
    assert not part(form, "sk-create-button").disabled
    form.fill(type="free")
    click(form)
    assert stored_names(emulator).count("steady") == 1


def test_fixed_plan_is_created_when_the_service_allows_it(form, emulator):
    emulator.allow_fixed = True
    form.fill("steady", type="fixed")
    click(form)
    assert form.result.type == "fixed"


def test_service_down_is_the_shared_sentence_and_form_stays_usable():
    # A port bound but never listened on: every connect is refused, and no other test's
    # server can take the port meanwhile (a stopped emulator's port could be reused by one).
    with refused_port() as port:
        url = f"http://127.0.0.1:{port}"
        with Client(username="u", password="p", base_url=url, max_retries=0) as down:
            form = create_index_form(down)
            form.fill("docs")
            click(form)
    assert isinstance(form.error, TransportError)
    assert form.message == describe_failure(form.error)
    assert form.message.startswith(f"Could not reach the service at {url}")
    assert not part(form, "sk-create-button").disabled and not form.busy


def test_timeout_is_one_clear_sentence(emulator):
    with emulator.client(timeout=0.2, max_retries=0) as slow, held(emulator):
        form = create_index_form(slow)
        form.fill("docs")
        click(form)  # within HANG_S: the held request would take minutes
    assert form.message == describe_failure(form.error)
    assert "no answer within 0.2 s" in form.message
    assert not part(form, "sk-create-button").disabled


def test_wrong_password_is_one_clear_sentence(emulator):
    with Client(
        username=emulator.username,
        password="not-the-password",
        base_url=emulator.url,
        max_retries=0,
    ) as wrong:
        form = create_index_form(wrong)
        form.fill("docs")
        click(form)
    assert form.message == describe_failure(form.error)
    assert form.message.startswith("The service did not accept the username and password")
    assert "not-the-password" not in form.message + display_data(form)


# --- the form: code API, display data and secrets --------------------------------------


def test_fill_and_submit_create_on_the_worker_and_return_the_index(form, emulator):
    index = form.fill("coded", region="us-central1", type="payg").submit()
    assert index is not None and index.name == "coded"
    assert form.result == index
    assert "coded" in stored_names(emulator)


def test_fill_refuses_a_region_that_is_not_offered(form):
    with pytest.raises(ValidationError, match="region 'mars-1' is not one of"):
        form.fill(region="mars-1")


def test_form_state_and_repr_hold_no_token_or_password(form, emulator):
    form.fill("secretive")
    click(form)
    state = synced_state(form) + repr(form) + display_data(form)
    for secret in (form.result.token, form.result.read_only_token, emulator.password):
        secret = getattr(secret, "get_secret_value", lambda s=secret: s)()
        assert secret and secret not in state


def test_form_repr_names_the_service_and_the_result(form, emulator):
    form.fill("docs").submit()
    assert repr(form) == f"CreateIndexForm(base_url={emulator.url!r}, result='docs')"


def test_form_display_data_has_a_static_picture_beside_the_widget_view(form):
    form.fill("pictured", region="us-central1").submit()
    data = form._repr_mimebundle_()
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == form.model_id
    html = data["text/html"]
    assert "<style" not in html
    for text in ("pictured", "us-central1", "Created index &#x27;pictured&#x27;", "sk-card"):
        assert text in html


# --- the browser -----------------------------------------------------------------------


@pytest.fixture
def demo_emulator():
    import datetime as dt

    from searchkit.emulator import Emulator

    clock = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=7, clock=clock) as emu:
        yield emu


@pytest.fixture
def demo_client(demo_emulator):
    with demo_emulator.client(timeout=5, max_retries=0) as client:
        yield client


@pytest.fixture
def demo_browser(demo_client):
    browser = index_browser(demo_client)
    assert browser.wait(HANG_S)
    return browser


def test_browser_lists_the_indexes_and_plots_the_first(demo_browser, demo_emulator):
    names = [r["name"] for r in demo_emulator.store.list_indexes(demo_emulator.account)]
    assert demo_browser.indexes.names() == names
    html = demo_browser.static_html()
    for name in names:
        assert name in html
    assert demo_browser.message == f"6 indexes at {demo_emulator.url}"
    assert demo_browser.selected.names() == [names[0]]
    assert demo_browser.plot_png.startswith(PNG_MAGIC)
    assert demo_browser.plot_png_dark.startswith(PNG_MAGIC)
    assert demo_browser.plot_png != demo_browser.plot_png_dark
    assert not demo_browser.busy


def test_browser_table_shows_the_columns_that_matter_and_details_on_demand(demo_browser):
    table = part(demo_browser, "sk-table").value
    for label in ("name", "id", "type", "region", "queries / day", "writes / s"):
        assert f">{label}</th>" in table
    assert "endpoint" not in table and "vectors" not in table  # in the details, on demand
    details = part(demo_browser, "sk-details")
    assert details.selected_index is None  # closed until asked for
    demo_browser.select(["news-archive"])
    assert demo_browser.wait(HANG_S)
    assert "news-archive" in details.children[0].value
    assert "sk-card" in details.children[0].value


def test_browser_widgets_carry_stable_css_classes(demo_browser):
    assert "sk-browser" in demo_browser._dom_classes
    for css in ("sk-refresh", "sk-select", "sk-tz", "sk-resample", "sk-plot", "sk-table"):
        part(demo_browser, css)
    assert part(demo_browser, "sk-create-form") is demo_browser.form


def test_selection_change_redraws_the_plot(demo_browser):
    first = demo_browser.plot_png
    demo_browser.select(demo_browser.indexes[:3].names())
    assert demo_browser.wait(HANG_S)
    assert demo_browser.selected.names() == demo_browser.indexes[:3].names()
    assert demo_browser.plot_png.startswith(PNG_MAGIC)
    assert demo_browser.plot_png != first


def test_empty_selection_shows_a_hint_instead_of_a_plot(demo_browser):
    demo_browser.select([])
    assert demo_browser.wait(HANG_S)
    assert demo_browser.plot_png is None
    assert not shown(part(demo_browser, "sk-plot"))
    hint = part(demo_browser, "sk-plot-hint")
    assert shown(hint) and "Select one or more indexes" in hint.value


def test_indexes_without_throughput_get_a_sentence_not_an_empty_plot():
    from tests.faults.harness import FaultServer, reply

    quiet = {"id": "0000aaaa-1", "name": "quiet", "type": "free", "throughput_vector": []}
    with FaultServer() as server:
        server.script("GET", then=reply(200, [quiet]))
        with Client(username="u", password="p", base_url=server.url, max_retries=0) as client:
            browser = index_browser(client)
            assert browser.wait(HANG_S)
    assert browser.selected.names() == ["quiet"]
    assert browser.plot_png is None
    assert not shown(part(browser, "sk-plot"))
    assert "no throughput data yet" in part(browser, "sk-plot-hint").value


def test_time_zone_choice_redraws_the_plot(demo_browser):
    utc = demo_browser.plot_png
    demo_browser.tz = "Asia/Kathmandu"
    assert demo_browser.wait(HANG_S)
    assert demo_browser.tz == "Asia/Kathmandu"
    assert demo_browser.plot_png != utc


def test_time_zone_not_in_the_list_is_added_and_a_bad_one_refused(demo_browser):
    demo_browser.tz = "Pacific/Auckland"
    assert part(demo_browser, "sk-tz").value == "Pacific/Auckland"
    with pytest.raises(ValidationError, match=r"unknown time zone 'Berlin'.*Europe/Berlin"):
        demo_browser.tz = "Berlin"


def test_default_resolution_is_15_minute_means_for_a_day_of_minutes(demo_browser):
    assert demo_browser.resample == "auto"
    assert "auto: 15-minute means" in part(demo_browser, "sk-plot").value
    every = demo_browser.plot_png
    demo_browser.resample = ""
    assert demo_browser.wait(HANG_S)
    assert demo_browser.plot_png != every
    assert "auto" not in part(demo_browser, "sk-plot").value


def test_each_index_keeps_its_colour_whatever_the_selection(demo_browser):
    before = dict(demo_browser.colours)
    assert len(set(before.values())) == len(before) == 6
    demo_browser.select(["news-archive"])
    demo_browser.select(["legal-contracts", "docs-search"])
    assert demo_browser.wait(HANG_S)
    assert demo_browser.colours == before


def test_select_by_name_and_unknown_name(demo_browser):
    demo_browser.select(["news-archive", "docs-search"])
    assert demo_browser.selected.names() == ["docs-search", "news-archive"]
    with pytest.raises(KeyError, match="no-such-index"):
        demo_browser.select(["no-such-index"])


def test_refresh_shows_indexes_created_elsewhere_and_keeps_the_selection(
    demo_browser, demo_emulator
):
    demo_browser.select(["news-archive"])
    with demo_emulator.client() as other:
        other.create_index("made-elsewhere", region="eu-west-1", type="free")
    part(demo_browser, "sk-refresh").click()
    assert demo_browser.wait(HANG_S)
    assert "made-elsewhere" in demo_browser.indexes.names()
    assert "made-elsewhere" in part(demo_browser, "sk-table").value
    assert demo_browser.selected.names() == ["news-archive"]
    assert demo_browser.message.startswith("7 indexes")


def test_refresh_failure_keeps_the_data_and_says_why(demo_browser, demo_emulator):
    url = demo_emulator.url
    before = demo_browser.indexes
    demo_emulator.stop()
    demo_browser.refresh()
    assert demo_browser.message.startswith(f"Could not reach the service at {url}")
    assert demo_browser.indexes == before
    assert shown(part(demo_browser, "sk-table"))


def test_browser_on_an_unreachable_service_builds_and_says_why(emulator):
    url = emulator.url
    with emulator.client(max_retries=0) as client:
        emulator.stop()
        browser = index_browser(client)
        assert browser.wait(HANG_S)
    assert isinstance(browser, IndexBrowser)
    assert browser.message.startswith(f"Could not reach the service at {url}")
    assert len(browser.indexes) == 0 and browser.plot_png is None


def test_bad_credentials_show_one_message_no_plot_and_no_create_form(emulator):
    with Client(
        username=emulator.username, password="wrong-password", base_url=emulator.url
    ) as wrong:
        browser = index_browser(wrong)
        assert browser.wait(HANG_S)
    assert browser.message.startswith("The service did not accept the username and password")
    assert not shown(part(browser, "sk-create-section"))
    assert not shown(part(browser, "sk-plot"))
    assert browser.plot_png is None
    html = browser.static_html()
    assert "<img" not in html and "wrong-password" not in html + synced_state(browser)


def test_embedded_form_create_adds_the_index_and_selects_it_without_listing_again(
    demo_browser, demo_emulator, monkeypatch
):
    demo_browser.select(["docs-search"])
    requests = []
    app = demo_emulator.app
    dispatch = app.dispatch

    def counting(request):
        requests.append((request.method, request.path))
        return dispatch(request)

    monkeypatch.setattr(app, "dispatch", counting)
    demo_browser.form.fill("from-browser")
    click(demo_browser.form)
    assert demo_browser.wait(HANG_S)
    assert "from-browser" in demo_browser.indexes.names()
    assert "from-browser" in part(demo_browser, "sk-table").value
    assert demo_browser.selected.names() == ["docs-search", "from-browser"]
    assert demo_browser.message.startswith("6 indexes")  # the status of the last listing
    # The create's own requests (its list before the POST, its check after), nothing more:
    # the browser adds the created index without listing again.
    assert requests == [("GET", "/v2/search"), ("POST", "/v2/search"), ("GET", "/v2/search")]


def test_browser_state_and_display_data_hold_no_token_or_password(demo_browser, demo_emulator):
    demo_browser.form.fill("from-browser")
    click(demo_browser.form)
    demo_browser.select(demo_browser.indexes.names())
    assert demo_browser.wait(HANG_S)
    state = synced_state(demo_browser) + repr(demo_browser) + display_data(demo_browser)
    secrets = [demo_emulator.password]
    for index in demo_browser.indexes:
        secrets += [index.token, index.read_only_token]
    secrets = [getattr(s, "get_secret_value", lambda s=s: s)() for s in secrets]
    assert all(secrets)
    for secret in secrets:
        assert secret not in state


def test_browser_display_data_has_a_static_picture_with_the_plot(demo_browser):
    data = demo_browser._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    html = data["text/html"]
    assert "<style" not in html
    assert "docs-search" in html and 'src="data:image/png;base64,' in html


# --- the threading model: handlers return at once while the worker waits ---------------


def test_building_the_browser_against_a_slow_service_returns_at_once_and_shows_busy(
    demo_emulator, demo_client
):
    with held(demo_emulator), stopwatch("building the browser against a held service"):
        browser = index_browser(demo_client)
        # Busy proves the constructor did not wait for the held list.
        assert browser.busy and browser.message.startswith("Listing the indexes at")
        assert part(browser, "sk-refresh").disabled
    assert browser.wait(HANG_S) and not browser.busy
    assert len(browser.indexes) == 6


def test_handlers_return_while_a_slow_create_is_in_flight(demo_browser, demo_emulator):
    form = demo_browser.form
    form.fill("slow-create")
    with held(demo_emulator):
        timings = [timed(lambda: form.submit(wait=False))]
        assert form.busy
        timings += [
            timed(lambda: setattr(demo_browser, "tz", "Asia/Tokyo")),
            timed(lambda: demo_browser.select(["news-archive", "docs-search"])),
            timed(lambda: setattr(demo_browser, "resample", "1h")),
            timed(lambda: form.fill(region="us-central1")),
            timed(lambda: demo_browser.refresh(wait=False)),
        ]
        # Still busy: no handler waited for the held create.
        assert form.busy and demo_browser.busy
    print_handler_times(timings)
    assert form.wait(HANG_S) and demo_browser.wait(HANG_S)
    assert form.result.name == "slow-create"


def test_handlers_return_while_a_slow_refresh_is_in_flight(demo_browser, demo_emulator):
    with held(demo_emulator):
        timings = [timed(lambda: part(demo_browser, "sk-refresh").click())]
        assert demo_browser.busy
        timings += [
            timed(lambda: setattr(demo_browser, "tz", "Europe/Berlin")),
            timed(lambda: demo_browser.select(["legal-contracts"])),
            timed(lambda: setattr(demo_browser, "resample", "")),
            timed(lambda: demo_browser.form.fill("typed-meanwhile")),
        ]
        assert demo_browser.busy  # no handler waited for the held refresh
    print_handler_times(timings)
    assert demo_browser.wait(HANG_S)
    assert demo_browser.selected.names() == ["legal-contracts"]
    assert demo_browser.tz == "Europe/Berlin"


def test_closing_the_browser_stops_its_worker_and_its_form(demo_browser):
    demo_browser.close()
    demo_browser.form.fill("after-close")
    with pytest.raises(RuntimeError, match="this form was closed"):
        demo_browser.form.submit()
    with pytest.raises(RuntimeError, match="this browser was closed"):
        demo_browser.refresh()
    assert not demo_browser.busy and not demo_browser.form.busy


def test_the_browser_takes_a_zoneinfo_and_refuses_a_bare_offset(demo_client):
    import datetime as dt
    import zoneinfo

    browser = index_browser(demo_client, tz=zoneinfo.ZoneInfo("Europe/Lisbon"))
    assert browser.wait(HANG_S)
    assert browser.tz == "Europe/Lisbon"
    browser.tz = None  # as the constructor takes it: UTC
    assert browser.wait(HANG_S) and browser.tz == "UTC"
    with pytest.raises(ValidationError, match="an IANA name"):
        index_browser(demo_client, tz=dt.timezone(dt.timedelta(hours=-3)))

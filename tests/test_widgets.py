"""The create form and the index browser, driven headlessly against a real emulator.

The tests act as a person would: type into the private child widgets and ``.click()`` the
button; then they check the emulator's store, the form's message and the widgets' state.
"""

from __future__ import annotations

import json
import time

import ipywidgets as widgets
import matplotlib
import pytest

from searchkit.client import Client
from searchkit.errors import (
    AmbiguousCreateError,
    InvalidResponseError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    TransportError,
    ValidationError,
)
from searchkit.widgets import (
    CreateIndexForm,
    IndexBrowser,
    _failure_sentence,
    create_index_form,
    index_browser,
)

matplotlib.use("Agg")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def stored_names(emulator) -> list[str]:
    return [row["name"] for row in emulator.store.list_indexes(emulator.account)]


def click_and_wait(form: CreateIndexForm, timeout: float = 10) -> None:
    form._create.click()
    assert form.wait(timeout), "the create did not finish in time"


def type_into(form: CreateIndexForm, name: str, region: str = "eu-west-1", plan: str = "free"):
    form._region.value = region
    form._type.value = plan
    form._name.value = name


def output_html(form: CreateIndexForm) -> str:
    return "".join(o["data"].get("text/html", "") for o in form._output.outputs)


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


def synced_state(root: widgets.Widget) -> str:
    """All synced state of the tree as text, binary buffers included as latin-1."""

    def text(value):
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value).decode("latin-1")
        return repr(value)

    return json.dumps([w.get_state() for w in widget_tree(root)], default=text)


@pytest.fixture
def form(client):
    return create_index_form(client)


@pytest.fixture
def browser(client):
    return index_browser(client)


# --- the form: what it shows -----------------------------------------------------------


def test_form_says_which_service_and_account_it_talks_to(form, emulator):
    assert emulator.url in form._service.value
    assert emulator.username in form._service.value


def test_form_offers_the_spec_regions_and_plans_with_fixed_marked(form):
    assert [value for _, value in form._region.options] == ["eu-west-1", "us-central1"]
    assert dict(form._type.options) == {
        "free": "free",
        "payg (pay as you go)": "payg",
        "fixed (may not be available)": "fixed",
    }


def test_form_widgets_carry_stable_css_classes_for_browser_tests(form):
    assert "sk-create-form" in form._dom_classes
    for child, css in (
        (form._name, "sk-name"),
        (form._region, "sk-region"),
        (form._type, "sk-type"),
        (form._create, "sk-create-button"),
        (form._output, "sk-output"),
    ):
        assert css in child._dom_classes


# --- the form: creating ----------------------------------------------------------------


def test_clicking_create_creates_the_index_in_the_emulator(form, emulator):
    type_into(form, "docs", region="us-central1", plan="payg")
    click_and_wait(form)
    rows = [r for r in emulator.store.list_indexes(emulator.account) if r["name"] == "docs"]
    assert [(r["region"], r["type"]) for r in rows] == [("us-central1", "payg")]
    assert form.result is not None and form.result.id == rows[0]["id"]
    assert form.error is None
    assert form.message == "Created index 'docs' in us-central1 on the payg plan."


def test_created_card_shows_the_index_with_tokens_masked(form):
    type_into(form, "docs")
    click_and_wait(form)
    shown = output_html(form) + json.dumps(form._output.outputs)
    assert "sk-card" in shown and form.result.endpoint in shown
    assert "••••••••" in shown
    assert form.result.token.get_secret_value() not in shown
    assert form.result.read_only_token.get_secret_value() not in shown


def test_on_created_is_called_once_with_the_created_index(client):
    seen = []
    form = create_index_form(client, on_created=seen.append)
    type_into(form, "news")
    click_and_wait(form)
    assert seen == [form.result]


def test_a_failing_on_created_keeps_the_result_and_says_so(client):
    def broken(index):
        raise RuntimeError("callback broke")

    form = create_index_form(client, on_created=broken)
    type_into(form, "news")
    click_and_wait(form)
    assert form.result is not None and form.result.name == "news"
    assert "on_created raised RuntimeError: callback broke" in output_html(form)


def test_name_is_sent_without_surrounding_spaces(form, emulator):
    type_into(form, "  padded  ")
    click_and_wait(form)
    assert "padded" in stored_names(emulator)


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
    type_into(form, name)
    form._create.click()
    assert not form.busy
    assert form.message == message
    assert isinstance(form.error, ValidationError)
    assert emulator.store.count_indexes() == before
    assert not form._create.disabled


def test_too_long_name_is_refused_in_one_sentence_by_the_client(form, emulator):
    before = emulator.store.count_indexes()
    type_into(form, "x" * 200)
    click_and_wait(form)
    assert form.message == "Name is 200 characters long; at most 128 are allowed."
    assert emulator.store.count_indexes() == before


# --- the form: the double-click guard --------------------------------------------------


def test_button_is_disabled_while_a_slow_request_runs(form, emulator):
    emulator.delay = 0.6
    type_into(form, "slow")
    form._create.click()
    try:
        assert form.busy
        assert form._create.disabled
        assert form._create.description == "Creating…"
        assert form.message == "Creating index 'slow' in eu-west-1 on the free plan…"
    finally:
        assert form.wait(10)
    assert not form.busy
    assert form.result.name == "slow"


def test_double_click_during_a_slow_request_creates_one_index(form, emulator):
    emulator.delay = 0.5
    type_into(form, "once")
    form._create.click()
    form._create.click()
    form._create.click()
    assert form.wait(10)
    assert stored_names(emulator).count("once") == 1


def test_second_click_after_a_fast_create_does_not_create_again(form, emulator):
    type_into(form, "once")
    click_and_wait(form)
    assert form._create.disabled and form._create.description == "Created"
    click_and_wait(form)
    assert form.submit() is None
    assert stored_names(emulator).count("once") == 1


def test_changing_a_field_allows_another_create(form, emulator):
    type_into(form, "first")
    click_and_wait(form)
    form._name.value = "second"
    assert not form._create.disabled
    click_and_wait(form)
    form._region.value = "us-central1"
    assert not form._create.disabled
    click_and_wait(form)
    assert stored_names(emulator).count("first") == 1
    assert stored_names(emulator).count("second") == 2


def test_clicks_from_many_threads_create_one_index(form, emulator):
    import threading

    emulator.delay = 0.2
    type_into(form, "race")
    threads = [threading.Thread(target=form._create.click) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert form.wait(10)
    assert stored_names(emulator).count("race") == 1


# --- the form: refusals and failures ---------------------------------------------------


def test_read_only_account_is_refused_in_one_sentence_and_form_stays_usable(emulator):
    emulator.add_user("viewer", "viewer-password-123", read_only=True)
    with Client(
        username="viewer", password="viewer-password-123", base_url=emulator.url, max_retries=0
    ) as viewer:
        form = create_index_form(viewer)
        before = emulator.store.count_indexes()
        type_into(form, "docs")
        click_and_wait(form)
        assert form.message == (
            "The service refused to create the index: this account is read-only and cannot "
            "create indexes."
        )
        assert isinstance(form.error, PermissionDeniedError)
        assert form.result is None
        assert not form._create.disabled
        assert emulator.store.count_indexes() == before
        assert "viewer-password-123" not in synced_state(form)


def test_fixed_plan_refused_says_so_and_a_free_one_then_works(form, emulator):
    type_into(form, "steady", plan="fixed")
    click_and_wait(form)
    assert form.message == (
        "The service refused to create the index: type 'fixed' is not currently available; "
        "choose the free or payg plan."
    )
    assert "steady" not in stored_names(emulator)
    assert not form._create.disabled
    form._type.value = "free"
    click_and_wait(form)
    assert stored_names(emulator).count("steady") == 1


def test_fixed_plan_is_created_when_the_service_allows_it(form, emulator):
    emulator.allow_fixed = True
    type_into(form, "steady", plan="fixed")
    click_and_wait(form)
    assert form.result.type == "fixed"


def test_service_down_is_one_clear_sentence_and_form_stays_usable(form, emulator):
    url = emulator.url
    emulator.stop()
    type_into(form, "docs")
    click_and_wait(form)
    assert form.message == (
        f"Could not reach the service at {url} (connection refused or host unreachable); "
        "nothing was created."
    )
    assert isinstance(form.error, TransportError)
    assert not form._create.disabled and not form.busy


def test_timeout_is_one_clear_sentence(emulator):
    emulator.delay = 1.0
    with emulator.client(timeout=0.2, max_retries=0) as slow:
        form = create_index_form(slow)
        type_into(form, "docs")
        started = time.monotonic()
        click_and_wait(form)
    assert time.monotonic() - started < 5
    assert form.message == (
        f"Could not reach the service at {emulator.url} (no answer within 0.2 s); "
        "nothing was created."
    )
    assert not form._create.disabled


def test_unknown_outcome_says_to_list_before_trying_again(client):
    cause = TransportError("POST /v2/search to http://h:1: no answer within 30 s")
    try:
        raise AmbiguousCreateError(
            "creating index 'docs' failed after the request was sent"
        ) from cause
    except AmbiguousCreateError as exc:
        sentence = _failure_sentence(exc, client, action="create", name="docs")
    assert sentence == (
        "The service did not confirm whether index 'docs' was created (no answer within 30 s): "
        "refresh the list of indexes before trying again."
    )


def test_wrong_password_is_one_clear_sentence(emulator):
    with Client(
        username=emulator.username,
        password="not-the-password",
        base_url=emulator.url,
        max_retries=0,
    ) as wrong:
        form = create_index_form(wrong)
        type_into(form, "docs")
        click_and_wait(form)
    assert form.message == (
        f"The service did not accept the username and password of {emulator.username!r}; "
        "nothing was created."
    )


# --- the form: code API and secrets ----------------------------------------------------


def test_fill_and_submit_create_on_the_calling_thread(form, emulator):
    index = form.fill("coded", region="us-central1", type="payg").submit()
    assert index is not None and index.name == "coded"
    assert form.result == index
    assert "coded" in stored_names(emulator)


def test_fill_refuses_a_region_that_is_not_offered(form):
    with pytest.raises(ValidationError, match="region 'mars-1' is not one of"):
        form.fill(region="mars-1")


def test_form_state_and_repr_hold_no_token_or_password(form, emulator):
    type_into(form, "secretive")
    click_and_wait(form)
    state = synced_state(form) + repr(form)
    tokens = (form.result.token.get_secret_value(), form.result.read_only_token.get_secret_value())
    for secret in (*tokens, emulator.password):
        assert secret and secret not in state


def test_form_repr_names_the_service_and_the_result(form, emulator):
    form.fill("docs").submit()
    assert repr(form) == f"CreateIndexForm(base_url={emulator.url!r}, result='docs')"


# --- the browser -----------------------------------------------------------------------


@pytest.fixture
def demo_emulator():
    import datetime as dt

    from searchkit.emulator import Emulator

    clock = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
    with Emulator(demo=True, seed=7, clock=clock) as emu:
        yield emu


@pytest.fixture
def demo_browser(demo_emulator):
    with demo_emulator.client(timeout=5, max_retries=0) as client:
        yield index_browser(client)


def test_browser_lists_the_indexes_and_plots_the_first(demo_browser, demo_emulator):
    names = [r["name"] for r in demo_emulator.store.list_indexes(demo_emulator.account)]
    assert demo_browser.indexes.names() == names
    for name in names:
        assert name in demo_browser._table.value
    assert demo_browser.message == f"6 indexes at {demo_emulator.url}"
    assert demo_browser.selected.names() == [names[0]]
    assert demo_browser.plot_png.startswith(PNG_MAGIC)
    assert demo_browser._plot.value == demo_browser.plot_png


def test_browser_widgets_carry_stable_css_classes(demo_browser):
    assert "sk-browser" in demo_browser._dom_classes
    for child, css in (
        (demo_browser._refresh, "sk-refresh"),
        (demo_browser._select, "sk-select"),
        (demo_browser._tz, "sk-tz"),
        (demo_browser._plot, "sk-plot"),
        (demo_browser._table, "sk-table"),
        (demo_browser.form, "sk-create-form"),
    ):
        assert css in child._dom_classes


def test_selection_change_redraws_the_plot(demo_browser):
    first = demo_browser.plot_png
    demo_browser._select.value = tuple(i.id for i in demo_browser.indexes[:3])
    assert demo_browser.selected.names() == demo_browser.indexes[:3].names()
    assert demo_browser.plot_png.startswith(PNG_MAGIC)
    assert demo_browser.plot_png != first
    assert demo_browser._plot.value == demo_browser.plot_png


def test_empty_selection_shows_a_hint_instead_of_a_plot(demo_browser):
    demo_browser._select.value = ()
    assert demo_browser.plot_png is None
    assert demo_browser._plot.layout.display == "none"
    assert demo_browser._hint.layout.display is None
    assert "Select one or more indexes" in demo_browser._hint.value


def test_time_zone_choice_redraws_the_plot(demo_browser):
    utc = demo_browser.plot_png
    demo_browser._tz.value = "Asia/Kathmandu"
    assert demo_browser.tz == "Asia/Kathmandu"
    assert demo_browser.plot_png != utc


def test_time_zone_not_in_the_list_is_added_and_a_bad_one_refused(demo_browser):
    demo_browser.tz = "Pacific/Auckland"
    assert demo_browser._tz.value == "Pacific/Auckland"
    with pytest.raises(ValidationError, match="unknown time zone 'Mars/Olympus'"):
        demo_browser.tz = "Mars/Olympus"


def test_resample_choice_redraws_the_plot(demo_browser):
    raw = demo_browser.plot_png
    demo_browser._resample.value = "1h"
    assert demo_browser.plot_png != raw


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
    demo_browser._refresh.click()
    assert "made-elsewhere" in demo_browser.indexes.names()
    assert "made-elsewhere" in demo_browser._table.value
    assert demo_browser.selected.names() == ["news-archive"]
    assert demo_browser.message.startswith("7 indexes")


def test_refresh_failure_keeps_the_data_and_says_why(demo_browser, demo_emulator):
    url = demo_emulator.url
    before = demo_browser.indexes
    demo_emulator.stop()
    demo_browser._refresh.click()
    assert demo_browser.message == (
        f"Could not reach the service at {url} (connection refused or host unreachable)."
    )
    assert demo_browser.indexes == before


def test_browser_on_an_unreachable_service_builds_and_says_why(emulator):
    url = emulator.url
    with emulator.client(max_retries=0) as client:
        emulator.stop()
        browser = index_browser(client)
    assert isinstance(browser, IndexBrowser)
    assert browser.message.startswith(f"Could not reach the service at {url}")
    assert len(browser.indexes) == 0 and browser.plot_png is None


def test_embedded_form_create_refreshes_the_list_and_selects_the_new_index(demo_browser):
    demo_browser.select(["docs-search"])
    type_into(demo_browser.form, "from-browser")
    click_and_wait(demo_browser.form)
    assert "from-browser" in demo_browser.indexes.names()
    assert "from-browser" in demo_browser._table.value
    assert demo_browser.selected.names() == ["docs-search", "from-browser"]
    assert demo_browser.message.startswith("7 indexes")


def test_browser_state_holds_no_token_or_password(demo_browser, demo_emulator):
    type_into(demo_browser.form, "from-browser")
    click_and_wait(demo_browser.form)
    demo_browser.select(demo_browser.indexes.names())
    state = synced_state(demo_browser) + repr(demo_browser)
    secrets = [demo_emulator.password]
    for index in demo_browser.indexes:
        secrets += [index.token.get_secret_value(), index.read_only_token.get_secret_value()]
    assert all(secrets)
    for secret in secrets:
        assert secret not in state


@pytest.mark.parametrize(
    ("error", "sentence"),
    [
        (
            RateLimitError("POST /v2/search -> 429: slow down", retry_after=30, status=429),
            "The service is limiting the rate of requests; try again in 30 s; nothing was created.",
        ),
        (
            ServerError("POST /v2/search -> 503: down", status=503, server_message="down"),
            "The service failed (HTTP 503: down); nothing was created.",
        ),
        (
            InvalidResponseError("GET /v2/search -> 200: unexpected response: not JSON"),
            "The service sent an answer that could not be read (unexpected response: not "
            "JSON); nothing was created.",
        ),
        (
            RuntimeError("password=hunter22 went wrong"),
            "The index could not be created: unexpected RuntimeError: password=*** went wrong.",
        ),
    ],
)
def test_other_failures_are_one_sentence_without_secrets(client, error, sentence):
    assert _failure_sentence(error, client, action="create", name="docs") == sentence

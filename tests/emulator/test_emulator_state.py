"""The Store without HTTP: accounts, validation, atomic creates, clocks, closing."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from searchkit.emulator import Store
from searchkit.emulator.data import PRESETS
from searchkit.emulator.state import InvalidRequestError, StoreClosedError


@pytest.fixture
def store():
    with Store(seed=2, clock=1_700_000_000, window_minutes=5) as s:
        yield s


def test_authenticate_accepts_the_right_password_only(store):
    account = store.add_account("alice", "right")

    assert store.authenticate("alice", "right") == account
    assert store.authenticate("alice", "right") == account
    assert store.authenticate("alice", "wrong") is None
    assert store.authenticate("nobody", "right") is None


def test_adding_an_existing_account_resets_password_and_keeps_customer_id(store):
    first = store.add_account("alice", "old")
    second = store.add_account("alice", "new", read_only=True)

    assert second.customer_id == first.customer_id
    assert second.read_only is True
    assert store.authenticate("alice", "old") is None
    assert store.authenticate("alice", "new") == second


@pytest.mark.parametrize(("username", "password"), [("", "x"), ("a:b", "x"), ("a", "")])
def test_invalid_account_credentials_are_refused(store, username, password):
    with pytest.raises(ValueError):
        store.add_account(username, password)


def test_password_hash_is_salted_pbkdf2_never_the_password(tmp_path, product_password_hashing):
    # At the product's cost (the other tests' emulators hash at one iteration: conftest.py).
    path = str(tmp_path / "s.sqlite")
    with Store(path) as s:
        s.add_account("alice", "plain-text-password")
        s.add_account("bob", "plain-text-password")
        assert s.authenticate("alice", "plain-text-password").username == "alice"
        assert s.authenticate("alice", "plain-text-passwort") is None
        assert s.authenticate("carol", "plain-text-password") is None
    raw = b"".join(file.read_bytes() for file in tmp_path.iterdir())

    assert product_password_hashing == 20_000
    assert b"plain-text-password" not in raw
    assert len(set(re.findall(rb"pbkdf2_sha256\$20000\$[0-9a-f]{32}\$[0-9a-f]{64}", raw))) == 2


def test_create_uses_clock_preset_and_round_robin_zone():
    with Store(
        clock=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), zones=["UTC", "Asia/Kolkata"]
    ) as s:
        account = s.add_account("a", "b")
        first = s.create_index(account, name="one", region="eu-west-1", type="free")
        second = s.create_index(account, name="two", region="us-central1", type="fixed")

    assert first["creation_time"] == 1_704_067_200
    assert first["throughput_vector"][0]["x"].endswith("+0000 UTC")
    assert second["throughput_vector"][0]["x"].endswith("+0530 IST")
    assert second["max_vector_count"] == PRESETS["fixed"]["max_vector_count"]


def test_invalid_fields_raise_and_create_nothing(store):
    account = store.add_account("a", "b")
    specs = [
        {"name": "ok", "region": "eu-west-1", "type": "free"},
        {"name": "bad", "region": "moon", "type": "free"},
    ]

    with pytest.raises(InvalidRequestError, match="region") as caught:
        store.create_many(account, specs)

    assert caught.value.field == "region"
    assert isinstance(caught.value, ValueError)
    assert store.count_indexes() == 0


def test_create_many_only_if_empty_skips_an_account_with_indexes(store):
    account = store.add_account("a", "b")
    spec = {"name": "x", "region": "eu-west-1", "type": "payg"}

    assert len(store.create_many(account, [spec, spec], only_if_empty=True)) == 2
    assert store.create_many(account, [spec], only_if_empty=True) == []
    assert store.count_indexes(account) == 2


def test_list_orders_by_creation_time_then_insertion(store):
    account = store.add_account("a", "b")
    for name, created in [("late", 300), ("early", 100), ("tie-1", 200), ("tie-2", 200)]:
        store.create_index(
            account, name=name, region="eu-west-1", type="free", creation_time=created
        )

    names = [index["name"] for index in store.list_indexes(account)]

    assert names == ["early", "tie-1", "tie-2", "late"]


@pytest.mark.parametrize(
    "clock",
    [
        dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=dt.timezone.utc),
        1_700_000_000,
        1_700_000_000.9,
        lambda: 1_700_000_000.5,
    ],
)
def test_every_clock_form_sets_creation_time(clock):
    with Store(clock=clock) as s:
        account = s.add_account("a", "b")
        index = s.create_index(account, name="x", region="eu-west-1", type="free")

    assert index["creation_time"] == 1_700_000_000


@pytest.mark.parametrize("clock", [dt.datetime(2024, 1, 1), "now", True])
def test_invalid_clocks_are_refused(clock):
    with pytest.raises(ValueError, match="clock"):
        Store(clock=clock)


def test_unknown_zone_is_refused():
    with pytest.raises(ValueError, match="Mars/Olympus"):
        Store(zones=["Mars/Olympus"])


def test_closed_store_refuses_work(store):
    store.close()
    store.close()

    with pytest.raises(StoreClosedError):
        store.count_indexes()


def test_memory_path_string_is_one_shared_database():
    with Store(":memory:") as s:
        account = s.add_account("a", "b")
        s.create_index(account, name="x", region="eu-west-1", type="free")

        assert s.path is None
        assert s.count_indexes() == 1

"""Issue 28 item 13: an https address of a plain-http server (the emulator) says so."""

from __future__ import annotations

import pytest

import searchkit as sk


def test_https_to_the_plain_http_emulator_hints_at_the_scheme():
    with sk.Emulator(demo=True, seed=1) as emu:
        url = emu.url.replace("http://", "https://")
        client = sk.Client(
            username=emu.username, password=emu.password, base_url=url, max_retries=0
        )
        with pytest.raises(sk.TransportError) as caught:
            client.list_indexes()
    # It said only "the connection was reset", with no word about TLS.
    assert str(caught.value).endswith(
        "; the address says https: if the server speaks plain http (as the emulator does), "
        "use an http:// address"
    )
    assert emu.password not in str(caught.value)

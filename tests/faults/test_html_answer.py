"""Issue 28 item 13: a web page's answer (a Jupyter port) is named, not pasted."""

from __future__ import annotations

import pytest

import searchkit as sk
from tests.faults.harness import FaultServer, reply

PAGE = (
    "<!DOCTYPE HTML>\n<html>\n<head>\n<title>404: Not Found</title>\n"
    '<link rel="stylesheet" href="/static/style/bootstrap.min.css">\n</head>\n'
    "<body><div id='header'>Jupyter Server</div><p>You are requesting a page that does not "
    "exist!</p></body></html>"
)


def test_an_html_page_is_named_by_its_title_not_pasted_into_the_error():
    with FaultServer() as server:
        server.script("GET", then=reply(404, PAGE))
        client = sk.Client(username="u", password="p", base_url=server.url, max_retries=0)
        with pytest.raises(sk.NotFoundError) as caught:
            client.list_indexes()
    text = str(caught.value)
    assert text.endswith(
        "an HTML page titled '404: Not Found', not the API's JSON: is the address that of "
        "the service?"
    )
    assert "<" not in text and "stylesheet" not in text

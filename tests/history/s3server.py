"""moto's S3 server on loopback, counting the requests it answers (by the server, not a mock).

Used by the S3 tests (history, alerts' claims) and by ``bench/requests.py``: each request
the server answers is counted as ``LIST`` (a GET of a bucket: ListObjects), ``GET``,
``HEAD``, ``PUT``, ``DELETE`` or ``POST`` (a multi-object delete), so a test can say how
many requests a call made. :func:`running` starts one for a fixture, :func:`new_bucket`
makes a test its own bucket.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["new_bucket", "options", "running"]  # and CountingMotoServer, made on first use

# moto, boto3 and flask are imported when a server or a bucket is first made, not with this
# module: every xdist worker imports every test module while collecting, and moto's import
# (boto3, flask, jinja2...) is about 0.5 s of CPU that only the worker running the S3 tests
# needs. ``CountingMotoServer`` is built then too (a module ``__getattr__``).


def options(endpoint: str) -> dict[str, str]:
    """``storage_options`` for a History on this server (moto takes any credentials)."""
    return {
        "endpoint_override": endpoint,
        "scheme": "http",
        "access_key": "testing",
        "secret_key": "testing",
        "region": "us-east-1",
    }


def __getattr__(name: str) -> Any:
    if name == "CountingMotoServer":
        return _counting_server()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _counting_server() -> type:
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from moto.server import ThreadedMotoServer
    from werkzeug.serving import make_server

    class CountingMotoServer(ThreadedMotoServer):  # type: ignore[misc]
        """A moto server on 127.0.0.1 (a free port) that counts the requests it answers."""

        def __init__(self) -> None:
            super().__init__(ip_address="127.0.0.1", port=0, verbose=False)
            self._lock = threading.Lock()
            self.counts: collections.Counter[str] = collections.Counter()

        @property
        def endpoint(self) -> str:
            host, port = self.get_host_and_port()
            return f"http://{host}:{port}"

        def reset(self) -> None:
            with self._lock:
                self.counts.clear()

        def counted(self) -> dict[str, int]:
            """The requests answered since the last :meth:`reset`, by kind."""
            with self._lock:
                return dict(self.counts)

        def _count(self, environ: dict[str, Any]) -> None:
            method = environ["REQUEST_METHOD"]
            path = environ.get("PATH_INFO", "/").strip("/")
            kind = method
            if method == "GET" and "/" not in path:  # the bucket itself: a listing
                kind = "LIST"
            with self._lock:
                self.counts[kind] += 1

        def _server_entry(self) -> None:
            app = DomainDispatcherApplication(create_backend_app)

            def counting(environ: dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
                self._count(environ)
                return app(environ, start)  # type: ignore[no-any-return]

            self._server = make_server(
                self._ip_address, self._port, counting, True, request_handler=MotoRequestHandler
            )
            self._server_ready_event.set()
            self._server.serve_forever(poll_interval=0.01)  # stop() waits for a poll

    return CountingMotoServer


@contextlib.contextmanager
def running() -> Iterator[Any]:
    """A :class:`CountingMotoServer` started on loopback for the ``with`` block (a fixture),
    then stopped."""
    server = _counting_server()()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def new_bucket(endpoint: str, test_name: str) -> tuple[Any, str]:
    """Create a bucket named after ``test_name`` (a test's own, so tests share the server);
    return a boto3 client of the server and the bucket's name."""
    import boto3

    name = test_name.replace("_", "-")[:60].lower()
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=name)
    return client, name

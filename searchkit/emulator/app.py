"""WSGI application of the emulator: routing, Basic auth, request parsing, JSON errors.

Handlers only parse the request, call the :class:`~searchkit.emulator.state.Store` with
keyword arguments and serialise the answer. Every response, errors included, is JSON with
``Content-Type: application/json``; errors are ``{"error": "<message>"}``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import logging
import math
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any

from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from searchkit.emulator import data
from searchkit.emulator.state import (
    Account,
    InvalidRequestError,
    Store,
    StoreBusyError,
    StoreClosedError,
    validate_index_fields,
)

__all__ = [
    "CHALLENGE",
    "DEFAULT_MAX_BODY_BYTES",
    "REALM",
    "ApiError",
    "EmulatorApp",
    "MalformedChunkError",
    "basic_credentials",
    "openapi_document",
]

logger = logging.getLogger("searchkit.emulator")

REALM = "searchkit-emulator"
#: The challenge of every 401: RFC 7617's charset parameter says credentials are UTF-8.
CHALLENGE: Mapping[str, str] = MappingProxyType(
    {"WWW-Authenticate": f'Basic realm="{REALM}", charset="UTF-8"'}
)
DEFAULT_MAX_BODY_BYTES = 64 * 1024
# Unread request bodies up to this size are drained before answering (see _drain).
_DRAIN_LIMIT_BYTES = 1024 * 1024
_REQUIRED_FIELDS = ("name", "region", "type")


class MalformedChunkError(ValueError):
    """A ``Transfer-Encoding: chunked`` request body breaks the chunked syntax."""


class ApiError(Exception):
    """An error answer: HTTP status, message for the JSON body, extra headers."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


def _dumps(payload: Any) -> str:
    if isinstance(payload, dict):
        vector = payload.get("throughput_vector")
        if isinstance(vector, data.ThroughputVector) and list(payload)[-1] == "throughput_vector":
            head = {key: value for key, value in payload.items() if key != "throughput_vector"}
            separator = "," if head else ""
            return f'{_dumps(head)[:-1]}{separator}"throughput_vector":{vector.json}}}'
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _json_response(
    payload: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    # Lists of indexes never come here: they are streamed (see _json_array).
    response = Response(_dumps(payload).encode(), status=status, content_type="application/json")
    # Index bodies carry tokens; keep them out of any cache.
    response.headers["Cache-Control"] = "no-store"
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def basic_credentials(header: str) -> tuple[str, str] | None:
    """Return ``(username, password)`` from an ``Authorization: Basic`` value, else ``None``.

    The credentials are decoded as UTF-8 (RFC 7617, ``charset="UTF-8"``) and NFC-normalised
    (RFC 8265's OpaqueString, as RFC 7617 asks), so a password typed with combining accents
    matches the same password typed precomposed. Anything that is not Basic, not strict
    base64, not UTF-8 or has no ``:`` gives ``None``.

    Args:
        header: The header value as the WSGI server gives it (bytes as Latin-1 characters).

    Returns:
        The user name and password, or ``None``.
    """
    scheme, _, value = header.strip(" \t").partition(" ")
    if scheme.lower() != "basic":
        return None
    value = value.strip(" \t")
    if not value.isascii():
        return None
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    username, colon, password = decoded.partition(":")
    if not colon or not username:
        return None
    return unicodedata.normalize("NFC", username), unicodedata.normalize("NFC", password)


def _json_array(items: Iterable[str], piece_bytes: int = 64 * 1024) -> Iterator[bytes]:
    """Yield a JSON array of ``items`` (JSON texts) in pieces of about ``piece_bytes``.

    The answer is sent as it is built (chunked), so a list of any size holds one index's
    text and one piece at a time, never the whole body; each piece is one socket write.
    Encoding one index per step also keeps the GIL moving between request threads, where
    one encoder call over a whole list would stall the others (writers included).
    """
    pending = ["["]
    size = 1
    separator = ""
    for item in items:
        pending.append(separator)
        pending.append(item)
        separator = ","
        size += len(item) + 1
        if size >= piece_bytes:
            yield "".join(pending).encode()
            pending.clear()
            size = 0
    pending.append("]")
    yield "".join(pending).encode()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class EmulatorApp:
    """The WSGI application serving the Search Index Management API.

    Args:
        store: Where accounts and indexes live.
        allow_fixed: Accept ``type: "fixed"`` on create; refused with 400 otherwise.
        delay: Seconds to wait before answering each ``/v2`` request (changeable later).
        max_body_bytes: Largest accepted request body; larger ones get 413.

    Example:
        >>> from werkzeug.test import Client as TestClient
        >>> app = EmulatorApp(Store())
        >>> TestClient(app).get("/v2/search").status_code
        401
    """

    def __init__(
        self,
        store: Store,
        *,
        allow_fixed: bool = False,
        delay: float = 0.0,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.store = store
        self.allow_fixed = allow_fixed
        self._delay_changed = threading.Condition()
        self._held = 0
        self.delay = delay
        self.max_body_bytes = max_body_bytes
        self.url_map = Map(
            [
                Rule("/v2/search", endpoint="search", methods=["GET", "POST"]),
                Rule("/openapi.json", endpoint="openapi", methods=["GET"]),
                Rule("/healthz", endpoint="healthz", methods=["GET"]),
            ],
            # Redirects would carry credentials elsewhere, and clients do not follow them.
            merge_slashes=False,
        )
        self._handlers: dict[tuple[str, str], Callable[[Request], Response]] = {
            ("search", "GET"): self.list_indexes,
            ("search", "HEAD"): self.list_indexes,
            ("search", "POST"): self.create_index,
            ("openapi", "GET"): self.openapi,
            ("openapi", "HEAD"): self.openapi,
            ("healthz", "GET"): self.healthz,
            ("healthz", "HEAD"): self.healthz,
        }

    @property
    def delay(self) -> float:
        """Seconds waited before answering each ``/v2`` request."""
        return self._delay

    @delay.setter
    def delay(self, seconds: float) -> None:
        seconds = float(seconds)
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError("delay must be a finite number of seconds >= 0")
        with self._delay_changed:
            self._delay = seconds
            self._delay_changed.notify_all()

    @property
    def held(self) -> int:
        """How many requests :attr:`delay` holds now (a test waits for this, not a time)."""
        with self._delay_changed:
            return self._held

    def _wait_delay(self) -> None:
        # A condition rather than sleep: lowering the delay releases requests already waiting,
        # so a test can hold requests "for ever" and let them go when it has looked.
        started = time.monotonic()
        with self._delay_changed:
            self._held += 1
            try:
                while (left := started + self._delay - time.monotonic()) > 0:
                    self._delay_changed.wait(left)
            finally:
                self._held -= 1

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        request = Request(environ)
        response = self.dispatch(request)
        self._drain(request)
        return response(environ, start_response)

    def dispatch(self, request: Request) -> Response:
        """Route ``request`` and return the response, turning every failure into JSON."""
        try:
            endpoint, _ = self.url_map.bind_to_environ(request.environ).match()
            if endpoint == "search" and self._delay:
                self._wait_delay()
            return self._handlers[endpoint, request.method](request)
        except ApiError as error:
            return _json_response({"error": error.message}, error.status, error.headers)
        except MethodNotAllowed as error:
            allowed = sorted(error.valid_methods or ())
            return _json_response(
                {"error": f"method {request.method} is not allowed; use {', '.join(allowed)}"},
                405,
                {"Allow": ", ".join(allowed)},
            )
        except NotFound:
            return _json_response({"error": f"no such endpoint: {request.path[:200]}"}, 404)
        except HTTPException as error:
            status = error.code or 400
            return _json_response({"error": error.description or error.name}, status)
        except StoreClosedError:
            return _json_response({"error": "the emulator is shutting down"}, 503)
        except StoreBusyError:
            return _json_response(
                {"error": "the database is busy; try again"}, 503, {"Retry-After": "1"}
            )
        except Exception:
            logger.exception("unexpected error handling %s %s", request.method, request.path)
            return _json_response({"error": "internal server error"}, 500)

    def list_indexes(self, request: Request) -> Response:
        """Answer ``GET /v2/search`` with the account's indexes."""
        account = self._authenticate(request)
        response = Response(
            _json_array(self.store.list_indexes_json(account)),
            status=200,
            content_type="application/json",
            direct_passthrough=True,
        )
        response.headers["Cache-Control"] = "no-store"
        return response

    def create_index(self, request: Request) -> Response:
        """Answer ``POST /v2/search`` by creating one index."""
        account = self._authenticate(request)
        if account.read_only:
            raise ApiError(403, "this account is read-only and cannot create indexes")
        body = self._json_body(request)
        if not isinstance(body, dict):
            raise ApiError(400, "request body must be a JSON object")
        for field in _REQUIRED_FIELDS:
            if field not in body:
                raise ApiError(400, f"missing required field '{field}'")
        try:
            validate_index_fields(body["name"], body["region"], body["type"])
        except InvalidRequestError as error:
            raise ApiError(400, error.message) from None
        if body["type"] == "fixed" and not self.allow_fixed:
            raise ApiError(400, "type 'fixed' is not currently available")
        index = self.store.create_index(
            account, name=body["name"], region=body["region"], type=body["type"]
        )
        return _json_response(index)

    def openapi(self, request: Request) -> Response:
        """Answer ``GET /openapi.json`` (no authentication)."""
        return _json_response(openapi_document(request.host_url.rstrip("/")))

    def healthz(self, request: Request) -> Response:
        """Answer ``GET /healthz`` (no authentication)."""
        return _json_response({"status": "ok"})

    def _authenticate(self, request: Request) -> Account:
        header = request.headers.get("Authorization")
        if not header:
            raise ApiError(401, "authentication required: use HTTP Basic credentials", CHALLENGE)
        credentials = basic_credentials(header)
        if credentials is None:
            raise ApiError(
                401, "the Authorization header must carry HTTP Basic credentials", CHALLENGE
            )
        account = self.store.authenticate(*credentials)
        if account is None:
            raise ApiError(401, "invalid username or password", CHALLENGE)
        return account

    def _json_body(self, request: Request) -> Any:
        if request.mimetype != "application/json":
            raise ApiError(415, "Content-Type must be application/json")
        charset = request.mimetype_params.get("charset")
        if charset is not None and charset.lower().replace("_", "-") not in ("utf-8", "utf8"):
            raise ApiError(415, "Content-Type charset must be utf-8")
        raw = self._read_body(request)
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            raise ApiError(400, "request body is not valid JSON") from None

    def _read_body(self, request: Request) -> bytes:
        too_large = ApiError(413, f"request body exceeds {self.max_body_bytes} bytes")
        length = _declared_length(request)
        if length is not None and length > self.max_body_bytes:
            raise too_large
        # Whatever happens below, the body is not to be drained afterwards: it is either
        # read, or the connection is not worth saving.
        request.environ[_BODY_TAKEN] = True
        limit = self.max_body_bytes + 1 if length is None else length
        try:
            raw = _read_up_to(request.environ["wsgi.input"], limit)
        except MalformedChunkError as error:
            raise ApiError(400, f"malformed chunked request body: {error}") from None
        except TimeoutError:
            raise ApiError(408, "the request body was not received in time") from None
        except OSError:
            raise ApiError(400, "the request body could not be read") from None
        if length is not None and len(raw) < length:
            raise ApiError(400, "the request body is shorter than its Content-Length")
        if len(raw) > self.max_body_bytes:
            raise too_large
        return raw

    def _drain(self, request: Request) -> None:
        # Unread request bytes make close() send a reset that can destroy the answer before
        # the client reads it: read a body nobody looked at (up to a limit) before answering.
        if request.environ.get(_BODY_TAKEN):
            return
        try:
            length = _declared_length(request)
        except ApiError:
            return
        if length is not None and length > _DRAIN_LIMIT_BYTES:
            return
        try:
            _read_up_to(
                request.environ["wsgi.input"],
                _DRAIN_LIMIT_BYTES if length is None else length,
                keep=False,
            )
        except (OSError, ValueError):
            # The client went away or sent garbage; there is nothing left to protect.
            return


_BODY_TAKEN = "searchkit.emulator.body_taken"


def _declared_length(request: Request) -> int | None:
    """Return the body length a request declares: ``None`` when chunked, 0 without one."""
    if request.environ.get("wsgi.input_terminated"):
        return None
    declared = request.headers.get("Content-Length")
    if declared is None:
        return 0
    declared = declared.strip(" \t")
    if not declared.isascii() or not declared.isdigit():
        raise ApiError(400, "the Content-Length header is not a whole number")
    return int(declared)


def _read_up_to(stream: Any, limit: int, *, keep: bool = True) -> bytes:
    """Read ``limit`` bytes, or fewer when the stream ends first (a read may return less)."""
    buffer = bytearray()
    taken = 0
    while taken < limit:
        chunk = stream.read(min(limit - taken, 65536))
        if not chunk:
            break
        taken += len(chunk)
        if keep:
            buffer += chunk
    return bytes(buffer)


def _limit_schema(description: str) -> dict[str, Any]:
    return {"type": "integer", "format": "int64", "description": description}


def openapi_document(server_url: str | None = None) -> dict[str, Any]:
    """Return the OpenAPI 3.1 description of the emulated API.

    The document is the file ``openapi.json`` beside this module (data, not code; a test
    checks that it names the emulator's regions, plans and limit fields).

    Args:
        server_url: Base address to list under ``servers``; omitted when ``None``.

    Returns:
        The document as a JSON-ready dict (a new one each call).
    """
    document: dict[str, Any] = json.loads(_openapi_text())
    if server_url is not None:
        document["servers"] = [{"url": server_url}]
    return document


@functools.lru_cache(maxsize=1)
def _openapi_text() -> str:
    return resources.files("searchkit.emulator").joinpath("openapi.json").read_text("utf-8")

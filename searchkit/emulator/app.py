"""WSGI application of the emulator: routing, Basic auth, request parsing, JSON errors.

Handlers only parse the request, call the :class:`~searchkit.emulator.store.Store` with
keyword arguments and serialise the answer. Every response, errors included, is JSON with
``Content-Type: application/json``; errors are ``{"error": "<message>"}``.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from searchkit.emulator import data
from searchkit.emulator.store import (
    MAX_NAME_LENGTH,
    Account,
    InvalidRequestError,
    Store,
    StoreBusyError,
    StoreClosedError,
    validate_index_fields,
)

__all__ = ["DEFAULT_MAX_BODY_BYTES", "REALM", "ApiError", "EmulatorApp", "openapi_document"]

logger = logging.getLogger("searchkit.emulator")

REALM = "searchkit-emulator"
DEFAULT_MAX_BODY_BYTES = 64 * 1024
# Unread request bytes make the kernel answer close() with a reset, which can destroy the
# response before the client reads it; bodies up to this size are drained first.
_DRAIN_LIMIT_BYTES = 1024 * 1024
_REQUIRED_FIELDS = ("name", "region", "type")


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
    if isinstance(payload, list):
        # One encoder call per element: the C encoder holds the GIL for a whole call, and a
        # long list in one call would stall every other request thread (writers included).
        body = "[" + ",".join(_dumps(item) for item in payload) + "]"
    else:
        body = _dumps(payload)
    response = Response(body.encode(), status=status, content_type="application/json")
    # Index bodies carry tokens; keep them out of any cache.
    response.headers["Cache-Control"] = "no-store"
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


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
        self._delay = seconds

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
                time.sleep(self._delay)
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
        return _json_response(self.store.list_indexes(account))

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
        challenge = {"WWW-Authenticate": f'Basic realm="{REALM}"'}
        if not request.headers.get("Authorization"):
            raise ApiError(401, "authentication required: use HTTP Basic credentials", challenge)
        credentials = request.authorization
        if credentials is None or credentials.type != "basic" or credentials.username is None:
            raise ApiError(
                401, "the Authorization header must carry HTTP Basic credentials", challenge
            )
        account = self.store.authenticate(credentials.username, credentials.password or "")
        if account is None:
            raise ApiError(401, "invalid username or password", challenge)
        return account

    def _json_body(self, request: Request) -> Any:
        if request.mimetype != "application/json":
            raise ApiError(415, "Content-Type must be application/json")
        charset = request.mimetype_params.get("charset")
        if charset is not None and charset.lower().replace("_", "-") not in ("utf-8", "utf8"):
            raise ApiError(415, "Content-Type charset must be utf-8")
        too_large = ApiError(413, f"request body exceeds {self.max_body_bytes} bytes")
        length = request.content_length
        if length is not None and length > self.max_body_bytes:
            raise too_large
        # A stream read may return less than asked for; read until the end or one byte past
        # the limit, never more.
        buffer = bytearray()
        while len(buffer) <= self.max_body_bytes:
            chunk = request.stream.read(self.max_body_bytes + 1 - len(buffer))
            if not chunk:
                break
            buffer += chunk
        if len(buffer) > self.max_body_bytes:
            raise too_large
        raw = bytes(buffer)
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            raise ApiError(400, "request body is not valid JSON") from None

    def _drain(self, request: Request) -> None:
        length = request.content_length
        if length is not None and length > _DRAIN_LIMIT_BYTES:
            return
        try:
            remaining = _DRAIN_LIMIT_BYTES
            while remaining > 0:
                chunk = request.stream.read(min(remaining, 65536))
                if not chunk:
                    return
                remaining -= len(chunk)
        except (OSError, ValueError):
            # The client went away; there is nothing left to protect.
            return


def _limit_schema(description: str) -> dict[str, Any]:
    return {"type": "integer", "format": "int64", "description": description}


def openapi_document(server_url: str | None = None) -> dict[str, Any]:
    """Return the OpenAPI 3.1 description of the emulated API.

    Args:
        server_url: Base address to list under ``servers``; omitted when ``None``.

    Returns:
        The document as a JSON-ready dict.
    """
    error_responses = {
        "400": {"$ref": "#/components/responses/BadRequest"},
        "401": {"$ref": "#/components/responses/Unauthorized"},
    }
    limits = {
        "max_vector_count": "Maximum number of vectors allowed in the index.",
        "max_monthly_reranks": "Maximum monthly rerank operations; -1 means unlimited.",
        "max_daily_updates": "Maximum daily update operations; -1 means unlimited.",
        "max_daily_queries": "Maximum daily query operations; -1 means unlimited.",
        "max_monthly_bandwidth": "Maximum monthly bandwidth in bytes; -1 means unlimited.",
        "max_writes_per_second": "Write rate limit, operations per second.",
        "max_query_per_second": "Query rate limit, operations per second.",
        "max_reads_per_request": "Maximum number of reads allowed in one request.",
        "max_writes_per_request": "Maximum number of writes allowed in one request.",
    }
    index_properties: dict[str, Any] = {
        "customer_id": {"type": "string", "description": "ID of the owner of the index."},
        "id": {"type": "string", "format": "uuid", "description": "Unique ID of the index."},
        "name": {"type": "string", "description": "Name of the index."},
        "endpoint": {"type": "string", "description": "The REST endpoint of the index."},
        "type": {"type": "string", "enum": list(data.TYPES), "description": "Payment plan."},
        "region": {
            "type": "string",
            "enum": list(data.REGIONS),
            "description": "Region where the index is currently deployed.",
        },
        "partner_email": {
            "type": "string",
            "description": "Hosting-platform integration e-mail; empty string otherwise.",
        },
        "token": {"type": "string", "description": "REST token of the index."},
        "read_only_token": {"type": "string", "description": "Read-only REST token."},
        **{field: _limit_schema(text) for field, text in limits.items()},
        "creation_time": {
            "type": "integer",
            "format": "int64",
            "description": "Unix timestamp of creation (seconds).",
        },
        "input_enrichment_enabled": {"type": "boolean"},
        "throughput_vector": {
            "type": "array",
            "description": "Synthetic per-minute throughput over the last day.",
            "items": {"$ref": "#/components/schemas/ThroughputPoint"},
        },
    }
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Search Index Management API (searchkit emulator)",
            "version": "2",
            "description": (
                "Offline emulator of the Search Index Management API. Limit values per "
                "type are the emulator's presets, not the real service's."
            ),
        },
        "security": [{"basicAuth": []}],
        "paths": {
            "/v2/search": {
                "get": {
                    "operationId": "listSearchIndexes",
                    "summary": "List the search indexes of the authenticated account.",
                    "responses": {
                        "200": {
                            "description": "The indexes, oldest first.",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "array",
                                        "items": {"$ref": "#/components/schemas/SearchIndex"},
                                    }
                                }
                            },
                        },
                        "401": error_responses["401"],
                    },
                },
                "post": {
                    "operationId": "createSearchIndex",
                    "summary": "Create a search index.",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/CreateSearchIndex"}
                            }
                        },
                    },
                    "responses": {
                        "200": {
                            "description": "The created index.",
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/SearchIndex"}
                                }
                            },
                        },
                        **error_responses,
                        "403": {"$ref": "#/components/responses/Forbidden"},
                        "413": {"$ref": "#/components/responses/TooLarge"},
                        "415": {"$ref": "#/components/responses/UnsupportedMediaType"},
                    },
                },
            }
        },
        "components": {
            "securitySchemes": {"basicAuth": {"type": "http", "scheme": "basic"}},
            "schemas": {
                "SearchIndex": {
                    "type": "object",
                    "properties": index_properties,
                    "required": list(index_properties),
                },
                "ThroughputPoint": {
                    "type": "object",
                    "properties": {
                        "x": {
                            "type": "string",
                            "description": (
                                "Go time text, layout '2006-01-02 15:04:05.999999999 -0700 MST'."
                            ),
                        },
                        "y": {"type": "number", "minimum": 0},
                    },
                    "required": ["x", "y"],
                },
                "CreateSearchIndex": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH},
                        "region": {"type": "string", "enum": list(data.REGIONS)},
                        "type": {"type": "string", "enum": list(data.TYPES)},
                    },
                    "required": list(_REQUIRED_FIELDS),
                },
                "Error": {
                    "type": "object",
                    "properties": {"error": {"type": "string"}},
                    "required": ["error"],
                },
            },
            "responses": {
                name: {
                    "description": description,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                    **extra,
                }
                for name, description, extra in (
                    ("BadRequest", "Invalid JSON or field.", {}),
                    (
                        "Unauthorized",
                        "Missing or wrong credentials.",
                        {
                            "headers": {
                                "WWW-Authenticate": {
                                    "schema": {"type": "string"},
                                    "description": f'Basic realm="{REALM}"',
                                }
                            }
                        },
                    ),
                    ("Forbidden", "The account is read-only.", {}),
                    ("TooLarge", "Request body too large.", {}),
                    ("UnsupportedMediaType", "Content-Type is not application/json.", {}),
                )
            },
        },
    }
    if server_url is not None:
        document["servers"] = [{"url": server_url}]
    return document

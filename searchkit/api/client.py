"""The HTTP client of the Search Index Management API.

One ``requests.Session`` per client, Basic auth (UTF-8), timeouts on every read and a
deadline on every call. Listing is safe to repeat, so GET is retried (urllib3's ``Retry``:
connection errors, 429, 502, 503, 504, and a body cut short or reset, with exponential
backoff, jitter and ``Retry-After``). Creating is not: a POST is never re-sent once it may
have reached the service. After an ambiguous failure the client lists the indexes and
returns the one its request created, or raises ``AmbiguousCreateError``.

Bodies are streamed and capped (``max_response_bytes``, counted after decompression), so a
hostile or broken server cannot take the process's memory. Loopback traffic (the emulator)
never goes through a proxy; https traffic honours ``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

import requests
from urllib3.exceptions import (
    MaxRetryError,
)

from searchkit._version import __version__
from searchkit.api._failures import Failures
from searchkit.api._samename import duplicate_warning, one_create_at_a_time
from searchkit.api._transport import (
    Adapter,
    BasicAuth,
    BodyFault,
    Call,
    CallRetry,
    Session,
    cut_at,
    read_body,
    was_sent,
)
from searchkit.api.config import (
    API_PATH,
    DEFAULT_TIMEOUT,
    ENV_TIMEOUT,
    Credentials,
    normalise_timeout,
    parse_timeout,
    positive,
    resolve_base_url,
    resolve_credentials,
)
from searchkit.errors import (
    AmbiguousCreateError,
    IndexExistsError,
    IndexMismatchWarning,
    InvalidResponseError,
    SearchKitError,
    ServerError,
    TransportError,
    ValidationError,
    redact,
)
from searchkit.model.index import IndexList, SearchIndex
from searchkit.model.limits import REGIONS, TYPES
from searchkit.model.secret import secret_value

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "DEFAULT_TIMEOUT", "Client", "mismatch"]

log = logging.getLogger("searchkit")

#: Largest answer read, after decompression: 1 GiB, over eight times the largest list seen
#: on a real account (1,542 indexes, 117.6 MB) and enough for 10,000 indexes with a full
#: day of points each (a list of 6,945 such indexes is 587 MB).
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024 * 1024
PATH = API_PATH
# How far the service's clock may lag ours when matching a lost create by creation_time.
CLOCK_SKEW_SECONDS = 300

IfExists = Literal["raise", "return", "create"]


class Client:
    """A client of the Search Index Management API.

    Args:
        username: Account username; with ``password``, else both from the environment.
        password: Account password. Never shown in reprs, logs or errors.
        base_url: Service address, e.g. ``https://api.example.com``; else
            ``SEARCHKIT_BASE_URL``. Plain http is refused except to loopback.
        timeout: Seconds, one number for connect and read, or a ``(connect, read)`` pair;
            else ``SEARCHKIT_TIMEOUT`` (``"10"`` or ``"5,30"``); else 5 s and 30 s.
        max_retries: Retries of a list call after connection errors, 429, 502, 503, 504,
            or an answer cut short.
        backoff_factor: First backoff in seconds; doubles per retry, plus jitter.
        retry_after_cap: Longest ``Retry-After`` honoured by sleeping; a longer one
            raises ``RateLimitError`` at once.
        retry_budget: Seconds one list request may spend retrying after its first failure.
        deadline: Seconds one call (``list_indexes()``, or ``create_index()`` with its
            lists) may take in all, retries included, however slowly a server answers.
            Default: twice connect plus read timeout (70 s with the default timeouts).
        max_response_bytes: Largest answer read, counted after decompression; a larger
            one raises InvalidResponseError naming the value that reads it. Default 1 GiB.
        on_close: Called once by :meth:`close`, e.g. to stop an emulator started for
            this client (see :func:`searchkit.connect`).

    Example:
        >>> with sk.Emulator(demo=True) as emu, emu.client() as client:
        ...     indexes = client.list_indexes()
    """

    def __init__(
        self,
        *,
        username: str | None = None,
        password: str | None = None,
        base_url: str | None = None,
        timeout: float | tuple[float, float] | None = None,
        max_retries: int = 3,
        backoff_factor: float = 0.5,
        retry_after_cap: float = 60.0,
        retry_budget: float = 60.0,
        deadline: float | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        on_close: Callable[[], object] | None = None,
    ) -> None:
        self._credentials: Credentials = resolve_credentials(username, password)
        self.base_url: str = resolve_base_url(base_url)
        if timeout is None:
            env_timeout = parse_timeout()
            self.timeout: tuple[float, float] = (
                DEFAULT_TIMEOUT
                if env_timeout is None
                else normalise_timeout(env_timeout, ENV_TIMEOUT)
            )
        else:
            self.timeout = normalise_timeout(timeout)
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValidationError(f"max_retries must be a whole number >= 0, got {max_retries!r}")
        self.max_retries = max_retries
        self.deadline: float = (
            2 * (self.timeout[0] + self.timeout[1])
            if deadline is None
            else float(positive(deadline, "deadline"))
        )
        self.max_response_bytes: int = positive(
            max_response_bytes, "max_response_bytes", whole=True
        )
        self._on_close = on_close
        self._auth = BasicAuth(self._credentials.username, self._credentials.password)
        # Index tokens this client has received, masked in any later error text.
        self._known_tokens: set[str] = set()
        self._policy = self._retry_policy(backoff_factor, retry_after_cap, retry_budget)
        self._adapter = Adapter(self._policy)
        self._session = self._make_session()
        self._fail = Failures(
            base_url=self.base_url,
            api_path=PATH,
            timeout=self.timeout,
            max_response_bytes=self.max_response_bytes,
            username=self._credentials.username,
            credentials_source=self._credentials.source,
            secrets=self._secrets,
        )

    def _retry_policy(
        self, backoff_factor: float, retry_after_cap: float, retry_budget: float
    ) -> CallRetry:
        # Every parameter here exists from urllib3 2.0 on.
        return CallRetry(
            total=self.max_retries,
            connect=self.max_retries,
            read=self.max_retries,
            status=self.max_retries,
            other=0,
            redirect=0,
            allowed_methods=frozenset({"GET"}),
            status_forcelist=frozenset({429, 502, 503, 504}),
            backoff_factor=backoff_factor,
            backoff_jitter=backoff_factor,
            backoff_max=max(backoff_factor, 10.0),
            respect_retry_after_header=True,
            raise_on_status=False,
            raise_on_redirect=False,
            retry_after_cap=retry_after_cap,
            retry_budget=retry_budget,
        )

    def _make_session(self) -> requests.Session:
        session = Session()
        # Explicit auth on the session means requests never falls back to ~/.netrc.
        session.auth = self._auth
        session.headers["User-Agent"] = (
            f"searchkit/{__version__} {requests.utils.default_user_agent()}"
        )
        session.headers["Accept"] = "application/json"
        # Only what Inflater undoes (requests would also offer br/zstd when installed).
        session.headers["Accept-Encoding"] = "gzip, deflate"
        session.max_redirects = 0
        session.mount("http://", self._adapter)
        session.mount("https://", self._adapter)
        return session

    # -- public API --------------------------------------------------------------------

    @property
    def username(self) -> str:
        """The account's username (not a secret)."""
        return self._credentials.username

    @property
    def credentials_source(self) -> str:
        """Where the credentials came from: ``"arguments"`` or ``"environment"``."""
        return self._credentials.source

    def list_indexes(self) -> IndexList:
        """List the search indexes of the account.

        Returns:
            An IndexList, in the order the service sent.

        Raises:
            AuthenticationError, PermissionDeniedError, RateLimitError, ServerError,
            TransportError, InvalidResponseError: see :mod:`searchkit.errors`. Each names
            the operation, ``"list indexes"``.
        """
        call = Call("list indexes", self.deadline)
        with self._naming(call):
            return self._list(call)

    def create_index(
        self,
        name: str,
        *,
        region: str,
        type: str,
        if_exists: IfExists = "raise",
        reconcile: bool = True,
    ) -> SearchIndex:
        """Create a search index and return it.

        By default the indexes are listed first and a name already in use is refused, so
        re-running a notebook cell does not make a second, paid index. The POST is sent
        once. If it fails after it may have reached the service (timeout, connection
        reset, 5xx, unreadable answer), the client lists the indexes and returns the one
        this call created: same name, not there before, created since the call began.

        Args:
            name: Index name, sent exactly as given; must not be blank.
            region: One of ``eu-west-1``, ``us-central1``.
            type: One of ``free``, ``payg``, ``fixed`` (fixed may be refused by the service).
            if_exists: What to do when an index of that name exists: ``"raise"``
                (IndexExistsError naming it), ``"return"`` (return it and create nothing;
                an ``IndexMismatchWarning`` says so when its region or type differ from
                the ones asked for; two of that name raise IndexExistsError) or
                ``"create"`` (make another on purpose; then nothing is listed first, and a
                create that meets no failure costs one request). With ``"raise"`` and
                ``"return"``, creates of one name in one process wait for each other, and
                the indexes are listed again after creating: when another process created
                the same name meanwhile, a ``DuplicateIndexWarning`` names both ids.
            reconcile: After an ambiguous failure, list to find the index; with False,
                such a failure raises AmbiguousCreateError at once.

        Returns:
            The created (or, with ``if_exists="return"``, the existing) index.

        Raises:
            ValidationError: a bad field, before anything is sent, or the service's 400.
            IndexExistsError: the name is taken and ``if_exists="raise"``.
            AmbiguousCreateError: the outcome cannot be known; list before retrying.
        """
        body = self._validated_create_body(name, region, type)
        if if_exists not in ("raise", "return", "create"):
            raise ValidationError(
                f"if_exists must be 'raise', 'return' or 'create', got {if_exists!r}"
            )
        call = Call(f"create index {body['name']!r}", self.deadline)
        with self._naming(call):
            return self._create(call, body, if_exists, reconcile)

    def close(self) -> None:
        """Close the HTTP session, then run the ``on_close`` hook (once)."""
        self._session.close()
        hook, self._on_close = self._on_close, None
        if hook is not None:
            hook()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Client(base_url={self.base_url!r}, username={self.username!r}, "
            f"credentials from {self.credentials_source})"
        )

    # -- operations --------------------------------------------------------------------

    @contextlib.contextmanager
    def _naming(self, call: Call) -> Iterator[None]:
        """Make every searchkit error of the call name the operation the user asked for."""
        try:
            yield
        except SearchKitError as exc:
            if exc.operation is None:
                exc.operation = call.operation
            raise

    def _list(self, call: Call) -> IndexList:
        data = self._request(call, "GET", PATH)
        indexes: IndexList = self._adapt("GET", IndexList.from_json_bytes, data)
        self._remember_tokens(indexes)
        return indexes

    def _create(
        self, call: Call, body: dict[str, str], if_exists: IfExists, reconcile: bool
    ) -> SearchIndex:
        name = body["name"]
        if if_exists == "create":
            return self._post(call, body, None, reconcile)
        with one_create_at_a_time(self.base_url, self.username, name):
            # The deadline bounds this call's own requests, not its wait for another create.
            call.ends = time.monotonic() + call.seconds
            same = [i for i in self._list(call) if i.name == name]
            if same and if_exists == "return" and len(same) == 1:
                differs = mismatch(same[0], region=body["region"], type=body["type"])
                if differs is not None:
                    # stacklevel: this frame, create_index, then the caller's line.
                    warnings.warn(differs, IndexMismatchWarning, stacklevel=3)
                return same[0]
            if same:
                raise IndexExistsError(name, same, choosing=if_exists == "return")
            index = self._post(call, body, set(), reconcile)
            self._check_alone(call, index)
            return index

    def _post(
        self, call: Call, body: dict[str, str], before: set[str | None] | None, reconcile: bool
    ) -> SearchIndex:
        started = time.time()
        try:
            data = self._request(call, "POST", PATH, json_body=body)
            index: SearchIndex = self._adapt("POST", SearchIndex.from_json_bytes, data)
            self._remember_tokens([index])
            return index
        except (TransportError, ServerError, InvalidResponseError) as exc:
            if isinstance(exc, TransportError) and not exc.sent:
                raise  # never reached the service: nothing to reconcile, safe to retry
            if not reconcile:
                raise AmbiguousCreateError(
                    f"the request was sent, then failed ({exc}); the index may or may not "
                    "exist: list the indexes before trying again",
                    method="POST",
                    path=PATH,
                    status=exc.status,
                ) from exc
            return self._reconcile(call, body["name"], before, started, exc)

    def _check_alone(self, call: Call, index: SearchIndex) -> None:
        """List once more: another process may have created the same name meanwhile."""
        try:
            listed = self._list(call)
        except SearchKitError as exc:
            log.warning(
                "created index %r (%s), but listing to check that no other process created "
                "the same name meanwhile failed (%s)",
                index.name,
                index.id,
                exc,
            )
            return
        duplicate = duplicate_warning(index, listed)
        if duplicate is not None:
            # stacklevel: this frame, _create, create_index, then the caller's line.
            warnings.warn(duplicate, stacklevel=4)

    def _reconcile(
        self,
        call: Call,
        name: str,
        before: set[str | None] | None,
        started: float,
        cause: SearchKitError,
    ) -> SearchIndex:
        log.warning("create of %r failed ambiguously (%s); listing to reconcile", name, cause)
        try:
            after = self._list(call)
        except SearchKitError as exc:
            raise AmbiguousCreateError(
                f"the request was sent, then failed ({cause}), and listing to check also "
                f"failed ({exc}); the index may or may not exist: list the indexes before "
                "trying again",
                method="POST",
                path=PATH,
                status=cause.status,
            ) from cause
        floor = started - CLOCK_SKEW_SECONDS
        ceiling = time.time() + CLOCK_SKEW_SECONDS if before is None else math.inf
        named = [i for i in after if i.name == name]
        # With a list made first, "new" is exact; without one (if_exists="create"), any
        # index of that name may be this call's, and only its creation time can tell.
        new = named if before is None else [i for i in named if i.id not in before]
        found = [i for i in new if i.creation_time is None or floor <= i.creation_time <= ceiling]
        if len(found) == 1:
            log.warning("the lost create of %r did happen: found index %s", name, found[0].id)
            return found[0]
        if not new and isinstance(cause, ServerError):
            # The service answered with an error and the list shows nothing new: not created.
            raise cause
        if found and before is None:
            what = (
                f"{len(found)} indexes of that name created within {CLOCK_SKEW_SECONDS} s "
                "of this call are listed"
            )
        elif found:
            what = f"{len(found)} new indexes of that name are listed"
        elif new:
            # Only when the service's clock is far from ours (e.g. an emulator on a fixed
            # clock): the index may well be this call's, but that cannot be checked.
            what = (
                f"{len(new)} {'' if before is None else 'new '}index(es) of that name are "
                f"listed, but none with a creation_time within {CLOCK_SKEW_SECONDS} s of this "
                "call (do the clocks differ?)"
            )
        else:
            what = "no new index of that name is listed yet"
        raise AmbiguousCreateError(
            f"the request was sent, then failed ({cause}); {what}, so it cannot be told "
            "whether this call created one: list the indexes before trying again",
            method="POST",
            path=PATH,
            status=cause.status,
        ) from cause

    # -- internals ---------------------------------------------------------------------

    @staticmethod
    def _validated_create_body(name: object, region: object, type: object) -> dict[str, str]:
        # The spec allows "any string naming the index": only a blank one is refused here,
        # and the name is sent as typed (" docs" stays " docs"). The service may refuse
        # more; its 400 comes back as a ValidationError with its words.
        if not isinstance(name, str):
            raise ValidationError(f"name must be a string, got {_kind(name)}")
        if not name.strip():
            raise ValidationError("name must not be empty or blank")
        region_text = getattr(region, "value", region)
        type_text = getattr(type, "value", type)
        if region_text not in REGIONS:
            raise ValidationError(
                f"region {region_text!r} is not one of the allowed values: {', '.join(REGIONS)}"
            )
        if type_text not in TYPES:
            raise ValidationError(
                f"type {type_text!r} is not one of the allowed values: {', '.join(TYPES)}"
            )
        return {"name": name, "region": str(region_text), "type": str(type_text)}

    def _url(self, path: str) -> str:
        return self.base_url + path

    def _secrets(self) -> tuple[str, ...]:
        return (self._credentials.password, self._auth.encoded, *self._known_tokens)

    def _remember_tokens(self, indexes: Iterable[SearchIndex]) -> None:
        for index in indexes:
            for value in (index.token, index.read_only_token):
                real = secret_value(value)
                if real:
                    self._known_tokens.add(str(real))

    def _request(
        self,
        call: Call,
        method: str,
        path: str,
        *,
        json_body: Mapping[str, Any] | None = None,
    ) -> bytes:
        """Send one request (retrying a GET as the policy allows); return the body's bytes.

        The models decode the bytes in one pass (``IndexList.from_json_bytes``).
        """
        response, content = self._exchange(call, method, path, json_body)
        status = response.status_code
        if status >= 400:
            raise self._fail.status_error(method, path, response, content)
        if not content.strip():
            raise self._fail.invalid(method, status, "the body is empty")
        return content

    def _exchange(
        self, call: Call, method: str, path: str, json_body: Mapping[str, Any] | None
    ) -> tuple[requests.Response, bytes]:
        """Send a request and read its whole body, within the call's deadline."""
        url = self._url(path)
        retry = self._policy.for_call(call.ends)
        while True:
            remaining = call.remaining()
            if remaining <= 0:
                raise self._fail.deadline_error(call, method, path, retry.tally.retries)
            timeout = (min(self.timeout[0], remaining), min(self.timeout[1], remaining))
            started = time.monotonic()
            try:
                with self._adapter.retrying(retry), cut_at(call.ends):
                    response = self._session.request(
                        method,
                        url,
                        json=json_body,
                        timeout=timeout,
                        allow_redirects=False,
                        stream=True,
                    )
            except requests.RequestException as exc:
                elapsed = time.monotonic() - started
                log.debug(
                    "%s %s -> failed (%s) in %.3fs", method, path, type(exc).__name__, elapsed
                )
                if call.remaining() <= 0 and was_sent(exc):
                    raise self._fail.deadline_error(
                        call, method, path, retry.tally.retries
                    ) from None
                raise self._fail.transport_error(method, path, exc, retry.tally.retries) from None
            try:
                content = read_body(
                    call, method, path, response, fail=self._fail, read_timeout=self.timeout[1]
                )
            except BodyFault as fault:
                response.close()
                fault.error.retries = retry.tally.retries
                if method != "GET" or fault.cause is None:
                    raise fault.error from None
                state = getattr(response.raw, "retries", None)
                state = state if isinstance(state, CallRetry) else retry
                try:
                    retry = state.increment(method, url, error=fault.cause)
                except MaxRetryError:
                    raise fault.error from None
                log.debug("%s %s -> body failed (%s); retrying", method, path, fault.error.message)
                retry.sleep()
                continue
            finally:
                response.close()
            elapsed = time.monotonic() - started
            log.debug("%s %s -> %s in %.3fs", method, path, response.status_code, elapsed)
            if 300 <= response.status_code < 400:
                location = redact(response.headers.get("Location", "?"), self._secrets())
                raise SearchKitError(
                    f"the service redirects to {location}; "
                    "redirects are not followed so credentials stay with the configured host "
                    "(set base_url to the final address)",
                    status=response.status_code,
                    method=method,
                    path=path,
                )
            return response, content

    def _adapt(self, method: str, convert: Any, data: Any) -> Any:
        try:
            return convert(data)
        except InvalidResponseError as exc:
            what = self._fail.masked(exc.message)
            if isinstance(data, bytes) and what.startswith("the body is not JSON"):
                # Masked before it is cut, so no secret straddling the cut shows a prefix.
                snippet = self._fail.masked(data[:2048].decode("utf-8", "replace"))[:120]
                what += f"; it starts with {snippet!r}"
            raise self._fail.invalid(method, 200, what) from None


def mismatch(index: SearchIndex, *, region: str, type: str) -> str | None:
    """Say how an existing index differs from the region and type asked for (None if not).

    Example:
        "an index named 'docs' exists in us-central1 on the free plan, not in eu-west-1 on
        the payg plan as asked; it was returned as it is (if_exists='return')"
    """
    have = (
        str(getattr(index.region, "value", index.region)),
        str(getattr(index.type, "value", index.type)),
    )
    if have == (region, type):
        return None
    return (
        f"an index named {index.name!r} exists in {have[0]} on the {have[1]} plan, not in "
        f"{region} on the {type} plan as asked; it was returned as it is (if_exists='return')"
    )


def _kind(value: object) -> str:
    names: dict[type, str] = {dict: "a JSON object", list: "a JSON array", str: "a string"}
    return names.get(type(value), type(value).__name__)

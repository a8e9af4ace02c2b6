"""How the client words its errors: masked, naming the call, the address and the limits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import requests
from urllib3.exceptions import ReadTimeoutError

from searchkit._units import binary_size
from searchkit.api._transport import Call, Tally, failure_reason, retry_after_seconds, was_sent
from searchkit.errors import (
    AuthenticationError,
    InvalidResponseError,
    RateLimitError,
    SearchKitError,
    TransportError,
    error_for_status,
    redact,
    server_message,
)

__all__ = ["Failures"]


class Failures:
    """The exceptions of one client, worded from its settings; secrets masked in any text.

    Args:
        base_url: The service's address, named in transport errors.
        api_path: The API's path, named in errors about an answer's shape.
        timeout: The (connect, read) timeouts, named when one passed.
        max_response_bytes: The cap on an answer, named when it is passed.
        username: The account, named when the service refuses it.
        credentials_source: ``"environment"`` or ``"arguments"``, said with a refusal.
        secrets: Returns the texts to mask (it may grow: tokens the client received).
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_path: str,
        timeout: tuple[float, float],
        max_response_bytes: int,
        username: str,
        credentials_source: str,
        secrets: Callable[[], tuple[str, ...]],
    ) -> None:
        self.base_url = base_url
        self.api_path = api_path
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self.username = username
        self.credentials_source = credentials_source
        self._secrets = secrets

    def too_large(
        self, method: str, status: int, what: str, needed: int | None = None
    ) -> InvalidResponseError:
        """Say that an answer is over ``max_response_bytes`` (``what`` it did), and which
        value reads it: ``needed`` (the announced size), else at least twice the cap."""
        cap = self.max_response_bytes
        raise_to = needed if needed is not None else 2 * cap
        return self.invalid(
            method,
            status,
            f"the answer {what}, over the limit of max_response_bytes="
            f"{cap} ({binary_size(cap)}); a Client made with max_response_bytes="
            f"{raise_to} ({binary_size(raise_to)}){'' if needed else ' or more'} reads it",
        )

    def deadline_error(self, call: Call, method: str, path: str, retries: int) -> TransportError:
        """Say that the call ran past its deadline."""
        return TransportError(
            f"the call did not finish within its deadline of {call.seconds:g} s",
            url=self.base_url,
            method=method,
            path=path,
            sent=True,
            retries=retries,
        )

    def body_transport_error(self, method: str, path: str, what: str) -> TransportError:
        """Say that reading an answer failed on the connection (``what``)."""
        return TransportError(what, url=self.base_url, method=method, path=path, sent=True)

    def invalid(self, method: str, status: int, what: str) -> InvalidResponseError:
        """Say that an answer has not the shape the API promises (``what``, our words)."""
        # ``what`` is the client's own words; any text from the service in it is masked by
        # the caller (masking here would also hit our words when a secret is very short).
        return InvalidResponseError(
            f"unexpected response from the service: {what}",
            status=status,
            method=method,
            path=self.api_path,
        )

    def masked(self, text: str) -> str:
        """Return ``text`` with every secret the client knows masked."""
        return redact(text, self._secrets())

    def status_error(
        self, method: str, path: str, response: requests.Response, content: bytes
    ) -> SearchKitError:
        """Return the exception of an HTTP error answer, the server's message masked."""
        status = response.status_code
        message = server_message(content, secrets=self._secrets()) or f"HTTP {status}"
        cls = error_for_status(status)
        text = message
        retries = getattr(getattr(response.raw, "retries", None), "tally", Tally()).retries
        kwargs: dict[str, Any] = {
            "status": status,
            "method": method,
            "path": path,
            "server_message": message,
            "retries": retries,
        }
        if cls is AuthenticationError:
            # No parentheses: describe() and the CLI wrap this text, and nested brackets
            # read badly in one line.
            text += (
                f"; the service refused user {self.username!r}, whose credentials come from "
                f"{self._credential_origin()}"
            )
        if cls is RateLimitError:
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            if retry_after is not None:
                text += f" (retry after {retry_after:.0f} s)"
            return RateLimitError(text, retry_after=retry_after, **kwargs)
        return cls(text, **kwargs)

    def _credential_origin(self) -> str:
        if self.credentials_source == "environment":
            return "the environment variables SEARCHKIT_USERNAME and SEARCHKIT_PASSWORD"
        return "the username= and password= arguments"

    def transport_error(
        self, method: str, path: str, exc: requests.RequestException, retries: int
    ) -> TransportError:
        """Say why a request got no answer: connect, read, proxy or reset."""
        if isinstance(exc, requests.ConnectTimeout):
            what = f"could not connect within {self.timeout[0]:g} s"
        elif isinstance(exc, requests.ReadTimeout) or isinstance(
            failure_reason(exc), ReadTimeoutError
        ):
            # After the last retry requests reports a read timeout as a ConnectionError.
            what = f"no answer within {self.timeout[1]:g} s"
        elif isinstance(exc, requests.exceptions.ProxyError):
            what = "the proxy refused or failed the connection"
        elif isinstance(exc, requests.ConnectionError) and not was_sent(exc):
            what = "connection refused or host unreachable"
        elif isinstance(exc, requests.ConnectionError):
            what = "the connection was reset or closed before an answer"
        else:
            what = type(exc).__name__
        if (
            self.base_url.startswith("https://")
            and isinstance(exc, requests.exceptions.SSLError | requests.ConnectionError)
            and not isinstance(exc, requests.ConnectTimeout | requests.exceptions.ProxyError)
        ):
            # A TLS greeting to a plain-http server (the emulator) ends like this.
            what += "; the address says https: if the server speaks plain http (as the "
            what += "emulator does), use an http:// address"
        return TransportError(
            what,
            url=self.base_url,
            method=method,
            path=path,
            sent=was_sent(exc),
            retries=retries,
        )

"""The service a command talks to: the environment's, checked and explained in CLI words.

Every command that calls the API (list, create, collect) builds its client here, so they
all say the same thing when nothing is configured: which variables to set, and that
``searchkit serve --demo`` starts an emulator to try against.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from searchkit.errors import ConfigError

if TYPE_CHECKING:
    from searchkit.api.client import Client

__all__ = ["client_from_environment"]


def client_from_environment(timeout: float | tuple[float, float] | None = None) -> Client:
    """Return a client of the service the environment names, address checked first.

    Args:
        timeout: ``--timeout`` as parsed (seconds or a connect, read pair); None reads
            ``SEARCHKIT_TIMEOUT``. On the command line a timeout bounds the whole call:
            it is also the call's deadline, so ``list --timeout 2`` against a silent
            server ends after about 2 s, retries included, not after three 2 s waits.

    Raises:
        ConfigError: no address, no credentials, or a setting that breaks a rule.
    """
    from searchkit.api.config import (
        ENV_BASE_URL,
        ENV_PASSWORD,
        ENV_USERNAME,
        parse_timeout,
        validate_base_url,
    )

    address = os.environ.get(ENV_BASE_URL, "")
    if not address.strip():
        raise ConfigError(
            f"no service address: set {ENV_BASE_URL} to the API's address (e.g. "
            f"https://api.example.com), {ENV_USERNAME} and {ENV_PASSWORD} to your account; "
            "to try searchkit offline, run `searchkit serve --demo` and set the values it prints"
        )
    validate_base_url(address)
    if not os.environ.get(ENV_USERNAME) and not os.environ.get(ENV_PASSWORD):
        raise ConfigError(
            f"no credentials: set {ENV_USERNAME} and {ENV_PASSWORD} to the account's "
            f"username and password (the address {ENV_BASE_URL} is set)"
        )
    from searchkit.api.client import Client

    if timeout is None:
        timeout = parse_timeout()
    if timeout is None:
        return Client()
    deadline = max(timeout) if isinstance(timeout, tuple) else timeout
    return Client(timeout=timeout, deadline=deadline)

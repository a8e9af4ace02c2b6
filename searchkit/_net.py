"""The one loopback check, shared by the command line, the emulator and the client."""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback_host"]


def is_loopback_host(host: str) -> bool:
    """Return whether ``host`` names this machine: ``localhost``, 127.0.0.0/8 or ::1.

    Brackets around an IPv6 address, letter case and a final dot are ignored. Only the
    name ``localhost`` itself counts, not names under ``.localhost``: the system resolver
    may look those up in DNS, which can answer with any address.

    Example:
        >>> is_loopback_host("127.0.0.2"), is_loopback_host("[::1]"), is_loopback_host("0.0.0.0")
        (True, True, False)
    """
    host = host.strip().strip("[]").lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

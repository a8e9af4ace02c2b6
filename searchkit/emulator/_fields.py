"""Request fields a server must refuse (RFC 9112 section 6.3, RFC 9110 section 5.5).

Python's HTTP layer keeps whatever a request's header holds: two ``Content-Length`` fields
that disagree (which body is it? a proxy in front may have read the other one: request
smuggling) and a NUL inside a field value. Both are a 400 here, before the app sees them.
"""

from __future__ import annotations

from email.message import Message

__all__ = ["field_problem"]


def field_problem(headers: Message) -> str | None:
    """Say what makes a request's header fields unusable, or None when they are fine."""
    for name, value in headers.items():
        if "\x00" in name or "\x00" in value:
            return f"the {name.replace(chr(0), '')!r} header holds a NUL character"
    declared = headers.get_all("Content-Length") or []
    lengths = {part.strip() for value in declared for part in value.split(",")}
    if len(lengths) > 1:
        shown = ", ".join(sorted(lengths))
        return f"conflicting Content-Length headers ({shown}): send one"
    return None

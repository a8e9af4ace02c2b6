"""An offline emulator of the Search Index Management API, like moto for AWS.

:class:`Emulator` serves the API over real HTTP on 127.0.0.1 (a free port by default), with
state in SQLite (:class:`Store`, in memory or in a file that survives restarts), HTTP Basic
accounts, JSON errors, per-type limit presets that are the emulator's own (not the real
service's), and deterministic synthetic throughput rendered in Go's time layout::

    with Emulator(demo=True, seed=1) as emu:
        client = emu.client()

It survives hostile clients: header, body and idle deadlines per connection, a connection
cap past which clients get an immediate 503 with ``Retry-After``, JSON 4xx answers for
malformed requests, and list answers streamed one index at a time, so memory does not grow
with the account.

The package shares no code with the client, so it is an independent implementation of the
contract the client is tested against.

Modules: ``store`` (state, one method per API action), ``app`` (WSGI routes),
``data`` (presets, generated names and throughput), ``server`` (the threaded server).
"""

from __future__ import annotations

from searchkit.emulator.server import Emulator
from searchkit.emulator.state import Account, Store

__all__ = ["Account", "Emulator", "Store"]

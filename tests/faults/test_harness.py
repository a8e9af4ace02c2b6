"""The fault harness itself: its actions do what they say whatever the client's pace."""

from __future__ import annotations

import socket
import time

from .harness import FaultServer, cut_mid_body

BODY = b"x" * (16 << 20)  # more than the two ends' socket buffers hold
AFTER = 8 << 20


def test_cut_mid_body_delivers_its_bytes_before_the_reset_to_a_slow_reader():
    # The reset comes once the client's end has acknowledged every byte sent; a reset
    # after a fixed pause threw away what was still queued for a client that reads slowly.
    with FaultServer(max_hang=30) as server:
        server.script("GET", then=cut_mid_body(BODY, after=AFTER))
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            client.sendall(b"GET /v2/search HTTP/1.1\r\nHost: x\r\n\r\n")
            received = bytearray()
            error = None
            while True:
                try:
                    chunk = client.recv(64 << 10)
                except ConnectionResetError as exc:
                    error = exc
                    break
                if not chunk:
                    break
                received += chunk
                time.sleep(0.003)  # a slow reader: the server's send queue stays full
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert f"Content-Length: {len(BODY)}".encode() in head
    assert len(body) == AFTER
    assert isinstance(error, ConnectionResetError)

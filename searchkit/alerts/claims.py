"""Claims: the one collector that sends a notification, decided by a create-if-absent.

Before a collector sends a notification (an incident transition to one channel) it
*claims* the attempt: it creates an object named by the notification and the attempt's
number, and only if that object did not exist yet. Two collectors on one store both try;
exactly one creation succeeds, and only its collector sends.

- **Local folder**: ``os.open(O_CREAT | O_EXCL)``, atomic on a local disk (POSIX
  guarantees one creator; not on every network file system, which is why an NFS store
  is not a supported place for two collectors).
- **S3**: a PUT with ``If-None-Match: *`` (S3's conditional write, strongly consistent
  since 2024): S3 stores the object only if no object has that key and answers
  ``412 Precondition Failed`` to every other writer, so one PUT wins even when two race.
  It needs boto3 (``pip install 'searchkit[s3]'``); pyarrow's S3 filesystem cannot send
  the condition.

A claim is a lease, not a record: the journal (:mod:`searchkit.alerts.journal`) says what
was sent. A claim older than the lease with no delivery recorded for it belongs to a
collector that died between sending and recording; the next attempt number is then
claimed and the notification sent again with the same incident key (at least once: the
receiver drops the copy by the key).

Layout: ``<store>/alerts/_claims/<digest>/<attempt>.claim`` (``_`` folders are skipped by
readers of the dataset), each holding a small JSON text: who claimed, when, what.

Claims are pruned (:meth:`Claims.prune`): once a UTC day the collector that first delivers
deletes the claims older than :data:`RETAIN`. Safe: a round reads the journal from the
start of the day :data:`~searchkit.alerts.watch.WINDOW` before its instant, so a
transition is pending at most three days after it was recorded, and a claim, taken after
its transition was recorded, is consulted only while that transition is pending; a claim
older than :data:`RETAIN` belongs to a transition no collector will look at again (a
day's margin for clocks that disagree). Of two collectors on one store both may prune
(each deletes only such claims); one notification per incident still holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from typing import Any

import pyarrow.fs as pafs

from searchkit.errors import HistoryError

__all__ = ["CLAIMS_FOLDER", "RETAIN", "Claims", "claim_digest"]

#: Where claims live under the store's root.
CLAIMS_FOLDER = "alerts/_claims"
#: Seconds after which a claim is pruned (see the module): longer than the journal window
#: a round reads (two days, from the start of a day) plus a day for clocks that disagree.
RETAIN = 4 * 86400.0


def claim_digest(key: str, state: str, channel: str) -> str:
    """The folder name of one notification's claims (a digest: keys may hold any text)."""
    text = json.dumps([key, state, channel])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


class Claims:
    """Create-if-absent claims in a store (a local folder or S3).

    Args:
        fs: The store's pyarrow filesystem.
        root: The store's root path in ``fs``.
        location: The store as shown in messages (credentials masked).
    """

    def __init__(self, fs: pafs.FileSystem, root: str, location: str) -> None:
        self.fs = fs
        self.root = root
        self.location = location
        self.local = isinstance(fs, pafs.LocalFileSystem)
        self._s3: Any = None

    def path(self, digest: str, attempt: int) -> str:
        """The claim object of one attempt."""
        return f"{self.root}/{CLAIMS_FOLDER}/{digest}/{attempt:06d}.claim"

    def claim(self, digest: str, attempt: int, what: dict[str, Any]) -> bool:
        """Create the claim of ``attempt``; return False when it exists already.

        Raises:
            HistoryError: The store cannot be written (the claim is then not taken).
        """
        body = json.dumps({**what, "attempt": attempt, "claimed_at": time.time()}).encode()
        return self._create(self.path(digest, attempt), body)

    def _create(self, path: str, body: bytes) -> bool:
        if self.local:
            return self._claim_local(path, body)
        return self._claim_s3(path, body)

    def prune(self, *, older_than: float = RETAIN, now: float | None = None) -> int | None:
        """Delete the claims taken more than ``older_than`` seconds before ``now`` (the
        wall clock, which claims' times are: see :meth:`age`), once a UTC day per store:
        the caller that creates the day's marker (create-if-absent, as a claim) prunes.

        Returns:
            How many claims were deleted; None when the day's pruning was done already.

        Raises:
            HistoryError: The store cannot be listed or written.
        """
        now = time.time() if now is None else now
        day = time.strftime("%Y-%m-%d", time.gmtime(now))
        folder = f"{self.root}/{CLAIMS_FOLDER}"
        marker = f"{folder}/pruned-{day}.marker"
        if not self._create(marker, json.dumps({"at": now}).encode()):
            return None
        selector = pafs.FileSelector(folder, recursive=True, allow_not_found=True)
        try:
            infos = self.fs.get_file_info(selector)
        except OSError as exc:
            raise HistoryError(f"cannot list the claims in {self.location!r}: {exc}") from exc
        deleted = 0
        emptied: set[str] = set()
        for info in infos:
            taken = info.mtime.timestamp() if info.mtime is not None else now
            if info.type != pafs.FileType.File or now - taken <= older_than or info.path == marker:
                continue
            if not self._delete(info.path):
                continue  # deleted by another collector pruning too, or not deletable: later
            deleted += info.path.endswith(".claim")
            emptied.add(info.path.rpartition("/")[0])
        if self.local:  # object stores have no folders to leave behind
            for path in sorted(emptied - {folder}):
                with contextlib.suppress(OSError):
                    os.rmdir(path)  # only when empty: a claim taken meanwhile stays
        return deleted

    def _claim_local(self, path: str, body: bytes) -> bool:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        except OSError as exc:
            raise HistoryError(
                f"cannot claim a notification in {self.location!r}: {exc.strerror}"
            ) from exc
        try:
            os.write(handle, body)
        finally:
            os.close(handle)
        return True

    def _claim_s3(self, path: str, body: bytes) -> bool:
        client = self._s3_client()
        bucket, _, key = path.partition("/")
        try:
            client.put_object(Bucket=bucket, Key=key, Body=body, IfNoneMatch="*")
        except Exception as exc:
            status = getattr(exc, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status in (409, 412):  # 412: exists; 409: a concurrent write of it won
                return False
            raise HistoryError(
                f"cannot claim a notification in {self.location!r} ({type(exc).__name__}"
                f"{f', HTTP {status}' if status else ''})"
            ) from None
        return True

    def _delete(self, path: str) -> bool:
        """Delete one claim; on S3 with boto3 (pyarrow would leave a folder marker behind)."""
        try:
            if self.local:
                self.fs.delete_file(path)
            else:
                bucket, _, key = path.partition("/")
                self._s3_client().delete_object(Bucket=bucket, Key=key)
        except Exception:  # gone already, or not deletable now: the next day's pruning
            return False
        return True

    def age(self, digest: str, attempt: int) -> float | None:
        """Seconds since the claim of ``attempt`` was taken; None when there is none."""
        path = self.path(digest, attempt)
        try:
            info = self.fs.get_file_info(path)
        except OSError as exc:
            raise HistoryError(f"cannot read a claim in {self.location!r}: {exc}") from exc
        if info.type == pafs.FileType.NotFound:
            return None
        if info.mtime is None:
            return 0.0
        return max(0.0, time.time() - float(info.mtime.timestamp()))

    def _s3_client(self) -> Any:
        """A boto3 S3 client for the store's own endpoint and credentials."""
        if self._s3 is not None:
            return self._s3
        try:
            import boto3  # type: ignore[import-untyped]
        except ImportError:
            raise HistoryError(
                f"alerts on an S3 store ({self.location!r}) claim each notification with a "
                "conditional write, which needs boto3: pip install 'searchkit[s3]'"
            ) from None
        self._s3 = boto3.client("s3", **s3_options(self.fs))
        return self._s3


def s3_options(fs: pafs.FileSystem) -> dict[str, Any]:
    """boto3 client options matching a pyarrow S3FileSystem (endpoint, region, keys).

    pyarrow keeps the options it was built with in its pickling state; options it
    leaves empty are left to boto3's own lookup (environment, profile, instance role).
    """
    reduced = fs.__reduce__()
    options: dict[str, Any] = reduced[1][0] if len(reduced) > 1 and reduced[1] else {}
    out: dict[str, Any] = {}
    endpoint = options.get("endpoint_override") or ""
    if endpoint:
        scheme = options.get("scheme") or "https"
        out["endpoint_url"] = endpoint if "://" in endpoint else f"{scheme}://{endpoint}"
    if options.get("region"):
        out["region_name"] = options["region"]
    if options.get("access_key"):
        out["aws_access_key_id"] = options["access_key"]
        out["aws_secret_access_key"] = options.get("secret_key") or None
        if options.get("session_token"):
            out["aws_session_token"] = options["session_token"]
    return out

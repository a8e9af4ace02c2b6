"""Where a history lives: a location text (a folder, ``file://``, ``s3://``) checked and
opened as a pyarrow filesystem and a root path, credentials masked in every message."""

from __future__ import annotations

import os
import re
import urllib.parse
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.fs as pafs

from searchkit.errors import HistoryError, ValidationError, mask_url, redact

if TYPE_CHECKING:
    from searchkit.history.layout import Layout

__all__ = ["SCHEMES", "check_location", "open_location", "require_folder", "split_credentials"]

#: Schemes a location may name; anything else is refused at once (pyarrow would try, and
#: e.g. gs:// waits a minute for cloud credentials): pass ``filesystem=`` for those.
SCHEMES = ("file", "s3")


def check_location(location: str) -> None:
    """Refuse a location text that cannot name a history, before anything is opened.

    Raises:
        ValidationError: The location is empty or blank, names an unsupported scheme, or
            an ``s3://`` location names no bucket (credentials in it are masked).
    """
    if not location.strip():
        raise ValidationError(
            "location is empty: give a folder, or an s3://BUCKET/PREFIX URL (an empty "
            "location would write into the current folder)"
        )
    if "://" not in location:
        return
    shown = mask_url(location)
    scheme, _, rest = location.partition("://")
    if scheme.lower() not in SCHEMES:
        raise ValidationError(
            f"location {shown!r}: the scheme {scheme + '://'!r} is not supported; give a "
            "folder, file:// or s3://BUCKET/PREFIX, or pass filesystem= (a pyarrow "
            "FileSystem) for another store"
        )
    bucket = rest.rpartition("@")[2] if "@" in rest.partition("/")[0] else rest
    if scheme.lower() == "s3" and not bucket.partition("/")[0].partition("?")[0]:
        raise ValidationError(f"location {shown!r} names no bucket: use s3://BUCKET/PREFIX")


# The user information of an s3:// location: a user part, then an optional secret that may
# hold ``/`` and ``@`` (so it runs to the last ``@``), as errors.mask_url reads it.
_CREDENTIALS = re.compile(r"(?s)^(?:([^/@:]*):(.*)|([^/@:]+))@")


def split_credentials(rest: str) -> tuple[str | None, str | None, str]:
    """Split ``KEY:SECRET@bucket/prefix`` (what follows ``s3://``) into its parts.

    Returns:
        The user (access key) and secret, percent-decoded, or None when the location holds
        none, and the location without them (``bucket/prefix``).
    """
    match = _CREDENTIALS.match(rest)
    if match is None:
        return None, None, rest
    user = match.group(1) if match.group(1) is not None else match.group(3)
    password = match.group(2)
    return (
        urllib.parse.unquote(user),
        None if password is None else urllib.parse.unquote(password),
        rest[match.end() :],
    )


def open_location(
    location: str,
    filesystem: pafs.FileSystem | None,
    storage_options: dict[str, Any] | None,
) -> tuple[pafs.FileSystem, str]:
    """Return the filesystem and root path a history location names.

    Raises:
        ValidationError: The location is empty, names an unsupported scheme, or an
            ``s3://`` location names no bucket.
        HistoryError: pyarrow cannot open it. Credentials written in the location are
            masked in every message (:func:`~searchkit.errors.mask_url`).
    """
    if filesystem is not None:
        return filesystem, location.rstrip("/")
    check_location(location)
    if "://" not in location:
        return pafs.LocalFileSystem(), os.path.abspath(location)
    shown = mask_url(location)
    scheme, _, rest = location.partition("://")
    if scheme == "s3" and storage_options is not None:
        options = dict(storage_options)
        user, password, rest = split_credentials(rest)
        if user is not None and "access_key" not in options:
            # pyarrow's own reading of s3://KEY:SECRET@bucket, kept when options are given.
            options.update(access_key=user, secret_key=password or "")
        try:
            return pafs.S3FileSystem(**options), rest.rstrip("/")
        except (TypeError, pa.ArrowInvalid, OSError) as exc:
            known = [user, password, *(v for v in options.values() if isinstance(v, str))]
            raise HistoryError(
                f"cannot open history location {shown!r}: storage_options: "
                f"{redact(str(exc), known)}"
            ) from None
    try:
        fs, root = pafs.FileSystem.from_uri(location)
    except (pa.ArrowInvalid, OSError) as exc:
        if shown == location:
            raise HistoryError(f"cannot open history location {location!r}: {exc}") from exc
        # pyarrow's text repeats the location, credentials and all, or where they break it.
        raise HistoryError(
            f"cannot open history location {shown!r} ({type(exc).__name__}); pass "
            "credentials as storage_options={'access_key': ..., 'secret_key': ...} or in "
            "the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY environment variables, not in "
            "the location"
        ) from None
    return fs, root.rstrip("/")


def require_folder(layout: Layout, location: str) -> None:
    """Raise a HistoryError saying what is wrong when ``layout`` holds no folder (see
    :meth:`~searchkit.History.require_folder`); ``location`` is as the user wrote it."""
    if not layout.local and layout.everything():
        return  # objects under the prefix: a folder (listed once for the call, info())
    try:
        found = layout.fs.get_file_info(layout.root)
        if found.type == pafs.FileType.NotFound and layout.fs.type_name == "s3":
            bucket = layout.root.partition("/")[0]
            if layout.fs.get_file_info(bucket).type == pafs.FileType.NotFound:
                raise HistoryError(
                    f"no history at {location!r}: the bucket {bucket!r} does not exist"
                )
    except OSError as exc:
        raise HistoryError(f"cannot read the history at {location!r}: {exc}") from exc
    if found.type == pafs.FileType.NotFound:
        raise HistoryError(f"no history at {location!r}: nothing is there (collect into it first)")
    if found.type != pafs.FileType.Directory:
        raise HistoryError(f"no history at {location!r}: it is a file, not a history folder")

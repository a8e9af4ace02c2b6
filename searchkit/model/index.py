"""Typed models of the API's objects: SearchIndex, IndexList and the enums of the spec.

Raw JSON becomes a model here and nowhere else: from bytes (:meth:`IndexList.from_json_bytes`,
the client's path) or from decoded JSON (:meth:`IndexList.from_json`, for saved dumps), with
the same result. The rule for odd data, in one place:

* the overall shape is checked: a body that is not JSON, a list that is not an array of
  objects, a create answer that is not an object raise InvalidResponseError with the
  position;
* inside an index nothing raises, because a notebook must keep working when the service
  adds or garbles something: unknown fields are kept in ``extra``, unknown enum values are
  kept as text, missing fields are None, and a value of the wrong type (a limit of
  ``"lots"``, ``true``, ``12.5``, or an integer beyond int64 such as ``10**400``) reads as
  None while ``invalid`` keeps what was sent (for ``token`` and ``read_only_token``, an object
  or array is kept as a :class:`Secret` of its JSON text: masked wherever it goes);
* throughput points that cannot be read (not an object, no time, a time that does not
  parse, a ``y`` that is not a number) are kept as sent and reported, naming the index and
  the position, when something reads them: ``throughput_frame`` raises unless asked to
  coerce, ``throughput_vector`` raises for a point it cannot represent.

Models are immutable and hashable on ``id``: points live in read-only NumPy columns,
``extra`` and ``invalid`` are read-only mappings, tokens are :class:`Secret` values whose
str and repr are masked (``index.token.get_secret_value()`` gives the real text).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from searchkit._deprecation import warn_deprecated
from searchkit.errors import AmbiguousNameError, InvalidResponseError, UnknownIndexError
from searchkit.model._frozen import FrozenMapping, thaw
from searchkit.model.hooks import notebook_html
from searchkit.model.limits import (
    LIMIT_FIELDS,
    UNLIMITED,
    IndexType,
    Region,
    check_limit_field,
)
from searchkit.model.secret import MASK, Secret, masked, secret_value

if TYPE_CHECKING:
    from searchkit.model.throughput import Throughput

__all__ = ["SECRET_FIELDS", "SHORT_ID", "IndexList", "SearchIndex", "ThroughputPoint"]


SECRET_FIELDS: tuple[str, ...] = ("token", "read_only_token")
#: Characters of an id that tell same-named indexes apart: ``short_id`` everywhere.
SHORT_ID = 8

# Older upstream name of partner_email.
_ALIASES = {"vercel_email": "partner_email"}

# Limits and times are int64 on the service's side: a larger integer is malformed.
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class ThroughputPoint(NamedTuple):
    """One throughput sample: ``x`` the Go time text as sent, ``y`` the value (None if null)."""

    x: str
    y: float | None


_NOTHING = FrozenMapping()

# --- one index -------------------------------------------------------------------------------


class _Reader:
    """Typed reads of one JSON object; a value of the wrong type reads as None and is noted."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.invalid: dict[str, Any] = {}

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, bool | int | float):
            return str(value)
        self.invalid[key] = value
        return None

    def secret(self, key: str) -> Secret | None:
        """Read a secret field: text (or a number) is the secret; any other JSON value is
        no token, and what was sent is kept in ``invalid`` as a :class:`Secret` of its
        JSON text, so an object or array holding the token is masked like one."""
        value = self.data.get(key)
        if value is None or isinstance(value, str | bool | int | float):
            text = self.text(key)
            return None if text is None else Secret(text)
        self.invalid[key] = _as_secret(value)
        return None

    def integer(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        elif isinstance(value, str):
            try:
                number = int(value.strip())
            except ValueError:
                number = None
        if number is None or not _INT64_MIN <= number <= _INT64_MAX:
            self.invalid[key] = value
            return None
        return number

    def boolean(self, key: str) -> bool | None:
        value = self.data.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.invalid[key] = value
        return None


def _as_secret(value: Any) -> Secret:
    """A value sent for a secret field, as a :class:`Secret` of its JSON text."""
    if isinstance(value, Secret):
        return value
    return Secret(json.dumps(thaw(value), ensure_ascii=False))


def _enum_or_text(enum_cls: type[enum.Enum], value: str | None) -> Any:
    if value is None:
        return None
    try:
        return enum_cls(value)
    except ValueError:
        return value


def _unalias(data: Mapping[str, Any]) -> Mapping[str, Any]:
    # An alias counts only when the current name is absent; the alias is then not extra.
    # Read-only: without an alias the object itself is returned, not a copy.
    if not any(old_name in data for old_name in _ALIASES):
        return data
    data = dict(data)
    for old_name, new_name in _ALIASES.items():
        if old_name in data and new_name not in data:
            data[new_name] = data.pop(old_name)
    return data


def _build_many(objects: list[Mapping[str, Any]]) -> list[SearchIndex]:
    """Build indexes from decoded JSON objects, reading all their points in one pass."""
    from searchkit.model import _decode
    from searchkit.model.throughput import EMPTY

    datas = [_unalias(o) for o in objects]
    vectors: list[Sequence[Any]] = []
    with_points: list[int] = []
    for number, data in enumerate(datas):
        points = data.get("throughput_vector")
        if isinstance(points, list | tuple) and points:
            vectors.append(points)
            with_points.append(number)
    throughputs = [EMPTY] * len(datas)
    if vectors:
        for number, throughput in zip(with_points, _decode.read_vectors(vectors), strict=True):
            throughputs[number] = throughput
    return [SearchIndex._build(d, t) for d, t in zip(datas, throughputs, strict=True)]


@dataclasses.dataclass(frozen=True, kw_only=True, eq=True, repr=False)
class SearchIndex:
    """One search index as the service describes it; immutable, hashable on ``id``.

    Build it with :meth:`from_dict` or :meth:`from_json_bytes`; every field is optional
    because the spec does not say which fields are always present. ``type`` and
    ``region`` are enum members when known, else the text the service sent. Limits are
    the raw integers (-1 means unlimited). ``token`` and ``read_only_token`` are
    :class:`Secret` values: ``index.token.get_secret_value()`` gives the real text.

    A value of the wrong type (a limit of ``"lots"``, ``true``, ``12.5`` or beyond int64)
    reads as None and is kept as sent in ``invalid``, so a notebook keeps working and
    nothing is lost; ``to_dict`` gives it back.

    Example:
        >>> idx = SearchIndex.from_dict({"name": "docs", "type": "payg", "token": "s3cr3t"})
        >>> idx.name, idx.type
        ('docs', <IndexType.PAYG: 'payg'>)
        >>> "s3cr3t" in repr(idx), idx.token.get_secret_value()
        (False, 's3cr3t')
    """

    id: str | None = None
    name: str | None = None
    customer_id: str | None = None
    endpoint: str | None = None
    type: IndexType | str | None = None
    region: Region | str | None = None
    partner_email: str | None = None
    token: Secret | None = None
    read_only_token: Secret | None = None
    max_vector_count: int | None = None
    max_monthly_reranks: int | None = None
    max_daily_updates: int | None = None
    max_daily_queries: int | None = None
    max_monthly_bandwidth: int | None = None
    max_writes_per_second: int | None = None
    max_query_per_second: int | None = None
    max_reads_per_request: int | None = None
    max_writes_per_request: int | None = None
    creation_time: int | None = None
    input_enrichment_enabled: bool | None = None
    #: The points as immutable columns (see :class:`Throughput`).
    throughput: Throughput = dataclasses.field(default=None)  # type: ignore[assignment]
    #: Fields the spec does not name, as sent (read-only).
    extra: Mapping[str, Any] = dataclasses.field(default=_NOTHING, compare=False)
    #: Spec fields whose value had the wrong type, as sent (read-only); the attribute is None.
    invalid: Mapping[str, Any] = dataclasses.field(default=_NOTHING, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.throughput is None:
            from searchkit.model.throughput import EMPTY

            set_(self, "throughput", EMPTY)
        for name in SECRET_FIELDS:
            value = getattr(self, name)
            if isinstance(value, str):
                set_(self, name, Secret(value))
        sent = self.invalid
        if any(not isinstance(sent[name], Secret) for name in SECRET_FIELDS if name in sent):
            # Whatever a secret field held, it never shows (see _Reader.secret).
            set_(
                self,
                "invalid",
                {k: _as_secret(v) if k in SECRET_FIELDS else v for k, v in sent.items()},
            )
        for name in ("extra", "invalid"):
            if not isinstance(getattr(self, name), FrozenMapping):
                set_(self, name, FrozenMapping(getattr(self, name)))

    def __hash__(self) -> int:
        return hash((SearchIndex, self.id))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchIndex:
        """Build an index from one JSON object of the API.

        Args:
            data: A decoded JSON object (create response or list element).

        Returns:
            The index; unknown fields land in ``extra``, wrongly typed ones in ``invalid``.

        Raises:
            InvalidResponseError: ``data`` is not an object.
        """
        if not isinstance(data, Mapping):
            raise InvalidResponseError(f"expected a JSON object, got {_json_kind(data)}")
        return _build_many([data])[0]

    @classmethod
    def from_json_bytes(cls, body: bytes) -> SearchIndex:
        """Build an index from the body of the create operation, as bytes.

        Raises:
            InvalidResponseError: the body is not JSON (the message gives the byte
                position) or not an object.
        """
        from searchkit.model import _decode

        body = bytes(body)
        items = _decode.decode_object(body)
        if items is None:
            return cls.from_dict(_decode.decode_any(body))
        return _from_raw_items(body, [items])[0]

    @classmethod
    def _build(cls, data: Mapping[str, Any], throughput: Throughput) -> SearchIndex:
        data = _unalias(data)
        read = _Reader(data)
        points = data.get("throughput_vector")
        if points is not None and not isinstance(points, list | tuple):
            read.invalid["throughput_vector"] = points
        return cls(
            id=read.text("id"),
            name=read.text("name"),
            customer_id=read.text("customer_id"),
            endpoint=read.text("endpoint"),
            type=_enum_or_text(IndexType, read.text("type")),
            region=_enum_or_text(Region, read.text("region")),
            partner_email=read.text("partner_email"),
            token=read.secret("token"),
            read_only_token=read.secret("read_only_token"),
            **{f: read.integer(f) for f in LIMIT_FIELDS},
            creation_time=read.integer("creation_time"),
            input_enrichment_enabled=read.boolean("input_enrichment_enabled"),
            throughput=throughput,
            extra={k: v for k, v in data.items() if k not in _API_FIELDS},
            invalid=read.invalid,
        )

    def to_dict(self, *, include_secrets: bool = False) -> dict[str, Any]:
        """Return the index as an API-shaped JSON object.

        Args:
            include_secrets: Give ``token`` and ``read_only_token`` as their real text;
                otherwise as the mask ``••••••••`` (None only when the index has none), as
                in every table made from indexes.

        Returns:
            A dict with the spec's field names (wrongly typed values as they were sent),
            ``throughput_vector`` and any extra fields.
        """
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in ("throughput", "extra", "invalid"):
                continue
            value = getattr(self, f.name)
            if isinstance(value, enum.Enum):
                value = value.value
            if f.name in SECRET_FIELDS and f.name in self.invalid:
                sent = secret_value(self.invalid[f.name])
                value = json.loads(sent or "null") if include_secrets else MASK
            elif f.name in SECRET_FIELDS:
                value = secret_value(value) if include_secrets or value is None else MASK
            elif f.name in self.invalid:
                value = thaw(self.invalid[f.name])
            out[f.name] = value
        if "throughput_vector" in self.invalid:
            out["throughput_vector"] = thaw(self.invalid["throughput_vector"])
        else:
            out["throughput_vector"] = self.throughput.points()
        for key, value in self.extra.items():
            out.setdefault(key, thaw(value))
        return out

    @property
    def created(self) -> dt.datetime | None:
        """Creation time as an aware UTC datetime (None when the service sent none)."""
        if self.creation_time is None:
            return None
        return dt.datetime.fromtimestamp(self.creation_time, tz=dt.timezone.utc)

    @property
    def throughput_vector(self) -> tuple[ThroughputPoint, ...]:
        """Deprecated: read :attr:`throughput`, the one view of an index's points.

        The samples as (x, y) pairs in the order the service sent them; the same as
        ``tuple(ThroughputPoint(p["x"], p["y"]) for p in index.throughput.points())``.

        Raises:
            InvalidResponseError: a point is not an object or its ``y`` is not a number.
        """
        warn_deprecated(
            "SearchIndex.throughput_vector is deprecated: read index.throughput (its times, "
            "values and points()) or sk.throughput_series(index)"
        )
        error = self.throughput.error(self.name, values_only=True)
        if error is not None:
            raise error
        return tuple(ThroughputPoint(str(p.get("x")), p.get("y")) for p in self.throughput.points())

    @property
    def throughput_raw(self) -> tuple[Any, ...]:
        """Deprecated: ``tuple(index.throughput.points())``, the points as the API's JSON."""
        warn_deprecated(
            "SearchIndex.throughput_raw is deprecated: read index.throughput.points() (the "
            "API's JSON objects) or len(index.throughput)"
        )
        return tuple(self.throughput.points())

    @property
    def short_id(self) -> str | None:
        """The first 8 characters of the id: enough to tell same-named indexes apart."""
        return None if self.id is None else self.id[:SHORT_ID]

    @property
    def limits(self) -> dict[str, int | None]:
        """The nine limits as raw integers (-1 unlimited, None absent)."""
        return {f: getattr(self, f) for f in LIMIT_FIELDS}

    def is_unlimited(self, field: str) -> bool:
        """Return whether a limit field is unlimited (-1).

        Raises:
            ValidationError: ``field`` is not one of the nine limits.
        """
        result: bool = getattr(self, check_limit_field(field)) == UNLIMITED
        return result

    def __repr__(self) -> str:
        parts = [
            f"id={self.id!r}",
            f"name={self.name!r}",
            f"type={str(self.type) if self.type is not None else None!r}",
            f"region={str(self.region) if self.region is not None else None!r}",
            f"endpoint={self.endpoint!r}",
            f"token={masked(self.token)!r}",
            f"read_only_token={masked(self.read_only_token)!r}",
            f"points={len(self.throughput)}",
        ]
        return f"SearchIndex({', '.join(parts)})"

    __str__ = __repr__

    def _repr_html_(self) -> str | None:
        return notebook_html(self)


def _from_raw_items(body: bytes, items: list[Any]) -> list[SearchIndex]:
    """Build indexes from objects whose fields are still raw JSON inside ``body``."""
    from searchkit.model import _decode

    fields_of, throughputs = _decode.read_raw_items(body, items)
    del items
    generic = [i for i in range(len(fields_of)) if i not in throughputs]
    built = _build_many([fields_of[i] for i in generic])
    indexes: list[SearchIndex | None] = [None] * len(fields_of)
    for i, index in zip(generic, built, strict=True):
        indexes[i] = index
    for i, throughput in throughputs.items():
        indexes[i] = SearchIndex._build(fields_of[i], throughput)
    return [i for i in indexes if i is not None]


_API_FIELDS = frozenset(
    {f.name for f in dataclasses.fields(SearchIndex)} - {"throughput", "extra", "invalid"}
    | {"throughput_vector"}
)


class IndexList(Sequence[SearchIndex]):
    """The indexes of an account: a read-only sequence of :class:`SearchIndex`.

    ``indexes[0]`` and ``indexes["docs"]`` (by name) both work.

    Example:
        >>> indexes = IndexList.from_json([{"name": "docs"}, {"name": "news"}])
        >>> indexes.names(), indexes["news"].name
        (['docs', 'news'], 'news')
    """

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[SearchIndex] = ()) -> None:
        self._items: tuple[SearchIndex, ...] = tuple(items)
        for item in self._items:
            if not isinstance(item, SearchIndex):
                raise TypeError(f"IndexList holds SearchIndex objects, got {type(item).__name__}")

    @classmethod
    def from_json(cls, data: Any) -> IndexList:
        """Build a list from the decoded body of the list operation.

        Raises:
            InvalidResponseError: ``data`` is not an array of objects (the message gives
                the position of the first element that is not).
        """
        if not isinstance(data, list | tuple):
            raise InvalidResponseError(f"expected a JSON array, got {_json_kind(data)}")
        for position, item in enumerate(data):
            if not isinstance(item, Mapping):
                raise InvalidResponseError(
                    f"expected a JSON object for a search index at position {position}, "
                    f"got {_json_kind(item)}"
                )
        return cls(_build_many(list(data)))

    @classmethod
    def from_json_bytes(cls, body: bytes) -> IndexList:
        """Build a list from the body of the list operation, as bytes.

        The fast path: the body is decoded by msgspec with each index's throughput left
        as raw bytes, which are then read in place into columns, so no Python object is
        made per point. The result equals ``IndexList.from_json(json.loads(body))``.

        Raises:
            InvalidResponseError: the body is not JSON (the message gives the byte
                position) or not an array of objects (it gives the element's position).
        """
        from searchkit.model import _decode

        body = bytes(body)
        items = _decode.decode_list(body)
        if items is None:
            return cls.from_json(_decode.decode_any(body))
        return cls(_from_raw_items(body, items))

    @overload
    def __getitem__(self, i: int) -> SearchIndex: ...
    @overload
    def __getitem__(self, i: slice) -> IndexList: ...
    @overload
    def __getitem__(self, i: str) -> SearchIndex: ...
    def __getitem__(self, i: int | slice | str) -> SearchIndex | IndexList:
        if isinstance(i, str):
            return self.by_name(i)
        if isinstance(i, slice):
            return IndexList(self._items[i])
        return self._items[i]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[SearchIndex]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IndexList):
            return self._items == other._items
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._items)

    def names(self) -> list[str | None]:
        """Return the names of the indexes, in order."""
        return [i.name for i in self._items]

    def by_name(self, name: str) -> SearchIndex:
        """Return the index called ``name``.

        Raises:
            UnknownIndexError: no index has that name (the message lists the names there
                are); it is also a ``KeyError``.
            AmbiguousNameError: several indexes have it (the message lists their ids; use
                :meth:`by_id`).
        """
        found = [item for item in self._items if item.name == name]
        if len(found) == 1:
            return found[0]
        if found:
            ids = ", ".join(str(i.id) for i in found)
            raise AmbiguousNameError(
                f"{len(found)} indexes are named {name!r} (ids {ids}); pick one with by_id()"
            )
        raise UnknownIndexError(
            f"no index named {name!r}; indexes: {', '.join(map(str, self.names())) or '(none)'}"
        )

    def by_id(self, index_id: str) -> SearchIndex:
        """Return the index whose id is ``index_id``.

        Raises:
            UnknownIndexError: no index has that id (also a ``KeyError``).
        """
        for item in self._items:
            if item.id == index_id:
                return item
        raise UnknownIndexError(f"no index with id {index_id!r}")

    def to_dicts(self, *, include_secrets: bool = False) -> list[dict[str, Any]]:
        """Return the indexes as API-shaped dicts (tokens None unless asked)."""
        return [i.to_dict(include_secrets=include_secrets) for i in self._items]

    def __repr__(self) -> str:
        shown = ", ".join(repr(n) for n in self.names()[:5])
        more = f", … {len(self) - 5} more" if len(self) > 5 else ""
        return f"IndexList({len(self)} indexes: [{shown}{more}])"

    __str__ = __repr__

    def _repr_html_(self) -> str | None:
        return notebook_html(self)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a JSON object"
    if isinstance(value, list | tuple):
        return "a JSON array"
    return type(value).__name__

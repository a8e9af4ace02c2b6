"""Typed models of the API's objects: SearchIndex, IndexList and the enums of the spec.

Raw JSON becomes a model here and nowhere else. Parsing is tolerant, because a notebook
must keep working when the service adds something: unknown fields are kept in ``extra``,
unknown enum values are kept as text, missing fields are None. Secrets (``token``,
``read_only_token``) are reachable as attributes but never shown by a repr or str.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, overload

from searchkit.errors import InvalidResponseError

__all__ = [
    "LIMIT_FIELDS",
    "REGIONS",
    "SECRET_FIELDS",
    "TYPES",
    "UNLIMITED",
    "IndexList",
    "IndexType",
    "Region",
    "SearchIndex",
    "ThroughputPoint",
]


class Region(str, enum.Enum):
    """Regions the spec names; responses may carry others, kept as plain text."""

    EU_WEST_1 = "eu-west-1"
    US_CENTRAL1 = "us-central1"

    def __str__(self) -> str:
        return self.value


class IndexType(str, enum.Enum):
    """Payment plans the spec names; ``fixed`` is listed but may not be available."""

    FREE = "free"
    PAYG = "payg"
    FIXED = "fixed"

    def __str__(self) -> str:
        return self.value


REGIONS: tuple[str, ...] = tuple(r.value for r in Region)
TYPES: tuple[str, ...] = tuple(t.value for t in IndexType)

#: The nine usage and rate limits, in the spec's order.
LIMIT_FIELDS: tuple[str, ...] = (
    "max_vector_count",
    "max_monthly_reranks",
    "max_daily_updates",
    "max_daily_queries",
    "max_monthly_bandwidth",
    "max_writes_per_second",
    "max_query_per_second",
    "max_reads_per_request",
    "max_writes_per_request",
)


class LimitInfo(NamedTuple):
    """How to show one limit: a short label, a title for plots, its unit and period."""

    label: str  #: short column label with its unit, e.g. "queries / day"
    title: str  #: plot title, e.g. "Queries per day"
    unit: str  #: what is counted, e.g. "queries" ("bytes" for the bandwidth)
    period: str | None  #: "day", "month", "second", "request", or None for a total


#: The one label table of the nine limits, in LIMIT_FIELDS order.
LIMIT_INFO: Mapping[str, LimitInfo] = {
    "max_vector_count": LimitInfo("vectors", "Vectors", "vectors", None),
    "max_monthly_reranks": LimitInfo("reranks / month", "Reranks per month", "reranks", "month"),
    "max_daily_updates": LimitInfo("updates / day", "Updates per day", "updates", "day"),
    "max_daily_queries": LimitInfo("queries / day", "Queries per day", "queries", "day"),
    "max_monthly_bandwidth": LimitInfo(
        "bandwidth / month", "Bandwidth per month", "bytes", "month"
    ),
    "max_writes_per_second": LimitInfo("writes / s", "Writes per second", "writes", "second"),
    "max_query_per_second": LimitInfo("queries / s", "Queries per second", "queries", "second"),
    "max_reads_per_request": LimitInfo("reads / request", "Reads per request", "reads", "request"),
    "max_writes_per_request": LimitInfo(
        "writes / request", "Writes per request", "writes", "request"
    ),
}

#: The value the service sends for "no limit".
UNLIMITED = -1

SECRET_FIELDS: tuple[str, ...] = ("token", "read_only_token")

# Older upstream name of partner_email.
_ALIASES = {"vercel_email": "partner_email"}


class ThroughputPoint(NamedTuple):
    """One throughput sample: ``x`` the Go time text as sent, ``y`` the value (None if null)."""

    x: str
    y: float | None


def _str_or_none(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    raise InvalidResponseError(f"field {key!r} should be a string, got {type(value).__name__}")


def _int_or_none(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidResponseError(f"field {key!r} should be an integer, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise InvalidResponseError(f"field {key!r} should be an integer, got {value!r:.40}")


def _bool_or_none(data: Mapping[str, Any], key: str) -> bool | None:
    value = data.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise InvalidResponseError(f"field {key!r} should be a boolean, got {type(value).__name__}")


def _enum_or_text(enum_cls: type[enum.Enum], value: str | None) -> Any:
    if value is None:
        return None
    try:
        return enum_cls(value)
    except ValueError:
        return value


def _mask(secret: str | None) -> str:
    if not secret:
        return "—"
    return "••••••••"


@dataclasses.dataclass(frozen=True, kw_only=True, eq=True, repr=False)
class SearchIndex:
    """One search index as the service describes it.

    Build it with :meth:`from_dict`; every field is optional because the spec does not say
    which fields are always present. ``type`` and ``region`` are enum members when known,
    else the text the service sent. Limits are the raw integers (-1 means unlimited).

    Example:
        >>> idx = SearchIndex.from_dict({"name": "docs", "type": "payg", "token": "s3cr3t"})
        >>> idx.name, idx.type
        ('docs', <IndexType.PAYG: 'payg'>)
        >>> "s3cr3t" in repr(idx)
        False
    """

    id: str | None = None
    name: str | None = None
    customer_id: str | None = None
    endpoint: str | None = None
    type: IndexType | str | None = None
    region: Region | str | None = None
    partner_email: str | None = None
    token: str | None = None
    read_only_token: str | None = None
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
    # The raw throughput list as received: converting a million points into objects here
    # would cost more than the frame that uses them, so frames read it column-wise.
    throughput_raw: tuple[Any, ...] = dataclasses.field(default=(), compare=True)
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchIndex:
        """Build an index from one JSON object of the API.

        Args:
            data: A decoded JSON object (create response or list element).

        Returns:
            The index; unknown fields land in ``extra``.

        Raises:
            InvalidResponseError: ``data`` is not an object, or a field has the wrong type.
        """
        if not isinstance(data, Mapping):
            raise InvalidResponseError(
                f"expected a JSON object for a search index, got {type(data).__name__}"
            )
        # An alias counts only when the current name is absent; the alias is then not extra.
        data = dict(data)
        for old_name, new_name in _ALIASES.items():
            if old_name in data and new_name not in data:
                data[new_name] = data.pop(old_name)
        throughput = data.get("throughput_vector")
        if throughput is None:
            throughput = ()
        elif not isinstance(throughput, list | tuple):
            raise InvalidResponseError(
                f"field 'throughput_vector' should be an array, got {type(throughput).__name__}"
            )
        extra = {k: v for k, v in data.items() if k not in _API_FIELDS}
        return cls(
            id=_str_or_none(data, "id"),
            name=_str_or_none(data, "name"),
            customer_id=_str_or_none(data, "customer_id"),
            endpoint=_str_or_none(data, "endpoint"),
            type=_enum_or_text(IndexType, _str_or_none(data, "type")),
            region=_enum_or_text(Region, _str_or_none(data, "region")),
            partner_email=_str_or_none(data, "partner_email"),
            token=_str_or_none(data, "token"),
            read_only_token=_str_or_none(data, "read_only_token"),
            **{f: _int_or_none(data, f) for f in LIMIT_FIELDS},
            creation_time=_int_or_none(data, "creation_time"),
            input_enrichment_enabled=_bool_or_none(data, "input_enrichment_enabled"),
            throughput_raw=tuple(throughput),
            extra=extra,
        )

    def to_dict(self, *, include_secrets: bool = False) -> dict[str, Any]:
        """Return the index as an API-shaped JSON object.

        Args:
            include_secrets: Keep ``token`` and ``read_only_token``; masked to None otherwise.

        Returns:
            A dict with the spec's field names, ``throughput_vector`` and any extra fields.
        """
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in ("throughput_raw", "extra"):
                continue
            value = getattr(self, f.name)
            if isinstance(value, enum.Enum):
                value = value.value
            if f.name in SECRET_FIELDS and not include_secrets:
                value = None
            out[f.name] = value
        out["throughput_vector"] = list(self.throughput_raw)
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @property
    def created(self) -> dt.datetime | None:
        """Creation time as an aware UTC datetime (None when the service sent none)."""
        if self.creation_time is None:
            return None
        return dt.datetime.fromtimestamp(self.creation_time, tz=dt.timezone.utc)

    @property
    def throughput_vector(self) -> tuple[ThroughputPoint, ...]:
        """Throughput samples as (x, y) pairs, in the order the service sent them."""
        points = []
        for i, point in enumerate(self.throughput_raw):
            if not isinstance(point, Mapping):
                raise InvalidResponseError(
                    f"throughput_vector[{i}] of index {self.name!r} is not an object"
                )
            y = point.get("y")
            points.append(ThroughputPoint(str(point.get("x")), None if y is None else float(y)))
        return tuple(points)

    @property
    def limits(self) -> dict[str, int | None]:
        """The nine limits as raw integers (-1 unlimited, None absent)."""
        return {f: getattr(self, f) for f in LIMIT_FIELDS}

    def is_unlimited(self, field: str) -> bool:
        """Return whether a limit field is unlimited (-1)."""
        if field not in LIMIT_FIELDS:
            raise ValueError(f"unknown limit {field!r}; limits are: {', '.join(LIMIT_FIELDS)}")
        return getattr(self, field) == UNLIMITED

    def __repr__(self) -> str:
        parts = [
            f"id={self.id!r}",
            f"name={self.name!r}",
            f"type={str(self.type) if self.type is not None else None!r}",
            f"region={str(self.region) if self.region is not None else None!r}",
            f"endpoint={self.endpoint!r}",
            f"token={_mask(self.token)!r}",
            f"read_only_token={_mask(self.read_only_token)!r}",
            f"points={len(self.throughput_raw)}",
        ]
        return f"SearchIndex({', '.join(parts)})"

    __str__ = __repr__

    def _repr_html_(self) -> str:
        from searchkit.display import index_card_html

        return index_card_html(self)


# The field names of the API's index object: everything else a response carries is extra.
_API_FIELDS = frozenset(
    {f.name for f in dataclasses.fields(SearchIndex)} - {"throughput_raw", "extra"}
    | {"throughput_vector"}
)


class IndexList(Sequence[SearchIndex]):
    """The indexes of an account: a read-only sequence of :class:`SearchIndex`.

    Example:
        >>> indexes = IndexList.from_json([{"name": "docs"}, {"name": "news"}])
        >>> indexes.names()
        ['docs', 'news']
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
            InvalidResponseError: ``data`` is not an array of objects.
        """
        if not isinstance(data, list):
            raise InvalidResponseError(
                f"expected a JSON array of search indexes, got {type(data).__name__}"
            )
        return cls(SearchIndex.from_dict(item) for item in data)

    @overload
    def __getitem__(self, i: int) -> SearchIndex: ...
    @overload
    def __getitem__(self, i: slice) -> IndexList: ...
    def __getitem__(self, i: int | slice) -> SearchIndex | IndexList:
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
            KeyError: no index has that name (the message lists the names there are).
        """
        for item in self._items:
            if item.name == name:
                return item
        raise KeyError(f"no index named {name!r}; indexes: {', '.join(map(str, self.names()))}")

    def by_id(self, index_id: str) -> SearchIndex:
        """Return the index whose id is ``index_id``.

        Raises:
            KeyError: no index has that id.
        """
        for item in self._items:
            if item.id == index_id:
                return item
        raise KeyError(f"no index with id {index_id!r}")

    def to_dicts(self, *, include_secrets: bool = False) -> list[dict[str, Any]]:
        """Return the indexes as API-shaped dicts (tokens masked unless asked)."""
        return [i.to_dict(include_secrets=include_secrets) for i in self._items]

    def __repr__(self) -> str:
        shown = ", ".join(repr(n) for n in self.names()[:5])
        more = f", … {len(self) - 5} more" if len(self) > 5 else ""
        return f"IndexList({len(self)} indexes: [{shown}{more}])"

    __str__ = __repr__

    def _repr_html_(self) -> str:
        from searchkit.display import index_list_html

        return index_list_html(self)

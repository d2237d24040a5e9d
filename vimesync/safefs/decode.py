"""Untrusted TOML/JSON values decoded into dataclasses, by the dataclass's own field types.

A loaded document (:func:`loads_json`, :func:`loads_toml`) becomes an instance of a dataclass:
each field's annotation says what it accepts (``str``, ``int``, ``float``, ``bool``, ``Path``,
a ``Literal``, an ``Enum``, ``tuple[X, ...]``, ``tuple[X, Y]``, ``list[X]``, ``dict[str, X]``,
``X | None``, a nested dataclass, ``Any`` for a value checked elsewhere), and ``Annotated``
markers bound it further (:class:`Text`, :class:`Range`, :class:`Size`). A key the dataclass
does not name is refused (a class marked :func:`open_keys` ignores it); a missing key takes the
field's default, else it is refused (``field(metadata={"key": ...})`` names a key that is no
Python name). Every string, list and table is bounded (:class:`DecodeLimits`), so is the
nesting. ``bool`` is never taken for a number, nor a number for a ``bool``.

Errors are :class:`DecodeError` (a ConfigError): the file, the key path and what was expected
(``vimesync-carry.json: carried[3].paths[0]: expected a string``), never the value; a table's
own keys (content) are shown escaped and cut, like :func:`excerpt`.

:func:`encode` is the way back: a dataclass as the JSON value it decodes from.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from vimesync.errors import ConfigError
from vimesync.safefs.escape import excerpt
from vimesync.safefs.loads import loads_json, loads_toml

T = TypeVar("T")

CONTROL = r"[\x00-\x1f\x7f]"  # C0 controls and DEL: what :class:`Text` ``forbid`` usually names
_OPEN = "__decode_open_keys__"


@dataclass(frozen=True)
class Text:
    """A string's bounds: its length in characters, a pattern it must match whole, characters it
    may not hold, a check it must pass; ``what`` names the form in words for the error."""

    max: int | None = None
    min: int = 0
    pattern: str | None = None
    forbid: str | None = None  # a regex of characters refused anywhere (``CONTROL``)
    check: Callable[[str], bool] | None = None
    what: str = ""


@dataclass(frozen=True)
class Range:
    """A number's bounds (inclusive)."""

    lo: float | None = None
    hi: float | None = None


@dataclass(frozen=True)
class Size:
    """How many items a list or table may hold."""

    max: int
    min: int = 0


@dataclass(frozen=True)
class DecodeLimits:
    """What any value of a document may take at most, where its field says no less."""

    text: int = 1 << 16  # characters of one string (and of a table's key)
    items: int = 100_000  # items of one list, keys of one table
    depth: int = 32  # lists and tables inside one another


LIMITS = DecodeLimits()


class DecodeError(ConfigError):
    """A document that is not of its dataclass's shape: names the file and the key path."""

    def __init__(self, where: str, key: str, expected: str, *, hint: str | None = None) -> None:
        self.detail = f"{key}: {expected}" if key else expected  # the message without the file
        super().__init__(where, self.detail, hint=hint)
        self.key = key
        self.expected = expected


def open_keys(cls: type[T]) -> type[T]:
    """Mark a dataclass whose documents may hold keys it does not name (they are ignored)."""
    setattr(cls, _OPEN, True)
    return cls


def decode(
    schema: type[T],
    value: Any,
    *,
    where: str,
    limits: DecodeLimits = LIMITS,
    hint: str | None = None,
) -> T:
    """``value`` (a loaded TOML/JSON document) as an instance of the dataclass ``schema``;
    :class:`DecodeError` naming ``where`` and the key path when it is not one."""
    out: T = _Decoder(where, limits, hint).value(schema, value, (), 0)
    return out


def decode_json(schema: type[T], text: str, *, where: str, limits: DecodeLimits = LIMITS) -> T:
    """``text`` parsed as bounded JSON, then :func:`decode`."""
    return decode(schema, loads_json(text, where=where), where=where, limits=limits)


def decode_toml(schema: type[T], text: str, *, where: str, limits: DecodeLimits = LIMITS) -> T:
    """``text`` parsed as bounded TOML, then :func:`decode`."""
    return decode(schema, loads_toml(text, where=where), where=where, limits=limits)


def encode(value: Any) -> Any:
    """A dataclass (and what it holds) as the JSON value :func:`decode` reads it from: fields in
    their order under their keys (a field whose metadata says ``omit_default`` left out while it
    holds its default), enums as their values, tuples as lists, paths as strings."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            _key(f): encode(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.init and not (f.metadata.get("omit_default") and getattr(value, f.name) == f.default)
        }
    if isinstance(value, enum.Enum):
        return encode(value.value)
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


# ---------------------------------------------------------------------------------------------
# The walk


Key = tuple[object, ...]  # field names (str), list indexes (int), table keys (a 1-tuple)


def _shown(path: Key) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, tuple):
            out += f"[{excerpt(str(part[0]), 40)}]"
        else:
            out += f".{part}" if out else str(part)
    return out if len(out) <= 200 else out[:199] + "…"


def _key(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get("key", f.name))


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, include_extras=True)
    return _HINTS[cls]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_TYPE_WORDS = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def _words(tp: Any) -> str:
    """What a value of ``tp`` is called in an error."""
    base = get_args(tp)[0] if get_origin(tp) is Annotated else tp
    origin = get_origin(base)
    if base in _TYPE_WORDS:
        return _TYPE_WORDS[base]
    if base is Path:
        return "a path"
    if origin is Literal:
        values = [_literal(a) for a in get_args(base)]
        return values[0] if len(values) == 1 else "one of " + ", ".join(values)
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return "one of " + ", ".join(_literal(m.value) for m in base)
    if origin in (list, tuple):
        return "a list"
    if origin is dict or dataclasses.is_dataclass(base):
        return "a table"
    if base is type(None):
        return "null"
    if origin in (Union, types.UnionType):
        return " or ".join(_words(a) for a in get_args(base))
    return "a value"


def _literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _Decoder:
    def __init__(self, where: str, limits: DecodeLimits, hint: str | None) -> None:
        self.where, self.limits, self.hint = where, limits, hint

    def fail(self, path: Key, expected: str) -> DecodeError:
        return DecodeError(self.where, _shown(path), expected, hint=self.hint)

    def value(self, tp: Any, value: Any, path: Key, depth: int) -> Any:
        marks: tuple[Any, ...] = ()
        if get_origin(tp) is Annotated:
            tp, marks = get_args(tp)[0], tp.__metadata__
        origin = get_origin(tp)
        if tp is Any:
            return self.any(value, path, depth)
        if origin in (Union, types.UnionType):
            return self.union(tp, value, path, depth, marks)
        if origin is Literal or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
            return self.choice(tp, value, path)
        if tp in (bool, int, float, str, Path):
            return self.scalar(tp, value, path, marks)
        if depth >= self.limits.depth:
            raise self.fail(path, f"nested deeper than {self.limits.depth} levels")
        if origin in (list, tuple):
            return self.sequence(tp, value, path, depth, marks)
        if origin is dict:
            return self.table(tp, value, path, depth, marks)
        if dataclasses.is_dataclass(tp):
            return self.record(tp, value, path, depth)
        raise TypeError(f"decode: no rule for {tp!r}")  # a schema's mistake, not the document's

    def choice(self, tp: Any, value: Any, path: Key) -> Any:
        """One of a Literal's values, or an Enum's member by its value (of the same type: never
        ``true`` for ``1``)."""
        if get_origin(tp) is Literal:
            if any(type(value) is type(a) and value == a for a in get_args(tp)):
                return value
        else:
            for member in tp:
                if type(value) is type(member.value) and value == member.value:
                    return member
        raise self.fail(path, f"expected {_words(tp)}")

    def scalar(self, tp: type, value: Any, path: Key, marks: tuple[Any, ...]) -> Any:
        if tp is bool:
            if not isinstance(value, bool):
                raise self.fail(path, "expected true or false")
            return value
        if tp is int or tp is float:
            return self.number(tp, value, path, marks)
        text = self.text(value, path, marks)
        return Path(text) if tp is Path else text

    def union(self, tp: Any, value: Any, path: Key, depth: int, marks: tuple[Any, ...]) -> Any:
        arms = get_args(tp)
        if value is None:
            if type(None) in arms:
                return None
            raise self.fail(path, f"expected {_words(tp)}")
        real = [a for a in arms if a is not type(None)]
        if len(real) == 1:
            arm = Annotated[(real[0], *marks)] if marks else real[0]
            return self.value(arm, value, path, depth)
        for arm in real:
            try:
                return self.value(Annotated[(arm, *marks)] if marks else arm, value, path, depth)
            except DecodeError:
                continue
        raise self.fail(path, f"expected {_words(tp)}")

    def number(self, tp: type, value: Any, path: Key, marks: tuple[Any, ...]) -> Any:
        if tp is int and not _is_int(value):
            raise self.fail(path, "expected a whole number")
        if tp is float:
            if not (_is_int(value) or isinstance(value, float)) or not math.isfinite(value):
                raise self.fail(path, "expected a number")
            value = float(value)
        for mark in marks:
            if isinstance(mark, Range):
                if (mark.lo is not None and value < mark.lo) or (mark.hi is not None and value > mark.hi):
                    span = f"from {_bound(mark.lo)} to {_bound(mark.hi)}"
                    raise self.fail(path, f"expected {_words(tp)} {span}")
        return value

    def text(self, value: Any, path: Key, marks: tuple[Any, ...]) -> str:
        if not isinstance(value, str):
            raise self.fail(path, "expected a string")
        rule = next((m for m in marks if isinstance(m, Text)), Text())
        most = self.limits.text if rule.max is None else rule.max
        if len(value) > most or len(value) < rule.min:
            span = f"of at most {most:,}" if rule.min == 0 else f"of {rule.min} to {most:,}"
            raise self.fail(path, f"expected {rule.what or 'a string'} ({span} characters)")
        if rule.forbid is not None and re.search(rule.forbid, value):
            raise self.fail(path, f"expected {rule.what or 'a string'} (no control characters)")
        if (rule.pattern is not None and not re.fullmatch(rule.pattern, value)) or (
            rule.check is not None and not rule.check(value)
        ):
            raise self.fail(path, f"expected {rule.what or 'a string of the form vimesync writes'}")
        return value

    def size(self, value: Any, path: Key, marks: tuple[Any, ...]) -> None:
        rule = next((m for m in marks if isinstance(m, Size)), Size(self.limits.items))
        if len(value) > rule.max:
            raise self.fail(path, f"expected at most {rule.max:,} items")
        if len(value) < rule.min:
            raise self.fail(path, f"expected at least {rule.min:,} items")

    def sequence(self, tp: Any, value: Any, path: Key, depth: int, marks: tuple[Any, ...]) -> Any:
        if not isinstance(value, list):
            raise self.fail(path, "expected a list")
        args = get_args(tp)
        if get_origin(tp) is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(value) != len(args):
                raise self.fail(path, f"expected a list of {len(args)} items")
            pairs = enumerate(zip(args, value, strict=True))
            return tuple(self.value(a, v, (*path, i), depth + 1) for i, (a, v) in pairs)
        self.size(value, path, marks)
        items = [self.value(args[0], v, (*path, i), depth + 1) for i, v in enumerate(value)]
        return tuple(items) if get_origin(tp) is tuple else items

    def table(self, tp: Any, value: Any, path: Key, depth: int, marks: tuple[Any, ...]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, "expected a table")
        self.size(value, path, marks)
        key_tp, item_tp = get_args(tp)
        out = {}
        for n, (k, v) in enumerate(value.items()):
            try:
                key = self.value(key_tp, k, path, depth + 1)
            except DecodeError as exc:
                raise self.fail(path, f"key #{n + 1}: {exc.expected}") from None
            out[key] = self.value(item_tp, v, (*path, (k,)), depth + 1)
        return out

    def record(self, cls: Any, value: Any, path: Key, depth: int) -> Any:
        if not isinstance(value, dict):
            raise self.fail(path, "expected a table")
        fields = [f for f in dataclasses.fields(cls) if f.init]
        known = {_key(f) for f in fields}
        if not getattr(cls, _OPEN, False):
            unknown = next((k for k in value if k not in known), None)
            if unknown is not None:
                raise self.fail(path, f"unknown key {excerpt(str(unknown), 40)}")
        elif len(value) > self.limits.items:
            raise self.fail(path, f"expected at most {self.limits.items:,} keys")
        hints = _hints(cls)
        kwargs = {}
        for f in fields:
            key = _key(f)
            if key in value:
                kwargs[f.name] = self.value(hints[f.name], value[key], (*path, key), depth + 1)
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise self.fail((*path, key), "missing")
        return cls(**kwargs)

    def any(self, value: Any, path: Key, depth: int) -> Any:
        """A value checked by its reader: only its nesting, lists' and tables' sizes and strings'
        lengths are bounded here."""
        for at, item, level in _walk(value, path, depth):
            if level > self.limits.depth:
                raise self.fail(at, f"nested deeper than {self.limits.depth} levels")
            if isinstance(item, (list, dict)) and len(item) > self.limits.items:
                raise self.fail(at, f"expected at most {self.limits.items:,} items")
            if isinstance(item, str) and len(item) > self.limits.text:
                raise self.fail(at, f"expected a string of at most {self.limits.text:,} characters")
        return value


def _walk(value: Any, path: Key, depth: int) -> Iterator[tuple[Key, Any, int]]:
    """Every value inside ``value`` (itself first), with its key path and nesting (iterative)."""
    stack = [(path, value, depth)]
    while stack:
        at, item, level = stack.pop()
        yield at, item, level
        if isinstance(item, dict):
            stack += [((*at, (k,)), v, level + 1) for k, v in item.items()]
            stack += [(at, k, level) for k in item]  # keys are strings: their length counts too
        elif isinstance(item, list):
            stack += [((*at, i), v, level + 1) for i, v in enumerate(item)]


def _bound(value: float | None) -> str:
    if value is None:
        return "any"
    return f"{int(value):,}" if float(value).is_integer() else str(value)

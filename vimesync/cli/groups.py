"""The four flag groups as the command line spells them, and the one way a command takes them.

A command declares the groups it takes as parameters whose default says which of the group's
flags it offers (a command need not offer them all)::

    def report(
        settings: Settings,
        sync: SyncFlags = SYNC.take("config", "upstream", "range_", "baseline", "head"),
        engine: EngineFlags = ENGINE.take("engine", "source", "rev", "series", "strip"),
        out: OutputFlags = OUTPUT.take("format", "json", "output", format="DocFormatOpt"),
        publish: PublishOpt = None,
    ) -> int: ...

:func:`expand` turns such a function into the one typer reads: every flag a parameter of its own
(its option alias from :mod:`vimesync.cli.options`, named ``<group>_<flag>``), and back into the
group's dataclass, built by keyword, when the command runs; ``settings`` is the job's environment
the CLI boundary took (``main()`` in the app module), handed in through click's context.

``take`` returns a marker typed ``Any``, as ``typer.Option`` and ``dataclasses.field`` do: the
parameter's annotation is what the command receives. A group itself as the default offers all its
flags; a command's own options are groups of the same kind (:mod:`vimesync.cli.ownoptions`), each
building its use case's request with :func:`builds`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from typing import Any

MARKER = "__vimesync_groups__"
REQUIRED: Any = inspect.Parameter.empty  # a flag's default when the command line must give it


@dataclass(frozen=True)
class Flag:
    """One flag of a group: its option alias (a name in :mod:`vimesync.cli.options`) and the
    parameter's default on the command line (:data:`REQUIRED`: none, it must be given)."""

    alias: str
    default: Any = None


@dataclass(frozen=True)
class Group:
    """A flag group: its flags by name, and how their values become the app's dataclass."""

    name: str
    flags: dict[str, Flag]
    make: Callable[..., Any] = field(repr=False)

    def take(self, *names: str, **aliases: str) -> Any:
        """The flags of this group a command offers (``aliases``: a flag spelled by another alias
        in that command, ``ci --repo`` for ``repo``)."""
        unknown = [n for n in (*names, *aliases) if n not in self.flags]
        if unknown:
            raise KeyError(f"{self.name} has no flag {unknown}")
        taken = tuple(
            (n, Flag(aliases[n], self.flags[n].default) if n in aliases else self.flags[n])
            for n in dict.fromkeys((*names, *aliases))
        )
        return Taken(self, taken)


@dataclass(frozen=True)
class Taken:
    group: Group
    flags: tuple[tuple[str, Flag], ...]


def builds(target: str, *, tuples: tuple[str, ...] = ()) -> Callable[..., Any]:
    """A group's ``make`` that builds the dataclass ``target`` (``"module:Name"``, imported when
    the command runs) by keyword from the flags' values; ``tuples``: the repeatable flags, each a
    tuple (empty when not given)."""

    def make(**values: Any) -> Any:
        from importlib import import_module

        module, _, name = target.partition(":")
        for key in tuples:
            values[key] = tuple(values[key] or ())
        return getattr(import_module(module), name)(**values)

    return make


def _tuple(value: Any) -> tuple[Any, ...] | None:
    return tuple(value) if value else None


def _make_sync(**v: Any) -> Any:
    from vimesync.app.flags import SyncFlags

    if "path_map" in v:
        v["path_map"] = _tuple(v["path_map"])
    return SyncFlags(**v)


def _make_engine(**v: Any) -> Any:
    from vimesync.app.flags import EngineFlags

    if "no_cache" in v:
        v["use_cache"] = not v.pop("no_cache")
    if v.get("applier") is not None:
        v["applier"] = v["applier"].value
    return EngineFlags(**v)


def _make_ci(**v: Any) -> Any:
    from vimesync.app.flags import CiFlags

    for key in ("require", "skip_gate"):
        if key in v:
            v[key] = tuple(v[key] or ())
    return CiFlags(**v)


def _make_output(**v: Any) -> Any:
    from vimesync.app.flags import OutputFlags
    from vimesync.cli.options import output_format

    fmt = output_format(v.pop("format", None), v.pop("json", False))
    # a command that offers no --annotations writes none (it checks nothing)
    v["annotations"] = v["annotations"].value if "annotations" in v else "none"
    return OutputFlags(format=fmt, **v)  # type: ignore[arg-type]


SYNC = Group(
    "sync",
    {
        "config": Flag("ConfigOpt"),
        "upstream": Flag("UpstreamOpt"),
        "upstream_repo": Flag("UpstreamRepoOpt"),
        "downstream": Flag("DownstreamOpt"),
        "range_": Flag("RangeOpt"),
        "policy": Flag("PolicyOpt"),
        "path_map": Flag("MapOpt"),
        "baseline": Flag("BaselineOpt"),
        "head": Flag("HeadOpt"),
        "sync": Flag("SyncOpt"),
        "upstream_tip": Flag("UpstreamTipOpt"),
        "upstream_base": Flag("UpstreamBaseOpt"),
        "downstream_rev": Flag("DownstreamRevOpt"),
        "pr_metadata": Flag("PrMetadataOpt"),
        "github": Flag("GithubOpt", False),
        "accept_similar": Flag("AcceptSimilarOpt", False),
    },
    _make_sync,
)
ENGINE = Group(
    "engine",
    {
        "engine": Flag("EngineOpt"),
        "source": Flag("SourceOpt"),
        "rev": Flag("RevOpt"),
        "series": Flag("SeriesOpt"),
        "strip": Flag("StripOpt"),
        "python": Flag("PythonOpt"),
        "export": Flag("ExportOpt"),
        "keep_going": Flag("KeepGoingOpt", False),
        "strict": Flag("StrictOpt", False),
        "no_cache": Flag("NoCacheOpt", False),
        "applier": Flag("ApplierOpt"),
        "fuzz": Flag("FuzzOpt"),
        "engine_repo": Flag("EngineRepoOpt"),
    },
    _make_engine,
)
CI = Group(
    "ci",
    {
        "repo": Flag("CiRepoOpt"),
        "pr": Flag("CiPrOpt"),
        "sha": Flag("ShaOpt"),
        "require": Flag("RequireOpt"),
        "skip_gate": Flag("SkipGateOpt"),
        "pipeline": Flag("PipelineOpt"),
        "build": Flag("BuildOpt"),
    },
    _make_ci,
)
OUTPUT = Group(
    "output",
    {
        "format": Flag("FormatOpt"),
        "json": Flag("JsonOpt", False),
        "output": Flag("OutputOpt"),
        "junit": Flag("JunitOpt"),
        "annotations": Flag("AnnotationsOpt", None),
        "publish": Flag("PublishOpt"),
    },
    _make_output,
)


def _alias(name: str) -> Any:
    from vimesync.cli import options

    return getattr(options, name)


def _defaults(taken: Taken) -> dict[str, Any]:
    from vimesync.cli.options import Annotations

    return {
        n: (Annotations.auto if n == "annotations" and f.default is None else f.default)
        for n, f in taken.flags
    }


def _evaluated(fn: Callable[..., int], annotation: Any) -> Any:
    """A parameter's annotation as an object: the command module's own text (``from __future__
    import annotations``) read in its namespace, the one place its option aliases are named."""
    if not isinstance(annotation, str):
        return annotation
    return eval(annotation, fn.__globals__)  # noqa: S307 - our own source, not input


def expand(fn: Callable[..., int]) -> Callable[..., int]:
    """``fn`` as typer reads it: each group parameter one parameter per flag it takes, and a
    ``settings`` parameter filled from click's context (the CLI boundary's snapshot)."""
    params: list[inspect.Parameter] = []
    groups: dict[str, Taken] = {}
    wants_settings = False
    for p in inspect.signature(fn).parameters.values():
        if p.name == "settings":
            wants_settings = True
            continue
        taken = p.default.take(*p.default.flags) if isinstance(p.default, Group) else p.default
        if isinstance(taken, Taken):
            groups[p.name] = taken
            defaults = _defaults(taken)
            for name, flag in taken.flags:
                kind = inspect.Parameter.KEYWORD_ONLY
                flat = f"{p.name}_{name}"
                params.append(
                    inspect.Parameter(flat, kind, default=defaults[name], annotation=_alias(flag.alias))
                )
            continue
        annotation = _evaluated(fn, p.annotation)
        params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=annotation))
    import typer

    takes_ctx = any(p.name == "ctx" for p in params)
    if not takes_ctx:
        params.insert(0, inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context))

    @wraps(fn)
    def command(**kwargs: Any) -> int:
        ctx = kwargs["ctx"] if takes_ctx else kwargs.pop("ctx")
        call: dict[str, Any] = {}
        for pname, taken in groups.items():
            values = {name: kwargs.pop(f"{pname}_{name}") for name, _ in taken.flags}
            call[pname] = taken.group.make(**values)
        if wants_settings:
            call["settings"] = ctx.obj
        return fn(**call, **kwargs)

    command.__signature__ = inspect.Signature(params, return_annotation=int)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params} | {"return": int}
    del command.__wrapped__  # typer must read the signature above, not follow it back to ``fn``
    setattr(command, MARKER, groups)
    return command

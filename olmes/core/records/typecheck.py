"""The runtime check of a record against its TypedDict declaration: a truncated or foreign file is
one clear error naming the first bad field, never a silent wrong score."""

import functools
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, is_typeddict

from olmes.core.bounded_json import parse_json
from olmes.core.errors import OlmesError

R = TypeVar("R")


def parsed(text: str, where: str) -> Any:
    try:
        return parse_json(text, where)
    except ValueError as error:
        raise OlmesError(f"{where}: not JSON ({error})") from error


def checked(record: Any, kind: type[R], where: str) -> R:
    """``record`` itself when every declared field is present (unless NotRequired) with its type,
    nested records included."""
    name = kind.__name__
    if not isinstance(record, dict):
        raise OlmesError(f"{where}: not an olmes {name} (a JSON object is expected)")
    problem = _problem(record, kind)
    if problem is not None:
        field, what = problem
        if what is None:
            raise OlmesError(f"{where}: not an olmes {name}: field {field!r} is missing")
        raise OlmesError(f"{where}: field {field!r} of this {name} is not {what}")
    return record


def _problem(record: dict, kind: type) -> tuple[str, str | None] | None:
    """(dotted field, what it should be; None when missing) of the first bad field of a record."""
    for field, annotation in _fields(kind).items():
        if field not in record:
            if field in kind.__required_keys__:
                return field, None
        elif not _matches(record[field], annotation):
            inner = _inner_problem(record[field], annotation)
            if inner is not None:
                return f"{field}.{inner[0]}", inner[1]
            return field, _describe(annotation)
    return None


@functools.cache
def _fields(kind: type) -> dict[str, Any]:
    """A record's fields and their annotations (resolved once per record type: a store of 500 models
    has thousands of documents to check)."""
    return typing.get_type_hints(kind)


def _inner_problem(value: Any, annotation: Any) -> tuple[str, str | None] | None:
    """Where a nested record (directly, or as a list's element or a dict's value) goes wrong, for a
    precise message; None when the value is wrong as a whole."""
    origin = typing.get_origin(annotation)
    if is_typeddict(annotation) and isinstance(value, dict):
        return _problem(value, annotation)
    if origin in (types.UnionType, typing.Union):
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
        return _inner_problem(value, members[0]) if value is not None and members else None
    if origin is list and isinstance(value, (list, tuple)):  # a writer's tuple is a JSON list
        items, item = enumerate(value), typing.get_args(annotation)[0]
    elif origin is dict and isinstance(value, dict):
        items, item = value.items(), typing.get_args(annotation)[1]
    else:
        return None
    for key, element in items:
        if not _matches(element, item):
            inner = _inner_problem(element, item)
            return (f"{key}.{inner[0]}", inner[1]) if inner else (str(key), _describe(item))
    return None


def _matches(value: Any, annotation: Any) -> bool:
    return _matcher(annotation)(value)


@functools.cache
def _matcher(annotation: Any) -> Callable[[Any], bool]:
    """The check of a value against ``annotation``, built once per annotation (a summary of MMLU is
    hundreds of checks, a store of 500 models thousands of summaries)."""
    if annotation is Any:
        return lambda value: True
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        members = [_matcher(member) for member in typing.get_args(annotation)]
        return lambda value: any(member(value) for member in members)
    if origin is Literal:
        allowed = typing.get_args(annotation)
        return lambda value: value in allowed
    if is_typeddict(annotation):
        return lambda value: isinstance(value, dict) and _problem(value, annotation) is None
    if origin is list:
        item = _matcher(typing.get_args(annotation)[0])
        return lambda value: isinstance(value, (list, tuple)) and all(item(element) for element in value)
    if origin is dict:
        item = _matcher(typing.get_args(annotation)[1])
        return lambda value: isinstance(value, dict) and all(item(element) for element in value.values())
    if annotation is type(None):
        return lambda value: value is None
    if annotation in (float, int):
        kinds = int | float if annotation is float else int
        return lambda value: isinstance(value, kinds) and not isinstance(value, bool)
    return lambda value: isinstance(value, annotation)


def _describe(annotation: Any) -> str:
    return str(annotation).replace("typing.", "").replace("<class '", "").replace("'>", "")

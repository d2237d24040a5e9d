"""Checking the shape of an answer: the server is not trusted to send what the API documents, so
an answer of the wrong shape (an object where a list belongs, a list of strings) is a GitHubError
naming the endpoint, and a field of the wrong type is dropped."""

from __future__ import annotations

from typing import Any

from vimesync.errors import GitHubError

PER_PAGE = 100
MAX_PAGES = 100  # of a listing: 10,000 PRs
MAX_FIELD = 1024  # characters kept of a context, description, name or URL


def shape_error(url: str, expected: str) -> GitHubError:
    return GitHubError(f"GitHub returned an unexpected answer for {url}: expected {expected}")


def pages_error(url: str, pages: int) -> GitHubError:
    return GitHubError(
        f"GitHub {url}: more than {pages} pages, vimesync stops there",
        hint="narrow the range, or use --pr-metadata FILE",
    )


MAX_PAGE_ITEMS = PER_PAGE  # what every listing asks for: a page holding more is not GitHub


def list_of_objects(data: Any, url: str) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
        raise shape_error(url, "a list of objects")
    if len(data) > MAX_PAGE_ITEMS:
        raise shape_error(url, f"at most {MAX_PAGE_ITEMS} items a page (it holds {len(data):,})")
    return data


def number(value: Any, url: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise shape_error(url, "pull requests with a number")
    return value


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def field(value: Any) -> str:
    """A string GitHub holds for whoever set it (a status's context...), capped; "" otherwise."""
    return value[:MAX_FIELD] if isinstance(value, str) else ""


def is_sha(value: str) -> bool:
    return len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value)

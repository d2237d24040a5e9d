"""What the reading mixins of :class:`vimesync.github.client.GitHubClient` rely on (for mypy)."""

from __future__ import annotations

from typing import Any


class ClientBase:
    """One repository's GETs through the ETag cache, and one request with retries."""

    repo: str
    max_pages: int

    @property
    def graphql_url(self) -> str:
        """The GraphQL endpoint beside the REST root (``/graphql``, ``/api/graphql`` on a server)."""
        raise NotImplementedError

    def get(self, url: str, params: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError

    def _request(
        self, verb: str, url: str, params: dict[str, Any], headers: dict[str, str], body: Any = None
    ) -> tuple[dict[str, Any], Any]:
        raise NotImplementedError

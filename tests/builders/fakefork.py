"""The fork's repository on a GitHub stand-in (tests only): open pull requests and issues that the
sync bot lists, opens and edits, each write recorded; served by :func:`tests.builders.fakegithub.serve`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from vimesync import git


class FakeFork:
    """``/repos/<owner>/<name>``: GET the pulls and issues listings and one pull (ETags), POST
    pulls/issues/labels, PATCH pulls/issues; ``/graphql``: the two draft mutations, by the pull's
    node id. ``writes``: every request other than a GET, as (method, path, payload); ``listings``
    the GETs of a listing (pulls or issues). ``engine``: another repository's PRs
    (``/repos/<engine>/pulls/<n>``, the radar's one GET per PR, with ETags), their state fields by
    number; ``asked`` the paths of those GETs."""

    def __init__(self, remote: Path, repo: str = "vime-org/vime") -> None:
        self.remote = remote  # the bare repository the bot pushes to: a PR's head is its branch there
        self.repo = repo
        self.pulls: dict[int, dict[str, Any]] = {}
        self.issues: dict[int, dict[str, Any]] = {}
        self.writes: list[tuple[str, str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._next = 1
        self.engine: dict[str, dict[int, dict[str, Any]]] = {}
        self.asked: list[str] = []
        self.listings: list[tuple[str, dict[str, list[str]]]] = []
        self.fail: dict[tuple[str, str], int] = {}  # (method, path under the repo): status, once

    def close(self, number: int, *, merged: bool = False) -> None:
        """A maintainer closes pull ``number`` (merged or not)."""
        self.pulls[number].update(state="closed", merged_at="2026-12-07T00:00:00Z" if merged else None)

    def head_of(self, branch: str) -> str | None:
        out = git.run(self.remote, ["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], check=False)
        return out.decode().strip() or None

    def _number(self) -> int:
        n, self._next = self._next, self._next + 1
        return n

    def open_pull(self) -> dict[str, Any]:
        """The one open pull request (tests assume one)."""
        (pull,) = [p for p in self.pulls.values() if p["state"] == "open"]
        return pull

    def dashboard(self) -> dict[str, Any]:
        (issue,) = self.issues.values()
        return issue

    def handle(
        self,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        method: str = "GET",
        payload: Any = None,
    ) -> tuple[int, dict, Any]:
        self.headers.append(headers)
        prefix = f"/repos/{self.repo}"
        other = re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/([0-9]+)", path)
        if method == "GET" and other and other[1] != self.repo:
            return self._engine_pull(other[1], int(other[2]), path, headers)
        if path == "/graphql" and method == "POST":
            self.writes.append((method, path, payload))
            return self._graphql(payload)
        if not path.startswith(prefix):
            return 404, {}, {"message": "Not Found"}
        rest = path[len(prefix) :]
        if (method, rest) in self.fail:
            return self.fail.pop((method, rest)), {}, {"message": "Validation Failed"}
        if method != "GET":
            self.writes.append((method, rest, payload))
            return self._write(method, rest, payload)
        one = re.fullmatch(r"/pulls/([0-9]+)", rest)
        if rest in ("/pulls", "/issues"):
            self.listings.append((rest, query))
        if rest == "/pulls":
            body: Any = [self._pull_json(p) for p in sorted(self.pulls.values(), key=lambda p: -p["number"])]
            body = [p for p in body if p["state"] == "open"]
            head = query.get("head", [""])[0]
            if head:  # owner:branch
                body = [p for p in body if f"{self.repo.split('/')[0]}:{p['head']['ref']}" == head]
        elif one and int(one[1]) in self.pulls:
            body = self._pull_json(self.pulls[int(one[1])])
        elif rest == "/issues":
            label, state = query.get("labels", [""])[0], query.get("state", ["open"])[0]
            pulls = ({**p, "pull_request": {"merged_at": p.get("merged_at")}} for p in self.pulls.values())
            items = [*self.issues.values(), *pulls]
            body = [i for i in items if label in [x["name"] for x in i["labels"]]]
            body = [i for i in body if state == "all" or i["state"] == state]
            body = sorted(body, key=lambda i: -i["number"])
        else:
            return 404, {}, {"message": "Not Found"}
        etag = f'W/"{hash(json.dumps(body, sort_keys=True)) & 0xFFFFFFFF:x}"'
        if headers.get("if-none-match") == etag:
            return 304, {"ETag": etag}, None
        return 200, {"ETag": etag}, body

    def _engine_pull(self, repo: str, n: int, path: str, headers: dict[str, str]) -> tuple[int, dict, Any]:
        self.asked.append(path)
        state = self.engine.get(repo, {}).get(n)
        if state is None:
            return 404, {}, {"message": "Not Found"}
        body = {"number": n, "title": f"PR {n}", **state}
        etag = f'W/"{hash(json.dumps(body, sort_keys=True)) & 0xFFFFFFFF:x}"'
        if headers.get("if-none-match") == etag:
            return 304, {"ETag": etag}, None
        return 200, {"ETag": etag}, body

    def _pull_json(self, p: dict[str, Any]) -> dict[str, Any]:
        head = {"ref": p["head"], "sha": self.head_of(p["head"]) or p["sha"]}
        return {**p, "head": head, "base": {"ref": p["base"]}, "node_id": f"PR_node{p['number']}"}

    def _graphql(self, payload: Any) -> tuple[int, dict, Any]:
        """``markPullRequestReadyForReview`` / ``convertPullRequestToDraft``, GitHub-shaped: the
        answer is 200 either way, an unknown id or mutation is an ``errors`` list."""
        query, variables = payload.get("query", ""), payload.get("variables", {})
        node = variables.get("input", {}).get("pullRequestId", "")
        found = re.fullmatch(r"PR_node([0-9]+)", node)
        pull = self.pulls.get(int(found[1])) if found else None
        name = next(
            (n for n in ("markPullRequestReadyForReview", "convertPullRequestToDraft") if n in query), None
        )
        if pull is None or name is None:
            error = {
                "type": "NOT_FOUND",
                "path": [name],
                "message": f"Could not resolve to a node with the global id of '{node}'",
            }
            return 200, {}, {"data": {name: None} if name else None, "errors": [error]}
        pull["draft"] = name == "convertPullRequestToDraft"
        return 200, {}, {"data": {name: {"pullRequest": {"isDraft": pull["draft"]}}}}

    def _write(self, method: str, rest: str, payload: Any) -> tuple[int, dict, Any]:
        one = re.fullmatch(r"/(pulls|issues)/([0-9]+)", rest)
        labels = re.fullmatch(r"/issues/([0-9]+)/labels", rest)
        if method == "POST" and rest == "/pulls":
            n = self._number()
            url = f"https://github.com/{self.repo}/pull/{n}"
            pull = {
                "number": n,
                "state": "open",
                "title": payload["title"],
                "body": payload["body"],
                "draft": payload.get("draft", False),
                "head": payload["head"],
                "base": payload["base"],
                "sha": self.head_of(payload["head"]) or "0" * 40,
                "labels": [],
                "html_url": url,
                "merged_at": None,
            }
            self.pulls[n] = pull
            return 201, {}, self._pull_json(pull)
        if method == "POST" and rest == "/issues":
            n = self._number()
            url = f"https://github.com/{self.repo}/issues/{n}"
            issue = {
                "number": n,
                "state": "open",
                "title": payload["title"],
                "body": payload["body"],
                "labels": [{"name": x} for x in payload.get("labels", [])],
                "html_url": url,
            }
            self.issues[n] = issue
            return 201, {}, issue
        if method == "POST" and labels:
            n = int(labels[1])
            item = self.pulls.get(n) or self.issues[n]
            item["labels"] += [{"name": x} for x in payload["labels"]]
            return 200, {}, item["labels"]
        if method == "PATCH" and one:
            items = self.pulls if one[1] == "pulls" else self.issues
            item = items[int(one[2])]
            item.update({k: v for k, v in payload.items() if k in ("title", "body")})
            return 200, {}, self._pull_json(item) if one[1] == "pulls" else item
        return 404, {}, {"message": "Not Found"}

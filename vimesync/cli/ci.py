"""``vimesync ci``: the exact-head CI verdict of one commit (or a pull request's head)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.cli.options import (
    ConfigOpt,
    FormatOpt,
    JsonOpt,
    PrOpt,
    RepoOpt,
    RequireOpt,
    ShaOpt,
    output_format,
)
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput

if TYPE_CHECKING:
    from vimesync.ci.verdict import CiEvidence


def ci(
    repo: RepoOpt = None,
    pr: PrOpt = None,
    sha: ShaOpt = None,
    require: RequireOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Read the combined status and check runs of exactly one commit and give one verdict:
    green, pending, failing or missing (a required context never reported). With --pr, results
    on the PR's earlier commits are listed as not evidence for its head. Exit 0 green, 1 not."""
    from vimesync.ci.evidence import check_sha, choose_repo, client_for, read_evidence
    from vimesync.ci.verdict import evidence_to_dict
    from vimesync.config import load_config
    from vimesync.sop.gatesfile import gates_of

    json_out = output_format(fmt, json_) == "json"
    if pr is not None and len(pr) > 1:
        raise BadInput("ci reads one PR's head: pass --pr N once")
    number = pr[0] if pr else None
    if number is None and sha is None:
        raise BadInput("pass --pr N or --sha SHA: CI evidence is for one exact commit")
    cfg = load_config(config)
    repo = choose_repo(repo, cfg.ci_repo)
    if repo is None:
        raise BadInput("no repository: pass --repo owner/name (or set [ci] repo in vimesync.toml)")
    if sha is not None:
        check_sha(sha)
    required = tuple(require or ()) or cfg.ci_required or gates_of(cfg).required
    client = client_for(repo)
    try:
        evidence = read_evidence(client, sha=sha, pr=number, required=required)
    finally:
        client.close()
    if json_out:
        output.emit_json(evidence_to_dict(evidence))
    else:
        render(evidence)
    return EXIT_OK if evidence.green else EXIT_CHECK_FAILED


_STYLE = {"success": "green", "skipped": "dim", "pending": "yellow", "failure": "bold red"}
_MARK = {"success": "✓", "skipped": "-", "pending": "…", "failure": "✗"}
_VERDICT = {"green": "bold green", "pending": "yellow", "failing": "bold red", "missing": "bold red"}


def render(e: CiEvidence) -> None:
    """The verdict, each context of the head, what is missing, and what is not evidence."""
    con = output.stdout
    head8 = e.sha[:8]
    of = f" (head of PR #{e.pr})" if e.pr is not None else ""
    con.print(output.styled(f"CI of {e.repo} at {head8}{of}: ", (e.verdict, _VERDICT[e.verdict])))
    for r in e.results:
        desc = f" — {r.description}" if r.description else ""
        con.print(output.styled("  ", (f"{_MARK[r.state]} {r.label}", _STYLE[r.state]), f": {r.raw}{desc}"))
        if r.url and r.state != "success":
            con.print(output.styled(("    " + r.url, "dim")))
    if not e.results:
        con.print(output.styled(("  nothing reported on this commit", "red")))
    for name in e.missing:
        con.print(output.styled(("  ✗ " + name, "bold red"), ": required, never reported on ", head8))
    if e.earlier:
        con.print(output.styled(("Not evidence for " + head8, "bold"), f" (earlier commits of PR #{e.pr}):"))
        for r in e.earlier:
            con.print(output.styled(f"  {r.label}: {r.raw} on {r.sha[:8]}"))
    if e.earlier_cut:
        con.print(output.styled((f"  ({e.earlier_cut} older commits of the PR not read)", "dim")))

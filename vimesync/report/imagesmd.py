"""The container images of the Validation section, in the voice of a sync PR::

    Container images of f32a36f1 (`sop/records/4c193f1f..8c17b676.toml`):

    - amd64: `aosheninferact/vime@sha256:d2d60d7a…` (verified in `registry-1.docker.io`)
    - arm64: no candidate image built or validated at f32a36f1; blocked: no approved ARM64 host.

    Images: **blocked** — arm64: no approved ARM64 host.

    `vllm/vime:latest` remains unchanged.

Every reason and reference comes from a file a pull request can edit: escaped here."""

from __future__ import annotations

from vimesync.report.mdtext import code, escape, rev
from vimesync.sop.records import ImageEvidence


def render_images(e: ImageEvidence) -> list[str]:
    """One line per architecture: the image recorded at the head, why there is none (blocked),
    or that it is missing."""
    out = [f"Container images of {rev(e.head[:8])} ({code(f'sop/records/{e.sync}.toml')}):", ""]
    for i, arch in enumerate(e.architectures):
        rec = e.at_head(arch)
        if rec is not None and rec.is_blocked:
            out.append(
                f"- {escape(arch)}: no candidate image built or validated at {rev(rec.sha[:8])};"
                f" blocked: {escape(rec.blocked)}."
            )
            continue
        if rec is not None:
            name = f"{rec.ref}@{rec.digest}" if rec.ref and "@" not in rec.ref else rec.ref or rec.digest
            how = f"verified in {code(rec.verified)}" if rec.verified else "recorded, not verified"
            out.append(f"- {escape(arch)}: {code(name)} ({how})")
            continue
        older = next((r for r in e.records if r.arch == arch), None)
        why = f"recorded at {rev(older.sha[:8])}, not this head" if older else "not recorded"
        if i > 0:
            why += f" (follows {escape(e.architectures[0])} at the same head)"
        out.append(f"- {escape(arch)}: {why}")
    blocked = [r for r in (e.at_head(a) for a in e.architectures) if r is not None and r.is_blocked]
    if blocked:  # its own state, named: never read as done
        reasons = "; ".join(f"{escape(r.arch)}: {escape(r.blocked)}" for r in blocked)
        out += ["", f"Images: **blocked** — {reasons}."]
    promotions = [_promotion_line(e, ref) for ref in e.floating]
    return out + (["", *promotions] if promotions else [])


def _promotion_line(e: ImageEvidence, ref: str) -> str:
    """``vllm/vime:latest`` moved to ``sha256:…`` (read in the registry), is to be moved to it
    (promoted at this head, the tag not read), or remains unchanged: a move never read is
    never claimed."""
    p = e.promoted(ref)
    if p is None:
        return f"{code(ref)} remains unchanged."
    if p.verified:
        return f"{code(ref)} moved to {code(p.digest)} (verified in {code(p.verified)})."
    return f"{code(ref)} to be moved to {code(p.digest)} (recorded, not verified)."

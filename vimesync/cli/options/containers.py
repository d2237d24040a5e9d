"""The container images built from the sync head (``sop record image``) and their promotion to a
floating tag (``sop promote``)."""

from __future__ import annotations

from typing import Annotated

import typer

ArchOpt = Annotated[
    str, typer.Option("--arch", metavar="ARCH", help="amd64 or arm64 (sop/gates.toml [images]).")
]
DigestOpt = Annotated[
    str | None, typer.Option("--digest", metavar="sha256:HEX", help="The image manifest digest.")
]
BlockedOpt = Annotated[
    str | None,
    typer.Option(
        "--blocked",
        metavar="REASON",
        help="No image can be built for this architecture: why, one line (instead of --digest).",
    ),
]
ImageRefOpt = Annotated[
    str | None, typer.Option("--ref", metavar="IMAGE", help="The image reference (registry/name:tag).")
]
BuildHostOpt = Annotated[
    str | None,
    typer.Option(
        "--host", metavar="HOST", help="Where it was built (checked against [images] allowed_hosts)."
    ),
]
VerifyImageOpt = Annotated[
    bool,
    typer.Option(
        "--verify",
        help="Check the image against its registry first (OCI API: the digest, and the"
        " org.opencontainers.image.revision label is the head); token: VIMESYNC_REGISTRY_TOKEN.",
    ),
]
RegistryInsecureOpt = Annotated[
    bool,
    typer.Option(
        "--registry-insecure",
        help="Plain http to the registry, for a loopback one only (also VIMESYNC_REGISTRY_INSECURE=1).",
    ),
]

# Promotion.
PromoteRefOpt = Annotated[
    str,
    typer.Option("--ref", metavar="IMAGE", help="The floating tag to move (registry/name:latest)."),
]
PromoteDigestOpt = Annotated[
    str | None,
    typer.Option(
        "--digest",
        metavar="sha256:HEX",
        help="What the tag moves to (default: the one image recorded; a multi-arch index: give it).",
    ),
]

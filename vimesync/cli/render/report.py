"""How ``vimesync report`` shows its result: Markdown or JSON, to stdout or ``--output``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.report import ReportResult
    from vimesync.cli.cioutputs import CiOutputs


def show_report(result: ReportResult, *, as_json: bool, out_file: Path | None, ci: CiOutputs) -> None:
    from vimesync.app.report import write_output
    from vimesync.outputs.findings import gate_findings
    from vimesync.report.markdown import render_markdown

    for note in result.notes:
        output.warn(note)
    markdown = render_markdown(result.report)
    if out_file is not None:
        text = json.dumps(result.to_json(), indent=2) + "\n" if as_json else markdown
        write_output(out_file, text)
        output.stderr.print(output.styled(f"wrote {out_file}"))
    elif as_json:
        output.emit_json(result.to_json())
    else:
        with ci.human_output():
            output.stdout.file.write(markdown)
            output.stdout.file.flush()
    ci.emit(gate_findings(result.report.gates, summary=markdown))

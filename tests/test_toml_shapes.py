"""Records and ledgers people edit by hand may use any valid TOML shape (issue 18, finding 13):
inline tables, inline arrays and dotted keys are read, and written back in a shape our own reader
reads, with the same values; nothing ends in a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from vimesync.audit.ledger import read_ledger, record, write_ledger
from vimesync.audit.model import Review
from vimesync.sop.records import ImageRecord, load_images, record_image, records_file

D1, D2 = "sha256:" + "1" * 64, "sha256:" + "2" * 64
S1, S2 = "a" * 40, "b" * 40
SHAPES = {
    "inline": f'# by hand\nimages = {{ amd64 = {{ digest = "{D1}", sha = "{S1}" }} }}\n',
    "dotted": f'# by hand\nimages.amd64.digest = "{D1}"\nimages.amd64.sha = "{S1}"\n',
    "dotted in a table": f'[images]\namd64.digest = "{D1}"\namd64.sha = "{S1}"\n',
    "inline in a table": f'[images]\namd64 = {{ digest = "{D1}", sha = "{S1}" }}\n',
    "standard": f'[images.amd64]\ndigest = "{D1}"\nsha = "{S1}"\n',
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_image_record_of_any_shape_is_read_and_written_back(tmp_path: Path, shape: str) -> None:
    (tmp_path / ".git").mkdir()
    path = records_file(tmp_path, "s")
    path.parent.mkdir(parents=True)
    path.write_text(SHAPES[shape])
    assert load_images(tmp_path, "s")["amd64"].digest == D1
    record_image(tmp_path, "s", ImageRecord("arm64", D2, S1, recorded_at="2026-12-01T00:00:00Z"))
    record_image(tmp_path, "s", ImageRecord("amd64", D2, S2, recorded_at="2026-12-01T00:00:00Z"))
    got = load_images(tmp_path, "s")
    assert {a: (r.digest, r.sha) for a, r in got.items()} == {"amd64": (D2, S2), "arm64": (D2, S1)}


@pytest.mark.parametrize(
    "text",
    [
        'sync = "s"\nreview = [{ path = "vime/a.py", oid = "' + "c" * 40 + '", by = "alice" }]\n',
        'sync = "s"\n[[review]]\npath = "vime/a.py"\noid = "' + "c" * 40 + '"\nby = "alice"\n',
    ],
)
def test_a_ledger_of_any_shape_is_read_and_written_back(tmp_path: Path, text: str) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "sop/reviews/s.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    ledger = read_ledger(path, "s")
    assert [r.path for r in ledger.reviews] == ["vime/a.py"]
    new = Review(path="vime/b.py", oid="d" * 40, by="bob", at="2026-12-01T00:00:00Z")
    write_ledger(path, record(ledger, [new]))
    assert [(r.path, r.by) for r in read_ledger(path, "s").reviews] == [
        ("vime/a.py", "alice"),
        ("vime/b.py", "bob"),
    ]

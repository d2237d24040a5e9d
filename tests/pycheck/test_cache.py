"""The parse cache: hits and misses, corruption, concurrency, never fatal."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from vimesync.pycheck.cache import DB_NAME, Cached, ParseCache
from vimesync.pycheck.model import StatKey

OK = Cached(None)
BAD = Cached("SyntaxError: invalid syntax", 3, 7)


def test_hit_and_miss(tmp_path: Path) -> None:
    with ParseCache(tmp_path) as c:
        c.put("py3.12", [("a" * 40, OK), ("b" * 40, BAD)])
    with ParseCache(tmp_path) as c:
        assert c.get_many("py3.12", ["a" * 40, "b" * 40, "c" * 40]) == {"a" * 40: OK, "b" * 40: BAD}
        assert c.get_many("py3.11", ["a" * 40]) == {}  # another interpreter/grammar never hits
    assert [p.name for p in tmp_path.iterdir()] == [DB_NAME]  # one file


def test_thousands_of_keys(tmp_path: Path) -> None:
    keys = [f"{i:040x}" for i in range(2500)]
    with ParseCache(tmp_path) as c:
        c.put("e", [(k, OK) for k in keys])
        assert len(c.get_many("e", keys)) == 2500


def test_garbage_file_is_reset(tmp_path: Path) -> None:
    (tmp_path / DB_NAME).write_bytes(b"this is not sqlite" * 100)
    with ParseCache(tmp_path) as c:
        assert c.enabled and c.note and "reset" in c.note
        c.put("e", [("a" * 40, OK)])
        assert c.get_many("e", ["a" * 40]) == {"a" * 40: OK}


def test_corrupt_pages_are_not_fatal(tmp_path: Path) -> None:
    keys = [f"{i:040x}" for i in range(3000)]
    with ParseCache(tmp_path) as c:
        c.put("e", [(k, BAD) for k in keys])
    db = tmp_path / DB_NAME
    raw = bytearray(db.read_bytes())
    raw[8192:-4096] = b"\xa5" * (len(raw) - 8192 - 4096)
    db.write_bytes(bytes(raw))
    with ParseCache(tmp_path) as c:
        c.get_many("e", keys)  # whatever it returns, it does not raise
        c.put("e", [("f" * 40, OK)])
    with ParseCache(tmp_path) as c:
        assert c.get_many("e", ["f" * 40]) in ({"f" * 40: OK}, {})


def test_disabled_cache(tmp_path: Path) -> None:
    with ParseCache(tmp_path / "c", enabled=False) as c:
        c.put("e", [("a" * 40, OK)])
        assert c.get_many("e", ["a" * 40]) == {} and not c.enabled
    assert not (tmp_path / "c").exists()


def test_unusable_directory_turns_the_cache_off(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    c = ParseCache(tmp_path / "file" / "cache")
    assert not c.enabled and c.note and "disabled" in c.note
    c.put("e", [("a" * 40, OK)])


def test_a_locked_cache_is_skipped(tmp_path: Path) -> None:
    ParseCache(tmp_path).close()
    other = sqlite3.connect(tmp_path / DB_NAME, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        c = ParseCache(tmp_path, busy_timeout=0.2)
        c.put("e", [("a" * 40, OK)])  # busy: skipped, not raised
        assert c.note
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert (tmp_path / DB_NAME).exists()  # a busy database is never deleted


def test_concurrent_writers(tmp_path: Path) -> None:
    ParseCache(tmp_path).close()
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            with ParseCache(tmp_path) as c:
                for r in range(5):
                    c.put("e", [(f"{n}-{r}-{i}", OK) for i in range(300)])
        except BaseException as exc:  # pragma: no cover - the assertion below reports it
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with ParseCache(tmp_path) as c:
        keys = [f"{n}-{r}-{i}" for n in range(3) for r in range(5) for i in range(300)]
        assert len(c.get_many("e", keys)) == 4500


def test_no_directory_keeps_nothing(tmp_path: Path) -> None:
    with ParseCache(None) as c:  # --no-cache, or no cache folder: nothing hits, nothing is written
        assert not c.enabled
        c.put("py3.12", [("a" * 40, OK)])
        assert c.get_many("py3.12", ["a" * 40]) == {}


def test_stat_records_racy_rule_and_garbage(tmp_path: Path) -> None:
    key, future = StatKey(6, 1_000, 42), StatKey(6, 2**62, 7)  # 1970 and 2116
    with ParseCache(tmp_path) as c:
        c.put_stats([(b"/t/a.py", key, "a" * 40), (b"/t/future.py", future, "b" * 40)])
        assert c.known_oids({b"/t/a.py": key, b"/t/future.py": future}) == {
            b"/t/a.py": "a" * 40  # the other is not older than the cache's write time: re-hashed
        }
        assert c.known_oids({b"/t/a.py": StatKey(6, 1_000, 43)}) == {}  # another inode
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("UPDATE stats SET oid = 5, written = 'x'")  # a damaged file: rows of the wrong types
    conn.commit()
    conn.close()
    with ParseCache(tmp_path) as c:
        assert c.known_oids({b"/t/a.py": key}) == {}


def test_a_stat_record_comes_with_its_outcome_for_that_interpreter_only(tmp_path: Path) -> None:
    key = StatKey(6, 1_000, 42)
    with ParseCache(tmp_path) as c:
        c.put_stats([(b"/t/a.py", key, "a" * 40), (b"/t/b.py", key._replace(inode=43), "b" * 40)])
        c.put("py3.12", [("a" * 40, BAD)])
        files = {b"/t/a.py": key, b"/t/b.py": key._replace(inode=43)}
        assert c.known(files, "py3.12") == {b"/t/a.py": ("a" * 40, BAD), b"/t/b.py": ("b" * 40, None)}
        assert c.known(files, "py3.11") == {b"/t/a.py": ("a" * 40, None), b"/t/b.py": ("b" * 40, None)}
        assert c.has_results("py3.12") and not c.has_results("py3.11")
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("UPDATE results SET message = x'ff'")  # a damaged row: no outcome, the file is parsed
    conn.commit()
    conn.close()
    with ParseCache(tmp_path) as c:
        assert c.known({b"/t/a.py": key}, "py3.12") == {b"/t/a.py": ("a" * 40, None)}


def test_whether_it_holds_a_grammar_is_answered_without_making_a_cache(tmp_path: Path) -> None:
    where = tmp_path / "cache"
    assert not ParseCache.holds(where, "py3.10/w2") and not where.exists()  # nothing made to say no
    assert not ParseCache.holds(None, "py3.10/w2")
    with ParseCache(where) as cache:
        cache.put("py3.10/w2", [("a" * 40, Cached(None))])
    assert ParseCache.holds(where, "py3.10/w2") and not ParseCache.holds(where, "py3.11/w2")
    (where / DB_NAME).write_bytes(b"not a database")
    assert not ParseCache.holds(where, "py3.10/w2")  # a damaged file holds nothing

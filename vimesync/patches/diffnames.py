"""How ``git apply`` finds file names in diff headers, ported from git's apply.c.

Pure byte-level helpers: C-style quoted names (``"a/caf\\303\\251"``), -pN stripping, the
``diff --git`` line (``git_header_name``), ``---``/``+++`` lines with optional timestamps
(``find_name_traditional``) and GNU diff's epoch timestamps that mean creation/deletion.
The functions keep git's names and decisions so the parser can be read side by side with
apply.c; the caller validates every result with ``safety.check_path``.
"""

from __future__ import annotations

import re

SPACE = b" \t\n\v\f\r"  # C isspace() in the C locale
TERM_SPACE = 1
TERM_TAB = 2

_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("v"): 11}


def _isdigit(c: int) -> bool:
    return 48 <= c <= 57


def _isspace(c: int) -> bool:
    return c in SPACE


def unquote_c(s: bytes, start: int = 0) -> tuple[bytes, int] | None:
    """git's ``unquote_c_style``: ``s[start]`` must open a C-quoted name. Return the name and
    the index just past the closing quote, or None when the quoting is malformed."""
    if s[start : start + 1] != b'"':
        return None
    out = bytearray()
    i, n = start + 1, len(s)
    while i < n:
        c = s[i]
        i += 1
        if c == 0x22:  # closing quote
            return bytes(out), i
        if c != 0x5C:  # not a backslash: literal byte
            out.append(c)
            continue
        if i >= n:
            return None
        c = s[i]
        i += 1
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif c in (0x5C, 0x22):
            out.append(c)
        elif 0x30 <= c <= 0x33:  # octal \[0-3][0-7][0-7]
            digits = s[i : i + 2]
            if len(digits) != 2 or not all(0x30 <= d <= 0x37 for d in digits):
                return None
            out.append(((c - 48) << 6) | ((digits[0] - 48) << 3) | (digits[1] - 48))
            i += 2
        else:
            return None
    return None


def is_dev_null(s: bytes) -> bool:
    return s.startswith(b"/dev/null") and len(s) > 9 and _isspace(s[9])


def _name_terminates(c: int, terminate: int) -> bool:
    if c == 0x20 and not terminate & TERM_SPACE:
        return False
    if c == 0x09 and not terminate & TERM_TAB:
        return False
    return True


def find_name_gnu(line: bytes, p_value: int) -> bytes | None:
    """A quoted name: unquote, then drop ``p_value`` leading components."""
    res = unquote_c(line)
    if res is None:
        return None
    name = res[0]
    cp = 0
    for _ in range(p_value):
        slash = name.find(b"/", cp)
        if slash < 0:
            return None
        cp = slash + 1
    return name[cp:]


def find_name_common(
    line: bytes, default: bytes | None, p_value: int, end: int | None, terminate: int
) -> bytes | None:
    """An unquoted name ending at whitespace (per ``terminate``) or at ``end``; ``default`` wins
    when the name is missing or is ``default`` with something tacked on ("file.orig")."""
    start = 0 if p_value == 0 else None
    i = 0
    stop = len(line) if end is None else end
    while i < stop:
        c = line[i]
        if end is None and _isspace(c) and (c == 0x0A or _name_terminates(c, terminate)):
            break
        i += 1
        if c == 0x2F:
            p_value -= 1
            if p_value == 0:
                start = i
    if start is None or i - start == 0:
        return default
    name = line[start:i]
    if default is not None and len(default) < len(name) and name.startswith(default):
        return default
    return name


def find_name(line: bytes, default: bytes | None, p_value: int, terminate: int) -> bytes | None:
    if line[:1] == b'"':
        name = find_name_gnu(line, p_value)
        if name is not None:
            return name
    return find_name_common(line, default, p_value, None, terminate)


def find_name_traditional(line: bytes, default: bytes | None, p_value: int) -> bytes | None:
    """The name on a ``---``/``+++`` line of a non-git diff, minus any trailing timestamp."""
    if line[:1] == b'"':
        name = find_name_gnu(line, p_value)
        if name is not None:
            return name
    length = line.find(b"\n")
    if length < 0:
        length = len(line)
    date = diff_timestamp_len(line, length)
    if not date:
        return find_name_common(line, default, p_value, None, TERM_TAB)
    return find_name_common(line, default, p_value, length - date, 0)


def skip_tree_prefix(p_value: int, s: bytes) -> int | None:
    """Index in ``s`` after ``p_value`` leading components; None for absolute or too short."""
    if not p_value:
        return None if s[:1] == b"/" else 0
    nslash = p_value
    for i, ch in enumerate(s):
        if ch == 0x2F:
            nslash -= 1
            if nslash <= 0:
                return None if i == 0 else i + 1
    return None


def git_header_name(p_value: int, line: bytes) -> bytes | None:
    """The name on a ``diff --git a/x b/x`` line when both sides agree (git only trusts it for
    mode-only changes and empty files; renames name their paths elsewhere)."""
    line = line[len(b"diff --git ") :]
    if line[:1] == b'"':
        return _quoted_first(p_value, line)
    name = skip_tree_prefix(p_value, line)
    if name is None:
        return None
    quote = line.find(b'"', name)
    if quote >= 0:
        return _quoted_second(p_value, line, name, quote)
    return _unquoted(p_value, line, name)


def _quoted_first(p_value: int, line: bytes) -> bytes | None:
    """``"a/x" b/x`` or ``"a/x" "b/x"``: the first name quoted."""
    llen = len(line)
    res = unquote_c(line.rstrip(b"\n"))
    if res is None:
        return None
    first, second = res
    cp = skip_tree_prefix(p_value, first)
    if cp is None:
        return None
    first = first[cp:]
    while second < llen and _isspace(line[second]):
        second += 1
    if second >= llen:
        return None
    if line[second] == 0x22:
        res2 = unquote_c(line.rstrip(b"\n"), second)
        if res2 is None:
            return None
        cp2 = skip_tree_prefix(p_value, res2[0])
        if cp2 is None or res2[0][cp2:] != first:
            return None
        return first
    rest = line[second:]
    cp2 = skip_tree_prefix(p_value, rest)
    # git compares including the line's "\n" here, so this form never matches.
    if cp2 is None or rest[cp2:] != first:
        return None
    return first


def _quoted_second(p_value: int, line: bytes, name: int, quote: int) -> bytes | None:
    """``a/x "b/x"``: the second name quoted (it starts at ``quote``; the first at ``name``)."""
    res = unquote_c(line.rstrip(b"\n"), quote)
    if res is None:
        return None
    sp = res[0]
    np = skip_tree_prefix(p_value, sp)
    if np is None:
        return None
    tail = sp[np:]
    n = len(tail)
    if n < quote - name and line[name : name + n] == tail and _isspace(line[name + n]):
        return tail
    return None


def _unquoted(p_value: int, line: bytes, name: int) -> bytes | None:
    """``a/x b/x``: neither quoted, so a name is accepted only if it shows up twice, exactly the
    same form (the first starts at ``name``)."""
    eol = line.find(b"\n", name)
    if eol < 0:
        return None
    rest = line[name:eol]
    for length, c in enumerate(rest):
        if c not in (0x09, 0x20):
            continue
        other = rest[length + 1 :]
        cp = skip_tree_prefix(p_value, other)
        if cp is None:
            continue  # a space at the end of a directory name: keep looking
        if len(other) - cp == length and other[cp:] == rest[:length]:
            return rest[:length]
    return None


# --- timestamps on ---/+++ lines (GNU and POSIX diff) ---------------------------------------


def _sane_tz_len(s: bytes, n: int) -> int:
    if n < 6 or s[n - 6] != 0x20:
        return 0
    tz = n - 6
    if s[tz + 1] not in b"+-":
        return 0
    if not all(_isdigit(c) for c in s[tz + 2 : n]):
        return 0
    return n - tz


def _tz_with_colon_len(s: bytes, n: int) -> int:
    if n < 7 or s[n - 3] != 0x3A:
        return 0
    tz = n - 7
    if s[tz] != 0x20 or s[tz + 1] not in b"+-":
        return 0
    p = s[tz + 2 : n]
    if not (_isdigit(p[0]) and _isdigit(p[1]) and p[2] == 0x3A and _isdigit(p[3]) and _isdigit(p[4])):
        return 0
    return n - tz


def _date_len(s: bytes, n: int) -> int:
    if n < 8 or s[n - 3] != 0x2D:
        return 0
    date = n - 8
    p = s[date:n]
    if not (_isdigit(p[0]) and _isdigit(p[1]) and p[2] == 0x2D and _isdigit(p[3]) and _isdigit(p[4])):
        return 0
    if not (p[5] == 0x2D and _isdigit(p[6]) and _isdigit(p[7])):
        return 0
    if date >= 2 and _isdigit(s[date - 1]) and _isdigit(s[date - 2]):
        date -= 2  # 4-digit year
    return n - date


def _short_time_len(s: bytes, n: int) -> int:
    if n < 9 or s[n - 3] != 0x3A:
        return 0
    t = n - 9
    p = s[t:n]
    if not (p[0] == 0x20 and _isdigit(p[1]) and _isdigit(p[2]) and p[3] == 0x3A):
        return 0
    if not (_isdigit(p[4]) and _isdigit(p[5]) and p[6] == 0x3A and _isdigit(p[7]) and _isdigit(p[8])):
        return 0
    return n - t


def _fractional_time_len(s: bytes, n: int) -> int:
    if not n or not _isdigit(s[n - 1]):
        return 0
    p = n - 1
    while p > 0 and _isdigit(s[p]):
        p -= 1
    if s[p] != 0x2E:
        return 0
    m = _short_time_len(s, p)
    if not m:
        return 0
    return n - p + m


def _trailing_spaces_len(s: bytes, n: int) -> int:
    if not n or s[n - 1] != 0x20:
        return 0
    p = n
    while p:
        p -= 1
        if s[p] != 0x20:
            return n - (p + 1)
    return n


def diff_timestamp_len(s: bytes, n: int) -> int:
    """Length of a trailing "\\t2010-07-05 19:41:17.620000023 -0500"-style timestamp of ``s[:n]``."""
    if not n or not _isdigit(s[n - 1]):
        return 0
    end = n
    end -= _sane_tz_len(s, end) or _tz_with_colon_len(s, end)
    end -= _short_time_len(s, end) or _fractional_time_len(s, end)
    m = _date_len(s, end)
    if not m:
        return 0
    end -= m
    if end == 0:
        return 0
    if s[end - 1] == 0x09:
        return n - (end - 1)
    if s[end - 1] != 0x20:
        return 0
    end -= _trailing_spaces_len(s, end)
    return n - end


_EPOCH = re.compile(rb"^[0-2][0-9]:([0-5][0-9]):00(\.0+)? ([-+][0-2][0-9]:?[0-5][0-9])\n")


def has_epoch_timestamp(nameline: bytes) -> bool:
    """GNU diff writes the epoch as the timestamp of a missing side: creation or deletion."""
    eol = nameline.find(b"\n")
    if eol < 0:
        return False
    tab = nameline.rfind(b"\t", 0, eol)
    if tab < 0:
        return False
    ts = nameline[tab + 1 :]
    if ts.startswith(b"1969-12-31 "):
        epoch_hour = 24
    elif ts.startswith(b"1970-01-01 "):
        epoch_hour = 0
    else:
        return False
    ts = ts[11:]
    m = _EPOCH.match(ts)
    if not m:
        return False
    hour, minute = int(ts[:2]), int(m.group(1))
    zone = m.group(3)
    digits = zone[1:]
    if b":" in digits:
        hh, mm = digits.split(b":")
        offset = int(hh) * 60 + int(mm)
    else:
        v = int(digits)
        offset = (v // 100) * 60 + v % 100
    if zone[:1] == b"-":
        offset = -offset
    return hour * 60 + minute - offset == epoch_hour * 60

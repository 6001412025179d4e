#!/usr/bin/env python3
"""Prints the module map: a line per Rust module of the given source
folders (`path — job — lines`), the job being the first sentence of the
file's `//!` doc comment (cut at a word past 140 characters), then each
folder's file and line count. Modules without one are listed on stderr and
make the exit status 1.

Usage: scripts/module-map.py src transforms/src search/src
"""

import os
import re
import sys

# The longest job printed; a longer first sentence is cut at a word.
WIDTH = 140


def first_sentence(path):
    """The file's `//!` comment up to its first full stop, on one line."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            stripped = line.strip()
            if stripped.startswith("//!"):
                lines.append(stripped[3:].strip())
            elif stripped.startswith("#![") or (not stripped and not lines):
                continue
            else:
                break
    text = " ".join(l for l in lines if l)
    if not text:
        return None
    # The first sentence: up to a full stop followed by a space or the end,
    # outside backticks.
    out, in_code = [], False
    for i, ch in enumerate(text):
        out.append(ch)
        if ch == "`":
            in_code = not in_code
        elif ch == "." and not in_code and (i + 1 == len(text) or text[i + 1] == " "):
            break
    sentence = re.sub(r"\s+", " ", "".join(out)).strip()
    if len(sentence) > WIDTH:
        sentence = sentence[:WIDTH].rsplit(" ", 1)[0] + " …"
    return sentence


def main(roots):
    missing = []
    for root in roots:
        files = []
        for d, _, names in os.walk(root):
            files.extend(os.path.join(d, n) for n in names if n.endswith(".rs"))
        total = 0
        for path in sorted(files):
            with open(path, encoding="utf-8") as f:
                count = sum(1 for _ in f)
            total += count
            job = first_sentence(path)
            if job is None:
                missing.append(path)
                job = "(no `//!` doc comment)"
            print(f"{path} — {job} — {count}")
        print(f"{root}: {len(files)} files, {total} lines")
    for path in missing:
        print(f"no `//!` doc comment: {path}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["src", "transforms/src", "search/src"]))

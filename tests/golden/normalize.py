#!/usr/bin/env python3
"""Normalize `nft list` output for golden diffs: counters to zero, an
element's time left ("expires ...", which the kernel counts down) dropped,
and the elements of every set/map one per line, sorted (hash sets iterate
in a per-boot random order)."""
import re
import sys

text = sys.stdin.read()
text = re.sub(r"counter packets \d+ bytes \d+", "counter packets 0 bytes 0", text)
text = re.sub(r" expires [0-9dhms]+", "", text)


def fix(m):
    indent, body = m.group(1), m.group(2)
    items = sorted(i.strip() for i in body.replace("\n", " ").split(",") if i.strip())
    inner = ",\n".join(indent + "\t" + i for i in items)
    return f"{indent}elements = {{\n{inner}\n{indent}}}"


text = re.sub(r"^(\s*)elements = \{ (.*?) \}$", fix, text, flags=re.S | re.M)
sys.stdout.write(text)

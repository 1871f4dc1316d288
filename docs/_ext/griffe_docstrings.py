"""A griffe extension for the API reference: read streamspark's docstrings as they are written.

The docstrings use the Sphinx style with plain ``>>>`` examples. Before griffe parses them:

- each run of ``>>>`` lines (with their continuation and output lines, up to the next blank
  line) is wrapped in a ``pycon`` code fence: rendered as Markdown, an example's output such as
  ``[[0, 1], [2, 3]]`` would otherwise read as link references;
- a field that documents several parameters at once (``:param a, b: ...``) becomes one field
  per parameter with the same text, as griffe's Sphinx parser takes one name per field;
- cross-reference roles (``:class:`~x.Name```, ``:meth:`...```) become inline code, as
  Markdown has no roles.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([^`]+)`")
_PROMPT = re.compile(r"^(\s*)>>> ?")
_SHARED_PARAM = re.compile(r"^(\s*):param ([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)+):(.*)$")


def roles_to_code(text: str) -> str:
    """``:class:`~a.b.Name``` becomes ``Name`` in backticks; without ``~`` the whole path is kept."""

    def code(match: "re.Match[str]") -> str:
        short, target = match.groups()
        return f"`{target.rsplit('.', 1)[-1] if short else target}`"

    return _ROLE.sub(code, text)


def split_shared_params(text: str) -> str:
    """Rewrite ``:param a, b: text`` (and its indented continuation lines) as one field per name."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _SHARED_PARAM.match(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        indent, names, first = match.groups()
        body = [first]
        i += 1
        while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith(":") \
                and len(lines[i]) - len(lines[i].lstrip()) > len(indent):
            body.append(lines[i])
            i += 1
        for name in (n.strip() for n in names.split(",")):
            out.append(f"{indent}:param {name}:{body[0]}")
            out.extend(body[1:])
    return "\n".join(out)


def fence_doctests(text: str) -> str:
    """Wrap each doctest block of ``text`` (a prompt line and the non-blank lines after it)
    in a fenced ``pycon`` code block; text already inside a fence, or indented as a Markdown
    code block, is left alone."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        match = None if in_fence else _PROMPT.match(line)
        if match is None:
            out.append(line)
            i += 1
            continue
        indent = match.group(1)
        if len(indent) >= 4:  # already an indented code block in Markdown
            out.append(line)
            i += 1
            continue
        if out and out[-1].strip():
            out.append("")  # a fence needs a blank line before it inside a paragraph
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip():
            current = lines[i]
            out.append(indent + current[len(indent):] if current.startswith(indent) else current)
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


class StreamsparkDocstrings(griffe.Extension):
    """Apply the rewrites above to every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        docstring = obj.docstring
        if docstring is None:
            return
        if ">>>" in docstring.value:
            docstring.value = fence_doctests(docstring.value)
        if ":param " in docstring.value:
            docstring.value = split_shared_params(docstring.value)
        if "`" in docstring.value:
            docstring.value = roles_to_code(docstring.value)

"""A script as the dives show it: its source, highlighted as Lua, beside its header's KEYS and ARGV."""

from __future__ import annotations

import html

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import LuaLexer

from ..scripts import source
from .header import header

# a light code block in either theme: the highlighting's colours are made for a light background
_CODE = "font-family:monospace;font-size:14px;line-height:1.45;background:#f6f8fa;color:#1f2328;padding:4px 6px"
_TD = "padding:2px 8px;vertical-align:top;text-align:left;border-bottom:1px solid #ddd"


def lua_html(text: str) -> str:
    """``text`` highlighted as Lua and numbered, in inline styles (the same in JupyterLab, Voila, a page)."""
    formatter = HtmlFormatter(noclasses=True, linenos="inline", style="default", prestyles=_CODE)
    return highlight(text, LuaLexer(), formatter)


class ScriptView:
    """``<name>.lua`` (``contrast/naive`` too) beside its header's table, as HTML; as plain text, the table alone."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.text = source(name)
        self.header = header(name)

    def __repr__(self) -> str:
        head = self.header
        slots = (*head.keys, *head.argv)
        wide, width = max(8, *(len(s.slot) for s in slots)), max(len(s.name) for s in slots)
        lines = [f"{self.name}.lua ({len(self.text.splitlines())} lines): {head.purpose}"]
        lines += [f"  {s.slot:<{wide}} {s.name:<{width}}  {s.meaning}" for s in slots]
        lines.append("  returns:")
        lines += [f"    {line.strip()}" for line in head.returns]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = self.header
        rows = "".join(
            f"<tr><td style='{_TD}'><code>{html.escape(s.slot)}</code></td>"
            f"<td style='{_TD}'><code>{html.escape(s.name)}</code></td>"
            f"<td style='{_TD}'>{html.escape(s.meaning)}</td></tr>"
            for s in (*head.keys, *head.argv)
        )
        returns = "".join(f"<li><code>{html.escape(line.strip())}</code></li>" for line in head.returns)
        title = html.escape(f"{self.name}.lua — {head.purpose}")
        return (
            f"<div><p style='margin:0 0 6px'><b>{title}</b></p>"
            "<div style='display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start'>"
            f"<div style='flex:2 1 620px;min-width:0;overflow-x:auto'>{lua_html(self.text)}</div>"
            f"<div style='flex:1 1 300px'><table style='border-collapse:collapse;font-size:14px'><tr>"
            f"<th style='{_TD}'>slot</th><th style='{_TD}'>local</th><th style='{_TD}'>holds</th></tr>{rows}</table>"
            f"<p style='margin:8px 0 2px'><b>returns</b></p><ul style='margin:0;font-size:13px'>{returns}</ul>"
            "</div></div></div>"
        )

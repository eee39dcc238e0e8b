"""Go's text/tabwriter as kubectl's describers use it (minwidth 0, padding 2, padded with spaces): cells end at a
tab, a column's width is its widest cell plus the padding over each run of consecutive lines that have that
column, and a line's last cell is never padded."""

from __future__ import annotations


def tabwrite(text: str, padding: int = 2) -> str:
    """`text` (cells separated by tabs) aligned as tabwriter.Writer aligns it on Flush."""
    lines = [line.split("\t") for line in text.split("\n")]
    out: list[str] = []
    _format(lines, [], 0, len(lines), padding, out)
    return "\n".join(out)


def _format(lines: list[list[str]], widths: list[int], line0: int, line1: int, padding: int, out: list[str]) -> None:
    column = len(widths)
    this = line0
    while this < line1:
        if column >= len(lines[this]) - 1:
            this += 1
            continue
        _write(lines, widths, line0, this, out)  # the lines before this column's block
        line0 = this
        width = 0
        while this < line1 and column < len(lines[this]) - 1:
            width = max(width, len(lines[this][column]) + padding)
            this += 1
        _format(lines, [*widths, width], line0, this, padding, out)
        line0 = this
    _write(lines, widths, line0, line1, out)


def _write(lines: list[list[str]], widths: list[int], start: int, end: int, out: list[str]) -> None:
    for cells in lines[start:end]:
        out.append("".join(cell.ljust(widths[j]) if j < len(widths) else cell for j, cell in enumerate(cells)))

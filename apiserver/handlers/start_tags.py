"""Finding a page's start tags with the standard library's HTML parser (proxy_links.py rewrites their links)."""

from __future__ import annotations

from html.parser import HTMLParser


class StartTags(HTMLParser):
    """Finds every start tag of a page: where it is, its raw text, its name and attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.found: list[tuple[tuple[int, int], str, str, list[tuple[str, str | None]], bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((self.getpos(), self.get_starttag_text() or "", tag, attrs, False))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((self.getpos(), self.get_starttag_text() or "", tag, attrs, True))

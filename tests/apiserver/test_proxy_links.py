"""The API server's proxy rewriting (apiserver/handlers/proxy_links.py), case by case as upstream's proxy
Transport rewrites: which links go through the proxy again, how Go's tokenizer writes tags back, redirects, CORS
headers, X-Forwarded-Uri. The end-to-end check, through real kubectl, is in tests/kubelet/test_service_reachability.py."""

from __future__ import annotations

from mini_kube.apiserver.handlers.proxy_links import ProxyLinks, go_path_join, rewrite_html

PREFIX = "/api/v1/namespaces/ns/pods/web:1080/proxy"
LINKS = ProxyLinks.for_request(PREFIX + "/dir/", "/dir/", backend_host="10.0.0.7:1080", request_host="127.0.0.1:6443")


def page(html: str) -> str:
    return LINKS.body({"Content-Type": "text/html; charset=utf-8"}, html.encode()).decode()


def test_prefix_is_the_request_path_before_the_backends() -> None:
    assert LINKS.prepend == PREFIX
    assert ProxyLinks.for_request(PREFIX + "/", "/").prepend == PREFIX
    assert ProxyLinks.for_request("/api/v1/nodes/n/proxy/metrics", "/metrics").prepend == "/api/v1/nodes/n/proxy"
    assert LINKS.forwarded_uri("/dir/") == PREFIX + "/dir/"
    assert LINKS.forwarded_uri("/a//b/../c") == PREFIX + "/a/c"
    assert go_path_join("/x/", "//y") == "/x/y" and go_path_join("", "") == ""


def test_links_to_the_backend_itself_go_through_the_proxy() -> None:
    assert page('<a href="/rewriteme">test</a>') == f'<a href="{PREFIX}/rewriteme">test</a>'
    assert page('<a href="/dir/">d</a>') == f'<a href="{PREFIX}/dir/">d</a>'
    assert page('<a href="http://10.0.0.7:1080/x?q=1#f">') == f'<a href="{PREFIX}/x?q=1#f">'
    assert page('<a href="https://127.0.0.1:6443/y">') == f'<a href="https://127.0.0.1:6443{PREFIX}/y">'
    assert page(f'<a href="{PREFIX}/already">') == f'<a href="{PREFIX}/already">'
    for untouched in ('<a href="relative">', '<a href="http://example.com/x">', '<a href="mailto:a@b">',
                      '<a href="//other.host/x">'):
        assert page(untouched) == untouched


def test_tags_are_written_back_as_gos_tokenizer_writes_them() -> None:
    assert page("<A HREF='/x' Class=big data-x>") == f'<a href="{PREFIX}/x" class="big" data-x="">'
    assert page('<img src="/i.png" alt="a &amp; b"/>') == f'<img src="{PREFIX}/i.png" alt="a &amp; b"/>'
    assert page('<form action="/post"><input formaction="/go" value="\'">') == \
        f'<form action="{PREFIX}/post"><input formaction="{PREFIX}/go" value="&#39;">'
    assert page('<p title="/not-a-link">x</p>') == '<p title="/not-a-link">x</p>'
    assert page("<!-- <a href=\"/c\"> --><b>t</b>") == "<!-- <a href=\"/c\"> --><b>t</b>"
    script = "<script>if (a<b) { s = '<a href=\"/y\">'; }</script>"
    assert page(script) == script
    assert rewrite_html("text &amp; more\n<br>\n<a\nhref=/z>", lambda u: "!" + u) == \
        'text &amp; more\n<br>\n<a href="!/z">'


def test_only_html_is_rewritten_and_redirects_point_through_the_proxy() -> None:
    body = b'<a href="/rewriteme">test</a>'
    assert LINKS.body({"Content-Type": "text/plain"}, body) == body
    assert LINKS.body({"Content-Type": "text/html", "Location": "/next"}, body) == body
    headers = LINKS.headers({"Location": "/next", "Access-Control-Allow-Origin": "*", "Cache-Control": "private",
                             "access-control-allow-methods": "GET"})
    assert headers == {"Location": f"{PREFIX}/next", "Cache-Control": "private"}

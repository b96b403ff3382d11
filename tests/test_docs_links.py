"""Every link in the README, CONTRIBUTING.md, RELIABILITY.md, bench/README.md and docs/
resolves: a relative link names a file of the repository, an `#anchor` names a heading of
its page (GitHub's slugs), and a web link is a public http(s) URL. Offline: nothing is
fetched. The documents are parsed with markdown-it (GFM-like: tables, bare URLs), so a
URL inside a code block or span is an example, not a link."""

from __future__ import annotations

import ipaddress
import re
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "RELIABILITY.md"]
    + [ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")]
)
# Names that never reach a public host (RFC 2606, RFC 6761, mDNS, common private zones).
PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".test",
                    ".example", ".invalid", ".corp", ".intranet")  # fmt: skip
PRIVATE_NAMES = {"localhost", "example.com", "example.net", "example.org"}
HTML_LINK = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""", re.I)
HTML_ANCHOR = re.compile(r"""<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)


def _parser() -> MarkdownIt:
    md = MarkdownIt("gfm-like")
    # Only what GitHub autolinks: `http(s)://…`, never a bare `README.md` (.md is a TLD).
    md.linkify.set({"fuzzy_link": False, "fuzzy_email": False})
    return md


MD = _parser()


@dataclass(frozen=True)
class Link:
    target: str
    line: int


def _flat(tokens: list[Token]) -> Iterator[tuple[Token, int]]:
    """Every token with the line it starts on (inline children take their parent's)."""
    for tok in tokens:
        line = tok.map[0] + 1 if tok.map else 0
        yield tok, line
        for child in tok.children or ():
            yield child, line


def links(text: str) -> list[Link]:
    out = []
    for tok, line in _flat(MD.parse(text)):
        if tok.type == "link_open":
            out.append(Link(str(tok.attrGet("href")), line))
        elif tok.type == "image":
            out.append(Link(str(tok.attrGet("src")), line))
        elif tok.type in ("html_inline", "html_block"):
            out.extend(Link(m, line) for m in HTML_LINK.findall(tok.content))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (github-slugger): lower case, everything but
    letters, digits, `_`, `-` and spaces removed, spaces to hyphens."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors a page has: its headings' slugs (a repeated one gets -1, -2, ...) and
    explicit `<a id=…>` / `<a name=…>`."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    tokens = MD.parse(text)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            inline = tokens[i + 1]
            words = "".join(
                c.content for c in inline.children or () if c.type in ("text", "code_inline")
            )
            base = slug(words)
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        elif tok.type in ("html_block", "inline"):
            found.update(HTML_ANCHOR.findall(tok.content))
    return found


def public_url_problem(url: str) -> str | None:
    """Why `url` is not a public web address, or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return f"scheme {parts.scheme!r}"
    if parts.username or parts.password:
        return "credentials in the URL"
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return "no host"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        # The forms a browser still reads as IPv4 (`127.1`, `0x7f.0.0.1`, `2130706433`).
        try:
            address = ipaddress.ip_address(socket.inet_aton(host))
        except OSError:
            address = None
    if address is not None:
        return None if address.is_global else f"non-public address {host}"
    if "." not in host or host in PRIVATE_NAMES or host.endswith(PRIVATE_SUFFIXES):
        return f"non-public host {host}"
    return None


def ignored(paths: set[Path], root: Path) -> set[Path]:
    """The `paths` git ignores (bench/results/, a build output): they exist here, not on
    GitHub. Outside a git checkout (an unpacked sdist) none is."""
    if not paths:
        return set()
    proc = subprocess.run(
        ["git", "check-ignore", "--stdin", "-z"],
        cwd=root,
        input="\0".join(map(str, paths)) + "\0",
        capture_output=True,
        text=True,
        timeout=30,
    )
    return {Path(p) for p in proc.stdout.split("\0") if p}


def problems(doc: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with each link of `doc`, as `file:line: link: why`."""
    text = doc.read_text(encoding="utf-8")
    found = [(link, _link_problem(doc, text, link.target, root)) for link in links(text)]
    local = {why for _, why in found if isinstance(why, Path)}
    hidden = ignored(local, root)
    out = []
    for link, why in found:
        if isinstance(why, Path):
            if why not in hidden:
                continue
            why = "a file git ignores (it is not in the repository others see)"
        if why:
            out.append(f"{doc.relative_to(root)}:{link.line}: {link.target}: {why}")
    return out


def _link_problem(doc: Path, text: str, target: str, root: Path) -> str | Path | None:
    """Why the link is broken, None for a good web link, or the file it names (which
    `problems` then asks git about)."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
        if target.lower().startswith("mailto:"):
            return None
        return public_url_problem(target)
    path_part, _, fragment = target.partition("#")
    path = unquote(path_part)
    if path.startswith("/"):
        return "an absolute path (GitHub resolves it from the site's root, not the repo's)"
    dest = (doc.parent / path).resolve() if path else doc
    if not dest.is_relative_to(root.resolve()):
        return "outside the repository"
    if not dest.exists():
        return "no such file"
    if fragment:
        if dest.suffix != ".md" or dest.is_dir():
            return "an anchor into something that is not a Markdown page"
        page = text if dest == doc else dest.read_text(encoding="utf-8")
        if unquote(fragment) not in anchors(page):
            return f"no heading with the anchor #{fragment} in {dest.name}"
    return dest


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(doc: Path) -> None:
    found = problems(doc)
    assert not found, "\n".join(found)


def test_the_documents_link_to_each_other() -> None:
    """The README reaches every page of docs/, so no page is an orphan."""
    readme = {
        (ROOT / link.target.partition("#")[0]).resolve()
        for link in links((ROOT / "README.md").read_text(encoding="utf-8"))
    }
    orphans = [p.name for p in (ROOT / "docs").glob("*.md") if p.resolve() not in readme]
    assert orphans == []


def test_the_checker_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# A page\n\n## The `--json` protocol\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "latest.md").write_text("made by a run\n")
    (tmp_path / ".gitignore").write_text("results/\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    doc = tmp_path / "README.md"
    doc.write_text(
        "# Top\n\n## Top\n\n"
        "[ok](docs/page.md#the---json-protocol) [ok](#top-1) [ok](https://github.com/x/y)\n"
        "[gone](docs/missing.md) [anchor](docs/page.md#nope) [up](../outside.md)\n"
        "![img](docs/none.png) [root](/docs/page.md) [dir](docs#a-page)\n"
        "see http://127.0.0.1:8000/v1 [lan](http://10.0.0.2/) [host](https://box.local/x)\n"
        "[name](http://localhost:8080) [doc](https://example.com/) [ftp](ftp://ftp.gnu.org/gnu/)\n"
        "[creds](https://user:pw@github.com/) [bare](http://intranet/)\n"
        "[short](http://127.1/) [ref][r] <http://[::1]:8000/> [kept](results/latest.md)\n"
        '<img src="docs/img/none.svg">\n\n'
        "[r]: http://192.168.1.1/admin\n"
        "`http://127.0.0.1/in-code` is an example, and so is this block:\n\n"
        "```\n[no](nowhere.md) http://10.1.1.1/\n```\n"
    )
    found = problems(doc, tmp_path)
    assert [p.split(": ", 1)[1].split(": ")[0] for p in found] == [
        "docs/missing.md",
        "docs/page.md#nope",
        "../outside.md",
        "docs/none.png",
        "/docs/page.md",
        "docs#a-page",
        "http://127.0.0.1:8000/v1",
        "http://10.0.0.2/",
        "https://box.local/x",
        "http://localhost:8080",
        "https://example.com/",
        "ftp://ftp.gnu.org/gnu/",
        "https://user:pw@github.com/",
        "http://intranet/",
        "http://127.1/",
        "http://192.168.1.1/admin",
        "http://[::1]:8000/",
        "results/latest.md",
        "docs/img/none.svg",
    ]
    assert found[0].startswith("README.md:5: ")


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("The suite's time", "the-suites-time"),
        ("The `--json` protocol", "the---json-protocol"),
        ("6. Security, round two", "6-security-round-two"),
        ("#12: MCP", "12-mcp"),
        ("bench/ — picobot's benchmark suite", "bench--picobots-benchmark-suite"),
        ("Set-up: two commands", "set-up-two-commands"),
        ("Workspace confinement (`tools.restrictToWorkspace`, on by default)",
         "workspace-confinement-toolsrestricttoworkspace-on-by-default"),
    ],
)  # fmt: skip
def test_slugs_are_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_the_readme_stays_a_front_door() -> None:
    """Issue 22: the README is what a newcomer reads first (at most 250 lines); the
    reference is in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move reference text to docs/"

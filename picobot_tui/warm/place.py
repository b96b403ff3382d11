"""Where the server's socket lives: a 0700 folder of the user's, one socket per install.

`$XDG_RUNTIME_DIR/picobot` when the runtime dir is usable (a tmpfs the login made for this
user only), else `<tmp>/picobot-<uid>`. Either folder must be a real directory owned by
this user with mode 0700, or nothing is used (a folder another user made in /tmp first
would otherwise hold our socket). Stdlib `os` only: the client imports this.
"""

from __future__ import annotations

import contextlib
import os
import stat
import zlib

IMPORT_ENV_PREFIXES = ("LITELLM_", "PYTHON", "OPENAI_", "HTTPX_")
"""Variables read while LiteLLM and the core are imported (LiteLLM reads its `LITELLM_*`
switches at import; `PYTHON*` shape the interpreter)."""
IMPORT_ENV_NAMES = frozenset(
    {
        "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
        "http_proxy", "https_proxy", "all_proxy", "no_proxy",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "LANG", "LC_ALL", "LC_CTYPE", "TZ",
    }
)  # fmt: skip
"""LiteLLM builds two httpx clients at import (`module_level_client`, measured with 1.80),
and httpx reads the proxy and CA variables when a client is made: a server imported under
other values would hand a call clients that a cold run would not build."""


class PlaceError(Exception):
    """The socket folder cannot be trusted (wrong owner, mode, or not a directory)."""


def _own_private_dir(path: str) -> str:
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise PlaceError(f"{path} is not a directory of this user's")
    if stat.S_IMODE(st.st_mode) != 0o700:
        raise PlaceError(f"{path} has mode {stat.S_IMODE(st.st_mode):o}, not 700")
    return path


def runtime_dir() -> str:
    """The private folder for sockets and locks (made 0700 if missing); PlaceError if the
    folder there cannot be trusted."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if base and os.path.isdir(base):
        try:
            st = os.stat(base)
        except OSError:
            st = None
        if st is not None and st.st_uid == os.getuid():
            return _own_private_dir(os.path.join(base, "picobot"))
    tmp = os.environ.get("TMPDIR") or "/tmp"
    return _own_private_dir(os.path.join(tmp, f"picobot-{os.getuid()}"))


def import_env(environ: dict[str, str] | os._Environ[str]) -> list[tuple[str, str]]:
    """The variables that shape what the server imported, sorted."""
    return sorted(
        (k, v)
        for k, v in environ.items()
        if k in IMPORT_ENV_NAMES or k.startswith(IMPORT_ENV_PREFIXES)
    )


def install_key(environ: dict[str, str] | os._Environ[str]) -> str:
    """One name per interpreter, picobot install and import environment: two virtualenvs,
    or a run with `LITELLM_LOG=DEBUG`, each get a server of their own."""
    from picobot_tui.warm.stamp import interpreter, package

    text = repr((interpreter(), package().__file__, import_env(environ)))
    return f"{zlib.crc32(text.encode()):08x}"


def socket_path(environ: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The socket of this install's server (its folder is made and checked)."""
    env = os.environ if environ is None else environ
    return os.path.join(runtime_dir(), f"server-{install_key(env)}.sock")


def lock_path(sock: str) -> str:
    """The lock a running server holds for its whole life (one server per socket)."""
    return sock[: -len(".sock")] + ".lock"

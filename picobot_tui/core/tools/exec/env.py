"""The environment `exec` gives a command (`tools.exec.env`).

`clean` (the default) passes the user's environment minus anything that can act as a
credential, judged three ways, because a name alone misses keys stored under an ordinary name
and a value alone misses keys picobot has never been told about:

- by name: `*_API_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`/`*PASSWD*`, `*_KEY` and
  `*_KEY_*`, `*CREDENTIAL*`, `*AUTH*` (incl. `SSH_AUTH_SOCK`: the agent signs for you),
  `*_PAT`, `*SESSION*` cookies/tokens, and whole families that are credentials by
  convention (`AWS_*`, `AZURE_*`, `GOOGLE_APPLICATION_CREDENTIALS`, `GH_*`/`GITHUB_TOKEN`,
  `NPM_*TOKEN`, `VAULT_*`, `DOCKER_AUTH_CONFIG`, ...);
- by value: any variable whose value contains one of the config's secrets (API keys,
  extraHeaders values, `ToolContext.secrets`) or the value of a variable dropped by name;
- by shape: a URL with a password in it (`postgres://user:pw@host`).

`inherit` passes everything; a list of names passes `clean` plus those names (the user's
explicit choice wins over the rules above, e.g. `["GITHUB_TOKEN"]` for `gh`).
`PWD` is always the workspace and `OLDPWD` is never passed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# Names that are credentials whatever their value (case-insensitive).
_SECRET_NAME = re.compile(
    r"""(?ix)
    API_?KEY | _KEY$ | _KEY_ | ^KEY$ | TOKEN(?!IZER) | SECRET | PASSW(?:OR)?D | PASSPHRASE
    | CREDENTIAL | AUTH(?!OR\b|ORS?_) | XAUTHORITY | _PAT$ | COOKIE | SESSION_?ID | PRIVATE | _DSN$
    | ^AWS_ | ^AZURE_ | ^ARM_CLIENT | ^GOOGLE_APPLICATION_CREDENTIALS$ | ^GCLOUD_ | ^GH_
    | ^GITHUB_TOKEN$ | ^GITLAB_ | ^NPM_ | ^VAULT_ | ^DOCKER_ | ^HF_ | ^HUGGING_?FACE
    | ^OPENAI_ | ^ANTHROPIC_ | ^PICOBOT_PROVIDERS
    """
)
# A URL carrying user:password@ (database URLs, proxies with credentials).
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")
_MIN_SECRET = 8  # shorter values are too common to match on (the Scrubber's rule too)


def is_secret_name(name: str) -> bool:
    """True when a variable of this name is treated as a credential by `clean`."""
    return bool(_SECRET_NAME.search(name))


def clean_env(environ: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """`environ` without credentials (see the module docstring)."""
    dropped = {k for k in environ if is_secret_name(k)}
    values = {s for s in secrets if s and len(s) >= _MIN_SECRET}
    values |= {environ[k] for k in dropped if len(environ[k]) >= _MIN_SECRET}
    out: dict[str, str] = {}
    for name, value in environ.items():
        if name in dropped or _URL_PASSWORD.search(value):
            continue
        if any(s in value for s in values):
            continue
        out[name] = value
    return out


def exec_env(
    setting: str | list[str],
    environ: Mapping[str, str],
    secrets: Iterable[str],
    cwd: str,
) -> dict[str, str]:
    """The environment for one exec call under `tools.exec.env` = `setting`."""
    if setting == "inherit":
        env = dict(environ)
    else:
        env = clean_env(environ, secrets)
        if isinstance(setting, list):
            env.update({k: environ[k] for k in setting if k in environ})
    env["PWD"] = cwd
    env.pop("OLDPWD", None)
    return env

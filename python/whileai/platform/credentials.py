"""Find the server URL and API key; save and forget a login.

Order for the key: the ``api_key`` argument, ``WHILEAI_API_KEY``, the login saved in
``~/.whileai/credentials.json`` (``WHILEAI_HOME`` moves that folder), then the legacy
``~/.zeroproof/credentials.json``. The URL: the argument, ``WHILEAI_BASE_URL``, the saved
login's URL, then ``http://127.0.0.1:6070``.

>>> normalize_url("localhost:6070/")
'http://localhost:6070'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from whileai.config import home, setting
from whileai.errors import ConfigError

__all__ = [
    "DEFAULT_URL", "credentials_path", "delete_login", "find_key", "find_url",
    "legacy_credentials_path", "normalize_url", "read_login", "save_login",
]

DEFAULT_URL = "http://127.0.0.1:6070"


def credentials_path() -> Path:
    """Where ``whileai login`` keeps the key."""
    return home() / "credentials.json"


def legacy_credentials_path() -> Path:
    """The pre-rename location, still read (never written)."""
    return Path.home() / ".zeroproof" / "credentials.json"


def normalize_url(url: str) -> str:
    """Add ``http://`` when no scheme is given; drop a trailing slash."""
    url = url.strip()
    if "://" not in url:
        url = "http://" + url
    return url.rstrip("/")


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the saved login ({exc}); run whileai login "
                          "again or delete the file") from exc
    return data if isinstance(data, dict) else {}


def read_login() -> dict[str, Any]:
    """The saved login (``api_key``, ``base_url``), new location first, else the legacy one."""
    for path in (credentials_path(), legacy_credentials_path()):
        data = _read(path)
        key = data.get("api_key") or data.get("apiKey") or data.get("key")
        if key:
            return {"api_key": str(key), "base_url": data.get("base_url") or data.get("baseUrl"),
                    "path": str(path)}
    return {}


def find_key(api_key: str | None = None) -> str | None:
    """The key to send, or None when there is none anywhere."""
    return api_key or setting("API_KEY") or read_login().get("api_key")


def find_url(base_url: str | None = None) -> str:
    """The server to talk to."""
    return normalize_url(base_url or setting("BASE_URL") or read_login().get("base_url")
                         or DEFAULT_URL)


def save_login(api_key: str, base_url: str) -> Path:
    """Write the login with mode 0600 (atomically); return the file."""
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"api_key": api_key, "base_url": normalize_url(base_url)}, handle)
    os.chmod(temp, 0o600)
    os.replace(temp, path)
    return path


def delete_login() -> bool:
    """Forget the saved login; return whether there was one."""
    path = credentials_path()
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed

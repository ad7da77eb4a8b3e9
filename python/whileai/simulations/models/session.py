"""The HTTP sessions of a model client: one per thread, the environment read once.

>>> session = settled_session("http://127.0.0.1:9/v1", "k", pool=4)
>>> session.headers["Authorization"]
'Bearer k'
>>> close_all([session])
"""

from __future__ import annotations

import requests
import requests.adapters

__all__ = ["close_all", "settled_session"]


def close_all(sessions: list[requests.Session]) -> None:
    """Close every session in the list and empty it."""
    for session in sessions:
        session.close()
    sessions.clear()


def settled_session(base_url: str, api_key: str | None, *, pool: int = 10) -> requests.Session:
    """A session for ``base_url`` with the key, or else the ``.netrc`` login, and the
    environment's proxies and CA bundle read once; ``pool`` connections kept per host.

    A plain session reads them again on every call (``trust_env``): a scan of ``os.environ``
    and a stat of ``~/.netrc`` that cost about a fifth of a call's CPU, which a run at the
    concurrency limit cannot spare. Every call goes to the one host of ``base_url``, so one
    reading holds for all of them. Retries are not the adapter's: the client's one retry
    policy (:mod:`whileai.retry`) decides them, so the adapter sends each request once.
    """
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=max(1, pool),
                                            max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    found = session.merge_environment_settings(base_url, {}, None, None, None)
    session.trust_env = False
    session.proxies.update(found["proxies"])
    session.verify = found["verify"]
    session.cert = found["cert"]
    if api_key:
        session.headers["Authorization"] = f"Bearer {api_key}"
    else:
        session.auth = requests.utils.get_netrc_auth(base_url)
    return session

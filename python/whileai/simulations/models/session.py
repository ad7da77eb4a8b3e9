"""The HTTP edge of a model client: one urllib3 pool for the endpoint, the environment read once.

``requests`` costs about 0.6 ms of CPU per call above urllib3 (preparing the request, hooks,
cookies, the response object); a run at the concurrency limit holds the GIL for that between
every two model calls, so the client talks to urllib3's pool directly. What ``requests`` would
read from the environment (proxies, ``NO_PROXY``, the CA bundle, the ``.netrc`` login) is read
once here, with ``requests``' own helpers, since every call goes to the one host of the spec.
The pool never retries (``retries=False``): the client's one retry policy
(:mod:`whileai.retry`) decides.

>>> edge = Endpoint("http://127.0.0.1:9/v1", "k", connect_timeout=1.0, read_timeout=1.0)
>>> edge.headers["Authorization"]
'Bearer k'
>>> edge.close()
"""

from __future__ import annotations

import base64
import http.client
from collections.abc import Mapping
from typing import Any

import requests
import requests.utils
import urllib3
import urllib3.exceptions

__all__ = ["POOL_SIZE", "CutReply", "Endpoint"]

POOL_SIZE = 512  # kept-alive connections to the host: above any run's concurrency


class CutReply(Exception):
    """The server answered, then its body broke off (wrong ``Content-Length``, broken chunked
    encoding, a dropped connection, a body that does not decode)."""


_READ_ERRORS = (urllib3.exceptions.ProtocolError, urllib3.exceptions.DecodeError,
                urllib3.exceptions.IncompleteRead, http.client.IncompleteRead)


class Endpoint:
    """Thread-safe ``send`` to one OpenAI-compatible endpoint, with its settled settings."""

    def __init__(self, base_url: str, api_key: str | None, *, connect_timeout: float,
                 read_timeout: float) -> None:
        found = requests.Session().merge_environment_settings(base_url, {}, None, None, None)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json",
                        "User-Agent": "whileai"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        else:
            login = requests.utils.get_netrc_auth(base_url)
            if login:
                pair = base64.b64encode(f"{login[0]}:{login[1]}".encode()).decode()
                self.headers["Authorization"] = f"Basic {pair}"
        verify, cert = found["verify"], found["cert"]
        tls: dict[str, Any] = {"cert_reqs": "CERT_REQUIRED" if verify else "CERT_NONE"}
        if isinstance(verify, str):
            tls["ca_certs"] = verify
        elif verify:
            tls["ca_certs"] = requests.utils.DEFAULT_CA_BUNDLE_PATH
        if cert:
            tls["cert_file"], tls["key_file"] = (cert, None) if isinstance(cert, str) else cert
        proxy = requests.utils.select_proxy(base_url, found["proxies"])
        options: dict[str, Any] = {"num_pools": 2, "maxsize": POOL_SIZE, "block": False,
                                      "retries": False, **tls}
        self.pool: urllib3.PoolManager = (urllib3.ProxyManager(proxy, **options) if proxy
                                          else urllib3.PoolManager(**options))
        self.timeout = urllib3.Timeout(connect=connect_timeout, read=read_timeout)

    def send(self, method: str, url: str, body: bytes | None) -> tuple[int, Mapping[str, str],
                                                                       bytes]:
        """One request: ``(status, headers, body bytes)``.

        Raises:
            urllib3.exceptions.HTTPError: no answer (refused, timed out, reset before a reply).
            CutReply: an answer whose body broke off.
        """
        reply = self.pool.request(method, url, body=body, headers=self.headers,
                                  timeout=self.timeout, preload_content=False, redirect=False)
        try:
            data = reply.read()
        except urllib3.exceptions.ReadTimeoutError:
            raise
        except _READ_ERRORS as exc:
            raise CutReply(type(exc).__name__) from exc
        finally:
            reply.release_conn()
        return reply.status, reply.headers, data

    def close(self) -> None:
        """Close every kept-alive connection (idempotent)."""
        self.pool.clear()

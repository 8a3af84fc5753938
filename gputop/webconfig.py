"""``gputop serve --web-config FILE``: TLS, client certificates and basic auth, in the web
config format of Prometheus' exporters (exporter-toolkit), with every key either applied
or refused with one line: a security setting that is accepted and silently not applied
(``client_auth_type``, ``min_version``) is worse than an error.

Passwords are bcrypt hashes.  bcrypt is slow by design, so a password check is work an
unauthenticated client can make gputop do: checks are done one at a time and take at
most ``BCRYPT_SHARE`` of one core (beyond it the answer is 429, not a hash; 8 clients
sending wrong passwords took 158% of 2 cores), an unknown user is checked against a
decoy hash of the same cost (no user enumeration by timing: 0.6 ms against 202 ms), and
only verified passwords are remembered (a storm of wrong ones cannot evict the scraper's
entry).
"""

from __future__ import annotations

import base64
import hashlib
import re
import ssl
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from gputop.safefile import read_regular

MAX_CONFIG_BYTES = 1 << 20
BCRYPT_SHARE = 0.2  # of one core, at most, spent on password checks (all clients)...
BCRYPT_BURST_S = 1.0  # ...with this many seconds of checks at once after a quiet spell
VERIFIED_KEPT = 64  # verified (user, password digest) pairs remembered
MAX_PASSWORD_BYTES = 72  # bcrypt reads no more than this: a longer one is refused unhashed

TLS_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1,
                "TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
# exporter-toolkit's client_auth_type -> what Python's ssl can do exactly
CLIENT_AUTH = {"NoClientCert": ssl.CERT_NONE, "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
               "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}
# the response headers exporter-toolkit allows in http_server_config.headers
ALLOWED_HEADERS = ("Strict-Transport-Security", "X-Content-Type-Options", "X-Frame-Options",
                   "X-XSS-Protection", "Content-Security-Policy")
TLS_KEYS = {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version",
            "max_version", "prefer_server_cipher_suites"}
# keys of the format gputop knows and does not implement: refused, naming the key
REFUSED = {
    "tls_server_config.cert": "inline certificates are not supported: use cert_file",
    "tls_server_config.key": "inline keys are not supported: use key_file",
    "tls_server_config.client_ca": "an inline CA is not supported: use client_ca_file",
    "tls_server_config.client_allowed_sans": "is not supported",
    "tls_server_config.cipher_suites": "is not supported (Python's ssl picks the suites: "
                                       "restrict them with min_version: TLS13)",
    "tls_server_config.curve_preferences": "is not supported",
    "rate_limit": "is not supported (password checks are rate-limited by gputop itself)",
}
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


class WebConfigError(ValueError):
    """A web config that cannot be used as written: one line for the user."""


# PyYAML and bcrypt are the ``serve`` extra: only --web-config needs them
SERVE_EXTRA = "pip install 'gputop-tui[serve]'"


def _serve_extra(module: str, why: str) -> None:
    """Import ``module`` now, so a missing extra is one line at start-up rather than a
    traceback in a request handler later."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise WebConfigError(f"--web-config needs {why} ({module} is not installed): "
                             f"{SERVE_EXTRA}") from None


def _key_name(key) -> str:
    """A key as it may be shown: a file that is no web config at all (``--web-config
    /etc/shadow``) must not have its lines printed as "unknown key"."""
    text = str(key)
    return repr(text) if _PLAIN_KEY.match(text) else "(a key that is not a name)"


def _mapping(path: str, name: str, value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise WebConfigError(f"--web-config {path}: {name} must be a mapping")
    return value


def _check_keys(path: str, section: str, data: dict, known: set[str]) -> None:
    for key in data:
        where = f"{section}.{key}" if section else str(key)
        if where in REFUSED:
            raise WebConfigError(f"--web-config {path}: {where} {REFUSED[where]}")
        if key not in known:
            raise WebConfigError(f"--web-config {path}: unknown key {_key_name(key)}"
                                 + (f" in {section}" if section else ""))


def _text(path: str, name: str, value) -> str:
    if not isinstance(value, str) or not value:
        raise WebConfigError(f"--web-config {path}: {name} must be a non-empty string")
    return value


class _Budget:
    """Seconds of work allowed: refilled at ``share`` seconds a second up to ``burst_s``;
    ``available()`` while any is left, ``spend(seconds)`` after the work."""

    def __init__(self, share: float, burst_s: float, clock=time.monotonic):
        self.share, self.burst_s, self._clock = share, burst_s, clock
        self._left = burst_s
        self._at = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._left = min(self.burst_s, self._left + (now - self._at) * self.share)
        self._at = now

    def available(self) -> bool:
        with self._lock:
            self._refill()
            return self._left > 0

    def spend(self, seconds: float) -> None:
        with self._lock:
            self._refill()
            self._left -= seconds


@dataclass
class WebConfig:
    """What the file asks for; ``ssl_context`` and ``check`` apply it."""

    cert_file: str | None = None
    key_file: str | None = None
    client_ca_file: str | None = None
    client_auth: ssl.VerifyMode = ssl.CERT_NONE
    min_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2
    max_version: ssl.TLSVersion | None = None
    headers: dict[str, str] = field(default_factory=dict)
    users: dict[str, bytes] = field(default_factory=dict)
    _verified: OrderedDict = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _hashing: threading.Lock = field(default_factory=threading.Lock)
    _budget: _Budget = field(default_factory=lambda: _Budget(BCRYPT_SHARE, BCRYPT_BURST_S))
    _decoy: bytes | None = None

    @classmethod
    def load(cls, path: str) -> WebConfig:
        _serve_extra("yaml", "PyYAML to read the file")
        import yaml

        try:
            data = yaml.safe_load(read_regular(path, MAX_CONFIG_BYTES)) or {}
        except OSError as exc:
            raise WebConfigError(f"--web-config {path}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise WebConfigError(f"--web-config {path} is not YAML{where}") from None
        if not isinstance(data, dict):
            raise WebConfigError(f"--web-config {path}: expected a mapping at the top")
        _check_keys(path, "", data, {"tls_server_config", "basic_auth_users",
                                     "http_server_config"})
        config = cls()
        config._tls(path, _mapping(path, "tls_server_config", data.get("tls_server_config")))
        config._http(path, _mapping(path, "http_server_config", data.get("http_server_config")))
        users = _mapping(path, "basic_auth_users", data.get("basic_auth_users"))
        if users:
            _serve_extra("bcrypt", "bcrypt to check basic_auth_users' passwords")
        for user, hashed in users.items():
            if not isinstance(hashed, str) or not hashed.startswith(("$2a$", "$2b$", "$2y$")):
                raise WebConfigError(f"--web-config {path}: the password of "
                                     f"{_key_name(user)} is not a bcrypt hash")
            config.users[str(user)] = hashed.encode()
        return config

    def _tls(self, path: str, tls: dict) -> None:
        _check_keys(path, "tls_server_config", tls, TLS_KEYS)
        for name in ("cert_file", "key_file", "client_ca_file"):
            if tls.get(name) is not None:
                setattr(self, name, _text(path, f"tls_server_config.{name}", tls[name]))
        if bool(self.cert_file) != bool(self.key_file):
            raise WebConfigError(f"--web-config {path}: tls_server_config needs both "
                                 "cert_file and key_file")
        auth = tls.get("client_auth_type", "NoClientCert")
        if auth not in CLIENT_AUTH:
            choices = ", ".join(CLIENT_AUTH)
            raise WebConfigError(f"--web-config {path}: client_auth_type {_key_name(auth)} is "
                                 f"not supported (supported: {choices}; RequestClientCert and "
                                 "RequireAnyClientCert accept unverified certificates)")
        self.client_auth = CLIENT_AUTH[auth]
        if self.client_auth != ssl.CERT_NONE and not self.client_ca_file:
            raise WebConfigError(f"--web-config {path}: client_auth_type {auth} needs "
                                 "client_ca_file")
        if self.client_ca_file and self.client_auth == ssl.CERT_NONE:
            raise WebConfigError(f"--web-config {path}: client_ca_file without client_auth_type "
                                 "would check nothing: set RequireAndVerifyClientCert")
        for name in ("min_version", "max_version"):
            if name in tls:
                if tls[name] not in TLS_VERSIONS:
                    raise WebConfigError(f"--web-config {path}: {name} must be one of "
                                         + ", ".join(TLS_VERSIONS))
                setattr(self, name, TLS_VERSIONS[tls[name]])
        if self.max_version is not None and self.max_version < self.min_version:
            raise WebConfigError(f"--web-config {path}: max_version is below min_version")
        if tls.get("prefer_server_cipher_suites", True) is not True:
            raise WebConfigError(f"--web-config {path}: prefer_server_cipher_suites: false is "
                                 "not supported (the server's order is always used)")
        if (self.client_ca_file or "min_version" in tls or "max_version" in tls) \
                and not self.cert_file:
            raise WebConfigError(f"--web-config {path}: TLS settings without cert_file and "
                                 "key_file")

    def _http(self, path: str, http: dict) -> None:
        _check_keys(path, "http_server_config", http, {"http2", "headers"})
        if http.get("http2", False) not in (True, False):
            raise WebConfigError(f"--web-config {path}: http_server_config.http2 must be "
                                 "true or false")
        # http2: true is the format's default; gputop answers HTTP/1.1, which every
        # Prometheus speaks, so either value serves the same
        for name, value in _mapping(path, "http_server_config.headers",
                                    http.get("headers")).items():
            allowed = {h.lower(): h for h in ALLOWED_HEADERS}
            if str(name).lower() not in allowed:
                raise WebConfigError(f"--web-config {path}: header {_key_name(name)} is not "
                                     "allowed (allowed: " + ", ".join(ALLOWED_HEADERS) + ")")
            text = _text(path, f"header {name}", value)
            if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
                raise WebConfigError(f"--web-config {path}: header {name} has a control "
                                     "character")
            self.headers[allowed[str(name).lower()]] = text

    # ------------------------------------------------------------ applying it

    @property
    def tls(self) -> bool:
        return bool(self.cert_file)

    def ssl_context(self) -> ssl.SSLContext | None:
        if not self.cert_file:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = self.min_version
        if self.max_version is not None:
            context.maximum_version = self.max_version
        try:
            context.load_cert_chain(self.cert_file, self.key_file)
            if self.client_ca_file:
                context.load_verify_locations(cafile=self.client_ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise WebConfigError(f"--web-config: cannot load a TLS certificate, key or CA: "
                                 f"{exc}") from None
        context.verify_mode = self.client_auth
        return context

    def check(self, header: str | None) -> int:
        """200 when an Authorization header carries a user's password (always, without
        users), 401 when it does not, 429 when the password checks' budget is spent."""
        if not self.users:
            return 200
        if not header or not header.startswith("Basic "):
            return 401
        try:
            user, sep, password = base64.b64decode(header[6:], validate=True).decode() \
                .partition(":")
        except (ValueError, UnicodeDecodeError):
            return 401
        secret = password.encode()
        if not sep or len(secret) > MAX_PASSWORD_BYTES:
            return 401
        key = (user, hashlib.sha256(secret).digest())
        with self._lock:
            if key in self._verified:
                self._verified.move_to_end(key)
                return 200
        import bcrypt

        hashed = self.users.get(user)
        with self._hashing:  # one hash at a time, within the budget
            if not self._budget.available():
                return 429
            started = time.perf_counter()
            try:
                # an unknown user costs the same hash as a known one: no timing oracle
                good = bcrypt.checkpw(secret, hashed if hashed is not None else self._decoy_hash())
            except ValueError:
                good = False
            self._budget.spend(time.perf_counter() - started)
        if not good or hashed is None:
            return 401
        with self._lock:
            self._verified[key] = True
            while len(self._verified) > VERIFIED_KEPT:
                self._verified.popitem(last=False)
        return 200

    def _decoy_hash(self) -> bytes:
        """A hash of the first user's cost and salt that no password matches (bcrypt's
        work depends only on the cost, so an unknown user takes as long as a known one)."""
        if self._decoy is None:
            first = next(iter(self.users.values()))
            self._decoy = first[:29] + b"." * 31
        return self._decoy

"""A TCP proxy that speaks just enough of the PostgreSQL wire protocol (v3) to cut a connection at
a chosen point of a write transaction (the connection-drop tests of the PostgreSQL memory tier).

``PgProxy(host, port)`` listens on 127.0.0.1 (free port) and relays every accepted connection to
the real server, message by message, in two threads per connection. It parses the client's
messages to see what is executed:

* simple protocol: ``Query`` ('Q', the SQL text); psycopg sends ``BEGIN`` and ``COMMIT`` this way;
* extended protocol: ``Parse`` ('P', statement name -> SQL text), ``Bind`` ('B', which statement
  a portal runs, and the parameter values). psycopg sends every parameterised statement this way
  (``executemany`` in pipeline mode, and after ``prepare_threshold`` uses a *named* statement, so a
  Bind may refer to a Parse sent by an earlier transaction). A Bind is where the statement starts
  to execute for the proxy, and where the row data travels.

What can be armed (:meth:`PgProxy.arm`), each on the first ``times`` matching messages:

* ``"before_commit"``: the COMMIT of a transaction that inserted into ``turns`` is NOT forwarded;
  both sockets are closed instead (the server never sees COMMIT: it rolls back).
* ``"after_commit"``: the COMMIT is forwarded, everything the server answers from then on is
  swallowed; once the server's ReadyForQuery ('Z') arrives (the commit is done and durable on the
  server) both sockets are closed. The client sent COMMIT and never learns its outcome.
* ``"after_commit_nowait"``: as above, but the sockets are closed right after forwarding COMMIT,
  racing the server (it may or may not have committed).
* ``"mid_insert"``: the first half of the bytes of a message that executes ``INSERT INTO turns``
  (a Query, or the Bind carrying the row's values) is forwarded, then both sockets are closed.

:meth:`PgProxy.kill_all` cuts every open connection (a network blip while the pool is idle);
Cuts close the sockets with a FIN (shutdown + close), which both ends see as an unexpected EOF.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

SSL_REQUEST, GSSENC_REQUEST = 80877103, 80877104
KINDS = ("before_commit", "after_commit", "after_commit_nowait", "mid_insert")


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def _cstr(body: bytes, at: int) -> tuple[str, int]:
    end = body.index(b"\0", at)
    return body[at:end].decode("utf-8", "replace"), end + 1


def _is_commit(sql: str) -> bool:
    return sql.strip().rstrip(";").strip().upper() in ("COMMIT", "END", "COMMIT WORK", "COMMIT TRANSACTION")


def _is_rollback(sql: str) -> bool:
    return sql.strip().upper().startswith(("ROLLBACK", "ABORT"))


def _is_turn_insert(sql: str) -> bool:
    return sql.strip().upper().startswith("INSERT INTO TURNS")


class Rule:
    """One armed cut: ``kind`` on the next ``times`` matches (``None``: every match)."""

    def __init__(self, kind: str, times: int | None):
        if kind not in KINDS:
            raise ValueError(f"unknown cut {kind!r}; one of {KINDS}")
        self.kind = kind
        self.left = times
        self.fired = 0
        self.event = threading.Event()  # set at each cut, once the sockets are closed


class _Link:
    """One client connection and its upstream socket."""

    def __init__(self, proxy: PgProxy, client: socket.socket, server: socket.socket):
        self.proxy, self.c, self.s = proxy, client, server
        self.statements: dict[str, str] = {}  # prepared statement name -> SQL
        self.wrote_turns = False  # an INSERT INTO turns since the last COMMIT/ROLLBACK
        self.swallow: Rule | None = None  # after_commit: drop server answers, cut at 'Z'
        self.closed = threading.Event()
        self._lock = threading.Lock()

    def start(self) -> None:
        threading.Thread(target=self._guard, args=(self._run,), daemon=True).start()

    def _run(self) -> None:
        self._startup()  # one thread until the server speaks typed messages: no race on 'N'
        threading.Thread(target=self._guard, args=(self._server_to_client,), daemon=True).start()
        self._client_to_server()

    def _guard(self, fn) -> None:
        try:
            fn()
        except (EOFError, OSError):
            pass
        finally:
            self.cut()

    def cut(self, rule: Rule | None = None) -> None:
        with self._lock:
            if not self.closed.is_set():
                for sock in (self.c, self.s):
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    sock.close()
                self.closed.set()
        if rule is not None:
            rule.event.set()

    # -- client -> server ----------------------------------------------------------------------

    def _startup(self) -> None:
        """Relay the untyped start-up packets (SSL/GSS requests and their one-byte answers, then
        the StartupMessage) in this thread, so the relay of typed server messages starts after."""
        while True:
            head = _recv_exact(self.c, 4)
            (n,) = struct.unpack("!i", head)
            body = _recv_exact(self.c, n - 4)
            self.s.sendall(head + body)
            code = struct.unpack("!i", body[:4])[0] if len(body) >= 4 else 0
            if code not in (SSL_REQUEST, GSSENC_REQUEST):
                return
            answer = _recv_exact(self.s, 1)  # 'N': the test server has no TLS
            self.c.sendall(answer)
            if answer != b"N":
                raise OSError(f"the proxy cannot relay an encrypted session ({answer!r})")

    def _client_to_server(self) -> None:
        while True:
            head = _recv_exact(self.c, 5)
            kind, n = head[:1], struct.unpack("!i", head[1:])[0]
            msg = head + _recv_exact(self.c, n - 4)
            sql = self._executes(kind, msg[5:])
            if sql is not None and self._intercept(sql, msg):
                return
            self.s.sendall(msg)

    def _executes(self, kind: bytes, body: bytes) -> str | None:
        """The SQL a message starts to execute (Query, or Bind of a parsed statement), else None."""
        if kind == b"Q":
            return body[:-1].decode("utf-8", "replace")
        if kind == b"P":
            name, at = _cstr(body, 0)
            self.statements[name] = _cstr(body, at)[0]
        elif kind == b"B":
            _portal, at = _cstr(body, 0)
            return self.statements.get(_cstr(body, at)[0], "")
        return None

    def _intercept(self, sql: str, msg: bytes) -> bool:
        """Apply an armed rule to a message executing ``sql``; True when the link was cut."""
        if _is_turn_insert(sql):
            self.wrote_turns = True
            rule = self.proxy._take("mid_insert")
            if rule is not None:
                self.s.sendall(msg[: len(msg) // 2])
                time.sleep(0.05)  # let the server read the partial message before the EOF
                self.cut(rule)
                return True
        elif _is_commit(sql):
            wrote, self.wrote_turns = self.wrote_turns, False
            if wrote:
                rule = self.proxy._take("before_commit", "after_commit", "after_commit_nowait")
                if rule is not None:
                    if rule.kind == "before_commit":
                        self.cut(rule)
                        return True
                    if rule.kind == "after_commit_nowait":
                        self.s.sendall(msg)
                        self.cut(rule)
                        return True
                    self.swallow = rule  # set before forwarding: every answer to it is dropped
        elif _is_rollback(sql):
            self.wrote_turns = False
        return False

    # -- server -> client ----------------------------------------------------------------------

    def _server_to_client(self) -> None:
        while True:
            head = _recv_exact(self.s, 5)
            n = struct.unpack("!i", head[1:])[0]
            msg = head + _recv_exact(self.s, n - 4)
            rule = self.swallow
            if rule is None:
                self.c.sendall(msg)
            elif head[:1] == b"Z":  # the server finished the COMMIT: its answer is lost
                self.cut(rule)
                return


class PgProxy:
    """Relay 127.0.0.1:``self.port`` -> ``host:port`` with armable cuts (see the module docstring)."""

    def __init__(self, host: str, port: int):
        self.upstream = (host, port)
        self._lsock = socket.create_server(("127.0.0.1", 0))
        self.port = self._lsock.getsockname()[1]
        self._lock = threading.Lock()
        self._rules: list[Rule] = []
        self._links: list[_Link] = []
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def dsn(self, db: str, user: str = "v22") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{db}"

    def arm(self, kind: str, times: int | None = 1) -> Rule:
        """Cut the next ``times`` (``None``: all) connections that reach ``kind``'s point."""
        rule = Rule(kind, times)
        with self._lock:
            self._rules.append(rule)
        return rule

    def heal(self) -> None:
        """Disarm every rule (open connections are left alone)."""
        with self._lock:
            self._rules.clear()

    def kill_all(self) -> int:
        """Cut every open connection; returns how many were open."""
        with self._lock:
            links, self._links = self._links, []
        live = [ln for ln in links if not ln.closed.is_set()]
        for ln in live:
            ln.cut()
        return len(live)

    def close(self) -> None:
        self.heal()
        try:
            self._lsock.close()
        except OSError:
            pass
        self.kill_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _take(self, *kinds: str) -> Rule | None:
        with self._lock:
            for rule in self._rules:
                if rule.kind in kinds and (rule.left is None or rule.left > 0):
                    if rule.left is not None:
                        rule.left -= 1
                    rule.fired += 1
                    return rule
        return None

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._lsock.accept()
            except OSError:
                return  # closed
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(self, client, server)
            with self._lock:
                self._links = [ln for ln in self._links if not ln.closed.is_set()] + [link]
                self.accepted += 1
            link.start()

"""A raw PostgreSQL v3 protocol client for the tests: messages built with struct.

    Raw(port)                     a plain TCP connection (5 s timeouts)
    .ssl_request(ctx)             SSLRequest; on 'S' the socket is wrapped in TLS
    .startup(user, password=...)  StartupMessage and whatever authentication the
                                  server asks for (cleartext, md5, SCRAM-SHA-256);
                                  returns the messages up to ReadyForQuery or the
                                  ErrorResponse
    .send(*messages)              send built messages (bytes) in one write
    .recv_msg()                   one (type, body) message; None at EOF
    .until_ready()                messages up to and including ReadyForQuery
    query(), parse(), bind(), describe(), execute(), sync(), flush(), close_msg(),
    terminate()                   message builders
    error_fields(body)            an ErrorResponse body as {code: value}
    scram_verifier(pw, ...)       a SCRAM-SHA-256 verifier as PostgreSQL stores it
    md5_secret(pw, user)          "md5" + md5(pw || user)
"""

import base64
import hashlib
import hmac
import os
import socket
import struct

PROTOCOL_3_0 = 196608
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102


def cstr(s):
    if isinstance(s, str):
        s = s.encode()
    return s + b"\x00"


def message(kind, body=b""):
    return kind + struct.pack("!I", len(body) + 4) + body


def startup_packet(params):
    body = struct.pack("!I", PROTOCOL_3_0)
    for key, value in params.items():
        body += cstr(key) + cstr(value)
    body += b"\x00"
    return struct.pack("!I", len(body) + 4) + body


def query(sql):
    return message(b"Q", cstr(sql))


def parse(sql, name="", oids=()):
    return message(b"P", cstr(name) + cstr(sql) + struct.pack("!H", len(oids))
                   + b"".join(struct.pack("!I", o) for o in oids))


def bind(params=(), portal="", stmt="", param_formats=(), result_formats=()):
    """params: bytes (already encoded) or None for NULL."""
    body = cstr(portal) + cstr(stmt)
    body += struct.pack("!H", len(param_formats))
    body += b"".join(struct.pack("!h", f) for f in param_formats)
    body += struct.pack("!H", len(params))
    for p in params:
        if p is None:
            body += struct.pack("!i", -1)
        else:
            if isinstance(p, str):
                p = p.encode()
            body += struct.pack("!i", len(p)) + p
    body += struct.pack("!H", len(result_formats))
    body += b"".join(struct.pack("!h", f) for f in result_formats)
    return message(b"B", body)


def describe(kind, name=""):
    return message(b"D", kind + cstr(name))


def execute(portal="", maxrows=0):
    return message(b"E", cstr(portal) + struct.pack("!i", maxrows))


def close_msg(kind, name=""):
    return message(b"C", kind + cstr(name))


def sync():
    return message(b"S")


def flush():
    return message(b"H")


def terminate():
    return message(b"X")


def error_fields(body):
    """An ErrorResponse/NoticeResponse body as {field code: value}."""
    fields = {}
    for part in body.split(b"\x00"):
        if part:
            fields[chr(part[0])] = part[1:].decode()
    return fields


def data_row(body):
    """A DataRow body as a list of bytes (None for NULL)."""
    n = struct.unpack("!H", body[:2])[0]
    pos, cols = 2, []
    for _ in range(n):
        length = struct.unpack("!i", body[pos:pos + 4])[0]
        pos += 4
        if length < 0:
            cols.append(None)
        else:
            cols.append(body[pos:pos + length])
            pos += length
    return cols


def md5_secret(password, user):
    return "md5" + hashlib.md5((password + user).encode()).hexdigest()


def _scram_keys(password, salt, iterations):
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    return client_key, hashlib.sha256(client_key).digest(), server_key


def scram_verifier(password, salt=None, iterations=4096):
    salt = salt or os.urandom(16)
    _, stored, server = _scram_keys(password, salt, iterations)
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored)}:{b64(server)}"


class AuthError(Exception):
    pass


class Raw:
    """One connection speaking the protocol by hand."""

    def __init__(self, port, host="127.0.0.1", timeout=5):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""
        self.server_signature_ok = None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, *msgs):
        self.sock.sendall(b"".join(msgs))

    def recv_exact(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("server closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv_msg(self):
        """One message as (type, body), or None when the server closed."""
        try:
            head = self.recv_exact(5)
        except EOFError:
            return None
        kind, length = head[:1], struct.unpack("!I", head[1:5])[0]
        return kind, self.recv_exact(length - 4)

    def until_ready(self):
        """Messages up to and including ReadyForQuery (or EOF)."""
        out = []
        while True:
            msg = self.recv_msg()
            if msg is None:
                return out
            out.append(msg)
            if msg[0] == b"Z":
                return out

    def closed_by_server(self):
        """True when the server closes the connection (reads to EOF)."""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def ssl_request(self, ctx, server_hostname="127.0.0.1", extra=b""):
        """SSLRequest (+ extra bytes in the same write); returns the answer
        byte.  On b'S' the socket is wrapped with ctx."""
        self.sock.sendall(struct.pack("!II", 8, SSL_REQUEST) + extra)
        answer = self.sock.recv(1)
        if answer == b"S":
            self.sock = ctx.wrap_socket(self.sock, server_hostname=server_hostname)
        return answer

    def startup(self, user="sluice", database="sluice", password=None, **params):
        """StartupMessage, then authentication; messages up to ReadyForQuery
        or the first ErrorResponse."""
        self.send(startup_packet({"user": user, "database": database, **params}))
        out = []
        while True:
            msg = self.recv_msg()
            if msg is None:
                return out
            out.append(msg)
            kind, body = msg
            if kind in (b"Z", b"E"):
                return out
            if kind != b"R":
                continue
            code = struct.unpack("!I", body[:4])[0]
            if code == 3:
                self.send(message(b"p", cstr(password or "")))
            elif code == 5:
                inner = hashlib.md5(((password or "") + user).encode()).hexdigest()
                outer = hashlib.md5(inner.encode() + body[4:8]).hexdigest()
                self.send(message(b"p", cstr("md5" + outer)))
            elif code == 10:
                self._scram(password or "", body[4:], out)
            elif code == 12:
                self.server_signature_ok = body[4:] == self._expected_server_final

    def _scram(self, password, mechanisms, out):
        assert b"SCRAM-SHA-256\x00" in mechanisms, mechanisms
        cnonce = base64.b64encode(os.urandom(18)).decode()
        first_bare = f"n=,r={cnonce}"
        first = "n,," + first_bare
        self.send(message(b"p", cstr("SCRAM-SHA-256") + struct.pack("!i", len(first))
                          + first.encode()))
        msg = self.recv_msg()
        if msg is None or msg[0] != b"R":
            self.buf = message(*msg) + self.buf if msg else self.buf
            return
        out.append(msg)
        server_first = msg[1][4:].decode()
        attrs = dict(kv.split("=", 1) for kv in server_first.split(","))
        salt = base64.b64decode(attrs["s"])
        client_key, stored, server_key = _scram_keys(password, salt, int(attrs["i"]))
        final_wo_proof = f"c=biws,r={attrs['r']}"
        auth_message = f"{first_bare},{server_first},{final_wo_proof}".encode()
        signature = hmac.new(stored, auth_message, "sha256").digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        server_sig = hmac.new(server_key, auth_message, "sha256").digest()
        self._expected_server_final = b"v=" + base64.b64encode(server_sig)
        final = f"{final_wo_proof},p={base64.b64encode(proof).decode()}"
        self.send(message(b"p", final.encode()))

"""A real, throwaway OpenLDAP ``slapd`` for tests: loopback only, an mdb database in a
temporary directory, users loaded with ``slapadd`` before it starts, a plain ``ldap://``
listener (StartTLS offered) and an ``ldaps://`` one, both with a self-signed certificate for
``localhost`` / ``127.0.0.1`` made here.

By hand, the same directory is ``slapd -d 0 -f <dir>/slapd.conf -h "ldap://127.0.0.1:3890/"``
after ``slapadd -f <dir>/slapd.conf -l users.ldif`` (Debian packages slapd and ldap-utils).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .ports import free_port

SUFFIX = "dc=example,dc=org"
USERS_DN = f"ou=users,{SUFFIX}"
_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0
_START_ATTEMPTS = 3
_SCHEMAS = ("core", "cosine", "inetorgperson")


@dataclass(frozen=True)
class User:
    cn: str  # the RDN value as the user types it (escaped in the LDIF here)
    password: str

    @property
    def dn(self) -> str:
        return f"cn={escape_dn_value(self.cn)},{USERS_DN}"


def escape_dn_value(value: str) -> str:
    """RFC 4514 escaping of an attribute value (for the LDIF written here)."""
    escaped = "".join("\\" + c if c in '\\,+"<>;=' else c for c in value)
    if escaped.startswith(("#", " ")):
        escaped = "\\" + escaped
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return escaped


def ssha(password: str) -> str:
    """``{SSHA}`` userPassword, as slappasswd makes it (slapd's default scheme; SHA-1 is
    what the scheme is, for test users)."""
    salt = os.urandom(8)
    digest = hashlib.sha1(password.encode() + salt, usedforsecurity=False).digest()
    return "{SSHA}" + base64.b64encode(digest + salt).decode()


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate (and key) for localhost and 127.0.0.1, valid for a day."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def _config(base: Path, cert: Path, key: Path) -> str:
    schemas = "\n".join(f"include /etc/ldap/schema/{name}.schema" for name in _SCHEMAS)
    return f"""{schemas}
pidfile {base}/slapd.pid
argsfile {base}/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
TLSCertificateFile {cert}
TLSCertificateKeyFile {key}
database mdb
maxsize 16777216
suffix "{SUFFIX}"
rootdn "cn=admin,{SUFFIX}"
directory {base}/data
access to attrs=userPassword by anonymous auth by * none
access to * by * read
"""


def _ldif(users: tuple[User, ...]) -> str:
    entries = [
        f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example",
        f"dn: {USERS_DN}\nobjectClass: organizationalUnit\nou: users",
    ]
    for user in users:
        # base64 (``::``) values: a cn may hold commas, leading spaces, non-ASCII
        cn64 = base64.b64encode(user.cn.encode()).decode()
        dn64 = base64.b64encode(user.dn.encode()).decode()
        entries.append(
            f"dn:: {dn64}\nobjectClass: inetOrgPerson\ncn:: {cn64}\nsn: user\n"
            f"userPassword: {ssha(user.password)}"
        )
    return "\n\n".join(entries) + "\n"


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class LdapServer:
    """Runs ``slapd`` in the foreground on two free ports (``port``: ldap://, StartTLS;
    ``tls_port``: ldaps://); its files go to ``base_dir``. ``stop()`` then ``start()`` serves
    the same directory again on the same ports."""

    def __init__(self, base_dir: Path, users: tuple[User, ...]) -> None:
        slapd, slapadd = shutil.which("slapd", path=_SBIN), shutil.which("slapadd", path=_SBIN)
        if slapd is None or slapadd is None:
            raise RuntimeError(
                "slapd/slapadd not found; run `scripts/ensure-system-packages.sh` (as root) "
                "to install the slapd and ldap-utils packages"
            )
        self.slapd, self.slapadd = slapd, slapadd
        self.base_dir = Path(base_dir)
        self.users = users
        self.port = 0
        self.tls_port = 0
        self.cert_path = self.base_dir / "cert.pem"
        self.log_path = self.base_dir / "slapd.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._loaded = False

    @property
    def uri(self) -> str:
        return f"ldap://127.0.0.1:{self.port}"

    @property
    def tls_uri(self) -> str:
        return f"ldaps://127.0.0.1:{self.tls_port}"

    def _load(self) -> Path:
        config = self.base_dir / "slapd.conf"
        if self._loaded:
            return config
        (self.base_dir / "data").mkdir(parents=True, exist_ok=True)
        cert, key = self_signed(self.base_dir)
        config.write_text(_config(self.base_dir, cert, key))
        ldif = self.base_dir / "users.ldif"
        ldif.write_text(_ldif(self.users))
        subprocess.run(
            [self.slapadd, "-q", "-f", str(config), "-l", str(ldif)],
            check=True,
            capture_output=True,
        )
        self._loaded = True
        return config

    def _output(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return "(no output)"

    def start(self) -> None:
        if self._proc is not None:
            raise RuntimeError("slapd already started")
        config = self._load()
        for attempt in range(1, _START_ATTEMPTS + 1):
            port = self.port or free_port()
            tls_port = self.tls_port or free_port()
            listeners = f"ldap://127.0.0.1:{port}/ ldaps://127.0.0.1:{tls_port}/"
            self._log = self.log_path.open("wb")
            # -d 0: stays in the foreground (stopped with the process), logs nothing
            self._proc = subprocess.Popen(
                [self.slapd, "-d", "0", "-f", str(config), "-h", listeners],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
            )
            deadline = time.monotonic() + _START_TIMEOUT
            while time.monotonic() < deadline:
                if _answers(port) and _answers(tls_port):
                    self.port, self.tls_port = port, tls_port
                    return
                if self._proc.poll() is not None:
                    break
                time.sleep(0.05)
            output = self._output()
            exited = self._proc.poll() is not None
            self._terminate()
            if exited and attempt < _START_ATTEMPTS and not (self.port or self.tls_port):
                continue  # most likely a port taken between free_port() and the bind
            state = "exited" if exited else f"did not listen within {_START_TIMEOUT:.0f}s"
            raise RuntimeError(f"slapd on ports {port}/{tls_port} {state}; output:\n{output}")

    def _terminate(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self) -> None:
        """Stops serving; the ports stay this server's for a later ``start()``."""
        self._terminate()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


_SBIN = os.pathsep.join((os.environ.get("PATH", ""), "/usr/sbin", "/sbin"))

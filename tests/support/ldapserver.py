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
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .process import ServerProcess

SUFFIX = "dc=example,dc=org"
USERS_DN = f"ou=users,{SUFFIX}"
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


class LdapServer(ServerProcess):
    """Runs ``slapd`` in the foreground on two free ports (``port``: ldap://, StartTLS;
    ``tls_port``: ldaps://); its files go to ``base_dir``. ``stop()`` then ``start()`` serves
    the same directory again on the same ports."""

    name = "slapd"
    listeners = 2
    bind_failure = None  # slapd -d 0 exits without a word when a port is taken

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
        self.cert_path = self.base_dir / "cert.pem"
        self._config: Path | None = None
        super().__init__(self.base_dir / "slapd.log")

    @property
    def tls_port(self) -> int:
        return self.ports[1] if self.ports else 0

    @property
    def uri(self) -> str:
        return f"ldap://127.0.0.1:{self.port}"

    @property
    def tls_uri(self) -> str:
        return f"ldaps://127.0.0.1:{self.tls_port}"

    def _load(self) -> Path:
        """The configuration, with the users loaded into the database (the first time)."""
        if self._config is not None:
            return self._config
        config = self.base_dir / "slapd.conf"
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
        self._config = config
        return config

    def start(self) -> None:
        self._load()
        super().start()

    def command(self) -> list[str]:
        listeners = f"ldap://127.0.0.1:{self.port}/ ldaps://127.0.0.1:{self.tls_port}/"
        # -d 0: stays in the foreground (stopped with the process), logs nothing
        return [self.slapd, "-d", "0", "-f", str(self._load()), "-h", listeners]

    def is_ready(self) -> bool:
        return _answers(self.port) and _answers(self.tls_port)


_SBIN = os.pathsep.join((os.environ.get("PATH", ""), "/usr/sbin", "/sbin"))

"""A real, throwaway OpenLDAP ``slapd`` for tests: on loopback, an mdb database in a
temporary directory, users loaded with ``slapadd`` before it starts, a plain ``ldap://``
listener (StartTLS offered) and an ``ldaps://`` one, both with a self-signed certificate for
``localhost`` / ``127.0.0.1`` made here.

By hand (see by_hand.py), the same directory serves until stopped, its files then removed:

    .venv/bin/python tests/support/ldapserver.py --port 3890 --user alice:alice-pw
    ldapwhoami -x -H ldap://127.0.0.1:3890 -D cn=alice,ou=users,dc=example,dc=org -w alice-pw
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:  # run by its path: see by_hand.py
    from by_hand import run_as_module

    run_as_module(__file__)

import argparse
import base64
import datetime
import hashlib
import ipaddress
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from . import by_hand
from .process import ServerProcess

SUFFIX = "dc=example,dc=org"
USERS_DN = f"ou=users,{SUFFIX}"
ADMIN_DN = f"cn=admin,{SUFFIX}"
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


def _config(base: Path, cert: Path, key: Path, admin_password: str | None) -> str:
    schemas = "\n".join(f"include /etc/ldap/schema/{name}.schema" for name in _SCHEMAS)
    # without a rootpw the admin cannot bind: nobody writes to the directory once it runs
    rootpw = f"rootpw {ssha(admin_password)}\n" if admin_password is not None else ""
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
rootdn "{ADMIN_DN}"
{rootpw}directory {base}/data
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


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


class LdapServer(ServerProcess):
    """Runs ``slapd`` in the foreground on two ports (``port``: ldap://, StartTLS;
    ``tls_port``: ldaps://), free ones unless ``ports`` are given, on ``host``; its files go
    to ``base_dir``. ``stop()`` then ``start()`` serves the same directory again on the same
    ports. With ``admin_password``, :data:`ADMIN_DN` can bind (and write)."""

    name = "slapd"
    listeners = 2
    bind_failure = None  # slapd -d 0 exits without a word when a port is taken

    def __init__(
        self,
        base_dir: Path,
        users: tuple[User, ...],
        *,
        host: str = "127.0.0.1",
        ports: tuple[int, int] | None = None,
        admin_password: str | None = None,
    ) -> None:
        slapd, slapadd = shutil.which("slapd", path=_SBIN), shutil.which("slapadd", path=_SBIN)
        if slapd is None or slapadd is None:
            raise RuntimeError(
                "slapd/slapadd not found; run `scripts/ensure-system-packages.sh` (as root) "
                "to install the slapd and ldap-utils packages"
            )
        self.slapd, self.slapadd = slapd, slapadd
        self.base_dir = Path(base_dir)
        self.users = users
        self.host = host
        self.admin_password = admin_password
        self.cert_path = self.base_dir / "cert.pem"
        self._config: Path | None = None
        super().__init__(self.base_dir / "slapd.log", ports=ports)

    @property
    def tls_port(self) -> int:
        return self.ports[1] if self.ports else 0

    @property
    def uri(self) -> str:
        return f"ldap://{self.host}:{self.port}"

    @property
    def tls_uri(self) -> str:
        return f"ldaps://{self.host}:{self.tls_port}"

    def _load(self) -> Path:
        """The configuration, with the users loaded into the database (the first time)."""
        if self._config is not None:
            return self._config
        config = self.base_dir / "slapd.conf"
        (self.base_dir / "data").mkdir(parents=True, exist_ok=True)
        cert, key = self_signed(self.base_dir)
        config.write_text(_config(self.base_dir, cert, key, self.admin_password))
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
        listeners = f"{self.uri}/ {self.tls_uri}/"
        # -d 0: stays in the foreground (stopped with the process), logs nothing
        return [self.slapd, "-d", "0", "-f", str(self._load()), "-h", listeners]

    def is_ready(self) -> bool:
        return _answers(self.host, self.port) and _answers(self.host, self.tls_port)


_SBIN = os.pathsep.join((os.environ.get("PATH", ""), "/usr/sbin", "/sbin"))


def _user(given: str) -> User:
    cn, colon, password = given.partition(":")
    if not cn or not colon:
        raise argparse.ArgumentTypeError(f"{given!r} is not NAME:PASSWORD")
    return User(cn, password)


@contextmanager
def _by_hand(arguments: argparse.Namespace) -> Iterator[str]:
    admin_password = arguments.admin_password or secrets.token_urlsafe(12)
    with (
        tempfile.TemporaryDirectory(prefix="portico-slapd-") as base_dir,
        LdapServer(
            Path(base_dir),
            tuple(arguments.user),
            host=arguments.host,
            ports=(arguments.port, arguments.tls_port),
            admin_password=admin_password,
        ) as server,
    ):
        users = ", ".join(user.dn for user in server.users) or "none yet"
        yield (
            f"slapd {by_hand.LISTENING} {server.uri} (StartTLS) and {server.tls_uri}"
            f" (certificate {server.cert_path}); users: {users}; admin: {ADMIN_DN},"
            f" password {admin_password}"
        )


if __name__ == "__main__":
    parser = by_hand.command_line(__doc__.split("\n\n")[0], port=3890)
    parser.add_argument(
        "--tls-port", type=int, default=6360, help="port of ldaps:// (default: %(default)s)"
    )
    parser.add_argument(
        "--user",
        type=_user,
        action="append",
        default=[],
        metavar="NAME:PASSWORD",
        help=f"a user cn=NAME,{USERS_DN} (repeatable)",
    )
    parser.add_argument("--admin-password", help=f"{ADMIN_DN}'s (default: a random one)")
    by_hand.serve(parser, _by_hand)

"""A real DNS server for tests: Debian's dnsmasq in the foreground on a free loopback port,
unprivileged (it answers on a high port and never changes user), authoritative for
``.test`` (a name it does not hold is NXDOMAIN, never forwarded: it has no upstream
server), answering from a hosts file that :meth:`DnsServer.publish` rewrites and re-reads
(SIGHUP), with the TTL given, and SRV records given at start (``--srv-host``: dnsmasq reads
them from its command line only, so :meth:`DnsServer.publish_srv` restarts it on its port)."""

from __future__ import annotations

import os
import pwd
import random
import shutil
import signal
import socket
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .process import ServerProcess

#: a name the server always holds: its answer tells that it is up
READY_NAME = "ready.test"


@dataclass(frozen=True)
class Srv:
    """One SRV record: ``name`` → ``target``:``port`` with ``priority`` and ``weight``."""

    name: str
    target: str
    port: int
    priority: int = 0
    weight: int = 0


def _query(name: str) -> bytes:
    """A DNS query for ``name``'s A record (RFC 1035 4.1), with a random id."""
    header = struct.pack(">HHHHHH", random.randrange(65536), 0x0100, 1, 0, 0, 0)
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return header + labels + b"\x00" + struct.pack(">HH", 1, 1)


class DnsServer(ServerProcess):
    name = "dnsmasq"
    bind_failure = "Address already in use"

    def __init__(self, base_dir: Path, *, ttl: int = 1, srv: Sequence[Srv] = ()) -> None:
        # (in /usr/sbin, which a non-root PATH may lack)
        exe = shutil.which("dnsmasq") or shutil.which("dnsmasq", path="/usr/sbin")
        if exe is None:
            raise RuntimeError(
                "dnsmasq not found; run `scripts/ensure-system-packages.sh` (as root) to install "
                "it (Debian package dnsmasq-base)"
            )
        self.executable = exe
        self.base_dir = Path(base_dir)
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.hosts_file = self.base_dir / "hosts"
        self.ttl = ttl
        self.srv = tuple(srv)
        self.names: dict[str, list[str]] = {}
        self._write_hosts()
        super().__init__(self.base_dir / "dnsmasq.log")

    @property
    def address(self) -> str:
        """``127.0.0.1:port``: what ``PORTICO_GATEWAY_RESOLVERS`` lists."""
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [
            self.executable,
            "--keep-in-foreground",
            "--conf-file=/dev/null",  # none of the machine's configuration
            f"--port={self.port}",
            "--listen-address=127.0.0.1",
            "--bind-interfaces",
            "--no-resolv",  # no upstream servers: it answers alone
            "--no-hosts",  # not /etc/hosts
            f"--addn-hosts={self.hosts_file}",
            f"--local-ttl={self.ttl}",
            "--local=/test/",  # authoritative for .test: an unknown name is NXDOMAIN
            f"--user={pwd.getpwuid(os.getuid()).pw_name}",  # root stays root: it reads tmp_path
            "--pid-file=",
            "--log-facility=-",
            *(f"--srv-host={r.name},{r.target},{r.port},{r.priority},{r.weight}" for r in self.srv),
        ]

    def is_ready(self) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(0.2)
            try:
                sock.sendto(_query(READY_NAME), ("127.0.0.1", self.port))
                answer = sock.recv(512)
            except OSError:
                return False
        return len(answer) > 12 and struct.unpack(">H", answer[6:8])[0] > 0  # ANCOUNT

    def publish(self, name: str, addresses: Sequence[str]) -> None:
        """``name`` answers ``addresses`` from now on (none: it no longer exists)."""
        self.publish_all({name: addresses})

    def publish_all(self, names: Mapping[str, Sequence[str]]) -> None:
        """Each name answers its addresses from now on (none: it no longer exists)."""
        for name, addresses in names.items():
            if addresses:
                self.names[name] = list(addresses)
            else:
                self.names.pop(name, None)
        self._write_hosts()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGHUP)  # dnsmasq re-reads --addn-hosts files

    def publish_srv(self, records: Sequence[Srv]) -> None:
        """The SRV records are ``records`` from now on: dnsmasq restarts on the same port
        with them (it reads them from its command line only). In between, for the moment
        of the restart, queries get no answer, as in a real server's restart."""
        self.srv = tuple(records)
        if self._proc is not None and self._proc.poll() is None:
            self.stop()
            self.start()

    def _write_hosts(self) -> None:
        lines = [f"127.0.0.1 {READY_NAME}"]
        lines += [f"{address} {name}" for name, found in self.names.items() for address in found]
        temporary = self.hosts_file.with_suffix(".tmp")
        temporary.write_text("\n".join(lines) + "\n")
        os.replace(temporary, self.hosts_file)

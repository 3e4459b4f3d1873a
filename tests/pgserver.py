"""A throwaway PostgreSQL cluster for the tests: ``initdb`` into a temp dir,
``pg_ctl start`` on one address (127.0.0.1, or a test host's address inside a
network namespace), password authentication with a password that lives only
in this process's environment (PGPASSWORD). As root the server runs as the
``postgres`` user (initdb refuses root). Anything missing is a skip reason,
never a failure: ``.ci/run`` installs Debian's ``postgresql`` where it can.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

__all__ = ["PgCluster", "ClusterUnavailable", "pg_bindir", "free_port"]

USER = "callstream"


class ClusterUnavailable(RuntimeError):
    """Why no cluster could be started here (the tests skip with it)."""


def pg_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class PgCluster:
    def __init__(self, host: str = "127.0.0.1", port: int | None = None, netns: str | None = None,
                 allow: str | None = None) -> None:
        """``allow``: a client network (CIDR) let in besides 127.0.0.1 (a test host's)."""
        bindir = pg_bindir()
        if bindir is None:
            raise ClusterUnavailable("no PostgreSQL server binaries (initdb) here; Debian's postgresql package "
                                     "has them")
        self.bindir = bindir
        self.host = host
        self.port = port or free_port(host if netns is None else "127.0.0.1")
        self.netns = netns
        self.password = os.environ.get("PGPASSWORD") or secrets.token_hex(16)
        os.environ["PGPASSWORD"] = self.password  # libpq reads it; the tests' subprocesses inherit it
        self.runas: list[str] = []
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                raise ClusterUnavailable("running as root and there is no 'postgres' user to run the server as") \
                    from None
            self.runas = ["runuser", "-u", "postgres", "--"]
        self.dir = Path(tempfile.mkdtemp(prefix="callstream-pg-"))
        self.data = self.dir / "data"
        if self.runas:
            shutil.chown(self.dir, "postgres")
        self.log = self.dir / "server.log"
        self._initdb()
        if allow:
            with (self.data / "pg_hba.conf").open("a") as hba:
                hba.write(f"host all all {allow} scram-sha-256\n")

    def _cmd(self, *args: str) -> list[str]:
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        return [*prefix, *self.runas, *args]

    def _initdb(self) -> None:
        pwfile = self.dir / "pw"
        pwfile.write_text(self.password)
        if self.runas:
            shutil.chown(pwfile, "postgres")
        try:
            done = subprocess.run(self._cmd(str(self.bindir / "initdb"), "-D", str(self.data), "-U", USER,
                                            "--auth=scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8",
                                            "--locale=C"),
                                  capture_output=True, text=True, timeout=120)
        finally:
            pwfile.unlink()
        if done.returncode != 0:
            raise ClusterUnavailable(f"initdb failed: {done.stderr.strip()[-300:]}")

    def start(self) -> None:
        options = f"-c listen_addresses={self.host} -p {self.port} -k {self.data}"
        done = subprocess.run(self._cmd(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                                        "-w", "-t", "60", "-o", options, "start"),
                              capture_output=True, text=True, timeout=90)
        if done.returncode != 0:
            log = self.log.read_text()[-500:] if self.log.exists() else ""
            raise ClusterUnavailable(f"pg_ctl start failed: {done.stderr.strip()[-300:]} {log}")

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(self._cmd(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"),
                       capture_output=True, text=True, timeout=90)

    def restart(self) -> None:
        self.stop()
        self.start()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@{self.host}:{self.port}/{database}"

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)

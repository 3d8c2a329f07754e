"""`make token SUB=...`: the subject comes from SUB (default alice), never the login's USER."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import jwt
import pytest

from local.__main__ import main
from local.config import DEFAULT_JWT_SECRET

ROOT = Path(__file__).resolve().parents[2]


def _make_token_command(*args: str, **env: str) -> str:
    """The command ``make token`` would run (``make -n``: nothing is executed)."""
    clean = {k: v for k, v in os.environ.items() if k not in {"SUB", "USER"}}
    done = subprocess.run(
        ["make", "-s", "-n", "-C", str(ROOT), "token", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_make_token_without_sub_is_alice_not_the_login_user() -> None:
    assert _make_token_command(USER="carol").endswith('token "alice"')


def test_make_token_sub_names_the_subject() -> None:
    assert _make_token_command("SUB=bob", USER="carol").endswith('token "bob"')


def test_make_token_user_on_the_command_line_still_works() -> None:
    assert _make_token_command("USER=dave").endswith('token "dave"')


def test_token_prints_a_jwt_for_the_subject(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["token", "bob"]) == 0
    token = capsys.readouterr().out.strip()
    claims = jwt.decode(token, DEFAULT_JWT_SECRET, algorithms=["HS256"])
    assert claims["sub"] == "bob"


@pytest.mark.parametrize("subject", ["", "  ", "a\tb", "x" * 256])
def test_token_refuses_an_unusable_subject(
    subject: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOCAL_JWT_SECRET", raising=False)

    code = main(["token", subject])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert "SUB=" in captured.err

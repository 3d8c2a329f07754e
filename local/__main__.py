"""``python -m local run | aws | token | receiver | demo`` (the Makefile's front doors).

* ``run``: the whole service on the embedded AWS (``make run``).
* ``aws``: only the embedded AWS, in the foreground; a ``make run`` started afterwards reuses
  it, so the service processes can be restarted while it keeps every post (in memory).
* ``token [SUB]``: print an HS256 JWT for ``sub=SUB`` valid 1 h (``make token SUB=alice``).
* ``receiver``: a webhook receiver on ``RECEIVER_PORT`` (``make receiver``).
* ``demo``: the scripted tour against a running stack (``make demo``).
* ``env``: print ``export`` lines that point a shell (``aws`` CLI, ``make redrive``...) at the
  running embedded AWS and its resources: ``eval "$(python -m local env)"``.
"""

from __future__ import annotations

import argparse
import errno
import os
import shlex
import signal
import sys

from local.config import LocalConfig, apply_service_defaults


def prepare_run(config: LocalConfig) -> None:
    """Before ``run``: the service defaults (``POWERTOOLS_LOG_LEVEL`` ...), then the logging.

    In this order, so the handlers' Powertools Logger logs at ``POWERTOOLS_LOG_LEVEL`` even
    when it was created (on import) before the defaults were applied.
    """
    apply_service_defaults(os.environ, config)
    from local.stack import configure_logging

    configure_logging()


def subject_problem(sub: str) -> str | None:
    """Why ``sub`` cannot be a token subject, or ``None``: the API refuses (401) a ``sub`` that
    is empty, over 255 characters or holds control characters
    (``scheduled_posts/api/precheck.py``)."""
    if not sub.strip():
        return "is empty"
    if len(sub) > 255:
        return "is over 255 characters"
    if not sub.isprintable():
        return "holds control characters"
    return None


def _raise_keyboard_interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one command; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m local", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("run", help="start the whole service locally")
    aws = commands.add_parser("aws", help="start only the embedded AWS (moto)")
    aws.add_argument("--port", type=int, default=None)
    aws.add_argument("--exit-with-parent", type=int, default=None, help=argparse.SUPPRESS)
    token = commands.add_parser("token", help="print a JWT for SUB")
    token.add_argument("user", metavar="SUB", nargs="?", default="alice")
    token.add_argument("--ttl", type=int, default=3600, help="seconds (default 3600)")
    commands.add_parser("receiver", help="start a webhook receiver")
    commands.add_parser("env", help="print exports for the running embedded AWS")
    commands.add_parser("events", help="print the outcome events the relay stored")
    demo = commands.add_parser("demo", help="scripted tour against a running stack")
    demo.add_argument("--posts", type=int, default=30)
    args = parser.parse_args(argv)
    config = LocalConfig.from_env()

    if args.command == "run":
        prepare_run(config)
        from local.stack import LocalStack

        return LocalStack(config).run()
    if args.command == "aws":
        from local.embedded_aws import serve_forever

        serve_forever(args.port or config.aws_port, args.exit_with_parent)
        return 0
    if args.command == "token":
        from local.token import make_token

        problem = subject_problem(args.user)
        if problem is not None:
            print(f"the token subject {problem}: make token SUB=alice", file=sys.stderr)
            return 2
        print(make_token(args.user, config, ttl_seconds=args.ttl))
        return 0
    if args.command == "receiver":
        from local.emulation.receiver import serve

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _raise_keyboard_interrupt)
        try:
            serve(
                config.receiver_port,
                os.environ.get("RECEIVER_SECRET") or None,
                os.environ.get("RECEIVER_NOTIFY_SECRET") or None,
            )
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            port = config.receiver_port
            print(f"RECEIVER_PORT={port}: 127.0.0.1:{port} is in use", file=sys.stderr)
            return 1
        return 0
    if args.command == "env":
        from local.embedded_aws import resource_environment

        try:
            exports = resource_environment(config.aws_port)
        except Exception as exc:
            print(f"no local stack on AWS_PORT={config.aws_port}: {exc}", file=sys.stderr)
            return 1
        for name, value in sorted(exports.items()):
            print(f"export {name}={shlex.quote(value)}")
        return 0
    if args.command == "events":
        from local.events import print_events

        return print_events(config.aws_port)
    if args.command == "demo":
        from local.demo import run_demo

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _raise_keyboard_interrupt)
        try:
            return run_demo(config, posts=args.posts)
        except KeyboardInterrupt:
            return 130
    return 2  # pragma: no cover (argparse refuses unknown commands)


if __name__ == "__main__":
    sys.exit(main())

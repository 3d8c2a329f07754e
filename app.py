#!/usr/bin/env python3
"""The CDK app: reads the stage from context once, validates it, builds the stack, adds cdk-nag.

cdk synth -c stage=dev         # or prod; overrides: -c 'scheduled-posts:dev={"...": ...}'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.config import StageConfig, load_stage_config
from infra.stack import ScheduledPostsStack, SourcePaths

ROOT = Path(__file__).resolve().parent


def read_config(app: cdk.App) -> StageConfig:
    """The stage config from context ``stage`` (default dev) and ``scheduled-posts:<stage>``.

    Raises
    ------
    ValueError
        Unknown stage, unknown setting, or invalid values (``pydantic.ValidationError``).
    """
    stage = str(app.node.try_get_context("stage") or "dev")
    raw: Any = app.node.try_get_context(f"scheduled-posts:{stage}") or {}
    overrides = json.loads(raw) if isinstance(raw, str) else raw
    return load_stage_config(stage, overrides)


def build_app(app: cdk.App, *, nag: bool = True) -> ScheduledPostsStack:
    """Add the stage's stack (``ScheduledPosts-<stage>``) and, when ``nag``, AwsSolutionsChecks."""
    config = read_config(app)
    stack = ScheduledPostsStack(
        app,
        f"ScheduledPosts-{config.stage}",
        config=config,
        paths=SourcePaths(root=ROOT),
        description=f"scheduled-posts ({config.stage}): scheduling API and dispatch",
    )
    if nag:
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return stack


if __name__ == "__main__":
    cdk_app = cdk.App()
    build_app(cdk_app)
    cdk_app.synth()

"""One synthesis per test session: the dev and prod stacks, bundling skipped, no cdk-nag.

``make synth`` runs the full synthesis (bundling, cdk-nag, cfn-lint); these fixtures only need
the templates, so they skip bundling (context ``aws:cdk:bundling-stacks`` = ``[]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App
from aws_cdk.assertions import Template

from infra.config import MILLION_A_MINUTE_OVERRIDES, StageConfig, load_stage_config
from infra.stack import ScheduledPostsStack, SourcePaths

ROOT = Path(__file__).resolve().parents[2]

#: A dev stage that brings its own identity provider and alarm topic.
EXTERNAL_OVERRIDES: dict[str, Any] = {
    "jwt_issuer": "https://issuer.example.com/",
    "jwt_audience": ["scheduled-posts-api"],
    "alarm_topic_arn": "arn:aws:sns:us-east-1:123456789012:ops-alarms",
}


@dataclass(frozen=True)
class Synthesized:
    """A synthesized stage: its config, its stack and its template (as assertions and JSON)."""

    config: StageConfig
    stack: ScheduledPostsStack
    template: Template

    @property
    def resources(self) -> dict[str, Any]:
        """Logical id -> resource JSON."""
        resources: dict[str, Any] = self.template.to_json()["Resources"]
        return resources

    def of_type(self, resource_type: str) -> dict[str, Any]:
        """Logical id -> resource JSON, of one CloudFormation type."""
        return {k: v for k, v in self.resources.items() if v["Type"] == resource_type}

    def queues_denying_insecure_transport(self) -> set[str]:
        """Logical ids of the queues a queue policy denies when ``aws:SecureTransport`` is
        false (requests without TLS)."""
        covered: set[str] = set()
        for policy in self.of_type("AWS::SQS::QueuePolicy").values():
            statements = policy["Properties"]["PolicyDocument"]["Statement"]
            if any(
                s["Effect"] == "Deny"
                and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
                for s in statements
            ):
                covered |= {q["Ref"] for q in policy["Properties"]["Queues"]}
        return covered

    def logical_id(self, construct: Any) -> str:
        """The rendered logical id of an L2 construct's default child."""
        resolved: str = self.stack.resolve(construct.node.default_child.logical_id)
        return resolved


@pytest.fixture(scope="session")
def stages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Synthesized]:
    """dev, prod, "external" (dev with its own issuer and topic) and "million" (prod with the
    settings ``docs/capacity.md`` names for a million posts a minute), synthesized once."""
    app = App(
        context={"aws:cdk:bundling-stacks": []},
        outdir=str(tmp_path_factory.mktemp("cdk.out")),
    )
    built = {}
    for name, stage, overrides in (
        ("dev", "dev", {}),
        ("prod", "prod", {}),
        ("external", "dev", EXTERNAL_OVERRIDES),
        ("million", "prod", MILLION_A_MINUTE_OVERRIDES),
    ):
        config = load_stage_config(stage, overrides)
        stack = ScheduledPostsStack(
            app, f"ScheduledPosts-{name}", config=config, paths=SourcePaths(root=ROOT)
        )
        built[name] = (config, stack)
    app.synth()
    return {
        stage: Synthesized(config=config, stack=stack, template=Template.from_stack(stack))
        for stage, (config, stack) in built.items()
    }


@pytest.fixture(scope="session")
def dev(stages: dict[str, Synthesized]) -> Synthesized:
    """The dev stage."""
    return stages["dev"]


@pytest.fixture(scope="session")
def prod(stages: dict[str, Synthesized]) -> Synthesized:
    """The prod stage."""
    return stages["prod"]


@pytest.fixture(scope="session")
def external(stages: dict[str, Synthesized]) -> Synthesized:
    """dev with an external JWT issuer and an existing alarm topic."""
    return stages["external"]


@pytest.fixture(scope="session")
def million(stages: dict[str, Synthesized]) -> Synthesized:
    """prod with ``MILLION_A_MINUTE_OVERRIDES``."""
    return stages["million"]

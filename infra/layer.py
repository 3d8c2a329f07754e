"""The one shared Lambda layer: the ``scheduled_posts`` package plus ``requirements.txt``."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.bundling import layer_code


class SharedLayerConstruct(Construct):
    """A layer version for arm64 and one Python runtime, bundled locally (no Docker).

    Attributes
    ----------
    layer : aws_lambda.LayerVersion
    runtime : aws_lambda.Runtime
        ``python3.<minor>``, the runtime the layer's wheels were resolved for.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        package_root: Path,
        requirements: Path,
        python_version: str,
        retain: bool,
    ) -> None:
        super().__init__(scope, construct_id)
        self.runtime = lambda_.Runtime(
            f"python{python_version}",
            lambda_.RuntimeFamily.PYTHON,
            supports_code_guru_profiling=True,
        )
        self.layer = lambda_.LayerVersion(
            self,
            "CommonLayer",
            code=layer_code(
                package_root=package_root,
                requirements=requirements,
                python_version=python_version,
            ),
            compatible_architectures=[lambda_.Architecture.ARM_64],
            compatible_runtimes=[self.runtime],
            description="scheduled_posts package and runtime requirements (arm64)",
            removal_policy=RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY,
        )

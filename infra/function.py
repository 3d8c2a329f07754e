"""One service Lambda: arm64, X-Ray, JSON logs in its own log group with a set retention."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.config import StageConfig


def retained_log_group(
    scope: Construct, construct_id: str, *, config: StageConfig
) -> logs.LogGroup:
    """A log group with ``config.log_retention_days`` retention, RETAIN when retaining data."""
    log_group = logs.LogGroup(
        scope,
        construct_id,
        removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
    )
    cfn_log_group = log_group.node.default_child
    assert isinstance(cfn_log_group, logs.CfnLogGroup)
    cfn_log_group.retention_in_days = config.log_retention_days
    return log_group


class ServiceFunctionConstruct(Construct):
    """``functions/<name>`` with handler ``handler.lambda_handler`` on the shared layer.

    Attributes
    ----------
    function : aws_lambda.Function
    log_group : aws_logs.LogGroup
        Retention ``config.log_retention_days``; RETAIN when ``config.retain_data``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        name: str,
        functions_root: Path,
        layer: lambda_.ILayerVersion,
        runtime: lambda_.Runtime,
        config: StageConfig,
        timeout_seconds: int,
        environment: Mapping[str, str],
        description: str,
        memory_mb: int | None = None,
    ) -> None:
        """``memory_mb``: this function's memory, when not ``config.memory_mb``."""
        super().__init__(scope, construct_id)
        self.log_group = retained_log_group(self, "Logs", config=config)
        env = {
            **config.service_environment(),
            "POWERTOOLS_SERVICE_NAME": config.service_name,
            "POWERTOOLS_METRICS_NAMESPACE": config.metrics_namespace,
            # The Tracer is built, and the X-Ray SDK imported, only when tracing is on.
            "POWERTOOLS_TRACE_DISABLED": "false" if config.tracing_enabled else "true",
            **environment,
        }
        self.function = lambda_.Function(
            self,
            "Function",
            code=lambda_.Code.from_asset(
                str(functions_root / name), exclude=["**/__pycache__", "**/*.pyc"]
            ),
            handler="handler.lambda_handler",
            runtime=runtime,
            architecture=lambda_.Architecture.ARM_64,
            layers=[layer],
            memory_size=memory_mb or config.memory_mb,
            timeout=Duration.seconds(timeout_seconds),
            tracing=lambda_.Tracing.ACTIVE if config.tracing_enabled else lambda_.Tracing.DISABLED,
            logging_format=lambda_.LoggingFormat.JSON,
            application_log_level_v2=lambda_.ApplicationLogLevel.INFO,
            system_log_level_v2=lambda_.SystemLogLevel.WARN,
            log_group=self.log_group,
            environment=env,
            description=description,
        )

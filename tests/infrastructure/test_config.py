"""The stage config refuses values that do not fit together, before any synthesis."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from pydantic import ValidationError

from app import read_config
from infra.bundling import source_hash
from infra.config import MILLION_A_MINUTE_OVERRIDES, SERVICE_SETTINGS, load_stage_config
from scheduled_posts.settings import Settings


def test_config_defaults_valid_for_both_stages() -> None:
    assert load_stage_config("dev").retain_data is False
    assert load_stage_config("prod").retain_data is True


def test_config_unknown_stage_refused() -> None:
    with pytest.raises(ValueError, match="unknown stage"):
        load_stage_config("staging")


@pytest.mark.parametrize("lookahead", [60, 120])
def test_config_lookahead_not_beyond_sweep_period_and_margin_refused(lookahead: int) -> None:
    with pytest.raises(ValidationError, match="LOOKAHEAD_SECONDS"):
        load_stage_config("dev", {"settings": {"LOOKAHEAD_SECONDS": lookahead}})


def test_config_lookahead_just_above_margin_accepted() -> None:
    config = load_stage_config("dev", {"settings": {"LOOKAHEAD_SECONDS": 121}})
    assert config.settings.LOOKAHEAD_SECONDS == 121


def test_config_lookahead_over_sqs_delay_limit_refused() -> None:
    with pytest.raises(ValidationError):
        load_stage_config("dev", {"settings": {"LOOKAHEAD_SECONDS": 901}})


def test_config_sweep_interval_under_a_minute_refused() -> None:
    with pytest.raises(ValidationError, match="SWEEP_INTERVAL_SECONDS"):
        load_stage_config("dev", {"settings": {"SWEEP_INTERVAL_SECONDS": 30}})


def test_config_worker_timeout_shorter_than_two_batches_refused() -> None:
    # 5 posts x (10 s + 2 s) = 60 s; twice that is 120 s.
    with pytest.raises(ValidationError, match="worker_timeout_seconds"):
        load_stage_config("dev", {"worker_timeout_seconds": 119})


def test_config_lease_not_longer_than_one_post_refused() -> None:
    with pytest.raises(ValidationError, match="LEASE_SECONDS"):
        load_stage_config("dev", {"settings": {"LEASE_SECONDS": 12}})


def test_config_webhook_allowlist_refused_in_aws() -> None:
    with pytest.raises(ValidationError, match="WEBHOOK_ALLOWED_ORIGINS"):
        load_stage_config("dev", {"settings": {"WEBHOOK_ALLOWED_ORIGINS": "http://localhost"}})


@pytest.mark.parametrize("name", ["LOOKAHEAD_SECOND", "POSTS_TABLE_NAME", "CURSOR_SECRET"])
def test_config_unknown_or_resource_setting_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not settable"):
        load_stage_config("dev", {"settings": {name: "x"}})


def test_config_unknown_field_refused() -> None:
    with pytest.raises(ValidationError):
        load_stage_config("dev", {"lookahead": 600})


def test_config_issuer_without_audience_refused() -> None:
    with pytest.raises(ValidationError, match="jwt_issuer"):
        load_stage_config("dev", {"jwt_issuer": "https://issuer.example.com/"})


def test_config_invalid_log_retention_refused() -> None:
    with pytest.raises(ValidationError, match="log_retention_days"):
        load_stage_config("dev", {"log_retention_days": 10})


def test_config_service_environment_round_trips_through_settings() -> None:
    config = load_stage_config("prod", {"settings": {"RETRY_BASE_SECONDS": 2.5}})
    env = config.service_environment()
    assert set(env) == set(SERVICE_SETTINGS)
    assert Settings.from_env(env) == config.settings


def test_config_visibility_is_six_worker_timeouts() -> None:
    config = load_stage_config("dev", {"worker_timeout_seconds": 200})
    assert config.visibility_timeout_seconds == 1200


def test_app_reads_stage_and_json_overrides_from_context() -> None:
    overrides: dict[str, Any] = {"settings": {"WRITE_SHARD_COUNT": 32}}
    app = cdk.App(context={"stage": "prod", "scheduled-posts:prod": json.dumps(overrides)})
    config = read_config(app)
    assert (config.stage, config.settings.WRITE_SHARD_COUNT) == ("prod", 32)


def test_layer_hash_changes_with_requirements(tmp_path: Path) -> None:
    package = tmp_path / "python"
    (package / "pkg").mkdir(parents=True)
    (package / "pkg" / "__init__.py").write_text("")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("boto3==1.0\n")
    before = source_hash(package, requirements, "3.12")
    requirements.write_text("boto3==2.0\n")
    assert source_hash(package, requirements, "3.12") != before


def test_layer_hash_ignores_bytecode(tmp_path: Path) -> None:
    package = tmp_path / "python"
    (package / "pkg").mkdir(parents=True)
    (package / "pkg" / "__init__.py").write_text("")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("boto3==1.0\n")
    before = source_hash(package, requirements, "3.12")
    (package / "pkg" / "__pycache__").mkdir()
    (package / "pkg" / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"\0")
    assert source_hash(package, requirements, "3.12") == before


def test_outbound_allowed_origins_refused_in_aws() -> None:
    with pytest.raises(ValidationError, match="OUTBOUND_ALLOWED_ORIGINS"):
        load_stage_config("dev", {"settings": {"OUTBOUND_ALLOWED_ORIGINS": "http://localhost"}})


def test_readme_names_the_million_a_minute_settings_the_config_holds() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    pattern = r"scheduled-posts:prod=(\{\"dispatch_queue_count\".*?\}\})'"
    (block,) = re.findall(pattern, readme, re.S)
    assert json.loads(block) == MILLION_A_MINUTE_OVERRIDES
    load_stage_config("prod", json.loads(block))  # valid as given

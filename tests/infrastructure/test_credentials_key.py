"""The credentials KMS key (issue 12): rotation, stable id, and who may use it."""

from __future__ import annotations

import json

import pytest

from tests.infrastructure.conftest import Synthesized
from tests.infrastructure.test_functions import _function


def _role_statements(stage: Synthesized, function: str) -> list[dict]:
    role = _function(stage, function)["Properties"]["Role"]["Fn::GetAtt"][0]
    return [
        statement
        for policy in stage.of_type("AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def _kms_actions(stage: Synthesized, function: str) -> set[str]:
    actions: set[str] = set()
    for statement in _role_statements(stage, function):
        if "CredentialsKey" in json.dumps(statement["Resource"]):
            found = statement["Action"]
            actions.update([found] if isinstance(found, str) else found)
    return actions


def test_credentials_key_rotates_and_keeps_its_logical_id(prod: Synthesized) -> None:
    key = prod.resources["CredentialsKey"]
    assert key["Type"] == "AWS::KMS::Key"
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"


@pytest.mark.parametrize("function", ["api", "worker"])
def test_api_and_worker_may_decrypt_and_make_data_keys_only(
    dev: Synthesized, function: str
) -> None:
    assert _kms_actions(dev, function) == {"kms:Decrypt", "kms:GenerateDataKey"}


@pytest.mark.parametrize("function", ["sweeper", "watchdog", "reconciler", "verifier"])
def test_other_functions_cannot_use_the_credentials_key(dev: Synthesized, function: str) -> None:
    assert _kms_actions(dev, function) == set()
    assert "CredentialsKey" not in json.dumps(_role_statements(dev, function))


@pytest.mark.parametrize("function", ["api", "worker"])
def test_api_and_worker_env_name_the_key(dev: Synthesized, function: str) -> None:
    env = _function(dev, function)["Properties"]["Environment"]["Variables"]
    assert "CredentialsKey" in json.dumps(env["CREDENTIALS_KEY_ID"])

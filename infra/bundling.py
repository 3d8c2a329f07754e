"""Local (Docker-free) bundling of the shared Lambda layer.

The layer holds the ``scheduled_posts`` package plus the runtime requirements, resolved as
manylinux2014 aarch64 wheels for the Lambda runtime's Python version with
``pip install --platform ... --only-binary=:all:`` (pip User Guide, "Installing for a different
platform"). No Docker is needed; the Docker image given to CDK is only a fallback that is never
used when :meth:`PipLayerBundling.try_bundle` succeeds.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_

_IGNORED = ("__pycache__", ".pyc", ".mypy_cache", ".pytest_cache")


def _ignored(path: Path) -> bool:
    return any(part in _IGNORED or part.endswith(".pyc") for part in path.parts)


def source_hash(package_root: Path, requirements: Path, python_version: str) -> str:
    """SHA-256 over the package's files, the requirements file and the Python version.

    Used as the layer asset's custom hash, so a change in ``requirements.txt`` (which lies
    outside the asset folder) still produces a new layer version.
    """
    digest = hashlib.sha256(python_version.encode())
    digest.update(requirements.read_bytes())
    for path in sorted(p for p in package_root.rglob("*") if p.is_file() and not _ignored(p)):
        digest.update(str(path.relative_to(package_root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@jsii.implements(ILocalBundling)
class PipLayerBundling:
    """Bundles ``<package_root>/*`` plus ``requirements`` into ``<output>/python`` with pip."""

    def __init__(self, *, package_root: Path, requirements: Path, python_version: str) -> None:
        self._package_root = package_root
        self._requirements = requirements
        self._python_version = python_version

    def try_bundle(self, output_dir: str, *args: object, **kwargs: object) -> bool:
        """Run pip for ``manylinux2014_aarch64`` and copy the package; True on success.

        Raises
        ------
        subprocess.CalledProcessError
            When pip fails (for instance a requirement with no aarch64 wheel).
        """
        target = Path(output_dir) / "python"
        target.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-m", "pip", "install", "--quiet", "--quiet",
            "--disable-pip-version-check", "--no-compile", "--target", str(target),
            "--platform", "manylinux2014_aarch64", "--implementation", "cp",
            "--only-binary=:all:", "--python-version", self._python_version,
            "-r", str(self._requirements),
        ]  # fmt: skip
        subprocess.run(command, check=True)  # noqa: S603 (fixed argv, no shell)
        for child in self._package_root.iterdir():
            if _ignored(child):
                continue
            if child.is_dir():
                shutil.copytree(
                    child, target / child.name, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(*_IGNORED, "*.pyc"),
                )  # fmt: skip
            else:
                shutil.copy2(child, target / child.name)
        return True


def layer_code(*, package_root: Path, requirements: Path, python_version: str) -> lambda_.Code:
    """The layer's code asset: bundled locally, hashed from its sources.

    ``package_root`` is ``layers/common/python`` (its content lands in the layer's ``python/``).
    """
    bundler = PipLayerBundling(
        package_root=package_root, requirements=requirements, python_version=python_version
    )
    return lambda_.Code.from_asset(
        str(package_root),
        asset_hash_type=AssetHashType.CUSTOM,
        asset_hash=source_hash(package_root, requirements, python_version),
        exclude=["**/__pycache__", "**/*.pyc"],
        bundling=BundlingOptions(
            image=DockerImage.from_registry(f"public.ecr.aws/sam/build-python{python_version}"),
            local=bundler,
            command=["bash", "-c", "echo 'local bundling only' && exit 1"],
        ),
    )

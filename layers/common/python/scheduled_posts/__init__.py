"""scheduled-posts domain package: models, logic, data access, platforms, settings.

Shipped in the Lambda layer (``layers/common/python``) and importable by tests and the local
stack as-is. Nothing here imports ``aws_cdk``.
"""

"""Data access: the only modules that call boto3. They return domain models and raise the typed
errors of ``scheduled_posts.errors`` (``raise ... from`` the botocore error)."""

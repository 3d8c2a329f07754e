"""The CDK app's constructs and stack (``app.py`` builds the app from a :class:`StageConfig`)."""

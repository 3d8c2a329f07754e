"""Business logic: pure of boto3; receives settings, a clock and data-layer objects."""

"""The emulated AWS pieces, one of each, shared by the local stack (``local/``) and the tests.

* :mod:`~local.emulation.lambda_runtime`: a Lambda function in-process, its context object
  (remaining time on a real or simulated clock) and its warm environments.
* :mod:`~local.emulation.sqs`: Lambda's SQS event source mapping (batches,
  ``ReportBatchItemFailures``, timeouts; visibility and receive counts left to the queue).
* :mod:`~local.emulation.http_api`: API Gateway HTTP API payload 2.0 events.
* :mod:`~local.emulation.resources`: the tables and queues, from ``scheduled_posts.tables``
  and ``scheduled_posts.sizing``.
* :mod:`~local.emulation.receiver`: the webhook receiver on loopback.
* :mod:`~local.emulation.runner`: the local stack and its embedded AWS in subprocesses.

Only the standard library, boto3-compatible clients and the domain package are used, so the
local stack needs no test tool (pytest, time-machine) to run.
"""

"""The local stack: the whole service on this machine, on an embedded AWS (moto).

``python -m local run`` (``make run``) starts a moto server (or reuses one), creates the tables
and queues from :mod:`scheduled_posts.tables`, serves the HTTP API as API Gateway would, runs
the scheduled Lambdas on their intervals and feeds the publish worker from SQS as Lambda's event
source mapping does. Everything runs the real handlers in-process.
"""

"""Every CloudWatch metric the service emits (namespace: ``POWERTOOLS_METRICS_NAMESPACE``, set
by the CDK app from ``infra/config.py``'s ``metrics_namespace``; see ``observability.py``).

Names are PascalCase with the unit in the name where it is not a count (house style: rule 9 of
the shared STYLE.md). The code emits ``metrics.add_metric(name=Metric.X, unit=Metric.X.unit,
...)``; ``infra/monitoring.py`` builds its alarms and dashboard from the same members.
"""

from __future__ import annotations

from enum import StrEnum


class Metric(StrEnum):
    """One metric name; :attr:`unit` is its Powertools/CloudWatch unit."""

    PUBLISHED = "Published"
    FAILED = "Failed"
    MISSED = "Missed"
    RETRIED = "Retried"
    STALE_DROPPED = "StaleDropped"
    PUBLISH_LAG_SECONDS = "PublishLagSeconds"
    RATE_LIMIT_WAIT_SECONDS = "RateLimitWaitSeconds"
    #: Deliveries deferred, without an attempt, by their channel's open breaker.
    BREAKER_DEFERRED = "BreakerDeferred"
    ENQUEUED = "Enqueued"
    DUPLICATE_ENQUEUED = "DuplicateEnqueued"
    SWEEP_DURATION_MS = "SweepDurationMs"
    LEASES_TAKEN_OVER = "LeasesTakenOver"
    RECONCILIATION_MISSES = "ReconciliationMisses"
    PENDING_REPAIRED = "PendingRepaired"
    #: Posts, shards or owners a watchdog or reconciler run could not handle (it went on).
    RESCUE_FAILURES = "RescueFailures"
    REDELIVERED = "Redelivered"
    #: Recurring schedules: occurrence posts written, series that stopped
    #: materializing (``MAX_PENDING_POSTS`` reached).
    OCCURRENCES_MATERIALIZED = "OccurrencesMaterialized"
    SERIES_STOPPED = "SeriesStopped"
    #: Outcome events the relay put on the bus and the feed (``logic/relay.py``).
    EVENTS_RELAYED = "EventsRelayed"
    #: Seconds from an event's commit (``occurred_at``) to the relay having sent it.
    EVENT_RELAY_LAG_SECONDS = "EventRelayLagSeconds"
    #: Notifications: put on the notify queue by the relay, delivered (2xx) by the
    #: notifier, tried again later, sent to the notify DLQ; seconds from ``occurred_at`` to
    #: the endpoint's 2xx.
    NOTIFICATIONS_ENQUEUED = "NotificationsEnqueued"
    NOTIFICATIONS_DELIVERED = "NotificationsDelivered"
    NOTIFICATIONS_RETRIED = "NotificationsRetried"
    NOTIFICATIONS_DEAD_LETTERED = "NotificationsDeadLettered"
    NOTIFICATION_LAG_SECONDS = "NotificationLagSeconds"
    #: Read-back findings opened (``logic/verify.py``): a published post ``missing`` or
    #: ``changed`` on its network; counted once per finding, not per read.
    VERIFICATION_FINDINGS = "VerificationFindings"

    @property
    def unit(self) -> str:
        """``Seconds``, ``Milliseconds`` or ``Count``, from the name's suffix."""
        if self.value.endswith("Seconds"):
            return "Seconds"
        if self.value.endswith("Ms"):
            return "Milliseconds"
        return "Count"

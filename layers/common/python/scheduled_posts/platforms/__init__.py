"""Delivery platforms (``webhook`` first), behind one adapter interface."""

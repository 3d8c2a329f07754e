"""The route table (``scheduled_posts/api/routes.py``) is the routes the resolver registered."""

from __future__ import annotations

from scheduled_posts.api.routes import ROUTES


def _registered() -> set[tuple[str, str]]:
    from functions.api.handler import app

    routes = [*app._static_routes, *app._dynamic_routes]
    return {(route.method, route.openapi_path) for route in routes}


def test_route_table_equals_the_routes_the_resolver_registered() -> None:
    assert {(route.method, route.path) for route in ROUTES} == _registered()


def test_route_table_names_each_route_once() -> None:
    keys = [route.key for route in ROUTES]
    assert len(keys) == len(set(keys))

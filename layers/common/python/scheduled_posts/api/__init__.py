"""The scheduling API: one Powertools ``Router`` per resource, assembled in :mod:`.resolver`.

``routes`` is the route table (plain data, also read by ``infra/api.py`` and the local front);
``precheck`` refuses a request before routing; ``params`` holds the shared parameter types
and the ``Depends`` injections; ``docs`` the OpenAPI response tables. Importing this package
imports nothing else (``infra/`` reads :mod:`.routes` at synth without Powertools).
"""

"""resobj-api: a placement-compatible REST service over resobj's objects.

Layers, outermost first: request id and access log, authentication
(``auth``), the request context, microversion negotiation
(``microversion``), error formatting (``errors``), then the route table
(``router``) dispatching to thin handlers in ``handlers/``, which validate
with ``schemas/``, authorise with ``policies/`` and make one object call.
"""

"""Query functions, one module per noun.

Each public function is decorated with ``facade.reader`` or
``facade.writer``, takes a context first and returns plain values (dicts
of column values, lists of them, numbers). None takes a session.
"""

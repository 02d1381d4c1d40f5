"""Functional tests: real databases, real code paths, no mocks of the DB.

The loader groups tests by database so each backend's test database is
provisioned once per worker, and expands the per-backend scenarios.
"""

from oslo_db.sqlalchemy import test_fixtures

load_tests = test_fixtures.optimize_package_test_loader(__file__)

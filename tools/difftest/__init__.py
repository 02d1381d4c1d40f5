"""Differential testing of resobj-api against openstack-placement.

A tool, not a test: ``python -m tools.difftest.run --help``. Its own unit
tests (``tools/difftest/tests``) run in the unit suite. See
doc/source/contributor/testing.rst.
"""

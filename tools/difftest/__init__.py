"""Differential testing of resobj-api against openstack-placement.

Not part of the unit suite: ``python -m tools.difftest.run --help``. See
doc/source/contributor/testing.rst.
"""

"""Default policy rules, one module per noun, as placement names them."""

import itertools

from resobj.api.policies import allocation
from resobj.api.policies import allocation_candidate
from resobj.api.policies import base
from resobj.api.policies import inventory
from resobj.api.policies import reshaper
from resobj.api.policies import resource_class
from resobj.api.policies import resource_provider
from resobj.api.policies import trait
from resobj.api.policies import usage


def list_rules():
    return list(itertools.chain(
        base.rules, resource_class.rules, resource_provider.rules,
        inventory.rules, usage.rules, trait.rules, allocation.rules,
        allocation_candidate.rules, reshaper.rules))

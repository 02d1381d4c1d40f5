from hypothesis import strategies as st
import os_resource_classes as orc

from resobj import objects
from resobj.tests import samples


@samples.sample('ResourceClass')
def resource_class():
    objects.register_all()
    # A standard class: every version can carry it (a custom one cannot
    # go back to 1.0, which the unit tests check).
    return objects.ResourceClass(id=1, name='MEMORY_MB')


@samples.sample('ResourceClassList')
def resource_class_list():
    objects.register_all()
    return objects.ResourceClassList(objects=[
        resource_class(), objects.ResourceClass(id=0, name='VCPU')])


@samples.strategy('ResourceClass', 'name')
def _names():
    # Standard and custom names, so that backports to 1.0 are tried with
    # both (the custom ones must raise).
    return st.one_of(st.sampled_from(orc.STANDARDS),
                     st.from_regex(r'\ACUSTOM_[A-Z0-9_]{1,20}\Z'))

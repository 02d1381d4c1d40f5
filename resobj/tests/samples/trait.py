from hypothesis import strategies as st

from resobj import objects
from resobj.tests import samples


@samples.sample('Trait')
def trait():
    objects.register_all()
    return objects.Trait(id=42, name='HW_CPU_X86_AVX2', is_standard=True)


@samples.sample('TraitList')
def trait_list():
    objects.register_all()
    return objects.TraitList(objects=[
        trait(),
        objects.Trait(id=1001, name='CUSTOM_GOLD', is_standard=False)])


@samples.strategy('Trait', 'name')
def _names():
    return st.one_of(st.just('HW_CPU_X86_AVX2'),
                     st.from_regex(r'\ACUSTOM_[A-Z0-9_]{1,20}\Z'))

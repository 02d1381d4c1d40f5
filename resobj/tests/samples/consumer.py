from hypothesis import strategies as st

from resobj import objects
from resobj.tests import samples
from resobj.tests.samples import project as samples_project
from resobj.tests.samples import user as samples_user


@samples.sample('Consumer')
def consumer():
    objects.register_all()
    return objects.Consumer(
        id=11, uuid='6b8e2f4a-1c3d-4e5f-8a9b-0c1d2e3f4a5b',
        project=samples_project.project(), user=samples_user.user(),
        consumer_type='INSTANCE', generation=3)


@samples.strategy('Consumer', 'consumer_type')
def _consumer_types():
    return st.one_of(st.none(), st.from_regex(r'\A[A-Z0-9_]{1,20}\Z'))

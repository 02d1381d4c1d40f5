from resobj import objects
from resobj.tests import samples


@samples.sample('Project')
def project():
    objects.register_all()
    return objects.Project(id=5,
                           external_id='3f1e0c4a9b2d4e6f8a7b6c5d4e3f2a1b')

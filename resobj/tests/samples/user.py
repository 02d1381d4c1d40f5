from resobj import objects
from resobj.tests import samples


@samples.sample('User')
def user():
    objects.register_all()
    return objects.User(id=9, external_id='d2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f1')

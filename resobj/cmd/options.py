"""The options every resobj command registers, and their check."""

from resobj.api import service


def register_all(conf):
    """Every option of resobj and of the libraries it configures.

    One configuration file serves every service of a host: each command
    knows the messaging options in it, even one that sends no message,
    and the API's (policy, middleware, ``[keystone_authtoken]``) even one
    that serves no request.
    """
    service.register_all_opts(conf)


def check(conf):
    """Refuse unknown options and bad values in the parsed ``conf``."""
    service.check_conf(conf)
